"""Review s20: every public entry point leaves the caller's Pyomo model as it found it (apart
from the values it loads and the Suffixes it documents filling), after success and after an
error. Real SCIP and HiGHS solves on small models."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import (
    LazyConstraints,
    Status,
    lexicographic,
    pareto_front,
    solve,
)


def _lp() -> pyo.ConcreteModel:
    """A small LP with two objectives (one inactive) and `dual`/`rc` import Suffixes."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.hours = pyo.Constraint(expr=3 * m.x + 2 * m.y <= 18)
    m.glass = pyo.Constraint(expr=2 * m.y + 1 <= 13)
    m.profit = pyo.Objective(expr=3 * m.x + 5 * m.y, sense=pyo.maximize)
    m.other = pyo.Objective(expr=m.x + m.y)
    m.other.deactivate()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def _knapsack() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum((j + 2) * m.x[j] for j in range(5)) <= 9)
    m.value = pyo.Objective(expr=sum((j + 3) * m.x[j] for j in range(5)), sense=pyo.maximize)
    return m


def _outside_rows(m: pyo.Block) -> list[object]:
    """Keys of m.dual that are no constraint of `m` (rows a helper added and removed)."""
    rows = {id(c) for c in m.component_data_objects(pyo.Constraint, descend_into=True)}
    return [k for k in m.dual if id(k) not in rows]


def _domain_bounded() -> pyo.ConcreteModel:
    """x in NonPositiveReals has no lower bound, so HiGHS lazy rounds box it; its upper bound
    is its domain's, not one of its own."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonPositiveReals)
    m.y = pyo.Var(bounds=(0, 4))
    m.c = pyo.Constraint(expr=m.y - m.x >= 1)
    m.o = pyo.Objective(expr=m.x + m.y)
    return m


def test_lazy_rounds_box_gives_a_domain_bounded_variable_its_own_bound_back():
    m = _domain_bounded()
    lazy = LazyConstraints(lambda s: [m.x >= -5] if s[m.x] < -5 - 1e-6 else [])
    result = solve(m, solver="highs", plugins=[lazy])
    assert result.status is Status.OPTIMAL and abs(result.objective + 5) < 1e-6
    assert type(m.x.upper) is int and m.x.upper == 0  # the domain's, no expression around it
    m.x.domain = pyo.Reals
    assert m.x.ub is None and m.x.lb is None  # nothing of the box or the domain stayed behind


def test_lazy_rounds_box_restored_after_keyboard_interrupt_in_separate():
    m = _domain_bounded()

    def separate(solution):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solve(m, solver="highs", plugins=[LazyConstraints(separate)])
    m.x.domain = pyo.Reals
    assert m.x.ub is None and m.x.lb is None


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_lexicographic_leaves_no_duals_of_its_removed_rows(solver):
    m = _lp()
    lex = lexicographic(m, [m.profit, m.other], solver=solver)
    assert lex.status is Status.OPTIMAL
    assert not _outside_rows(m)
    assert m.profit.active and not m.other.active
    assert [c.name for c in m.component_objects(pyo.Constraint)] == ["hours", "glass"]


def test_pareto_front_stopped_at_max_points_leaves_no_duals_of_its_removed_rows():
    m = _lp()
    front = pareto_front(m, m.other, m.profit, step=1.0, max_points=2)
    assert len(front.points) == 2 and not front.complete
    assert not _outside_rows(m)


def test_factory_without_loading_keeps_values_when_the_solve_raises():
    m = _knapsack()
    calls = []

    def separate(solution):  # a row in the first round, an error in the second
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("stop")
        return [m.x[j] <= 0 for j in range(5) if solution[m.x[j]] > 0.5]

    with pytest.raises(RuntimeError):
        pyo.SolverFactory("coplug_highs").solve(m, load_solutions=False,
                                                plugins=[LazyConstraints(separate)])
    assert [m.x[j].value for j in range(5)] == [None] * 5
