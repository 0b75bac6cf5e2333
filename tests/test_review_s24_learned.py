"""Review of session 24 (coplug.learned): checkpoints written only over files, a float64
RowDualNet round trip, the shipped model not shared, and one-line errors."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from coplug.learned import rowdualnet, train_pmvb, train_rowdual
from coplug.learned.checkpoint_io import atomic_write_text
from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier
from coplug.plugins.errors import InputError


def test_a_checkpoint_is_not_written_over_a_pipe(tmp_path: Path) -> None:
    """A rename over a device or pipe replaced it: as root, --out /dev/null made /dev/null
    a file of weights."""
    pipe = tmp_path / "pipe.pt"
    os.mkfifo(pipe)
    with pytest.raises(InputError, match="is not a regular file"):
        atomic_write_text(pipe, "x")
    with pytest.raises(InputError, match="is not a regular file"):
        rowdualnet.save(rowdualnet.RowDualNet(), pipe, {})
    with pytest.raises(SystemExit):
        train_rowdual.main(["--quick", "--out", str(pipe)])
    os.mkfifo(tmp_path / "pmvb_setcover_logreg.joblib")
    with pytest.raises(SystemExit):
        train_pmvb.main(["--family", "setcover", "--kinds", "logreg", "--out-dir",
                         str(tmp_path)])
    assert pipe.is_fifo()


def test_a_float64_rowdualnet_loads_as_it_was_saved(tmp_path: Path) -> None:
    net = rowdualnet.load().double()
    path = tmp_path / "net64.pt"
    rowdualnet.save(net, path, {"note": "double"})
    back = rowdualnet.load(path)
    costs = np.random.default_rng(0).random((30, 30))
    assert next(back.parameters()).dtype == torch.float64
    assert np.array_equal(back.predict_duals(costs), net.predict_duals(costs))


def test_the_shipped_model_is_a_copy_per_load() -> None:
    first = rowdualnet.load().double()
    assert first is not rowdualnet.load()
    assert next(rowdualnet.load().parameters()).dtype == torch.float32


def test_a_checkpoint_of_another_size_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "other.pt"
    torch.save({"state_dict": rowdualnet.load().state_dict(), "n_features":
                rowdualnet.N_FEATURES, "hidden": 32}, path)
    with pytest.raises(InputError, match="does not match the network") as caught:
        rowdualnet.load(path)
    assert "\n" not in str(caught.value)


def test_rowdualnet_metadata_must_be_a_dict(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="metadata must be a dict, got list"):
        rowdualnet.save(rowdualnet.RowDualNet(), tmp_path / "m.pt", ["trained", "today"])


def _data() -> tuple[np.ndarray, np.ndarray]:
    X = np.random.default_rng(0).normal(size=(40, 12))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("X,words", [
    (lambda X: X[:, 0], "Expected 2D array, got 1D array instead"),
    (lambda X: sp.csr_matrix(X), "Sparse data was passed for X"),
])
def test_bad_features_are_one_line_input_errors(X, words) -> None:
    features, labels = _data()
    with pytest.raises(InputError, match=words) as caught:
        PMVBPredictor().fit(X(features), labels)
    assert "\n" not in str(caught.value)


def test_a_clip_float32_cannot_hold_is_refused() -> None:
    """clip=1e39 gave all-NaN probabilities."""
    X, y = _data()
    with pytest.raises(InputError, match="clip must be at most"):
        TorchMLPClassifier(clip=1e39).fit(X, y)
    proba = TorchMLPClassifier(clip=1e6, epochs=5).fit(X * 1e30, y).predict_proba(X * 1e30)
    assert np.isfinite(proba).all() and ((proba >= 0) & (proba <= 1)).all()
