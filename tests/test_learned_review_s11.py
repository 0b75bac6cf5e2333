"""Review s11 of coplug.learned: wrong answers and estimator conventions found by probing."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import torch

import coplug.models
from coplug.learned import train_pmvb
from coplug.learned.fair_spectral import FairSpectralClustering, laplacian, smallest_eigenvectors
from coplug.learned.pmvb_predictors import (
    PMVBPredictor,
    TorchMLPClassifier,
    checkpoint_metadata,
    load_predictor,
)
from coplug.learned.train_pmvb import Sample
from coplug.plugins.errors import InputError


def _paths(count: int, length: int) -> nx.Graph:
    """`count` disjoint paths of `length` nodes: a Laplacian with `count` null vectors."""
    return nx.disjoint_union_all([nx.path_graph(length) for _ in range(count)])


@pytest.mark.parametrize("normalized", [False, True])
def test_smallest_eigenvectors_of_a_disconnected_graph_span_its_null_space(
        normalized: bool) -> None:
    adjacency = nx.to_scipy_sparse_array(_paths(4, 40), format="csr", dtype=float)
    lap, _ = laplacian(adjacency, normalized)
    vectors = smallest_eigenvectors(lap, 4)
    assert np.allclose(vectors.T @ vectors, np.eye(4), atol=1e-8)
    assert np.abs(lap @ vectors).max() < 1e-8  # all four are null vectors, not 0.006, 0.02


@pytest.mark.parametrize("method", ["unnormalized", "normalized"])
def test_plain_sc_recovers_the_components_of_a_disconnected_graph(method: str) -> None:
    labels = FairSpectralClustering(4, method=method).fit(_paths(4, 40)).labels_.reshape(4, 40)
    assert all(np.unique(row).size == 1 for row in labels)
    assert sorted(labels[:, 0]) == [0, 1, 2, 3]


@pytest.mark.parametrize(("share", "positives"), [(0.001, 100), (0.999, 100), (0.99, 4)])
def test_calibration_share_too_small_or_large_to_split_stays_uncalibrated(
        share: float, positives: int) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 12))
    y = (np.arange(200) < positives).astype(int)
    predictor = PMVBPredictor(calibration_share=share).fit(X, y)
    assert not predictor.calibrated_
    proba = predictor.predict_proba(X)
    assert proba.shape == (200, 2) and np.allclose(proba.sum(axis=1), 1.0)


def test_fitting_the_mlp_leaves_the_callers_torch_random_stream_alone() -> None:
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), np.arange(40) % 2
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    first = TorchMLPClassifier(epochs=3, random_state=7).fit(X, y).predict_proba(X)
    assert torch.equal(torch.rand(3), expected)
    second = TorchMLPClassifier(epochs=3, random_state=7).fit(X, y).predict_proba(X)
    assert np.array_equal(first, second)


def _fake_collect(family: str, size: int, seeds: range, time_limit: float = 30.0,
                  progress: bool = True, skipped: object = None) -> list[Sample]:
    """Synthetic solved instances (no SCIP): 30 variables, label = a noisy first feature."""
    samples = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((30, 12))
        samples.append(Sample(seed, X, (X[:, 0] + rng.standard_normal(30) > 0).astype(int)))
    return samples


def test_metadata_val_accuracy_is_the_predictors_own_score(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(train_pmvb, "collect", _fake_collect)
    [(predictor, meta)] = train_pmvb.fit_family("mknapsack", 8, 4, 22, 0, ["logreg"],
                                                "isotonic", 10.0, progress=False)
    X_val, y_val = train_pmvb.stack(_fake_collect("mknapsack", 22, range(8, 12)))
    assert (predictor.predict_proba(X_val)[:, 1] == 0.5).any()  # isotonic ties at 1/2
    assert meta["val_accuracy"] == pytest.approx(predictor.score(X_val, y_val))


def test_choosing_t_and_q_without_validation_instances_is_an_input_error() -> None:
    X, y = train_pmvb.stack(_fake_collect("mknapsack", 22, range(4)))
    predictor = PMVBPredictor(calibration="none").fit(X, y)
    with pytest.raises(InputError, match="at least one validation instance"):
        train_pmvb.select_t_q(predictor, [])


@pytest.mark.parametrize("random_state", [-1, 2**32, 1.5, "seed", np.random.default_rng(0)])
def test_fair_sc_refuses_a_bad_random_state_before_embedding(random_state: object) -> None:
    estimator = FairSpectralClustering(2, np.arange(80) % 2, random_state=random_state)
    with pytest.raises(InputError, match="random_state must be None, an integer"):
        estimator.fit(_paths(2, 40))


def test_training_does_not_need_a_shipped_checkpoint_to_name_its_own(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "models"  # a package install without the shipped checkpoints
    empty.mkdir()
    monkeypatch.setattr(coplug.models, "__file__", str(empty / "__init__.py"))
    monkeypatch.setattr(train_pmvb, "collect", _fake_collect)
    out = tmp_path / "out"
    assert train_pmvb.main(["--family", "mknapsack", "--n-train", "4", "--n-val", "2",
                            "--kinds", "logreg", "--out-dir", str(out), "--quiet"]) == 0
    assert load_predictor(out / "pmvb_mknapsack_logreg.joblib").n_features_in_ == 12
    assert checkpoint_metadata(out / "pmvb_mknapsack_logreg.joblib")["family"] == "mknapsack"
