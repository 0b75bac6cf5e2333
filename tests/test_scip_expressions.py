"""Pyomo expressions Pyomo's SCIP interface refused or broke on: abs(), an Objective used as
a term (the epsilon-constraint pattern); each against HiGHS or a closed form. Unit literals
are tested in test_pyomo_zoo.py."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve


def test_abs_in_a_constraint_and_the_objective() -> None:
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(-3, 3))
    m.a = pyo.Constraint(expr=abs(m.y - 1) <= 2.5)  # y in [-1.5, 3]
    m.o = pyo.Objective(expr=m.y)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(-1.5) and m.y.value == pytest.approx(-1.5)
    m.o.set_value(abs(m.y + 2) + 0.5 * m.y)  # min over [-1.5, 3]: at -1.5, 0.5 - 0.75
    assert solve(m, solver="scip").objective == pytest.approx(-0.25, abs=1e-6)


def test_abs_of_a_constant_part() -> None:
    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=-4.0, mutable=True)
    m.x = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint(expr=m.x >= abs(m.p))
    m.o = pyo.Objective(expr=m.x)
    assert solve(m, solver="scip").objective == pytest.approx(4.0)


def _epsilon_model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var(bounds=(0, 10))
    m.o1 = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.maximize)
    m.o2 = pyo.Objective(expr=m.x - m.y)
    m.o2.deactivate()
    m.eps = pyo.Constraint(expr=m.o2 <= 3)  # the second objective as a constraint
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_objective_used_as_a_term(solver: str) -> None:
    m = _epsilon_model()
    result = solve(m, solver=solver)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(30.0)
    assert m.x.value - m.y.value <= 3 + 1e-6


@pytest.mark.parametrize("make, detail", [
    (lambda m: pyo.Expr_if(IF=m.x >= 0, THEN=m.x, ELSE=-m.x), "Expr_ifExpression has no SCIP"),
    (lambda m: pyo.atan(m.x), "the function atan has no SCIP form"),
])
def test_a_part_scip_cannot_take_is_named(make, detail: str) -> None:
    from coplug.plugins import UnsupportedModelError

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-2, 2))
    m.y = pyo.Var(bounds=(-5, 5))
    m.b = pyo.Block()
    m.b.c = pyo.Constraint(expr=m.y >= make(m))
    m.o = pyo.Objective(expr=m.y)
    expected = f"^SCIP cannot take constraint 'b.c': {detail}"
    with pytest.raises(UnsupportedModelError, match=expected):
        solve(m, solver="scip")
