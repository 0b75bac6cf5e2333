"""Optimality certificate for an assignment: weak duality with Min-Trick column duals.

Given the row duals u, v_j = min_i (c_ij - u_i) (capped at 0 for spare columns) is dual
feasible by construction, so sum(u) + sum(v) is a valid lower bound; the assignment is
certified optimal when its cost meets that bound (complementary slackness holds).

Each kernel also sums the assigned pairs' reduced costs c_ij - u_i - v_j (plus the spare
columns' terms): the same gap, but without subtracting two totals of size n * max|c|,
whose round-off (n * eps * max|c|) hid assignments 118 above the optimum on costs offset
by 2**50. Warm solves are held to that sum (`STRICT_ROW_ULPS`).
"""

from __future__ import annotations

import math

import numpy as np

from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.warmstart import min_trick, positive_scale

INF = np.inf
EPS = float(np.finfo(np.float64).eps)
# Gap a strict (warm) certificate accepts, in units of n * eps * (max|assigned c| + max|u|):
# optimal solves of the four generators at N = 500..8192 show at most 12.
STRICT_ROUNDOFF_ULPS = 1024.0
# Summed reduced cost a strict certificate accepts, in units of eps times the summed size of
# its terms (|c_ij| + |u_i| + |v_j| per assigned pair: c_ij - u_i rounds at the size of c
# and u, which |c_ij - u_i| understated where they cancel, as under maximize: optimal warm
# answers on maximized transport costs were refused at 24 units).
STRICT_ROW_ULPS = 8.0


@kernel
def _valid_assignment(col4row, m):
    """True when every row has a distinct column in range."""
    used = np.zeros(m, np.bool_)
    for i in range(col4row.shape[0]):
        j = col4row[i]
        if j < 0 or j >= m or used[j]:
            return False
        used[j] = True
    return True


@kernel
def _reduced_gap(c, col4row, u, v):
    """`_assigned_reduced_gap` for a dense matrix."""
    n = c.shape[0]
    cost = np.empty(n)
    for i in range(n):
        cost[i] = c[i, col4row[i]]
    return _assigned_reduced_gap(cost, col4row, u, v)


@kernel
def _assigned_reduced_gap(cost, col4row, u, v):
    """primal - bound as a sum of non-negative small terms, from the assigned entries
    `cost`: each assigned pair's reduced cost (c_ij - u_i) - v_j, and for spare columns
    (n < m) the v_j > 0 of assigned columns and -v_j of unassigned ones below 0 (v_j = inf,
    an empty sparse column, adds nothing); with the summed size of those terms."""
    n, m = cost.shape[0], v.shape[0]
    reduced = 0.0
    size = 0.0
    used = np.zeros(m, np.bool_)
    for i in range(n):
        j = col4row[i]
        used[j] = True
        d = cost[i] - u[i]
        reduced += d - v[j]
        size += abs(cost[i]) + abs(u[i]) + abs(v[j])  # c - u rounds at |c| + |u|
    if n < m:
        for j in range(m):
            if used[j] and v[j] > 0.0:
                reduced += v[j]
                size += v[j]
            elif not used[j] and v[j] < 0.0:
                reduced -= v[j]
                size -= v[j]
    return reduced, size


@kernel
def dense_gap(c, col4row, u):
    """(primal cost, dual bound, max |assigned cost|, summed reduced cost, its terms' size)
    for a dense min-cost matrix with n_rows <= n_cols."""
    n, m = c.shape
    if not _valid_assignment(col4row, m):
        return INF, -INF, 0.0, INF, 0.0
    v = np.empty(m)
    min_trick(c, u, v)
    primal = 0.0
    assigned = 0.0
    for i in range(n):
        primal += c[i, col4row[i]]
        assigned = max(assigned, abs(np.float64(c[i, col4row[i]])))
    bound = 0.0
    for i in range(n):
        bound += u[i]
    for j in range(m):
        bound += v[j] if (n == m or v[j] < 0.0) else 0.0
    reduced, size = _reduced_gap(c, col4row, u, v)
    return primal, bound, assigned, reduced, size


@kernel
def dense_gap_since(c, col4row, u, v, u_snap, v_snap):
    """(primal cost, dual bound, max |assigned cost|, summed reduced cost, its terms' size)
    like `dense_gap`, for a matrix (n_rows <= n_cols) on which (u_snap, v_snap) was dual
    feasible on every entry (as row tightening, or a rectangular row reduction, leaves it).

    Only rows whose u rose and columns whose v rose since are rescanned, and their duals
    lowered to feasibility; every other entry keeps u_i + v_j <= u_snap_i + v_snap_j <= c_ij.
    So the bound is as valid as `dense_gap`'s, at the cost of the rescanned lines only.
    """
    n, m = c.shape
    if not _valid_assignment(col4row, m):
        return INF, -INF, 0.0, INF, 0.0
    uu = u.copy()
    vv = v.copy()
    for i in range(n):
        if u[i] > u_snap[i]:
            for j in range(m):
                r = c[i, j] - v[j]
                if r < uu[i]:
                    uu[i] = r
    for j in range(m):
        if v[j] > v_snap[j]:
            for i in range(n):
                r = c[i, j] - uu[i]
                if r < vv[j]:
                    vv[j] = r
    primal = 0.0
    bound = 0.0
    assigned = 0.0
    for i in range(n):
        primal += c[i, col4row[i]]
        assigned = max(assigned, abs(np.float64(c[i, col4row[i]])))
        bound += uu[i]
    for j in range(m):
        bound += vv[j] if (n == m or vv[j] < 0.0) else 0.0
    reduced, size = _reduced_gap(c, col4row, uu, vv)
    return primal, bound, assigned, reduced, size


@kernel
def sparse_gap(indptr, indices, data, m, col4row, u):
    """(primal cost, dual bound, max |assigned cost|, summed reduced cost, its terms' size)
    for CSR costs (missing entries = forbidden), n_rows <= m."""
    n = indptr.shape[0] - 1
    if not _valid_assignment(col4row, m):
        return INF, -INF, 0.0, INF, 0.0
    v = np.full(m, INF)
    cost = np.empty(n)
    primal = 0.0
    assigned = 0.0
    for i in range(n):
        found = False
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            r = data[k] - u[i]
            if r < v[j]:
                v[j] = r
            if j == col4row[i]:
                cost[i] = data[k]
                primal += data[k]
                assigned = max(assigned, abs(np.float64(data[k])))
                found = True
        if not found:
            return INF, -INF, 0.0, INF, 0.0
    bound = 0.0
    for i in range(n):
        bound += u[i]
    for j in range(m):
        if v[j] == INF:
            if n == m:
                return primal, -INF, assigned, INF, 0.0
            continue
        bound += v[j] if (n == m or v[j] < 0.0) else 0.0
    reduced, size = _assigned_reduced_gap(cost, col4row, u, v)
    return primal, bound, assigned, reduced, size


def tolerance(scale: float, n: int) -> float:
    """Accepted |primal - bound|: float64 round-off of n dual updates at this cost scale."""
    return 1e-9 * positive_scale(scale) * max(1, n)


def certified(
    primal: float, bound: float, scale: float, n: int, dual_magnitude: float = 0.0,
    strict: bool = False, reduced: float | None = None, reduced_size: float = 0.0,
) -> bool:
    """True when the cost meets the dual bound within round-off.

    Duals far larger than the costs make `c_ij - u_i` lose the costs' digits, so the bound is
    only trusted while that round-off (about n * eps * max|u|) stays inside the tolerance.
    `strict` (warm solves, where a refusal only costs a cold re-solve) also caps the accepted
    gap at STRICT_ROUNDOFF_ULPS of that round-off, far below 1e-9 * n * scale, and, given
    the summed reduced cost `reduced` of terms of total size `reduced_size`, holds that sum
    to STRICT_ROW_ULPS round-off units of its terms.
    """
    roundoff = max(1, n) * EPS * (positive_scale(scale) + dual_magnitude)
    accepted = tolerance(scale, n)
    if strict:
        accepted = min(accepted, STRICT_ROUNDOFF_ULPS * roundoff)
        if reduced is not None and not reduced <= STRICT_ROW_ULPS * EPS * reduced_size:
            return False
    return math.isfinite(primal) and math.isfinite(bound) and (
        4.0 * roundoff <= tolerance(scale, n) and primal - bound <= accepted
    )
