"""A first-order check of a solver's optimum of a continuous QP (quadratic objective, linear
rows): at an optimum no direction that keeps the active rows and bounds lowers the
objective, whether or not the QP is convex. SCIP called `min (0.01 x - y)**2 + 0.01 x` over
free x, y optimal at x = y = 0, where the gradient is (0.01, 0): its point is no local
optimum, and the model is unbounded. The check is one LP over the directions d in [-1, 1]^n
that the active rows and bounds allow, min g'd; it only says where to look
(`coplug.plugins.nonlinear_optimum` then searches boxes around the point). `improving_ray`
is the same kind of fact for a convex QP as a whole: whether a direction of H's null space
lowers it without bound, which decides HiGHS's "unbounded" (and its unproven "optimal")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.optimize
import scipy.sparse as sp

from coplug.plugins.duals import min_form, qp_gradient, read_qp

# A direction lowering the objective faster than this, relative to the size of the
# gradient's terms along it (no floor: a linear term of 1e-3 fell at 1e-3; a cost of 3000 on
# a column at its bound hid a fall of 2 on two others), refutes the point; loose,
# since SCIP's outer approximation leaves a QP's point about sqrt(1e-6) from the optimum (a
# constrained QP's fell at 3e-5 of 8). Rows and bounds within ACTIVE_TOL (relative to
# max(1, |side|): SCIP's feasibility tolerance) of a side count as active.
DESCENT_TOL = 1e-3
ACTIVE_TOL = 1e-6


def descent(model: pyo.Block, value: Callable[[Any], float]) -> str | None:
    """How the objective of continuous QP `model` falls from the point `value` gives (a
    value per Pyomo variable), or None: where the point is first-order stationary, and
    where the model is no continuous QP (a nonlinear row, an integer, no objective)."""
    if next(model.component_data_objects(pyo.Objective, active=True), None) is None:
        return None
    lp, _ = read_qp(model)
    if lp is None or not lp.quadratic:
        return None
    form = min_form(lp)
    x = np.array([value(var) for var in form.variables], dtype=float)
    if not np.isfinite(x).all():
        return None
    gradient, size, _ = qp_gradient(lp, form, x)
    steepest = _steepest_fall(gradient, x, form)
    if steepest is None:
        return None
    fall, direction = steepest
    if fall >= -DESCENT_TOL * float(size @ np.abs(direction)) or fall >= 0.0:
        return None
    return (f"the objective falls at rate {-fall:.3g} along a direction the active rows and "
            "bounds allow, so the point is no local optimum")


def _steepest_fall(gradient: np.ndarray, x: np.ndarray, form: Any
                   ) -> tuple[float, np.ndarray] | None:
    """min g'd over d in [-1, 1]^n keeping the active rows and bounds, and that d (None where
    the LP solver fails)."""
    matrix = sp.csr_matrix(form.matrix)
    activity = matrix @ x
    at_lower = _near(activity, form.lower)
    at_upper = _near(activity, form.upper)
    rows_le = sp.vstack([matrix[at_upper], -matrix[at_lower]]).tocsr()
    lower = np.where(_near(x, form.col_lower), 0.0, -1.0)
    upper = np.where(_near(x, form.col_upper), 0.0, 1.0)
    found = scipy.optimize.linprog(
        gradient, A_ub=rows_le if rows_le.shape[0] else None,
        b_ub=np.zeros(rows_le.shape[0]) if rows_le.shape[0] else None,
        bounds=np.column_stack([lower, np.maximum(lower, upper)]), method="highs")
    return (float(found.fun), found.x) if found.status == 0 else None


def _near(values: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """Where each value lies within ACTIVE_TOL of its (finite) side."""
    finite = np.isfinite(sides)
    gap = np.abs(values - np.where(finite, sides, 0.0))
    return finite & (gap <= ACTIVE_TOL * np.maximum(1.0, np.abs(np.where(finite, sides, 0.0))))


# A ray must lower the objective by more than this share of its costs' terms along it
# (|c|.|d|: a cost of 1e9 on a column at its bound hid a fall of 0.2), within the null space
# of H: the eigenvectors whose eigenvalues are within NULL_TOL of the largest in size
# (rounding leaves a true 0 near 1e-16 of it; 1e-10 of it still bounds the QP, at -2.5e5
# for 1e4 x**2 + 1e-6 y**2 - y).
RAY_TOL = 1e-9
NULL_TOL = 1e-13
# Past this many columns the null space is not computed (a dense eigendecomposition).
RAY_COLUMNS = 3000


def improving_ray(costs: np.ndarray, hessian: sp.spmatrix, matrix: sp.spmatrix,
                  row_lower: np.ndarray, row_upper: np.ndarray, col_lower: np.ndarray,
                  col_upper: np.ndarray) -> bool | None:
    """Whether the convex QP min c'x + x'Hx/2 over its rows and bounds has a direction d in
    [-1, 1]^n that its rows and bounds allow for ever (the recession cone) with H d = 0
    and c'd < 0, along which it falls without bound; None where it cannot say (past
    RAY_COLUMNS columns, or the LP solver fails). HiGHS called a bounded QP unbounded whose
    one flat direction a bound blocks."""
    n = len(costs)
    if n > RAY_COLUMNS:
        return None
    eigenvalues, vectors = np.linalg.eigh(sp.csr_matrix(hessian).toarray())
    size = float(np.abs(eigenvalues).max()) if n else 0.0
    curved = vectors[:, np.abs(eigenvalues) > NULL_TOL * size] if size > 0 else vectors[:, :0]
    if curved.shape[1] == n:
        return False  # strictly convex: no flat direction at all
    a = sp.csr_matrix(matrix)
    rows = sp.vstack([a[np.isfinite(row_upper)], -a[np.isfinite(row_lower)]]).tocsr()
    lower = np.where(np.isfinite(col_lower), 0.0, -1.0)
    upper = np.where(np.isfinite(col_upper), 0.0, 1.0)
    found = scipy.optimize.linprog(
        costs, A_ub=rows if rows.shape[0] else None,
        b_ub=np.zeros(rows.shape[0]) if rows.shape[0] else None,
        A_eq=curved.T if curved.shape[1] else None,
        b_eq=np.zeros(curved.shape[1]) if curved.shape[1] else None,
        bounds=np.column_stack([lower, np.maximum(lower, upper)]), method="highs")
    if found.status != 0:
        return None
    return bool(found.fun < 0.0 and found.fun < -RAY_TOL * float(np.abs(costs) @ np.abs(found.x)))
