"""Fixes from the tenth session's review of `solve`: ranged constraints whose sides are
Params or fixed variables or whose body has no variable, Param and fixed-variable exponents
on SCIP, data that cannot be evaluated, and variable domains no solver can take."""

from __future__ import annotations

import logging

import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.errors import InputError, UnsupportedModelError


@pytest.mark.parametrize(("value", "status"), [(3, "optimal"), (7, "infeasible")])
def test_a_ranged_constraint_without_variables_is_met_or_not(value: int, status: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.p = pyo.Param(initialize=value, mutable=True)
    m.c = pyo.Constraint(expr=pyo.inequality(0, m.p, 5))
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    scip, highs = solve(m.clone()), solve(m.clone(), solver="highs")
    assert scip.status.value == highs.status.value == status
    if status == "optimal":
        assert scip.objective == highs.objective == 10


@pytest.mark.parametrize("side", ["fixed", "param"])
def test_ranged_sides_may_be_fixed_variables_or_params(side: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    if side == "fixed":
        m.lo = pyo.Var()
        m.lo.fix(2)
    else:
        m.lo = pyo.Param(initialize=2, mutable=True)
    m.c = pyo.Constraint(expr=pyo.inequality(m.lo, m.x + 1, 5))  # 1 <= x <= 4
    m.o = pyo.Objective(expr=m.x)
    assert solve(m).objective == pytest.approx(1.0)
    m.o.sense = pyo.maximize
    assert solve(m).objective == pytest.approx(4.0)


@pytest.mark.parametrize("exponent", ["param", "fixed"])
def test_param_and_fixed_exponents_on_scip(exponent: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.p = pyo.Param(mutable=True, initialize=2)
    m.e = pyo.Var()
    m.e.fix(2)
    m.c = pyo.Constraint(expr=m.x ** (m.p if exponent == "param" else m.e) <= 4)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    assert solve(m).objective == pytest.approx(2.0, abs=1e-6)
    if exponent == "param":  # a fresh SCIP model per solve: the new value is used
        m.p = 3
        assert solve(m).objective == pytest.approx(4 ** (1 / 3), abs=1e-6)


def _uninitialised() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.p = pyo.Param(mutable=True)
    m.c = pyo.Constraint(expr=m.x <= m.p)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m


def _divided_by_zero() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var()
    m.y.fix(0)
    m.c = pyo.Constraint(expr=m.x / m.y <= 1)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m


def _sqrt_of_negative() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.p = pyo.Param(mutable=True, initialize=-1)
    m.o = pyo.Objective(expr=m.x + pyo.sqrt(m.p))
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize(("build", "where"), [
    (_uninitialised, "constraint 'c'"), (_divided_by_zero, "constraint 'c'"),
    (_sqrt_of_negative, "objective 'o'"),
])
def test_data_that_cannot_be_evaluated_is_named(build, where: str, solver: str) -> None:
    logging.getLogger("pyomo").setLevel(logging.CRITICAL)
    with pytest.raises(InputError, match=f"{where}: cannot evaluate its data"):
        solve(build(), solver=solver)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_domain_offset_from_the_integers_is_refused(solver: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.RangeSet(0.5, 3.5, 1))
    m.c = pyo.Constraint(expr=m.x <= 3)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    with pytest.raises(UnsupportedModelError, match="variable 'x': its domain"):
        solve(m, solver=solver)


def test_boolean_domains_are_fine() -> None:
    m = pyo.ConcreteModel()
    m.b = pyo.Var(domain=pyo.Boolean)
    m.n = pyo.Var(domain=pyo.NonPositiveIntegers, bounds=(-3, 0))
    m.c = pyo.Constraint(expr=m.b - m.n <= 1.5)
    m.o = pyo.Objective(expr=m.b, sense=pyo.maximize)
    assert solve(m).objective == solve(m, solver="highs").objective == 1
