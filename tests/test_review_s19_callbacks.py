"""Review s19: callback plugins and multi-solution features probed with edge cases."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import SolutionPool, Status, lexicographic, pareto_front, solve
from coplug.plugins.benders import BendersCuts, Subproblem
from coplug.plugins.errors import InputError
from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.on_solution import OnSolution
from coplug.plugins.user_heuristic import UserHeuristic

INF = float("inf")


def _three_binaries() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 2)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    return m


NON_FINITE_ROWS = [
    lambda m: m.x[0] <= INF,
    lambda m: m.x[0] >= INF,
    lambda m: m.x[0] <= -INF,
    lambda m: m.x[0] <= float("nan"),
    lambda m: float("nan") * m.x[0] <= 0,
    lambda m: INF * m.x[0] <= 0,
    lambda m: m.x[0] + m.x[1] == INF,
]


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("make", NON_FINITE_ROWS)
def test_a_lazy_row_with_a_non_finite_side_or_coefficient_is_named(solver, make):
    # before: SCIP ignored such rows (x[0] <= -inf gave "optimal" 2 with x[0] = 1), HiGHS's
    # rounds looped forever on x[0] <= inf or a NaN coefficient
    m = _three_binaries()
    calls = []

    def separate(_solution):
        calls.append(1)
        if len(calls) > 20:
            raise RuntimeError("separate called again and again")
        return [make(m)]

    with pytest.raises(InputError, match="NaN or infinite"):
        solve(m, solver=solver, plugins=[LazyConstraints(separate)], time_limit=10)


def test_an_infinite_side_of_a_ranged_lazy_row_is_no_side():
    m = _three_binaries()
    lazy = LazyConstraints(lambda _s: [pyo.inequality(-INF, m.x[0] + m.x[1], 0)])
    result = solve(m, plugins=[lazy])
    assert result.objective == pytest.approx(1.0)
    assert m.x[0].value == pytest.approx(0.0) and m.x[1].value == pytest.approx(0.0)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_separate_returning_one_row_not_a_list_is_named(solver):
    # before: PyomoException "Cannot convert non-constant Pyomo expression to bool"
    m = _three_binaries()
    with pytest.raises(InputError, match="list of rows"):
        solve(m, solver=solver, plugins=[LazyConstraints(lambda _s: m.x[0] <= 0)])


def _benders_pair() -> tuple[pyo.ConcreteModel, pyo.ConcreteModel]:
    master = pyo.ConcreteModel()
    master.y = pyo.Var(range(2), domain=pyo.Integers, bounds=(0, 3))
    master.t = pyo.Var(bounds=(0, None))
    master.o = pyo.Objective(expr=master.y[0] + master.y[1] + master.t)
    sub = pyo.ConcreteModel()
    sub.y = pyo.Var(range(2))
    sub.z = pyo.Var(domain=pyo.NonNegativeReals)
    sub.c = pyo.Constraint(expr=sub.z >= 7 - 2 * sub.y[0] - 3 * sub.y[1])
    sub.o = pyo.Objective(expr=2 * sub.z)
    return master, sub


def test_benders_with_a_fixed_copy_is_named():
    # before: a KeyError from deep inside the HiGHS fast path's construction
    master, sub = _benders_pair()
    sub.y[0].fix(1)
    links = [(master.y[i], sub.y[i]) for i in range(2)]
    with pytest.raises(InputError, match="fixed"):
        BendersCuts([Subproblem(sub, links, master.t)])


def test_benders_matches_the_extensive_form():
    master, sub = _benders_pair()
    links = [(master.y[i], sub.y[i]) for i in range(2)]
    cuts = BendersCuts([Subproblem(sub, links, master.t)])
    result = solve(master, plugins=[LazyConstraints(cuts)])
    whole, _ = _benders_pair()
    whole.z = pyo.Var(domain=pyo.NonNegativeReals)
    whole.c = pyo.Constraint(expr=whole.z >= 7 - 2 * whole.y[0] - 3 * whole.y[1])
    whole.o.deactivate()
    whole.all = pyo.Objective(expr=whole.y[0] + whole.y[1] + 2 * whole.z)
    assert result.objective == pytest.approx(solve(whole, solver="highs").objective)


def test_benders_solver_name_in_any_case_takes_the_fast_path() -> None:
    master, sub = _benders_pair()
    links = [(master.y[i], sub.y[i]) for i in range(2)]
    cuts = BendersCuts([Subproblem(sub, links, master.t)], solver="HiGHS")
    assert cuts.solver == "highs" and cuts._built()[1][0].fast is not None
    whole = solve(master, plugins=[LazyConstraints(cuts)]).objective
    master2, sub2 = _benders_pair()
    links2 = [(master2.y[i], sub2.y[i]) for i in range(2)]
    scip_cuts = BendersCuts([Subproblem(sub2, links2, master2.t)], solver="scip")
    assert solve(master2, plugins=[LazyConstraints(scip_cuts)]).objective == pytest.approx(whole)
    for bad in ("gurobi", 3, None):
        with pytest.raises(InputError, match="BendersCuts solver must be"):
            BendersCuts([Subproblem(sub, links, master.t)], solver=bad)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_on_solution_stops_on_a_numpy_true(solver):
    # before: `stop is True` missed np.True_ (a comparison with a numpy number) and the
    # solve ran on to the optimum
    m = mknapsack(40, seed=1)
    calls = []

    def callback(_solution, objective):
        calls.append(objective)
        return np.float64(objective) >= np.float64(-1e30)

    result = solve(m, solver=solver, plugins=[OnSolution(callback)])
    assert result.status is Status.INTERRUPTED
    assert result.plugin_stats["on_solution"]["stopped"]


@pytest.mark.parametrize("value", [None, "a", np.array([1.0, 2.0])])
def test_a_proposed_value_that_is_no_number_is_named(value):
    # before: float()'s own TypeError / ValueError, naming no variable
    m = mknapsack(12, seed=3)
    heuristic = UserHeuristic(lambda _lp: [(m.x[0], value)])
    with pytest.raises(InputError, match=r"x\[0\]"):
        solve(m, plugins=[heuristic])


def test_a_proposed_value_may_be_a_pyomo_param():
    # before: Pyomo's "Implicit conversion of Pyomo numeric value (p) to float is disabled"
    m = mknapsack(12, seed=3)
    m.p = pyo.Param(initialize=0, mutable=True)
    heuristic = UserHeuristic(lambda _lp: [(var, m.p) for var in m.x.values()])
    result = solve(m, plugins=[heuristic])
    assert result.status is Status.OPTIMAL
    assert result.plugin_stats["user_heuristic"]["proposed"] >= 1


def test_a_proposal_that_misses_a_lazy_row_already_added_is_refused():
    # before: SCIP checks a heuristic's point (an original-space solution) against the
    # original constraints only, and the lazy handler skipped the rows it had added, so the
    # model's own optimum, which misses the lazy row, was proposed, kept and returned
    m = mknapsack(25, seed=3)
    free = solve(m, solver="highs")
    assert free.status is Status.OPTIMAL
    best = [(var, round(var.value)) for var in m.x.values()]
    first, second = [var for var, value in best if value == 1][:2]
    result = solve(m, plugins=[LazyConstraints(lambda _s: [first + second <= 1]),
                               UserHeuristic(lambda _lp: best)])
    assert first.value + second.value <= 1 + 1e-6
    m.extra = pyo.Constraint(expr=first + second <= 1)
    assert result.objective == pytest.approx(solve(m, solver="highs").objective)


def _two_objectives() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 1)
    m.a = pyo.Objective(expr=m.x[0] + 2 * m.x[1])
    m.b = pyo.Objective(expr=-m.x[1] - m.x[2])
    m.b.deactivate()
    return m


@pytest.mark.parametrize("options", [{"max_points": np.int64(5)}, {"step": np.int64(1)},
                                     {"step": np.float32(1.0)}])
def test_a_pareto_front_takes_numpy_numbers(options):
    # before: "max_points must be a whole number >= 1, got np.int64(5)" (as k_best's k is)
    m = _two_objectives()
    front = pareto_front(m, m.a, m.b, **options)
    assert front.complete
    assert [p.values for p in front.points] == [(0.0, -1.0), (2.0, -2.0)]


@pytest.mark.parametrize("options", [{"abs_tol": np.float32(1e-6)}, {"rel_tol": np.int64(0)}])
def test_lexicographic_takes_numpy_tolerances(options):
    m = _two_objectives()
    assert lexicographic(m, [m.a, m.b], **options).values == [0.0, -1.0]


def test_a_solution_pool_takes_a_numpy_size():
    m = mknapsack(12, seed=3)
    pool = SolutionPool(np.int64(3))
    solve(m, plugins=[pool])
    assert 1 <= len(pool.solutions) <= 3 and pool.size == 3


def test_a_priority_past_scips_int_range_is_named_as_such():
    # before: "must be a whole number, got 1099511627776", which it is
    m = mknapsack(8, seed=3)
    m.priority = pyo.Suffix(direction=pyo.Suffix.EXPORT, datatype=pyo.Suffix.INT)
    m.priority[m.x] = 2**40
    with pytest.raises(InputError, match="int range"):
        solve(m)


def test_a_solution_pool_larger_than_scips_int_range_still_solves():
    # before: OverflowError from PySCIPOpt setting limits/maxsol
    m = mknapsack(10, seed=1)
    pool = SolutionPool(2**40)
    result = solve(m, plugins=[pool])
    assert result.status is Status.OPTIMAL
    assert pool.solutions and pool.solutions[0].objective == pytest.approx(result.objective)
