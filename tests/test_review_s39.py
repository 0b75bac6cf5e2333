"""Session 39's probe findings, each checked to fail with its fix undone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.lap import solve_lap


class _NormalisingPredictor:
    """Normalises the matrix it is handed in place (a plausible slip), duals all zero."""

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        c -= c.min(axis=1, keepdims=True)
        return np.zeros(c.shape[0])


class _ReadingPredictor:
    """Reads the matrix only: row minima as duals."""

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        return c.min(axis=1)


@pytest.mark.parametrize("maximize", [False, True])
def test_a_predictor_cannot_write_into_the_cost_matrix(maximize: bool) -> None:
    """It certified the altered costs (204 for 1205) and changed the caller's array."""
    c = generate("low_rank", 300, seed=0)
    original = c.copy()
    with pytest.raises(ValueError, match="read-only"):
        solve_lap(c, predictor=_NormalisingPredictor(), maximize=maximize)
    assert np.array_equal(c, original)
    solved = solve_lap(c, predictor=_ReadingPredictor(), maximize=maximize)
    assert solved.info["prediction"] == "used"
    rows, cols = linear_sum_assignment(original, maximize=maximize)
    assert solved.cost == pytest.approx(original[rows, cols].sum(), rel=1e-12)
    assert np.array_equal(c, original) and c.flags.writeable
