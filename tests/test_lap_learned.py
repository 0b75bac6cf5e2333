"""RowDualNet: N-independent features, Min-Trick feasibility, exact warm solves, the shipped
checkpoint, and the training script end to end on tiny data."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.learned import rowdualnet, train_rowdual
from coplug.learned.rowdualnet import N_FEATURES, load, min_trick, row_features
from coplug.plugins.errors import InputError
from coplug.plugins.lap.solver import solve_lap


@pytest.mark.parametrize("n", [3, 50, 400])
def test_features_have_fixed_width_for_any_n(n: int) -> None:
    feats, s1, scale = row_features(generate("uniform", n, seed=n))
    assert feats.shape == (n, N_FEATURES) and np.isfinite(feats).all() and scale > 0
    assert np.all(feats[:, : rowdualnet.K_SMALLEST - 1] >= 0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_features_reject_non_finite_costs_naming_the_row(bad: float) -> None:
    c = generate("uniform", 30, seed=2)
    c[7, 11] = bad
    with pytest.raises(InputError, match="cost row 7 has a NaN or infinite entry"):
        load().predict_duals(c)


def test_min_trick_of_predicted_duals_is_feasible() -> None:
    c = generate("low_rank", 200, seed=1)
    u = load().predict_duals(c)
    v = min_trick(c, u)
    assert (u[:, None] + v[None, :] <= c + 1e-12).all()
    assert np.isclose(u[:, None] + v[None, :], c).any(axis=0).all()  # every column tight


@pytest.mark.parametrize("name", ["geometric", "transport"])
def test_shipped_model_warm_start_is_exact(name: str) -> None:
    c = generate(name, 300, seed=11)
    sol = solve_lap(c, row_duals=load().predict_duals(c))
    r, k = linear_sum_assignment(c)
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


def test_shipped_checkpoint_is_small_and_documented() -> None:
    from pathlib import Path

    import coplug.models

    folder = Path(coplug.models.__file__).parent
    assert (folder / "rowdualnet.pt").stat().st_size < 1_000_000
    meta = json.loads((folder / "rowdualnet.json").read_text())
    assert {"generators", "sizes", "epochs", "held_out", "held_out_warm", "command"} <= set(meta)


def test_training_script_end_to_end(tmp_path) -> None:
    out = tmp_path / "my runs" / "rdn.pt"  # the recorded command quotes the space
    argv = ["--quick", "--generators", "uniform", "geometric", "--out", str(out)]
    assert train_rowdual.main(argv) == 0
    model = load(out)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["generators"] == ["uniform", "geometric"] and meta["instances"] == 8
    assert shlex.split(meta["command"]) == ["python", "-m", "coplug.learned.train_rowdual",
                                            *argv]
    c = generate("geometric", 60, seed=5)
    r, k = linear_sum_assignment(c)
    assert solve_lap(c, row_duals=model.predict_duals(c)).cost == pytest.approx(c[r, k].sum())


def test_missing_checkpoint_is_named(tmp_path) -> None:
    from coplug.plugins.errors import InputError

    with pytest.raises(InputError, match="not found"):
        load(tmp_path / "nope.pt")


class _Recorder:
    """A predictor that returns fixed duals and counts its calls."""

    def __init__(self, duals) -> None:
        self.duals, self.calls = duals, 0

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        self.calls += 1
        return self.duals(c) if callable(self.duals) else self.duals


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.parametrize("name", ["uniform", "low_rank", "transport"])
@pytest.mark.parametrize("maximize", [False, True])
def test_predictor_path_is_exact_and_uses_the_prediction(name: str, maximize: bool) -> None:
    c = generate(name, 120, seed=3)
    sol = solve_lap(c, maximize=maximize, predictor=load())
    r, k = linear_sum_assignment(c, maximize=maximize)
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)
    if not maximize:  # column reduction leaves over 10% of these rows free
        assert sol.warm and sol.info["prediction"] == "used" and sol.info["inference_s"] > 0


def test_predictor_is_skipped_when_column_reduction_nearly_solves() -> None:
    c = generate("geometric", 400, seed=2)
    spy = _Recorder(lambda c: np.zeros(len(c)))
    sol = solve_lap(c, predictor=spy)
    r, k = linear_sum_assignment(c)
    assert spy.calls == 0 and not sol.warm and sol.info["prediction"].startswith("skipped")
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


@pytest.mark.parametrize(("name", "n", "asked"), [
    ("uniform", 300, False), ("transport", 300, False), ("low_rank", 300, True),
    ("uniform", 1024, True),
])
def test_predictor_is_asked_from_min_rows_or_where_column_reduction_drops(
    name: str, n: int, asked: bool
) -> None:
    """Small uniform and transport costs go on cold from column reduction; low-rank costs,
    whose reduction is dropped, are predicted at any size, and every size from 1024 rows."""
    c = generate(name, n, seed=4)
    spy = _Recorder(lambda c: c.min(axis=1))
    sol = solve_lap(c, predictor=spy)
    r, k = linear_sum_assignment(c)
    assert spy.calls == int(asked) and sol.warm is asked
    assert sol.info["prediction"] == "used" if asked else "rows, under 1024" in sol.info[
        "prediction"]
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


def test_rectangular_costs_skip_the_predictor_but_take_adversarial_duals_exactly() -> None:
    """Padded to a square, predicted duals cost far more than a cold solve (2000x3999: 0.03 s
    cold, 10 s predicted), so a predictor is skipped there; given duals are still used."""
    c = generate("uniform", 30, m=45, seed=4)
    duals = np.random.default_rng(0).normal(scale=100.0, size=len(c))
    spy = _Recorder(lambda c: duals)
    r, k = linear_sum_assignment(c)
    sol = solve_lap(c, predictor=spy)
    assert spy.calls == 0 and not sol.warm and "not square" in sol.info["prediction"]
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)
    given = solve_lap(c, row_duals=duals)
    assert given.warm and given.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.parametrize(
    ("predictor", "match"),
    [
        (_Recorder(np.zeros(3)), "predictor's row duals must have one value per row"),
        (_Recorder(np.full(8, np.nan)), "predictor's row duals must be finite"),
        (object(), "predictor must have a predict_duals"),
        (_Recorder(None), "returned None"),
    ],
)
def test_bad_predictors_are_named(predictor, match: str) -> None:
    from coplug.plugins.errors import InputError

    c = generate("low_rank", 8, seed=0)
    with pytest.raises(InputError, match=match):
        solve_lap(c, predictor=predictor)


def test_row_duals_and_predictor_together_are_refused() -> None:
    from coplug.plugins.errors import InputError

    with pytest.raises(InputError, match="not both"):
        solve_lap(np.eye(3), row_duals=np.zeros(3), predictor=load())


@pytest.mark.usefixtures("predict_any_size")
def test_predictor_path_is_exact_on_costs_far_below_one() -> None:
    c = generate("transport", 300, seed=3) * 1e-13
    r, k = linear_sum_assignment(c)
    sol = solve_lap(c, predictor=load())
    assert sol.info["prediction"] == "used"
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-9, abs=0)


def test_prediction_on_costs_whose_squares_overflow_still_solves() -> None:
    # the row std summed x*x and overflowed above |c| ~ 1.3e154: an InputError, not a solve
    c = np.random.default_rng(4).uniform(0, 1, (30, 30)) * 1e160
    warm = solve_lap(c, predictor=load())
    rows, cols = linear_sum_assignment(c)
    assert warm.cost == pytest.approx(float(c[rows, cols].sum()), rel=1e-12)
    feats, s1, scale = row_features(c)
    unit_feats, unit_s1, unit_scale = row_features(c / 2.0**532)
    assert np.allclose(feats, unit_feats) and scale == pytest.approx(unit_scale * 2.0**532)


def test_mixed_scale_rows_give_finite_features_and_duals() -> None:
    c = np.array([[0.0, 1e-300], [1e10, 1e10]])
    feats, _, _ = row_features(c)
    assert np.isfinite(feats).all()
    assert np.isfinite(load().predict_duals(c)).all()


def test_min_trick_names_a_dual_vector_of_the_wrong_length() -> None:
    with pytest.raises(InputError, match="one dual per row"):
        min_trick(np.zeros((3, 3)), np.zeros(2))
