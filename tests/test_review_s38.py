"""Session 38 fixes, each test checked to fail with its fix undone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.lap import solve_lap, warmstart


def _optimum(c: np.ndarray, maximize: bool = False) -> float:
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    return float(c[rows, cols].sum())


@pytest.mark.parametrize("n", [60, 300])  # the one-call small path and the kernel path
@pytest.mark.parametrize("maximize", [False, True])
def test_duals_worse_than_column_reduction_start_cold(n: int, maximize: bool) -> None:
    """Duals 10% of the range off took up to 150x the cold time; they are set aside and the
    solve is the cold one, step for step."""
    c = generate("uniform", n, seed=4)
    cold = solve_lap(c, maximize=maximize)
    noisy = cold.row_duals + np.random.default_rng(0).normal(0.0, 0.1, n)
    sol = solve_lap(c, maximize=maximize, row_duals=noisy)
    assert not sol.warm and not sol.fallback
    assert "column reduction" in sol.info["prediction"]
    assert sol.augmentations == cold.augmentations
    np.testing.assert_array_equal(sol.col_ind, cold.col_ind)
    assert sol.cost == pytest.approx(_optimum(c, maximize), rel=1e-12)


@pytest.mark.parametrize("n", [60, 300])
@pytest.mark.parametrize("name", ["uniform", "transport"])
def test_own_duals_are_matched_along_tight_edges_without_augmenting(n: int, name: str) -> None:
    """A solve's own duals left 10-20% of the rows to shortest paths along tight edges (167
    augmentations at 2000 x 2000 uniform); a maximum matching of those edges needs none."""
    c = generate(name, n, seed=2)
    cold = solve_lap(c)
    sol = solve_lap(c, row_duals=cold.row_duals)
    assert sol.warm and not sol.fallback
    assert sol.augmentations == 0
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)


def test_duals_are_kept_where_cold_jv_drops_its_column_reduction() -> None:
    """On low-rank costs the column minima fall in few rows and cold JV starts from zero
    duals: its column reduction bound says nothing of its work, so warm duals are kept."""
    c = generate("low_rank", 300, seed=1)
    cold = solve_lap(c)
    noisy = cold.row_duals + np.random.default_rng(0).normal(0.0, 0.01 * np.ptp(c), 300)
    sol = solve_lap(c, row_duals=noisy)
    assert sol.warm
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)


def test_bound_check_reads_the_dual_objective_and_the_reduction_share() -> None:
    low = np.array([1.0, 2.0, 3.0])
    spread, piled = np.array([0, 1, 2]), np.array([0, 0, 0])
    u, v = np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.9])
    assert warmstart.below_column_reduction(u, v, low, spread, 0.5)  # 5.9 < 6
    assert not warmstart.below_column_reduction(u, v + 0.1, low, spread, 0.5)  # 6 = 6
    assert not warmstart.below_column_reduction(u, v, low, piled, 0.5)  # reduction dropped
    with np.errstate(over="ignore"):
        assert warmstart.below_column_reduction(np.array([1e308, 1e308, 0.0]),
                                                np.array([-np.inf, 0.0, 0.0]), low, spread, 0.5)


def test_tight_matching_runs_only_where_columns_are_tight_on_two_rows() -> None:
    """Noisy duals tie on almost no column: the extra pass over the costs would buy nothing."""
    c = generate("uniform", 200, seed=5)
    cold = solve_lap(c)
    for duals, expected in ((cold.row_duals, True),
                            (cold.row_duals + np.random.default_rng(1).normal(0, 1e-4, 200),
                             False)):
        u = duals - duals.mean()
        v, argmin = np.empty(200), np.empty(200, np.int64)
        record = warmstart.column_record(200)
        warmstart.checked_min_trick(c, u, v, argmin, record)
        col4row, row4col = np.full(200, -1), np.full(200, -1)
        warmstart.match_argmins(argmin, col4row, row4col)
        assert warmstart.tight_matching_pays(v, record[2], col4row, 0.01) is expected


@pytest.mark.parametrize("shape", [(5, 5), (40, 40), (30, 70)])
def test_tight_edges_match_the_reduced_costs_exact_ones_first(shape: tuple[int, int]) -> None:
    """All entries equal (every edge tight: the buffer grows past 2 (n + m)) and integer
    costs with many ties, against numpy."""
    rng = np.random.default_rng(3)
    for c in (np.full(shape, 7.0), rng.integers(0, 3, shape).astype(float)):
        u = rng.integers(0, 2, shape[0]).astype(float)
        v = np.empty(shape[1])
        warmstart.min_trick(c, u, v)
        v[0] -= 1e-15  # one round-off-tight column: listed after a row's exact ones
        indptr, indices = warmstart.tight_edges(c, u, v, warmstart.TIGHT_REL, 7.0)
        reduced = c - u[:, None] - v[None, :]
        for i in range(shape[0]):
            row = indices[indptr[i]:indptr[i + 1]]
            exact = np.flatnonzero(reduced[i] <= 0)
            near = np.flatnonzero((reduced[i] > 0) & (reduced[i] <= 1e-12))
            np.testing.assert_array_equal(row, np.concatenate([exact, near]))
