"""`ranked_assignments`: the k best assignments of a cost matrix, best first (Murty's
method, as multi-hypothesis tracking needs), each proven optimal in its part of the space.

Murty partitions the assignments left after each solution into cells: child t of a
solution's cell forbids its t-th free pair and forces the ones before. A child starts from
its parent's optimal duals, which stay feasible when pairs are forbidden or forced, with
the parent's assignment minus one pair: one shortest augmenting path solves it (O(N^2)
instead of a cold O(N^3) solve). Children are solved lazily: each waits in the queue under
a lower bound (two distinct non-tight edges of its path) and is solved only when that bound
comes first. A cell's solution is certified by weak duality when it is taken; a failed
certificate re-solves that cell cold with `solve_lap` (counted in `info["fallbacks"]`).

Rectangular matrices are padded with zero-cost rows (or solved transposed) and the
partition runs over the real rows' pairs only, so no assignment comes back twice. Sparse
input at most `SPARSE_SHARE` full stays sparse (`cell_costs.SparseCosts`): every step then
touches only stored entries, and a rectangular one is ranked as matchings whose rows must
all be matched, with no dense padding.
"""

from __future__ import annotations

import heapq
import itertools
import numbers
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from coplug.plugins.arguments import check_flag
from coplug.plugins.bar import progress_bar
from coplug.plugins.errors import InputError, TimeLimitError
from coplug.plugins.interrupts import record_interrupt
from coplug.plugins.lap import certify, murty, sparse
from coplug.plugins.lap.cell_costs import CellCosts, DenseCosts, SparseCosts, matching_costs
from coplug.plugins.lap.solver import common_offset, dense_costs
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.value_equality import ValueEquality

INF = np.inf
# A child's search is never stopped below this many ulps of its costs: path lengths of
# ties come back as round-off (8.9e-16 on costs near 362) that a sum near the cost loses.
CAP_ROUNDOFF = 64 * float(np.finfo(np.float64).eps)
# Sparse costs storing at most this share of all pairs are ranked sparse (no dense copy);
# denser ones are ranked on a dense copy, whose kernels are faster per entry.
SPARSE_SHARE = 0.1


@dataclass(eq=False)
class RankedAssignment(ValueEquality):
    """One assignment `row_ind[k] -> col_ind[k]` (rows in order) and its cost."""

    row_ind: np.ndarray
    col_ind: np.ndarray
    cost: float


@dataclass(eq=False)
class RankedAssignments(ValueEquality):
    """The outcome of `ranked_assignments`: `solutions` best first and their `status`:
    "k_found" (the k best, proven), "exhausted" (every assignment there is, fewer than k),
    "time_limit" or "interrupted" (the best ones found so far, in order, each proven to be
    the next best: only the tail is missing). `complete` is True for the first two."""

    solutions: list[RankedAssignment]
    status: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether `solutions` holds all that was asked for (or all there are)."""
        return self.status in ("k_found", "exhausted")

    @property
    def costs(self) -> list[float]:
        """The solutions' costs, best first."""
        return [s.cost for s in self.solutions]

    def __repr__(self) -> str:
        """A summary (100 solutions of 300 rows made a 340,000-character repr): the status,
        the count and the first costs; `solutions` holds the assignments."""
        shown = ", ".join(f"{cost:.6g}" for cost in self.costs[:5])
        more = ", ..." if len(self.solutions) > 5 else ""
        return (f"RankedAssignments(status={self.status!r}, {len(self.solutions)} solutions, "
                f"costs=[{shown}{more}], info={self.info!r})")


@dataclass
class _Cell:
    """A solved partition cell: forced rows (False in `row_ok`), forbidden pairs, its
    optimal assignment, duals and cost (min form)."""

    row_ok: np.ndarray
    forbidden: tuple[tuple[int, int], ...]
    col4row: np.ndarray
    row4col: np.ndarray
    u: np.ndarray
    v: np.ndarray
    cost: float
    certified: bool = False


@dataclass
class _Family:
    """A taken cell's children: child t forbids `rows[t] -> cols[t]` and forces the pairs
    before it, so it may use the columns the cell allows (`col_ok`) whose rank among
    `cols` (`col_rank`, len(cols) for the others) is t or more. The children wait in the
    queue as one entry under the least bound not yet handed out (`bounds`, ascending, of
    children `order`): a cell has N children, of which a ranking searches only a few."""

    parent: _Cell
    rows: np.ndarray
    cols: np.ndarray
    col_ok: np.ndarray
    col_rank: np.ndarray
    forbidden: tuple[np.ndarray, np.ndarray]
    bounds: np.ndarray
    order: np.ndarray
    handed_out: int = 0

    def next_child(self) -> _Child:
        """The child with the least bound not handed out yet."""
        self.handed_out += 1
        return _Child(self, int(self.order[self.handed_out - 1]))

    def next_bound(self) -> float | None:
        """The bound of the next child to hand out; None when all have been."""
        if self.handed_out == self.order.size:
            return None
        return float(self.bounds[self.handed_out])


@dataclass
class _Child:
    """Child `t` of a solved cell, not solved yet."""

    family: _Family
    t: int

    @property
    def parent(self) -> _Cell:
        """The solved cell this child splits."""
        return self.family.parent


def ranked_assignments(
    cost: Any,
    k: int = 10,
    *,
    maximize: bool = False,
    time_limit: float | None = None,
    progress: bool = False,
) -> RankedAssignments:
    """The `k` best assignments of `cost` (dense and finite, or scipy.sparse with the stored
    entries as the allowed pairs), best first; ties in any order. A rectangular matrix
    assigns every row of its short side. Past `time_limit` seconds (the first solve's
    included), or on Ctrl-C, it returns the best ones found so far (status "time_limit" /
    "interrupted").

    The work is about k * N shortest paths of O(N^2) each on an N x N dense working copy (N
    the longer side, after a wide matrix keeps only the columns the k best need:
    `_best_columns`), or of O(E log N) on sparse input with E stored entries (at most
    `SPARSE_SHARE` of all pairs); `progress` shows a bar of solutions found.
    """
    start = time.perf_counter()
    k = checked_k(k)
    time_limit = checked_time_limit(time_limit)
    maximize = check_flag(maximize, "maximize")
    progress = check_flag(progress, "progress")
    col_map = None
    if is_sparse_enough(cost):
        costs, n_real, transposed, offset, col_map = _sparse_working(cost, bool(maximize))
    else:
        costs, n_real, transposed, offset, col_map = _dense_working(cost, bool(maximize), k)
    deadline = None if time_limit is None else start + time_limit
    try:
        found, status, info = ranked_cells(costs, n_real, k, deadline, progress)
    except sparse.InfeasiblePatternError:
        if is_sparse_enough(cost):  # dense working copies are checked up front
            _check_sparse_pattern(cost)  # names the flaw in the caller's rows and columns
        raise
    sign = -1.0 if maximize else 1.0
    solutions = best_first([_reported(cell, costs, n_real, transposed, sign * n_real * offset,
                                      sign, col_map) for cell in found], bool(maximize))
    info["time"] = time.perf_counter() - start
    return RankedAssignments(solutions, status, info)


def is_sparse_enough(cost: Any) -> bool:
    """Whether `cost` is scipy.sparse storing at most `SPARSE_SHARE` of its pairs (ranked
    without a dense copy)."""
    return sp.issparse(cost) and cost.nnz <= SPARSE_SHARE * cost.shape[0] * cost.shape[1]


def ranked_cells(
    costs: CellCosts, n_real: int, k: int, deadline: float | None, progress: bool,
    label: str = "ranked assignments",
) -> tuple[list[_Cell], str, dict[str, Any]]:
    """Murty's ranking of the square min-cost matrix `costs` partitioned over its first
    `n_real` rows' pairs only (the rest complete an assignment, as padding or slack rows
    do), so two cells never share those rows' pairs: the k best cells, best first, how the
    ranking ended and its counts (`label` names the progress bar)."""
    scale, size = costs.scale, costs.size
    if not scale * size * 4 < np.finfo(np.float64).max:
        raise InputError(f"costs up to {scale:.3g} overflow float64 sums over {size} "
                         "rows (a matching's: rows plus columns); rescale them")
    root = _timed_root(costs, deadline)
    if isinstance(root, str):
        return [], root, {"solved_cells": 0, "queued_cells": 0, "capped": 0, "fallbacks": 0}
    return _enumerate(costs, n_real, root, k, deadline, progress, scale, label)


def best_first(solutions: list[RankedAssignment], maximize: bool) -> list[RankedAssignment]:
    """The ranking's solutions in the order of their reported costs: the ranking orders
    them by its working costs, whose round-off can swap two tied ones (-1.9000000000000001
    before -1.9); stable, so exact ties keep the ranking's order."""
    return sorted(solutions, key=lambda s: -s.cost if maximize else s.cost)


def checked_k(k: Any) -> int:
    """k as a positive int (bools and fractions refused)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    return int(k)


def _dense_working(
    cost: Any, maximize: bool, k: int
) -> tuple[DenseCosts, int, bool, float, np.ndarray | None]:
    """`_sparse_working` for dense costs: the padded square Murty works on (only it is kept:
    the unpadded working copy beside it held the matrix twice for the whole ranking)."""
    c, n_real, transposed = _working_matrix(cost, maximize)
    c, col_map = _best_columns(c, k)
    offset = common_offset(c)
    if offset:
        c = c - offset  # exact for such entries; every assignment holds n_real of them
    return DenseCosts(_padded(c)), n_real, transposed, offset, col_map


def _working_matrix(cost: Any, maximize: bool) -> tuple[np.ndarray, int, bool]:
    """The min-cost float64 matrix Murty works on (forbidden pairs inf, the short side
    first), its number of rows, and whether the caller's matrix was transposed."""
    c = forbidden_as_inf(cost)
    n, m = c.shape
    if sp.issparse(cost):  # name an infeasible pattern in the caller's terms, up front
        allowed = np.isfinite(c)
        sparse.check_pattern(sp.csr_matrix(allowed if n <= m else allowed.T), transposed=n > m)
    if maximize:
        c = np.negative(c, out=c, where=np.isfinite(c))  # forbidden pairs stay +inf
    transposed = n > m
    if transposed:
        c = c.T
        n = m
    return np.ascontiguousarray(c), n, transposed


def _sparse_working(
    cost: Any, maximize: bool
) -> tuple[SparseCosts | DenseCosts, int, bool, float, np.ndarray | None]:
    """The sparse min-cost costs Murty works on (the short side first; a rectangular matrix
    as matchings whose rows must all be matched and whose columns may stay free at no
    cost, empty columns left out), its number of real rows, whether the caller's matrix
    was transposed, the common offset taken out of its entries, and the caller's number
    of each column kept (None: all kept)."""
    csr = sparse.as_csr(cost)
    if csr.shape[0] == 0 or csr.shape[1] == 0:
        raise InputError(f"cost matrix is empty (shape {csr.shape[0]}x{csr.shape[1]})")
    transposed = csr.shape[0] > csr.shape[1]
    if transposed:
        csr = sparse.as_csr(csr.T)
    csr, col_map = _without_empty_columns(csr)
    if maximize:
        csr.data = -csr.data
    offset = common_offset(csr.data.reshape(1, -1))
    if offset:
        csr.data = csr.data - offset  # exact for such entries; every assignment holds n of them
    n, m = csr.shape
    if n == m:
        return SparseCosts(csr), n, transposed, offset, col_map
    return matching_costs(csr, np.full(n, INF), np.zeros(m)), n, transposed, offset, col_map


def _check_sparse_pattern(cost: Any) -> None:
    """Raise InfeasiblePatternError naming, in the caller's terms, why the sparse `cost`
    admits no assignment of its short side (nothing when it admits one). Run only once the
    root solve failed: the check costs about three times a feasible solve (300,000 gated
    tracks: 0.48 s of a 1.26 s ranking for k = 1)."""
    csr = sparse.as_csr(cost)
    transposed = csr.shape[0] > csr.shape[1]
    sparse.check_pattern(sparse.as_csr(csr.T) if transposed else csr, transposed=transposed)


def _without_empty_columns(csr: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray | None]:
    """The CSR without the columns that store nothing, and the numbers of those kept (None
    when all are): no assignment uses them, and kept in the matching matrix each would cost
    every ranked cell memory and time (20 x 10**6 storing 60 pairs: 1.35 GB for k=30)."""
    kept = np.flatnonzero(np.bincount(csr.indices, minlength=csr.shape[1]))
    if kept.size == csr.shape[1]:
        return csr, None
    return lines_csr(csr, np.arange(csr.shape[0]), kept), kept


def lines_csr(c: sp.csr_matrix, kept_rows: np.ndarray, kept_cols: np.ndarray) -> sp.csr_matrix:
    """The CSR on the kept lines, renumbered, stored entries (explicit zeros included)
    unchanged; every line left out must be empty."""
    renumber = np.zeros(c.shape[1], np.int64)
    renumber[kept_cols] = np.arange(kept_cols.size)
    return sp.csr_matrix((c.data, renumber[c.indices], np.r_[0, c.indptr[kept_rows + 1]]),
                         shape=(kept_rows.size, kept_cols.size))


def forbidden_as_inf(cost: Any) -> np.ndarray:
    """A new float64 copy of the costs, dense (all finite, checked) or scipy.sparse (the
    pairs it leaves out become inf), refusing an empty matrix."""
    if sp.issparse(cost):
        csr = sparse.as_csr(cost)
        c = np.full(csr.shape, INF)
        c[np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)), csr.indices] = csr.data
    else:
        c = np.array(dense_costs(cost), dtype=np.float64)
        if not np.isfinite(c).all():
            i, j = np.argwhere(~np.isfinite(c))[0]
            raise InputError(f"cost[{i}, {j}] is {c[i, j]}; a dense cost matrix must be finite "
                             "(pass a scipy.sparse matrix to forbid pairs)")
    if c.shape[0] == 0 or c.shape[1] == 0:
        raise InputError(f"cost matrix is empty (shape {c.shape[0]}x{c.shape[1]})")
    return c


def _best_columns(c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The columns of a wide min-cost matrix (n rows < m columns) that the k best
    assignments need, and their numbers (None: all): each row's n + k - 1 cheapest. A row
    on any other column leaves k of its cheaper ones free for k assignments at least as
    good, so the k best costs are unchanged (ties may pick others). 50 x 16000 frames were
    ranked on a 16000 x 16000 copy (18.7 s, 6 GB); they keep at most 50 x 59 columns."""
    n, m = c.shape
    keep = n + k - 1
    if keep >= m:
        return c, None
    used = np.zeros(m, dtype=bool)
    for row in c:
        used[np.argpartition(row, keep - 1)[:keep]] = True
    if used.all():
        return c, None
    col_map = np.flatnonzero(used)
    return np.ascontiguousarray(c[:, col_map]), col_map


def _padded(c: np.ndarray) -> np.ndarray:
    """The matrix made square with zero-cost rows (any assignment of the real rows extends
    to the square at the same cost)."""
    n, m = c.shape
    return np.vstack([c, np.zeros((m - n, m))]) if n < m else c


def _timed_root(c: CellCosts, deadline: float | None) -> _Cell | str:
    """The root cell solved within the time left, else the status saying why not ("time_limit"
    / "interrupted"): a large matrix's cold solve takes far longer than one ranking step."""
    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left <= 0:
        return "time_limit"
    try:
        return _root(c, left)
    except TimeLimitError:
        return "time_limit"
    except KeyboardInterrupt:
        record_interrupt()
        return "interrupted"


def _root(c: CellCosts, time_limit: float | None = None) -> _Cell:
    """The whole space's cell, solved by `solve_lap` (certified), with Min-Trick column duals
    so the duals are feasible on every allowed pair."""
    col4row, u, v = c.root(time_limit)
    row4col = np.empty(c.size, np.int64)
    row4col[col4row] = np.arange(c.size)
    return _Cell(np.ones(c.size, np.bool_), (), col4row, row4col, u, v,
                 _assigned_cost(c, col4row), certified=True)


def _assigned_cost(c: CellCosts, col4row: np.ndarray) -> float:
    """The assignment's cost, summed from the matrix (not from path lengths)."""
    return float(c.values(col4row).sum())


def _enumerate(
    c: CellCosts, n_real: int, root: _Cell, k: int, deadline: float | None, progress: bool,
    scale: float, label: str,
) -> tuple[list[_Cell], str, dict[str, Any]]:
    """Pop cells best first: a child is solved when its bound comes first, a solved cell is
    certified (round-off relative to the cost `scale`) and taken, then its children are
    queued under their bounds. The root, solved already, is taken even past the deadline."""
    counter = itertools.count()
    queue: list[tuple[float, int, _Cell | _Child | _Family]] = [
        (root.cost, next(counter), root)]
    found: list[_Cell] = []
    info = {"solved_cells": 1, "queued_cells": 1, "capped": 0, "fallbacks": 0}
    status = "exhausted"
    bar = progress_bar(total=k, desc=label, unit="sol", disable=not progress)
    try:
        while queue:
            if found and deadline is not None and time.perf_counter() > deadline:
                status = "time_limit"
                break
            bound, _, item = heapq.heappop(queue)
            if isinstance(item, _Family):
                family, item = item, item.next_child()
                if (following := family.next_bound()) is not None:
                    heapq.heappush(queue, (following, next(counter), family))
            if isinstance(item, _Child):
                cell = _solve_child(c, item, _cap(queue, bound, item.parent.cost, scale))
                if isinstance(cell, float):
                    raised = max(item.parent.cost + cell, float(np.nextafter(bound, INF)))
                    heapq.heappush(queue, (raised, next(counter), item))
                    info["capped"] += 1
                    continue
                info["solved_cells"] += 1
                if cell is not None:
                    heapq.heappush(queue, (cell.cost, next(counter), cell))
                continue
            if not item.certified:
                checked = _certified_or_resolved(c, item, scale)
                if checked is not item:
                    info["fallbacks"] += 1
                    heapq.heappush(queue, (checked.cost, next(counter), checked))
                    continue
            found.append(item)
            bar.update(1)
            if len(found) == k:
                status = "k_found"
                break
            family = _children(c, n_real, item)
            if family is not None:
                heapq.heappush(queue, (family.next_bound(), next(counter), family))
                info["queued_cells"] += family.order.size
    except KeyboardInterrupt:
        record_interrupt()
        status = "interrupted"
    finally:
        bar.close()
    return found, status, info


def _cap(queue: list, bound: float, parent_cost: float, scale: float) -> float:
    """How far a child's search may go before it stops with a better bound: to the queue's
    next value (beyond it the child cannot come next), at least twice the bound it was
    queued under (so a child is searched again at most a few times) and past round-off."""
    nxt = queue[0][0] - parent_cost if queue else INF
    return max(nxt, 2.0 * (bound - parent_cost), CAP_ROUNDOFF * (abs(parent_cost) + scale))


def _forbidden_csr(forbidden: tuple[tuple[int, int], ...], n: int) -> tuple[np.ndarray, ...]:
    """A cell's forbidden pairs grouped by row: (fb_ptr, fb_col)."""
    if not forbidden:
        return np.zeros(n + 1, np.int64), np.empty(0, np.int64)
    pairs = np.array(forbidden, dtype=np.int64)
    order = np.argsort(pairs[:, 0], kind="stable")
    fb_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=n), out=fb_ptr[1:])
    return fb_ptr, np.ascontiguousarray(pairs[order, 1])


def _col_ok(cell_row_ok: np.ndarray, col4row: np.ndarray) -> np.ndarray:
    """Columns not taken by a forced row."""
    col_ok = np.ones(col4row.size, np.bool_)
    col_ok[col4row[~cell_row_ok]] = False
    return col_ok


def _children(c: CellCosts, n_real: int, cell: _Cell) -> _Family | None:
    """The cell's children, one per free real row, under lower bounds on their costs
    (children that hold no assignment dropped); None when none is left."""
    rows = np.flatnonzero(cell.row_ok[:n_real]).astype(np.int64)
    if rows.size == 0:
        return None
    cols = cell.col4row[rows]
    col_ok = _col_ok(cell.row_ok, cell.col4row)
    bounds = c.child_bounds(cell.u, cell.v, rows, cols, cell.row_ok, col_ok,
                            _forbidden_csr(cell.forbidden, c.size))
    col_rank = np.full(c.size, rows.size, np.int64)
    col_rank[cols] = np.arange(rows.size)
    pairs = np.array(cell.forbidden, dtype=np.int64).reshape(-1, 2)
    order = np.flatnonzero(bounds < INF)
    if order.size == 0:
        return None
    order = order[np.argsort(bounds[order], kind="stable")]
    return _Family(cell, rows, cols, col_ok, col_rank,
                   (np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])),
                   cell.cost + bounds[order], order)


def _solve_child(c: CellCosts, child: _Child, cap: float = INF) -> _Cell | float | None:
    """Solve a child cell from its parent's duals and assignment: free one row, forbid its
    pair, augment once. None when the cell holds no assignment; a float, a lower bound on
    what the cell adds to its parent's cost, when that exceeds `cap` (the queue's next
    value: the cell cannot come next, so its search stops there)."""
    family, t = child.family, child.t
    parent = family.parent
    i, j = int(family.rows[t]), int(family.cols[t])
    outcome, length = c.search((parent.u, parent.v, parent.row4col), i, j,
                               (family.col_ok, family.col_rank), t, family.forbidden, cap)
    if outcome == murty.EMPTY:
        return None
    if outcome == murty.CAPPED:
        return float(length)
    col4row, row4col = parent.col4row.copy(), parent.row4col.copy()
    u, v = parent.u.copy(), parent.v.copy()
    col4row[i] = -1
    row4col[j] = -1
    c.apply(u, v, col4row, row4col, i, length)
    row_ok = parent.row_ok.copy()
    row_ok[family.rows[:t]] = False
    return _Cell(row_ok, (*parent.forbidden, (i, j)), col4row, row4col, u, v,
                 _assigned_cost(c, col4row))


def _certified_or_resolved(c: CellCosts, cell: _Cell, scale: float) -> _Cell:
    """The cell itself when weak duality certifies its assignment within round-off, else
    the cell re-solved cold by `solve_lap`."""
    col_ok = _col_ok(cell.row_ok, cell.col4row)
    gap = c.gap(cell.u, cell.col4row, cell.row_ok, col_ok,
                _forbidden_csr(cell.forbidden, c.size))
    free = int(cell.row_ok.sum())
    if certify.certified(gap, 0.0, scale, free, float(np.abs(cell.u).max(initial=0.0)),
                         strict=True):
        cell.certified = True
        return cell
    return _resolved_cold(c, cell, col_ok)


def _resolved_cold(c: CellCosts, cell: _Cell, col_ok: np.ndarray) -> _Cell:
    """The cell's optimum from a cold sparse `solve_lap` over its free rows and columns
    (forbidden and not allowed pairs left out of the pattern)."""
    rows = np.flatnonzero(cell.row_ok)
    cols = np.flatnonzero(col_ok)
    row_ind, col_ind, u_sub, v_sub = c.cold(rows, cols, cell.forbidden)
    col4row = cell.col4row.copy()
    col4row[rows[row_ind]] = cols[col_ind]
    row4col = np.empty_like(cell.row4col)
    row4col[col4row] = np.arange(col4row.size)
    u = cell.u.copy()
    u[rows] = u_sub
    v = cell.v.copy()
    v[cols] = v_sub  # Min-Trick: feasible on the cell's pairs
    return _Cell(cell.row_ok, cell.forbidden, col4row, row4col, u, v,
                 _assigned_cost(c, col4row), certified=True)


def _reported(
    cell: _Cell, c: CellCosts, n_real: int, transposed: bool, shift: float, sign: float,
    col_map: np.ndarray | None = None,
) -> RankedAssignment:
    """A cell's assignment in the caller's terms: real rows only, the caller's orientation,
    column numbers (`col_map`: the caller's number of each working column) and sign (plus
    the `shift` taken out of its costs), rows in order."""
    rows = np.arange(n_real)
    cols = cell.col4row[:n_real].copy()
    total = sign * float(c.values(cols).sum()) + shift
    if col_map is not None:
        cols = col_map[cols]
    if transposed:
        order = np.argsort(cols)
        rows, cols = cols[order], rows[order]
    return RankedAssignment(rows, cols, 0.0 + total)
