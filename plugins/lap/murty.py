"""Numba kernels for Murty's ranked assignments: one shortest augmenting path inside a
partition cell (some rows forced to their columns, some pairs forbidden), lower bounds
for a node's children, and the cell's weak-duality certificate.

A cell's forbidden pairs are given by row as CSR arrays (`fb_ptr`, `fb_col`); forced rows
and their columns are masked out (`row_ok`, `col_ok` False). Duals (u, v) are feasible on
every allowed pair of the cell, and every assigned pair is tight, as in `jv`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from coplug.plugins.lap.jv import flip_path

INF = np.inf
DONE, EMPTY, CAPPED = 0, 1, 2


@njit(cache=True)
def augment_one(c, u, v, col4row, row4col, cur, col_ok, fb_ptr, fb_col, cap):
    """Augment free row `cur` along a Dijkstra shortest path in reduced costs over allowed
    columns and pairs; returns (DONE, its length: the cell's cost rises by exactly that),
    (EMPTY, inf) when no free column can be reached (the cell holds no assignment), or
    (CAPPED, d) once every path is longer than `cap`: d > cap is a lower bound on the length,
    and nothing was changed."""
    n, m = c.shape
    shortest = np.full(m, INF)
    path = np.full(m, -1, np.int64)
    remaining = np.empty(m, np.int64)
    num_remaining = 0
    for j in range(m):
        if col_ok[j]:
            remaining[num_remaining] = j
            num_remaining += 1
    banned = np.zeros(m, np.bool_)
    visited_rows = np.empty(n, np.int64)
    visited_cols = np.empty(m, np.int64)
    n_vr = 0
    n_vc = 0
    min_val = 0.0
    i = cur
    sink = -1
    while sink == -1:
        visited_rows[n_vr] = i
        n_vr += 1
        for k in range(fb_ptr[i], fb_ptr[i + 1]):
            banned[fb_col[k]] = True
        lowest = INF
        index = -1
        base = min_val - u[i]
        for it in range(num_remaining):
            jj = remaining[it]
            if not banned[jj]:
                r = base + c[i, jj] - v[jj]
                if r < shortest[jj]:
                    path[jj] = i
                    shortest[jj] = r
            s = shortest[jj]
            if s < lowest or (s == lowest and s < INF and row4col[jj] == -1):
                lowest = s
                index = it
        for k in range(fb_ptr[i], fb_ptr[i + 1]):
            banned[fb_col[k]] = False
        if index < 0 or lowest == INF:
            return EMPTY, INF
        if lowest > cap:
            return CAPPED, lowest
        min_val = lowest
        j = remaining[index]
        if row4col[j] == -1:
            sink = j
        else:
            i = row4col[j]
        visited_cols[n_vc] = j
        n_vc += 1
        num_remaining -= 1
        remaining[index] = remaining[num_remaining]
    u[cur] += min_val
    for k in range(1, n_vr):
        i = visited_rows[k]
        u[i] += min_val - shortest[col4row[i]]
    for k in range(n_vc):
        j = visited_cols[k]
        v[j] -= min_val - shortest[j]
    flip_path(path, col4row, row4col, sink, cur)
    return DONE, min_val


@njit(cache=True)
def _forbidden(fb_ptr, fb_col, i, j):
    """True when pair (i, j) is among the cell's forbidden pairs."""
    for k in range(fb_ptr[i], fb_ptr[i + 1]):
        if fb_col[k] == j:
            return True
    return False


@njit(cache=True)
def child_bounds(c, u, v, rows, cols, row_ok, col_ok, fb_ptr, fb_col, out):
    """Lower bounds on what each child of a solved cell adds to its cost. Child t forbids
    (rows[t], cols[t]) and forces the pairs before it, so its augmenting path leaves
    rows[t] on another allowed pair and enters cols[t] from another allowed row: two
    distinct non-tight edges, each at least its line's smallest reduced cost (inf: the
    child holds no assignment)."""
    n, m = c.shape
    rok = row_ok.copy()
    cok = col_ok.copy()
    banned = np.zeros(m, np.bool_)
    for t in range(rows.size):
        i = rows[t]
        a = cols[t]
        for k in range(fb_ptr[i], fb_ptr[i + 1]):
            banned[fb_col[k]] = True
        banned[a] = True
        leave = INF
        for j in range(m):
            if cok[j] and not banned[j]:
                r = c[i, j] - u[i] - v[j]
                if r < leave:
                    leave = r
        for k in range(fb_ptr[i], fb_ptr[i + 1]):
            banned[fb_col[k]] = False
        banned[a] = False
        enter = INF
        for r_ in range(n):
            if rok[r_] and r_ != i and not _forbidden(fb_ptr, fb_col, r_, a):
                r = c[r_, a] - u[r_] - v[a]
                if r < enter:
                    enter = r
        if leave == INF or enter == INF:
            out[t] = INF
        else:
            out[t] = max(leave, 0.0) + max(enter, 0.0)
        rok[i] = False
        cok[a] = False


@njit(cache=True)
def cell_gap(c, u, col4row, row_ok, col_ok, fb_ptr, fb_col):
    """primal cost minus the cell's weak-duality bound, as the sum of the free pairs'
    reduced costs under Min-Trick column duals over the cell's allowed pairs (feasible by
    construction; forced pairs count the same on both sides); inf when the assignment
    breaks the cell. A sum of small terms, not the difference of two large totals."""
    n, m = c.shape
    v = np.full(m, INF)
    for i in range(n):
        if not row_ok[i]:
            continue
        ui = u[i]
        for j in range(m):
            if col_ok[j] and not _forbidden(fb_ptr, fb_col, i, j):
                r = c[i, j] - ui
                if r < v[j]:
                    v[j] = r
    gap = 0.0
    for i in range(n):
        j = col4row[i]
        if j < 0:
            return INF
        if not row_ok[i]:
            continue
        if not col_ok[j] or _forbidden(fb_ptr, fb_col, i, j) or v[j] == INF:
            return INF
        gap += (c[i, j] - u[i]) - v[j]
    return gap
