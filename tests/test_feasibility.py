"""`infeasibilities`: each miss of a loaded point named with its amount, none for a point
that meets the model."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, solve
from coplug.plugins.feasibility import infeasibilities


def _model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, 4))
    m.y = pyo.Var(bounds=(-1, 2))
    m.cap = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] + m.y <= 6)
    m.eq = pyo.Constraint(expr=m.x[2] - m.y == 1)
    m.band = pyo.Constraint(expr=pyo.inequality(1, m.x[0] + m.x[1], 5))
    m.o = pyo.Objective(expr=m.x[0] + m.x[1] + m.x[2] + m.y, sense=pyo.maximize)
    return m


def test_a_solved_point_meets_the_model():
    m = _model()
    solve(m)
    assert infeasibilities(m) == {}


def test_each_miss_is_named_with_its_amount():
    m = _model()
    for var, value in ((m.x[0], 4), (m.x[1], 2), (m.x[2], 0.5), (m.y, 2.25)):
        var.set_value(value, skip_validation=True)
    missed = infeasibilities(m)
    assert missed == pytest.approx({"cap": 4 + 4 + 2.25 - 6, "eq": 2.75, "band": 1.0,
                                    "x[2]": 0.5, "y": 0.25})


def test_the_tolerance_is_relative_to_the_side():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=m.x <= 1e6)
    m.x.set_value(1e6 + 0.5)
    assert infeasibilities(m) == {}
    m.x.set_value(1e6 + 2)
    assert infeasibilities(m) == {"c": pytest.approx(2)}
    assert infeasibilities(m, tol=0) == {"c": pytest.approx(2)}
    m.x.set_value(1e6 + 0.5)
    assert infeasibilities(m, tol=0) == {"c": pytest.approx(0.5)}


def test_a_missing_or_nan_value_misses_by_inf():
    m = _model()
    solve(m)
    m.y.set_value(None)
    assert infeasibilities(m) == {"cap": math.inf, "eq": math.inf}
    m.y.set_value(float("nan"), skip_validation=True)
    assert infeasibilities(m)["y"] == math.inf


def test_a_sub_block_is_checked_alone():
    m = _model()
    m.b = pyo.Block()
    m.b.z = pyo.Var(bounds=(0, 1), initialize=0.5)
    m.b.c = pyo.Constraint(expr=m.b.z >= 0.25)
    solve(m.b)
    m.x[0].set_value(9, skip_validation=True)
    assert infeasibilities(m.b) == {}
    assert "x[0]" in infeasibilities(m)


@pytest.mark.parametrize("tol", [-1, "1e-6", True, float("nan")])
def test_a_bad_tolerance_is_refused(tol):
    with pytest.raises(InputError, match="tol"):
        infeasibilities(_model(), tol=tol)

