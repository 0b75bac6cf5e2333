"""Session 35 review: behaviour found by metamorphic and estimator-convention probes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from coplug.plugins.lap import solve_lap


@pytest.mark.parametrize("as_sparse", [False, True])
@pytest.mark.parametrize("k", [-8, -1, 3, 8])
def test_rectangular_duals_shifted_by_a_constant_start_alike(k: int, as_sparse: bool) -> None:
    """A rectangular warm start is the same start shifted by a constant once padded: a
    dummy dual capped at 0 doubled the augmentations of duals shifted down, and uncentred
    duals shifted up past n max|c| fell back to a cold solve (5 of 150 at 8 max|c|)."""
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 30))
        c = rng.integers(-50, 50, size=(n, n + int(rng.integers(1, 30)))).astype(float)
        if as_sparse:
            c = sp.csr_matrix(np.where(rng.random(c.shape) < 0.5, c, 0.0))
            c.data += 100.0  # every stored entry nonzero; the pattern keeps an assignment
            c = c + sp.eye(*c.shape, format="csr") * 100.0
        cold = solve_lap(c)
        own = solve_lap(c, row_duals=cold.row_duals)
        shifted = solve_lap(c, row_duals=cold.row_duals + k * abs(c).max())
        assert shifted.cost == cold.cost
        assert not shifted.fallback, seed
        assert shifted.augmentations == own.augmentations, seed
