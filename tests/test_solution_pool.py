"""`SolutionPool`: every kept solution is checked against the model's own rows, bounds and
integrality, its objective against the Pyomo expression, and the first against the optimum
the other solver finds."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.tsp import is_tour, random_euclidean, subtour_separator, tsp_mip
from coplug.plugins import InputError, LazyConstraints, SolutionPool, Status, infeasibilities, solve


def _mixed_mip(seed: int, sense: int) -> pyo.ConcreteModel:
    """A random MIP with binaries, general integers and continuous variables, <=, >= and
    == rows, and a feasible all-zero-ish region (always feasible and bounded)."""
    rng = np.random.default_rng(seed)
    n_bin, n_int, n_cont, rows = 12, 4, 4, 6
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(n_bin), domain=pyo.Binary)
    m.z = pyo.Var(range(n_int), domain=pyo.Integers, bounds=(-3, 5))
    m.y = pyo.Var(range(n_cont), bounds=(0, 4))
    variables = list(m.b.values()) + list(m.z.values()) + list(m.y.values())
    weights = rng.integers(1, 9, size=(rows, len(variables))).astype(float)
    m.cap = pyo.Constraint(range(rows), rule=lambda m, i: sum(
        float(weights[i, k]) * v for k, v in enumerate(variables)) <= float(weights[i].sum() / 4))
    m.least = pyo.Constraint(expr=sum(m.b.values()) >= 2)
    m.tie = pyo.Constraint(expr=m.y[0] - 0.5 * m.z[0] == 0.5)
    costs = rng.normal(size=len(variables)).round(3)
    m.o = pyo.Objective(expr=sum(float(c) * v for c, v in zip(costs, variables, strict=True)),
                        sense=sense)
    return m


def _check_pool(m: pyo.ConcreteModel, pool: SolutionPool, result, size: int) -> None:
    """The pool's solutions: feasible, objectives true and ranked, distinct, the loaded one
    first."""
    solutions = pool.solutions
    variables = list(m.component_data_objects(pyo.Var))
    assert 1 <= len(solutions) <= size
    assert [solutions[0][v] for v in variables] == [v.value for v in variables]
    assert solutions[0].objective == pytest.approx(result.objective, rel=1e-9, abs=1e-9)
    objective = next(m.component_data_objects(pyo.Objective, active=True))
    loaded = [v.value for v in variables]
    points = set()
    try:
        for solution in solutions:
            solution.load()
            assert infeasibilities(m) == {}
            assert solution.objective == pytest.approx(pyo.value(objective), abs=1e-6)
            points.add(tuple(round(v.value, 6) for v in variables))
    finally:
        for var, value in zip(variables, loaded, strict=True):
            var.set_value(value, skip_validation=True)
    assert len(points) == len(solutions)
    sign = -1.0 if objective.sense == pyo.maximize else 1.0
    ranked = [sign * s.objective for s in solutions]
    assert ranked == sorted(ranked)
    assert pool.statistics()["kept"] == len(solutions)


@pytest.mark.parametrize("solver,other", [("scip", "highs"), ("highs", "scip")])
@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
@pytest.mark.parametrize("seed", range(4))
def test_pool_solutions_are_feasible_distinct_ranked_and_start_at_the_optimum(
        solver, other, sense, seed):
    m = _mixed_mip(seed, sense)
    truth = solve(_mixed_mip(seed, sense), solver=other)
    pool = SolutionPool(6)
    result = solve(m, solver=solver, plugins=[pool])
    assert result.status is Status.OPTIMAL and truth.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, abs=1e-5)
    _check_pool(m, pool, result, 6)
    assert result.plugin_stats["solution_pool"]["kept"] == len(pool.solutions)


def test_scip_keeps_near_optimal_alternatives_not_only_the_incumbents():
    # SCIP stores the non-improving solutions its heuristics meet: on a multi-dimensional
    # knapsack the pool fills up with ranked, feasible packings
    rng = np.random.default_rng(1)
    n, rows = 30, 8
    weights, values = rng.integers(5, 30, (rows, n)), rng.integers(1, 50, n)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.cap = pyo.Constraint(range(rows), rule=lambda m, i: sum(
        int(weights[i, j]) * m.x[j] for j in range(n)) <= int(weights[i].sum() // 3))
    m.o = pyo.Objective(expr=sum(int(values[j]) * m.x[j] for j in range(n)), sense=pyo.maximize)
    pool = SolutionPool(10)
    result = solve(m, plugins=[pool])
    _check_pool(m, pool, result, 10)
    assert len(pool.solutions) == 10
    assert pool.statistics()["offered"] > 10
    assert pool.solutions[-1].objective < result.objective


def test_every_pooled_tour_meets_the_lazy_subtour_rows():
    # SCIP keeps only solutions every constraint handler accepts, the lazy one included
    m = tsp_mip(random_euclidean(9, seed=3).dist, subtour="none")
    pool = SolutionPool(5)
    solve(m, plugins=[LazyConstraints(subtour_separator(m)), pool])
    assert pool.solutions
    for solution in pool.solutions:
        succ = {i: j for (i, j) in m.A if solution[m.x[i, j]] > 0.5}
        tour, city = [0], succ[0]
        while city != 0 and len(tour) <= 9:
            tour.append(city)
            city = succ[city]
        assert is_tour(tour, 9)


def test_a_nonlinear_objective_is_pooled_at_its_value_not_scips_epigraph_bound():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=(-4, 4))
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 2)
    m.o = pyo.Objective(expr=sum((m.x[i] - 0.3 * i) ** 2 + pyo.exp(0.1 * m.x[i])
                                 for i in range(4)))
    pool = SolutionPool(5)
    result = solve(m, plugins=[pool])
    for solution in pool.solutions:
        true = sum((solution[m.x[i]] - 0.3 * i) ** 2 + math.exp(0.1 * solution[m.x[i]])
                   for i in range(4))
        assert solution.objective == pytest.approx(true)
    assert pool.solutions[0].objective == pytest.approx(result.objective)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_lp_pools_its_optimum_first(solver):
    # HiGHS calls no MIP callback for an LP: its pool is the loaded optimum alone
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 5))
    m.c = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] + m.x[2] <= 6)
    m.o = pyo.Objective(expr=3 * m.x[0] + 2 * m.x[1] + m.x[2], sense=pyo.maximize)
    pool = SolutionPool(3)
    result = solve(m, solver=solver, plugins=[pool])
    _check_pool(m, pool, result, 3)
    assert pool.solutions[0].objective == pytest.approx(16.0)
    assert solver == "scip" or len(pool.solutions) == 1


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_no_solution_leaves_the_pool_empty_and_a_new_solve_starts_afresh(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 2)
    m.o = pyo.Objective(expr=sum(m.x.values()))
    pool = SolutionPool(4)
    solve(m, solver=solver, plugins=[pool])
    assert pool.solutions
    m.c2 = pyo.Constraint(expr=sum(m.x.values()) <= 1)
    result = solve(m, solver=solver, plugins=[pool])
    assert result.status is Status.INFEASIBLE
    assert pool.solutions == [] and pool.statistics()["kept"] == 0


def test_unbounded_leaves_the_pool_empty():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, None))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x - m.y <= 3)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    for solver in ("scip", "highs"):
        pool = SolutionPool(3)
        result = solve(m, solver=solver, plugins=[pool])
        assert result.status is Status.UNBOUNDED
        assert pool.solutions == []


def test_reading_a_solution_by_variable():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.f = pyo.Var(initialize=2.5)
    m.f.fix()
    m.c = pyo.Constraint(expr=sum(m.x.values()) + m.f >= 3.5)
    m.o = pyo.Objective(expr=sum((i + 1) * m.x[i] for i in range(3)))
    other = pyo.ConcreteModel()
    other.v = pyo.Var()
    pool = SolutionPool(2)
    solve(m, plugins=[pool])
    best = pool.solutions[0]
    assert best[m.x[0]] == 1.0 and best[m.x[1]] == 0.0 and best[m.f] == 2.5
    with pytest.raises(InputError, match="other.v|'v'"):
        best[other.v]


@pytest.mark.parametrize("size", [0, -2, 2.5, True, "5"])
def test_a_bad_size_is_refused(size):
    with pytest.raises(InputError, match="size"):
        SolutionPool(size)


def test_highs_refuses_a_pool_mixed_with_lazy_rounds():
    m = tsp_mip(random_euclidean(5, seed=1).dist, subtour="none")
    with pytest.raises(InputError):
        solve(m, solver="highs", plugins=[LazyConstraints(subtour_separator(m)),
                                          SolutionPool(3)])


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_points_missing_a_large_all_integer_row_are_left_out(solver):
    # HiGHS's first run calls a point 2e-7 off whole numbers feasible (objective 9, the
    # optimum is 17): `solve` discards it, and so must the pool
    coefs, side = [15000000, 10000000, -4999999, -5000001], 45000000
    boxes, cost = [(1, 3), (-1, 0), (-1, 1), (-2, -1)], [5, -2, -1, 1]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=lambda _, i: boxes[i])
    m.row = pyo.Constraint(expr=sum(c * m.x[i] for i, c in enumerate(coefs)) == side)
    m.o = pyo.Objective(expr=sum(c * m.x[i] for i, c in enumerate(cost)))
    pool = SolutionPool(10)
    result = solve(m, solver=solver, plugins=[pool])
    assert result.objective == pytest.approx(17)
    assert pool.solutions
    for solution in pool.solutions:
        point = [round(solution[m.x[i]]) for i in range(4)]
        assert sum(c * v for c, v in zip(coefs, point, strict=True)) == side
        assert solution.objective >= 17 - 1e-6


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_no_pooled_solution_beats_the_proven_k_best(solver):
    # Pyomo's own k-best enumeration (no-good cuts, one solve each, through coplug's
    # SolverFactory name) is the truth: the pool's i-th objective cannot beat the i-th best
    from pyomo.contrib.alternative_solutions import enumerate_binary_solutions

    from coplug.formulations.mip_families import mknapsack

    k = 6
    truth = enumerate_binary_solutions(mknapsack(14, seed=4), num_solutions=k,
                                       solver=f"coplug_{solver}")
    best = sorted((s.objective_value for s in truth), reverse=True)
    m = mknapsack(14, seed=4)
    pool = SolutionPool(k)
    result = solve(m, solver=solver, plugins=[pool])
    _check_pool(m, pool, result, k)
    assert len(best) == k and pool.solutions[0].objective == pytest.approx(best[0])
    for found, bound in zip(pool.solutions, best, strict=False):
        assert found.objective <= bound + 1e-6
