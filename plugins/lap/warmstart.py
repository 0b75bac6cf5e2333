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
# Cold square solves start from JV's column reduction when it matches at least this share
# of the rows; below it the column minima pile onto few rows (low-rank costs) and zero duals
# left to row reduction start better.
COLUMN_REDUCTION_MIN_MATCHED = 0.5
# A square warm start whose greedy match (the still-tight `start` edges, then each column's
# Min-Trick row) leaves more than this share of the rows free, with as many columns tight on
# two rows, matches its tight edges by a maximum matching instead (one more pass over the
# costs): a solve's own duals left 10-20% of the rows to shortest-path searches along the
# tight edges, 167 at 2000 x 2000 uniform costs, up to 3.5x the cold solve's time.
TIGHT_MATCH_MIN_FREE = 0.01
# ... along edges tight within this many ulps of their terms, under the strict warm
# certificate's 8 per row: at KEEP_TIGHT_ULPS Hopcroft-Karp took edges 64 ulps off where an
# exactly tight perfect matching existed, the row duals rose by that slack, and a solve's own
# duals on costs tied to 5e-14 failed the certificate (54 of 72). Exact edges alone left 412
# of 2000 rows to augment on transport costs (35 at this tolerance).
TIGHT_MATCH_REL = 4 * float(np.finfo(np.float64).eps)


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
def checked_min_trick(c, u, v, argmin, record):
    """`min_trick` that also records each column's minimizing row in `argmin` and returns the
    cost scale max |c_ij|, or NaN when an entry is NaN or infinite: the solve's first pass
    validates the costs and finds JV's column-reduction edges too (one pass, not three).
    `record` (`column_record`) receives what a warm start weighs itself with. Row duals too
    large for float64 reduced costs at these costs (`safe_duals`) are set to 0 in place and
    the pass is run again."""
    scale = _checked_pass(c, u, v, argmin, record)
    if not np.isnan(scale) and not safe_duals(u, scale):
        u[:] = 0.0
        scale = _checked_pass(c, u, v, argmin, record)
    return scale


@kernel
def column_record(m):
    """Arrays for `checked_min_trick` to fill, per column: the cost minimum min_i c_ij, its
    row, and the second least reduced cost (a warm start compares its bound with the column
    reduction's and counts the columns tight on two rows). m = 0 records nothing; m columns
    cost about 10% more time in the pass, which is otherwise bound by memory."""
    return np.empty(m), np.empty(m, np.int64), np.empty(m)


@kernel
def safe_duals(u, scale):
    """Whether row duals keep every reduced cost c_ij - u_i - v_j of costs up to `scale` well
    inside float64 (max |u| + scale <= max/4). Past that the Min-Trick and the tightened
    duals overflowed to -inf and inf, and the solve called a dense matrix unassignable; such
    a start is replaced by zeros (JV's column reduction), which keeps the solve exact."""
    top = np.abs(u).max() if u.size else 0.0
    return top + scale <= np.finfo(np.float64).max / 4


@kernel
def _checked_pass(c, u, v, argmin, record):
    """One pass of `checked_min_trick` over the costs. Everything it tracks is per column, so
    the inner loop stays vectorized."""
    n, m = c.shape
    low, lowarg, second = record
    track = low.size > 0
    top = np.zeros(m)
    poison = np.zeros(m)
    for j in range(m):
        v[j] = INF
        argmin[j] = -1
    if track:
        low[:] = INF
        second[:] = INF
    for i in range(n):
        ui = u[i]
        for j in range(m):
            x = c[i, j]
            poison[j] += x * 0.0  # stays 0 unless some entry is NaN or +-inf
            a = abs(x)
            if a > top[j]:
                top[j] = a
            if track and x < low[j]:
                low[j] = x
                lowarg[j] = i
            r = x - ui
            if r < v[j]:
                if track:
                    second[j] = v[j]
                v[j] = r
                argmin[j] = i
            elif track and r < second[j]:
                second[j] = r
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
) -> tuple[tuple[np.ndarray, ...], float, bool]:
    """Feasible (u, v) from any finite row duals plus the tight partial matching they give
    (the still-tight edges of the assignment `start`, if any, then each column's Min-Trick
    row, or a maximum matching of the tight edges where that may match more
    (`tight_matching_pays`), then the rows still free after tightening), the
    cost scale max |c_ij| (NaN when `c` has a non-finite entry: nothing else is computed
    then), and whether the duals were set aside (`below_column_reduction`): the state is
    then JV's column reduction, as `column_reduction_state` gives it."""
    n, m = c.shape
    u = np.array(row_duals, dtype=np.float64)
    v = np.empty(m, np.float64)
    argmin = np.empty(m, np.int64)
    record = column_record(m)
    scale = checked_min_trick(c, u, v, argmin, record)
    if np.isnan(scale):
        return (u, v, np.full(n, -1, np.int64), np.full(m, -1, np.int64)), float(scale), False
    low, lowarg, second = record
    if below_column_reduction(u, v, low):
        cold = _reduced(c, np.zeros(n), low, lowarg)
        if np.count_nonzero(cold[2] >= 0) >= COLUMN_REDUCTION_MIN_MATCHED * n:
            return cold, float(scale), True
    if start is None:
        start = np.full(n, -1, np.int64)
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    keep_tight(c, u, v, start, col4row, row4col, TIGHT_REL)
    match_argmins(argmin, col4row, row4col)
    if tight_matching_pays(v, second, col4row, TIGHT_MATCH_MIN_FREE):
        match_tight_edges(c, u, v, col4row, row4col, scale)
    tighten_and_match(c, u, v, col4row, row4col, start)
    return (u, v, col4row, row4col), float(scale), False


def column_reduction_state(c: np.ndarray) -> tuple[tuple[np.ndarray, ...], float]:
    """JV's column reduction (v_j = min_i c_ij, each column's minimizing row matched while
    free, the rows left free tightened and matched) and the cost scale (NaN: not finite)."""
    n, m = c.shape
    u = np.zeros(n)
    v = np.empty(m, np.float64)
    argmin = np.empty(m, np.int64)
    scale = checked_min_trick(c, u, v, argmin, column_record(0))
    if np.isnan(scale):
        return (u, v, np.full(n, -1, np.int64), np.full(m, -1, np.int64)), float(scale)
    return _reduced(c, u, v, argmin), float(scale)


def _reduced(c: np.ndarray, u: np.ndarray, v: np.ndarray, argmin: np.ndarray
             ) -> tuple[np.ndarray, ...]:
    """(u, v, col4row, row4col) from Min-Trick duals and each column's minimizing row:
    those edges matched while both ends are free, then the free rows tightened and matched."""
    n, m = c.shape
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    match_argmins(argmin, col4row, row4col)
    tighten_and_match(c, u, v, col4row, row4col, np.full(n, -1, np.int64))
    return u, v, col4row, row4col


@kernel
def below_column_reduction(u, v, low):
    """Whether feasible square duals (u, v) bound the optimum below JV's column reduction
    (sum u + sum v against sum_j min_i c_ij, `low` the column minima), or not finitely: JV's
    work grows with the gap its start leaves, and such duals took up to 60x the cold time
    (4000 x 4000 uniform costs, duals 10% of the range off: 3361 augmentations against 205).
    They are set aside where cold JV keeps its column reduction (it matches
    COLUMN_REDUCTION_MIN_MATCHED of the rows); where it drops it (low-rank costs) it starts
    from zero duals, the bound says nothing of its work, and the duals are kept."""
    bound = u.sum() + v.sum()
    return not bound >= low.sum()


@kernel
def tight_matching_pays(v, second, col4row, share):
    """Whether a maximum matching of the tight edges may match more than `share` of the rows
    beyond the greedy one (each column's Min-Trick row): a row that match left free is that
    minimum in no column, so each augmenting path starts at a column tight on a second row
    (`second`, its second least reduced cost, within round-off of v_j). From noisy duals
    such columns are rare and the extra pass over the costs would buy nothing."""
    n = col4row.size
    free = np.count_nonzero(col4row < 0)
    if free <= share * n:
        return False
    multiple = 0
    for j in range(v.size):
        if second[j] < INF and second[j] - v[j] <= slack(second[j], 0.0, v[j], TIGHT_REL):
            multiple += 1
    return multiple > share * n


@kernel
def tight_edges(c, u, v, rel, scale):
    """The edges within `slack` (with `rel`) of tight, as CSR arrays (indptr, indices) over
    the rows, each row's exactly tight ones first (the matching prefers them; see
    `negative_tight_edges`). One pass over the costs, whose loop only compares: `slack` is
    computed where a row-wide bound on it (from `scale` >= max |c_ij|) does not already rule
    the edge out. The edge buffer doubles when a row might not fit."""
    n, m = c.shape
    indptr = np.zeros(n + 1, np.int64)
    indices = np.empty(2 * (n + m), np.int64)
    near = np.empty(m, np.int64)
    v_top = np.abs(v).max() if m else 0.0
    k = 0
    for i in range(n):
        if k + m > indices.size:
            grown = np.empty(max(2 * indices.size, k + m), np.int64)
            grown[:k] = indices[:k]
            indices = grown
        ui = u[i]
        bound = slack(scale, ui, v_top, rel)
        count = 0
        for j in range(m):
            r = c[i, j] - ui - v[j]
            if r <= 0.0:
                indices[k] = j
                k += 1
            elif r <= bound:
                near[count] = j
                count += 1
        for t in range(count):
            j = near[t]
            if c[i, j] - ui - v[j] <= slack(c[i, j], ui, v[j], rel):
                indices[k] = j
                k += 1
        indptr[i + 1] = k
    return indptr, indices[:k]


@kernel
def match_tight_edges(c, u, v, col4row, row4col, scale):
    """Replace the partial matching by a maximum matching of the tight edges, within
    TIGHT_MATCH_REL (`cardinality.maximum_matching`), when that one matches more rows;
    `scale` is max |c_ij|."""
    indptr, indices = tight_edges(c, u, v, TIGHT_MATCH_REL, scale)
    matched = maximum_matching(indptr, indices, c.shape[1])
    if np.count_nonzero(matched >= 0) > np.count_nonzero(col4row >= 0):
        col4row[:] = -1
        row4col[:] = -1
        for i in range(matched.size):
            if matched[i] >= 0:
                col4row[i] = matched[i]
                row4col[matched[i]] = i


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
    scale = checked_min_trick(c, u, v, np.empty(m, np.int64), column_record(0))
    if not np.isnan(scale):
        _fix_gauge(c, u, v, scale)
        np.minimum(v, 0.0, out=v)
        none = np.full(n, -1, np.int64)
        match_negative_columns(c, u, v, col4row, row4col)
        tighten_and_match(c, u, v, col4row, row4col, none)
        if release_negative_free(c, u, v, col4row, row4col):
            tighten_and_match(c, u, v, col4row, row4col, none)
    return (u, v, col4row, row4col), float(scale)
