"""A whole dense JV solve and its certificate's figures in one compiled call, for matrices
small enough that the Python between kernels costs more than the solve itself (a 10 x 10
took 38 us through the kernel-by-kernel path, where scipy takes 1 us).

The steps and their order are those of `solver._solve_dense` (column reduction or the
Min-Trick, augmenting row reduction, shortest augmenting paths); only the certificate
always makes the full pass (`certify.dense_gap`), which on a small matrix is cheaper than
deciding whether a rescan would do.
"""

from __future__ import annotations

import numpy as np

from coplug.plugins.lap import certify, jv, warmstart
from coplug.plugins.lap.cache_dir import kernel

# Dense matrices with at most this many entries take the one-call path. JV's worst case there
# (n * n * m steps) stays within tens of milliseconds, so a deadline is checked only before
# the call.
MAX_ENTRIES = 128 * 128


@kernel
def solve(c, u0, warm, arr_passes, min_matched, steps_per_row):
    """Cold (a square: column reduction when it matches `min_matched` of the rows, else zero
    duals and two row-reduction passes; a rectangle: row reduction) or warm (Min-Trick duals
    of `u0`, square only) JV on a min-cost matrix with n_rows <= n_cols; `arr_passes` < 0
    takes the default passes.

    Returns (col4row, u, v, augmentations, row-reduction scans, max |c_ij| (NaN when an entry
    is not finite: nothing else is computed), `certify.dense_gap`'s five figures, and whether
    `u0` was set aside for a cold start: `warmstart.below_column_reduction`);
    augmentations < 0 name a row no column can take, as in `jv.shortest_augmenting_paths`.
    """
    n, m = c.shape
    u = u0.copy() if warm else np.zeros(n)
    v = np.zeros(m)
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    gap = (np.inf, -np.inf, 0.0, np.inf, 0.0)
    reduced = False
    set_aside = False
    if n == m:
        argmin = np.empty(m, np.int64)
        record = warmstart.column_record(m if warm else 0)
        scale = warmstart.checked_min_trick(c, u, v, argmin, record)
        if np.isnan(scale):
            return col4row, u, v, 0, 0, scale, gap, False
        low, lowarg, second = record
        if warm and warmstart.below_column_reduction(u, v, low):
            cold_u, cold_col4row, cold_row4col = np.zeros(n), col4row.copy(), row4col.copy()
            warmstart.match_argmins(lowarg, cold_col4row, cold_row4col)
            warmstart.tighten_and_match(c, cold_u, low, cold_col4row, cold_row4col,
                                        np.full(n, -1, np.int64))
            if np.count_nonzero(cold_col4row >= 0) >= min_matched * n:  # as cold JV keeps it
                warm = False
                set_aside = True
                u, v, col4row, row4col = cold_u, low, cold_col4row, cold_row4col
        if not set_aside:
            warmstart.match_argmins(argmin, col4row, row4col)
        if warm and warmstart.tight_matching_pays(v, second, col4row,
                                                  warmstart.TIGHT_MATCH_MIN_FREE):
            warmstart.match_tight_edges(c, u, v, col4row, row4col, scale)
        if not set_aside:
            warmstart.tighten_and_match(c, u, v, col4row, row4col, np.full(n, -1, np.int64))
        matched = np.count_nonzero(col4row >= 0)
        reduced = warm or matched >= min_matched * n
        if not reduced:
            u[:] = 0.0
            v[:] = 0.0
            col4row[:] = -1
            row4col[:] = -1
    else:
        scale = jv.checked_row_reduction(c, u, col4row, row4col)
        if np.isnan(scale):
            return col4row, u, v, 0, 0, scale, gap, False
        reduced = True
    passes = (1 if reduced else 2) if arr_passes < 0 else arr_passes
    scans, _ = jv.row_reduction_passes(c, v, col4row, row4col, passes, steps_per_row * m)
    if not warm or passes:
        jv.implicit_row_duals(c, v, col4row, u)
    augs, _ = jv.shortest_augmenting_paths(c, u, v, col4row, row4col, 0, n + 1,
                                           np.full(1, np.iinfo(np.int64).max, np.int64))
    if augs < 0:
        return col4row, u, v, augs, scans, scale, gap, set_aside
    return col4row, u, v, augs, scans, scale, certify.dense_gap(c, col4row, u), set_aside
