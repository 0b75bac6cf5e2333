"""PMVB predictors: calibrated fit/predict, checkpoint round trip, training end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations.mip_families import FAMILIES, build_family
from coplug.learned import train_pmvb
from coplug.learned.checkpoint_io import file_sha256
from coplug.learned.pmvb_features import FEATURE_NAMES, RootFeatureRecorder
from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor, shipped_checkpoint
from coplug.plugins import InputError, solve
from coplug.plugins.pmvb import PMVBBranching

MODELS = Path(__file__).resolve().parents[1] / "models"


def _toy_data(rng: np.random.Generator, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, len(FEATURE_NAMES)))
    y = (X[:, 2] + 0.2 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y


@pytest.mark.parametrize(("kind", "suffix"), [("logreg", ".joblib"), ("gbt", ".joblib"),
                                              ("mlp", ".pt")])
def test_checkpoint_round_trip(kind: str, suffix: str, rng: np.random.Generator,
                               tmp_path: Path) -> None:
    X, y = _toy_data(rng)
    predictor = PMVBPredictor(kind=kind, calibration="isotonic").fit(X, y)
    proba = predictor.predict_proba(X)
    assert proba.shape == (len(y), 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert ((proba[:, 1] >= 0.5) == y).mean() > 0.75  # it learned the signal
    loaded = load_predictor(predictor.save(tmp_path / f"p{suffix}"))
    assert np.allclose(loaded.predict_proba(X), proba)
    assert loaded.predict_proba(X[:0]).shape == (0, 2)  # no variables, no predictions


def test_bad_training_input_is_named(rng: np.random.Generator, tmp_path: Path) -> None:
    X, y = _toy_data(rng, 50)
    with pytest.raises(InputError, match="one class"):
        PMVBPredictor().fit(X, np.zeros_like(y))
    with pytest.raises(InputError, match="NaN"):
        PMVBPredictor().fit(np.full_like(X, np.nan), y)
    with pytest.raises(InputError, match="kind"):
        PMVBPredictor(kind="svm").fit(X, y)
    with pytest.raises(InputError, match="must end"):
        PMVBPredictor(calibration="sigmoid").fit(X, y).save(tmp_path / "p.pkl")


def test_too_few_rows_of_a_class_stay_uncalibrated(rng: np.random.Generator) -> None:
    X, _ = _toy_data(rng, 60)
    y = np.zeros(60, dtype=int)
    y[:3] = 1
    predictor = PMVBPredictor(kind="logreg").fit(X, y)
    assert not predictor.calibrated_ and predictor.predict_proba(X).shape == (60, 2)


def test_recorder_reads_root_features() -> None:
    model = build_family("mknapsack", 22, 0)
    recorder = RootFeatureRecorder()
    assert solve(model, plugins=[recorder]).optimal
    assert recorder.features.shape == (len(recorder.variables), len(FEATURE_NAMES))
    assert len(recorder.variables) > 0 and np.isfinite(recorder.features).all()
    lp = recorder.features[:, FEATURE_NAMES.index("lp_value")]
    assert ((lp >= 0) & (lp <= 1)).all() and (lp * (1 - lp) > 1e-6).any()  # fractional root


def test_training_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = train_pmvb.main(["--family", "mknapsack", "--n-train", "4", "--n-val", "2",
                            "--size", "22", "--kinds", "logreg", "--out-dir", str(tmp_path),
                            "--quiet"])
    assert code == 0 and "val_acc=" in capsys.readouterr().out
    meta = json.loads((tmp_path / "pmvb_mknapsack_logreg.json").read_text())
    for key in ("family", "size", "seed", "val_accuracy", "threshold", "confidence",
                "empirical_hold_rate", "promised_q", "grid"):
        assert key in meta
    assert 0.0 <= meta["val_accuracy"] <= 1.0 and meta["train_instances_used"] >= 2
    assert meta["sha256"] == file_sha256(tmp_path / "pmvb_mknapsack_logreg.joblib")
    predictor = load_predictor(tmp_path / "pmvb_mknapsack_logreg.joblib")
    model = build_family("mknapsack", 22, 500)
    reference = solve(model)
    result = solve(model, plugins=[PMVBBranching(predictor, meta["threshold"],
                                                 meta["confidence"])])
    assert result.optimal and abs(result.objective - reference.objective) <= 1e-6 * abs(
        reference.objective)
    assert result.plugin_stats["pmvb"]["predictor"] == "logreg"


def test_training_script_rejects_bad_arguments(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        train_pmvb.main(["--family", "mknapsack", "--n-train", "1"])
    assert exc.value.code == 2 and "--n-train" in capsys.readouterr().err


def test_shipped_checkpoints_have_metadata() -> None:
    shipped = sorted(MODELS.glob("pmvb_*.json"))
    assert shipped, "no PMVB checkpoints shipped in models/"
    for meta_path in shipped:
        meta = json.loads(meta_path.read_text())
        assert meta["family"] in FAMILIES
        path = shipped_checkpoint(meta["family"], meta["kind"])
        assert path.is_file() and path.with_suffix(".json") == meta_path
        assert 0.5 < meta["threshold"] <= 1.0 and 0.0 < meta["confidence"] < 1.0


def test_checkpoint_path_brings_its_tuned_t_and_q() -> None:
    """Unset t and q come from the checkpoint's JSON; given ones win; lp keeps 0.9/0.99."""
    from coplug.learned.pmvb_predictors import checkpoint_metadata, shipped_checkpoint
    from coplug.plugins.pmvb import DEFAULT_T_Q, PMVBBranching

    path = shipped_checkpoint("mknapsack", "logreg")
    meta = checkpoint_metadata(path)
    rule = PMVBBranching(path)
    assert (rule.threshold, rule.confidence) == (meta["threshold"], meta["confidence"])
    assert PMVBBranching(str(path), threshold=0.95).threshold == 0.95
    assert (PMVBBranching("lp").threshold, PMVBBranching("lp").confidence) == DEFAULT_T_Q
