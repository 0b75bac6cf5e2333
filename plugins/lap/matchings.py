"""`ranked_matchings`: the k best matchings of a cost matrix, where any row or column may
stay unmatched at a price (multi-hypothesis tracking: a track missed, a detection a false
alarm), best first.

A matching of the n x m costs C is an assignment of the (n + m) x (m + n) matrix

    [ C              diag(row_cost) ]      row i unmatched: row i takes column m + i
    [ diag(col_cost) 0              ]      column j unmatched: slack row n + j takes it

whose slack rows fill whatever is left at no cost. Murty's ranking (`ranked.ranked_cells`)
partitions over the n real rows' pairs only, and those determine the matching, so each
matching comes back once however its slack rows complete it. Sparse costs at most
`ranked.SPARSE_SHARE` full keep the augmented matrix sparse (`cell_costs.matching_costs`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from coplug.plugins.arguments import check_exact_integers, check_flag, detached, refuse_masked
from coplug.plugins.errors import InputError
from coplug.plugins.lap import sparse
from coplug.plugins.lap.cell_costs import matching_costs
from coplug.plugins.lap.ranked import (
    RankedAssignment,
    RankedAssignments,
    best_first,
    checked_k,
    forbidden_as_inf,
    is_sparse_enough,
    lines_csr,
    ranked_cells,
)
from coplug.plugins.limits import checked_time_limit

INF = np.inf


def ranked_matchings(
    cost: Any,
    k: int = 10,
    *,
    row_cost: Any = 0.0,
    col_cost: Any = 0.0,
    maximize: bool = False,
    time_limit: float | None = None,
    progress: bool = False,
) -> RankedAssignments:
    """The `k` best matchings of `cost` (dense and finite, or scipy.sparse with the stored
    entries as the allowed pairs), best first: each solution's `row_ind`, `col_ind` are its
    matched pairs and its `cost` sums them plus `row_cost[i]` for each unmatched row and
    `col_cost[j]` for each unmatched column (scalars or one finite value per line; all in
    the objective's sense, so under `maximize` they are what leaving a line unmatched is
    worth). Limits and Ctrl-C as in `ranked_assignments`; the work is on an
    (n + m) x (n + m) matrix, dense, or sparse for sparse input at most
    `ranked.SPARSE_SHARE` full."""
    start = time.perf_counter()
    k = checked_k(k)
    time_limit = checked_time_limit(time_limit)
    maximize = check_flag(maximize, "maximize")
    progress = check_flag(progress, "progress")
    c = sparse.as_csr(cost) if is_sparse_enough(cost) else forbidden_as_inf(cost)
    if c.shape[0] == 0 or c.shape[1] == 0:
        raise InputError(f"cost matrix is empty (shape {c.shape[0]}x{c.shape[1]})")
    rows = _line_costs(row_cost, c.shape[0], "row_cost")
    cols = _line_costs(col_cost, c.shape[1], "col_cost")
    return rank_matchings(c, rows, cols, k, bool(maximize), time_limit, progress, start)


def rank_matchings(
    c: np.ndarray | sp.csr_matrix, rows: np.ndarray, cols: np.ndarray, k: int,
    maximize: bool, time_limit: float | None, progress: bool = False,
    start: float | None = None,
) -> RankedAssignments:
    """`ranked_matchings` on checked input: costs dense with inf for forbidden pairs or a
    canonical CSR (finite data), and line costs where inf means the line must be matched
    (an assignment side)."""
    start = time.perf_counter() if start is None else start
    kept_rows, kept_cols = _kept_lines(c, rows, cols)
    work = lines_csr(c, kept_rows, kept_cols) if sp.issparse(c) else c
    big = matching_costs(_signed(work, maximize), _signed(rows[kept_rows], maximize),
                         _signed(cols[kept_cols], maximize))
    deadline = None if time_limit is None else start + time_limit
    found, status, info = ranked_cells(big, kept_rows.size, k, deadline, progress,
                                       "ranked matchings")
    solutions = best_first([_matching(_caller_col4row(cell.col4row, kept_rows, kept_cols,
                                                      c.shape), c, rows, cols)
                            for cell in found], maximize)
    info["time"] = time.perf_counter() - start
    return RankedAssignments(solutions, status, info)


def _kept_lines(c: np.ndarray | sp.csr_matrix, rows: np.ndarray,
                cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns ranked: of a CSR that stores a pair, those that store one or
    must be matched; the others are unmatched in every matching, at a fixed cost, and kept
    in the matching matrix each would cost every ranked cell memory and time (20 x 10**6
    storing 60 pairs: 1.35 GB for k=30)."""
    n, m = c.shape
    if not sp.issparse(c) or c.nnz == 0:
        return np.arange(n), np.arange(m)
    return (np.flatnonzero((np.diff(c.indptr) > 0) | np.isinf(rows)),
            np.flatnonzero((np.bincount(c.indices, minlength=m) > 0) | np.isinf(cols)))


def _caller_col4row(col4row: np.ndarray, kept_rows: np.ndarray, kept_cols: np.ndarray,
                    shape: tuple[int, int]) -> np.ndarray:
    """The ranked assignment's column for each of the caller's rows, in the caller's
    numbering (m or more: unmatched)."""
    n, m = shape
    mine = col4row[:kept_rows.size]
    matched = mine < kept_cols.size
    out = np.full(n, m, np.int64)
    out[kept_rows[matched]] = kept_cols[mine[matched]]
    return out


def _signed(values: np.ndarray | sp.csr_matrix, maximize: bool) -> np.ndarray | sp.csr_matrix:
    """Min-cost values: negated under `maximize`, except that inf (not allowed) stays +inf
    (a CSR's stored entries are finite)."""
    if not maximize:
        return values
    if sp.issparse(values):
        return -values
    return np.where(np.isfinite(values), -values, INF)


def _line_costs(value: Any, size: int, name: str) -> np.ndarray:
    """A scalar or one finite real per line, as a float64 vector of `size`. A single value
    in a list is refused (not broadcast) unless there is one line: it is likely a
    miscount."""
    refuse_masked(value, name)
    try:
        given = np.asarray(detached(value, name))
        if given.dtype.kind not in "iuf":
            raise TypeError(f"dtype {given.dtype}")
        if given.ndim != 0 and given.shape != (size,):
            raise ValueError(f"shape {given.shape}")
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a number or {size} numbers, got {value!r} "
                         f"({exc})") from None
    check_exact_integers(given.reshape(-1), name)
    values = np.broadcast_to(given.astype(np.float64), (size,)).copy()
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        at = f"[{int(bad[0])}]" if given.ndim else ""
        raise InputError(f"{name}{at} is {float(values[bad[0]])}: leaving a line unmatched "
                         "costs a finite number (where every line must be matched, use "
                         "ranked_assignments)")
    return values


def _pair_costs(c: np.ndarray | sp.csr_matrix, rows: np.ndarray,
                cols: np.ndarray) -> np.ndarray:
    """The caller's costs of the pairs (rows[t], cols[t])."""
    if not sp.issparse(c):
        return c[rows, cols]
    n = c.shape[0]
    col4row = np.full(n, -1, np.int64)
    col4row[rows] = cols
    values = np.empty(n)
    sparse.assigned_values(c.indptr.astype(np.int64), c.indices.astype(np.int64), c.data,
                           col4row, values)
    return values[rows]


def _matching(col4row: np.ndarray, c: np.ndarray | sp.csr_matrix, rows: np.ndarray,
              cols: np.ndarray) -> RankedAssignment:
    """The matched pairs of an augmented assignment and the matching's cost (caller's sign)."""
    n, m = c.shape
    mine = col4row[:n]
    matched = np.flatnonzero(mine < m)
    pairs = mine[matched]
    unmatched_cols = np.ones(m, bool)
    unmatched_cols[pairs] = False
    unmatched_rows = np.ones(n, bool)
    unmatched_rows[matched] = False
    total = (float(_pair_costs(c, matched, pairs).sum()) + float(rows[unmatched_rows].sum())
             + float(cols[unmatched_cols].sum()))
    return RankedAssignment(matched, pairs.copy(), 0.0 + total)
