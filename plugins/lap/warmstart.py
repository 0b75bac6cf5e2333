"""Warm start from predicted row duals: the Min-Trick makes them feasible, then the tight
edges seed the matching and only the remaining rows are augmented."""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf


@njit(cache=True)
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


@njit(cache=True)
def checked_min_trick(c, u, v):
    """`min_trick` that also returns the cost scale max |c_ij|, or NaN when an entry is NaN
    or infinite: the solve's first pass validates the costs too (one pass instead of two).
    Its range tracking costs about half a pass more, so later passes use `min_trick`."""
    n, m = c.shape
    for j in range(m):
        v[j] = INF
    lo = INF
    hi = -INF
    poison = 0.0
    for i in range(n):
        ui = u[i]
        for j in range(m):
            x = c[i, j]
            poison += x * 0.0  # stays 0 unless some entry is NaN or +-inf
            if x < lo:
                lo = x
            if x > hi:
                hi = x
            r = x - ui
            if r < v[j]:
                v[j] = r
    if poison != 0.0:
        return np.nan
    return max(np.float64(hi), -np.float64(lo)) if n * m else 0.0


@njit(cache=True)
def tighten_and_match(c, u, v, col4row, row4col):
    """Raise each u_i to min_j (c_ij - v_j) and keep a greedy matching of tight edges.

    Duals stay feasible and every kept edge has zero reduced cost; returns rows matched.
    """
    n, m = c.shape
    matched = 0
    for i in range(n):
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
        if jfree >= 0:
            col4row[i] = jfree
            row4col[jfree] = i
            matched += 1
    return matched


def warm_state(c: np.ndarray, row_duals: np.ndarray) -> tuple[tuple[np.ndarray, ...], float]:
    """Feasible (u, v) from any finite row duals plus the tight partial matching they give,
    and the cost scale max |c_ij| (NaN when `c` has a non-finite entry: nothing else is
    computed then)."""
    n, m = c.shape
    u = np.array(row_duals, dtype=np.float64)
    v = np.empty(m, np.float64)
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    scale = checked_min_trick(c, u, v)
    if not np.isnan(scale):
        tighten_and_match(c, u, v, col4row, row4col)
    return (u, v, col4row, row4col), float(scale)
