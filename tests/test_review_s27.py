"""Session 27's probes: callbacks reading variables the solve never saw, a stop asked by
`OnSolution` under SCIP, and malformed Benders links."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, pareto_front, solve
from coplug.plugins.benders import BendersCuts, Subproblem
from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.on_solution import OnSolution


def _lazy_model() -> pyo.ConcreteModel:
    """max x, x integer in [0, 5], and z in [0, 1] used by no row: it holds -100."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 5))
    m.z = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.z.value = -100
    return m


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("where", ["unused", "other model"])
def test_lazy_row_over_an_unsolved_variable_is_named(solver: str, where: str) -> None:
    """A lazy row over a variable the solve never saw is an InputError for both solvers
    (HiGHS's rounds judged it at the stale -100 and called x = 5 optimal for x + 3z <= 1)."""
    m = _lazy_model()
    other = pyo.ConcreteModel()
    other.w = pyo.Var(initialize=-100)
    var = m.z if where == "unused" else other.w
    lazy = LazyConstraints(lambda solution: [m.x + 3 * var <= 1])
    with pytest.raises(InputError, match="not in the solved model"):
        solve(m, solver=solver, plugins=[lazy])


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_lazy_row_over_a_fixed_variable_reads_its_value(solver: str) -> None:
    """A fixed variable is no column, yet a lazy row reads it as its value."""
    m = _lazy_model()
    m.z.fix(1)
    result = solve(m, solver=solver, plugins=[LazyConstraints(lambda s: [m.x + 3 * m.z <= 4])])
    assert result.objective == pytest.approx(1.0) and m.x.value == pytest.approx(1.0)


def _mixed_model(seed: int) -> pyo.ConcreteModel:
    """A small random mixed-integer model on which SCIP finds several best solutions in one
    heuristic round (seed 76: two before its interrupt check)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(6, 14)), int(rng.integers(2, 5))
    types = rng.integers(0, 3, n)
    lower = np.where(types == 0, 0, rng.integers(-3, 1, n))
    upper = np.where(types == 0, 1, rng.integers(1, 6, n))
    domain = {0: pyo.Binary, 1: pyo.Integers, 2: pyo.Reals}
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=lambda m, i: domain[int(types[i])],
                  bounds=lambda m, i: (int(lower[i]), int(upper[i])))
    m.f = pyo.Var(bounds=(0, 10))
    m.f.fix(3)
    a, b = rng.integers(-5, 9, (k, n)), rng.integers(5, 20, k)
    m.c = pyo.Constraint(range(k), rule=lambda m, j: sum(
        int(a[j, i]) * m.x[i] for i in range(n)) + m.f <= int(b[j]))
    c, constant = rng.integers(-9, 10, n), float(rng.integers(-50, 50))
    sense = pyo.maximize if rng.integers(0, 2) else pyo.minimize
    m.o = pyo.Objective(expr=sum(int(c[i]) * m.x[i] for i in range(n)) + 2 * m.f + constant,
                        sense=sense)
    return m


@pytest.mark.parametrize("seed", [76, 3, 11])
def test_scip_hands_on_nothing_after_a_stop(seed: int) -> None:
    """Returning True at the first solution: one call, status interrupted, and the point
    loaded is that one or a better one SCIP found before its interrupt check (it handed
    that one on too)."""
    m = _mixed_model(seed)
    handed: list[float] = []

    def first(solution, objective: float) -> bool:
        handed.append(objective)
        return True

    result = solve(m, solver="scip", plugins=[OnSolution(first)])
    assert len(handed) == 1
    assert result.status.value in ("interrupted", "optimal")
    better = result.objective >= handed[0] if m.o.sense == pyo.maximize \
        else result.objective <= handed[0]
    assert better and result.objective == pytest.approx(pyo.value(m.o))


def _benders_parts() -> tuple[pyo.ConcreteModel, pyo.ConcreteModel]:
    master = pyo.ConcreteModel()
    master.y = pyo.Var(domain=pyo.Binary)
    master.t = pyo.Var(bounds=(0, None))
    sub = pyo.ConcreteModel()
    sub.x = pyo.Var(bounds=(0, 10))
    sub.yc = pyo.Var()
    sub.c = pyo.Constraint(expr=sub.x + 5 * sub.yc >= 4)
    sub.o = pyo.Objective(expr=sub.x)
    return master, sub


@pytest.mark.parametrize("shape", ["lone", "triple", "flat"])
def test_benders_links_that_are_not_pairs_are_named(shape: str) -> None:
    """Links that are not (master, copy) pairs name the link, by its variables' names (a
    bare tuple unpacking raised "not enough values to unpack")."""
    master, sub = _benders_parts()
    links = {"lone": [master.y], "triple": [(master.y, sub.yc, 1.0)],
             "flat": [master.y, sub.yc]}[shape]
    with pytest.raises(InputError, match=r"links must be \(master variable, copy\) pairs.*'y'"):
        BendersCuts([Subproblem(sub, links, master.t)])


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("scale", [1e7, 1e9])
def test_front_keeps_a_point_close_in_a_large_first_objective(solver: str, scale: float) -> None:
    """Two binaries, one of them on: (scale, 5) and (scale + 3.5, 1) are both on the front.
    A room of 1e-6 of the value (10 at 1e7) took the second point as no worse than the
    first and dropped the first, front complete."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.one = pyo.Constraint(expr=m.x[0] + m.x[1] == 1)
    m.f1 = pyo.Objective(expr=scale * m.x[0] + (scale + 3.5) * m.x[1])
    m.f2 = pyo.Objective(expr=5 * m.x[0] + m.x[1])
    m.f2.deactivate()
    front = pareto_front(m, m.f1, m.f2, solver=solver)
    assert front.complete
    assert [p.values for p in front.points] == [(scale, 5.0), (scale + 3.5, 1.0)]


def _gap_model() -> pyo.ConcreteModel:
    """A small MIP with an objective constant of 8 that HiGHS proves optimal at 0 with a
    bound of -1.000000001e-6: its gap of 1e-6 as computed with the offset."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, 3))
    m.z = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 3))
    m.c = pyo.Constraint(expr=5 * m.x[0] - 5 * m.x[1] - 3 * m.x[3] + 4 * m.y - 5 * m.z >= -8)
    m.o = pyo.Objective(expr=2 * m.x[1] - m.x[2] + 4 * m.x[3] + 4 * m.y - 3 * m.z + 8)
    return m


def test_highs_optimum_at_the_default_gap_plus_rounding_stays_optimal() -> None:
    """HiGHS's "optimal" at a gap of 1e-6 plus float rounding is no "feasible" (which made
    lexicographic and pareto_front with HiGHS end with no point)."""
    m = _gap_model()
    result = solve(m, solver="highs")
    assert result.status.value == "optimal" and result.objective == pytest.approx(0.0)
    m.o2 = pyo.Objective(expr=m.x[2] + m.z)
    m.o2.deactivate()
    fronts = [[p.values for p in pareto_front(m, m.o, m.o2, solver=s, step=1).points]
              for s in ("highs", "scip")]
    assert fronts[0] == fronts[1] and len(fronts[0]) == 5


def test_a_gap_beyond_rounding_is_still_feasible() -> None:
    from coplug.plugins.highs_backend import beyond_default_gap
    assert not beyond_default_gap(0.0, -1.000000001e-6, 5, offset=8.0)
    assert beyond_default_gap(0.0, -1.01e-6, 5, offset=8.0)
    assert not beyond_default_gap(0.0, -1.01e-6, 5, offset=1e8)  # rounding of 1e8: 1e-8
    assert beyond_default_gap(1e6, 1e6 - 101.0, 5)
    assert not beyond_default_gap(1e6, 1e6 - 99.0, 5)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_plugins_see_the_one_point_of_an_all_fixed_model(solver: str) -> None:
    """Every variable fixed: HiGHS never runs, yet the pool holds the point and OnSolution
    is handed it, as with SCIP (the pool stayed empty and the callback uncalled)."""
    from coplug.plugins import SolutionPool

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    for i in range(3):
        m.x[i].fix(i % 2)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 2)
    m.o = pyo.Objective(expr=sum((i + 1) * m.x[i] for i in range(3)))
    pool, calls = SolutionPool(5), []
    on = OnSolution(lambda solution, objective: calls.append((objective, solution[m.x[1]])))
    result = solve(m, solver=solver, plugins=[pool, on])
    assert result.objective == pytest.approx(2.0)
    assert [s.objective for s in pool.solutions] == [pytest.approx(2.0)]
    assert calls == [(pytest.approx(2.0), 1.0)]


@pytest.mark.parametrize("given", ["threshold", "confidence"])
def test_a_checkpoints_tuned_value_the_caller_overrides_is_not_checked(tmp_path, given: str
                                                                       ) -> None:
    """A checkpoint whose JSON holds a t (or q) out of range: the caller's own value stands
    in for it and the other one is read from the file; given neither, the file is named."""
    import json
    import shutil

    from coplug.learned.pmvb_predictors import shipped_checkpoint
    from coplug.plugins.pmvb import PMVBBranching
    from coplug.plugins.pmvb_cli import resolve_predictor

    source = shipped_checkpoint("mknapsack", "logreg")
    path = tmp_path / source.name
    shutil.copy(source, path)
    meta = json.loads(source.with_suffix(".json").read_text())
    meta.update(threshold=0.3 if given == "threshold" else 0.92,
                confidence=1.5 if given == "confidence" else 0.8)
    path.with_suffix(".json").write_text(json.dumps(meta))
    own = {"threshold": 0.9} if given == "threshold" else {"confidence": 0.95}
    rule = PMVBBranching(path, **own)
    assert (rule.threshold, rule.confidence) == ((0.9, 0.8) if given == "threshold"
                                                 else (0.92, 0.95))
    assert resolve_predictor(str(path), "mknapsack", **own)[0] is not None
    with pytest.raises(InputError, match=r"metadata .*\.json"):
        PMVBBranching(path)
    with pytest.raises(InputError, match=r"metadata .*\.json"):
        resolve_predictor(str(path), "mknapsack")


def _qp_with_free_column() -> pyo.ConcreteModel:
    """A convex QP whose free x0's gradient, 2 + (x0 + x2 - x3 - 2 x4), sums terms near 25
    to about 1e-6 at HiGHS's optimum (no row binds x0)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5))
    m.x[1].setlb(2)
    m.x[1].setub(2)
    m.x[3].setlb(-5)
    m.x[3].setub(2)
    m.x[4].setlb(0)
    m.x[4].setub(7)
    x = m.x
    m.c1 = pyo.Constraint(expr=3 * x[1] + 3 * x[2] + 3 * x[3] + 5 * x[4] == 8)
    m.c2 = pyo.Constraint(expr=2 * x[0] + 2 <= 13)
    m.c3 = pyo.Constraint(expr=sum(x.values()) <= 20)
    m.c4 = pyo.Constraint(expr=sum(x.values()) >= -20)
    m.o = pyo.Objective(expr=2 * x[0] - 3 * x[1] - 2 * x[2] - x[3] + 2 * x[4]
                        + 0.5 * (x[0] + x[2] - x[3] - 2 * x[4]) ** 2)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def test_a_qp_optimum_whose_free_gradient_cancels_stays_optimal() -> None:
    """The certificate counts a gradient entry as zero relative to the terms summing to it
    (|c| + |H||x|), not to its own size: HiGHS's optimum came back feasible, its duals
    refused with a gap of inf."""
    m = _qp_with_free_column()
    result = solve(m, solver="highs")
    plain = _qp_with_free_column()
    plain.del_component(plain.dual)  # SCIP gives no duals of a QP
    reference = solve(plain, solver="scip")
    assert result.status.value == "optimal" and result.extra["duals"]["loaded"]
    assert result.objective == pytest.approx(reference.objective, abs=1e-5)
    assert m.dual[m.c1] == pytest.approx(-4.0 / 3.0, abs=1e-4)  # d(objective)/d(side of c1)


def test_knapsack_value_past_int64_does_not_wrap(tmp_path) -> None:
    """Two values of 2**62: the packing is worth 2**63, and certify calls its safe-QUBO
    point feasible (int64 wrapped the value to -2**63 and certify called it infeasible)."""
    from coplug.formulations.knapsack import knapsack_qubo_safe, load_knapsack
    from coplug.formulations.qubo_solvers import certify

    path = tmp_path / "k.txt"
    path.write_text(f"2 2\n{2**62} 1\n{2**62} 1\n")
    instance = load_knapsack(path)
    assert instance.value(np.array([1, 1])) == float(2**63)
    qubo = knapsack_qubo_safe(instance)
    point = np.zeros(qubo.n)
    point[qubo.names.index("y0@0")] = point[qubo.names.index("y1@1")] = 1
    assert certify(qubo, point).feasible


@pytest.mark.parametrize("token", ["1_0", "\u0661\u0660", "1.0"])
def test_knapsack_files_take_ascii_integers_only(tmp_path, token: str) -> None:
    from coplug.formulations.knapsack import load_knapsack

    path = tmp_path / "k.txt"
    path.write_text(f"1 {token}\n3 4\n", encoding="utf-8")
    with pytest.raises(InputError, match="not an integer"):
        load_knapsack(path)


@pytest.mark.parametrize("make", ["knapsack", "block_model", "facility", "setcover"])
def test_generators_refuse_sizes_beyond_memory_by_name(make: str) -> None:
    from coplug.formulations import mip_families
    from coplug.formulations.facility import random_facility_instance
    from coplug.formulations.knapsack import random_knapsack
    from coplug.formulations.openpit import random_block_model

    build = {"knapsack": lambda: random_knapsack(10**13),
             "block_model": lambda: random_block_model(10**13),
             "facility": lambda: random_facility_instance(10**7, 10**7, 1),
             "setcover": lambda: mip_families.setcover(10**8)}[make]
    with pytest.raises(InputError, match="GiB of memory"):
        build()


@pytest.mark.parametrize("method", ["energy", "gradient", "flip_deltas"])
@pytest.mark.parametrize("point", [["a", "b", "c"], [[0, 1], [1]]])
def test_qubo_points_that_are_not_numbers_are_named(method: str, point: list) -> None:
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe

    qubo = knapsack_qubo_safe(KnapsackInstance([1, 2], [1, 1], 1))
    bad = point if len(point) != 3 else point[:1] * qubo.n
    with pytest.raises(InputError, match="a QUBO point must be"):
        getattr(qubo, method)(bad)


@pytest.mark.parametrize("tol", [float("nan"), -0.1, 1.0, 5.0, "a"])
def test_subtour_separator_names_a_bad_tol(tol) -> None:
    from coplug.formulations.tsp import random_euclidean, subtour_separator, tsp_mip

    model = tsp_mip(random_euclidean(5, seed=0).dist, subtour="none")
    with pytest.raises(InputError, match="subtour_separator tol"):
        subtour_separator(model, tol)


def test_subtour_separator_gives_no_row_for_a_lone_city() -> None:
    """A city whose arcs all lie at or below tol is a group of one: no row (`0 <= 0` was
    True, which the lazy plugin refused as no relational expression)."""
    from coplug.formulations.tsp import random_euclidean, subtour_separator, tsp_mip

    model = tsp_mip(random_euclidean(4, seed=0).dist, subtour="none")
    values = {arc: 0.0 for arc in model.A}
    for i, j in [(0, 1), (1, 0), (2, 3), (3, 2)]:
        values[i, j] = 0.25  # every city's arcs at 0.25: below tol 0.3
    from pyomo.common.collections import ComponentMap

    solution = ComponentMap((model.x[arc], value) for arc, value in values.items())
    rows = subtour_separator(model, tol=0.3)(solution)
    assert rows == []


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("tee", [None, "yes", 1])
def test_tee_that_is_no_bool_is_named(solver: str, tee, tmp_path) -> None:
    """HiGHS's Pyomo interface failed deep inside on tee=None or "yes"; both solvers and
    solve_file name it."""
    from coplug.plugins import solve_file

    m = _lazy_model()
    with pytest.raises(InputError, match="tee must be True or False"):
        solve(m, solver=solver, tee=tee)
    path = tmp_path / "m.lp"
    path.write_text("maximize\n obj: x\nsubject to\n c: x <= 3\nend\n")
    with pytest.raises(InputError, match="tee must be True or False"):
        solve_file(path, solver=solver, tee=tee)
    assert solve(m, solver=solver, tee=np.bool_(False)).objective == pytest.approx(5.0)


@pytest.mark.parametrize("text", [
    "(x[0] - 1.0) ** (2.0 + 0.0 * x[0]) - 50.0 * exp(-1000000.0 * (x[0] + 3.0) ** 2)",
    "sqrt((x[0] - 0.3) ** 2 - 1e-12)",
    "((x[0] - 0.3) ** 2 - 1e-12) ** 1.5",
    "exp(710.0 - 1e8 * (x[0] - 0.3) ** 2)",
    "acos(1.0 + 1e-12 - (x[0] - 0.3) ** 2)",
])
def test_bbo_programs_leaving_their_domain_on_the_box_are_rejected(text: str) -> None:
    """nan or inf in a narrow well the samples miss, or a negative base under a variable
    exponent (numpy's (-4) ** 2.0 is 16, but the Pyomo model keeps the base >= 0, and
    certify certified -1e-9 for a minimum of -34), are rejected by interval proof."""
    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.grammar import ProgramError

    with pytest.raises(ProgramError, match="non_finite"):
        load(text, 1)


@pytest.mark.parametrize("text", [
    "sqrt((x[0] - 0.3) ** 2 + 1e-12)",
    "sum(abs(x) ** [2.0, 6.0]) ** 0.5",
    "max(x[0], 0.0) ** (1.0 + x[1] / 10.0)",
    "acos(x[0] / 5.0) + exp(x[1] * 5.0)",
    "sqrt(x[0] + 5.0) + (5.0 - x[1]) ** 0.5",
    "sqrt(x[0] / 5.0 + 1.0)",  # bounds rounded outward to -2e-14 at x[0] = -5
])
def test_bbo_programs_inside_their_domains_still_load(text: str) -> None:
    from coplug.formulations.bbo import load

    assert load(text, 2).dim == 2


def test_bbo_a_named_matrix_is_refused_by_the_grammar() -> None:
    """A let holding a matrix parsed, then failed deep in validation, the Pyomo model and
    the interval bounds (and one LLM reply so written ended an evolve run)."""
    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.grammar import ProgramError

    with pytest.raises(ProgramError, match="a matrix cannot be named"):
        load("a = [[1.0, 0.5], [0.0, 1.0]]\nsum(a @ x)", 2)
    assert load("sum([[1.0, 0.5], [0.0, 1.0]] @ x)", 2).dim == 2


def _mps(rhs: str = " RHS c1 4\n RHS c2 3\n", bounds: str = " UP BND x 10\n UP BND y 10\n",
         ranges: str = "", head: str = "") -> str:
    """max x + y, x <= c1's side, y <= c2's side, with the given sections."""
    return (f"NAME P\n{head}OBJSENSE\n    MAX\nROWS\n N obj\n L c1\n L c2\nCOLUMNS\n"
            " x obj 1 c1 1\n y obj 1 c2 1\n"
            f"RHS\n{rhs}" + (f"RANGES\n{ranges}" if ranges else "") + f"BOUNDS\n{bounds}ENDATA\n")


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("text, says", [
    (_mps(rhs=" RHS c1 1D2\n"), "the RHS of 'c1' is '1D2', not a number"),
    (_mps(rhs=" RHS c1 abc\n"), "the RHS of 'c1' is 'abc', not a number"),
    (_mps(rhs=" RHS c1 1,5\n"), "the RHS of 'c1' is '1,5', not a number"),
    (_mps(rhs=" RHS c1 --2\n"), "the RHS of 'c1' is '--2', not a number"),
    (_mps(ranges=" RNG c1 2.0x\n"), "the RANGES of 'c1' is '2.0x', not a number"),
    (_mps(bounds=" UP BND x 1d1\n"), "the bound of 'x' is '1d1', not a number"),
    (_mps(rhs=" RHS c1 4 c2\n"), "is no `\\[set\\] row value"),
    (_mps(rhs=" R1 c1 4\n R2 c2 3\n"), "a second RHS set \\('R2' after 'R1'\\)"),
    (_mps(bounds=" UP B1 x 10\n UP B2 y 5\n"), "a second BOUNDS set \\('B2' after 'B1'\\)"),
    (_mps(ranges=" S1 c1 2\n S2 c2 2\n"), "a second RANGES set"),
    (_mps(bounds=" XX BND x 10\n"), "'XX' is no BOUNDS type"),
])
def test_mps_data_the_readers_take_apart_is_refused(tmp_path, solver: str, text: str,
                                                     says: str) -> None:
    """Numbers, fields and sets SCIP's and HiGHS's readers read differently (1D2: 1 and
    100; a second RHS set: SCIP only the first) are named before either reads them."""
    from coplug.plugins import solve_file

    path = tmp_path / "p.mps"
    path.write_text(text)
    with pytest.raises(InputError, match=says):
        solve_file(path, solver=solver)


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("rhs, bounds, ranges, optimum", [
    (" RHS c1 4\n RHS c2 3\n", " UP BND x 10\n UP BND y 10\n", "", 7.0),
    (" c1 4 c2 3\n", " UP BND x 10\n UP BND y 10\n", "", 7.0),  # no set name: pairs
    (" RHS c1 4.5e0 c2 +3.\n", " UP BND x Infinity\n BV BND y\n", "", 5.5),
    (" RHS c1 4\n RHS c2 3\n RHS obj -2\n", " UP BND x 10\n UP BND y 10\n", "", 9.0),
    (" RHS c1 4 c2 3\n", " UP BND x 10\n UP BND y 10\n", " RNG c1 2\n", 7.0),
])
def test_mps_data_both_readers_take_alike_still_solves(tmp_path, solver: str, rhs: str,
                                                        bounds: str, ranges: str,
                                                        optimum: float) -> None:
    from coplug.plugins import solve_file

    path = tmp_path / "p.mps"
    path.write_text(_mps(rhs=rhs, bounds=bounds, ranges=ranges))
    assert solve_file(path, solver=solver).objective == pytest.approx(optimum)


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("bounds, binaries, says", [
    (" y <= 10\n", "Binaries\n y\n", "the bound 'y <= 10' of 'y'"),
    (" -1 <= y <= 1\n", "Binaries\n y\n", "the bound '-1 <= y <= 1' of 'y'"),
    (" y free\n", "Binaries\n y\n", "the bound 'y free' of 'y'"),
    (" y = 2\n", "Binaries\n y\n", "the bound 'y = 2' of 'y'"),
    (" y >= -1\n", "Binaries\n y\n", "the bound 'y >= -1' of 'y'"),
    (" -inf <= y <= 1\n", "Binaries\n y\n", "the bound '-inf <= y <= 1' of 'y'"),
    ("", "Generals\n y\nBinaries\n y\n", "under both Generals and Binaries"),
])
def test_lp_binaries_with_other_bounds_are_refused(tmp_path, solver: str, bounds: str,
                                                   binaries: str, says: str) -> None:
    """SCIP's LP reader makes a Binaries column 0/1 whatever its Bounds, HiGHS's keeps the
    bounds on an integer column: `y <= 10` gave 4 and 4.5."""
    from coplug.plugins import solve_file

    path = tmp_path / "b.lp"
    path.write_text("Maximize\n obj: x + y\nSubject To\n c1: x + y <= 4.5\nBounds\n x <= 3\n"
                    f"{bounds}{binaries}End\n")
    with pytest.raises(InputError, match=says):
        solve_file(path, solver=solver)


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("bounds, optimum", [
    ("", 4.0), (" 0 <= y <= 1\n", 4.0), (" y <= 1\n", 4.0), (" y >= 0\n", 4.0),
    (" 1 >= y\n", 4.0), (" 1 <= y <= 1\n", 4.0), (" y = 1\n", 4.0), (" y <= 0\n", 3.0),
    (" y <= 0.5\n", 3.0),
])
def test_lp_binaries_bounded_within_0_and_1_still_solve(tmp_path, solver: str, bounds: str,
                                                        optimum: float) -> None:
    """Both readers take a bound within [0, 1] alike (PySCIPOpt writes a fixed binary as
    `1 <= y <= 1`)."""
    from coplug.plugins import solve_file

    path = tmp_path / "b.lp"
    path.write_text("Maximize\n obj: x + y\nSubject To\n c1: x + y <= 4.5\nBounds\n x <= 3\n"
                    f"{bounds}Binaries\n y\nEnd\n")
    assert solve_file(path, solver=solver).objective == pytest.approx(optimum)


def test_highs_refuses_an_objname_it_would_ignore(tmp_path) -> None:
    """OBJNAME picks the second free row: SCIP optimizes it (3), HiGHS ignored OBJNAME and
    called the first row's optimum (4) optimal."""
    from coplug.plugins import solve_file

    text = ("NAME P\nOBJSENSE\n    MAX\nOBJNAME\n    o2\nROWS\n N obj\n N o2\n L c1\nCOLUMNS\n"
            " x obj 1 o2 -1\n x c1 1\nRHS\n RHS c1 4\nBOUNDS\n UP BND x 10\n LO BND x -3\n"
            "ENDATA\n")
    path = tmp_path / "o.mps"
    path.write_text(text)
    assert solve_file(path, solver="scip").objective == pytest.approx(3.0)
    with pytest.raises(InputError, match="OBJNAME names 'o2'"):
        solve_file(path, solver="highs")
    path.write_text(text.replace("    o2\n", "    obj\n"))
    assert solve_file(path, solver="highs").objective == pytest.approx(4.0)


def test_a_late_objsense_is_no_false_refusal(tmp_path) -> None:
    """OBJSENSE after BOUNDS: HiGHS reads its MAX, which the sense check (looking before
    COLUMNS only) called a misreading of a minimizing file."""
    from coplug.plugins import solve_file

    path = tmp_path / "late.mps"
    path.write_text("NAME P\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1 c1 1\nRHS\n RHS c1 3\n"
                    "BOUNDS\n UP BND x 10\nOBJSENSE\n    MAX\nENDATA\n")
    assert solve_file(path, solver="highs").objective == pytest.approx(3.0)


def test_the_ascent_names_a_utility_the_others_take_out_of_its_domain() -> None:
    """b pushes y past x, where a's log(x - y + 0.01) is undefined: a's steps are all refused
    and the ascent stood still for all of max_iter (72 s at the default) and returned it."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent
    from coplug.formulations.games import Game

    game = Game()
    a, b = game.add_player("a"), game.add_player("b")
    a.x = pyo.Var(bounds=(0, 10), initialize=0.5)
    b.y = pyo.Var(bounds=(0, 10), initialize=0.1)
    a.utility = pyo.Expression(expr=pyo.log(a.x - b.y + 0.01) - 5 * a.x)
    b.utility = pyo.Expression(expr=3 * b.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's log of a negative number
        with pytest.raises(InputError, match="utility of player 'a'.*after iteration"):
            barrier_gradient_ascent(game, mu=1e-6, max_iter=3000)


@pytest.mark.parametrize("name", ["name", "model", "clone", "component"])
def test_a_player_named_like_a_pyomo_attribute_is_refused(name: str) -> None:
    from coplug.formulations.games import Game

    with pytest.raises(InputError, match="attribute of Pyomo's model"):
        Game().add_player(name)


@pytest.mark.parametrize("call", ["degree", "affinity", "graph"])
def test_fair_graph_arguments_of_the_wrong_type_are_named(call: str) -> None:
    from coplug.formulations.fair_graphs import fair_sbm, load_graph

    make, named = {"degree": (lambda: fair_sbm(100, 2, avg_degree="30"), "avg_degree"),
                   "affinity": (lambda: fair_sbm(100, 2, affinity=None), "affinity"),
                   "graph": (lambda: load_graph(["karate"]), "unknown graph")}[call]
    with pytest.raises(InputError, match=named):
        make()


def test_bbo_public_calls_name_bad_arguments() -> None:
    """Each was a numpy or Python error from deep inside, or silently took nonsense."""
    from coplug.formulations.bbo import (
        as_box_function,
        feature_distance,
        load,
        normalized_features,
        numpy_evaluator,
        run_portfolio,
    )
    from coplug.formulations.bbo.certify import certify

    program = load("sum((x - [1.0, -2.0]) ** 2)", 2)
    model = pyo.ConcreteModel()
    model.x = pyo.Var([0, 1], bounds=(-1, 1), domain=pyo.Integers)
    model.o = pyo.Objective(expr=model.x[0])
    continuous = pyo.ConcreteModel()
    continuous.x = pyo.Var([0, 1], bounds=(-1, 1))
    continuous.o = pyo.Objective(expr=continuous.x[0])
    continuous.c = pyo.Constraint(expr=continuous.x[0] >= 0.5)
    calls = [
        (lambda: certify(program, time_limit=2, known=[[1.0, 2.0, 3.0]]), "known must be"),
        (lambda: certify(program, time_limit=2, samples=-1), "samples must be"),
        (lambda: normalized_features(program, n=-5), "n \\(sample size\\)"),
        (lambda: normalized_features(program, n=2.5), "n \\(sample size\\)"),
        (lambda: run_portfolio(as_box_function(program), 10, []), "at least one seed"),
        (lambda: numpy_evaluator(program)(1.0), "points must have 2 columns"),
        (lambda: numpy_evaluator(program)(np.zeros((2, 2, 2))), "points must have 2 columns"),
        (lambda: feature_distance(np.zeros(3), np.zeros(5)), "one length"),
        (lambda: as_box_function(lambda X: X.sum(1), dim=2, lower=1.0, upper=0.0),
         "finite lower < upper"),
        (lambda: as_box_function(model), "must be continuous"),
        (lambda: as_box_function(continuous), "has constraints"),
    ]
    for call, says in calls:
        with pytest.raises(InputError, match=says):
            call()
    assert numpy_evaluator(program)(np.array([1.0, -2.0])) == pytest.approx([0.0])


def test_a_qp_gradient_cancelled_far_from_its_optimum_is_no_zero() -> None:
    """min 0.5 x**2 + e x y + e**2 y**2 + c x, optimum (0, Y): at x = 300 the x-gradient is
    150, a zero next to its terms near 3e8, but moving x alone gains 11,250; a first
    version of the relative zero test certified the point with a gap of 0. The gap is
    judged against the objective's terms |c'x| + |x'Hx|: 11,250 refuses the point where
    they are near 4e8 (Y = 1), not where they are near 2e16 (Y = 1e4: 5e-13 of them)."""
    import scipy.sparse as sp

    from coplug.plugins.lp_certificate import certify

    e = 1e4
    hessian = np.array([[1.0, e], [e, 2 * e * e]])
    none, free = np.zeros(0), np.full(2, np.inf)

    def at(shift: float, big: float):
        costs = np.array([-e * big, -2 * e * e * big])
        x = np.array([shift, big - e * shift / (2 * e * e)])
        quadratic = (np.abs(costs) + np.abs(hessian) @ np.abs(x), sp.csr_matrix(hessian))
        return certify(costs + hessian @ x, x, sp.csr_matrix((0, 2)), none, none, -free, free,
                       none, quadratic=quadratic)

    for big in (1.0, 1e4):
        far = at(300.0, big)
        assert far.gap >= 0.5 * 150.0**2 * (1 - 1e-6)
        assert far.holds is (big == 1e4)
        assert at(1e-6, big).holds


@pytest.mark.parametrize("coupling", [1.0, 1e3])
def test_a_qp_gradient_cancelled_on_coupled_columns_counts_their_joint_gain(coupling: float
                                                                             ) -> None:
    """f = M/2 (x1 + x2)**2 + e/2 (x1 - x2)**2 at (t, -t): each column alone gains little,
    together they gain f itself (a per-column gain certified a point 2e6 off its optimum);
    and a column 1e-7 from the bound it moves towards keeps its linear term (the gain
    r**2 / 2h refused a point 1e-10 off)."""
    import scipy.sparse as sp

    from coplug.plugins.lp_certificate import certify

    m, e, t = 1e8, coupling, 1000.0
    hessian = np.array([[m + e, m - e], [m - e, m + e]])
    free, none = np.full(2, np.inf), np.zeros(0)
    x = np.array([t, -t])
    found = certify(hessian @ x, x, sp.csr_matrix((0, 2)), none, none, -free, free, none,
                    quadratic=(np.abs(hessian) @ np.abs(x), sp.csr_matrix(hessian)))
    assert not found.holds  # f(x) = 2 e t**2 above the optimum 0
    curvature, near = 1e-6, np.array([1e-7, 0.0])
    small = np.diag([curvature, 1.0])
    gradient = np.array([1e-3, 0.0])  # positive: downhill is towards the lower bound 0
    found = certify(gradient, near, sp.csr_matrix((0, 2)), none, none, np.zeros(2), free, none,
                    quadratic=(np.array([2e3, 4e6]), sp.csr_matrix(small)))
    assert found.holds and found.gap == pytest.approx(1e-10, rel=1e-6)


@pytest.mark.parametrize("name, text, optimum", [
    ("dollar_row.mps", "NAME t\nROWS\n N obj\n L c$1\nCOLUMNS\n x obj -1 c$1 1\n y obj -2 c$1 1\n"
     "RHS\n RHS c$1 4\nBOUNDS\n UP BND x 3\nENDATA\n", -8.0),
    ("dollar_col.mps", "NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n x$1 obj -1 c1 1\n y obj -2 c1 1\n"
     "RHS\n RHS c1 4\nBOUNDS\n UP BND x$1 3 $ a comment\nENDATA\n", -8.0),
    ("numeric_col.mps", "NAME t\nROWS\n N obj\n L c1\n G c2\nCOLUMNS\n 7 obj 1 c1 1\n 7 c2 1\n"
     " y obj -2 c1 1\nRHS\n RHS c1 4\n RHS c2 -5\nBOUNDS\n MI BND 7\n UP BND y 3\nENDATA\n", -11.0),
])
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_mps_names_holding_dollars_or_digits_still_solve(tmp_path, solver: str, name: str,
                                                         text: str, optimum: float) -> None:
    """A `$` inside a name is no comment (only a field starting with `$` is), and `MI BND 7`
    bounds column 7 of set BND: both readers take these alike."""
    from coplug.plugins import solve_file

    path = tmp_path / name
    path.write_text(text)
    assert solve_file(path, solver=solver).objective == pytest.approx(optimum)


@pytest.mark.parametrize("text", ["sum(x ** abs(2.0))", "sum((x - 1.0) ** (1.0 + 1.0))",
                                  "exp(-(x[0] - 1.0) ** (2.0 ** 2.0)) + x[1] ** 2"])
def test_bbo_whole_exponents_written_as_expressions_still_load(text: str) -> None:
    """A constant exponent is folded (the Pyomo model folds it too): abs(2.0) takes any base."""
    from coplug.formulations.bbo import load

    assert load(text, 2).dim == 2


def test_lap_duals_past_float64_are_named() -> None:
    from coplug.learned.rowdualnet import min_trick
    from coplug.plugins.lap import solve_lap

    costs = np.array([[1.0, 2.0], [3.0, 1.0]])
    with pytest.raises(InputError, match="row_duals must be numeric"):
        solve_lap(costs, row_duals=[2**1024, 0])
    with pytest.raises(InputError, match="min_trick needs real numbers"):
        min_trick(costs, [2**1024, 0])
    with pytest.raises(InputError, match="min_trick needs real numbers"):
        min_trick([[2**1024, 1], [1, 1]], [0, 0])


def test_a_nan_coefficient_reaches_highs_row_scaling_without_a_warning(tmp_path) -> None:
    """The row check refuses it by name; the division's scan before it warned from numpy."""
    from coplug.plugins import solve_file

    path = tmp_path / "n.mps"
    path.write_text("NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1 c1 nan\nRHS\n RHS c1 4\n"
                    "BOUNDS\n UP BND x 3\nENDATA\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(InputError, match="nan"):
            solve_file(path, solver="highs")


def test_explain_infeasible_names_an_integer_fixed_at_a_fraction() -> None:
    """Both solvers call the model infeasible; the explanation was a row any y meets, or
    (x in the objective only) "the model is feasible"."""
    from coplug.plugins import explain_infeasible

    for where in ("row", "objective"):
        m = pyo.ConcreteModel()
        m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
        m.y = pyo.Var(bounds=(0, 3))
        m.x.fix(0.5)
        if where == "row":
            m.d = pyo.Constraint(expr=m.y + m.x >= -5)
        else:
            m.c = pyo.Constraint(expr=m.y <= 10)
            m.o = pyo.Objective(expr=m.x + m.y)
        assert solve(m).status.value == "infeasible"
        found = explain_infeasible(m)
        assert found.fixed == [m.x] and not found.constraints and len(found) == 1
        assert "x fixed at 0.5" in str(found)


def test_explain_infeasible_refuses_sos_by_name() -> None:
    from coplug.plugins import UnsupportedModelError, explain_infeasible

    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2])
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, sos=1)
    m.c = pyo.Constraint(expr=m.x[1] + m.x[2] >= 1.5)
    with pytest.raises(UnsupportedModelError, match="no SOS constraint \\('s'\\)"):
        explain_infeasible(m)


def test_a_files_crossed_bounds_print_in_full(tmp_path) -> None:
    from coplug.plugins import explain_infeasible_file

    path = tmp_path / "crossed.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n c: x + y >= 0\nBounds\n"
                    " 1000005 <= x <= 1000000\nEnd\n")
    text = str(explain_infeasible_file(path))
    assert "x >= 1000005.0" in text and "x <= 1000000.0" in text


def test_solves_run_without_standard_streams(tmp_path) -> None:
    """With stderr closed (`2>&-`, pythonw) sys.stderr is None: Pyomo's output capture
    flushed it, and HiGHS solves and both solvers' file reads failed."""
    import subprocess
    import sys as system

    path = tmp_path / "m.lp"
    path.write_text("maximize\n obj: x\nsubject to\n c: x <= 3\nend\n")
    script = ("import sys, pyomo.environ as pyo\n"
              "from coplug.plugins import solve, solve_file\n"
              "assert sys.stderr is None\n"
              "m = pyo.ConcreteModel(); m.x = pyo.Var(bounds=(0, 3))\n"
              "m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)\n"
              "for s in ('highs', 'scip'):\n"
              f"    print(solve(m, solver=s).objective,\n"
              f"          solve_file({str(path)!r}, solver=s).objective)\n"
              "assert sys.stderr is None\n")
    done = subprocess.run([system.executable, "-c", script], stdout=subprocess.PIPE,
                          text=True, timeout=120, preexec_fn=lambda: os.close(2))
    assert done.returncode == 0 and done.stdout.split() == ["3.0"] * 4


@pytest.mark.parametrize("argv, says", [
    (["solve", "x.mps", "--option", "foo"], "coplug: error: solve: argument --option"),
    (["solve", "x.mps", "--solver"], "coplug: error: solve: argument --solver"),
    (["lap", "--n", "abc"], "coplug: error: lap: argument --n: invalid int value"),
    (["nosuch"], "coplug: error: argument COMMAND: invalid choice"),
])
def test_cli_usage_errors_are_one_line(capsys, argv: list[str], says: str) -> None:
    """argparse printed five lines of usage before `coplug solve: error: ...`; the README
    promises one line, `coplug: error: ...`, exit 2, as every other bad input."""
    from coplug.plugins.cli import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith(says) and len(err.splitlines()) == 1


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_lp_binaries_named_on_the_header_line_are_checked(tmp_path, solver: str) -> None:
    """`Binary y` on one line: both readers take y as binary (6.5 and 12.5 with y <= 10)."""
    from coplug.plugins import solve_file

    path = tmp_path / "inline.lp"
    path.write_text("Maximize\n obj: x + y\nSubject To\n c1: x + y <= 12.5\nBounds\n x <= 5.5\n"
                    " y <= 10\nBinary y\nEnd\n")
    with pytest.raises(InputError, match="the bound 'y <= 10' of 'y'"):
        solve_file(path, solver=solver)


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("text, optimum", [
    ("Maximize\n obj: x + y\nSubject To\n c1: x + y <= 12.5\nBounds\n x <= 5.5\n"
     " y <= +inf\nBinaries\n y\nEnd\n", 6.5),
    ("NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n 7 obj -10 c1 1\n x obj -1 c1 1\nRHS\n RHS c1 5\n"
     "BOUNDS\n BV BND 7\n UP BND x 4\nENDATA\n", -14.0),
])
def test_files_both_readers_take_alike_are_not_refused(tmp_path, solver: str, text: str,
                                                       optimum: float) -> None:
    """A binary's infinite upper bound is no bound to either reader (HiGHS keeps a -inf
    lower one: refused); `BV BND 7` is column 7."""
    from coplug.plugins import solve_file

    path = tmp_path / ("f.lp" if text.startswith("Max") else "f.mps")
    path.write_text(text)
    assert solve_file(path, solver=solver).objective == pytest.approx(optimum)


@pytest.mark.parametrize("where", ["row", "column"])
def test_mps_names_starting_with_a_dollar_are_refused(tmp_path, where: str) -> None:
    """SCIP's reader takes a `$` field for a comment: a row named `$c2` crashed the process."""
    from coplug.plugins import solve_file

    row, column = ("$c2", "x") if where == "row" else ("c2", "$x")
    path = tmp_path / "d.mps"
    path.write_text(f"NAME t\nROWS\n N obj\n L {row}\nCOLUMNS\n {column} obj -1\nRHS\nBOUNDS\n"
                    f" UP BND {column} 4\nENDATA\n")
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match="starts with \\$"):
            solve_file(path, solver=solver)


def test_threads_solving_at_once_keep_pyomo_loggers_whole() -> None:
    """The data check's log intercept ran outside the solve lock: of 32 solves from four
    threads, about 20 failed Pyomo's own assertion, and its loggers stayed silenced."""
    import logging
    import threading

    def model() -> pyo.ConcreteModel:  # rows long enough for the checks to overlap
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(200), domain=pyo.Binary)
        m.c = pyo.Constraint(range(300), rule=lambda m, r: sum(
            ((j * r) % 7 + 1) * m.x[j] for j in range(r % 150, r % 150 + 40)) <= 50)
        m.o = pyo.Objective(expr=sum(m.x[j] for j in range(0, 200, 7)) - 1.0)
        return m

    failures: list[BaseException] = []
    objectives: list[float] = []

    def work(solver: str) -> None:
        try:
            for _ in range(4):
                objectives.append(solve(model(), solver=solver).objective)
        except BaseException as exc:  # the assertion, from Pyomo's intercept
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in ("scip", "highs") * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and objectives == [-1.0] * 16
    for name in ("pyomo.core", "pyomo.common.numeric_types"):
        logger = logging.getLogger(name)
        assert logger.propagate and not logger.handlers


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_progress_line_on_an_unwritable_stderr_lets_the_solve_go_on(solver: str) -> None:
    """A closed stderr made the solve raise "I/O operation on closed file" (a broken pipe:
    BrokenPipeError; /dev/full: OSError) where without the line it was optimal."""
    import io
    import sys as system

    from coplug.plugins.progress import Progress

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(30), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum((i % 7 + 3) * m.x[i] for i in range(30)) <= 40)
    m.o = pyo.Objective(expr=sum((i % 5 + 1) * m.x[i] for i in range(30)), sense=pyo.maximize)
    closed = io.StringIO()
    closed.close()
    result = solve(m, solver=solver, plugins=[Progress(every=0.0, file=closed)])
    assert result.status.value == "optimal"
    assert system.stderr is not closed


def test_ctrl_c_in_scips_iis_finder_stops_explain_infeasible(tmp_path) -> None:
    """SCIP's IIS finder caught the signal and answered as if done; the explanation went on
    and returned (and `coplug solve FILE --explain` exited 0)."""
    import signal
    import subprocess
    import sys as system
    import time

    script = ("import pyomo.environ as pyo, time, sys\n"
              "from coplug.formulations.mip_families import build_family\n"
              "from coplug.plugins import explain_infeasible\n"
              "m = build_family('mknapsack', 100, seed=0)\n"
              "obj = next(m.component_data_objects(pyo.Objective, active=True))\n"
              "m.cut = pyo.Constraint(expr=obj.expr >= 45700)\n"
              "import coplug.plugins.iis as iis\n"
              "iis.farkas_support = lambda *a: None  # straight to SCIP's IIS finder\n"
              "print('START', flush=True)\n"
              "try:\n"
              "    explain_infeasible(m)\n"
              "    print('RETURNED', flush=True)\n"
              "except KeyboardInterrupt:\n"
              "    print('INTERRUPTED', flush=True)\n")
    child = subprocess.Popen([system.executable, "-c", script], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout.readline().strip() == "START"
    time.sleep(1.5)  # the feasibility solve takes 0.1 s, SCIP's IIS finder seconds
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=120)
    assert "INTERRUPTED" in out


@pytest.mark.parametrize("kind", ["logreg", "torch"])
def test_a_failed_refit_leaves_the_predictor_unfitted(kind: str) -> None:
    """A refit that fails (NaN features) kept the old model beside the new classes_ and
    n_features_in_: it passed check_is_fitted and refused the data it was fitted on."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 12)), np.arange(40) % 2
    model = PMVBPredictor(kind="logreg") if kind == "logreg" else TorchMLPClassifier(epochs=5)
    model.fit(X, y)
    bad = np.full((6, 3), np.nan)
    with pytest.raises(InputError):
        model.fit(bad, np.array([5, 7, 5, 7, 5, 7]))
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    assert model.fit(X, y).predict_proba(X).shape == (40, 2)


def test_progress_bars_stand_down_without_stderr() -> None:
    """With stderr closed, the tqdm bars of explain_infeasible's checks, HiGHS's lazy rounds,
    a ranking and QUBO minimization failed ("'NoneType' object has no attribute 'write'")."""
    import subprocess
    import sys as system

    script = (
        "import sys, numpy as np, pyomo.environ as pyo\n"
        "from coplug.plugins import explain_infeasible, solve\n"
        "from coplug.plugins.lazy import LazyConstraints\n"
        "from coplug.plugins.lap import ranked_assignments\n"
        "from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack\n"
        "from coplug.formulations.qubo_solvers import minimize\n"
        "assert sys.stderr is None\n"
        "m = pyo.ConcreteModel(); m.x = pyo.Var(range(3), bounds=(0, 1))\n"
        "m.a = pyo.Constraint(expr=m.x[0] + m.x[1] >= 3); m.b = pyo.Constraint(expr=m.x[2] <= 1)\n"
        "print(len(explain_infeasible(m)))\n"
        "n = pyo.ConcreteModel(); n.x = pyo.Var(bounds=(0, 5), domain=pyo.Integers)\n"
        "n.o = pyo.Objective(expr=n.x, sense=pyo.maximize)\n"
        "lazy = LazyConstraints(lambda s: [n.x <= 3])\n"
        "print(solve(n, solver='highs', plugins=[lazy]).objective)\n"
        "print(len(ranked_assignments(np.arange(16.0).reshape(4, 4), 3, progress=True).costs))\n"
        "q = knapsack_qubo_safe(random_knapsack(6, seed=1, r=10))\n"
        "print(len(minimize(q, starts=2, max_iter=20, progress=True).points))\n")
    done = subprocess.run([system.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                          timeout=300, preexec_fn=lambda: os.close(2))
    assert done.returncode == 0, done.stdout
    assert done.stdout.split() == ["3", "3.0", "3", "2"]


def test_scips_infeasible_on_a_nonlinear_model_is_checked_at_plain_points() -> None:
    """SCIP called max 1/x over [1e-10, 4] infeasible, and z <= 1/x too; x = 2 (the middle)
    and (1e-10, 0) (nearest 0) meet every row. A truly infeasible model keeps its verdict."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1e-10, 4))
    m.o = pyo.Objective(expr=1 / m.x, sense=pyo.maximize)
    with pytest.warns(UserWarning, match="SCIP called the model infeasible, but a plain"):
        result = solve(m, solver="scip", time_limit=10)
    assert result.status.value == "feasible" and result.bound is None
    assert result.objective == pytest.approx(1 / m.x.value) and 1e-10 <= m.x.value <= 4
    n = pyo.ConcreteModel()
    n.x = pyo.Var(bounds=(1e-10, 4))
    n.z = pyo.Var(bounds=(-10, 1e12))
    n.c = pyo.Constraint(expr=n.z <= 1 / n.x)
    n.o = pyo.Objective(expr=n.z, sense=pyo.maximize)
    with pytest.warns(UserWarning, match="SCIP called the model infeasible"):
        found = solve(n, solver="scip", time_limit=10)
    assert found.status.value in ("feasible", "optimal")
    assert pyo.value(n.z) <= 1 / pyo.value(n.x)
    truly = pyo.ConcreteModel()
    truly.x = pyo.Var(bounds=(0, 1))
    truly.y = pyo.Var(bounds=(0, 1))
    truly.c = pyo.Constraint(expr=truly.x * truly.y >= 1.5)
    truly.o = pyo.Objective(expr=truly.x)
    assert solve(truly, solver="scip").status.value == "infeasible"
    assert truly.x.value is None  # the plain points tried are put back
