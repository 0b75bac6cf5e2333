"""PMVB and checkpoint probe fixes (session 23): sizes past memory refused before any
generation, and one-line errors for paths, names and metadata."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations import mip_families
from coplug.formulations.mip_families import mknapsack
from coplug.learned import train_pmvb
from coplug.learned.pmvb_predictors import PMVBPredictor
from coplug.learned.rowdualnet import RowDualNet, save
from coplug.plugins import solve
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError
from coplug.plugins.pmvb import PMVBBranching


@pytest.mark.parametrize("family", ["gisp", "setcover"])
def test_training_refuses_a_size_past_memory_before_generating(family, monkeypatch, capsys):
    """gisp at size 1e6 hung in its graph generator; setcover at 1e8 ended in numpy's
    _ArrayMemoryError traceback."""
    def never(*_args, **_kwargs):
        raise AssertionError("an instance was generated")

    monkeypatch.setattr(train_pmvb, "build_family", never)
    with pytest.raises(SystemExit) as stop:
        train_pmvb.parse_args(["--family", family, "--size", "100000000", "--n-train", "2"])
    assert stop.value.code == 2 and "of memory" in capsys.readouterr().err


def test_the_pmvb_command_refuses_it_too(monkeypatch, capsys):
    monkeypatch.setattr(mip_families, "build_family", lambda *_a: pytest.fail("generated"))
    assert main(["pmvb", "gisp", "--size", "1000000"]) == 2
    assert "of memory" in capsys.readouterr().err


def test_a_name_of_no_variable_the_model_uses_is_passed_over_and_others_explained():
    """(Session 43: a variable of the model that nothing uses is passed over, as a fixed
    one; a name of no variable of the model is still refused.)"""
    m = mknapsack(15, seed=1)
    m.unused = pyo.Var(domain=pyo.Binary)
    with pytest.raises(InputError, match="'unsused', not the name of a variable of this "
                                         "model's active constraints"):
        solve(m, plugins=[PMVBBranching({"x[0]": 0.9, "unsused": 0.5})])
    result = solve(m, plugins=[PMVBBranching({"x[0]": 0.9, "unused": 0.5})])
    assert result.objective == pytest.approx(solve(mknapsack(15, seed=1)).objective)


def test_a_bytes_path_is_named_as_a_path():
    with pytest.raises(InputError, match="paths must be str or os.PathLike, not bytes"):
        PMVBBranching(b"models/pmvb_gisp_gbt.joblib")


def test_saving_where_no_file_can_be_written_names_the_path(tmp_path):
    x = np.random.default_rng(0).normal(size=(60, 12))
    predictor = PMVBPredictor().fit(x, (x[:, 0] > 0).astype(int))
    (tmp_path / "a_file").write_text("")
    with pytest.raises(InputError, match="cannot write .*a_file"):
        predictor.save(tmp_path / "a_file" / "p.joblib")  # a file where a folder should be
    with pytest.raises(InputError, match="cannot write /proc/p.joblib"):
        predictor.save("/proc/p.joblib")  # a folder no file can be made in


def test_rowdualnet_metadata_json_cannot_hold_is_named(tmp_path):
    with pytest.raises(InputError, match="metadata must be JSON data"):
        save(RowDualNet(), tmp_path / "w.pt", {"a": object()})
    assert not list(tmp_path.iterdir())  # nothing written
