"""Sparse (LAPMOD-style) JV: exact against scipy with big-M on allowed patterns, clear
errors on infeasible patterns and on non-finite stored entries."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linear_sum_assignment

from coplug.plugins.errors import InputError
from coplug.plugins.lap.solver import solve_lap

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BIG = 1e7


@pytest.fixture(scope="module", autouse=True)
def warm_jit() -> None:
    c = sp.csr_matrix(np.arange(1.0, 7.0).reshape(2, 3))
    solve_lap(c)
    solve_lap(c, row_duals=np.zeros(2))


@st.composite
def sparse_problems(draw):
    """(costs, mask) with ties and negatives; roughly half the pairs allowed."""
    n = draw(st.integers(1, 7))
    m = draw(st.integers(n, 8))
    costs = draw(arrays(np.int64, (n, m), elements=st.integers(-5, 5))).astype(np.float64)
    mask = draw(arrays(np.bool_, (n, m), elements=st.booleans()))
    return costs, mask


def _reference(costs: np.ndarray, mask: np.ndarray, maximize: bool) -> float | None:
    """scipy optimum with forbidden pairs priced at big-M; None when the pattern is infeasible."""
    big = np.where(mask, costs, -BIG if maximize else BIG)
    r, k = linear_sum_assignment(big, maximize=maximize)
    if not mask[r, k].all():
        return None
    return float(costs[r, k].sum())


@SETTINGS
@given(sparse_problems(), st.booleans(), st.booleans())
def test_sparse_matches_scipy_or_reports_infeasible(problem, maximize: bool, warm: bool) -> None:
    costs, mask = problem
    matrix = sp.csr_matrix((costs[mask], np.nonzero(mask)), shape=costs.shape)
    ref = _reference(costs, mask, maximize)
    duals = np.random.default_rng(0).normal(scale=10, size=costs.shape[0]) if warm else None
    if ref is None:
        with pytest.raises(InputError, match="infeasible"):
            solve_lap(matrix, maximize=maximize, row_duals=duals)
        return
    sol = solve_lap(matrix, maximize=maximize, row_duals=duals)
    assert mask[sol.row_ind, sol.col_ind].all()
    assert len(set(sol.col_ind.tolist())) == costs.shape[0]
    assert sol.cost == pytest.approx(ref, abs=1e-7)


def test_sparse_tall_matrix_assigns_every_column() -> None:
    costs = np.array([[3.0, 1.0], [0.0, 2.0], [1.0, 0.5]])
    sol = solve_lap(sp.csr_matrix((costs.ravel(), np.nonzero(np.ones_like(costs)))))
    r, k = linear_sum_assignment(costs)
    assert sol.cost == pytest.approx(costs[r, k].sum())


def test_explicit_zero_costs_stay_allowed() -> None:
    matrix = sp.csr_matrix((np.zeros(2), ([0, 1], [1, 0])), shape=(2, 2))
    sol = solve_lap(matrix)
    assert sol.cost == 0.0
    assert sorted(zip(sol.row_ind.tolist(), sol.col_ind.tolist(), strict=True)) == [(0, 1), (1, 0)]


def test_empty_row_is_named() -> None:
    matrix = sp.csr_matrix((np.ones(2), ([0, 0], [0, 1])), shape=(2, 2))
    with pytest.raises(InputError, match="row 1 has no allowed column"):
        solve_lap(matrix)


def test_empty_column_of_a_tall_matrix_is_named_as_a_column() -> None:
    """Tall matrices are solved transposed; the error still names the caller's column."""
    matrix = sp.csr_matrix((np.ones(3), ([0, 1, 2], [0, 0, 0])), shape=(3, 2))
    with pytest.raises(InputError, match="column 1 has no allowed row"):
        solve_lap(matrix)


def test_hall_violation_is_named() -> None:
    # rows 0 and 1 share column 0 alone; no column is empty (that would be named instead)
    matrix = sp.csr_matrix((np.ones(4), ([0, 1, 2, 2], [0, 0, 1, 2])), shape=(3, 3))
    with pytest.raises(InputError, match="at most 2 of 3 rows"):
        solve_lap(matrix)


def test_non_finite_stored_entry_is_named() -> None:
    matrix = sp.csr_matrix((np.array([1.0, np.inf]), ([0, 1], [0, 1])), shape=(2, 2))
    with pytest.raises(InputError, match=r"\(1, 1\)"):
        solve_lap(matrix)


@pytest.mark.parametrize("rank", [False, True])
def test_empty_column_of_a_square_pattern_is_named_as_a_column(rank: bool) -> None:
    """Every column of a square must be assigned: the empty one is named, not a row that
    ends up without a column."""
    from coplug.plugins.lap import ranked_assignments

    allowed = np.ones((4, 4))
    allowed[:, 2] = 0.0
    matrix = sp.csr_matrix(allowed)
    with pytest.raises(InputError, match="column 2 has no allowed row"):
        ranked_assignments(matrix, 3) if rank else solve_lap(matrix)
