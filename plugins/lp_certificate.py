"""How far a primal point and row duals of an LP are from proving each other optimal.

In minimization form, with reduced costs r = g - A'y (g the objective's gradient: its costs
for an LP, its gradient at the point for a convex QP), weak duality says the objective at
any feasible point is at least the dual bound, and the two meet exactly when every row dual
sits on its row's active side and every reduced cost on its variable's active bound. The
gap is measured term by term, |y_i| times the row's distance from the side its dual's sign
selects plus |r_j| times the variable's distance from the bound its reduced cost's sign
selects, so it is never negative and names the row or variable that contributes most.
Duals of the wrong sign for a row without that side are dropped first (any sign-feasible y
still gives a valid bound), and a reduced cost that points at an infinite bound makes the
gap infinite.

Per-entry tolerances miss what this catches: HiGHS called a point optimal whose duals held
a wrong-signed 4e-9 on a row with a side of 1e10, worth 54 in the objective (27%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from coplug.plugins.value_equality import ValueEquality

# A pair certifies optimality when the gap is at most this fraction of the objective's
# scale (|g|.|x| plus |A'||y|.|x|; for a QP at least |c'x| + |x'Hx|, since g vanishes at an
# interior optimum: an objective of -8773 was judged on a scale of 1, while the size of the
# gradient's terms, |c| + |H||x|, let an ill-conditioned QP 163 off its optimum through).
GAP_TOL = 1e-6
# A reduced cost this small relative to the terms that sum to it counts as zero (the
# solvers' own dual tolerances are 1e-7 absolute) unless its column sits on the bound it
# prices (within ON_SIDE, relative), where any such price is complementary: with costs
# near 1e9, a reduced cost of 500 at a column's lower bound is real (raising the bound to 1
# costs 500) and was loaded as 0. Small duals are kept: with rows scaled apart, a dual of
# 1e-5 on a row of coefficients near 1e7 carries a reduced cost of 70. On a column the
# objective is linear in, such a zero still counts what the column could gain, |r| times
# its distance to the bound its sign selects, unless r is round-off (NOISE_TOL of its
# terms, with no floor of 1): a cost of 5e-8 on a column 1e12 from its bound, priced 0 by
# SCIP's duals, had certified an optimum 5e4 short. Towards no bound, where any r makes the
# gap infinite, only an r that is not cancellation counts (OPEN_TOL of its terms): SCIP's
# duals on ill-conditioned rows leave free columns residuals of 1e-6 of their terms.
ZERO_TOL = 1e-6
NOISE_TOL = 1e-9
OPEN_TOL = 1e-3
ON_SIDE = 1e-9


@dataclass(eq=False)
class Certificate(ValueEquality):
    """The sign-feasible duals, reduced costs and gap of a primal point (minimization form)."""

    duals: np.ndarray
    reduced: np.ndarray
    gap: float
    scale: float
    worst: tuple[str, int]  # ("row" | "column", index) contributing most to the gap

    @property
    def holds(self) -> bool:
        """Whether the gap is small enough for the pair to prove the point optimal."""
        return bool(self.gap <= GAP_TOL * self.scale)


def transposes(matrix: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """A' and |A|' as CSR, for callers that certify many points of one matrix."""
    return matrix.T.tocsr(), abs(matrix).T.tocsr()


def certify(gradient: np.ndarray, x: np.ndarray, matrix: sp.csr_matrix,
            row_lower: np.ndarray, row_upper: np.ndarray, col_lower: np.ndarray,
            col_upper: np.ndarray, duals: np.ndarray,
            transposed: tuple[sp.csr_matrix, sp.csr_matrix] | None = None,
            quadratic: tuple[np.ndarray, sp.spmatrix] | None = None) -> Certificate:
    """The certificate of `x` with row `duals` (minimization form: a dual > 0 prices the
    lower side, < 0 the upper; infinite sides and bounds are +-inf). `transposed` is
    `transposes(matrix)` when the caller keeps it.

    For a convex QP, `quadratic` is (the size of the terms summing to each gradient entry,
    |c| + |H||x|; the Hessian H, minimization form). Gradient entries within ZERO_TOL of
    their terms' size count as zeros, with what moving those columns could still gain added
    to the gap: the lesser of r' H^-1 r / 2 over them together (the quadratic's own
    minimum) and the sum of |r| times each one's distance to the bound it moves towards
    (convexity's linear bound). A free column's gradient of 1.3e-6 left from terms near 25
    made HiGHS's optimum's gap infinite; a gradient of 150 from terms near 3e8 is 11,250 of
    gap; two coupled columns each with little gain alone had 2e6 together; a column 1e-7
    from its bound gains 1e-10, and one 1000 from it little more than its quadratic."""
    y = np.where(np.isfinite(duals), duals, np.nan)
    y = np.where(((y > 0) & np.isneginf(row_lower)) | ((y < 0) & np.isposinf(row_upper)), 0.0, y)
    activity = matrix @ x
    matrix_t, abs_t = transposed if transposed is not None else (matrix.T, abs(matrix).T)
    raw = gradient - matrix_t @ y
    terms = abs_t @ np.abs(y)
    small = np.abs(raw) <= ZERO_TOL * np.maximum(1.0, np.abs(gradient) + terms)
    distance = _distance(x, raw, col_lower, col_upper)
    on_side = distance <= ON_SIDE * np.maximum(1.0, np.abs(x))
    gain = np.zeros_like(raw)
    linear = _uncurved(quadratic[1], len(raw)) if quadratic is not None else True
    if np.any(linear):  # small reduced costs of linear columns: what those could gain
        floor = np.where(np.isinf(distance), OPEN_TOL, NOISE_TOL)
        kept = linear & small & ~on_side & (np.abs(raw) > floor * (np.abs(gradient) + terms))
        gain[kept] = np.abs(raw[kept]) * distance[kept]
    if quadratic is not None:  # cancelled terms of a QP's gradient: zeros, with their gain
        size, hessian = quadratic
        cancelled = ~small & ~on_side & (
            np.abs(raw) <= ZERO_TOL * np.maximum(1.0, size + terms))
        linear = float(np.sum(np.abs(raw[cancelled]) * _distance(
            x[cancelled], raw[cancelled], col_lower[cancelled], col_upper[cancelled])))
        together = min(linear, _joint_gain(hessian, raw, np.flatnonzero(cancelled)))
        if np.isfinite(together):
            small = small | cancelled
            if cancelled.any():
                gain[np.flatnonzero(cancelled)[np.argmax(np.abs(raw[cancelled]))]] = together
    reduced = np.where(small & ~on_side, 0.0, raw)
    row_terms = np.abs(y) * _distance(activity, y, row_lower, row_upper)
    col_terms = np.abs(reduced) * _distance(x, reduced, col_lower, col_upper) + gain
    row_terms = np.where(np.isnan(row_terms), np.inf, row_terms)
    col_terms = np.where(np.isnan(col_terms), np.inf, col_terms)
    worst_row = int(np.argmax(row_terms)) if len(row_terms) else -1
    worst_col = int(np.argmax(col_terms)) if len(col_terms) else -1
    row_max = row_terms[worst_row] if worst_row >= 0 else 0.0
    col_max = col_terms[worst_col] if worst_col >= 0 else 0.0
    worst = ("row", worst_row) if row_max >= col_max else ("column", worst_col)
    scale = max(1.0, float(np.abs(gradient) @ np.abs(x) + terms @ np.abs(x)))
    if quadratic is not None:  # the gradient vanishes at an interior optimum: the objective's
        curvature = float(x @ (quadratic[1] @ x))  # own terms, c'x and x'Hx, set the scale
        scale = max(scale, abs(float(gradient @ x) - curvature) + abs(curvature))
    return Certificate(duals=np.nan_to_num(y), reduced=reduced,
                       gap=float(row_terms.sum() + col_terms.sum()), scale=scale, worst=worst)


# Past this many cancelled gradient entries their joint quadratic gain is not computed (a
# dense solve of that size: 0.1 s at 500, 14 s at 2000); only their linear bound counts.
MAX_CANCELLED = 500


def _joint_gain(hessian: sp.spmatrix, raw: np.ndarray, columns: np.ndarray) -> float:
    """r' H^-1 r / 2 over `columns` (H restricted to them): what moving those columns
    together along the Newton step would still gain; inf where r is not in H's range
    there (a linear direction: no finite gain) or the columns are too many."""
    if not len(columns):
        return 0.0
    if len(columns) > MAX_CANCELLED:
        return math.inf
    block = sp.csr_matrix(hessian)[columns][:, columns].toarray()
    residual = raw[columns]
    step = np.linalg.lstsq(block, residual, rcond=None)[0]
    miss = np.abs(block @ step - residual).max()
    if not miss <= 1e-9 * max(1.0, float(np.abs(residual).max())):
        return math.inf
    value = 0.5 * float(residual @ step)
    return value if value >= 0.0 else math.inf  # not convex there


def _uncurved(hessian: sp.spmatrix, size: int) -> np.ndarray:
    """Whether each column is absent from the Hessian (the objective linear in it)."""
    return np.asarray(abs(sp.csr_matrix(hessian, shape=(size, size))).sum(axis=1)
                      ).ravel() == 0


def _distance(value: np.ndarray, price: np.ndarray, lower: np.ndarray,
              upper: np.ndarray) -> np.ndarray:
    """Distance of each value from the side its price selects (lower for > 0, upper for
    < 0, none for 0): inf where that side is infinite."""
    with np.errstate(invalid="ignore"):
        side = np.where(price > 0, lower, np.where(price < 0, upper, value))
        return np.abs(value - side)
