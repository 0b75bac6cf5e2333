"""Review s19: learned LAP warm start (RowDualNet), its checkpoints, and the LAP entry points."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from coplug.plugins.lap import solve_lap

TOP = np.finfo(np.float64).max


def _scipy_cost(c: np.ndarray, maximize: bool = False) -> float:
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    return float(c[rows, cols].sum())


@pytest.mark.parametrize("n", [2, 4, 150])
@pytest.mark.parametrize("maximize", [False, True])
def test_duals_near_float_max_stay_exact(n: int, maximize: bool) -> None:
    """Given row duals spanning the whole float range: their Min-Trick overflowed to -inf, the
    tightened duals to inf, and the dense solve called a finite matrix unassignable."""
    rng = np.random.default_rng(n)
    if n == 2:
        c = np.array([[-1e300, 0.0], [0.0, -1e300]])
        duals = np.array([-TOP, TOP])
    else:
        c = rng.normal(size=(n, n)) * 1e300
        duals = np.where(np.arange(n) % 2, TOP, -TOP) * rng.uniform(0.5, 1.0, n)
    if maximize:
        duals = -duals
    sol = solve_lap(c, row_duals=duals, maximize=maximize)
    assert sol.cost == pytest.approx(_scipy_cost(c, maximize), rel=1e-12)
    assert sorted(sol.col_ind.tolist()) == list(range(n))


@pytest.mark.parametrize("dtype", ["complex64", "bool", "int64"])
def test_checkpoint_with_non_float_weights_is_refused(tmp_path, dtype: str) -> None:
    """Weights stored as complex, bool or integer tensors were cast into the float network
    (imaginary parts dropped with a warning, booleans read as 0/1) and loaded as if valid."""
    import torch

    from coplug.learned.rowdualnet import N_FEATURES, RowDualNet, load
    from coplug.plugins.errors import InputError

    net = RowDualNet(hidden=4)
    state = {key: value.to(getattr(torch, dtype)) for key, value in net.state_dict().items()}
    path = tmp_path / "odd.pt"
    torch.save({"state_dict": state, "n_features": N_FEATURES, "hidden": 4}, path)
    with pytest.raises(InputError, match=rf"net\.0\.weight.*{dtype}"):
        load(path)


def test_checkpoint_with_float64_weights_still_loads(tmp_path) -> None:
    """Real floating weights of another precision are fine (cast to float32 as before)."""
    import torch

    from coplug.learned.rowdualnet import N_FEATURES, RowDualNet, load

    net = RowDualNet(hidden=4)
    state = {key: value.double() for key, value in net.state_dict().items()}
    path = tmp_path / "f64.pt"
    torch.save({"state_dict": state, "n_features": N_FEATURES, "hidden": 4}, path)
    c = np.random.default_rng(0).random((6, 6))
    assert np.allclose(load(path).predict_duals(c), net.predict_duals(c))


def test_lap_cli_module_runs_the_lap_command(tmp_path) -> None:
    """`python -m coplug.plugins.lap.cli ...` did nothing and exited 0, whatever it was given
    (a missing file included): the module had no entry point of its own."""
    import subprocess
    import sys

    costs = tmp_path / "costs.csv"
    costs.write_text("4,1,3\n2,0,5\n3,2,2\n")
    run = [sys.executable, "-m", "coplug.plugins.lap.cli"]
    ok = subprocess.run([*run, str(costs), "--json"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert '"cost": 5.0' in ok.stdout
    missing = subprocess.run([*run, str(tmp_path / "nope.csv")], capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode == 2
    assert "cost file not found" in missing.stderr


def _odd(a: np.ndarray, bad: str) -> np.ndarray:
    """`a` as complex, text, or an object array holding a non-number."""
    if bad == "complex":
        return a + 1j
    if bad == "text":
        return a.astype(str)
    out = a.astype(object)
    out.flat[0] = object()
    return out


@pytest.mark.parametrize("which", ["c", "u"])
@pytest.mark.parametrize("bad", ["complex", "text", "object"])
def test_min_trick_refuses_non_real_input(which: str, bad: str) -> None:
    """Complex costs or duals lost their imaginary parts (a ComplexWarning, then column duals
    of the real parts); text and objects escaped as numpy's conversion errors."""
    from coplug.learned.rowdualnet import min_trick
    from coplug.plugins.errors import InputError

    c, u = np.array([[1.0, 2.0], [3.0, 4.0]]), np.zeros(2)
    if which == "c":
        c = _odd(c, bad)
    else:
        u = _odd(u, bad)
    what = "cost matrix c" if which == "c" else "row duals u"
    with pytest.raises(InputError, match=what):
        min_trick(c, u)


def test_row_features_scale_stays_finite_when_rows_have_tied_minima() -> None:
    """Rows whose 8 smallest costs tie fall back to the matrix's std as scale; np.std of costs
    near 1e153 overflowed, so the scale was inf, every feature 0 and every predicted dual
    -1.8e308 for costs of at most 1e153."""
    from coplug.learned.rowdualnet import load, row_features

    n = 100
    for magnitude in (1.0, 1e153):
        c = np.repeat(((np.arange(n) % 2) * magnitude)[:, None], n, axis=1)
        feats, minima, scale = row_features(c)
        assert 0 < scale <= magnitude
        assert np.isfinite(feats).all() and np.isfinite(minima).all()
        assert feats[0, 7] != feats[1, 7]  # rows 0 and 1 differ by their minima
        duals = load().predict_duals(c)
        assert np.abs(duals).max() <= 100 * magnitude


def test_failed_save_leaves_previous_checkpoint_loadable(tmp_path) -> None:
    """Metadata JSON cannot hold (a numpy int64) made save fail after it had replaced the
    weights but not the sidecar: the old sha256 then refused the new file, so a failed save
    broke the checkpoint it was meant to replace."""
    from coplug.learned.rowdualnet import RowDualNet, load, save

    path = tmp_path / "rowdualnet.pt"
    old = RowDualNet(hidden=4)
    save(old, path, {"run": 1})
    from coplug.plugins.errors import InputError

    with pytest.raises(InputError, match="metadata must be JSON data.*int64"):
        save(RowDualNet(hidden=8), path, {"run": np.int64(2)})
    c = np.random.default_rng(0).random((5, 5))
    loaded = load(path)
    assert loaded.hidden == 4
    assert np.array_equal(loaded.predict_duals(c), old.predict_duals(c))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rowdualnet.json", "rowdualnet.pt"]


def test_save_refuses_a_json_checkpoint_path(tmp_path) -> None:
    """save(model, "m.json", ...) wrote the weights, then overwrote them with the metadata
    sidecar (the same path), leaving a file load() calls corrupt."""
    from coplug.learned.rowdualnet import RowDualNet, save
    from coplug.plugins.errors import InputError

    with pytest.raises(InputError, match=r"\.json"):
        save(RowDualNet(hidden=4), tmp_path / "m.json", {"run": 1})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("precision", ["double", "half"])
def test_predict_duals_follows_the_network_precision(precision: str) -> None:
    """A RowDualNet cast with .double() (or .half()) failed inside torch: "mat1 and mat2 must
    have the same dtype", since the features were always float32."""
    from coplug.learned.rowdualnet import RowDualNet

    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = RowDualNet(hidden=4)
    c = np.random.default_rng(1).random((6, 6))
    reference = net.predict_duals(c)
    cast = getattr(net, precision)()
    duals = cast.predict_duals(c)
    assert duals.dtype == np.float64 and duals.shape == (6,)
    assert np.allclose(duals, reference, atol=1e-2)
    assert solve_lap(c, predictor=cast).cost == pytest.approx(_scipy_cost(c), rel=1e-12)
