"""A quadratic objective scaled by a mutable Param reaches HiGHS at the Param's value (Pyomo's
interface refused it: "expressions of degree None"), and the model keeps its expression."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import LazyConstraints, Status, solve


def _model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-3, 3))
    m.y = pyo.Var(bounds=(-3, 3))
    m.p = pyo.Param(mutable=True, initialize=2.0)
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    m.o = pyo.Objective(expr=m.p * ((m.x - m.y) ** 2 + m.x * m.x) + m.x)
    return m


@pytest.mark.parametrize("p", [2.0, 5.0, 0.5])
def test_the_objective_is_solved_at_the_params_value(p):
    m = _model()
    m.p = p
    exact = solve(_model_at(p), solver="scip").objective
    result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(exact, abs=1e-5)
    assert str(m.o.expr) == "p*((x - y)**2 + x*x) + x"  # the model's own expression back
    assert pyo.value(m.o) == pytest.approx(result.objective, abs=1e-6)


def test_duals_and_lazy_rounds_take_it_too():
    m = _model()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(m, solver="highs", plugins=[LazyConstraints(lambda _s: [m.x <= 0.2])])
    assert result.status is Status.OPTIMAL and m.x.value == pytest.approx(0.2, abs=1e-6)
    assert result.extra["duals"]["loaded"] and result.extra["lazy_duals"]["lazy"][0] < 0


def _model_at(p: float) -> pyo.ConcreteModel:
    """The same model with the Param's value written in."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-3, 3))
    m.y = pyo.Var(bounds=(-3, 3))
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    m.o = pyo.Objective(expr=p * ((m.x - m.y) ** 2 + m.x * m.x) + m.x)
    return m
