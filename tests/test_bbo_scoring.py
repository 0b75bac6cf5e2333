"""Landscape features and the solver portfolio: invariances, budgets, differentiation."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.features import (
    FEATURE_NAMES,
    as_box_function,
    ela_features,
    feature_distance,
    normalized_features,
)
from coplug.formulations.bbo.portfolio import (
    SOLVERS,
    PortfolioResult,
    differentiation,
    min_runs_for_significance,
    run_portfolio,
    run_solver,
)
from coplug.formulations.bbo.pyomo_model import to_pyomo
from coplug.formulations.bbo.validate import load
from coplug.plugins.errors import InputError


def test_features_are_affine_invariant_and_separate_landscapes() -> None:
    sphere = load("sum((x - [1.0, -2.0]) ** 2)", 2)
    scaled = load("7.0 + 3.0 * sum((x - [1.0, -2.0]) ** 2)", 2)
    rastrigin = bbob_problem(3, 2)
    a, b = normalized_features(sphere), normalized_features(scaled)
    c = normalized_features(rastrigin)
    assert a.shape == (len(FEATURE_NAMES),)
    np.testing.assert_allclose(a, b, atol=1e-9)
    assert feature_distance(a, c) > 0.1
    raw = ela_features(as_box_function(sphere), 100)
    assert raw[FEATURE_NAMES.index("fdc")] > 0.9
    assert raw[FEATURE_NAMES.index("quad_r2")] == pytest.approx(1.0)
    basins = FEATURE_NAMES.index("basins")
    assert raw[basins] < ela_features(as_box_function(rastrigin), 100)[basins] / 2


def test_callable_and_pyomo_targets_match_the_program() -> None:
    program = bbob_problem(8, 2).program
    from coplug.formulations.bbo.evaluate import numpy_evaluator

    f = numpy_evaluator(program)
    ref = normalized_features(program)
    np.testing.assert_allclose(normalized_features(f, dim=2), ref, atol=1e-12)
    np.testing.assert_allclose(normalized_features(lambda x: float(f(x[None])[0]), dim=2), ref,
                               atol=1e-12)
    np.testing.assert_allclose(normalized_features(to_pyomo(program)), ref, atol=1e-9)


def test_bad_targets_are_named() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.o = pyo.Objective(expr=m.x**2)
    with pytest.raises(InputError, match="finite bounds"):
        as_box_function(m)
    with pytest.raises(InputError, match="dim="):
        as_box_function(lambda x: x)
    with pytest.raises(InputError, match="cannot use"):
        as_box_function(3.0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_each_solver_respects_budget_and_finds_sphere_minimum(solver: str) -> None:
    calls = []

    def sphere(X: np.ndarray) -> np.ndarray:
        calls.append(len(X))
        return ((X - 1.0) ** 2).sum(axis=1)

    fn = as_box_function(sphere, dim=2)
    best = run_solver(solver, fn, budget=150, seed=1)
    assert sum(calls) <= 150
    assert 0.0 <= best < {"random": 0.5, "lipschitz": 0.05}.get(solver, 1e-2)


def test_differentiation_scores_separation_with_significance() -> None:
    seeds = 5
    apart = PortfolioResult(("a", "b", "c"), np.array([[0.0] * seeds, [1.0] * seeds,
                                                      [2.0 + 0.1 * np.arange(seeds)][0]]), 0.0)
    tied = PortfolioResult(("a", "b", "c"), np.zeros((3, seeds)), 0.0)
    noisy = PortfolioResult(("a", "b"), np.array([[0, 2, 0, 2, 1.0], [2, 0, 2, 0, 1.0]]), 0.0)
    d = differentiation(apart)
    assert d.significant_pairs == 3 and d.score > 0.3
    assert d.mean_ranks["a"] < d.mean_ranks["b"] < d.mean_ranks["c"]
    assert differentiation(tied).score == 0.0
    assert differentiation(noisy).score == 0.0


def test_portfolio_separates_solvers_on_rastrigin() -> None:
    fn = as_box_function(bbob_problem(3, 2))
    result = run_portfolio(fn, budget=80, seeds=range(4))
    assert result.values.shape == (len(SOLVERS), 4)
    assert result.best_value >= bbob_problem(3, 2).f_opt - 1e-9
    assert differentiation(result).score > 0.0


@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_min_runs_is_the_first_count_that_can_separate_two_solvers(alpha: float) -> None:
    need = min_runs_for_significance(alpha)

    def separated(runs: int, tied: bool) -> PortfolioResult:
        low = np.zeros(runs) if tied else np.arange(runs, dtype=float)
        return PortfolioResult(("a", "b"), np.array([low, low + runs + 1.0]), 0.0)

    assert differentiation(separated(need, tied=True), alpha=alpha).score > 0.0
    for tied in (True, False):
        assert differentiation(separated(need - 1, tied), alpha=alpha).score == 0.0
