"""Numba kernels for Murty's ranked assignments: one shortest augmenting path inside a
partition cell (some rows forced to their columns, some pairs forbidden), lower bounds
for a node's children, and the cell's weak-duality certificate.

A cell's forbidden pairs are given by row as CSR arrays (`fb_ptr`, `fb_col`); forced rows
and their columns are masked out (`row_ok`, `col_ok` False). Duals (u, v) are feasible on
every allowed pair of the cell, and every assigned pair is tight, as in `jv`. A child's
path is searched read-only on its parent's state (`search`: most searches stop at the
queue's next value and change nothing) and applied to copies only when it is complete.
"""

from __future__ import annotations

import numpy as np

from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.jv import flip_path

INF = np.inf
DONE, EMPTY, CAPPED = 0, 1, 2


@kernel
def banned_pairs(banned, fb_row, fb_col, i, cur, freed, value):
    """Set `banned[j] = value` for the columns row `i` may not take in a child cell: the
    parent's forbidden pairs (`fb_row`, `fb_col`) and the child's own (cur, freed)."""
    for k in range(fb_row.size):
        if fb_row[k] == i:
            banned[fb_col[k]] = value
    if i == cur:
        banned[freed] = value


@kernel
def allowed_column(col_ok, col_rank, t, j):
    """Whether child `t` of a cell may use column j: the cell allows it (`col_ok`) and the
    child does not force its row (the children force the pairs ranked before t)."""
    return col_ok[j] and col_rank[j] >= t


@kernel
def search(c, u, v, row4col, cur, freed, col_ok, col_rank, t, fb_row, fb_col, cap,
           path, visited_cols, dcol):
    """Dijkstra shortest augmenting path of child `t`, read-only on its parent's optimal
    duals and assignment (row `cur` and column `freed` taken as free, their pair forbidden).
    Returns (DONE, length, number of path columns) with what `apply_path` needs in `path`,
    `visited_cols`, `dcol`; (EMPTY, inf, 0) when no free column can be reached (the cell
    holds no assignment); (CAPPED, d, 0) once every path is longer than `cap` (d > cap
    bounds the length from below)."""
    m = c.shape[1]
    shortest = np.full(m, INF)
    remaining = np.empty(m, np.int64)
    num_remaining = 0
    for j in range(m):
        if allowed_column(col_ok, col_rank, t, j):
            remaining[num_remaining] = j
            num_remaining += 1
    banned = np.zeros(m, np.bool_)
    n_vc = 0
    min_val = 0.0
    i = cur
    while True:
        banned_pairs(banned, fb_row, fb_col, i, cur, freed, True)
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
            if s < lowest or (s == lowest and s < INF and (row4col[jj] == -1 or jj == freed)):
                lowest = s
                index = it
        banned_pairs(banned, fb_row, fb_col, i, cur, freed, False)
        if index < 0 or lowest == INF:
            return EMPTY, INF, 0
        if lowest > cap:
            return CAPPED, lowest, 0
        min_val = lowest
        j = remaining[index]
        visited_cols[n_vc] = j
        n_vc += 1
        num_remaining -= 1
        remaining[index] = remaining[num_remaining]
        if row4col[j] == -1 or j == freed:
            break
        i = row4col[j]
    for k in range(n_vc):
        dcol[k] = min_val - shortest[visited_cols[k]]
    return DONE, min_val, n_vc


@kernel
def apply_path(u, v, col4row, row4col, cur, length, path, visited_cols, dcol, n_vc):
    """Augment along the path a `search` found, on copies of the parent's state where row
    `cur` and the freed column are already free: the duals move by the path's distances
    (they stay feasible, the new pairs tight) and the cell's cost rises by `length`."""
    u[cur] += length
    for k in range(n_vc):
        j = visited_cols[k]
        v[j] -= dcol[k]
        if k < n_vc - 1:
            u[row4col[j]] += dcol[k]
    flip_path(path, col4row, row4col, visited_cols[n_vc - 1], cur)


@kernel
def forbidden_pair(fb_ptr, fb_col, i, j):
    """True when pair (i, j) is among the cell's forbidden pairs."""
    for k in range(fb_ptr[i], fb_ptr[i + 1]):
        if fb_col[k] == j:
            return True
    return False


@kernel
def path_bound(leave, enter):
    """What a child's path adds at least: its two distinct non-tight edges, leaving the
    freed row (`leave`: that row's least other reduced cost) and entering the freed column
    (`enter`); inf when either has none (the child holds no assignment)."""
    if leave == INF or enter == INF:
        return INF
    return max(leave, 0.0) + max(enter, 0.0)


@kernel
def child_bounds(c, u, v, rows, cols, row_ok, col_ok, fb_ptr, fb_col, out):
    """Lower bounds on what each child of a solved cell adds to its cost. Child t forbids
    (rows[t], cols[t]) and forces the pairs before it, so its augmenting path leaves
    rows[t] on another allowed pair and enters cols[t] from another allowed row: two
    distinct non-tight edges, each at least its line's smallest reduced cost (inf: the
    child holds no assignment).

    The entering edges come from one row-major pass: column cols[t] may be entered from a
    row the cell allows that no child up to t has taken (`_entering`), read along rows
    instead of down N strided columns (uniform N = 1600: 9.6 ms a cell before)."""
    m = c.shape[1]
    enter = _entering(c, u, v, rows, cols, row_ok, fb_ptr, fb_col)
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
        out[t] = path_bound(leave, enter[a])
        cok[a] = False


@kernel
def _entering(c, u, v, rows, cols, row_ok, fb_ptr, fb_col):
    """For each column cols[t], the smallest reduced cost over the pairs (r, cols[t]) the
    cell allows from rows r that are neither rows[0..t] (forced in child t, or its own
    row); inf elsewhere. A row taken at step t enters only columns asked about before t."""
    n, m = c.shape
    taken = np.full(n, n, np.int64)  # when each row is taken (n: never)
    for t in range(rows.size):
        taken[rows[t]] = t
    asked = np.full(m, n, np.int64)  # when each column is asked about (n: never)
    for t in range(cols.size):
        asked[cols[t]] = t
    enter = np.full(m, INF)
    banned = np.zeros(m, np.bool_)
    for r in range(n):
        if not row_ok[r]:
            continue
        for k in range(fb_ptr[r], fb_ptr[r + 1]):
            banned[fb_col[k]] = True
        tr = taken[r]
        ur = u[r]
        for j in range(m):
            if asked[j] < tr and not banned[j]:
                x = c[r, j] - ur - v[j]
                if x < enter[j]:
                    enter[j] = x
        for k in range(fb_ptr[r], fb_ptr[r + 1]):
            banned[fb_col[k]] = False
    return enter


@kernel
def cell_gap(c, u, col4row, row_ok, col_ok, fb_ptr, fb_col):
    """primal cost minus the cell's weak-duality bound, as the sum of the free pairs'
    reduced costs under Min-Trick column duals over the cell's allowed pairs (feasible by
    construction; forced pairs count the same on both sides); inf when the assignment
    breaks the cell. A sum of small terms, not the difference of two large totals."""
    n, m = c.shape
    v = np.full(m, INF)
    allowed = col_ok.copy()  # the row's allowed columns: its forbidden pairs unset in turn
    for i in range(n):
        if not row_ok[i]:
            continue
        for k in range(fb_ptr[i], fb_ptr[i + 1]):
            allowed[fb_col[k]] = False
        ui = u[i]
        for j in range(m):
            if allowed[j]:
                r = c[i, j] - ui
                if r < v[j]:
                    v[j] = r
        for k in range(fb_ptr[i], fb_ptr[i + 1]):
            allowed[fb_col[k]] = col_ok[fb_col[k]]
    values = np.empty(n)
    for i in range(n):
        values[i] = c[i, col4row[i]] if col4row[i] >= 0 else INF
    return assigned_gap(values, u, v, col4row, row_ok, col_ok, fb_ptr, fb_col)


@kernel
def assigned_gap(values, u, v, col4row, row_ok, col_ok, fb_ptr, fb_col):
    """The free rows' assigned reduced costs summed (`values[i]`: row i's assigned cost,
    inf where not allowed) under the column duals `v`; inf when the assignment breaks the
    cell (a row unassigned, a pair not allowed, a column no allowed pair reaches)."""
    gap = 0.0
    for i in range(col4row.size):
        j = col4row[i]
        if j < 0:
            return INF
        if not row_ok[i]:
            continue
        if (values[i] == INF or not col_ok[j] or forbidden_pair(fb_ptr, fb_col, i, j)
                or v[j] == INF):
            return INF
        gap += (values[i] - u[i]) - v[j]
    return gap
