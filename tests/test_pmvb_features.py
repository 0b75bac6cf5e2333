"""PMVB root features: one problem gets one feature vector per variable, however written,
and a checkpoint trained on other features says so when loaded."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import FAMILIES, build_family
from coplug.learned.pmvb_features import FEATURE_NAMES, FEATURE_VERSION, RootFeatureRecorder
from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor, shipped_checkpoint
from coplug.plugins import solve

PLAIN_ROOT = {"limits/nodes": 1, "presolving/maxrounds": 0, "separating/maxroundsroot": 0}


def _features(model: pyo.ConcreteModel) -> dict[str, np.ndarray]:
    """Root features by variable name, from a one-node SCIP solve without presolve or cuts,
    so the features are read at the model's own (unique) LP optimum."""
    recorder = RootFeatureRecorder()
    solve(model, plugins=[recorder], options=PLAIN_ROOT)
    assert len(recorder.variables) > 0
    return {v.name: f for v, f in zip(recorder.variables, recorder.features, strict=True)}


def _as_minimisation(model: pyo.ConcreteModel) -> pyo.ConcreteModel:
    """The same model with its max c'x objective rewritten as min -c'x."""
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    assert objective.sense == pyo.maximize
    objective.deactivate()
    model.as_min = pyo.Objective(expr=-objective.expr, sense=pyo.minimize)
    return model


@pytest.mark.parametrize(("family", "size"), [("mknapsack", 30), ("cauction", 30)])
def test_max_and_min_forms_get_the_same_features(family: str, size: int) -> None:
    """Reduced cost used to follow the model's sense (PySCIPOpt negates it for a max) while
    the objective feature is in minimisation form: mknapsack differed by 0.4."""
    as_max = _features(build_family(family, size, 3))
    as_min = _features(_as_minimisation(build_family(family, size, 3)))
    assert as_max.keys() == as_min.keys()
    redcost = FEATURE_NAMES.index("redcost_norm")
    assert any(abs(f[redcost]) > 1e-3 for f in as_max.values())  # the feature is exercised
    for name, row in as_max.items():
        assert np.allclose(row, as_min[name], atol=1e-9), name


def _tied_knapsack(order: list[int], flip_rows: bool = False) -> pyo.ConcreteModel:
    """A 5-row multi-dimensional knapsack whose values come in three tied levels, items
    declared in `order`; random weights make the root LP optimum unique and fractional.
    `flip_rows` writes each row a x <= b as -a x >= -b."""
    rng = np.random.default_rng(7)
    weights = rng.integers(1, 1001, (5, len(order)))
    values = {i: 700.0 + 50.0 * (i % 3) for i in order}
    model = pyo.ConcreteModel()
    model.x = pyo.Var(order, domain=pyo.Binary)

    def row(m: pyo.ConcreteModel, k: int) -> object:
        load = sum(float(weights[k, i]) * m.x[i] for i in order)
        capacity = 0.5 * float(weights[k].sum())
        return -load >= -capacity if flip_rows else load <= capacity

    model.rows = pyo.Constraint(range(5), rule=row)
    model.obj = pyo.Objective(expr=sum(values[i] * model.x[i] for i in order),
                              sense=pyo.maximize)
    return model


def test_features_do_not_depend_on_variable_order() -> None:
    """Tied objective coefficients used to be ranked by position (indset's are all tied)."""
    items = list(range(30))
    forward = _features(_tied_knapsack(items))
    backward = _features(_tied_knapsack(items[::-1]))
    for name, row in forward.items():
        assert np.allclose(row, backward[name], atol=1e-9), name
    rank = FEATURE_NAMES.index("obj_rank")
    levels = {name[2:-1]: round(float(f[rank]), 9) for name, f in forward.items()}
    expected = {0: 24.5 / 29, 1: 14.5 / 29, 2: 4.5 / 29}  # min form: -700 > -750 > -800
    for i in items:
        assert levels[str(i)] == pytest.approx(expected[i % 3])


def _saved(tmp_path: Path, meta: dict) -> Path:
    """A fitted logreg checkpoint with train_pmvb-style metadata `meta` beside it."""
    rng = np.random.default_rng(0)
    X = rng.random((200, len(FEATURE_NAMES)))
    y = (X[:, 2] > 0.5).astype(int)
    path = PMVBPredictor(kind="logreg").fit(X, y).save(tmp_path / "p.joblib")
    path.with_suffix(".json").write_text(json.dumps(meta))
    return path


def test_checkpoint_of_older_features_warns(tmp_path: Path) -> None:
    path = _saved(tmp_path, {"features": list(FEATURE_NAMES), "threshold": 0.9})
    with pytest.warns(UserWarning, match=r"version 1, this coplug computes version 2"):
        load_predictor(path)


@pytest.mark.parametrize("meta", [{"features": list(FEATURE_NAMES),
                                   "feature_version": FEATURE_VERSION}, {"threshold": 0.9}])
def test_current_or_unknown_checkpoint_loads_quietly(tmp_path: Path, meta: dict) -> None:
    """The current version, or a JSON train_pmvb did not write, gives no warning."""
    path = _saved(tmp_path, meta)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_predictor(path)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_shipped_checkpoints_use_the_current_features(family: str) -> None:
    for kind in ("logreg", "gbt", "mlp"):
        path = shipped_checkpoint(family, kind)
        meta = json.loads(path.with_suffix(".json").read_text())
        assert meta["feature_version"] == FEATURE_VERSION and meta["features"] == list(
            FEATURE_NAMES)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            load_predictor(path)


def test_a_row_reads_the_same_in_either_direction() -> None:
    """a x <= b written as -a x >= -b used to flip the signs of the column statistics."""
    items = list(range(30))
    as_le = _features(_tied_knapsack(items))
    as_ge = _features(_tied_knapsack(items, flip_rows=True))
    for name, row in as_le.items():
        assert np.allclose(row, as_ge[name], atol=1e-9), name


def _paid_elsewhere(factor: float) -> pyo.ConcreteModel:
    """A small MIP whose objective (times `factor`) lies on integer and continuous
    variables only: its binaries have no objective coefficient."""
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(6), domain=pyo.Binary)
    m.i = pyo.Var(range(3), domain=pyo.Integers, bounds=(-5, 7))
    m.y = pyo.Var(range(3), bounds=(0, 10))
    m.one = pyo.Constraint(expr=m.b[0] + m.b[1] + m.b[2] == 1)
    m.span = pyo.Constraint(expr=pyo.inequality(1, 2 * m.b[3] + 3 * m.b[4] - m.i[0] + m.y[0], 6))
    m.link = pyo.Constraint(expr=m.y[1] + m.y[2] <= 7 * m.b[5] + m.i[1])
    m.least = pyo.Constraint(expr=sum(m.i[k] for k in range(3)) + m.b[5] >= 2.5)
    m.pack = pyo.Constraint(expr=3 * m.b[0] + 5 * m.b[1] + 7 * m.b[2] + 4 * m.b[3]
                            + 6 * m.b[4] + 8 * m.b[5] + 2 * m.i[2] <= 13.5)
    m.obj = pyo.Objective(expr=factor * (0.7 * m.y[0] + 1.1 * m.y[1] + 0.9 * m.y[2]
                                         + 0.4 * sum(m.i[k] for k in range(3))),
                          sense=pyo.maximize)
    return m


def test_features_are_scale_free_without_objective_on_the_binaries() -> None:
    """With the objective on other variables only, the reduced cost was divided by 1e-9:
    a binary's reached -4.7e9 and moved with the objective's scale."""
    unit = _features(_paid_elsewhere(1.0))
    redcost = FEATURE_NAMES.index("redcost_norm")
    assert any(abs(f[redcost]) > 1e-3 for f in unit.values())
    assert all(abs(f[redcost]) <= 100.0 for f in unit.values())
    for factor in (1e-3, 10.0):
        scaled = _features(_paid_elsewhere(factor))
        for name, row in unit.items():
            assert np.allclose(row, scaled[name], atol=1e-7), (factor, name)


@pytest.mark.parametrize(("meta", "message"), [
    ({"features": list(FEATURE_NAMES), "feature_version": "2"}, r"'2', not a version number"),
    ({"features": list(FEATURE_NAMES), "feature_version": True}, r"True, not a version number"),
    ({"feature_version": 1}, r"version 1, this coplug computes version 2"),
])
def test_a_malformed_or_older_version_is_named(tmp_path: Path, meta: dict, message: str
                                                ) -> None:
    """The string "2" was reported as "version 2, this coplug computes version 2"; a JSON
    with only feature_version 1 loaded quietly."""
    path = _saved(tmp_path, meta)
    with pytest.warns(UserWarning, match=message):
        load_predictor(path)


def test_the_warning_points_at_the_callers_line(tmp_path: Path) -> None:
    """Through PMVBBranching(path) the warning named a line inside coplug."""
    from coplug.plugins.pmvb import PMVBBranching

    path = _saved(tmp_path, {"features": list(FEATURE_NAMES), "threshold": 0.9})
    with pytest.warns(UserWarning, match="version 1") as caught:
        PMVBBranching(path, threshold=0.9, confidence=0.9)
    assert [w.filename for w in caught] == [__file__]


def test_rescore_refuses_a_checkpoint_of_older_features(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--rescore recomputed an old checkpoint's figures on new features and kept its JSON
    saying version 1 (t, q and grid from the old data)."""
    from coplug.learned import train_pmvb

    args = ["--family", "mknapsack", "--n-train", "3", "--n-val", "2", "--size", "22",
            "--kinds", "logreg", "--quiet", "--out-dir", str(tmp_path)]
    assert train_pmvb.main(args) == 0
    meta_path = tmp_path / "pmvb_mknapsack_logreg.json"
    meta = json.loads(meta_path.read_text())
    assert meta["feature_version"] == FEATURE_VERSION
    del meta["feature_version"]
    meta_path.write_text(json.dumps(meta))
    assert train_pmvb.main([*args, "--rescore"]) == 2
    err = capsys.readouterr().err
    assert "root features of version 1" in err and "retrain instead" in err
    assert json.loads(meta_path.read_text()) == meta
