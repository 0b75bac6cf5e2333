"""LAPMOD-style sparse assignment: CSR costs, missing entries forbidden, heap Dijkstra
shortest augmenting paths on explicit duals; a pattern that holds no assignment is named
(`check_pattern`, a maximum matching) once a solve finds no augmenting path, not up front."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from coplug.plugins.arguments import check_exact_integers
from coplug.plugins.errors import InputError
from coplug.plugins.lap.cache_dir import kernel
from coplug.plugins.lap.cardinality import maximum_matching
from coplug.plugins.lap.jv import arr_take, flip_path
from coplug.plugins.lap.warmstart import slack

INF = np.inf


@kernel
def heap_push(keys, items, size, key, item):
    """Insert (key, item) into the binary min-heap of `size` entries; returns the new size."""
    k = size
    keys[k] = key
    items[k] = item
    while k > 0:
        parent = (k - 1) >> 1
        if keys[parent] <= keys[k]:
            break
        keys[parent], keys[k] = keys[k], keys[parent]
        items[parent], items[k] = items[k], items[parent]
        k = parent
    return size + 1


@kernel
def heap_pop(keys, items, size):
    """Remove the heap minimum; returns (key, item, new size)."""
    key = keys[0]
    item = items[0]
    size -= 1
    keys[0] = keys[size]
    items[0] = items[size]
    k = 0
    while True:
        left = 2 * k + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and keys[left + 1] < keys[left]:
            child = left + 1
        if keys[k] <= keys[child]:
            break
        keys[k], keys[child] = keys[child], keys[k]
        items[k], items[child] = items[child], items[k]
        k = child
    return key, item, size


@kernel
def sparse_min_trick(indptr, indices, data, m, u, v):
    """v_j = min over stored entries of column j of (c_ij - u_i); inf for empty columns."""
    n = indptr.shape[0] - 1
    for j in range(m):
        v[j] = INF
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            r = data[k] - u[i]
            if r < v[indices[k]]:
                v[indices[k]] = r


@kernel
def sparse_keep_tight(indptr, indices, data, u, v, start, col4row, row4col, rel):
    """Keep the stored edges (i, start[i]) whose reduced cost is within round-off of 0
    (`warmstart.slack` with `rel`) as a partial matching (the rows' duals are then already
    their minimum, up to that round-off)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        j = start[i]
        if j < 0 or row4col[j] != -1:
            continue
        for k in range(indptr[i], indptr[i + 1]):
            if indices[k] == j:
                if data[k] - u[i] - v[j] <= slack(data[k], u[i], v[j], rel):
                    col4row[i] = j
                    row4col[j] = i
                break


@kernel
def sparse_tighten_and_match(indptr, indices, data, u, v, col4row, row4col):
    """Raise each unmatched u_i to its row's minimum reduced cost and greedily keep free
    tight edges."""
    n = indptr.shape[0] - 1
    for i in range(n):
        if col4row[i] >= 0:
            continue
        best = INF
        jfree = -1
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            r = data[k] - v[j]
            if r < best:
                best = r
                jfree = j if row4col[j] == -1 else -1
            elif r == best and jfree == -1 and row4col[j] == -1:
                jfree = j
        u[i] = best
        if jfree >= 0:
            col4row[i] = jfree
            row4col[jfree] = i


@kernel
def sparse_augmenting_row_reduction(indptr, indices, data, v, col4row, row4col, free_rows,
                                    n_free, max_steps):
    """`jv.augmenting_row_reduction` over stored entries only: each free row takes its
    least reduced cost's column, lowering that column's v to the row's second least (a row
    with one stored entry lowers nothing). Returns (new free count, -1 when the step budget
    ran out; row scans done)."""
    m = v.shape[0]
    current = 0
    new_free = 0
    rr_cnt = 0
    while current < n_free:
        if rr_cnt >= max_steps:
            return -1, rr_cnt
        rr_cnt += 1
        i = free_rows[current]
        current += 1
        j1 = -1
        v1 = INF
        j2 = -1
        v2 = INF
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            r = data[k] - v[j]
            if r < v2:
                if r >= v1:
                    v2 = r
                    j2 = j
                else:
                    v2 = v1
                    v1 = r
                    j2 = j1
                    j1 = j
        if j1 < 0:  # no stored entry: the augmentation names the pattern
            free_rows[new_free] = i
            new_free += 1
            continue
        current, new_free = arr_take(v, col4row, row4col, free_rows, i, j1, v1, j2, v2,
                                     rr_cnt < current * m, current, new_free)
    return new_free, rr_cnt


@kernel
def sparse_row_reduction_passes(indptr, indices, data, v, col4row, row4col, passes,
                                max_steps):
    """`jv.row_reduction_passes` on CSR costs: returns (row scans done, whether it stopped
    early: no row free, or two passes in a row that freed none)."""
    free = np.flatnonzero(col4row < 0).astype(np.int64)
    n_free = free.size
    scans = 0
    stalled = 0
    for _ in range(passes):
        if n_free <= 0 or stalled >= 2:
            return scans, True
        before = n_free
        n_free, steps = sparse_augmenting_row_reduction(indptr, indices, data, v, col4row,
                                                        row4col, free, n_free, max_steps)
        scans += steps
        stalled = stalled + 1 if n_free >= before else 0
    return scans, n_free <= 0 or stalled >= 2


@kernel
def sparse_implicit_row_duals(indptr, indices, data, v, col4row, u):
    """u_i = c_i,col4row[i] - v_col4row[i] for assigned rows, the least c_ij - v_j over the
    row's stored entries for free ones."""
    n = indptr.shape[0] - 1
    for i in range(n):
        j = col4row[i]
        best = INF
        for k in range(indptr[i], indptr[i + 1]):
            if j >= 0:
                if indices[k] == j:
                    best = data[k] - v[j]
                    break
            else:
                r = data[k] - v[indices[k]]
                if r < best:
                    best = r
        u[i] = best


@kernel
def sparse_augment(indptr, indices, data, m, u, v, col4row, row4col, start, max_augs, budget):
    """Heap-Dijkstra shortest augmenting paths for free rows from `start` on, at most
    `max_augs` of them and none once the work budget `budget[0]` (stored entries scanned,
    counted down) is spent (feasible duals needed).

    Returns (augmentations, next row to look at), or (-1 - i, i) when row i cannot be
    assigned.
    """
    n = indptr.shape[0] - 1
    nnz = indptr[n]
    dist = np.full(m, INF)
    path = np.full(m, -1, np.int64)
    done = np.zeros(m, np.bool_)
    touched = np.empty(m, np.int64)
    final_cols = np.empty(m, np.int64)
    keys = np.empty(nnz + m + 1, np.float64)
    items = np.empty(nnz + m + 1, np.int64)
    count = 0
    for cur in range(start, n):
        if col4row[cur] >= 0:
            continue
        if count == max_augs or budget[0] <= 0:
            return count, cur
        count += 1
        n_touched = 0
        n_final = 0
        size = 0
        sink = -1
        min_val = 0.0
        free_best = INF  # the nearest free column reached so far, and its distance
        free_col = -1
        i = cur
        d_i = 0.0
        while True:
            base = d_i - u[i]
            budget[0] -= indptr[i + 1] - indptr[i] + 1
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if done[j]:
                    continue
                r = base + data[k] - v[j]
                if r < dist[j]:
                    if dist[j] == INF:
                        touched[n_touched] = j
                        n_touched += 1
                    dist[j] = r
                    path[j] = i
                    size = heap_push(keys, items, size, r, j)
                    if row4col[j] == -1 and r < free_best:
                        free_best = r
                        free_col = j
            if free_best < INF and (size == 0 or free_best <= keys[0]):
                # a free column at the least distance left ends the search, as JV's scan
                # does, before assigned columns tied with it are scanned
                sink = free_col
                min_val = free_best
                break
            j = -1
            while size > 0:
                key, cand, size = heap_pop(keys, items, size)
                if not done[cand] and key == dist[cand]:
                    j = cand
                    break
            if j < 0:
                break
            done[j] = True
            final_cols[n_final] = j
            n_final += 1
            if row4col[j] == -1:
                sink = j
                min_val = dist[j]
                break
            i = row4col[j]
            d_i = dist[j]
        if sink < 0:
            for k in range(n_touched):
                dist[touched[k]] = INF
                done[touched[k]] = False
            return -1 - cur, cur
        u[cur] += min_val
        for k in range(n_final):
            j = final_cols[k]
            delta = min_val - dist[j]
            v[j] -= delta
            if j != sink:
                u[row4col[j]] += delta
        flip_path(path, col4row, row4col, sink, cur)
        for k in range(n_touched):
            dist[touched[k]] = INF
            done[touched[k]] = False
    return count, n


@kernel
def assigned_values(indptr, indices, data, col4row, out):
    """out[i] = the stored cost of pair (i, col4row[i]); inf where it is not stored."""
    for i in range(col4row.size):
        out[i] = INF
        j = col4row[i]
        for k in range(indptr[i], indptr[i + 1]):
            if indices[k] == j:
                out[i] = data[k]
                break


@kernel
def is_canonical(indptr, indices, data, m):
    """Whether CSR arrays are valid and canonical with no extra stored tail (indptr from 0,
    non-decreasing, ending at len(indices) == len(data); each row's columns strictly
    increasing within [0, m)) and every stored value finite: the common input, which
    `as_csr` then takes as it is, without a copy."""
    nnz = indices.size
    if indptr[0] != 0 or indptr[indptr.size - 1] != nnz or data.size != nnz:
        return False
    for i in range(indptr.size - 1):
        lo, hi = indptr[i], indptr[i + 1]
        if hi < lo:
            return False
        last = -1
        for k in range(lo, hi):
            j = indices[k]
            if j <= last or j >= m or not np.isfinite(data[k]):
                return False
            last = j
    return True


def as_csr(cost: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """Canonical float64 CSR (sorted, duplicates rejected) with finite stored entries: a new
    matrix over the caller's arrays when they already are such (never written to; an index
    pointer whose length does not match the shape is left to `_check_structure` to name),
    else a copy.

    Dtypes follow the dense rules (real numbers only: no bool, no complex), except that
    float32 data are held as float64 (the sparse kernels take one type). The stored
    entries of every format are the allowed pairs, explicit zeros included; a DIA matrix
    stores every in-bounds position of its diagonals (as its `nnz` counts them).
    """
    cost = _native_order(cost)
    _check_dtype(cost)
    if cost.ndim != 2:
        raise InputError(f"sparse cost matrix must be 2-D, got shape {cost.shape}")
    if cost.format == "csr" and cost.dtype == np.float64 and len(cost.indptr) == (
        cost.shape[0] + 1
    ) and is_canonical(cost.indptr, cost.indices, cost.data, cost.shape[1]):
        return sp.csr_matrix(cost, copy=False)  # a new object: attributes set on it stay its own
    _check_structure(cost)
    if np.dtype(cost.dtype).kind in "iu":
        check_exact_integers(cost.tocoo().data, "sparse cost matrix")
    csr = _stored_csr(cost)
    csr.has_sorted_indices = False
    csr.sort_indices()
    if not csr.has_canonical_format:
        row, col = _first_duplicate(csr)
        raise InputError(f"sparse cost matrix stores ({row}, {col}) more than once; "
                         "give each allowed pair one entry")
    bad = ~np.isfinite(csr.data)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(csr.indptr, k, side="right") - 1)
        raise InputError(
            f"sparse cost matrix stores a non-finite value {csr.data[k]} at "
            f"({row}, {int(csr.indices[k])}); leave forbidden pairs out of the pattern instead"
        )
    return csr


def _first_duplicate(csr: sp.csr_matrix) -> tuple[int, int]:
    """(row, column) of the first repeated entry of a CSR with sorted indices."""
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    k = int(np.flatnonzero((rows[1:] == rows[:-1]) & (csr.indices[1:] == csr.indices[:-1]))[0])
    return int(rows[k]), int(csr.indices[k])


def _check_dtype(cost: sp.spmatrix | sp.sparray) -> None:
    """Real numeric entries only, as for dense costs (bool and complex are refused)."""
    dtype = np.dtype(cost.dtype)
    if dtype == np.bool_ or not np.issubdtype(dtype, np.number):
        raise InputError(f"sparse cost matrix must be numeric, got dtype {dtype}")
    if np.issubdtype(dtype, np.complexfloating):
        raise InputError("sparse cost matrix must be real, got complex values")


def _check_structure(cost: sp.spmatrix | sp.sparray) -> None:
    """Refuse index arrays that point outside the shape or an index pointer out of order (a
    hand-built CSR with column 5 in a 2-column shape): scipy checks them only when asked, and
    the numba kernels index through them unchecked. The check runs on a new matrix over the
    caller's arrays, so the caller's matrix is left as it was."""
    try:
        if cost.format == "coo":
            sp.coo_matrix((cost.data, (cost.row, cost.col)), shape=cost.shape)  # checks bounds
        elif cost.format in ("csr", "csc", "bsr"):
            rebuilt = cost.__class__((cost.data, cost.indices, cost.indptr), shape=cost.shape)
            rebuilt.check_format(full_check=True)
    except ValueError as exc:
        raise InputError(f"sparse cost matrix has invalid index arrays: {exc}") from None


def _native_order(cost: sp.spmatrix | sp.sparray) -> sp.spmatrix | sp.sparray:
    """A CSR or CSC matrix whose arrays are in the other byte order (big-endian data read
    from a file: scipy builds such a matrix, then refuses to convert it, and index arrays
    set so reached a numba kernel) as the same format in the machine's order."""
    if cost.format not in ("csr", "csc"):
        return cost  # scipy's other formats refuse such dtypes when built
    arrays = (cost.data, cost.indices, cost.indptr)
    if all(a.dtype.isnative for a in arrays):
        return cost
    data, indices, indptr = (a.astype(a.dtype.newbyteorder("=")) for a in arrays)
    return type(cost)((data, indices, indptr), shape=cost.shape)


def _stored_csr(cost: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """A float64 CSR copy holding every stored entry, duplicates kept (not summed) so that
    `as_csr` can reject them whatever the input format."""
    if cost.format == "dia":
        cost = _dia_entries(cost)
    if cost.format == "coo":
        return _coo_to_csr(cost)
    return sp.csr_matrix(cost, dtype=np.float64, copy=True)


def _coo_to_csr(coo: sp.spmatrix | sp.sparray) -> sp.csr_matrix:
    """CSR with the COO entries in row order, duplicates kept (scipy's `tocsr` sums them)."""
    n, m = coo.shape
    row = np.asarray(coo.row, dtype=np.int64)
    order = np.argsort(row, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n), out=indptr[1:])
    data = np.asarray(coo.data, dtype=np.float64)[order]
    indices = np.asarray(coo.col, dtype=np.int64)[order]
    return sp.csr_matrix((data, indices, indptr), shape=(n, m))


def _dia_entries(dia: sp.spmatrix | sp.sparray) -> sp.coo_matrix:
    """COO of every in-bounds diagonal position, stored zeros included (scipy's `tocoo`
    drops them: it cannot tell them from padding)."""
    n, m = dia.shape
    cols = np.arange(dia.data.shape[1], dtype=np.int64)
    rows = cols[None, :] - np.asarray(dia.offsets, dtype=np.int64)[:, None]
    keep = (rows >= 0) & (rows < n) & (cols[None, :] < m)
    cols = np.broadcast_to(cols, rows.shape)
    return sp.coo_matrix((dia.data[keep], (rows[keep], cols[keep])), shape=(n, m))


class InfeasiblePatternError(InputError):
    """A sparse pattern admits no assignment of all its rows; the message names a line."""


def check_pattern(csr: sp.csr_matrix, transposed: bool = False) -> None:
    """Raise InfeasiblePatternError naming the first row that no assignment of all rows can
    cover (a column of the caller's matrix when it was transposed to put the short side
    first), or the empty column of a square."""
    n = csr.shape[0]
    line, other = ("column", "row") if transposed else ("row", "column")
    found = unassignable(csr)
    if found is None:
        return
    row, most = found
    if most < 0:
        raise InfeasiblePatternError(
            f"sparse pattern is infeasible: {line} {row} has no allowed {other}")
    column = empty_column(csr)
    if column is not None:
        raise InfeasiblePatternError(
            f"sparse pattern is infeasible: {other} {column} has no allowed {line}")
    raise InfeasiblePatternError(
        f"sparse pattern is infeasible: at most {most} of {n} {line}s can be "
        f"assigned ({line} {row} is left without a {other})"
    )


def empty_column(csr: sp.csr_matrix) -> int | None:
    """The first column of a square pattern that stores no entry (every column of a square
    must be assigned, so it names the flaw more plainly than a row left out); else None."""
    n, m = csr.shape
    if n != m:
        return None
    empty = np.flatnonzero(np.bincount(csr.indices[:csr.nnz], minlength=m) == 0)
    return int(empty[0]) if empty.size else None


def unassignable(csr: sp.csr_matrix) -> tuple[int, int] | None:
    """None when some assignment covers every row of the pattern; else (a row left out,
    how many rows at most can be assigned at once; -1 when that row has no entry at all)."""
    n, m = csr.shape
    empty = np.flatnonzero(np.diff(csr.indptr) == 0)
    if empty.size:
        return int(empty[0]), -1
    match = maximum_matching(csr.indptr.astype(np.int64), csr.indices.astype(np.int64), m)
    unmatched = np.flatnonzero(match < 0)
    if unmatched.size:
        return int(unmatched[0]), n - int(unmatched.size)
    return None
