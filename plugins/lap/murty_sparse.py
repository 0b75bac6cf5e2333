"""Numba kernels for Murty's ranked assignments on sparse costs (CSR rows, CSC columns; a
pair not stored is not allowed): the same three steps as `murty` (one shortest augmenting
path in a partition cell, the children's lower bounds, the cell's weak-duality
certificate), each touching only stored entries, so a cell costs O(E log N) instead of
O(N^2).

Cells are given as in `murty`, and a child's path is applied with `murty.apply_path`.
"""

from __future__ import annotations

import numpy as np

from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.murty import (
    CAPPED,
    DONE,
    EMPTY,
    allowed_column,
    assigned_gap,
    banned_pairs,
    forbidden_pair,
    path_bound,
)
from coplug.plugins.lap.sparse import assigned_values, heap_pop, heap_push

INF = np.inf


@kernel
def search(indptr, indices, data, u, v, row4col, cur, freed, col_ok, col_rank, t, fb_row,
           fb_col, cap, path, visited_cols, dcol, shortest, final, banned, touched, keys,
           items):
    """`murty.search` over stored entries, with a heap Dijkstra on scratch arrays that
    start and end clean (`shortest` inf, `final` and `banned` False; `touched`, `keys` and
    `items` hold at least as many entries as the matrix stores), so a search costs only
    what it touches, not O(N)."""
    size = 0
    n_touched = 0
    n_vc = 0
    min_val = 0.0
    i = cur
    outcome = DONE
    while True:
        banned_pairs(banned, fb_row, fb_col, i, cur, freed, True)
        base = min_val - u[i]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if not final[j] and not banned[j] and allowed_column(col_ok, col_rank, t, j):
                r = base + data[k] - v[j]
                if r < shortest[j]:
                    if shortest[j] == INF:
                        touched[n_touched] = j
                        n_touched += 1
                    shortest[j] = r
                    path[j] = i
                    size = heap_push(keys, items, size, r, j)
        banned_pairs(banned, fb_row, fb_col, i, cur, freed, False)
        j = -1
        while size > 0:
            key, item, size = heap_pop(keys, items, size)
            if not final[item] and key == shortest[item]:
                j = item
                break
        if j < 0:
            outcome = EMPTY
            min_val = INF
            break
        if shortest[j] > cap:
            outcome = CAPPED
            min_val = shortest[j]
            break
        min_val = shortest[j]
        final[j] = True
        visited_cols[n_vc] = j
        n_vc += 1
        if row4col[j] == -1 or j == freed:
            break
        i = row4col[j]
    if outcome == DONE:
        for k in range(n_vc):
            dcol[k] = min_val - shortest[visited_cols[k]]
    else:
        n_vc = 0
    for k in range(n_touched):
        shortest[touched[k]] = INF
        final[touched[k]] = False
    return outcome, min_val, n_vc


@kernel
def child_bounds(indptr, indices, data, cptr, crow, cdata, u, v, rows, cols, row_ok, col_ok,
                 fb_ptr, fb_col, out):
    """`murty.child_bounds` over stored entries: child t's path leaves rows[t] on another
    allowed pair (its row in CSR) and enters cols[t] from another allowed row (its column in
    CSC, `cptr`, `crow`, `cdata`)."""
    rok = row_ok.copy()
    cok = col_ok.copy()
    for t in range(rows.size):
        i = rows[t]
        a = cols[t]
        leave = INF
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if j != a and cok[j] and not forbidden_pair(fb_ptr, fb_col, i, j):
                r = data[k] - u[i] - v[j]
                if r < leave:
                    leave = r
        enter = INF
        for k in range(cptr[a], cptr[a + 1]):
            r_ = crow[k]
            if r_ != i and rok[r_] and not forbidden_pair(fb_ptr, fb_col, r_, a):
                r = cdata[k] - u[r_] - v[a]
                if r < enter:
                    enter = r
        out[t] = path_bound(leave, enter)
        rok[i] = False
        cok[a] = False


@kernel
def cell_gap(indptr, indices, data, u, col4row, row_ok, col_ok, fb_ptr, fb_col):
    """`murty.cell_gap` over stored entries: the free pairs' reduced costs summed under
    Min-Trick column duals over the cell's allowed pairs; inf when the assignment breaks
    the cell."""
    m = col_ok.size
    v = np.full(m, INF)
    for i in range(u.size):
        if not row_ok[i]:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if col_ok[j] and not forbidden_pair(fb_ptr, fb_col, i, j):
                r = data[k] - u[i]
                if r < v[j]:
                    v[j] = r
    values = np.empty(col4row.size)
    assigned_values(indptr, indices, data, col4row, values)
    return assigned_gap(values, u, v, col4row, row_ok, col_ok, fb_ptr, fb_col)
