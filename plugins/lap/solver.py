"""`solve_lap`: exact linear assignment, dense or sparse, cold or warm-started from row duals,
always certified by complementary slackness (a failed certificate triggers a cold re-solve)."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np
import scipy.sparse as sp

from coplug.plugins.arguments import check_exact_integers, check_flag, detached, refuse_masked
from coplug.plugins.errors import InputError, TimeLimitError
from coplug.plugins.interrupts import interrupt_kept
from coplug.plugins.lap import certify, jv, small, sparse, sparsify, warmstart
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.value_equality import ValueEquality

# Augmenting row reduction stalls on degenerate costs (many ties); cap its row scans.
ARR_STEPS_PER_ROW = 2
# Augmentations run in chunks sized to take about this long, so a deadline or Ctrl-C
# is noticed between them (numba kernels cannot be interrupted).
CHUNK_SECONDS = 0.2
# The first augmentation chunk's work (entries scanned): well under a millisecond.
FIRST_CHUNK_WORK = 1 << 16
# The certificate rescans only the rows and columns whose duals rose since row tightening
# while that costs at most this share of one full pass (a strided column rescan costs
# about as much as COLUMN_RESCAN_COST contiguous row rescans).
INCREMENTAL_CERTIFICATE_MAX_SHARE = 0.5
COLUMN_RESCAN_COST = 8
# A square solve given a `predictor` asks it for duals only when JV's column reduction
# leaves more than this share of the rows free: below it the few augmentations left cost
# less than a prediction (free share over seeds and N = 256..4096: tracking costs 7-11%,
# uniform 23-29%, transport 33-40%, low-rank 100%).
PREDICT_MIN_FREE = 0.15
# ... and only from this many rows up, unless the column reduction was dropped (it matched
# under warmstart.COLUMN_REDUCTION_MIN_MATCHED of the rows, as on low-rank costs): below it
# inference and the sparse refinement cost more than cold JV's augmentations (`python
# benchmarks/lap_warmstart.py --sizes 256 512 768 1024 --methods scipy cold warm` without this
# gate: cold/warm 0.17-0.72x on uniform and transport costs at N = 256..768, 1.2-2.8x on
# low-rank ones at 512 and 768; near break-even at 1024-2048 on uniform and transport).
PREDICT_MIN_ROWS = 1024
# A cold square sparse solve tries the row-minima start beside the column reduction from
# this many rows up (`_row_minima_match_more`); below, the second start cost 9 us of a 35 us
# solve and the augmentations it could save take less.
ROW_MINIMA_MIN_ROWS = 256
# Predicted square warm starts are first refined on the sparse LAP over each row's and
# column's SPARSIFY_K smallest reduced costs (plus the diagonal, so it is feasible): its
# optimal duals and assignment then start the dense solve. 0 turns the refinement off.
SPARSIFY_K = 16
# Rounds of pricing: the missing entries its duals violate join the sparse LAP, which is
# solved again from its last duals and assignment.
PRICING_ROUNDS = 12
# A warm solve whose row duals end up above this many times n * max |c_ij| is not trusted:
# duals that large erase the costs' low digits from every reduced cost (JV's duals stay
# within about n times the cost range; square starts are centred first), so it falls back
# to a cold solve. At 16, duals 2e16 on costs 1e15 + 2..8 (n = 3) came back 4 above the
# optimum, certified: the certificate cannot resolve costs finer than those duals' ulps.
WARM_DUALS_MAX_FACTOR = 1.0
# Why square row duals were set aside for a cold start (`warmstart.below_column_reduction`).
DUALS_SET_ASIDE = ("the row duals bound the optimum below JV's column reduction, so a cold "
                   "start is closer to it")
# Costs sharing an offset over this many times their spread are solved with the offset
# subtracted (`common_offset`): JV's duals would resolve them only to ulp(offset).
OFFSET_SPREAD_RATIO = 2.0**20
_COUNTERS = {"solves": 0, "warm_solves": 0, "fallbacks": 0}


@dataclass(eq=False)
class LapSolution(ValueEquality):
    """Optimal assignment `row_ind[k] -> col_ind[k]`, its cost, optimal duals and work done.

    Duals certify optimality: u_i + v_j <= c_ij (>= when maximizing), equality on the
    assignment. `augmentations` counts shortest-augmenting-path searches; `fallback` says
    the warm solve failed its certificate and was redone cold.
    """

    row_ind: np.ndarray
    col_ind: np.ndarray
    cost: float
    row_duals: np.ndarray
    col_duals: np.ndarray
    augmentations: int
    warm: bool
    fallback: bool = False
    time: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """Fields with the arrays cut to their ends: at N = 300 the full arrays made a
        13,000-character repr."""
        arrays = ", ".join(f"{name}={_short(getattr(self, name))}"
                           for name in ("row_ind", "col_ind", "row_duals", "col_duals"))
        return (f"LapSolution(cost={self.cost!r}, {arrays}, augmentations="
                f"{self.augmentations}, warm={self.warm}, fallback={self.fallback}, "
                f"time={self.time:.3g}, info={self.info!r})")


def _short(values: np.ndarray) -> str:
    """An array as numpy prints it, at most three entries at each end."""
    return np.array2string(np.asarray(values), threshold=6, edgeitems=3, separator=", ",
                           max_line_width=10**6)


class _Solved(NamedTuple):
    """A finished min-cost solve (n_rows <= n_cols) and what its certificate needs."""

    col4row: np.ndarray
    u: np.ndarray
    v: np.ndarray
    augs: int
    scans: int
    scale: float
    # (u, v) known dual feasible on every entry (after row tightening); None: not known
    snapshot: tuple[np.ndarray, np.ndarray] | None = None
    warm: bool = False
    prediction: str = "none"
    inference: float = 0.0
    sparse_augs: int = 0
    sparse_s: float = 0.0
    # the certificate's figures (`certify.dense_gap`), when the solve computed them itself
    gap: tuple[float, float, float, float, float] | None = None


class DualPredictor(Protocol):
    """What `solve_lap(..., predictor=...)` calls: row duals for a dense min-cost matrix with
    no more rows than columns, passed read-only (e.g. `coplug.learned.rowdualnet.RowDualNet`)."""

    def predict_duals(self, c: np.ndarray) -> np.ndarray: ...


def counters() -> dict[str, int]:
    """Process-wide counts of solves, warm solves and certificate fallbacks to cold solves."""
    return dict(_COUNTERS)


def solve_lap(
    cost: Any,
    *,
    maximize: bool = False,
    row_duals: np.ndarray | None = None,
    predictor: DualPredictor | None = None,
    arr_passes: int | None = None,
    time_limit: float | None = None,
) -> LapSolution:
    """Solve min (or max) sum_i c[i, col(i)] over injective assignments of rows to columns.

    `cost` is a dense array (all finite) or a scipy.sparse matrix whose stored entries
    (explicit zeros included; scipy drops zeros when converting from dense) are the allowed
    pairs. `row_duals` (any finite vector, one per row; under `maximize` in the convention
    `LapSolution.row_duals` returns, so a previous solution's duals can be passed back)
    warm-starts the solve through the Min-Trick; the result is exact whatever they are
    (duals that end far out of scale with the costs are not trusted: cold re-solve, counted
    in `fallback`).
    They are not used (cold solve, `warm=False`, the reason in `info["prediction"]`) when
    there are more rows than columns, when dense square duals bound the optimum below JV's
    column reduction (sum_j min_i c_ij: a cold start is closer, and such duals took up to
    60x the cold time), or when padding sparse costs to a square would more
    than double their pattern (dense rectangular costs start unpadded,
    `warmstart.rectangular_warm_state`). `predictor` instead supplies
    them (`predict_duals` on the min-cost matrix, inference timed in `info`) for dense square
    costs when JV's column reduction leaves more than PREDICT_MIN_FREE of the rows free, on
    PREDICT_MIN_ROWS rows or more (at any size where the reduction matched too few rows);
    `info["prediction"]` says whether it was used or why not. `arr_passes` caps the
    augmenting-row-reduction passes before the shortest paths (default: 1 after a column
    reduction or a warm start, else 2; sparse costs: 1 after a cold square column reduction,
    which a start from row minima replaces where it leaves fewer rows free, and 0 starts them
    from row minima alone); they stop early once two in a row free no row.
    Past `time_limit` seconds
    it raises `TimeLimitError` (JV has no certified answer before it finishes); Ctrl-C
    interrupts it between augmentation chunks.
    """
    start = time.perf_counter()
    if row_duals is not None and predictor is not None:
        raise InputError("give row_duals or a predictor, not both")
    if predictor is not None and not callable(getattr(predictor, "predict_duals", None)):
        raise InputError(
            f"predictor must have a predict_duals(cost) method, got {type(predictor).__name__}"
        )
    time_limit = checked_time_limit(time_limit)
    if arr_passes is not None and (
        isinstance(arr_passes, bool) or not isinstance(arr_passes, numbers.Integral)
        or arr_passes < 0
    ):
        raise InputError(f"arr_passes must be a non-negative integer, got {arr_passes!r}")
    deadline = None if time_limit is None else start + time_limit
    is_sparse = sp.issparse(cost)
    c = sparse.as_csr(cost) if is_sparse else dense_costs(cost)
    given = c
    n, m = c.shape
    if n == 0 or m == 0:
        raise InputError(f"cost matrix is empty (shape {n}x{m})")
    u0 = _check_duals(row_duals, n)
    maximize = check_flag(maximize, "maximize")
    transposed = n > m
    if maximize:  # dense: negated straight into the order the kernels walk (one copy)
        c = -c if is_sparse else np.negative(c, order="F" if transposed else "C")
        u0 = None if u0 is None else -u0  # given in the max convention LapSolution returns
    if transposed:
        c = c.T.tocsr() if is_sparse else c.T
        n, m = m, n
    if not is_sparse:
        c = np.ascontiguousarray(c)  # the kernels walk rows; a strided view is 3x slower
    offset = 0.0 if is_sparse else common_offset(c)
    if offset:
        c = c - offset  # exact: every entry lies within a factor 2 of the offset
        u0 = None if u0 is None else _shifted(u0, offset)
    dropped = _why_cold(c, transposed, u0 is not None or predictor is not None)
    if is_sparse and predictor is not None and not dropped:
        dropped = "a predictor needs a dense cost matrix (sparse costs are solved cold)"
    if predictor is not None and not dropped and n != m:
        dropped = (f"{n}x{m} is not square: padded to a square, predicted duals cost far "
                   "more augmentations than a cold solve")
    if dropped or is_sparse:
        predictor = None
    if dropped:
        u0 = None
    if u0 is not None and n == m:
        u0 = _centered(u0)
    _COUNTERS["solves"] += 1
    try:
        with interrupt_kept():  # numba wraps a press while a cached kernel loads
            solved = _solve_min(c, u0, arr_passes, deadline, predictor)
    except _NotFinite:
        raise _not_finite(given) from None
    except _Unassignable:
        source = "given" if u0 is not None else "used" if predictor is not None else "none"
        solved = _unassigned(c, transposed, source)
    if dropped:
        solved = solved._replace(prediction=f"skipped: {dropped}")
    _COUNTERS["warm_solves"] += solved.warm
    fallback = False
    warm, prediction, inference = solved.warm, solved.prediction, solved.inference
    augs, scans = solved.augs, solved.scans
    if not _certified(c, solved):
        if not warm:
            raise _cold_failure(solved.scale, n)
        _COUNTERS["fallbacks"] += 1
        fallback = True
        try:
            solved = _solve_min(c, None, None, deadline)
        except _Unassignable:  # the pattern holds an assignment: the distances overflowed
            raise _cold_failure(_max_abs(c), n) from None
        augs, scans = augs + solved.augs, scans + solved.scans
        if not _certified(c, solved):
            raise _cold_failure(solved.scale, n)
    col4row, u, v = solved.col4row, solved.u + offset, solved.v
    rows = np.arange(n)
    total = _cost(c, col4row) + n * offset  # one rounding of the offset's share
    if maximize:
        u, v, total = -u, -v, 0.0 - total  # 0.0 - 0.0 is +0.0 where -0.0 would print "-0.0"
    if transposed:
        order = np.argsort(col4row)
        rows, cols, u, v = col4row[order], rows[order], v, u
    else:
        cols = col4row
    return LapSolution(
        row_ind=rows,
        col_ind=cols,
        cost=float(total),
        row_duals=u,
        col_duals=v,
        augmentations=int(augs),
        warm=warm,
        fallback=fallback,
        time=time.perf_counter() - start,
        info={"row_reduction_scans": int(scans), "prediction": prediction,
              "inference_s": inference, "sparse_augmentations": int(solved.sparse_augs),
              "sparse_s": solved.sparse_s},
    )


def _why_cold(c: Any, transposed: bool, asked: bool) -> str | None:
    """Why given duals or a predictor are not used (None: they are), so `info` can say so.

    Warm starts need n_rows <= n_cols; sparse ones pad dummy rows up to a square, and past
    twice the pattern's own size that padding costs more memory and time than it can save
    (dense ones start in the rectangular frame itself: `warmstart.rectangular_warm_state`)."""
    if not asked:
        return None
    if transposed:
        return "more rows than columns (solved transposed, cold)"
    n, m = c.shape
    if sp.issparse(c) and (m - n) * m > c.nnz:
        return (f"{n}x{m} is too wide: padding it to a square warm start would add "
                f"{(m - n) * m} entries, more than its {c.nnz} stored pairs")
    return None


def _cold_failure(scale: float, n: int) -> Exception:
    """The error for a cold solve that fails its certificate: float64 overflow when the
    costs are that large, else a bug to report."""
    if not scale * max(n, 1) * 4 < np.finfo(np.float64).max:
        return InputError(f"costs up to {scale:.3g} overflow float64 sums over {n} rows; "
                          "rescale the cost matrix")
    return RuntimeError("LAP certificate failed on a cold solve; please report this input")


class _NotFinite(Exception):
    """A dense cost entry is NaN or infinite (found by the solve's first pass)."""


def dense_costs(cost: Any) -> np.ndarray:
    """2-D real float array (float32 kept, everything else as float64), in any memory order.

    Its entries are checked for NaN and inf by the solve's first pass over the matrix
    (`warmstart.checked_min_trick` or `jv.checked_row_reduction`), not by a pass of its own.
    """
    refuse_masked(cost, "cost matrix", "; pass a scipy.sparse matrix whose stored entries "
                  "are the allowed pairs")
    if hasattr(cost, "component_data_objects"):  # a Pyomo model or block
        raise InputError(f"the cost matrix must be an array, got a Pyomo "
                         f"{type(cost).__name__}; solve an assignment-structured Pyomo model "
                         "with solve(model, solver='lap')")
    if cost is None or isinstance(cost, (str, bytes, dict, numbers.Number)):
        raise InputError(f"the cost matrix must be a 2-D array of numbers, got "
                         f"{type(cost).__name__} {cost!r:.40}")
    cost = detached(cost, "cost matrix")
    try:
        c = np.asarray(cost)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cost matrix is not numeric: {exc}") from exc
    if c.ndim != 2:
        raise InputError(f"cost matrix must be 2-D, got shape {c.shape}")
    if c.dtype.kind not in "iufcm":  # np.number: timedelta64 included
        raise InputError(f"cost matrix must be numeric, got dtype {c.dtype}")
    if c.dtype.kind == "c":
        raise InputError("cost matrix must be real, got complex values")
    if c.dtype.kind == "m":
        c = _timedelta_counts(c)
    check_exact_integers(c, "cost matrix")
    if c.dtype != np.float32:
        c = c.astype(np.float64, copy=False)
    return c


def _timedelta_counts(c: np.ndarray) -> np.ndarray:
    """A timedelta64 matrix as int64 counts of its unit, NaT refused by position: cast to
    float, NaT became -2**63, a cost the finiteness pass cannot see (it was assigned first)."""
    missing = np.isnat(c)
    if missing.any():
        i, j = np.argwhere(missing)[0]
        raise InputError(f"cost[{i}, {j}] is NaT; a dense cost matrix must be finite "
                         "(pass a scipy.sparse matrix to forbid pairs)")
    return c.astype(np.int64)  # not a view: '>m8' bytes read as native ints were wrong


def _not_finite(c: np.ndarray) -> InputError:
    """The error naming the first NaN or inf entry of the caller's dense matrix `c`."""
    i, j = np.argwhere(~np.isfinite(c))[0]
    return InputError(
        f"cost[{i}, {j}] is {c[i, j]}; a dense cost matrix must be finite "
        "(pass a scipy.sparse matrix to forbid pairs)"
    )


def _check_duals(row_duals: Any, n: int, what: str = "row_duals") -> np.ndarray | None:
    """Row duals as a finite float64 vector of length n, or None."""
    if row_duals is None:
        return None
    refuse_masked(row_duals, what)
    try:
        given = np.asarray(row_duals)
    except (TypeError, ValueError, RuntimeError) as exc:  # e.g. a tensor that requires grad
        raise InputError(f"{what} cannot be read as an array: {exc}") from None
    if given.dtype.kind == "c":
        raise InputError(f"{what} must be real, got dtype {given.dtype}")
    try:
        u = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:  # 2**1024 is no float64
        raise InputError(f"{what} must be numeric: {exc}") from exc
    if u.size == n and sum(side > 1 for side in u.shape) <= 1:
        u = u.reshape(n)  # (n,), (n, 1) or (1, n): one value per row; (5, 10) for 50 rows is not
    if u.shape != (n,):
        raise InputError(f"{what} must have one value per row ({n}), got shape {given.shape}")
    if not np.isfinite(u).all():
        raise InputError(f"{what} must be finite")
    return u


def _centered(u0: np.ndarray) -> np.ndarray:
    """Square LAP row duals shifted to median 0: (u - d, v + d) is the same start, and a
    constant offset far above the costs would only erase their low digits. The median is
    one of the duals (np.median averages two, which overflows for duals near the float
    maximum), and the shift stays finite (`_shifted`); found by np.partition (np.quantile
    took 19 us, most of a small warm solve's cost)."""
    middle = (u0.size - 1) // 2
    return _shifted(u0, float(np.partition(u0, middle)[middle]))


def _solve_min(
    c: Any, u0: np.ndarray | None, arr_passes: int | None, deadline: float | None,
    predictor: DualPredictor | None = None,
) -> _Solved:
    """Dispatch to the dense or sparse min-cost solve with n_rows <= n_cols (a predictor
    only reaches here with dense costs)."""
    if predictor is not None:
        return _solve_predicted(c, predictor, arr_passes, deadline)
    if sp.issparse(c):
        solved = _solve_sparse(c, u0, deadline, arr_passes=arr_passes)
        solved = solved._replace(warm=u0 is not None)
    else:
        solved = _solve_dense(c, u0, arr_passes, deadline)
    if u0 is None or not solved.warm:
        return solved
    return solved._replace(prediction="given")


def _solve_predicted(
    c: np.ndarray, predictor: DualPredictor, arr_passes: int | None, deadline: float | None
) -> _Solved:
    """Dense solve that asks `predictor` for row duals unless a cold solve from JV's column
    reduction costs less (`_why_not_predict`: then it goes on cold from that start)."""
    n, m = c.shape
    if n == m:
        reduction = _cold_state(c)
        if np.isnan(reduction[1]):
            raise _NotFinite
        free = np.count_nonzero(reduction[0][2] < 0)  # all rows when it was dropped
        why = _why_not_predict(n, free, reduction[2])
        if why:
            solved = _solve_dense(c, None, arr_passes, deadline, reduction)
            return solved._replace(prediction=f"skipped: {why}")
    tick = time.perf_counter()
    predicted = predictor.predict_duals(_read_only(c))
    if predicted is None:
        raise InputError(f"predictor {type(predictor).__name__}.predict_duals returned None")
    u0 = _check_duals(predicted, n, "predictor's row duals")
    if n == m:
        u0 = _centered(u0)
    inference = time.perf_counter() - tick
    if n != m or not 0 < SPARSIFY_K < n // 4:
        solved = _solve_dense(c, u0, arr_passes, deadline)
        return _predicted(solved, inference)
    tick = time.perf_counter()
    refined = _refine_sparse(c, u0, SPARSIFY_K, deadline)
    sparse_s = time.perf_counter() - tick
    solved = _solve_dense(c, refined.u, arr_passes, deadline, start=refined.col4row)
    return _predicted(solved, inference)._replace(sparse_augs=refined.augs, sparse_s=sparse_s)


def _read_only(c: np.ndarray) -> np.ndarray:
    """A view of the working matrix (often the caller's own) that a predictor cannot write:
    one normalising it in place had the solve certify the altered costs (cost 204 for 1205)
    and changed the caller's array."""
    view = c.view()
    view.flags.writeable = False
    return view


def _predicted(solved: _Solved, inference: float) -> _Solved:
    """A solve started from predicted duals, marked as such unless they were set aside."""
    solved = solved._replace(inference=inference)
    return solved._replace(prediction="used") if solved.warm else solved


def _why_not_predict(n: int, free: int, reduced: bool) -> str | None:
    """Why a square solve of n rows whose column reduction left `free` rows free (`reduced`:
    it was kept) goes on cold instead of asking its predictor, or None to predict."""
    if free <= PREDICT_MIN_FREE * n:
        return f"column reduction left {free} of {n} rows free"
    if reduced and n < PREDICT_MIN_ROWS:
        return (f"{n} rows, under {PREDICT_MIN_ROWS}: cold JV's {free} augmentations cost "
                "less than a prediction")
    return None


def _refine_sparse(
    c: np.ndarray, u0: np.ndarray, k: int, deadline: float | None
) -> _Solved:
    """Optimal solve of the square LAP restricted to the k smallest reduced costs of each row
    and column under the Min-Trick duals of `u0`, plus the diagonal; then up to
    PRICING_ROUNDS times, add each row's k most violated missing entries under that
    solve's duals and re-solve warm (no violation left: the sparse optimum is the dense one).
    """
    n, m = c.shape
    v0 = np.empty(m)
    warmstart.min_trick(c, u0, v0)
    indptr, indices, data = sparsify.reduced_cost_pattern(c, u0, v0, k)
    solved = _solve_sparse(sp.csr_matrix((data, indices, indptr), shape=(n, m)), u0, deadline)
    augs = solved.augs
    for _ in range(PRICING_ROUNDS):
        indptr, indices, data, violations = sparsify.price_pattern(
            c, solved.u, solved.v, indptr, indices, k, warmstart.TIGHT_REL
        )
        if violations == 0:
            break
        pattern = sp.csr_matrix((data, indices, indptr), shape=(n, m))
        solved = _solve_sparse(pattern, solved.u, deadline, start=solved.col4row)
        augs += solved.augs
    return solved._replace(augs=augs)


def _augment_in_chunks(kernel: Callable, args: tuple, n: int, deadline: float | None) -> int:
    """Run an augmenting kernel over rows 0..n-1 in chunks of work (entries scanned) sized
    from the rate the last chunk ran at to about CHUNK_SECONDS, checking `deadline` between
    chunks; returns its augmentation count (< 0: infeasible). Chunks counted in
    augmentations overshot: late ones cost far more (a 0.05 s limit returned after 1.4 s)."""
    total, row, work = 0, 0, FIRST_CHUNK_WORK
    while row < n:
        budget = np.full(1, work, np.int64)
        tick = time.perf_counter()
        augs, row = kernel(*args, row, n + 1, budget)
        if augs < 0:
            return augs
        total += augs
        now = time.perf_counter()
        if row < n and deadline is not None and now > deadline:
            raise TimeLimitError(f"LAP time limit reached after {total} augmentations")
        rate = (work - int(budget[0])) / max(now - tick, 1e-4)
        work = int(min(max(rate * CHUNK_SECONDS, FIRST_CHUNK_WORK), 8 * work, 2**62))
    return total


def _reduce_rows_in_chunks(kernel: Callable, args: tuple, m: int, passes: int,
                           deadline: float | None) -> int:
    """Augmenting row reduction (`kernel(*args, passes, max_steps)`, dense or sparse, over m
    columns), at most `passes` passes, in chunks timed like `_augment_in_chunks` so
    `deadline` and Ctrl-C are seen between them (a caller's `arr_passes` may be 2**63);
    returns the row scans done."""
    total, done, chunk = 0, 0, 2
    while done < passes:
        step = min(chunk, passes - done)
        tick = time.perf_counter()
        scans, finished = kernel(*args, step, ARR_STEPS_PER_ROW * m)
        total += scans
        done += step
        now = time.perf_counter()
        if finished or done >= passes:
            break
        if deadline is not None and now > deadline:
            raise TimeLimitError(f"LAP time limit reached after {done} row-reduction passes")
        if now - tick < CHUNK_SECONDS / 2:
            chunk *= 2
    return total


def _solve_dense(
    c: np.ndarray, u0: np.ndarray | None, arr_passes: int | None, deadline: float | None,
    reduction: tuple[tuple[np.ndarray, ...], float, bool] | None = None,
    start: np.ndarray | None = None,
) -> _Solved:
    """Cold JV (column reduction or v = 0, augmenting row reduction, shortest augmenting
    paths) or warm (Min-Trick duals and their tight edges, first those of the assignment
    `start`, one reduction pass, shortest augmenting paths). `reduction` is a column
    reduction `_cold_state` would compute."""
    n, m = c.shape
    if reduction is None and start is None and n * m <= small.MAX_ENTRIES and (
        u0 is None or n == m
    ):
        return _solve_small(c, u0, arr_passes, deadline)
    if u0 is not None:
        if n == m:
            state, scale, set_aside = warmstart.warm_state(c, u0, start)
            if set_aside:  # `state` is a column reduction cold JV keeps
                solved = _solve_dense(c, None, arr_passes, deadline, (state, scale, True))
                return solved._replace(prediction=f"skipped: {DUALS_SET_ASIDE}")
            u, v, col4row, row4col = state
        else:
            (u, v, col4row, row4col), scale = warmstart.rectangular_warm_state(c, u0)
        reduced = True
    else:
        (u, v, col4row, row4col), scale, reduced = reduction or _cold_state(c)
    if np.isnan(scale):
        raise _NotFinite
    snapshot = (u.copy(), v.copy()) if reduced else None  # tightened: feasible everywhere
    passes = (1 if reduced else 2) if arr_passes is None else _int64_passes(arr_passes)
    scans = _reduce_rows_in_chunks(jv.row_reduction_passes, (c, v, col4row, row4col),
                                   c.shape[1], passes, deadline)
    if u0 is None or passes:
        jv.implicit_row_duals(c, v, col4row, u)
    augs = _augment_in_chunks(jv.shortest_augmenting_paths, (c, u, v, col4row, row4col), n,
                              deadline)
    if augs < 0:  # dense: the distances overflowed (`_unassigned` tells callers which)
        raise _Unassignable(-1 - augs)
    return _Solved(col4row, u, v, augs, scans, scale, snapshot, warm=u0 is not None)


def _solve_small(
    c: np.ndarray, u0: np.ndarray | None, arr_passes: int | None, deadline: float | None
) -> _Solved:
    """`_solve_dense` in one compiled call (`small.solve`), certificate figures included;
    the deadline is checked before it only, since the call takes milliseconds at most."""
    if deadline is not None and time.perf_counter() > deadline:
        raise TimeLimitError("LAP time limit reached before the solve started")
    warm = u0 is not None
    passes = -1 if arr_passes is None else _int64_passes(arr_passes)
    col4row, u, v, augs, scans, scale, gap, set_aside = small.solve(
        np.ascontiguousarray(c), u0 if warm else np.zeros(0), warm, passes,
        warmstart.COLUMN_REDUCTION_MIN_MATCHED, ARR_STEPS_PER_ROW,
    )
    if np.isnan(scale):
        raise _NotFinite
    if augs < 0:
        raise _Unassignable(-1 - augs)
    solved = _Solved(col4row, u, v, augs, scans, scale, gap=gap, warm=warm and not set_aside)
    return solved._replace(prediction=f"skipped: {DUALS_SET_ASIDE}") if set_aside else solved


def _int64_passes(arr_passes: int) -> int:
    """`arr_passes` (any non-negative integer type) as a Python int the kernels type as int64:
    capped at int64's maximum, more passes than ever run; a uint64 would wrap negative."""
    return min(int(arr_passes), int(np.iinfo(np.int64).max))


def _cold_state(c: np.ndarray) -> tuple[tuple[np.ndarray, ...], float, bool]:
    """(u, v, col4row, row4col) to start a cold solve, the cost scale max |c_ij| (NaN when an
    entry is not finite) and whether the start is dual feasible on every entry (a reduction
    made it, so the certificate may rescan only the lines whose duals rose since).

    A square matrix starts from JV's column reduction (v_j = min_i c_ij, tight edges
    matched), dropped when it matches too few rows. A rectangular one starts from row
    reduction (u_i = min_j c_ij, v = 0): its spare columns must keep v_j = 0, and JV never
    moves the v of a column it has not assigned.
    """
    n, m = c.shape
    if n < m:
        u, v = np.empty(n), np.zeros(m)
        col4row, row4col = np.full(n, -1, np.int64), np.full(m, -1, np.int64)
        scale = jv.checked_row_reduction(c, u, col4row, row4col)
        return (u, v, col4row, row4col), float(scale), True
    return _kept_reduction(*warmstart.column_reduction_state(c))


def _kept_reduction(state: tuple[np.ndarray, ...], scale: float
                    ) -> tuple[tuple[np.ndarray, ...], float, bool]:
    """`_cold_state`'s answer from a square column reduction: kept when it matched
    COLUMN_REDUCTION_MIN_MATCHED of the rows (or the costs are not finite), else zero duals."""
    n, m = state[2].size, state[3].size
    if np.isnan(scale) or np.count_nonzero(state[2] >= 0) >= (
        warmstart.COLUMN_REDUCTION_MIN_MATCHED * n
    ):
        return state, scale, True
    empty = (np.empty(n), np.zeros(m), np.full(n, -1, np.int64), np.full(m, -1, np.int64))
    return empty, scale, False


def _padded_duals(u0: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row duals of an n-row sparse warm start padded to a square with zero-cost dummy rows
    (dense costs start unpadded: `warmstart.rectangular_warm_state`), from the real rows'
    Min-Trick column duals `v`: each dummy at minus the n-th smallest v, then all centred
    (`_centered`).

    Rectangular duals in `LapSolution`'s convention have v <= 0, 0 on spare columns: the
    dummies then keep the n smallest v for the real rows and are tight on all other columns,
    so a solve's own duals passed back start from its optimum. u0.min() made the dummies
    tight on one column when costs were negative (maximized, or shifted below 0): about
    1000 augmentations instead of 6 at 1000x1999, then a failed certificate and a cold
    re-solve. The padded square is shift-invariant, so duals shifted by a constant start
    alike once centred: a dummy dual capped at 0 had doubled the augmentations of duals
    shifted down, and uncentred duals shifted up past n max|c| fell back to a cold solve."""
    n = u0.size
    nth = float(np.partition(v, n - 1)[n - 1])
    big = np.finfo(np.float64).max
    dummy = float(np.clip(-nth, -big, big))
    return _centered(np.concatenate([u0, np.full(v.size - n, dummy)]))


def _unpad(n: int, solved: _Solved) -> _Solved:
    """Drop dummy rows and shift duals so spare (dummy-matched) columns get v_j = 0 <= ...

    The snapshot and certificate figures are dropped: they belong to the padded matrix. A
    shift far out of scale with the costs (WARM_DUALS_MAX_FACTOR) leaves too few of their
    digits in the duals to price the answer (row duals near 1e14 on costs below 1 came back
    with column duals 0.013 off, which the certificate, pricing the row duals alone, did not
    see): the solve is marked unassigned, so `_certified` refuses it and a cold solve follows."""
    col4row, u, v = solved.col4row, solved.u, solved.v
    shift = v[col4row[n:]].max()
    if abs(shift) > WARM_DUALS_MAX_FACTOR * n * warmstart.positive_scale(solved.scale):
        col4row = np.full(col4row.size, -1, np.int64)
    return solved._replace(col4row=col4row[:n].copy(), u=u[:n] + shift, v=v - shift,
                           snapshot=None, gap=None)


class _Unassignable(Exception):
    """A solve found a row it cannot assign: a sparse pattern holds no assignment, or the
    distances overflowed float64 (always so on dense costs; `_unassigned` tells which). The
    pattern is checked only
    then (`sparse.check_pattern`, a maximum matching that costs several times a feasible
    solve), not up front."""

    def __init__(self, row: int) -> None:
        super().__init__(row)
        self.row = row


def _unassigned(c: Any, transposed: bool, prediction: str) -> _Solved:
    """What a solve that found a row it could not assign leaves behind. A sparse pattern's
    flaw is named first (in the caller's terms); a pattern that holds an assignment means
    the Dijkstra's distances overflowed float64: from warm duals far out of scale that is an
    uncertified solve (re-solved cold), from a cold start the overflow error."""
    if sp.issparse(c):
        sparse.check_pattern(c, transposed)
    n, m = c.shape
    if prediction == "none":
        raise _cold_failure(_max_abs(c), n)
    return _Solved(np.full(n, -1, np.int64), np.zeros(n), np.zeros(m), 0, 0, _max_abs(c),
                   warm=True, prediction=prediction)


def _max_abs(c: Any) -> float:
    """max |c_ij| over the stored (sparse) or all (dense) entries."""
    values = c.data if sp.issparse(c) else c
    return float(np.abs(values).max(initial=0.0))


def _solve_sparse(
    c: sp.csr_matrix, u0: np.ndarray | None, deadline: float | None,
    start: np.ndarray | None = None, arr_passes: int | None = None,
) -> _Solved:
    """Sparse SAP. Cold and square: JV's column reduction and `arr_passes` (default 1)
    augmenting-row-reduction passes, as LAPMOD; with `arr_passes=0`, or rectangular, from
    row minima alone. Warm: from Min-Trick duals, keeping the still-tight edges of the
    assignment `start` (square only; rectangular: padded). Then shortest augmenting paths."""
    n, m = c.shape
    if u0 is not None and n < m:
        k = m - n
        dummy = sp.csr_matrix(
            (np.zeros(k * m), np.tile(np.arange(m), k), np.arange(0, k * m + 1, m)), shape=(k, m)
        )
        square = sp.vstack([c, dummy], format="csr")
        v = np.empty(m)
        sparse.sparse_min_trick(c.indptr.astype(np.int64), c.indices.astype(np.int64), c.data,
                                m, u0, v)
        u_full = _padded_duals(u0, v)
        return _unpad(n, _solve_sparse(square, u_full, deadline))
    indptr = c.indptr.astype(np.int64)
    indices = c.indices.astype(np.int64)
    data = c.data
    col4row = np.full(n, -1, np.int64)
    row4col = np.full(m, -1, np.int64)
    u = np.zeros(n, np.float64)
    v = np.zeros(m, np.float64)
    if u0 is not None:
        u[:] = u0
        sparse.sparse_min_trick(indptr, indices, data, m, u, v)
    passes = 1 if arr_passes is None else _int64_passes(arr_passes)
    reduce = u0 is None and n == m and passes > 0  # rectangular: spare columns keep v = 0
    if reduce:  # JV's column reduction, v_j = min_i c_ij
        sparse.sparse_min_trick(indptr, indices, data, m, u, v)
    scale = float(np.abs(data).max(initial=0.0))
    if start is not None:
        sparse.sparse_keep_tight(indptr, indices, data, u, v, start, col4row, row4col,
                                 warmstart.TIGHT_REL)
    sparse.sparse_tighten_and_match(indptr, indices, data, u, v, col4row, row4col)
    if reduce and arr_passes is None and n >= ROW_MINIMA_MIN_ROWS and _row_minima_match_more(
            indptr, indices, data, col4row, u, v, row4col):
        reduce = False  # the row-minima start it left in u, v, col4row and row4col
    scans = 0
    if reduce:  # then augmenting row reduction, as LAPMOD and dense JV do
        scans = _reduce_rows_in_chunks(sparse.sparse_row_reduction_passes,
                                       (indptr, indices, data, v, col4row, row4col), m,
                                       passes, deadline)
        sparse.sparse_implicit_row_duals(indptr, indices, data, v, col4row, u)
    augs = _augment_in_chunks(
        sparse.sparse_augment, (indptr, indices, data, m, u, v, col4row, row4col), n, deadline
    )
    if augs < 0:
        raise _Unassignable(-1 - augs)
    return _Solved(col4row, u, v, augs, scans, scale)


def _row_minima_match_more(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                           col4row: np.ndarray, u: np.ndarray, v: np.ndarray,
                           row4col: np.ndarray) -> bool:
    """Whether starting from row minima (v = 0) leaves fewer rows free than the column
    reduction in `col4row` did; if so, that start replaces it in place. Each start suits
    other costs: a constant per row (padded matchings alike) left the column-reduced start
    10-60x slower, a constant per column the row-minima one 75x (10,000 rows)."""
    free = int(np.count_nonzero(col4row < 0))
    u2, v2 = np.zeros_like(u), np.zeros_like(v)
    col2, row2 = np.full_like(col4row, -1), np.full_like(row4col, -1)
    sparse.sparse_tighten_and_match(indptr, indices, data, u2, v2, col2, row2)
    if int(np.count_nonzero(col2 < 0)) >= free:
        return False
    u[:], v[:], col4row[:], row4col[:] = u2, v2, col2, row2
    return True


def _certified(c: Any, solved: _Solved) -> bool:
    """Complementary-slackness certificate via weak duality: Min-Trick column duals from a
    full pass, or, when few duals rose since row tightening, a rescan of just those lines.

    A warm solve's tolerance is relative to its assigned costs, not to max |c|: one huge entry
    the assignment avoids must not loosen the accepted gap (a wrong warm answer would pass);
    a false reject there only costs the cold re-solve. Cold JV is exact by construction and
    may legitimately carry duals near max |c|, so its tolerance stays relative to max |c|."""
    n, m = c.shape
    col4row, u = solved.col4row, solved.u
    if (col4row < 0).any():  # a warm solve whose distances overflowed (`_unassigned`)
        return False
    if solved.gap is not None:
        primal, bound, assigned, reduced, size = solved.gap
    elif sp.issparse(c):
        primal, bound, assigned, reduced, size = certify.sparse_gap(
            c.indptr.astype(np.int64), c.indices.astype(np.int64), c.data, m, col4row, u
        )
    elif solved.snapshot is not None and _few_rose(solved, n):
        primal, bound, assigned, reduced, size = certify.dense_gap_since(
            c, col4row, u, solved.v, *solved.snapshot
        )
    else:
        primal, bound, assigned, reduced, size = certify.dense_gap(c, col4row, u)
    dual_magnitude = float(np.abs(u).max(initial=0.0))
    if solved.warm and dual_magnitude > (
        WARM_DUALS_MAX_FACTOR * max(n, 1) * warmstart.positive_scale(solved.scale)
    ):
        return False
    scale = assigned if solved.warm and assigned > 0 else solved.scale
    if solved.warm and not _tight_on_assignment(c, solved, scale):
        return False
    return certify.certified(primal, bound, scale, n, dual_magnitude, strict=solved.warm,
                             reduced=reduced, reduced_size=size)


def _tight_on_assignment(c: Any, solved: _Solved, scale: float) -> bool:
    """Whether the warm solve's own duals are tight on its assignment, as the ones returned
    must be: the certificate prices columns afresh from the row duals, and duals started far
    out of scale (1e20 on costs of 7) lost a column's dual to cancellation (0 for 7) while
    the row duals and the certificate came out right."""
    residual = _assigned(c, solved.col4row) - solved.u - solved.v[solved.col4row]
    return bool(np.abs(residual).max(initial=0.0)
                <= certify.tolerance(scale, solved.col4row.size))


def _few_rose(solved: _Solved, n: int) -> bool:
    """Whether few enough duals rose since the snapshot for a rescan to beat a full pass."""
    u_snap, v_snap = solved.snapshot
    rows = np.count_nonzero(solved.u > u_snap)
    cols = np.count_nonzero(solved.v > v_snap)
    return rows + COLUMN_RESCAN_COST * cols <= INCREMENTAL_CERTIFICATE_MAX_SHARE * n


def common_offset(c: np.ndarray) -> float:
    """The constant that float64 costs share far beyond their spread (all within [lo, hi],
    same sign, spread below |offset| / OFFSET_SPREAD_RATIO), else 0. JV's duals resolve
    costs only to ulp(offset): low-rank integers plus 2**48 came back 28 above the optimum;
    with the offset (the entry nearest 0) subtracted first, exactly, they are exact. Row 0
    is probed first, so other matrices pay one row."""
    if c.dtype != np.float64 or c.size == 0:
        return 0.0
    offset = _offset_of(float(c[0].min()), float(c[0].max()))
    if not offset or not abs(offset) * 4 * max(c.shape) < np.finfo(np.float64).max:
        return 0.0  # an overflowing total is refused by the solve itself
    return _offset_of(float(c.min()), float(c.max()))


def _shifted(duals: np.ndarray, offset: float) -> np.ndarray:
    """duals - offset, held inside the finite floats (given duals near the float maximum
    would overflow to inf; any finite start keeps the solve exact)."""
    top = np.finfo(np.float64).max
    with np.errstate(over="ignore"):
        return np.clip(duals - offset, -top, top)


def _offset_of(lo: float, hi: float) -> float:
    """lo (all positive) or hi (all negative) when the spread hi - lo is below
    |offset| / OFFSET_SPREAD_RATIO; else 0 (NaN and inf give 0: the solve reports them)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0
    offset = lo if lo > 0 else hi if hi < 0 else 0.0
    return offset if (hi - lo) * OFFSET_SPREAD_RATIO < abs(offset) else 0.0


def _cost(c: Any, col4row: np.ndarray) -> float:
    """Sum of the assigned entries c[i, col4row[i]] (float64)."""
    return float(_assigned(c, col4row).sum())


def _assigned(c: Any, col4row: np.ndarray) -> np.ndarray:
    """The assigned entries c[i, col4row[i]] as float64."""
    values = np.empty(col4row.size)
    if sp.issparse(c):  # scipy's fancy indexing costs more than a small solve
        sparse.assigned_values(c.indptr, c.indices, c.data, col4row, values)
    else:
        values[:] = c[np.arange(col4row.size), col4row]
    return values
