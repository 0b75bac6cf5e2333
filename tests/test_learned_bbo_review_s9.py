"""Review s9 fixes: negative power bases and non-finite constants in exported BBO programs,
RowDualNet checkpoints checked at load (finite weights, integer sizes, sha256, foreign
pickles named), train_rowdual size limits, and min_trick exact in float."""

from __future__ import annotations

import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import coplug.models
from coplug.formulations.bbo import numpy_evaluator, to_pyomo
from coplug.formulations.bbo.export import _TextAlgebra, pyomo_script
from coplug.formulations.bbo.grammar import ProgramError
from coplug.formulations.bbo.pyomo_model import pyomo_objective_at
from coplug.formulations.bbo.validate import load as load_program
from coplug.learned import train_rowdual
from coplug.learned.rowdualnet import RowDualNet, file_sha256, load, min_trick, save
from coplug.plugins.errors import InputError

MODELS = Path(coplug.models.__file__).parent


def _script_value(text: str, dim: int, point: list[float]) -> float:
    """The objective of the exported Pyomo script of `text` at `point`."""
    import pyomo.environ as pyo

    namespace: dict = {}
    exec(compile(pyomo_script(load_program(text, dim)), "script", "exec"), namespace)
    model = namespace["model"]
    for i, value in enumerate(point):
        model.x[i].set_value(value)
    return pyo.value(model.obj)


@pytest.mark.parametrize("text", ["(-2.0) ** floor(x[0]) + x[1] ** 2",
                                  "(-2.0) ** (0.0 * x[0] + 2.0) + x[1] ** 2"])
def test_exported_script_keeps_a_negative_power_base(text: str) -> None:
    point = [2.5, 0.5]
    expected = numpy_evaluator(load_program(text, 2))(np.array([point]))[0]
    assert expected == pytest.approx(4.25)
    assert _script_value(text, 2, point) == pytest.approx(expected)


def test_negative_literals_including_minus_zero_are_parenthesised() -> None:
    alg = _TextAlgebra([])
    assert (alg.lit(-2.0), alg.lit(-0.0), alg.lit(2.0), alg.lit("m.x[0]")) == (
        "(-2.0)", "(-0.0)", "2.0", "m.x[0]")


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_script_text_refuses_non_finite_constants(value: float) -> None:
    with pytest.raises(InputError, match="not finite"):
        _TextAlgebra([]).lit(value)


@pytest.mark.parametrize(("text", "named"), [
    ("min(exp(1000.0), x[0]) + x[1] ** 2", "exp(1000.0)"),
    ("max(-exp(1000.0), x[0] ** 2) + x[1] ** 2", "exp(1000.0)"),
    ("big = exp(1000.0)\nmin(big, x[0]) + x[1]", "exp(1000.0)"),
    ("min(max(1e308, -1e308), x[0]) + x[1]", "max("),
])
def test_non_finite_constant_subexpressions_are_rejected(text: str, named: str) -> None:
    with pytest.raises(ProgramError, match="constant subexpression") as info:
        load_program(text, 2)
    assert info.value.kind == "non_finite" and named in str(info.value)


def test_finite_constant_subexpressions_still_load_and_agree_with_pyomo() -> None:
    program = load_program("min(exp(2.0), x[0]) + max(-exp(3.0), x[1] ** 2)", 2)
    point = np.array([1.5, 0.5])
    assert pyomo_objective_at(to_pyomo(program), point) == pytest.approx(
        numpy_evaluator(program)(point[None])[0])


@pytest.fixture
def checkpoint(tmp_path: Path) -> tuple[Path, dict]:
    """A small saved RowDualNet without a sidecar (the tests rewrite it) and its blob."""
    path = tmp_path / "rdn.pt"
    save(RowDualNet(hidden=4), path, {})
    path.with_suffix(".json").unlink()
    return path, torch.load(path, weights_only=True)


def test_non_finite_weights_are_refused_at_load_naming_the_file(checkpoint) -> None:
    path, blob = checkpoint
    state = {k: v.clone() for k, v in blob["state_dict"].items()}
    state["net.2.bias"][0] = math.nan
    torch.save({**blob, "state_dict": state}, path)
    with pytest.raises(InputError, match=rf"{path.name} holds NaN or infinite weights in "
                                         r"net\.2\.bias"):
        load(path)
    state = {k: v.double() for k, v in state.items()}  # a float64 network loads as one
    state["net.2.bias"][0] = math.inf
    torch.save({**blob, "state_dict": state}, path)
    with pytest.raises(InputError, match=r"NaN or infinite weights in net\.2\.bias \(as "
                                         r"float64\)"):
        load(path)


@pytest.mark.parametrize(("key", "value"), [
    ("n_features", "14"), ("n_features", 14.7), ("n_features", 14.0), ("n_features", True),
    ("hidden", "4"), ("hidden", True), ("hidden", 0), ("hidden", 10**12),
])
def test_checkpoint_sizes_must_be_real_integers(checkpoint, key: str, value: object) -> None:
    path, blob = checkpoint
    torch.save({**blob, key: value}, path)
    with pytest.raises(InputError, match=rf"{path.name}: {key} must be an integer"):
        load(path)


def test_sidecar_sha256_refuses_a_modified_checkpoint(checkpoint) -> None:
    path, blob = checkpoint
    sidecar = path.with_suffix(".json")
    sidecar.write_text(json.dumps({"hidden": 4}))
    assert load(path).hidden == 4  # a sidecar without sha256 (older checkpoints) loads
    sidecar.write_text(json.dumps({"sha256": file_sha256(path)}))
    assert load(path).hidden == 4
    torch.save({**blob, "state_dict": {k: v + 1 for k, v in blob["state_dict"].items()}},
               path)
    with pytest.raises(InputError, match=rf"{path.name} is not the file"):
        load(path)
    sidecar.write_text(json.dumps({"sha256": "abc"}))
    with pytest.raises(InputError, match="sha256 must be 64 lowercase hex digits"):
        load(path)


def test_shipped_sidecar_records_the_shipped_checkpoints_sha256(tmp_path: Path) -> None:
    meta = json.loads((MODELS / "rowdualnet.json").read_text())
    assert meta["sha256"] == file_sha256(MODELS / "rowdualnet.pt")
    copy = tmp_path / "rowdualnet.pt"
    shutil.copy(MODELS / "rowdualnet.pt", copy)
    shutil.copy(MODELS / "rowdualnet.json", copy.with_suffix(".json"))
    assert load(copy).hidden == meta["hidden"]
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(InputError, match="modified, corrupted or replaced"):
        load(copy)


@pytest.mark.parametrize("name", ["pmvb_setcover_mlp.pt", "pmvb_setcover_gbt.joblib"])
def test_foreign_pickle_is_one_line_naming_the_file(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError) as info:
            load(MODELS / name)
    message = str(info.value)
    assert message.startswith(f"{MODELS / name} is not a RowDualNet checkpoint (")
    assert "\n" not in message and "\x1b" not in message and "weights_only" not in message


@pytest.mark.parametrize("flags", [["--hidden", "100000000"], ["--sizes", "32", "100000"],
                                   ["--eval-n", "100000"], ["--per-cell", "10000"],
                                   ["--epochs", "10000000"]])
def test_train_rowdual_caps_sizing_flags(flags: list[str], tmp_path: Path,
                                         capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        train_rowdual.parse_args(["--quick", "--out", str(tmp_path / "q.pt"), *flags])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"{flags[0]} must be in 1 .. " in err


def test_min_trick_is_dual_feasible_exactly_in_float() -> None:
    rng = np.random.default_rng(0)
    for _ in range(2000):
        n, m = rng.integers(1, 6, 2)
        c = rng.random((n, m)) * rng.choice([1.0, 1e-300, 1e300])
        u = rng.normal(size=n) * rng.choice([1.0, 1e3, 1e-3])
        v = min_trick(c, u)
        assert (u[:, None] + v[None, :] <= c).all()
        assert np.allclose(v, (c - u[:, None]).min(axis=0), rtol=1e-12, atol=0)


def test_min_trick_steps_an_overflowed_dual_down_to_a_finite_one() -> None:
    c, u = np.array([[1e308, -1e308]]), np.array([-1e308])
    v = min_trick(c, u)
    assert np.isfinite(v).all() and (u[:, None] + v[None, :] <= c).all()
    with pytest.raises(InputError, match="overflows to -inf in column 0"):
        min_trick(np.array([[-1e308]]), np.array([1e308]))


@pytest.mark.parametrize(("c", "u", "match"), [
    ([[1.0, math.nan]], [0.0], r"cost matrix c holds nan at index \(0, 1\)"),
    ([[1.0, math.inf]], [0.0], r"cost matrix c holds inf"),
    ([[1.0, 2.0]], [math.inf], r"row duals u holds inf at index 0"),
])
def test_min_trick_refuses_non_finite_input(c, u, match: str) -> None:
    with pytest.raises(InputError, match=match):
        min_trick(np.array(c), np.array(u))
