"""Ranking on sparse costs without a dense copy (`cell_costs.SparseCosts`): assignments and
matchings equal brute force on random patterns, square and rectangular, maximized; a failed
certificate re-solves cold; a large gated matrix whose dense copy would not fit is ranked,
each solution a distinct feasible assignment priced right, the first one optimal."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from test_lap_matchings_ranked import _case
from test_lap_matchings_ranked import _check as _check_matchings
from test_lap_ranked import _all_assignments, _assignment, _check, _matrices

from coplug.formulations.assignment import gated
from coplug.plugins import infeasibilities, k_best
from coplug.plugins.errors import InputError
from coplug.plugins.lap import (
    cell_costs,
    murty_sparse,
    ranked,
    ranked_assignments,
    ranked_matchings,
)
from coplug.plugins.lap.solver import solve_lap

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture
def sparse_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank every scipy.sparse input sparse, however full."""
    monkeypatch.setattr(ranked, "SPARSE_SHARE", 1.0)


def _masked(c: np.ndarray, mask: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """The CSR of `c` on `mask` and the dense matrix with inf off it."""
    r, q = np.nonzero(mask)
    return sp.csr_matrix((c[r, q], (r, q)), shape=c.shape), np.where(mask, c, np.inf)


@SETTINGS
@given(_matrices(), st.data(), st.integers(1, 130), st.booleans())
def test_sparse_assignments_equal_brute_force(sparse_path: None, c: np.ndarray,
                                              data: st.DataObject, k: int,
                                              maximize: bool) -> None:
    csr, dense = _masked(c, data.draw(arrays(np.bool_, c.shape)))
    if not _all_assignments(dense):
        with pytest.raises(InputError, match="infeasible"):
            ranked_assignments(csr, k, maximize=maximize)
        return
    _check(dense, ranked_assignments(csr, k, maximize=maximize), k, maximize)


@SETTINGS
@given(_case(), st.data(), st.booleans())
def test_sparse_matchings_equal_brute_force(sparse_path: None, case, data: st.DataObject,
                                            maximize: bool) -> None:
    c, rows, cols = case
    csr, dense = _masked(c, data.draw(arrays(np.bool_, c.shape)))
    result = ranked_matchings(csr, 50, row_cost=rows, col_cost=cols, maximize=maximize)
    _check_matchings(dense, rows, cols, result, 50, maximize)


def test_a_failed_sparse_certificate_resolves_the_cell_cold_and_stays_exact(
    sparse_path: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(5)
    c = np.round(rng.random((6, 6)) * 5)
    csr, dense = _masked(c, rng.random((6, 6)) < 0.7)
    real, calls = murty_sparse.cell_gap, []

    def failing(*args):
        calls.append(1)
        return real(*args) + (1.0 if len(calls) % 2 else 0.0)

    monkeypatch.setattr(murty_sparse, "cell_gap", failing)
    result = ranked_assignments(csr, 60)
    assert result.info["fallbacks"] > 5
    _check(dense, result, 60, False, fallbacks=True)


@pytest.mark.parametrize("rows", [30_000, 2_000])
def test_a_large_gated_matrix_is_ranked_without_a_dense_copy(rows: int) -> None:
    # the dense working copy would take 7.2 GB; the ranking keeps to the stored entries
    # (2,000 of the 30,000 tracks: a rectangular frame, ranked as matchings that must
    # match every row)
    csr = gated(30_000, gate=4, seed=1)[:rows]
    n = rows
    result = ranked_assignments(csr, 20)
    assert result.status == "k_found" and result.info["fallbacks"] == 0
    assert result.costs[0] == pytest.approx(solve_lap(csr).cost, rel=1e-12)
    assert result.costs == sorted(result.costs)
    seen = set()
    for s in result.solutions:
        assert np.unique(s.col_ind).size == n and np.array_equal(s.row_ind, np.arange(n))
        values = np.asarray(csr[s.row_ind, s.col_ind]).ravel()
        assert (values > 0).all()  # stored pairs only (every stored cost is positive)
        assert s.cost == pytest.approx(values.sum(), rel=1e-12)
        seen.add(s.col_ind.tobytes())
    assert len(seen) == 20


def test_sparse_and_dense_paths_rank_alike_at_moderate_size(monkeypatch) -> None:
    csr = gated(300, gate=6, seed=3)
    sparse_result = ranked_assignments(csr, 60, maximize=True)
    monkeypatch.setattr(ranked, "SPARSE_SHARE", 0.0)
    dense_result = ranked_assignments(csr, 60, maximize=True)
    np.testing.assert_allclose(sparse_result.costs, dense_result.costs, rtol=1e-12)
    matchings = [ranked_matchings(csr, 40, row_cost=3.0, col_cost=4.0)]
    monkeypatch.setattr(ranked, "SPARSE_SHARE", 1.0)
    matchings.append(ranked_matchings(csr, 40, row_cost=3.0, col_cost=4.0))
    np.testing.assert_allclose(matchings[0].costs, matchings[1].costs, rtol=1e-12)


@pytest.mark.parametrize("col_sense", ["==", "<="])
def test_k_best_with_lap_ranks_a_sparse_model_sparse(monkeypatch, col_sense: str) -> None:
    csr = gated(60, gate=3, seed=7)
    model = _assignment(csr.toarray(), col_sense, allowed=csr.toarray() > 0)
    calls = []
    real = cell_costs.SparseCosts.__init__

    def spy(self, *args):
        calls.append(1)
        real(self, *args)

    monkeypatch.setattr(cell_costs.SparseCosts, "__init__", spy)
    lap = k_best(model, 8, solver="lap")
    assert calls
    scip = k_best(model, 8)
    np.testing.assert_allclose([s.objective for s in lap.solutions],
                               [s.objective for s in scip.solutions], rtol=1e-9)
    for solution in lap.solutions:
        solution.load()
        assert infeasibilities(model) == {}


@pytest.mark.parametrize("seed", range(40))
def test_sparse_kernels_agree_with_the_dense_ones_on_random_cells(seed: int) -> None:
    # the certificate and the children's bounds, on any duals and any assignment (right or
    # wrong): the sparse kernels must answer exactly as the dense ones
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    mask = rng.random((n, n)) < 0.6
    perm = rng.permutation(n)
    mask[np.arange(n), perm] = True
    c = np.round(rng.normal(size=(n, n)) * 4)
    csr, dense = _masked(c, mask)
    costs = cell_costs.SparseCosts(csr)
    u = np.round(rng.normal(size=n) * 2)
    v = (dense - u[:, None]).min(axis=0)  # Min-Trick over the allowed pairs
    col4row = perm if seed % 2 else rng.permutation(n)
    row_ok = rng.random(n) < 0.8
    col_ok = np.ones(n, bool)
    col_ok[col4row[~row_ok]] = False
    forbidden = tuple((int(i), int(rng.integers(n))) for i in np.flatnonzero(row_ok)[:2])
    fb = ranked._forbidden_csr(forbidden, n)
    gap = cell_costs.DenseCosts(dense).gap(u, col4row, row_ok, col_ok, fb)
    assert costs.gap(u, col4row, row_ok, col_ok, fb) == gap
    rows = np.flatnonzero(row_ok).astype(np.int64)
    np.testing.assert_array_equal(
        costs.child_bounds(u, v, rows, col4row[rows], row_ok, col_ok, fb),
        cell_costs.DenseCosts(dense).child_bounds(u, v, rows, col4row[rows], row_ok, col_ok,
                                                  fb))


@pytest.mark.parametrize("seed", range(10))
def test_the_certificate_is_zero_at_the_optimum_and_positive_elsewhere(seed: int) -> None:
    # weak duality over the whole space: the optimal assignment's gap is 0 (round-off), a
    # costlier one's gap is at least its excess over the optimum, dense and sparse alike
    rng = np.random.default_rng(seed)
    n = 7
    c = np.round(rng.random((n, n)) * 9)
    mask = rng.random((n, n)) < 0.7
    best = solve_lap(np.where(mask, c, 1e6))
    mask[best.row_ind, best.col_ind] = True
    csr, dense = _masked(c, mask)
    optimum = solve_lap(csr)
    u = np.asarray(optimum.row_duals, dtype=float)
    everything = (np.ones(n, bool), np.ones(n, bool), ranked._forbidden_csr((), n))
    col4row = np.asarray(optimum.col_ind, dtype=np.int64)
    for costs in (cell_costs.SparseCosts(csr), cell_costs.DenseCosts(dense)):
        assert abs(costs.gap(u, col4row, *everything)) < 1e-9
    worse = [cols for cols in (np.roll(col4row, 1), col4row[::-1].copy())
             if np.isfinite(dense[np.arange(n), cols]).all()
             and dense[np.arange(n), cols].sum() > optimum.cost + 1e-9]
    for cols in worse:
        excess = dense[np.arange(n), cols].sum() - optimum.cost
        for costs in (cell_costs.SparseCosts(csr), cell_costs.DenseCosts(dense)):
            assert costs.gap(u, cols, *everything) >= excess - 1e-9


def test_a_feasible_pattern_is_ranked_without_the_pattern_check(monkeypatch) -> None:
    """The maximum-matching check runs only once the root solve fails (it cost 0.48 s of a
    1.26 s ranking of 300,000 gated tracks for k = 1)."""
    from coplug.plugins.lap import sparse

    calls = []
    original = sparse.unassignable
    monkeypatch.setattr(sparse, "unassignable", lambda csr: calls.append(1) or original(csr))
    frame = gated(400, seed=2)
    assert ranked_assignments(frame, 5).costs[0] == pytest.approx(solve_lap(frame).cost)
    assert ranked_assignments(frame[:, :300].T.tocsr(), 3).status in ("k_found", "exhausted")
    assert not calls


@pytest.mark.parametrize(
    ("rows", "cols", "shape", "message"),
    [
        ([0, 1, 2, 2], [0, 0, 1, 2], (3, 3), "at most 2 of 3 rows can be assigned"),
        ([0, 1, 2, 3], [0, 0, 1, 2], (4, 4), "column 3 has no allowed row"),
        ([0, 0, 1, 2], [0, 1, 0, 0], (3, 4), "at most 2 of 3 rows can be assigned"),
        ([0, 1, 2, 0, 0], [0, 0, 0, 1, 2], (4, 3), "at most 2 of 3 columns can be assigned"),
        ([0, 1, 2], [0, 0, 0], (4, 3), "column 1 has no allowed row"),
    ],
)
def test_an_infeasible_pattern_is_named_in_the_callers_terms_after_the_root_fails(
    monkeypatch, rows: list, cols: list, shape: tuple, message: str
) -> None:
    """Transposed, with an empty column, or rectangular (ranked as matchings on an (n + m)
    matrix): the error still names the caller's lines."""
    monkeypatch.setattr(ranked, "SPARSE_SHARE", 1.0)
    cost = sp.csr_matrix((np.arange(1.0, len(rows) + 1), (rows, cols)), shape=shape)
    for maximize in (False, True):
        with pytest.raises(InputError, match=message):
            ranked_assignments(cost, 3, maximize=maximize)
