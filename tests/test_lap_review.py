"""Review fixes on the LAP path: exact Pyomo detection, sparse input rules, CLI check,
generator arguments and model messages, each checked against scipy or HiGHS."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.assignment import assignment_model
from coplug.plugins import Status, UnsupportedModelError, solve

C3 = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])


def _row0(coefs: tuple, rhs: float) -> pyo.ConcreteModel:
    """The 3x3 assignment model with row[0] replaced by sum_j coefs[j] x[0,j] == rhs."""
    model = assignment_model(C3)
    model.row[0].set_value(sum(a * model.x[0, j] for j, a in enumerate(coefs)) == rhs)
    return model


@pytest.mark.parametrize(
    ("coefs", "rhs"), [((1.0, 1.000009, 1.0), 1.0), ((1e-9, 5e-9, 1e-9), 1e-9)]
)
def test_nearly_equal_row_coefficients_are_refused(coefs: tuple, rhs: float) -> None:
    """x01 = 1 violates the row, so LAP (which would pick it, cost 5) must refuse; HiGHS on
    the row scaled to rhs 1 (its tolerances ignore a 4e-9 violation) avoids it (cost 6)."""
    with pytest.raises(UnsupportedModelError, match=r"row\[0\].*x\[0,1\]"):
        solve(_row0(coefs, rhs), solver="lap")
    scaled = _row0(tuple(a / rhs for a in coefs), 1.0)
    assert solve(scaled, solver="highs").objective == pytest.approx(6.0)


def test_scaled_row_with_equal_coefficients_is_still_an_assignment() -> None:
    model = _row0((1e-9, 1e-9, 1e-9), 1e-9)
    lap = solve(model, solver="lap")
    assert lap.status is Status.OPTIMAL
    assert lap.objective == pytest.approx(solve(model, solver="highs").objective)
