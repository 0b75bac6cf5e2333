"""Session 35 review: behaviour found by metamorphic and estimator-convention probes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier
from coplug.plugins.errors import InputError
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


@pytest.mark.parametrize("make, bad", [
    (lambda: PMVBPredictor("logreg"), {"kind": "nope"}),
    (lambda: PMVBPredictor("logreg"), {"random_state": -1}),
    (lambda: PMVBPredictor("logreg"), {"calibration_share": 2.0}),
    (lambda: TorchMLPClassifier(epochs=5), {"epochs": 0}),
])
def test_a_refit_refused_for_its_settings_leaves_the_estimator_unfitted(make, bad) -> None:
    """A refit with a bad setting raised but kept the old model predicting beside the new
    settings (which `save` would then have recorded with it)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 4))
    y = (X[:, 0] > 0).astype(int)
    est = make().fit(X, y)
    est.set_params(**bad)
    with pytest.raises(InputError):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict_proba(X[:2])


@pytest.mark.parametrize("call", ["fit", "predict_proba"])
def test_one_dimensional_features_are_named_without_the_array(call: str) -> None:
    """numpy prints a long 1-D array over many lines; only the first was dropped, so the
    message carried some 900 of the values."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 12))
    est = PMVBPredictor("logreg").fit(X, (X[:, 0] > 0).astype(int))
    flat = rng.standard_normal(900)
    with pytest.raises(InputError) as exc:
        if call == "fit":
            PMVBPredictor("logreg").fit(flat, rng.integers(0, 2, 900))
        else:
            est.predict_proba(flat)
    assert "1D array" in str(exc.value) and "reshape" in str(exc.value)
    assert len(str(exc.value)) < 400 and "\n" not in str(exc.value)
