"""PMVB regressions from review session 19: predictors fitted on other labels than 0/1, or
passed as a class, are refused when the rule is built; a predictor is not asked about zero
variables (a model without binaries); train_pmvb --rescore names a broken checkpoint JSON
instead of a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import build_family
from coplug.learned import train_pmvb
from coplug.learned.pmvb_features import FEATURE_NAMES
from coplug.learned.pmvb_predictors import PMVBPredictor, checkpoint_name, shipped_checkpoint
from coplug.plugins import InputError, solve
from coplug.plugins.pmvb import PMVBBranching
from coplug.plugins.pmvb_cli import resolve_predictor


def _data(n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Root-feature-shaped rows with 0/1 labels from the first column."""
    X = np.random.default_rng(0).normal(size=(n, len(FEATURE_NAMES)))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("labels", [(3, 7), (-1, 1), ("no", "yes")])
def test_rule_refuses_a_predictor_fitted_on_other_labels(labels: tuple, tmp_path: Path) -> None:
    X, y = _data()
    predictor = PMVBPredictor().fit(X, np.array(labels)[y])
    with pytest.raises(InputError, match="fitted on 0/1 labels"):
        PMVBBranching(predictor)
    path = predictor.save(tmp_path / "other_labels.joblib")
    with pytest.raises(InputError, match="fitted on 0/1 labels"):
        PMVBBranching(path)
    assert PMVBBranching(PMVBPredictor().fit(X, y)).predictor is not None  # 0/1 still fine


def test_cli_refuses_a_checkpoint_fitted_on_other_labels_before_solving(tmp_path: Path) -> None:
    X, y = _data()
    path = PMVBPredictor().fit(X, np.array([3, 7])[y]).save(tmp_path / "other_labels.joblib")
    with pytest.raises(InputError, match="fitted on 0/1 labels"):
        resolve_predictor(str(path), "mknapsack")
    good = PMVBPredictor().fit(X, y).save(tmp_path / "good.joblib")
    assert resolve_predictor(str(good), "mknapsack")[0] is not None


@pytest.mark.parametrize("content", [
    "not json",
    "[1, 2]",
    "{}",
    '{"size": 30, "seed": 0, "n_train": 150, "n_val": 37, "val_instances_used": 36}',
    '{"size": 30, "seed": "0", "n_train": 150, "n_val": 37, "val_instances_used": 36, '
    '"val_rows": 1030}',
    '{"size": 30, "seed": -5, "n_train": 2, "n_val": 1, "val_instances_used": 1, '
    '"val_rows": 8}',
])
def test_rescore_names_a_broken_checkpoint_json(
    content: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    source = shipped_checkpoint("mknapsack", "logreg")
    target = tmp_path / checkpoint_name("mknapsack", "logreg")
    shutil.copy(source, target)
    target.with_suffix(".json").write_text(content)
    code = train_pmvb.main(["--family", "mknapsack", "--kinds", "logreg", "--rescore",
                            "--out-dir", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "train_pmvb: error:" in err and target.with_suffix(".json").name in err
    assert target.with_suffix(".json").read_text() == content  # nothing rewritten
    assert json.loads(source.with_suffix(".json").read_text())["kind"] == "logreg"


class _HalfPredictor:
    """A duck-typed predictor: every binary is a coin flip."""

    def predict_variables(self, scip: object, variables: list) -> np.ndarray:
        return np.full(len(variables), 0.5)


@pytest.mark.parametrize("cls", [PMVBPredictor, _HalfPredictor])
def test_rule_refuses_a_predictor_class_instead_of_an_instance(cls: type) -> None:
    with pytest.raises(InputError, match=f"{cls.__name__} is a class"):
        PMVBBranching(cls)
    assert PMVBBranching(_HalfPredictor()).predictor is not None


class _SklearnLikePredictor:
    """Refuses zero rows as scikit-learn models do; records how many variables it was asked."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def predict_variables(self, scip: object, variables: list) -> np.ndarray:
        self.asked.append(len(variables))
        if not variables:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required")
        return np.full(len(variables), 0.5)


def _general_integers(seed: int = 1) -> pyo.ConcreteModel:
    """A pure integer program over [-20, 20] (no binaries) that SCIP branches on."""
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.n = pyo.Var(range(14), domain=pyo.Integers, bounds=(-20, 20))
    m.c = pyo.ConstraintList()
    for _ in range(8):
        m.c.add(sum(float(rng.integers(-9, 10)) * m.n[j] for j in range(14))
                <= float(rng.integers(5, 30)) + 0.5)
    m.o = pyo.Objective(expr=sum((float(rng.integers(-9, 10)) + 0.37 * j) * m.n[j]
                                 for j in range(14)), sense=pyo.maximize)
    return m


def test_predictor_is_not_asked_about_zero_variables(recwarn: pytest.WarningsRecorder) -> None:
    reference = solve(_general_integers())
    predictor = _SklearnLikePredictor()
    rule = PMVBBranching(predictor, depth=5)
    result = solve(_general_integers(), plugins=[rule])
    assert rule.statistics()["calls"] > 0  # SCIP branches, so the rule is consulted
    assert result.optimal and result.objective == pytest.approx(reference.objective)
    assert rule.statistics()["error"] is None and 0 not in predictor.asked
    assert not [w for w in recwarn if "PMVB predictor failed" in str(w.message)]


@pytest.mark.parametrize("family", [["mknapsack"], {"mknapsack": 1}, None, 3])
def test_build_family_names_a_family_that_is_not_a_name(family: object) -> None:
    with pytest.raises(InputError, match="unknown MIP family"):
        build_family(family, 10)
    assert build_family("mknapsack", 10).name == "mknapsack"
