"""Maximum cardinality matching of a sparse pattern (Hopcroft-Karp), which tells whether an
assignment exists and which row one must leave out.

Hand-written rather than scipy's `maximum_bipartite_matching`: scipy's depth-first phase
never marks a row whose search failed, so rows reachable along many layered paths are
expanded again and again, in time exponential in the depth (scipy issue #26147, fix open
as #26159). Gated tracking patterns are such graphs: on 10,000 tracks gated to their 8
nearest detections scipy took 5.8 s, against 4 ms for a random pattern of the same size.
Here each phase scans every edge at most once: a row whose search fails is marked dead for
the rest of the phase.
"""

from __future__ import annotations

import numpy as np

from coplug.plugins.lap.cache_dir import kernel


@kernel
def _greedy(indptr, indices, match_row, match_col):
    """Match each row to its first free column, if any (a cheap start)."""
    for i in range(match_row.size):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if match_col[j] == -1:
                match_row[i] = j
                match_col[j] = i
                break


@kernel
def _layers(indptr, indices, match_row, match_col, dist, queue, dead):
    """Breadth-first layers from the free rows along alternating paths (`dist`, `dead` for
    rows not reached); True when some free column can be reached."""
    n = match_row.size
    tail = 0
    for i in range(n):
        if match_row[i] == -1:
            dist[i] = 0
            queue[tail] = i
            tail += 1
        else:
            dist[i] = dead
    found = False
    head = 0
    while head < tail:
        r = queue[head]
        head += 1
        for k in range(indptr[r], indptr[r + 1]):
            r2 = match_col[indices[k]]
            if r2 == -1:
                found = True
            elif dist[r2] == dead:
                dist[r2] = dist[r] + 1
                queue[tail] = r2
                tail += 1
    return found


@kernel
def _augment_from(s, indptr, indices, match_row, match_col, dist, cursor, stack, via, dead):
    """Depth-first search along the layers from free row `s` to a free column; augments
    and returns True when one is found. A row whose edges are exhausted is marked dead."""
    top = 0
    stack[0] = s
    while top >= 0:
        r = stack[top]
        moved = False
        while cursor[r] < indptr[r + 1]:
            j = indices[cursor[r]]
            cursor[r] += 1
            r2 = match_col[j]
            if r2 == -1:
                for d in range(top, -1, -1):
                    col = j if d == top else via[d]
                    match_row[stack[d]] = col
                    match_col[col] = stack[d]
                return True
            if dist[r2] == dist[r] + 1:
                via[top] = j
                top += 1
                stack[top] = r2
                moved = True
                break
        if not moved:
            dist[r] = dead
            top -= 1
    return False


@kernel
def maximum_matching(indptr, indices, m):
    """The column matched to each row (-1: unmatched) in a maximum matching of the CSR
    pattern (`indptr`, `indices`) with `m` columns."""
    n = indptr.size - 1
    match_row = np.full(n, -1, np.int64)
    match_col = np.full(m, -1, np.int64)
    _greedy(indptr, indices, match_row, match_col)
    dead = n + 1
    dist = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    cursor = np.empty(n, np.int64)
    stack = np.empty(n, np.int64)
    via = np.empty(n, np.int64)
    while _layers(indptr, indices, match_row, match_col, dist, queue, dead):
        cursor[:] = indptr[:n]
        grew = False
        for s in range(n):
            if match_row[s] == -1 and dist[s] == 0:
                if _augment_from(s, indptr, indices, match_row, match_col, dist, cursor,
                                 stack, via, dead):
                    grew = True
        if not grew:
            break
    return match_row
