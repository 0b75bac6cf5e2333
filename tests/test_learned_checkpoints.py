"""Training scripts: Ctrl-C writes nothing, checkpoints are atomic, bad flags fail up front."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from coplug.learned import pmvb_predictors, rowdualnet, train_pmvb, train_rowdual
from coplug.learned.checkpoint_io import strict_json
from coplug.learned.pmvb_features import FEATURE_NAMES
from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor
from coplug.learned.rowdualnet import RowDualNet, load, save
from coplug.plugins.errors import InputError
from coplug.plugins.results import Result, Status

PMVB_ARGS = ["--family", "mknapsack", "--n-train", "2", "--n-val", "1", "--size", "22",
             "--kinds", "logreg", "--quiet"]


def _interrupted(*_args: object, **_kwargs: object) -> Result:
    """What bridge.solve returns after SCIP caught a Ctrl-C."""
    return Result(status=Status.INTERRUPTED, solver="scip")


def _no_work(*_args: object, **_kwargs: object) -> None:
    """Stand-in for the expensive stage: validation must fail before it is reached."""
    raise AssertionError("work started before the arguments were validated")


def _dump_half_then_fail(obj: object, path: str | Path) -> None:
    """A dump interrupted mid-way: some bytes reach the file, then the interrupt."""
    Path(path).write_bytes(b"PK\x03\x04 half a checkpoint")
    raise KeyboardInterrupt


def test_collect_turns_scip_interrupt_into_keyboard_interrupt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(train_pmvb, "solve", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_pmvb.collect("mknapsack", 22, [0, 1], progress=False)


def test_train_pmvb_interrupt_exits_130_writing_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(train_pmvb, "solve", _interrupted)
    out = tmp_path / "out"
    assert train_pmvb.main([*PMVB_ARGS, "--out-dir", str(out)]) == 130
    assert "interrupted; nothing written" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_train_rowdual_interrupt_exits_130_keeping_old_checkpoint(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "rdn.pt"
    out.write_bytes(b"old good checkpoint")

    def interrupt(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(train_rowdual, "make_dataset", interrupt)
    assert train_rowdual.main(["--quick", "--generators", "uniform", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == "train_rowdual: interrupted; nothing written"
    assert out.read_bytes() == b"old good checkpoint" and sorted(tmp_path.iterdir()) == [out]


def test_rowdual_save_is_atomic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "rdn.pt"
    save(RowDualNet(hidden=4), path, {"loss": 0.5})
    before = path.read_bytes(), path.with_suffix(".json").read_text()
    monkeypatch.setattr(rowdualnet.torch, "save", _dump_half_then_fail)
    with pytest.raises(KeyboardInterrupt):
        save(RowDualNet(hidden=8), path, {"loss": 0.1})
    assert (path.read_bytes(), path.with_suffix(".json").read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rdn.json", "rdn.pt"]
    assert load(path).hidden == 4


def test_rowdual_json_never_holds_nan(tmp_path: Path) -> None:
    path = tmp_path / "rdn.pt"
    save(RowDualNet(hidden=4), path, {"final_train_loss": math.nan, "x": [math.inf]})
    meta = json.loads(path.with_suffix(".json").read_text(), parse_constant=_refuse)
    assert meta == {"final_train_loss": None, "x": [None],
                    "sha256": rowdualnet.file_sha256(path)}
    assert strict_json({"a": -math.inf}) == '{"a": null}\n'


def _refuse(name: str) -> None:
    """json.loads hook: NaN / Infinity in the file is a failure."""
    raise AssertionError(f"JSON holds {name}")


@pytest.mark.parametrize(("suffix", "dumper"), [(".joblib", "joblib"), (".pt", "torch")])
def test_pmvb_save_is_atomic(suffix: str, dumper: str, monkeypatch: pytest.MonkeyPatch,
                             tmp_path: Path, rng: np.random.Generator) -> None:
    X = rng.random((40, len(FEATURE_NAMES)))
    y = (X[:, 0] > 0.5).astype(int)
    predictor = PMVBPredictor(calibration="none").fit(X, y)
    path = predictor.save(tmp_path / f"p{suffix}")
    before = path.read_bytes()
    module = pmvb_predictors.joblib if dumper == "joblib" else pmvb_predictors.torch
    monkeypatch.setattr(module, "dump" if dumper == "joblib" else "save", _dump_half_then_fail)
    with pytest.raises(KeyboardInterrupt):
        predictor.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert {p.name for p in tmp_path.iterdir()} == {path.name, path.name + ".sha256"}
    assert np.allclose(load_predictor(path).predict_proba(X), predictor.predict_proba(X))


def test_rowdual_load_names_bad_files(tmp_path: Path) -> None:
    good = tmp_path / "good.pt"
    save(RowDualNet(hidden=4), good, {})
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    missing_keys = tmp_path / "keys.pt"
    torch.save({"hidden": 4}, missing_keys)
    not_dict = tmp_path / "list.pt"
    torch.save([1, 2], not_dict)
    mismatch = tmp_path / "mismatch.pt"
    blob = torch.load(good, weights_only=True)
    torch.save({**blob, "hidden": 5}, mismatch)
    folder = tmp_path / "folder.pt"
    folder.mkdir()
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00\x01 not a checkpoint")
    for path in (truncated, missing_keys, not_dict, mismatch, folder, garbage):
        with pytest.raises(InputError, match=path.name):
            load(path)


@pytest.mark.parametrize(("flags", "flag"), [
    (["--out-dir", "/proc/nope"], "--out-dir"),
    (["--calibration", "bogus"], "--calibration"),
    (["--size", "0"], "--size"),
    (["--n-val", "0"], "--n-val"),
    (["--n-val", "-1"], "--n-val"),
    (["--kinds", ","], "--kinds"),
    (["--kinds", "logreg,svm"], "--kinds"),
    (["--seed", "-1"], "--seed"),
    (["--time-limit", "0"], "--time-limit"),
    (["--n-train", "1"], "--n-train"),
])
def test_train_pmvb_rejects_bad_flags_before_solving(
        flags: list[str], flag: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(train_pmvb, "collect", _no_work)
    argv = [*PMVB_ARGS, "--out-dir", str(tmp_path), *flags]
    with pytest.raises(SystemExit) as exc:
        train_pmvb.main(argv)
    assert exc.value.code == 2 and flag in capsys.readouterr().err


def test_train_pmvb_out_dir_that_is_a_file_fails_up_front(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(train_pmvb, "collect", _no_work)
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as exc:
        train_pmvb.main([*PMVB_ARGS, "--out-dir", str(tmp_path / "file" / "sub")])
    assert exc.value.code == 2 and "not a folder" in capsys.readouterr().err


@pytest.mark.parametrize(("flags", "flag"), [
    (["--per-cell", "0"], "--per-cell"),
    (["--per-cell", "-1"], "--per-cell"),
    (["--epochs", "0"], "--epochs"),
    (["--hidden", "0"], "--hidden"),
    (["--seed", "-5"], "--seed"),
    (["--sizes", "32", "0"], "--sizes"),
    (["--eval-n", "0"], "--eval-n"),
    (["--out", "{tmp}"], "is a folder"),
    (["--out", "{tmp}/file/rdn.pt"], "not a folder"),
    (["--out", "{tmp}/rdn.json"], ".json"),
    (["--out", "/proc/nope/rdn.pt"], "cannot write"),
    (["--out", "."], "names a folder"),  # no file name: a ValueError traceback before
    (["--out", "/"], "names a folder"),
    (["--out", "{tmp}/README.md"], "must end in .pt"),  # it replaced a README with weights
    (["--out", "{tmp}/file"], "must end in .pt"),
])
def test_train_rowdual_rejects_bad_flags_before_training(
        flags: list[str], flag: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(train_rowdual, "make_dataset", _no_work)
    (tmp_path / "file").write_text("x")
    argv = ["--quick", "--out", str(tmp_path / "rdn.pt"),
            *(f.format(tmp=tmp_path) for f in flags)]
    with pytest.raises(SystemExit) as exc:
        train_rowdual.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and flag in err and "Traceback" not in err


def test_rowdual_save_writes_only_a_pt_checkpoint(tmp_path: Path) -> None:
    """save(model, "notes.txt") wrote weights over notes.txt and metadata over notes.json."""
    (tmp_path / "notes.txt").write_text("my notes")
    (tmp_path / "notes.json").write_text('{"important": true}')
    with pytest.raises(InputError, match=r"must end in \.pt"):
        save(RowDualNet(hidden=4), tmp_path / "notes.txt", {"run": 1})
    assert (tmp_path / "notes.txt").read_text() == "my notes"
    assert (tmp_path / "notes.json").read_text() == '{"important": true}'


def test_quick_only_fills_sizing_flags_not_given(tmp_path: Path) -> None:
    args = train_rowdual.parse_args(["--quick", "--epochs", "5", "--out", str(tmp_path / "a.pt")])
    assert args.epochs == 5 and args.sizes == train_rowdual.QUICK["sizes"]
    full = train_rowdual.parse_args(["--out", str(tmp_path / "a.pt")])
    assert full.epochs == train_rowdual.FULL["epochs"]
    assert "wins over --quick" in train_rowdual.build_parser().format_help().replace("\n", " ")


def test_quick_run_never_overwrites_the_shipped_checkpoint() -> None:
    with pytest.raises(SystemExit) as stop:
        train_rowdual.parse_args(["--quick"])
    assert stop.value.code == 2
    assert train_rowdual.parse_args([]).out == train_rowdual.DEFAULT_OUT


def test_train_pmvb_rescore_recomputes_the_validation_figures_without_refitting(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--rescore solves the recorded validation seeds again and rewrites the figures; the
    checkpoint itself is left as it was, and data that no longer match are refused."""
    args = ["--family", "mknapsack", "--n-train", "3", "--n-val", "2", "--size", "22",
            "--kinds", "logreg,gbt", "--quiet", "--out-dir", str(tmp_path)]
    assert train_pmvb.main(args) == 0
    for kind in ("logreg", "gbt"):
        meta_path = tmp_path / f"pmvb_mknapsack_{kind}.json"
        trained = json.loads(meta_path.read_text())
        checkpoint = (tmp_path / pmvb_predictors.checkpoint_name("mknapsack", kind))
        before = checkpoint.read_bytes()
        meta_path.write_text(json.dumps({**trained, "val_accuracy": 0.0, "val_brier": 9.0}))
        assert train_pmvb.main([*args, "--rescore"]) == 0
        rescored = json.loads(meta_path.read_text())
        assert rescored["val_accuracy"] == trained["val_accuracy"] > 0.0
        assert rescored["val_brier"] == trained["val_brier"] < 1.0
        assert rescored["threshold"] == trained["threshold"] and checkpoint.read_bytes() == before
    meta_path.write_text(json.dumps({**trained, "val_rows": trained["val_rows"] + 1}))
    assert train_pmvb.main([*args, "--rescore"]) == 2
    assert "retrain instead" in capsys.readouterr().err
    (tmp_path / "pmvb_mknapsack_logreg.json").unlink()
    with pytest.raises(SystemExit):
        train_pmvb.main([*args, "--rescore"])
    assert "does not exist (train the family first)" in capsys.readouterr().err
