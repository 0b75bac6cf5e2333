"""PMVB regressions from a review: prefix mode under SCIP restarts and limits, and clear
errors for predictors, probabilities, depth and checkpoint paths."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.learned.pmvb_predictors import PMVBPredictor, shipped_checkpoint
from coplug.plugins import InputError, Status, solve
from coplug.plugins.pmvb import PMVBBranching
from coplug.plugins.pmvb_prefix import solve_pmvb_prefix

RESTARTS_EARLY = {"estimation/restarts/minnodes": 10, "estimation/restarts/restartlimit": 5}


def _knapsack(seed: int = 4, n: int = 40) -> pyo.ConcreteModel:
    """A 4-dimensional knapsack (maximize) on which SCIP restarts in the tree early."""
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    w = rng.integers(10, 100, (4, n))
    m.cap = pyo.Constraint(range(4), rule=lambda m, i: sum(
        int(w[i, j]) * m.x[j] for j in range(n)) <= int(w[i].sum() // 2))
    value = w.sum(axis=0) / 4 + rng.integers(0, 20, n)
    m.o = pyo.Objective(expr=sum(float(value[j]) * m.x[j] for j in range(n)),
                        sense=pyo.maximize)
    return m


def _wrong_prediction(model: pyo.ConcreteModel) -> dict[str, float]:
    """Six items of the optimum at p=1 and one at p=0: the likely region misses the optimum."""
    ones = [v.name for v in model.x.values() if round(v.value) == 1]
    return {name: 1.0 for name in ones[1:7]} | {ones[0]: 0.0}


def test_prefix_keeps_the_optimum_when_scip_would_restart_in_the_likely_region() -> None:
    reference = _knapsack(seed=2, n=30)
    plain = solve(reference, **RESTARTS_EARLY)
    probs = _wrong_prediction(reference)
    prefix = solve_pmvb_prefix(_knapsack(seed=2, n=30), probs, 0.9, 0.8, **RESTARTS_EARLY)
    assert prefix.status is Status.OPTIMAL
    assert prefix.objective == pytest.approx(plain.objective, rel=1e-9)


def test_the_likely_only_rule_branches_once_across_a_restart() -> None:
    # SCIP restarts after the likely child became its root and calls the rule at the new
    # root; branching again there would leave part of the likely region unsearched
    reference = _knapsack(seed=2, n=30)
    solve(reference)
    rule = PMVBBranching(_wrong_prediction(reference), 0.9, 0.8)
    rule.only_likely = True
    solve(_knapsack(seed=2, n=30), plugins=[rule], **RESTARTS_EARLY)
    stats = rule.statistics()
    assert stats["calls"] >= 2 and stats["branchings"] == 1
    branched = PMVBBranching(_wrong_prediction(reference), 0.9, 0.8)
    solve(_knapsack(seed=2, n=30), plugins=[branched], **RESTARTS_EARLY)
    assert len(branched.children) <= 3  # the latest root branching only


def test_prefix_under_a_node_limit_reports_the_limit_and_a_valid_bound() -> None:
    optimum = solve(_knapsack(seed=1, n=30)).objective
    result = solve_pmvb_prefix(_knapsack(seed=1, n=30), "lp", 0.9, 0.5, **{"limits/nodes": 2})
    assert result.status in (Status.NODE_LIMIT, Status.OPTIMAL)
    if result.status is Status.NODE_LIMIT:
        assert result.bound is None or result.bound >= optimum - 1e-6  # maximize
        assert result.objective is None or result.objective <= optimum + 1e-6


def test_prefix_takes_no_plugins() -> None:
    with pytest.raises(InputError, match="takes no plugins"):
        solve_pmvb_prefix(_knapsack(n=10), plugins=[])


def test_unfitted_or_wrong_width_predictors_are_refused() -> None:
    with pytest.raises(InputError, match="not fitted"):
        PMVBBranching(PMVBPredictor())
    X = np.random.default_rng(0).normal(size=(60, 5))
    fitted = PMVBPredictor().fit(X, (X[:, 0] > 0).astype(int))
    with pytest.raises(InputError, match="fitted on 5 features"):
        PMVBBranching(fitted)


@pytest.mark.parametrize("bad", [{"depth": math.inf}, {"depth": 2**31}, {"depth": -1},
                                 {"depth": 1.5}, {"priority": 2**31}])
def test_depth_and_priority_must_be_scip_ints(bad: dict) -> None:
    with pytest.raises(InputError, match=next(iter(bad))):
        PMVBBranching("lp", **bad)


@pytest.mark.parametrize("path", [".", "/"])
def test_a_directory_is_not_a_checkpoint(path: str) -> None:
    with pytest.raises(InputError, match="directory"):
        PMVBBranching(path)


@pytest.mark.parametrize("value", [None, "high", np.array([0.9])])
def test_probabilities_must_be_numbers(value: object) -> None:
    with pytest.raises(InputError, match="must be a number"):
        solve(_knapsack(n=10), plugins=[PMVBBranching({"x[0]": value})])


def test_probabilities_for_non_binaries_are_refused() -> None:
    m = _knapsack(n=10)
    m.z = pyo.Var(domain=pyo.Integers, bounds=(0, 5))
    m.extra = pyo.Constraint(expr=m.z + m.x[0] <= 4)
    with pytest.raises(InputError, match="z .*is not one"):
        solve(m, plugins=[PMVBBranching({"z": 0.99})])


def test_fit_names_missing_labels() -> None:
    with pytest.raises(InputError, match="shape"):
        PMVBPredictor().fit(np.zeros((4, 3)), None)


def test_shipped_checkpoint_names_what_exists() -> None:
    with pytest.raises(InputError, match="shipped: .*setcover"):
        shipped_checkpoint("nosuch", "logreg")
    with pytest.raises(InputError, match="kind"):
        shipped_checkpoint("setcover", "svm")
    assert shipped_checkpoint("setcover", "mlp").is_file()


def test_predict_breaks_ties_toward_class_zero_like_sklearn() -> None:
    class Half(PMVBPredictor):
        def predict_proba(self, X: np.ndarray) -> np.ndarray:
            return np.full((len(X), 2), 0.5)

    assert Half().predict(np.zeros((3, 2))).tolist() == [0, 0, 0]
