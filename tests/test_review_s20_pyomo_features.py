"""Review s20: Pyomo modeling features a user writes, through `solve` with SCIP and HiGHS.

Each either solves correctly or is refused by a coplug error naming the part at fault:
`Constraint.Feasible`/`Infeasible` from a rule (SCIP refused them), `x ** y` with a base
that may reach 0 (a bare float() TypeError), an `Expression()` left without a value and an
AbstractModel's Var used in its instance (raw Pyomo AttributeError/RuntimeError), and a
pyomo.kernel block ("needs a Block, got block").
"""

from __future__ import annotations

import pyomo.environ as pyo
import pyomo.kernel as pmo
import pytest

from coplug.plugins import Status, solve
from coplug.plugins.errors import InputError, UnsupportedModelError

SOLVERS = ("scip", "highs")


def _trivial_model(kind: str) -> pyo.ConcreteModel:
    """min x over [0, 10] with x >= 1 and a rule returning Constraint.<kind> for c[1]."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint([1, 2], rule=lambda m, i: getattr(pyo.Constraint, kind)
                         if i == 1 else m.x >= 1)
    m.o = pyo.Objective(expr=m.x)
    return m


def test_constraint_feasible_and_infeasible_from_a_rule_in_scip() -> None:
    for kind in ("Feasible", "Infeasible"):  # HiGHS, which took both, is the reference
        reference = solve(_trivial_model(kind), solver="highs")
        m = _trivial_model(kind)
        result = solve(m, solver="scip")
        assert result.status is reference.status
        assert result.objective == pytest.approx(reference.objective)
    assert result.status is Status.INFEASIBLE
    assert reference.status is Status.INFEASIBLE
    m = _trivial_model("Feasible")
    assert solve(m, solver="scip").objective == pytest.approx(1.0)
    assert m.x.value == pytest.approx(1.0)


def test_constraint_feasible_beside_a_nonlinear_row_in_scip() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint(expr=pyo.Constraint.Feasible)
    m.c2 = pyo.Constraint(expr=m.x**2 >= 4)
    m.o = pyo.Objective(expr=m.x)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(2.0, abs=1e-5)


def _power_model(base_lower: float) -> pyo.ConcreteModel:
    """min x + y with x ** y >= 2, x in [base_lower, 3], y in [0, 2]."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(base_lower, 3))
    m.y = pyo.Var(bounds=(0, 2))
    m.c = pyo.Constraint(expr=m.x**m.y >= 2)
    m.o = pyo.Objective(expr=m.x + m.y)
    return m


def test_variable_power_with_a_base_reaching_zero_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedModelError, match=r"constraint 'c': x\*\*y raises to a "
                                                    r"variable power.*lower bound above 0"):
        solve(_power_model(0.0), solver="scip")
    m = _power_model(0.5)  # a positive base: SCIP takes exp(y * log(x))
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(2.97670667, abs=1e-5)  # grid search over x
    assert m.x.value**m.y.value == pytest.approx(2.0, abs=1e-5)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("where", ["constraint", "objective"])
def test_expression_without_a_value_is_named(solver: str, where: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.e = pyo.Expression()
    if where == "constraint":
        m.c = pyo.Constraint(expr=m.e + m.x >= 1)
        m.o = pyo.Objective(expr=m.x)
        name = "constraint 'c'"
    else:
        m.c = pyo.Constraint(expr=m.x >= 1)
        m.o = pyo.Objective(expr=m.x + m.e)
        name = "objective 'o'"
    with pytest.raises(InputError, match=f"{name}: the Expression 'e' in it has no value"):
        solve(m, solver=solver)


@pytest.mark.parametrize("solver", SOLVERS)
def test_abstract_models_var_used_in_its_instance_is_named(solver: str) -> None:
    abstract = pyo.AbstractModel()
    abstract.x = pyo.Var(bounds=(0, 4))
    m = abstract.create_instance()
    m.c = pyo.Constraint(expr=abstract.x >= 1)  # the abstract Var, not m.x
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match="constraint 'c': it uses 'x', a component that "
                                         "was never constructed"):
        solve(m, solver=solver)


@pytest.mark.parametrize("solver", SOLVERS)
def test_pyomo_kernel_block_is_refused_as_such(solver: str) -> None:
    m = pmo.block()
    m.x = pmo.variable(lb=0, ub=3)
    m.c = pmo.constraint(m.x >= 1)
    m.o = pmo.objective(m.x)
    with pytest.raises(InputError, match="not pyomo.kernel ones"):
        solve(m, solver=solver)
