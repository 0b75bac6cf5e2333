"""The square min-cost matrix Murty's ranking works on, dense (inf: not allowed) or sparse
(a pair not stored is not allowed), with the steps the ranking takes on a partition cell:
the root solve, one augmenting path, the children's bounds, the certificate and a cold
re-solve. Dense costs use `murty`'s O(N^2) kernels; sparse costs `murty_sparse`'s, which
touch only stored entries, so large gated (tracking) matrices need no N x N copy."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.sparse as sp

from coplug.plugins.lap import murty, murty_sparse
from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.solver import solve_lap
from coplug.plugins.lap.sparse import assigned_values, sparse_min_trick
from coplug.plugins.lap.warmstart import min_trick

INF = np.inf
Forbidden = tuple[tuple[int, int], ...]


class CellCosts(Protocol):
    """What `ranked.ranked_cells` needs of its costs."""

    size: int
    scale: float

    def root(self, time_limit: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The whole space's optimum: (col4row, u, v), v feasible on every allowed pair."""

    def search(self, parent: tuple, row: int, freed: int, allowed: tuple, t: int,
               forbidden: tuple, cap: float) -> tuple[int, float]:
        """Child t's shortest augmenting path (`murty.search`) on its `parent`'s
        (u, v, row4col), row `row` and column `freed` free, columns `allowed` =
        (col_ok, col_rank), the parent's `forbidden` pairs as (rows, cols) arrays."""

    def apply(self, u: np.ndarray, v: np.ndarray, col4row: np.ndarray, row4col: np.ndarray,
              row: int, length: float) -> None:
        """Apply the path the last `search` found (`murty.apply_path`) to copies of the
        parent's state with `row` and the freed column already free."""

    def child_bounds(self, u: np.ndarray, v: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                     row_ok: np.ndarray, col_ok: np.ndarray, fb: tuple) -> np.ndarray:
        """Lower bounds on what each child adds to its parent's cost."""

    def gap(self, u: np.ndarray, col4row: np.ndarray, row_ok: np.ndarray,
            col_ok: np.ndarray, fb: tuple) -> float:
        """The cell's weak-duality gap (inf: the assignment breaks the cell)."""

    def values(self, col4row: np.ndarray) -> np.ndarray:
        """The cost of each row's assigned pair, for the first len(col4row) rows."""

    def cold(self, rows: np.ndarray, cols: np.ndarray, forbidden: Forbidden
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A cold optimum of the cell's free `rows` x `cols` without its forbidden pairs:
        (row_ind, col_ind, u, v) in the sub-matrix's numbering, v by the Min-Trick."""


class _PathScratch:
    """Where a search leaves its path for `murty.apply_path`: the path's predecessor rows,
    its columns in order and their distance shifts, and how many columns it has."""

    def __init__(self, size: int) -> None:
        self.arrays = (np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size))
        self.n_cols = 0

    def found(self, outcome: tuple[int, float, int]) -> tuple[int, float]:
        """Keep the path's length in columns; (outcome, length) for the caller."""
        self.n_cols = outcome[2]
        return outcome[0], outcome[1]

    def apply(self, u: np.ndarray, v: np.ndarray, col4row: np.ndarray, row4col: np.ndarray,
              row: int, length: float) -> None:
        """`murty.apply_path` with the last path found."""
        murty.apply_path(u, v, col4row, row4col, row, length, *self.arrays, self.n_cols)


@kernel
def finite_scale(c):
    """max |c_ij| over the finite entries (0 when there are none), in one pass: numpy's
    np.abs(c[np.isfinite(c)]) held a mask and two copies of the N x N working matrix."""
    top = 0.0
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            a = abs(c[i, j])
            if top < a < INF:
                top = a
    return top


@kernel
def finite_pattern(c):
    """CSR arrays (indptr, indices, data) of the finite entries of a dense matrix, built in
    two passes without a mask or index pairs (np.nonzero and a COO held 7-13x a matching
    matrix's size); indices and data are left empty when every entry is finite."""
    n, m = c.shape
    indptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        count = 0
        for j in range(m):
            if abs(c[i, j]) < INF:
                count += 1
        indptr[i + 1] = indptr[i] + count
    stored = indptr[n] if indptr[n] < n * m else 0
    indices = np.empty(stored, np.int64)
    data = np.empty(stored)
    if stored:
        k = 0
        for i in range(n):
            for j in range(m):
                if abs(c[i, j]) < INF:
                    indices[k] = j
                    data[k] = c[i, j]
                    k += 1
    return indptr, indices, data


class DenseCosts:
    """A dense square min-cost matrix; inf marks the pairs not allowed."""

    def __init__(self, c: np.ndarray, start_duals: np.ndarray | None = None) -> None:
        self.c = c
        self.size = c.shape[0]
        self.scale = float(finite_scale(c))
        self.start_duals = start_duals
        self._path = _PathScratch(self.size)

    def root(self, time_limit: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`CellCosts.root` by `solve_lap`, dense or (with inf entries) sparse."""
        c = self.c
        indptr, indices, data = finite_pattern(c)
        if indptr[-1] == c.size:
            solution = solve_lap(c, row_duals=self.start_duals, time_limit=time_limit)
        else:
            solution = solve_lap(sp.csr_matrix((data, indices, indptr), shape=c.shape),
                                 row_duals=self.start_duals, time_limit=time_limit)
        u = np.asarray(solution.row_duals, dtype=np.float64).copy()
        v = np.empty(self.size)
        min_trick(c, u, v)
        return np.asarray(solution.col_ind, dtype=np.int64), u, v

    def search(self, parent, row, freed, allowed, t, forbidden, cap):
        """`CellCosts.search`."""
        return self._path.found(murty.search(self.c, *parent, row, freed, *allowed, t,
                                             *forbidden, cap, *self._path.arrays))

    def apply(self, u, v, col4row, row4col, row, length):
        """`CellCosts.apply`."""
        self._path.apply(u, v, col4row, row4col, row, length)

    def child_bounds(self, u, v, rows, cols, row_ok, col_ok, fb):
        """`CellCosts.child_bounds`."""
        out = np.empty(rows.size)
        murty.child_bounds(self.c, u, v, rows, cols, row_ok, col_ok, *fb, out)
        return out

    def gap(self, u, col4row, row_ok, col_ok, fb):
        """`CellCosts.gap`."""
        return murty.cell_gap(self.c, u, col4row, row_ok, col_ok, *fb)

    def values(self, col4row: np.ndarray) -> np.ndarray:
        """`CellCosts.values`."""
        return self.c[np.arange(col4row.size), col4row]

    def cold(self, rows, cols, forbidden):
        """`CellCosts.cold`: a sparse `solve_lap` over the finite, not forbidden pairs."""
        sub = self.c[np.ix_(rows, cols)].copy()
        where_row = {int(r): a for a, r in enumerate(rows)}
        where_col = {int(j): b for b, j in enumerate(cols)}
        for i, j in forbidden:
            if i in where_row and j in where_col:
                sub[where_row[i], where_col[j]] = INF
        r, q = np.nonzero(np.isfinite(sub))
        solution = solve_lap(sp.csr_matrix((sub[r, q], (r, q)), shape=sub.shape))
        u = np.asarray(solution.row_duals, dtype=np.float64)
        return solution.row_ind, solution.col_ind, u, (sub - u[:, None]).min(axis=0)


class SparseCosts:
    """A square min-cost CSR matrix (canonical, finite data); pairs not stored are not
    allowed. Keeps the CSC arrays (int64 indices) for the children's column scans, not
    scipy's CSC matrix beside them (the pattern was held four times)."""

    def __init__(self, csr: sp.csr_matrix, start_duals: np.ndarray | None = None) -> None:
        self.csr = csr
        self.start_duals = start_duals
        self.size = csr.shape[0]
        self.scale = float(np.abs(csr.data).max(initial=0.0))
        self._rows = (_int64(csr.indptr), _int64(csr.indices), csr.data)
        self._cols = _csc_arrays(csr)
        self._path = _PathScratch(self.size)
        m, e = self.size, csr.nnz + 1
        self._heap = (np.full(m, INF), np.zeros(m, np.bool_), np.zeros(m, np.bool_),
                      np.empty(m, np.int64), np.empty(e), np.empty(e, np.int64))

    def root(self, time_limit: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`CellCosts.root` by a sparse `solve_lap`."""
        solution = solve_lap(self.csr, row_duals=self.start_duals, time_limit=time_limit)
        u = np.asarray(solution.row_duals, dtype=np.float64).copy()
        v = np.empty(self.size)
        sparse_min_trick(*self._rows, self.size, u, v)
        return np.asarray(solution.col_ind, dtype=np.int64), u, v

    def search(self, parent, row, freed, allowed, t, forbidden, cap):
        """`CellCosts.search` (the heap scratch is shared: one search at a time)."""
        return self._path.found(murty_sparse.search(*self._rows, *parent, row, freed,
                                                    *allowed, t, *forbidden, cap,
                                                    *self._path.arrays, *self._heap))

    def apply(self, u, v, col4row, row4col, row, length):
        """`CellCosts.apply`."""
        self._path.apply(u, v, col4row, row4col, row, length)

    def child_bounds(self, u, v, rows, cols, row_ok, col_ok, fb):
        """`CellCosts.child_bounds`."""
        out = np.empty(rows.size)
        murty_sparse.child_bounds(*self._rows, *self._cols, u, v, rows, cols, row_ok, col_ok,
                                  *fb, out)
        return out

    def gap(self, u, col4row, row_ok, col_ok, fb):
        """`CellCosts.gap`."""
        return murty_sparse.cell_gap(*self._rows, u, col4row, row_ok, col_ok, *fb)

    def values(self, col4row: np.ndarray) -> np.ndarray:
        """`CellCosts.values` (inf for a pair not stored)."""
        out = np.empty(col4row.size)
        assigned_values(*self._rows, np.asarray(col4row, np.int64), out)
        return out

    def cold(self, rows, cols, forbidden):
        """`CellCosts.cold`: a sparse `solve_lap` over the stored, not forbidden pairs."""
        sub = self.csr[rows][:, cols].tocoo()
        if forbidden:
            where_row = np.full(self.size, -1, np.int64)
            where_row[rows] = np.arange(rows.size)
            where_col = np.full(self.size, -1, np.int64)
            where_col[cols] = np.arange(cols.size)
            pairs = np.array(forbidden, dtype=np.int64)
            banned = set(zip(where_row[pairs[:, 0]].tolist(), where_col[pairs[:, 1]].tolist(),
                             strict=True))
            keep = np.array([(r, q) not in banned for r, q in
                             zip(sub.row.tolist(), sub.col.tolist(), strict=True)], dtype=bool)
            sub = sp.coo_matrix((sub.data[keep], (sub.row[keep], sub.col[keep])),
                                shape=sub.shape)
        csr = sub.tocsr()
        csr.sort_indices()
        solution = solve_lap(csr)
        u = np.asarray(solution.row_duals, dtype=np.float64)
        v = np.empty(cols.size)
        sparse_min_trick(csr.indptr.astype(np.int64), csr.indices.astype(np.int64), csr.data,
                         cols.size, u, v)
        return solution.row_ind, solution.col_ind, u, v


def matching_costs(c: np.ndarray | sp.csr_matrix, rows: np.ndarray,
                   cols: np.ndarray) -> DenseCosts | SparseCosts:
    """The (n + m) square min-cost matrix whose assignments are the matchings of the n x m
    min-cost `c` (dense with inf, or CSR), row i left unmatched at `rows[i]` and column j at
    `cols[j]` (inf: it must be matched):

        [ C              diag(rows) ]      row i unmatched: row i takes column m + i
        [ diag(cols)     S          ]      column j unmatched: slack row n + j takes it

    Dense: S is all zeros. Sparse: S holds 0 at (n + j, m + i) for each allowed pair (i, j)
    of C, which is all the slack rows need (slack row n + j takes column m + i when row i is
    matched to column j), so the matrix stores 2E + n + m entries. The root solve starts
    from `_matching_duals`."""
    n, m = c.shape
    line_rows = np.concatenate([np.arange(n), n + np.arange(m)])
    line_cols = np.concatenate([m + np.arange(n), np.arange(m)])
    line_vals = np.concatenate([rows, cols])
    keep = np.isfinite(line_vals)
    if not sp.issparse(c):
        big = np.full((n + m, m + n), INF)
        big[:n, :m] = c
        big[line_rows[keep], line_cols[keep]] = line_vals[keep]
        big[n:, m:] = 0.0
        return DenseCosts(big, _matching_duals(c, rows, cols))
    coo = c.tocoo()
    big = sp.coo_matrix(
        (np.concatenate([coo.data, line_vals[keep], np.zeros(coo.nnz)]),
         (np.concatenate([coo.row, line_rows[keep], n + coo.col]),
          np.concatenate([coo.col, line_cols[keep], m + coo.row]))),
        shape=(n + m, m + n)).tocsr()
    big.sort_indices()
    return SparseCosts(big, _matching_duals(c, rows, cols))


def _matching_duals(c: np.ndarray | sp.csr_matrix, rows: np.ndarray,
                    cols: np.ndarray) -> np.ndarray:
    """Row duals for the matching matrix's root solve: column j priced at what leaving it
    unmatched costs (its cheapest pair where it must be matched), each real row at the
    least of its pairs' costs net of that and its own unmatched cost, the slack rows at 0.
    With them every slack row's pairs are tight, so a row's best pair is taken by swapping
    one slack row, not by a search through the slack block's plateau of zero costs (30,000
    gated tracks: 7.5 s from row minima)."""
    n, m = c.shape
    if sp.issparse(c):
        col_min = np.full(m, INF)
        np.minimum.at(col_min, c.indices, c.data)
    else:
        col_min = c.min(axis=0)
    v = np.where(np.isfinite(cols), cols, np.where(np.isfinite(col_min), col_min, 0.0))
    with np.errstate(over="ignore"):  # costs that large are refused by `ranked_cells`
        if sp.issparse(c):
            net = c.data - v[c.indices]
            best = np.full(n, INF)
            nonempty = np.diff(c.indptr) > 0
            best[nonempty] = np.minimum.reduceat(net, c.indptr[:-1][nonempty])
        else:
            best = (c - v[None, :]).min(axis=1)
    u = np.minimum(rows, best)
    u = np.where(np.isfinite(u), u, 0.0)
    return np.concatenate([u, np.zeros(m)])


def _int64(indices: np.ndarray) -> np.ndarray:
    """The index array as int64, the kernels' type (no copy when it is already)."""
    return indices.astype(np.int64, copy=False)


def _csc_arrays(csr: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, data) of `csr` by columns, indices sorted, as the kernels read
    them."""
    csc = csr.tocsc()
    csc.sort_indices()
    return _int64(csc.indptr), _int64(csc.indices), csc.data
