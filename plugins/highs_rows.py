"""Rows of a built HiGHS model that its absolute tolerances misjudge, read off the model
itself (Pyomo models and `.mps`/`.lp` files alike).

- All-integer rows with a side or coefficient past 0.1 / mip_feasibility_tolerance, for the
  exact check of `coplug.plugins.integral_rows`: a value 2e-7 off a whole number missed a
  row with coefficients of 1.5e7 by 1 at a wrong "optimal" 9 (the optimum is 17).
- Rows broken once the integers are rounded: HiGHS takes y = 5e-7 as integral, so in
  `x <= 1e8 y` it let 50 units flow through a closed arc (`y` loads as 0) and called a point
  of cost 50.00005 optimal where the optimum is 150 (36 of 150 random fixed-charge models
  with M >= 1e7 in the numerics probe).

`lp_certificate` reads an LP answer's primal and dual solution off the same model for the
duality-gap check of `coplug.plugins.lp_certificate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from coplug.plugins.cached import cached_property
from coplug.plugins.integral_rows import (
    EXACT_DENOMINATOR,
    FEASTOL_FLOOR,
    STEP,
    IntegralRow,
    exact_coefficients,
    rounding_moved,
    tightened_feastol,
    violations,
)
from coplug.plugins.lp_certificate import Certificate, certify
from coplug.plugins.row_scaling import highs_row_factors

# The simplex of `_gradient_lp_duals`, at tight tolerances (its duals certify a QP's point).
GRADIENT_LP_OPTIONS = {"solver": "simplex", "dual_feasibility_tolerance": 1e-10,
                       "primal_feasibility_tolerance": 1e-10}
# A row is broken when the rounded point misses a side by more than this, relative to
# max(1, |side|): ten times HiGHS's default (absolute) feasibility tolerances.
ROUNDED_ROW_TOL = 1e-5
# An integer coefficient from which rounding a value HiGHS's default tolerance (1e-6) takes
# as whole can move a row by STEP: only such rows are judged by what rounding moved.
MIXED_COEF = 1e5


def _integer_columns(lp: Any) -> np.ndarray:
    """A boolean mask of the integer columns."""
    import highspy

    return np.array([kind == highspy.HighsVarType.kInteger for kind in lp.integrality_],
                    dtype=bool)


def row_matrix(lp: Any) -> Any:
    """The constraint matrix as scipy CSR, whichever way HiGHS stores it."""
    import highspy
    from scipy.sparse import csc_matrix, csr_matrix

    matrix = lp.a_matrix_
    parts = (np.asarray(matrix.value_), np.asarray(matrix.index_), np.asarray(matrix.start_))
    shape = (lp.num_row_, lp.num_col_)
    if matrix.format_ == highspy.MatrixFormat.kColwise:
        return csc_matrix(parts, shape=shape).tocsr()
    return csr_matrix(parts, shape=shape)


class RowView:
    """A built HiGHS model's rows as the checks below read them, each part read once, on
    first use: one solve read the LP copy, its integrality list and the row matrix three
    times (0.047 s of checks on a 22,500-binary assignment, 0.017 s once read once). The
    rows, sides and integrality must not change while a view is in use: `solve_highs`
    makes one per solve once its model is final; without one each check reads afresh."""

    def __init__(self, highs: Any) -> None:
        self.highs = highs

    @cached_property
    def lp(self) -> Any:
        """HiGHS's copy of its LP."""
        return self.highs.getLp()

    @cached_property
    def integer(self) -> np.ndarray:
        """The integer-column mask (empty for an LP)."""
        return _integer_columns(self.lp)

    @cached_property
    def written(self) -> np.ndarray | None:
        """What each row is multiplied by to read it as written (`scale_highs_rows` divided
        some by powers of two: exact), None where none was."""
        factors = highs_row_factors(self.highs)
        if factors is None:
            return None
        written = np.ones(self.lp.num_row_)
        divided = min(factors.size, written.size)  # rows added since were not divided
        written[:divided] = 1.0 / factors[:divided]
        return written

    @cached_property
    def matrix(self) -> Any:
        """The constraint matrix as scipy CSR, its rows as written."""
        matrix = row_matrix(self.lp)
        return matrix if self.written is None else (sp.diags(self.written) @ matrix).tocsr()

    @cached_property
    def sides(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows' lower and upper sides as written (+-inf where absent)."""
        lower, upper = np.asarray(self.lp.row_lower_), np.asarray(self.lp.row_upper_)
        if self.written is None:
            return lower, upper
        return lower * self.written, upper * self.written

    @cached_property
    def big_integer_coefficient(self) -> np.ndarray:
        """Which rows give an integer variable a coefficient of MIXED_COEF or more (where a
        value its tolerance takes as whole moves the row by more than STEP)."""
        if not self.integer.size:
            return np.zeros(self.lp.num_row_, dtype=bool)
        on_integers = abs(self.matrix).multiply(self.integer.astype(float)[None, :]).tocsr()
        return np.asarray(on_integers.max(axis=1).todense()).ravel() >= MIXED_COEF

    @cached_property
    def touches_integers(self) -> np.ndarray:
        """Which rows have an integer variable."""
        return (abs(self.matrix) @ self.integer.astype(float)) > 0


def highs_integral_rows(highs: Any, tolerance: float,
                        view: RowView | None = None) -> list[IntegralRow]:
    """The linear all-integer rows of a built HiGHS model that `tolerance` (its absolute
    mip_feasibility_tolerance) cannot judge, as in `integral_rows`, with whole or dyadic
    coefficients, or any that `scale_highs_rows` divided (HiGHS's tolerance on such a row is
    then some thousands as written: it passed a point 500 over `1234567890.123 x0 +
    2345678901.456 x1 <= ...`); a row's name is its index and its variables are column
    indices."""
    view = view or RowView(highs)
    if not view.integer.size or view.lp.num_row_ == 0:
        return []
    integer, rows_csr = view.integer, view.matrix
    lower, upper = view.sides
    sides = np.maximum(np.where(np.isfinite(lower), np.abs(lower), 0.0),
                       np.where(np.isfinite(upper), np.abs(upper), 0.0))
    largest = np.maximum(sides, abs(rows_csr).max(axis=1).toarray().ravel())
    rows = []
    for i in np.flatnonzero(largest >= STEP / tolerance).tolist():  # few rows, if any
        cols = rows_csr.indices[rows_csr.indptr[i]:rows_csr.indptr[i + 1]]
        coefs = rows_csr.data[rows_csr.indptr[i]:rows_csr.indptr[i + 1]]
        lhs = None if not np.isfinite(lower[i]) else float(lower[i])
        rhs = None if not np.isfinite(upper[i]) else float(upper[i])
        dyadic = coefs * EXACT_DENOMINATOR  # halves, quarters: judged exactly too
        divided = view.written is not None and view.written[i] != 1.0
        if len(cols) and integer[cols].all() and (divided or np.all(dyadic == np.round(dyadic))):
            numerators, denominator = exact_coefficients(coefs.tolist())
            rows.append(IntegralRow(str(i), cols.tolist(), numerators, lhs, rhs, denominator))
    return rows


def rounded_row_violations(highs: Any, view: RowView | None = None) -> dict[str, float]:
    """Row index -> violation of the rows with an integer variable that HiGHS's solution
    breaks once its integer values are rounded (as coplug loads them), beyond
    ROUNDED_ROW_TOL; {} for an LP or without a solution."""
    solution = highs.getSolution()
    if not solution.value_valid:
        return {}
    return rounded_breaks(view or RowView(highs), solution.col_value)


def rounded_breaks(view: RowView, values: Any) -> dict[str, float]:
    """`rounded_row_violations` of the column values `values` (any point, not only HiGHS's
    solution: a callback's)."""
    if not view.integer.size or view.lp.num_row_ == 0:
        return {}
    integer = view.integer
    raw = np.array(values, dtype=float)
    rounded = raw.copy()
    rounded[integer] = np.round(rounded[integer])
    lower, upper = view.sides

    def missed(point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        activity = view.matrix @ point
        over = np.maximum(np.maximum(lower - activity, activity - upper), 0.0)
        return over, np.where(activity < lower, np.abs(lower), np.abs(upper))

    over, sides = missed(rounded)
    scale = np.maximum(1.0, sides)
    broken = np.flatnonzero(view.touches_integers & (
        (over > ROUNDED_ROW_TOL * scale)
        | (view.big_integer_coefficient & rounding_moved(over, missed(raw)[0], scale))))
    return {str(i): float(over[i]) for i in broken.tolist()}


def solution_violations(highs: Any, rows: list[IntegralRow],
                        view: RowView | None = None) -> dict[str, float]:
    """Row index -> violation of HiGHS's solution: the large all-integer rows judged exactly,
    and the rows its rounded integers break."""
    if not highs.getSolution().value_valid:
        return {}
    return point_violations(rows, view or RowView(highs), highs.getSolution().col_value)


def point_violations(rows: list[IntegralRow], view: RowView, values: Any) -> dict[str, float]:
    """`solution_violations` of the column values `values`."""
    return {**rounded_breaks(view, values), **violations(rows, lambda col: values[col])}


def misjudged(highs: Any, rows: list[IntegralRow], view: RowView | None = None) -> bool:
    """Whether HiGHS's verdict may rest on its tolerance: it found a model with large
    all-integer rows infeasible, or its solution violates a row (`solution_violations`)."""
    import highspy

    if rows and highs.getModelStatus() == highspy.HighsModelStatus.kInfeasible:
        return True
    return bool(solution_violations(highs, rows, view))


def tightened_tolerance(highs: Any, rows: list[IntegralRow], tolerance: float,
                        view: RowView | None = None) -> float:
    """The mip_feasibility_tolerance of a second solve: 0.1 over the largest side or
    coefficient of the large all-integer rows and of the rows the rounded solution breaks
    (at least FEASTOL_FLOOR, at most `tolerance`)."""
    view = view or RowView(highs)
    tightened = tightened_feastol(rows, tolerance)
    broken = [int(k) for k in rounded_row_violations(highs, view)]
    if broken:
        largest = float(abs(view.matrix[broken]).max())
        tightened = min(tightened, max(FEASTOL_FLOOR, STEP / largest))
    return tightened


def lp_certificate(highs: Any) -> Certificate | None:
    """The duality-gap certificate of HiGHS's LP answer from its own primal and dual
    solution (`coplug.plugins.lp_certificate`); None for a MIP or without duals. A convex
    QP's answer is certified the same way at the objective's gradient c + Hx there: its KKT
    conditions are the LP's at that gradient (HiGHS called the unbounded `(0.01 x - y)**2 +
    0.01 x` optimal at a point whose gradient is no combination of the rows)."""
    import highspy

    model = highs.getModel()
    lp, solution = model.lp_, highs.getSolution()
    if lp.integrality_ and any(kind != highspy.HighsVarType.kContinuous
                               for kind in lp.integrality_):
        return None
    if not (solution.value_valid and solution.dual_valid):
        return None
    sign = -1.0 if lp.sense_ == highspy.ObjSense.kMaximize else 1.0
    x = np.asarray(solution.col_value, dtype=float)
    costs = np.asarray(lp.col_cost_, dtype=float)
    quadratic = bool(int(model.hessian_.dim_))
    full = symmetric_hessian(model.hessian_) if quadratic else sp.csc_matrix((len(x), len(x)))
    gradient = costs + full @ x
    sides = (row_matrix(lp), np.asarray(lp.row_lower_, dtype=float),
             np.asarray(lp.row_upper_, dtype=float), np.asarray(lp.col_lower_, dtype=float),
             np.asarray(lp.col_upper_, dtype=float))
    terms = (np.abs(costs) + abs(full) @ np.abs(x), sign * full)
    found = certify(sign * gradient, x, *sides, sign * np.asarray(solution.row_dual, dtype=float),
                    quadratic=terms)
    if found.holds or not quadratic:
        return found
    duals = _gradient_lp_duals(lp, gradient)
    if duals is None:
        return found
    again = certify(sign * gradient, x, *sides, sign * duals, quadratic=terms)
    return again if again.holds else found


def _gradient_lp_duals(lp: Any, gradient: np.ndarray) -> np.ndarray | None:
    """The row duals of the LP over a convex QP's rows and bounds with the QP's gradient at
    its point as costs, solved by HiGHS's simplex; None where it finds no optimum. A point
    optimal for the QP is optimal for that LP, so these duals certify it where the QP
    solver's own are too loose: HiGHS's left a reduced cost of -2.1e-6 (against terms near
    2) on a column without an upper bound, an infinite gap for a true optimum."""
    import highspy

    linear = highspy.HighsLp()
    linear.num_col_, linear.num_row_ = lp.num_col_, lp.num_row_
    linear.sense_, linear.offset_ = lp.sense_, lp.offset_
    linear.col_cost_ = gradient
    linear.col_lower_, linear.col_upper_ = lp.col_lower_, lp.col_upper_
    linear.row_lower_, linear.row_upper_ = lp.row_lower_, lp.row_upper_
    linear.a_matrix_ = lp.a_matrix_
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    for option, value in GRADIENT_LP_OPTIONS.items():
        highs.setOptionValue(option, value)
    highs.passModel(linear)
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    return np.asarray(highs.getSolution().row_dual, dtype=float)


def symmetric_hessian(hessian: Any) -> sp.csc_matrix:
    """HiGHS's Hessian as the whole symmetric matrix (HiGHS keeps its lower triangle, column
    by column)."""
    n = int(hessian.dim_)
    lower = sp.csc_matrix((np.asarray(hessian.value_, dtype=float),
                           np.asarray(hessian.index_), np.asarray(hessian.start_)),
                          shape=(n, n))
    return (lower + sp.tril(lower, -1).T).tocsc()
