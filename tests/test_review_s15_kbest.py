"""Review (s15) of `k_best` and `SolutionPool`: cases found by fuzzing both against brute
force over every binary assignment, and the bugs that fuzzing found."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import SolutionPool, Status, solve
from coplug.plugins.best_solutions import k_best

TOL = 1e-6


def _feasible(m: pyo.Block) -> bool:
    """Whether the values loaded in `m` meet its active rows, bounds and integrality."""
    rows = all((c.lower is None or pyo.value(c.body) >= pyo.value(c.lower) - TOL)
               and (c.upper is None or pyo.value(c.body) <= pyo.value(c.upper) + TOL)
               for c in m.component_data_objects(pyo.Constraint, active=True))
    return rows and all((v.lb is None or v.value >= v.lb - TOL)
                        and (v.ub is None or v.value <= v.ub + TOL)
                        and (not v.is_integer() or v.value == round(v.value))
                        for v in m.component_data_objects(pyo.Var) if v.value is not None)


def _twins_of_a_continuous_optimum() -> pyo.ConcreteModel:
    """A MIP where HiGHS meets its optimum twice, the two copies 4e-7 apart (found by
    fuzzing: the callback's point and the one `solve` loads)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([(0, "b"), (1, "a"), (2, "b"), (3, "a"), (4, "b")], domain=pyo.Binary)
    x = list(m.x.values())
    m.y0 = pyo.Var(bounds=(0, None))
    m.y1 = pyo.Var(bounds=(0, 1))
    m.y2 = pyo.Var(bounds=(None, 4))
    m.cons = pyo.ConstraintList()
    m.cons.add(4 * x[0] + 3 * x[1] - 4 * x[2] + 4 * x[4] - 2 * m.y2 == 1)
    m.cons.add(pyo.inequality(-4, -x[1] + 2 * x[4] - 3 * m.y1, 4))
    m.cons.add(pyo.inequality(-2, 0.6 * x[1] - 3.67 * x[3] + 4.16 * x[4] - 1.23 * m.y0
                              - 1.52 * m.y1 - 2.58 * m.y2, 2))
    for y in (m.y0, m.y1, m.y2):
        m.cons.add(y <= x[0] + x[1] + 5)
        m.cons.add(-5 - x[2] - x[3] <= y)
    m.o = pyo.Objective(expr=-3.805 * x[0] - 2.614 * x[1] + 1.662 * x[2] + 4.059 * x[3]
                        + 2.557 * x[4] - 3.53 * m.y0 - 3.405 * m.y1 - 3.53 * m.y2 + 1)
    return m


def test_a_pool_holds_no_two_copies_of_one_point():
    m = _twins_of_a_continuous_optimum()
    pool = SolutionPool(4)
    result = solve(m, solver="highs", plugins=[pool])
    assert result.status is Status.OPTIMAL
    values = np.array([s.values for s in pool.solutions])
    for a, b in itertools.combinations(range(len(values)), 2):
        assert np.abs(values[a] - values[b]).max() > 1e-6, (a, b)


def _block_over_outer_variables() -> pyo.ConcreteModel:
    """A sub-block whose rows and objective use variables of the block above it."""
    top = pyo.ConcreteModel()
    top.z = pyo.Var(range(3), domain=pyo.Binary)
    top.b = pyo.Block()
    top.b.x = pyo.Var(range(4), domain=pyo.Binary)
    top.b.c = pyo.Constraint(expr=sum(top.b.x.values()) + sum(top.z.values()) >= 3)
    top.b.o = pyo.Objective(expr=sum((i + 1) * top.b.x[i] for i in range(4))
                            + sum(2.5 * top.z[i] for i in range(3)))
    return top


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_pooled_solution_of_a_sub_block_holds_the_outer_variables_too(solver):
    top = _block_over_outer_variables()
    pool = SolutionPool(5)
    result = solve(top.b, solver=solver, plugins=[pool])
    assert result.objective == pytest.approx(5.5)
    assert pool.solutions
    for solution in pool.solutions:
        for var in top.component_data_objects(pyo.Var):
            var.set_value(None)
        solution.load()
        assert all(v.value is not None for v in top.component_data_objects(pyo.Var))
        assert _feasible(top)
        assert solution.objective == pytest.approx(pyo.value(top.b.o))
        assert solution[top.z[0]] == top.z[0].value


def _assorted(sense: int) -> tuple[pyo.ConcreteModel, pyo.Block]:
    """A MIP on a sub-block with what fuzzing varied: tuple-indexed binaries, a fixed
    variable, a mutable Param side, a free and a negative-bounded continuous variable, <=,
    >=, == and ranged rows with body constants, a named Expression objective with a
    constant and fractional coefficients."""
    top = pyo.ConcreteModel()
    top.b = m = pyo.Block()
    m.x = pyo.Var([(i, "ab"[i % 2]) for i in range(5)], domain=pyo.Binary)
    x = list(m.x.values())
    m.y = pyo.Var()
    m.w = pyo.Var(bounds=(-4, 2))
    m.f = pyo.Var(initialize=1.5)
    m.f.fix()
    m.p = pyo.Param(mutable=True, initialize=3)
    m.rows = pyo.ConstraintList()
    m.rows.add(x[0] + 2 * x[1] + x[2] + m.f <= m.p + 1.5)
    m.rows.add(x[2] + x[3] + x[4] - 1 >= 0)
    m.rows.add(m.y - 2 * x[0] + m.w + 0.5 == x[3] + m.f)
    m.rows.add(pyo.inequality(-3, m.y - 3 * x[4] + 2, 4))
    m.rows.add(m.w >= -1 - 2 * x[1])
    m.e = pyo.Expression(expr=1.25 * x[0] - 0.7 * x[1] + 2 * x[2] - 1.1 * x[3] + 0.4 * x[4]
                         + 0.3 * m.y - 0.9 * m.w + m.f + 2.5)
    m.o = pyo.Objective(expr=m.e, sense=sense)
    return top, m


def _brute_force(block: pyo.Block, binaries: list) -> list[float]:
    """Every feasible assignment's best objective (HiGHS on the LP left), best first."""
    values = []
    for point in itertools.product((0, 1), repeat=len(binaries)):
        for var, value in zip(binaries, point, strict=True):
            var.fix(value)
        result = solve(block, solver="highs")
        if result.status is Status.OPTIMAL:
            values.append(result.objective)
    for var in binaries:
        var.unfix()
    maximize = next(block.component_data_objects(pyo.Objective)).sense == pyo.maximize
    return sorted(values, reverse=maximize)


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
def test_the_k_best_of_an_assorted_sub_block_match_brute_force(solver, sense):
    top, m = _assorted(sense)
    binaries = list(m.x.values())
    truth = _brute_force(m, binaries)
    assert len(truth) > 6
    found = k_best(m, 6, solver=solver)
    assert found.proven
    assert [s.objective for s in found.solutions] == pytest.approx(truth[:6], abs=1e-6)
    assignments = set()
    for solution in found.solutions:
        solution.load()
        assert _feasible(top)
        assert solution.objective == pytest.approx(pyo.value(m.o), abs=1e-6)
        assignments.add(tuple(round(v.value) for v in binaries))
    assert len(assignments) == 6


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_integer_variable_bounded_within_0_1_counts_as_binary(solver):
    # refused before as "a general integer (bounds (0, 1))"
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, 1))
    m.z = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(None, 1))
    m.c = pyo.Constraint(expr=sum(m.x.values()) + m.z >= 1)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 4 * m.x[2] + 8 * m.z)
    found = k_best(m, 20, solver=solver)
    assert found.proven
    assert [s.objective for s in found.solutions] == list(range(1, 16))


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("objective", ["constant", "fixed_only", "zero_coefficient"])
def test_an_objective_without_variable_terms_ties_every_assignment(solver, objective):
    # the cutoff row `0 <= kth - constant` was the bool True: an InputError from lazy.py
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.f = pyo.Var(initialize=2.0)
    m.f.fix()
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 2)
    m.o = pyo.Objective(expr={"constant": 5.0, "fixed_only": 3 * m.f - 1,
                              "zero_coefficient": 0 * m.x[0] + 5}[objective],
                        sense=pyo.maximize)
    found = k_best(m, 3, solver=solver)
    assert found.proven and [s.objective for s in found.solutions] == [5.0, 5.0, 5.0]
    points = {tuple(s[m.x[j]] for j in range(4)) for s in found.solutions}
    assert len(points) == 3 and all(sum(p) >= 2 for p in points)
    assert found.result.plugin_stats["k_best"]["cuts_added"] <= 4
