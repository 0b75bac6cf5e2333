"""PMVB and the LAP heuristic check what they are given before SCIP runs, and a predictor
whose answer is not probabilities is reported, never silently clipped into hyperplanes."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations.mip_families import build_family
from coplug.learned.pmvb_predictors import PMVBPredictor, shipped_checkpoint
from coplug.plugins import solve
from coplug.plugins.errors import InputError
from coplug.plugins.lap.heuristic import LapHeuristic
from coplug.plugins.pmvb import PMVBBranching


class ConstantPredictor:
    """Answers `value` for every variable, whatever it is."""

    def __init__(self, value: float) -> None:
        self.value = value

    def predict_variables(self, scip, variables):
        return np.full(len(variables), self.value)


def test_a_checkpoint_fitted_on_other_features_is_refused_by_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    path = tmp_path / "five.joblib"
    PMVBPredictor().fit(X, (X[:, 0] > 0).astype(int)).save(path)
    with pytest.raises(InputError, match="fitted on 5 features"):
        PMVBBranching(path)


@pytest.mark.parametrize("value", [np.nan, 5.0, -3.0, np.inf])
def test_answers_that_are_not_probabilities_are_reported_and_not_used(value: float) -> None:
    model = build_family("mknapsack", 20, seed=7)
    expected = solve(model).objective
    with pytest.warns(RuntimeWarning, match="not in \\[0, 1\\]"):
        result = solve(model, plugins=[PMVBBranching(ConstantPredictor(value))])
    stats = result.plugin_stats["pmvb"]
    assert not stats["root_branched"] and "not in [0, 1]" in stats["error"]
    assert result.objective == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("meta", "message"), [
    ('{"threshold": "x"}', "threshold t must be a number, got 'x'"),
    ('{"confidence": null}', "confidence q must be a number, got None"),
    ("[0.9, 0.99]", "must be a JSON object, got list"),
    ('{"threshold": 2.0}', "threshold t must lie in"),
])
def test_a_bad_checkpoint_json_names_the_file(tmp_path: Path, meta: str, message: str) -> None:
    path = tmp_path / "ck.joblib"
    shutil.copy(shipped_checkpoint("mknapsack", "logreg"), path)
    path.with_suffix(".json").write_text(meta)
    with pytest.raises(InputError, match=f"metadata {tmp_path / 'ck.json'}.*{message}"):
        PMVBBranching(path)


def test_pmvb_arguments_are_named() -> None:
    with pytest.raises(InputError, match="threshold t must be a number, got 'abc'"):
        PMVBBranching("lp", threshold="abc")
    with pytest.raises(InputError, match="threshold t must be a number, got True"):
        PMVBBranching("lp", threshold=True)
    with pytest.raises(InputError, match="confidence q must be a number"):
        PMVBBranching("lp", confidence=[0.5])
    with pytest.raises(InputError, match="empty string"):
        PMVBBranching("")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_calls": "5"}, "max_calls must be an integer"),
    ({"max_calls": 2.5}, "max_calls must be an integer"),
    ({"freq": 1.5}, "freq must be an integer"),
    ({"priority": float("nan")}, "priority must be an integer"),
    ({"priority": 2**40}, "priority must be an integer in"),
    ({"guidance": float("nan")}, "guidance must be a finite number"),
])
def test_lap_heuristic_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        LapHeuristic(**kwargs)


def test_two_lap_heuristics_in_one_solve_is_a_clear_error() -> None:
    from coplug.formulations.tsp import random_euclidean, tsp_mip

    model = tsp_mip(random_euclidean(6, seed=1).dist)
    with warnings.catch_warnings(), pytest.raises(InputError, match="one LapHeuristic per solve"):
        warnings.simplefilter("ignore")
        solve(model, plugins=[LapHeuristic(), LapHeuristic()])
