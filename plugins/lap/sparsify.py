"""Reduced-cost sparsification of a dense LAP around feasible duals.

Given feasible duals (u, v), keep each row's and each column's k smallest reduced costs
c_ij - u_i - v_j, plus the diagonal so that a perfect matching always exists. The optimum
of that sparse LAP is usually close to the dense optimum, and its duals are a far better
warm start than the duals it started from; the dense solve that follows keeps exactness.
"""

from __future__ import annotations

import numpy as np

from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.warmstart import slack

INF = np.inf


@kernel
def _insert(vals, idx, k, x, j):
    """Insert (x, j) into the ascending length-k buffers vals/idx (x < vals[k - 1])."""
    t = k - 1
    while t > 0 and vals[t - 1] > x:
        vals[t] = vals[t - 1]
        idx[t] = idx[t - 1]
        t -= 1
    vals[t] = x
    idx[t] = j


@kernel
def reduced_cost_pattern(c, u, v, k):
    """CSR (indptr, indices, data) of the entries among each row's and each column's k
    smallest reduced costs c_ij - u_i - v_j, plus (i, i); data are the costs c_ij.

    Needs n <= m (the diagonal then exists) and 1 <= k <= min(n, m).
    """
    n, m = c.shape
    row_idx = np.empty((n, k), np.int64)
    row_val = np.empty(k)
    col_thr = np.full(m, INF)  # col_val[:, k - 1], contiguous for the hot comparison
    col_val = np.full((m, k), INF)  # one column's buffer per row: shifts stay in cache
    col_idx = np.full((m, k), -1, np.int64)
    for i in range(n):
        for t in range(k):
            row_val[t] = INF
            row_idx[i, t] = i
        ui = u[i]
        for j in range(m):
            r = c[i, j] - ui - v[j]
            if r < row_val[k - 1]:
                _insert(row_val, row_idx[i], k, r, j)
            if r < col_thr[j]:
                _insert(col_val[j], col_idx[j], k, r, i)
                col_thr[j] = col_val[j, k - 1]
    extra = np.zeros(n + 1, np.int64)
    for j in range(m):
        for t in range(k):
            if col_idx[j, t] >= 0:
                extra[col_idx[j, t] + 1] += 1
    for i in range(n):
        extra[i + 1] += extra[i]
    by_row = np.empty(extra[n], np.int64)
    fill = extra[:n].copy()
    for j in range(m):
        for t in range(k):
            i = col_idx[j, t]
            if i >= 0:
                by_row[fill[i]] = j
                fill[i] += 1
    indptr = np.zeros(n + 1, np.int64)
    indices = np.empty(n * (k + 1) + extra[n], np.int64)
    seen = np.full(m, -1, np.int64)
    nnz = 0
    for i in range(n):
        seen[i] = i
        indices[nnz] = i
        nnz += 1
        for t in range(k):
            j = row_idx[i, t]
            if seen[j] != i:
                seen[j] = i
                indices[nnz] = j
                nnz += 1
        for s in range(extra[i], extra[i + 1]):
            j = by_row[s]
            if seen[j] != i:
                seen[j] = i
                indices[nnz] = j
                nnz += 1
        indices[indptr[i]:nnz].sort()
        indptr[i + 1] = nnz
    indices = indices[:nnz]
    data = np.empty(nnz)
    for i in range(n):
        for s in range(indptr[i], indptr[i + 1]):
            data[s] = c[i, indices[s]]
    return indptr, indices, data


@kernel
def price_pattern(c, u, v, indptr, indices, k, rel):
    """Add to the pattern each row's (up to) k most negative reduced costs c_ij - u_i - v_j
    below round-off (`warmstart.slack` with `rel`) among the entries it lacks; returns the
    merged CSR (indptr, indices, data) and the number of violated entries found (0: (u, v)
    are feasible for the dense LAP).
    """
    n, m = c.shape
    add_val = np.empty(k)
    add_idx = np.empty((n, k), np.int64)
    n_add = np.zeros(n, np.int64)
    seen = np.full(m, -1, np.int64)
    violations = 0
    for i in range(n):
        for s in range(indptr[i], indptr[i + 1]):
            seen[indices[s]] = i
        for t in range(k):
            add_val[t] = 0.0
        ui = u[i]
        for j in range(m):
            r = c[i, j] - ui - v[j]
            if r < -slack(c[i, j], ui, v[j], rel) and seen[j] != i:
                violations += 1
                if r < add_val[k - 1]:
                    _insert(add_val, add_idx[i], k, r, j)
        for t in range(k):
            if add_val[t] < 0.0:
                n_add[i] += 1
    new_indptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        new_indptr[i + 1] = new_indptr[i] + indptr[i + 1] - indptr[i] + n_add[i]
    new_indices = np.empty(new_indptr[n], np.int64)
    data = np.empty(new_indptr[n])
    for i in range(n):
        at = new_indptr[i]
        for s in range(indptr[i], indptr[i + 1]):
            new_indices[at] = indices[s]
            at += 1
        for t in range(n_add[i]):
            new_indices[at] = add_idx[i, t]
            at += 1
        new_indices[new_indptr[i]:at].sort()
        for s in range(new_indptr[i], at):
            data[s] = c[i, new_indices[s]]
    return new_indptr, new_indices, data, violations
