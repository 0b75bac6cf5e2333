"""Costs offset by a large constant: the totals' round-off hid warm assignments 28-118 above
the optimum (certified, no fallback). The offset is now subtracted before the solve, and
the warm certificate also sums the assigned reduced costs instead of subtracting two
totals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.learned.rowdualnet import load
from coplug.plugins.lap import certify, solve_lap
from coplug.plugins.lap.solver import common_offset


def _offset_costs(exponent: int, n: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Low-rank integer costs 0..1000 plus 2**exponent (every entry exact in float64)."""
    rng = np.random.default_rng(0)
    small = np.round(np.outer(rng.random(n), rng.random(n)) * 1000)
    return small, small + 2.0**exponent


@pytest.mark.parametrize("exponent", [44, 48, 50])
@pytest.mark.parametrize("warm", [False, True])
def test_offset_costs_are_solved_exactly(exponent: int, warm: bool) -> None:
    """JV's duals resolve costs only to ulp(offset); the offset is subtracted first (was
    28 above the optimum at 2**48 and 118 at 2**50, certified)."""
    small, c = _offset_costs(exponent)
    rows, cols = linear_sum_assignment(c)
    solved = solve_lap(c, predictor=load() if warm else None)
    assert small[solved.row_ind, solved.col_ind].sum() == small[rows, cols].sum()
    assert not solved.fallback


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(40, 40), (30, 45), (45, 30)])
def test_negative_and_rectangular_offsets_are_exact(maximize: bool, shape) -> None:
    rng = np.random.default_rng(7)
    small = rng.integers(0, 500, size=shape).astype(float)
    for sign in (1.0, -1.0):
        c = small + sign * 2.0**47
        rows, cols = linear_sum_assignment(c, maximize=maximize)
        solved = solve_lap(c, maximize=maximize)
        assert small[solved.row_ind, solved.col_ind].sum() == small[rows, cols].sum()
        again = solve_lap(c, maximize=maximize, row_duals=solved.row_duals)
        assert small[again.row_ind, again.col_ind].sum() == small[rows, cols].sum()


@pytest.mark.parametrize(("c", "offset"), [
    (np.array([[2.0**40 + 1, 2.0**40 + 3], [2.0**40, 2.0**40 + 9]]), 2.0**40),
    (np.array([[-(2.0**40) - 1, -(2.0**40)], [-(2.0**40) - 4, -(2.0**40) - 2]]), -(2.0**40)),
    (np.array([[1.0, 2.0], [3.0, 4.0]]), 0.0),  # spread comparable to the values
    (np.array([[2.0**40, -1.0], [2.0**40, 2.0**40]]), 0.0),  # mixed signs
    (np.array([[2.0**40, np.nan], [2.0**40, 2.0**40]]), 0.0),  # the solve reports NaN
    (np.array([[2.0**40, 2.0**40], [2.0**40, 1.0]]), 0.0),  # row 0 alike, the rest not
])
def test_common_offset_only_where_costs_share_one(c: np.ndarray, offset: float) -> None:
    assert common_offset(c) == offset
    assert common_offset(c.astype(np.float32)) == 0.0


def test_ordinary_warm_answers_do_not_fall_back() -> None:
    """Maximized transport costs at n = 2000 carry about 4 units of legitimate round-off
    (a 2-unit limit sent 2 of 6 seeds to a cold re-solve, 3.6x slower)."""
    c = generate("transport", 2000, seed=1)
    warm = solve_lap(c, maximize=True, predictor=load())
    rows, cols = linear_sum_assignment(c, maximize=True)
    assert not warm.fallback and warm.info["prediction"] == "used"
    assert warm.cost == pytest.approx(c[rows, cols].sum(), rel=1e-12)


def test_reduced_gap_equals_the_totals_gap_on_small_costs() -> None:
    c = generate("uniform", 60, seed=3)
    cold = solve_lap(c)
    u = cold.row_duals + np.random.default_rng(1).normal(scale=0.01, size=60)
    wrong = np.roll(cold.col_ind, 1)
    primal, bound, _, reduced, size = certify.dense_gap(c, wrong, u)
    assert reduced == pytest.approx(primal - bound, rel=1e-9)
    assert reduced > 0 and size > 0
    assert not certify.certified(primal, bound, 1.0, 60, strict=True, reduced=reduced,
                                 reduced_size=size)


def test_rectangular_reduced_gap_counts_spare_columns() -> None:
    c = generate("low_rank", 40, seed=2, m=55)
    solved = solve_lap(c)
    u = solved.row_duals
    primal, bound, _, reduced, _ = certify.dense_gap(c, solved.col_ind, u)
    assert reduced == pytest.approx(primal - bound, abs=1e-9 * np.abs(c).max() * 55)
    shifted = np.roll(solved.col_ind, 1)
    primal, bound, _, reduced, _ = certify.dense_gap(c, shifted, u)
    assert reduced == pytest.approx(primal - bound, rel=1e-9)


def test_sparse_reduced_gap_matches_the_totals_gap() -> None:
    import scipy.sparse as sp

    dense = generate("uniform", 30, seed=5)
    dense[dense > 0.7] = 0.0
    np.fill_diagonal(dense, 0.5)
    c = sp.csr_matrix(dense)
    solved = solve_lap(c)
    primal, bound, _, reduced, _ = certify.sparse_gap(
        c.indptr.astype(np.int64), c.indices.astype(np.int64), c.data, 30, solved.col_ind,
        solved.row_duals)
    assert np.isfinite(reduced)
    assert reduced == pytest.approx(primal - bound, abs=1e-9)


@pytest.mark.parametrize("duals", [[-1.0, 0.0, 0.0], [-1.0, -1.0, -1.0]])
def test_given_duals_near_the_float_maximum_survive_the_offset(duals) -> None:
    import warnings

    small = np.arange(9.0).reshape(3, 3) % 4
    c = small * 2.0**990 + 2.0**1020
    u0 = np.array(duals) * np.finfo(np.float64).max
    rows, cols = linear_sum_assignment(small)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solved = solve_lap(c, row_duals=u0)
    assert not solved.fallback
    assert small[solved.row_ind, solved.col_ind].sum() == small[rows, cols].sum()
