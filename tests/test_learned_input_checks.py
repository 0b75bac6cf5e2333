"""Learned estimators and checkpoints refuse bad features and settings with a named InputError."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from coplug.learned.pmvb_features import FEATURE_NAMES
from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier
from coplug.learned.rowdualnet import N_FEATURES, RowDualNet, load
from coplug.plugins.errors import InputError


def _data(rng: np.random.Generator, width: int = len(FEATURE_NAMES),
          n: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """Random features of `width` columns and labels from the first column."""
    X = rng.normal(size=(n, width))
    return X, (X[:, 0] > 0).astype(int)


def test_torch_mlp_refuses_non_finite_features_and_bad_clip(rng: np.random.Generator) -> None:
    X, y = _data(rng, 4)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="training features hold nan at row 3, feature 2"):
        TorchMLPClassifier(epochs=2).fit(bad, y)
    model = TorchMLPClassifier(hidden=(4,), epochs=2).fit(X, y)
    bad[3, 2] = np.inf
    with pytest.raises(InputError, match="features hold inf at row 3, feature 2"):
        model.predict_proba(bad)
    for clip in (float("nan"), -1, 0, float("inf"), "5"):
        with pytest.raises(InputError, match="clip must be a finite number > 0"):
            TorchMLPClassifier(epochs=2, clip=clip).fit(X, y)


@pytest.mark.parametrize("kind", ["logreg", "gbt", "mlp"])
def test_pmvb_predict_proba_refuses_non_finite_features(kind: str,
                                                        rng: np.random.Generator) -> None:
    X, y = _data(rng)
    predictor = PMVBPredictor(kind=kind, calibration="none").fit(X, y)
    for value in (np.nan, np.inf, -np.inf):
        rows = X[:2].copy()
        rows[1, 4] = value
        with pytest.raises(InputError, match=rf"PMVB features hold -?{value} at row 1, "
                                             rf"feature 4 \(redcost_norm\)"):
            predictor.predict_proba(rows)


def test_rowdualnet_checkpoint_with_other_feature_count_is_refused_at_load(tmp_path) -> None:
    path = tmp_path / "five.pt"
    net = RowDualNet(n_features=5, hidden=8)
    torch.save({"state_dict": net.state_dict(), "n_features": 5, "hidden": 8}, path)
    with pytest.raises(InputError, match=rf"{path.name} expects 5 features per row, but "
                                         rf"row_features computes {N_FEATURES}"):
        load(path)


@pytest.mark.parametrize(("make", "name"), [
    (lambda: PMVBPredictor(random_state=-1), "random_state"),
    (lambda: PMVBPredictor(random_state="a"), "random_state"),
    (lambda: PMVBPredictor(kind="mlp", random_state=2**32), "random_state"),
    (lambda: TorchMLPClassifier(epochs=2, random_state=1.5), "random_state"),
    (lambda: TorchMLPClassifier(epochs=2, lr=-1), "lr"),
    (lambda: TorchMLPClassifier(epochs=2, lr=0), "lr"),
    (lambda: TorchMLPClassifier(epochs=2, weight_decay=-1), "weight_decay"),
    (lambda: TorchMLPClassifier(epochs=2, weight_decay=float("nan")), "weight_decay"),
])
def test_hyperparameters_are_checked_in_fit(make, name: str, rng: np.random.Generator) -> None:
    X, y = _data(rng)
    estimator = make()  # __init__ stores only (scikit-learn convention)
    with pytest.raises(InputError, match=rf"\b{name} must be"):
        estimator.fit(X, y)


def test_pmvb_fit_refuses_zero_columns_and_overflowing_features(
        rng: np.random.Generator) -> None:
    X, y = _data(rng)
    with pytest.raises(InputError, match=r"k >= 1.*\(80, 0\)"):
        PMVBPredictor().fit(X[:, :0], y)
    huge = X.copy()
    huge[5, 0] = 1e300
    for kind in ("logreg", "mlp"):
        with pytest.raises(InputError, match=r"hold 1e\+300 at row 5, feature 0 \(obj_norm\); "
                                             r"magnitudes above 1e\+150"):
            PMVBPredictor(kind=kind).fit(huge, y)


@pytest.mark.parametrize("kind", ["logreg", "gbt", "mlp"])
def test_random_state_none_draws_a_seed(kind: str, rng: np.random.Generator) -> None:
    X, y = _data(rng)
    predictor = PMVBPredictor(kind=kind, random_state=None).fit(X, y)
    probs = predictor.predict_proba(X)
    assert probs.shape == (80, 2) and np.isfinite(probs).all()
    assert ((probs >= 0) & (probs <= 1)).all()
    assert predictor.random_state is None  # fit leaves the parameter as given
    model = TorchMLPClassifier(hidden=(4,), epochs=2, random_state=None).fit(X, y)
    assert np.isfinite(model.predict_proba(X)).all()


def test_a_diverging_mlp_fit_is_an_error_not_nan_weights() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(InputError, match="diverged to non-finite weights"):
        TorchMLPClassifier(lr=1e30, epochs=5).fit(X, y)
    with pytest.raises(InputError, match="lr must fit in float32"):
        TorchMLPClassifier(lr=1e300, epochs=5).fit(X, y)
