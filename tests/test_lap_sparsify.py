"""Reduced-cost sparsification of predicted warm starts: the pattern holds what it promises,
pricing adds the violated entries, the refined solve stays exact whatever the prediction,
and a start assignment is reused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.learned.rowdualnet import load
from coplug.plugins.lap import solver
from coplug.plugins.lap.solver import solve_lap
from coplug.plugins.lap.sparsify import price_pattern, reduced_cost_pattern
from coplug.plugins.lap.warmstart import min_trick, warm_state


class _Fixed:
    """A predictor returning the duals `make(c)`."""

    def __init__(self, make) -> None:
        self.make = make

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        return self.make(c)


def _optimum(c: np.ndarray) -> float:
    rows, cols = linear_sum_assignment(c)
    return float(c[rows, cols].sum())


@pytest.mark.parametrize(("n", "m", "k"), [(40, 40, 3), (30, 50, 5), (12, 12, 12)])
def test_pattern_holds_row_and_column_k_smallest_and_the_diagonal(n: int, m: int, k: int) -> None:
    rng = np.random.default_rng(n + m + k)
    c = rng.random((n, m))
    u = rng.normal(size=n)
    v = np.empty(m)
    min_trick(c, u, v)
    indptr, indices, data = reduced_cost_pattern(c, u, v, k)
    kept = np.zeros((n, m), dtype=bool)
    for i in range(n):
        row = indices[indptr[i]:indptr[i + 1]]
        assert (np.diff(row) > 0).all()  # sorted, no duplicates
        kept[i, row] = True
        assert np.array_equal(data[indptr[i]:indptr[i + 1]], c[i, row])
    r = c - u[:, None] - v[None, :]
    expected = np.zeros((n, m), dtype=bool)
    np.put_along_axis(expected, np.argsort(r, axis=1)[:, :k], True, axis=1)
    np.put_along_axis(expected, np.argsort(r, axis=0)[:k, :], True, axis=0)
    expected[np.arange(n), np.arange(n)] = True
    assert np.array_equal(kept, expected)


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.parametrize("name", ["uniform", "low_rank", "transport"])
def test_refined_prediction_is_exact_and_reported(name: str) -> None:
    c = generate(name, 150, seed=8)
    sol = solve_lap(c, predictor=load())
    assert sol.info["prediction"] == "used" and sol.info["sparse_s"] > 0
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12) and not sol.fallback


def _square(max_side: int = 16):
    """Square integer matrices with many ties and negative entries."""
    return st.integers(12, max_side).flatmap(
        lambda k: arrays(np.int64, (k, k), elements=st.integers(-4, 4))
    ).map(lambda a: a.astype(np.float64))


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.usefixtures("duals_reach_the_certificate")
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_square(), st.data())
def test_refinement_from_adversarial_duals_is_exact(monkeypatch, c: np.ndarray, data) -> None:
    """Any prediction, refined on a k = 2 pattern of tied costs, ends at scipy's optimum."""
    n = c.shape[0]
    duals = data.draw(arrays(np.float64, n, elements=st.floats(-50, 50, allow_nan=False)))
    with monkeypatch.context() as patch:
        patch.setattr(solver, "SPARSIFY_K", 2)
        patch.setattr(solver, "PREDICT_MIN_FREE", -1.0)  # always predict
        sol = solve_lap(c, predictor=_Fixed(lambda _: duals))
    assert sol.info["prediction"] == "used"
    # duals past n * max|c| (centred, the costs' offset taken off) are out of scale: the
    # solve falls back to cold, whose info has no refinement
    assert sol.info["sparse_s"] > 0 or sol.fallback
    assert sol.cost == pytest.approx(_optimum(c), abs=1e-9)


def test_optimal_start_with_its_duals_leaves_no_row_free() -> None:
    c = generate("uniform", 200, seed=3)
    exact = solve_lap(c)
    (u, v, col4row, _), _, _ = warm_state(c, exact.row_duals, exact.col_ind)
    assert np.array_equal(col4row, exact.col_ind)
    assert (u[:, None] + v[None, :] <= c + 1e-12).all()


def test_wrong_start_keeps_only_tight_edges_and_feasible_duals() -> None:
    c = generate("low_rank", 120, seed=4)
    start = np.random.default_rng(1).permutation(120)
    (u, v, col4row, row4col), _, _ = warm_state(c, np.zeros(120), start)
    assert (u[:, None] + v[None, :] <= c + 1e-12).all()
    matched = np.flatnonzero(col4row >= 0)
    assert np.allclose(c[matched, col4row[matched]], u[matched] + v[col4row[matched]])
    assert np.array_equal(row4col[col4row[matched]], matched)


def test_pricing_adds_each_rows_most_violated_missing_entries() -> None:
    rng = np.random.default_rng(7)
    n, k = 30, 3
    c = rng.random((n, n))
    u, v = rng.random(n), np.zeros(n)  # deliberately infeasible duals
    indptr, indices, _ = reduced_cost_pattern(c, np.zeros(n), c.min(axis=0), 2)
    new_indptr, new_indices, data, violations = price_pattern(c, u, v, indptr, indices, k, 0.0)
    old = np.zeros((n, n), dtype=bool)
    for i in range(n):
        old[i, indices[indptr[i]:indptr[i + 1]]] = True
    r = c - u[:, None] - v[None, :]
    missing = np.where(old, np.inf, r)
    assert violations == np.count_nonzero(missing < 0)
    for i in range(n):
        row = new_indices[new_indptr[i]:new_indptr[i + 1]]
        assert (np.diff(row) > 0).all() and np.array_equal(data[new_indptr[i]:new_indptr[i + 1]],
                                                           c[i, row])
        worst = np.argsort(missing[i])[: min(k, np.count_nonzero(missing[i] < 0))]
        assert set(row) == set(np.flatnonzero(old[i])) | set(worst)


def test_pricing_finds_nothing_once_duals_are_optimal() -> None:
    c = generate("transport", 200, seed=2)
    exact = solve_lap(c)
    indptr, indices, _ = reduced_cost_pattern(c, exact.row_duals, exact.col_duals, 4)
    *_, violations = price_pattern(c, exact.row_duals, exact.col_duals, indptr, indices, 4,
                                   1e-9)
    assert violations == 0
