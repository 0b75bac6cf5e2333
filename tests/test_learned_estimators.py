"""Estimator settings and input widths are checked in fit / predict with clear messages."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations.fair_graphs import fair_sbm
from coplug.learned.fair_spectral import FairSpectralClustering
from coplug.learned.pmvb_features import FEATURE_NAMES
from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier
from coplug.plugins.errors import InputError


def _data(rng: np.random.Generator, width: int, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Random features of `width` columns and labels from the first column."""
    X = rng.random((n, width))
    return X, (X[:, 0] > 0.5).astype(int)


def test_pmvb_predictor_remembers_its_input_width(rng: np.random.Generator) -> None:
    X, y = _data(rng, 3)
    predictor = PMVBPredictor(calibration="none").fit(X, y)
    assert predictor.n_features_in_ == 3
    assert predictor.predict_proba(X).shape == (60, 2)
    with pytest.raises(InputError, match="fitted on 3 features"):
        predictor.predict_proba(rng.random((5, len(FEATURE_NAMES))))


@pytest.mark.parametrize("share", [0, 0.0, 1, 1.0, 1.5, -0.1, "0.3", True])
def test_calibration_share_outside_0_1_is_named(share: object,
                                                rng: np.random.Generator) -> None:
    X, y = _data(rng, len(FEATURE_NAMES))
    with pytest.raises(InputError, match="calibration_share"):
        PMVBPredictor(calibration_share=share).fit(X, y)


def test_torch_mlp_checks_labels_epochs_and_width(rng: np.random.Generator) -> None:
    X, y = _data(rng, 4)
    with pytest.raises(InputError, match="Only binary classification"):
        TorchMLPClassifier(epochs=2).fit(X, np.arange(len(y)) % 3)
    for epochs in (0, -3, 2.5):
        with pytest.raises(InputError, match="epochs"):
            TorchMLPClassifier(epochs=epochs).fit(X, y)
    model = TorchMLPClassifier(hidden=(4,), epochs=2).fit(X, y)
    assert model.n_features_in_ == 4 and model.predict_proba(X).shape == (60, 2)
    with pytest.raises(InputError, match="fitted on 4 features"):
        model.predict_proba(X[:, :3])


@pytest.mark.parametrize(("settings", "name"), [
    ({"rho": 0}, "rho"), ({"rho": -1.0}, "rho"), ({"rho": float("nan")}, "rho"),
    ({"max_iter": 0}, "max_iter"), ({"max_iter": -5}, "max_iter"),
])
def test_fair_spectral_admm_settings_checked_in_fit(settings: dict, name: str) -> None:
    data = fair_sbm(40, n_clusters=2, seed=0)
    estimator = FairSpectralClustering(2, data.groups, **settings)  # __init__ stores only
    with pytest.raises(InputError, match=name):
        estimator.fit(data.adjacency)
