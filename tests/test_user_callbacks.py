"""`OnSolution` and `UserHeuristic`: the solutions they see and make are checked against the
model's own rows, and optima against HiGHS."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.common.collections import ComponentMap
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import InputError, Status, solve
from coplug.plugins.on_solution import OnSolution
from coplug.plugins.user_heuristic import UserHeuristic


def _meets_rows(m: pyo.ConcreteModel, values: dict[str, float]) -> bool:
    """Whether `values` (by variable name) meet every constraint and bound of `m`."""
    saved = {v.name: v.value for v in m.component_data_objects(pyo.Var)}
    try:
        for v in m.component_data_objects(pyo.Var):
            v.set_value(values[v.name], skip_validation=True)
        rows_ok = all((c.lower is None or pyo.value(c.body) >= pyo.value(c.lower) - 1e-6)
                      and (c.upper is None or pyo.value(c.body) <= pyo.value(c.upper) + 1e-6)
                      for c in m.component_data_objects(pyo.Constraint, active=True))
        bounds_ok = all((v.lb is None or v.value >= v.lb - 1e-6)
                        and (v.ub is None or v.value <= v.ub + 1e-6)
                        for v in m.component_data_objects(pyo.Var))
        return rows_ok and bounds_ok
    finally:
        for v in m.component_data_objects(pyo.Var):
            v.set_value(saved[v.name], skip_validation=True)


def _coefs(expr, variables) -> list[float]:
    """The coefficient of each of `variables` in the linear `expr`."""
    repn = generate_standard_repn(expr)
    by_id = {id(v): c for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True)}
    return [by_id.get(id(v), 0.0) for v in variables]


def _recorder(m: pyo.ConcreteModel, seen: list):
    variables = list(m.component_data_objects(pyo.Var))

    def record(solution, objective):
        seen.append((objective, {v.name: solution[v] for v in variables}))

    return record


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("sense", [pyo.maximize, pyo.minimize])
def test_each_new_best_solution_is_feasible_improving_and_ends_at_the_optimum(sense, solver):
    m = mknapsack(30, seed=3)
    m.value.sense = sense
    if sense is pyo.minimize:  # a covering side so that 0 is not optimal
        m.least = pyo.Constraint(expr=sum(m.x.values()) >= 8)
    seen = []
    result = solve(m, solver=solver, plugins=[OnSolution(_recorder(m, seen))])
    truth = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL and seen
    assert result.objective == pytest.approx(truth.objective, rel=1e-4)
    objectives = [obj for obj, _ in seen]
    step = np.diff(objectives) if sense is pyo.maximize else -np.diff(objectives)
    assert (step > 0).all()
    assert objectives[-1] == pytest.approx(result.objective)
    for obj, values in seen:
        assert _meets_rows(m, values)
        m_obj = sum(c * values[v.name] for v, c in
                    zip(m.x.values(), _coefs(m.value.expr, m.x.values()), strict=True))
        assert m_obj == pytest.approx(obj)
    assert result.plugin_stats["on_solution"]["calls"] == len(seen)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_returning_true_stops_with_that_solution_loaded(solver):
    m = mknapsack(40, seed=1)
    truth = solve(m, solver="highs").objective
    seen = []

    def good_enough(solution, objective):
        seen.append(objective)
        return objective >= 0.9 * truth

    result = solve(m, solver=solver, plugins=[OnSolution(good_enough)])
    assert result.status is Status.INTERRUPTED and result.plugin_stats["on_solution"]["stopped"]
    assert truth > result.objective >= 0.9 * truth and result.objective >= seen[-1] - 1e-9
    if solver == "scip":  # HiGHS stops at its next interrupt check: maybe at a better point
        assert result.objective == pytest.approx(seen[-1])
    assert pyo.value(m.value) == pytest.approx(result.objective)
    assert all(obj < 0.9 * truth for obj in seen[:-1])


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_error_in_the_callback_comes_out_of_solve(solver):
    def broken(solution, objective):
        raise RuntimeError("callback bug")

    with pytest.raises(RuntimeError, match="callback bug"):
        solve(mknapsack(20, seed=0), solver=solver, plugins=[OnSolution(broken)])


def test_highs_refuses_plugins_that_run_inside_scip_by_name():
    with pytest.raises(InputError, match="HiGHS takes no 'user_heuristic' plugin"):
        solve(mknapsack(10, seed=0), solver="highs",
              plugins=[UserHeuristic(lambda _lp: None)])


def _subset_sum(n: int, seed: int) -> tuple[pyo.ConcreteModel, list[int]]:
    """sum(a x) == b with large random a and b made by a planted subset: SCIP's own
    heuristics rarely find a point at the root."""
    rng = np.random.default_rng(seed)
    a = rng.integers(10**5, 10**6, n)
    planted = [int(v) for v in rng.integers(0, 2, n)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.sum = pyo.Constraint(expr=sum(int(a[i]) * m.x[i] for i in range(n))
                           == int(np.dot(a, planted)))
    m.cost = pyo.Objective(expr=sum(int(c) * m.x[i] for i, c in enumerate(rng.integers(1, 9, n))))
    return m, planted


def test_a_proposed_point_is_kept_when_feasible():
    m, planted = _subset_sum(40, 5)

    def propose(lp_solution):
        return [(m.x[i], planted[i]) for i in range(40)]

    heuristic = UserHeuristic(propose, priority=10**6)
    result = solve(m, plugins=[heuristic], **{"limits/nodes": 1})
    assert result.has_solution and heuristic.statistics()["accepted"] >= 1
    assert pyo.value(m.sum.body) == pyo.value(m.sum.upper)
    costs = _coefs(m.cost.expr, m.x.values())
    planted_cost = sum(c for c, p in zip(costs, planted, strict=True) if p)
    assert result.objective <= planted_cost + 1e-6


def test_infeasible_and_partial_proposals_leave_the_optimum_alone():
    m = mknapsack(40, seed=4)
    everything = ComponentMap((v, 1) for v in m.x.values())  # over every capacity

    def propose(lp_solution):
        if lp_solution[m.x[0]] > 0.5:
            return [(m.x[0], 1)]  # partial: the rest keep their LP values
        return everything

    heuristic = UserHeuristic(propose, max_calls=25)
    result = solve(m, plugins=[heuristic])
    assert result.objective == pytest.approx(solve(m, solver="highs").objective, rel=1e-4)
    stats = heuristic.statistics()
    assert 0 < stats["calls"] <= 25 and stats["proposed"] == stats["calls"]


@pytest.mark.parametrize("proposal,fragment", [
    (lambda m, o: [(m.x, 1)], "not one variable"),
    (lambda m, o: [(o.z, 1)], "not in the solved model"),
    (lambda m, o: [(m.x[0], math.nan)], "nan"),
    (lambda m, o: 3, "pairs"),
    (lambda m, o: [m.x[0]], "pairs"),
])
def test_bad_proposals_are_named(proposal, fragment):
    m = mknapsack(10, seed=0)
    other = pyo.ConcreteModel()
    other.z = pyo.Var()
    with pytest.raises(InputError, match=fragment):
        solve(m, plugins=[UserHeuristic(lambda _lp: proposal(m, other))])


def test_a_fixed_variable_in_a_proposal_is_skipped():
    m = mknapsack(15, seed=2)
    m.x[0].fix(0)
    heuristic = UserHeuristic(lambda _lp: [(v, 0) for v in m.x.values()], max_calls=3)
    result = solve(m, plugins=[heuristic])
    assert result.objective == pytest.approx(solve(m, solver="highs").objective, rel=1e-4)
    assert heuristic.statistics()["proposed"] >= 1


@pytest.mark.parametrize("make,fragment", [
    (lambda: OnSolution(3), "needs a function"),
    (lambda: OnSolution(print, name="a b"), "identifier"),
    (lambda: UserHeuristic(None), "needs a function"),
    (lambda: UserHeuristic(print, freq=-1), "freq"),
    (lambda: UserHeuristic(print, max_calls=0), "max_calls"),
])
def test_constructors_check_their_arguments(make, fragment):
    with pytest.raises(InputError, match=fragment):
        make()


def test_plugins_kept_until_the_interpreter_exits_do_not_crash_it():
    # Kept for their statistics, OnSolution and UserHeuristic held SCIP's model until exit,
    # where PySCIPOpt freed it after them: exit code 139 after the work had succeeded.
    code = textwrap.dedent("""
        import json
        from coplug.formulations.mip_families import mknapsack
        from coplug.plugins import OnSolution, UserHeuristic, solve
        a, b = OnSolution(lambda s, o: None), UserHeuristic(lambda lp: None)
        print(solve(mknapsack(20, seed=0), plugins=[a, b]).status.value)
        json.kept = (a, b)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "optimal"


def test_a_nonlinear_objective_is_passed_at_its_value_not_scips_epigraph_bound():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5), domain=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 3)
    m.o = pyo.Objective(expr=sum((m.x[i] - 0.3 * i) ** 2 + pyo.exp(0.1 * m.x[i])
                                 for i in range(5)))
    seen = []

    def record(solution, objective):
        values = [solution[m.x[i]] for i in range(5)]
        seen.append((objective, sum((v - 0.3 * i) ** 2 + math.exp(0.1 * v)
                                    for i, v in enumerate(values))))

    result = solve(m, plugins=[OnSolution(record)])
    assert seen and all(obj == pytest.approx(true) for obj, true in seen)
    assert seen[-1][0] == pytest.approx(result.objective)


def test_the_solved_blocks_own_nonlinear_objective_is_passed_not_a_siblings():
    m = pyo.ConcreteModel()
    for name, shift in (("b1", 0.3), ("b2", 2.7)):
        b = pyo.Block()
        m.add_component(name, b)
        b.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-4, 4))
        b.c = pyo.Constraint(expr=sum(b.x.values()) >= 1)
        b.o = pyo.Objective(expr=sum((b.x[i] - shift * i) ** 2 for i in range(3)))
    seen = []

    def record(solution, objective):
        values = [solution[m.b1.x[i]] for i in range(3)]
        seen.append((objective, sum((v - 0.3 * i) ** 2 for i, v in enumerate(values))))

    solve(m.b1, plugins=[OnSolution(record)])
    assert seen and all(obj == pytest.approx(true) for obj, true in seen)


def test_ctrl_c_in_highs_keeps_the_first_runs_point_instead_of_solving_again():
    # HiGHS's cancel flag stays set, so the tighter solve again that a misjudged large row
    # asks for stopped at once and the interrupted run's point was lost (no solution)
    import os
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Ctrl-C is handled in the main thread only")
    m = pyo.ConcreteModel()
    boxes = [(1, 3), (-1, 0), (-1, 1), (-2, -1)]
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=lambda _, i: boxes[i])
    m.row = pyo.Constraint(expr=15000000 * m.x[0] + 10000000 * m.x[1] - 4999999 * m.x[2]
                           - 5000001 * m.x[3] == 45000000)
    m.o = pyo.Objective(expr=5 * m.x[0] - 2 * m.x[1] - m.x[2] + m.x[3])
    pressed = []

    def ctrl_c(solution, objective):
        if not pressed:
            pressed.append(objective)
            os.kill(os.getpid(), signal.SIGINT)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a kept point that misses the row is warned about
        result = solve(m, solver="highs", plugins=[OnSolution(ctrl_c)])
    assert pressed and result.has_solution and "first_solve" not in result.extra
    assert result.status in (Status.INTERRUPTED, Status.UNKNOWN)
    assert all(v.value is not None for v in m.x.values())


def _last_call_trap() -> pyo.ConcreteModel:
    """A random MIP (seed 194 of a 200-model search) whose final HiGHS solution, 24.905,
    HiGHS never handed to its improving callback: the last call was at 24.796."""
    rng = np.random.default_rng(194)
    m = pyo.ConcreteModel()
    m.z = pyo.Var(range(8), domain=pyo.Integers, bounds=(0, 5))
    m.y = pyo.Var(range(4), bounds=(0, 10))
    variables = list(m.z.values()) + list(m.y.values())
    rows = rng.integers(-3, 8, size=(5, 12))
    sides = rng.integers(10, 40, size=5)
    m.c = pyo.Constraint(range(5), rule=lambda m, i: sum(
        int(rows[i, k]) * v for k, v in enumerate(variables)) <= int(sides[i]))
    costs = rng.normal(size=12).round(3)
    m.o = pyo.Objective(expr=sum(float(c) * v for c, v in zip(costs, variables, strict=True)),
                        sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_the_final_solution_is_handed_on_even_when_the_solver_did_not(solver):
    m = _last_call_trap()
    seen = []
    result = solve(m, solver=solver, plugins=[OnSolution(_recorder(m, seen))])
    assert result.status is Status.OPTIMAL
    assert seen[-1][0] == pytest.approx(result.objective)
    assert seen[-1][1] == {v.name: v.value for v in m.component_data_objects(pyo.Var)}
    objectives = [objective for objective, _ in seen]
    assert all(b > a for a, b in zip(objectives, objectives[1:], strict=False))


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_no_solution_is_handed_on_after_a_stop(solver):
    """HiGHS went on to a better point after the callback said stop, and handed that one on
    too (calls [0, 20]), ending 'optimal' with 'stopped' in its statistics."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum((3 + i) * m.x[i] for i in range(6)) <= 15)
    m.value = pyo.Objective(expr=sum((4 + 1.5 * i) * m.x[i] for i in range(6)),
                            sense=pyo.maximize)
    seen = []
    result = solve(m, solver=solver, plugins=[OnSolution(lambda s, obj: seen.append(obj) or True)])
    assert len(seen) == 1 and result.plugin_stats["on_solution"]["calls"] == 1
    assert result.status in (Status.INTERRUPTED, Status.OPTIMAL) and result.objective >= seen[0]
    assert sum((3 + i) * round(m.x[i].value) for i in range(6)) <= 15
    assert pyo.value(m.value) == pytest.approx(result.objective)
