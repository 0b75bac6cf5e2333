"""Numbers no solver can take are refused before the solve, naming where they are: SCIP
loops on a NaN objective coefficient and both solvers call NaN-coefficient models optimal."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.errors import InputError

NAN, INF = float("nan"), float("inf")


def _model(kind: str) -> pyo.ConcreteModel:
    """max x on x in [0, 1] with one bad number in the place `kind` names."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    if kind == "constraint coefficient":
        m.c = pyo.Constraint(expr=NAN * m.x <= 0.5)
    elif kind == "mutable Param":
        m.p = pyo.Param(initialize=NAN, mutable=True, within=pyo.Any)
        m.c = pyo.Constraint(expr=m.p * m.x <= 0.5)
    elif kind == "objective coefficient":
        m.o.expr = NAN * m.x
    elif kind == "infinite coefficient":
        m.c = pyo.Constraint(expr=INF * m.x <= 0.5)
    elif kind == "right-hand side":
        m.c = pyo.Constraint(expr=m.x <= NAN)
    elif kind == "variable bound":
        m.y = pyo.Var(bounds=(0, NAN))
        m.o.expr = m.x + m.y
    elif kind == "huge coefficient":
        m.c = pyo.Constraint(expr=1e21 * m.x <= 0.5)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize(("kind", "message"), [
    ("constraint coefficient", "constraint 'c': the coefficient of 'x' is nan"),
    ("mutable Param", "constraint 'c': the coefficient of 'x' is nan"),
    ("objective coefficient", "objective 'o': the coefficient of 'x' is nan"),
    ("infinite coefficient", "constraint 'c': the coefficient of 'x' is inf"),
    ("right-hand side", "constraint 'c': its upper side is NaN"),
    ("variable bound", "variable 'y': .*non-finite upper bound"),
    ("huge coefficient", "read as infinity"),
])
def test_bad_numbers_are_named_before_the_solve(solver: str, kind: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        solve(_model(kind), solver=solver, time_limit=5)


def test_nan_inside_a_nonlinear_objective_is_named() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=pyo.exp(NAN * m.x) + m.x ** 3)
    with pytest.raises(InputError, match="objective 'o': a number in its nonlinear part is nan"):
        solve(m, solver="scip", time_limit=5)


def test_infinite_bounds_and_large_nonlinear_constants_still_solve() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-INF, INF))
    m.y = pyo.Var(bounds=(0, 2))
    m.c = pyo.Constraint(expr=m.x >= pyo.exp(-1e30 * m.y) - 1)
    m.o = pyo.Objective(expr=m.x + m.y)
    result = solve(m, solver="scip", time_limit=30)
    assert result.optimal and math.isclose(result.objective, -1.0, abs_tol=1e-6)
    assert pyo.value(m.x) >= math.exp(-1e30 * pyo.value(m.y)) - 1 - 1e-6


def test_an_objective_below_the_tolerances_is_solved_with_a_warning() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1, 2], domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] + 2 * m.x[2] <= 3)
    m.o = pyo.Objective(expr=1e-9 * m.x[0] + 2e-9 * m.x[1] + 3e-9 * m.x[2], sense=pyo.maximize)
    with pytest.warns(UserWarning, match="objective 'o': its largest coefficient is 3e-09"):
        result = solve(m, solver="highs")
    assert result.has_solution
    assert sum(pyo.value(m.x[j]) * (1 + (j > 0)) for j in range(3)) <= 3 + 1e-6
