"""Warm start from predicted row duals: the Min-Trick makes them feasible, then the tight
edges seed the matching and only the remaining rows are augmented. Square costs take the
Min-Trick as it is; rectangular ones (n_rows < n_cols) cap it at 0, the frame the cold
rectangular solve works in (`rectangular_warm_state`)."""

from __future__ import annotations

import numpy as np

from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.cardinality import maximum_matching

INF = np.inf
# An edge of a given start assignment counts as tight up to this many float64 ulps of its own
# terms |c_ij| + |u_i| + |v_j|: duals carried over from another solve differ from the
# Min-Trick by round-off. Per entry, not per matrix: with one cost near 1e15 a tolerance
# relative to max |c| (about 14) called edges tight that cost 0..100 more.
KEEP_TIGHT_ULPS = 64
TIGHT_REL = KEEP_TIGHT_ULPS * float(np.finfo(np.float64).eps)


@kernel
def min_trick(c, u, v):
    """Column duals v_j = min_i (c_ij - u_i): u_i + v_j <= c_ij by construction."""
    n, m = c.shape
    for j in range(m):
        v[j] = INF
    for i in range(n):
        ui = u[i]
        for j in range(m):
            r = c[i, j] - ui
            if r < v[j]:
                v[j] = r


@kernel
def checked_min_trick(c, u, v, argmin):
    """`min_trick` that also records each column's minimizing row in `argmin` and returns the
    cost scale max |c_ij|, or NaN when an entry is NaN or infinite: the solve's first pass
    validates the costs and finds JV's column-reduction edges too (one pass, not three).
    Row duals too large for float64 reduced costs at these costs (`safe_duals`) are set to
    0 in place and the pass is run again."""
    scale = _checked_pass(c, u, v, argmin)
    if not np.isnan(scale) and not safe_duals(u, scale):
        u[:] = 0.0
        scale = _checked_pass(c, u, v, argmin)
    return scale


@kernel
def safe_duals(u, scale):
    """Whether row duals keep every reduced cost c_ij - u_i - v_j of costs up to `scale` well
    inside float64 (max |u| + scale <= max/4). Past that the Min-Trick and the tightened
    duals overflowed to -inf and inf, and the solve called a dense matrix unassignable; such
    a start is replaced by zeros (JV's column reduction), which keeps the solve exact."""
    top = np.abs(u).max() if u.size else 0.0
    return top + scale <= np.finfo(np.float64).max / 4


@kernel
def _checked_pass(c, u, v, argmin):
    """One pass of `checked_min_trick` over the costs. Everything it tracks is per column, so
    the inner loop stays vectorized."""
    n, m = c.shape
    top = np.zeros(m)
    poison = np.zeros(m)
    for j in range(m):
        v[j] = INF
        argmin[j] = -1
    for i in range(n):
        ui = u[i]
        for j in range(m):
            x = c[i, j]
            poison[j] += x * 0.0  # stays 0 unless some entry is NaN or +-inf
            a = abs(x)
            if a > top[j]:
                top[j] = a
            r = x - ui
            if r < v[j]:
                v[j] = r
                argmin[j] = i
    if poison.sum() != 0.0:
        return np.nan
    return top.max() if n * m else 0.0


@kernel
def match_argmins(argmin, col4row, row4col):
    """Match each free column to its Min-Trick row when that row is still free: the edge is
    tight by construction (JV's column reduction)."""
    for j in range(argmin.size):
        i = argmin[j]
        if i >= 0 and row4col[j] == -1 and col4row[i] == -1:
            col4row[i] = j
            row4col[j] = i


def positive_scale(scale: float) -> float:
    """The cost scale the tolerances are relative to: max |c_ij|, or 1 for an all-zero matrix.
    Not floored at 1, so costs far below 1 keep their digits."""
    return scale if scale > 0 else 1.0


@kernel
def slack(cij, ui, vj, rel):
    """Round-off allowance for the reduced cost cij - ui - vj: `rel` times its terms' size."""
    return rel * (abs(cij) + abs(ui) + abs(vj))


@kernel
def keep_tight(c, u, v, start, col4row, row4col, rel):
    """Keep the edges (i, start[i]) whose reduced cost under (u, v) is within round-off of 0
    (`slack` with `rel`: the duals that made `start`) as a partial matching."""
    for i in range(c.shape[0]):
        j = start[i]
        if j >= 0 and row4col[j] == -1 and c[i, j] - u[i] - v[j] <= slack(c[i, j], u[i], v[j], rel):
            col4row[i] = j
            row4col[j] = i


@kernel
def tighten_and_match(c, u, v, col4row, row4col, start):
    """Raise each unmatched u_i to min_j (c_ij - v_j) and match it to a free tight column:
    start[i] when that one is, else the first (a matched row's edge is tight, so its u_i
    is already that minimum).

    Duals stay feasible and every kept edge has zero reduced cost.
    """
    n, m = c.shape
    for i in range(n):
        if col4row[i] >= 0:
            continue
        best = INF
        jfree = -1
        for j in range(m):
            r = c[i, j] - v[j]
            if r < best:
                best = r
                jfree = j if row4col[j] == -1 else -1
            elif r == best and jfree == -1 and row4col[j] == -1:
                jfree = j
        u[i] = best
        j = start[i]
        if j >= 0 and row4col[j] == -1 and c[i, j] - v[j] == best:
            jfree = j
        if jfree >= 0:
            col4row[i] = jfree
            row4col[jfree] = i


def warm_state(
    c: np.ndarray, row_duals: np.ndarray, start: np.ndarray | None = None
) -> tuple[tuple[np.ndarray, ...], float]:
    """Feasible (u, v) from any finite row duals plus the tight partial matching they give
    (the still-tight edges of the assignment `start`, if any, then each column's Min-Trick
    row, then the rows still free after tightening), and the cost scale
    max |c_ij| (NaN when `c` has a non-finite entry: nothing else is computed then)."""
    n, m = c.shape
    u = np.array(row_duals, dtype=np.float64)
    v = np.empty(m, np.float64)
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    argmin = np.empty(m, np.int64)
    scale = checked_min_trick(c, u, v, argmin)
    if not np.isnan(scale):
        if start is None:
            start = np.full(n, -1, np.int64)
        keep_tight(c, u, v, start, col4row, row4col, TIGHT_REL)
        match_argmins(argmin, col4row, row4col)
        tighten_and_match(c, u, v, col4row, row4col, start)
    return (u, v, col4row, row4col), float(scale)


@kernel
def negative_tight_edges(c, u, v, negative, rel):
    """The edges within `slack` (with `rel`) of tight that end in one of the columns
    `negative` (those with v_j < 0, which must end assigned), as CSR arrays (indptr, indices)
    over the rows, each row's exactly tight ones first: a matching that takes
    round-off-tight edges where exact ones exist sums their round-off (maximized transport
    costs: past the certificate's). Only those columns are read (at most n - 1 of m)."""
    n = c.shape[0]
    indptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        count = 0
        for j in negative:
            if c[i, j] - u[i] - v[j] <= slack(c[i, j], u[i], v[j], rel):
                count += 1
        indptr[i + 1] = indptr[i] + count
    indices = np.empty(indptr[n], np.int64)
    for i in range(n):
        k = indptr[i]
        for j in negative:
            if c[i, j] - u[i] - v[j] <= 0.0:
                indices[k] = j
                k += 1
        for j in negative:
            r = c[i, j] - u[i] - v[j]
            if 0.0 < r <= slack(c[i, j], u[i], v[j], rel):
                indices[k] = j
                k += 1
    return indptr, indices


def match_negative_columns(c: np.ndarray, u: np.ndarray, v: np.ndarray, col4row: np.ndarray,
                           row4col: np.ndarray) -> None:
    """Match as many columns with v_j < 0 as the tight edges allow (a maximum bipartite
    matching, Hopcroft-Karp: `cardinality.maximum_matching`, which scipy's took 30 s to
    find on 2000 x 4000 transport costs): such columns must end assigned and spare ones
    need not. A greedy pass left 142 of them free on a solve's own duals (1000 x 1250
    low-rank costs: rows tie on two columns), and each free one costs the rows tight on it."""
    indptr, indices = negative_tight_edges(c, u, v, np.flatnonzero(v < 0.0), TIGHT_REL)
    if indices.size == 0:
        return
    matched = maximum_matching(indptr, indices, c.shape[1])
    rows = np.flatnonzero(matched >= 0)
    col4row[rows] = matched[rows]
    row4col[matched[rows]] = rows


@kernel
def release_negative_free(c, u, v, col4row, row4col):
    """Give each free column with v_j < 0 the value 0 that a spare column must hold (the
    rectangular solve moves only assigned columns' duals, and a spare one with v_j < 0
    breaks complementary slackness). A row that makes infeasible drops its u_i to c_ij and,
    if assigned, is freed: its column, once free, is released in turn. Returns rows freed."""
    n, m = c.shape
    stack = np.empty(m, np.int64)
    top = 0
    for j in range(m):
        if row4col[j] == -1 and v[j] < 0.0:
            stack[top] = j
            top += 1
    freed = 0
    while top > 0:
        top -= 1
        j = stack[top]
        v[j] = 0.0
        for i in range(n):
            if c[i, j] < u[i]:
                u[i] = c[i, j]
                k = col4row[i]
                if k >= 0:
                    col4row[i] = -1
                    row4col[k] = -1
                    freed += 1
                    if v[k] < 0.0:
                        stack[top] = k
                        top += 1
    return freed


def _fix_gauge(c: np.ndarray, u: np.ndarray, v: np.ndarray, scale: float) -> None:
    """Shift to (u + d, v - d), the same feasible duals, so the n-th least v_j is 0: n
    columns at or below 0, the rest at or above (then capped). A solve's own duals, whose
    n-th least column dual is already 0, keep their values; duals shifted by any constant
    start alike (row duals raised by 8 max|c| made every v_j negative, every spare column
    one to release), and so do duals whose spare columns round to just below 0 (one at
    -1.8e-15, released to 0, freed 1845 of 2000 rows in cascade). v is priced afresh from
    the shifted u: shifting both by d rounded 1e15 duals into infeasibility (0.06)."""
    d = float(np.partition(v, u.size - 1)[u.size - 1])
    shifted = u + d
    if d != 0.0 and np.isfinite(d) and safe_duals(shifted, scale):
        u[:] = shifted
        min_trick(c, u, v)


def rectangular_warm_state(c: np.ndarray, row_duals: np.ndarray
                           ) -> tuple[tuple[np.ndarray, ...], float]:
    """`warm_state` for n_rows < n_cols in the cold solve's own frame, without padding to a
    square: column duals min(0, Min-Trick) (feasible, and a solve's own duals come back as
    they were), the columns with v_j < 0 matched along tight edges (`match_negative_columns`),
    free rows tightened and matched, then every free column brought to v_j = 0
    (`release_negative_free`) and the rows that freed tightened again. Padded with zero-cost
    rows the start was degenerate: the dummies tied on every column at 0, and a solve's own
    duals took 2-30x its cold time (uniform and tracking costs)."""
    n, m = c.shape
    u = np.array(row_duals, dtype=np.float64)
    v = np.empty(m, np.float64)
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    scale = checked_min_trick(c, u, v, np.empty(m, np.int64))
    if not np.isnan(scale):
        _fix_gauge(c, u, v, scale)
        np.minimum(v, 0.0, out=v)
        none = np.full(n, -1, np.int64)
        match_negative_columns(c, u, v, col4row, row4col)
        tighten_and_match(c, u, v, col4row, row4col, none)
        if release_negative_free(c, u, v, col4row, row4col):
            tighten_and_match(c, u, v, col4row, row4col, none)
    return (u, v, col4row, row4col), float(scale)
