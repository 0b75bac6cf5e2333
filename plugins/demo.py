"""`coplug demo`: the showcase, run end to end on embedded defaults (no network, no server).

Each capability contributes a section: a function `section() -> None` listed in
`DEMO_SECTIONS` as "module:function"; sections print their own short report.
"""

from __future__ import annotations

import argparse
import importlib
import time

from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import stops_on_interrupt

DEMO_SECTIONS: list[str] = [
    "coplug.plugins.demo:knapsack_section",
    "coplug.plugins.demo:lazy_tsp_section",
    "coplug.plugins.demo:benders_section",
    "coplug.plugins.demo:alternatives_section",
    "coplug.formulations.qubo_cli:qubo_section",
    "coplug.plugins.lap.demo:lap_section",
    "coplug.formulations.bbo.demo:evolved_benchmark_section",
    "coplug.plugins.pmvb_cli:pmvb_section",
    "coplug.formulations.fair_cli:fair_clustering_section",
    "coplug.formulations.games_cli:games_section",
]


def knapsack_section() -> None:
    """A 60-item knapsack built as a Pyomo model, solved by SCIP through the bridge."""
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack
    from coplug.plugins.bridge import solve
    from coplug.plugins.cli import print_result

    instance = random_knapsack(60, seed=7, kind="strongly_correlated")
    model = knapsack_mip(instance)
    result = solve(model, solver="scip")
    print(f"knapsack n={instance.n} (strongly correlated), Pyomo model -> SCIP")
    print_result(result)
    chosen = [i for i in model.I if model.x[i].value > 0.5]
    assert instance.is_feasible([1 if i in chosen else 0 for i in range(instance.n)])
    _through_pyomo_factory(instance, result.objective)
    _explain_overload(instance)
    _relaxation_prices(model, instance)


def _through_pyomo_factory(instance, objective: float) -> None:
    """The same model through Pyomo's own SolverFactory, by name, with HiGHS."""
    import pyomo.environ as pyo

    from coplug.formulations.knapsack import knapsack_mip

    model = knapsack_mip(instance)
    results = pyo.SolverFactory("coplug_highs").solve(model)
    pyo.assert_optimal_termination(results)
    print(f"pyo.SolverFactory('coplug_highs'): {results.solver.termination_condition}, "
          f"objective {pyo.value(model.value):.1f} (SCIP: {objective:.1f})")
    assert abs(pyo.value(model.value) - objective) <= 1e-6 * max(1.0, abs(objective))


def _explain_overload(instance) -> None:
    """Demand more weight packed than the capacity holds and ask why it is infeasible."""
    import pyomo.environ as pyo

    from coplug.formulations.knapsack import knapsack_mip
    from coplug.plugins.iis import explain_infeasible

    model = knapsack_mip(instance)
    model.fill = pyo.Constraint(expr=sum(int(instance.weights[i]) * model.x[i]
                                         for i in model.I) >= instance.capacity + 1)
    found = explain_infeasible(model)
    names = [con.name for con in found.constraints]
    print(f"with 'fill' (pack more than the capacity): infeasible; explain_infeasible names "
          f"{names}, irreducible {found.irreducible} (checked by {found.checked_by})")
    assert set(names) == {"capacity", "fill"} and found.irreducible


def _relaxation_prices(model, instance) -> None:
    """The LP relaxation with `m.dual` declared: the capacity's shadow price is the value per
    unit of weight of the item the LP takes fractionally (Dantzig's bound)."""
    import numpy as np
    import pyomo.environ as pyo

    from coplug.plugins.bridge import solve

    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(model, solver="scip")
    price = model.dual[model.capacity]
    ratios = np.asarray(instance.values, float) / np.asarray(instance.weights, float)
    fractional = [i for i in model.I if 1e-6 < model.x[i].value < 1 - 1e-6]
    assert len(fractional) == 1, "the demo instance's LP optimum takes one item fractionally"
    ratio = ratios[fractional[0]]
    print(f"LP relaxation bound {result.objective:.1f}; capacity shadow price {price:.4f} "
          f"(value per weight of the fractional item: {ratio:.4f})")
    assert abs(price - ratio) < 1e-6 * max(1.0, price)


def lazy_tsp_section() -> None:
    """A 40-city TSP in one SCIP solve with lazy subtour rows, against solving HiGHS again
    after each round of subtour cuts."""
    import numpy as np

    from coplug.formulations.tsp import (
        solve_tsp_rounds,
        subtour_separator,
        tour_from_model,
        tour_length,
        tsp_mip,
    )
    from coplug.plugins.bridge import solve
    from coplug.plugins.lazy import LazyConstraints

    points = np.random.default_rng(3).random((40, 2))
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    start = time.perf_counter()
    model = tsp_mip(dist, subtour="none")
    lazy = LazyConstraints(subtour_separator(model), fractional=True)
    result = solve(model, plugins=[lazy])
    lazy_s = time.perf_counter() - start
    tour = tour_from_model(model)
    start = time.perf_counter()
    rounds = solve_tsp_rounds(dist, solver="highs")
    rounds_s = time.perf_counter() - start
    print(f"TSP 40 cities, assignment model + LazyConstraints(subtour_separator): "
          f"{result.status.value}, length {tour_length(dist, tour):.4f}, "
          f"{lazy.statistics()['cuts_added']} subtour rows added, {lazy_s:.2f} s")
    print(f"HiGHS solved again after each round of cuts: length "
          f"{tour_length(dist, rounds):.4f}, {rounds_s:.2f} s")
    assert sorted(tour) == list(range(40))
    assert abs(tour_length(dist, tour) - tour_length(dist, rounds)) <= 1e-9


def benders_section() -> None:
    """Two-stage stochastic facility location (10 scenarios): Benders cuts from certified
    subproblem duals as lazy constraints, against the extensive form in HiGHS."""
    from coplug.formulations.facility import (
        benders_models,
        extensive_model,
        random_facility_instance,
    )
    from coplug.plugins.benders import BendersCuts
    from coplug.plugins.bridge import solve
    from coplug.plugins.lazy import LazyConstraints

    inst = random_facility_instance(12, 30, 10, seed=0)
    start = time.perf_counter()
    master, subproblems = benders_models(inst)
    cuts = BendersCuts(subproblems)
    result = solve(master, plugins=[LazyConstraints(cuts, fractional=True)])
    benders_s = time.perf_counter() - start
    start = time.perf_counter()
    whole = solve(extensive_model(inst), solver="highs")
    whole_s = time.perf_counter() - start
    stats = cuts.stats
    print(f"facility location, 12 sites x 30 customers x 10 scenarios: Benders in SCIP "
          f"{result.status.value}, cost {result.objective:.2f}, {stats['subproblem_solves']} "
          f"subproblem LPs, {stats['optimality_cuts']} optimality and "
          f"{stats['feasibility_cuts']} feasibility cuts, {benders_s:.2f} s")
    print(f"extensive form in HiGHS: cost {whole.objective:.2f}, {whole_s:.2f} s")
    assert abs(result.objective - whole.objective) <= 1e-6 * abs(whole.objective)


def alternatives_section() -> None:
    """Beyond one optimum: the proven 5 best set covers in one SCIP search against Pyomo's
    own enumeration (5 solves), a solution pool from one solve, and LP ranging."""
    import contextlib
    import io

    from pyomo.contrib.alternative_solutions import enumerate_binary_solutions

    from coplug.formulations.mip_families import build_family
    from coplug.plugins.best_solutions import k_best
    from coplug.plugins.bridge import solve
    from coplug.plugins.solution_pool import SolutionPool

    start = time.perf_counter()
    best = k_best(build_family("setcover", 120, seed=1), k=5)
    search_s = time.perf_counter() - start
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        truth = enumerate_binary_solutions(build_family("setcover", 120, seed=1),
                                           num_solutions=5, solver="coplug_scip")
    enum_s = time.perf_counter() - start
    found = [round(s.objective, 6) for s in best.solutions]
    print(f"set cover, 120 rows: the 5 cheapest covers {found}, proven {best.proven}, one "
          f"SCIP search {search_s:.2f} s; Pyomo's enumerate_binary_solutions (5 solves) "
          f"{enum_s:.2f} s")
    assert best.proven and found == sorted(round(s.objective_value, 6) for s in truth)
    model = build_family("setcover", 120, seed=1)
    pool = SolutionPool(5)
    result = solve(model, plugins=[pool])
    print(f"SolutionPool(5) from one solve: {[round(s.objective, 6) for s in pool.solutions]}")
    assert pool.solutions[0].objective == result.objective
    _knapsack_front()
    _production_ranging()


def _knapsack_front() -> None:
    """The exact value-weight Pareto front of a 15-item knapsack (epsilon-constraint)."""
    import pyomo.environ as pyo

    from coplug.formulations.mip_families import mknapsack
    from coplug.plugins.multiobjective import pareto_front

    m = mknapsack(15, seed=0)
    m.value.deactivate()
    m.weight = pyo.Objective(expr=m.capacity[0].body)
    front = pareto_front(m, m.value, m.weight)
    ends = front.points[0].values, front.points[-1].values
    print(f"knapsack, value against weight: {len(front.points)} non-dominated points, from "
          f"value {ends[0][0]:g} at weight {ends[0][1]:g} to {ends[1][0]:g} at "
          f"{ends[1][1]:g} (complete: {front.complete})")
    assert front.complete and ends[1][1] == 0


def _production_ranging() -> None:
    """Ranging of a two-product LP: how far a price and a capacity may move before the
    plan changes."""
    import pyomo.environ as pyo

    from coplug.plugins.ranging import sensitivity

    m = pyo.ConcreteModel()
    m.doors = pyo.Var(within=pyo.NonNegativeReals)
    m.windows = pyo.Var(within=pyo.NonNegativeReals)
    m.plant1 = pyo.Constraint(expr=m.doors <= 4)
    m.plant2 = pyo.Constraint(expr=2 * m.windows <= 12)
    m.plant3 = pyo.Constraint(expr=3 * m.doors + 2 * m.windows <= 18)
    m.profit = pyo.Objective(expr=3 * m.doors + 5 * m.windows, sense=pyo.maximize)
    s = sensitivity(m)
    price, hours = s.cost[m.doors], s.rhs[m.plant3]
    print(f"LP ranging (HiGHS): profit {s.objective:g} at doors={m.doors.value:g}, "
          f"windows={m.windows.value:g}; the door price may range over [{price.low:g}, "
          f"{price.high:g}], plant 3's hours over [{hours.low:g}, {hours.high:g}] at "
          f"{s.dual[m.plant3]:g} per hour")
    assert (s.objective, price.low, price.high, hours.low, hours.high) == (36, 0, 7.5, 12, 24)


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `demo` command."""
    p = subparsers.add_parser("demo", help="run the showcase end to end (offline)")
    p.add_argument("--only", default=None,
                   help="run only sections whose name contains this (as printed: 'lazy tsp')")
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    """Run every demo section in order (or those `--only` names), timing each."""
    names = [spec.split(":")[1] for spec in DEMO_SECTIONS]
    only = None if args.only is None else "_".join(args.only.split())  # "lazy tsp" as shown
    if only is not None and not any(only in name for name in names):
        shown = ", ".join(name.replace("_section", "") for name in names)
        raise InputError(f"--only {args.only!r} matches no demo section; sections: {shown}")
    for spec in DEMO_SECTIONS:
        module_name, func_name = spec.split(":")
        if only and only not in func_name:
            continue
        print(f"\n== {func_name.replace('_section', '').replace('_', ' ')} ==")
        start = time.perf_counter()
        with stops_on_interrupt():  # a solve that absorbed Ctrl-C ends the demo, not a check
            getattr(importlib.import_module(module_name), func_name)()
        print(f"-- {time.perf_counter() - start:.2f} s")
    return 0
