"""Seeded reproducibility review (s20): the same seeded training gives the same checkpoint
bytes, so the sha256 a sidecar records can be checked against a rerun of its command.

Before the fix `torch.save` was handed `atomic_write`'s random temporary path and named the
zip archive's inner folder after it, so every save of the same weights had other bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from coplug.learned.pmvb_features import FEATURE_NAMES
from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor
from coplug.learned.rowdualnet import RowDualNet, load, save


def test_rowdualnet_save_gives_the_same_bytes_every_time(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = RowDualNet(hidden=8)
    paths = [tmp_path / name / "net.pt" for name in ("a", "b")]
    for path in paths:
        path.parent.mkdir()
        save(model, path, {"seed": 0})
    assert paths[0].read_bytes() == paths[1].read_bytes()
    sidecars = [json.loads(p.with_suffix(".json").read_text()) for p in paths]
    assert sidecars[0]["sha256"] == sidecars[1]["sha256"]
    reloaded = load(paths[0])
    for key, value in model.state_dict().items():
        assert torch.equal(reloaded.state_dict()[key], value)


def test_pmvb_mlp_checkpoint_gives_the_same_bytes_every_time(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, len(FEATURE_NAMES)))
    y = (X[:, 0] > 0).astype(int)
    predictor = PMVBPredictor(kind="mlp", calibration="none", random_state=1)
    predictor.fit(X, y)
    paths = [predictor.save(tmp_path / name / "pmvb_x_mlp.pt") for name in ("a", "b")]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    np.testing.assert_array_equal(load_predictor(paths[0]).predict_proba(X),
                                  predictor.predict_proba(X))


def test_train_rowdual_quick_records_the_same_sha256_in_two_processes(tmp_path: Path) -> None:
    digests = []
    for hash_seed in ("0", "12345"):
        out = tmp_path / hash_seed / "rowdual.pt"
        out.parent.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-m", "coplug.learned.train_rowdual", "--quick",
                        "--out", str(out)], check=True, capture_output=True, env=env,
                       timeout=120)
        digests.append(json.loads(out.with_suffix(".json").read_text())["sha256"])
    assert digests[0] == digests[1]
