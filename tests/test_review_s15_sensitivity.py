"""Review (s15) of `coplug.plugins.ranging`: cases a fuzz against re-solves found."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, Range, sensitivity


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


def test_rows_of_fixed_variables_only() -> None:
    """Rows whose variables are all fixed leave HiGHS no nonzero, and the free row added for
    its simplex made the duals one longer than the rows: a numpy broadcast error."""
    m = pyo.ConcreteModel()
    m.f = pyo.Var()
    m.f.fix(2.0)
    m.x = pyo.Var(bounds=(0, 1))
    m.row = pyo.Constraint(expr=3 * m.f + 1 <= 10)
    m.obj = pyo.Objective(expr=m.x + m.f, sense=pyo.maximize)
    found = sensitivity(m)
    assert (found.objective, m.x.value) == (3.0, 1.0)
    assert (found.side[m.row], found.dual[m.row]) == ("upper", 0.0)
    assert found.rhs[m.row] == Range(7.0, math.inf, 3.0, 3.0)


def test_side_range_holds_the_side_as_written() -> None:
    """The body's constant taken off the side and added back to the range's end moved it by
    round-off: x - 5 <= 4.05 (active, its side blocked from below by x >= 9.05) was ranged
    from 4.050000000000001, which misses the side 4.05 itself."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(9.05, 19.05))
    m.row = pyo.Constraint(expr=m.x - 5 <= 4.05)
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    found = sensitivity(m)
    r = found.rhs[m.row]
    assert found.side[m.row] == "upper"
    assert r.low == 4.05 <= r.high
