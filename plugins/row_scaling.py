"""Linear rows with huge coefficients divided by a power of two before SCIP solves them.

SoPlex, SCIP's LP solver, gets LPs wrong whose rows have coefficients near 1e9: `min c x
s.t. A x >= b`, x in [0, 3], A drawn from [1e9, 1e10) and costs below 100, had its LP
optimum reported as 148 for a true 90.3 (others stopped with "error in LP solver"), so SCIP
pruned with a wrong bound, and 28 of 60 such integer covering models came back "optimal"
above their optimum (PySCIPOpt alone the same; HiGHS right on all). The same rows divided
by a power of two near their largest coefficient solve right (0 of 60).

A power of two keeps every coefficient's float exact. A row is divided only while each of
its finite sides stays 1 or more in size (a row with a side of 0 is left alone) and no
coefficient drops below MIN_COEF = 1 (divided to 0.004 and 0.002 beside 1e11, a row's
continuous terms were lost to SCIP, which missed an equality by 24): SCIP's feasibility test,
(activity - side) / max(|activity|, |side|, 1), is then the same before and after, so the
rows accept the same points. Row duals read from SCIP are multiplied back (`dual_scale`).
Where the answer then misses a whole-number row in exact arithmetic, the retry of
`coplug.plugins.integral_rows.optimize_checked` solves the rows as written (`unscale_rows`):
divided, they are no longer whole-number rows that SCIP judges exactly (a knapsack with
weights near 1e9 came back 2 over its capacity, which the tightest tolerance passes).

HiGHS's presolve gets rows with fractional coefficients near 1e10-1e12 wrong too: it called
`max c x`, x integer in [0, 2], three such packing rows, "optimal" at 203 where 244 meets
every row exactly (5-7 of 200 random models per scale, 0 once divided). `scale_highs_rows`
divides a built HiGHS model's rows the same way, except the all-integer rows with whole (or
dyadic) coefficients, which HiGHS got right on every such model and coplug judges exactly
as written (`coplug.plugins.highs_rows`), where a tightened retry needs them undivided. The
checks read the rows as written (`highs_row_factors`); row duals are multiplied back.
"""

from __future__ import annotations

import math
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from coplug.plugins.errors import SolverError

SCALE_COEF = 1e6  # a row with a coefficient this large (in size) is divided
MIN_COEF = 1.0  # no coefficient is divided below this
MAX_TERMS = 5000  # longer rows are left alone (see `scale_rows`)
_SCALES: WeakKeyDictionary[Any, dict[int, float]] = WeakKeyDictionary()  # row pointers
_HIGHS_SCALES: WeakKeyDictionary[Any, np.ndarray] = WeakKeyDictionary()  # per-row factors


def row_scale(coefs: list[float], lhs: float | None, rhs: float | None) -> float:
    """The power of two (at most 1) to multiply a row by: its largest coefficient brought
    to [1, 2) where its sides and smallest coefficient allow; 1.0 for a row whose
    coefficients are all under SCALE_COEF."""
    sizes = [abs(c) for c in coefs if c != 0.0]
    if not sizes or max(sizes) < SCALE_COEF:
        return 1.0
    room = min(max(sizes), min(sizes) / MIN_COEF,
               *(abs(side) for side in (lhs, rhs) if side is not None))
    steps = math.floor(math.log2(room)) if room >= 2.0 else 0
    return 2.0 ** -steps


def scale_rows(scip: Any) -> int:
    """Divide SCIP's linear rows (before its solve, as written: a staged solve puts an
    earlier stage's back first with `unscale_rows`) as `row_scale` says; how many were. A
    row of more than MAX_TERMS terms is left as it is (SCIP finds each term by a linear
    search: 6.5 s for one row of 100,000). The factors are kept for `dual_scale`."""
    infinity = scip.infinity()
    scales: dict[int, float] = {}
    for cons in scip.getConss():
        if cons.getConshdlrName() != "linear" or scip.getConsNVars(cons) > MAX_TERMS:
            continue
        if max(map(abs, scip.getConsVals(cons)), default=0.0) < SCALE_COEF:
            continue  # the common case, decided without reading the row's variables
        terms = _merged_terms(scip, cons)
        lhs, rhs = scip.getLhs(cons), scip.getRhs(cons)
        lhs = None if lhs <= -infinity else lhs
        rhs = None if rhs >= infinity else rhs
        factor = row_scale([coef for _, coef in terms], lhs, rhs)
        if factor != 1.0:
            _multiply(scip, cons, terms, lhs, rhs, factor)
            scales[cons.ptr()] = factor
    if scales:
        _SCALES[scip] = scales
    return len(scales)


def unscale_rows(scip: Any) -> None:
    """Put the rows `scale_rows` divided back as written (SCIP in its problem stage): a
    retry for exactness needs SCIP's own integer handling of whole-number rows (its
    knapsack constraints judge weights exactly), which divided rows lose."""
    scales = _SCALES.pop(scip, {})
    if not scales:
        return
    infinity = scip.infinity()
    for cons in scip.getConss():
        factor = scales.get(cons.ptr())
        if factor is None:
            continue
        lhs, rhs = scip.getLhs(cons), scip.getRhs(cons)
        _multiply(scip, cons, _merged_terms(scip, cons), None if lhs <= -infinity else lhs,
                  None if rhs >= infinity else rhs, 1.0 / factor)


def forget_rows(scip: Any, conss: list[Any]) -> None:
    """Drop rows about to be deleted from `scale_rows`'s factors: SCIP's block memory hands
    a deleted row's address to the next row added, which `unscale_rows` would then multiply
    (a staged solve's objective-bound row came back 2**22 times larger)."""
    scales = _SCALES.get(scip)
    if scales:
        for cons in conss:
            scales.pop(cons.ptr(), None)


def _merged_terms(scip: Any, cons: Any) -> list[tuple[Any, float]]:
    """The row's (variable, coefficient) pairs, a variable listed twice (files may) once
    with its coefficients' sum: SCIP's chgCoefLinear keeps one term per variable."""
    merged: dict[int, list[Any]] = {}
    for var, coef in zip(scip.getConsVars(cons), scip.getConsVals(cons), strict=True):
        if var.ptr() in merged:
            merged[var.ptr()][1] += coef
        else:
            merged[var.ptr()] = [var, coef]
    return [(var, coef) for var, coef in merged.values()]


def _multiply(scip: Any, cons: Any, terms: list[tuple[Any, float]], lhs: float | None,
              rhs: float | None, factor: float) -> None:
    """Multiply a linear row (its `terms` merged) and its finite sides by `factor`."""
    for var, coef in terms:
        scip.chgCoefLinear(cons, var, coef * factor)
    if lhs is not None:
        scip.chgLhs(cons, lhs * factor)
    if rhs is not None:
        scip.chgRhs(cons, rhs * factor)


def dual_scale(scip: Any, cons: Any) -> float:
    """What SCIP's dual of row `cons` is multiplied by to price the row as written."""
    return _SCALES.get(scip, {}).get(cons.ptr(), 1.0)


def scale_highs_rows(highs: Any) -> int:
    """Divide the rows of a built HiGHS model (before its first solve) as `row_scale` says,
    all but the rows on integer columns only whose coefficients are whole or dyadic; how
    many were. The model is read once (0.1 s on 2 million entries) and passed back whole
    only where a row is divided: HiGHS's changeCoeff took 1.5 ms per entry on such a model.
    The factors are kept for `highs_row_factors`."""
    import highspy

    from coplug.plugins.integral_rows import EXACT_DENOMINATOR  # rows it judges exactly

    model = highs.getModel()
    lp = model.lp_
    values = np.asarray(lp.a_matrix_.value_, dtype=float)
    if not values.size or not np.abs(values).max() >= SCALE_COEF:
        return 0  # the common case, decided on one read (and a NaN entry, refused later)
    rows = _entry_rows(lp)
    integer = np.array([kind == highspy.HighsVarType.kInteger for kind in lp.integrality_]
                       or [False] * lp.num_col_, dtype=bool)
    dyadic = values * EXACT_DENOMINATOR
    inexact = np.zeros(lp.num_row_, dtype=bool)
    np.logical_or.at(inexact, rows, ~integer[_entry_columns(lp)] | (dyadic != np.round(dyadic)))
    sizes = np.abs(values)
    largest, smallest = np.zeros(lp.num_row_), np.full(lp.num_row_, np.inf)
    np.maximum.at(largest, rows, sizes)
    np.minimum.at(smallest, rows, np.where(sizes > 0.0, sizes, np.inf))
    lower, upper = np.asarray(lp.row_lower_, dtype=float), np.asarray(lp.row_upper_, dtype=float)
    factors = np.ones(lp.num_row_)
    for i in np.flatnonzero(inexact & (largest >= SCALE_COEF)).tolist():
        factors[i] = row_scale([largest[i], smallest[i]],  # all `row_scale` reads of a row
                               lower[i] if np.isfinite(lower[i]) else None,
                               upper[i] if np.isfinite(upper[i]) else None)
    scaled = int(np.count_nonzero(factors != 1.0))
    if scaled:
        lp.a_matrix_.value_ = values * factors[rows]
        lp.row_lower_, lp.row_upper_ = lower * factors, upper * factors
        if highs.passModel(model) != highspy.HighsStatus.kOk:
            raise SolverError("HiGHS refused its own model with rows divided")
        _HIGHS_SCALES[highs] = factors
    return scaled


def _entry_rows(lp: Any) -> np.ndarray:
    """The row of each stored matrix entry, whichever way HiGHS stores the matrix."""
    import highspy

    matrix = lp.a_matrix_
    if matrix.format_ == highspy.MatrixFormat.kColwise:
        return np.asarray(matrix.index_, dtype=np.int64)
    return np.repeat(np.arange(lp.num_row_), np.diff(np.asarray(matrix.start_)))


def _entry_columns(lp: Any) -> np.ndarray:
    """The column of each stored matrix entry."""
    import highspy

    matrix = lp.a_matrix_
    if matrix.format_ == highspy.MatrixFormat.kColwise:
        return np.repeat(np.arange(lp.num_col_), np.diff(np.asarray(matrix.start_)))
    return np.asarray(matrix.index_, dtype=np.int64)


def highs_row_factors(highs: Any) -> np.ndarray | None:
    """What `scale_highs_rows` multiplied each of the model's rows by (rows added after it
    have none), None where it divided none: a row's dual is multiplied by its factor to
    price the row as written, and the row as written is the row divided by it."""
    return _HIGHS_SCALES.get(highs)
