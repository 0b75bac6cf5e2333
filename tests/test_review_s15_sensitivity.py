"""Review (s15) of `coplug.plugins.sensitivity`: cases a fuzz against re-solves found."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, sensitivity


def _sub_block_with_outer(y: pyo.Var) -> pyo.Block:
    """A sub-block LP whose row and objective use the variable `y` declared on its parent."""
    m = y.parent_block()
    m.b = pyo.Block()
    m.b.x = pyo.Var(bounds=(0, 4))
    m.b.row = pyo.Constraint(expr=m.b.x + y <= 5)
    m.b.obj = pyo.Objective(expr=m.b.x + 2 * y, sense=pyo.maximize)
    return m.b


def test_outer_variable_bound_beyond_infinity_is_refused() -> None:
    """A lower bound of 1e25 on a variable outside the ranged block was read as no bound,
    and a point violating it (y = 1) was returned as the optimum."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(1e25, None))
    with pytest.raises(InputError, match=r"variable 'y': its lower bound is 1e\+25"):
        sensitivity(_sub_block_with_outer(m.y))


def test_outer_variable_nan_bound_is_refused() -> None:
    """A NaN bound on a variable outside the ranged block raised Pyomo's ValueError from
    deep inside the LP reader."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param(mutable=True, initialize=float("nan"), within=pyo.Any)
    m.y = pyo.Var(bounds=(0, m.p))
    with pytest.raises(InputError, match=r"variable 'y'.*upper bound"):
        sensitivity(_sub_block_with_outer(m.y))


def test_outer_variables_are_ranged() -> None:
    """A plain variable of the parent used in the sub-block is ranged like its own."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 3))
    b = _sub_block_with_outer(m.y)
    found = sensitivity(b)
    assert (found.objective, b.x.value, m.y.value) == pytest.approx((8.0, 2.0, 3.0))
    assert found.side[m.y] == "upper" and found.reduced_cost[m.y] == pytest.approx(1.0)
