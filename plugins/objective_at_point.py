"""SCIP's objective value checked against the model's own objective at the point loaded.

SCIP drops coefficients of 1e-9 or less and holds a nonlinear objective (a variable bounded
by it, its epigraph) to a tolerance relative to the terms' size, so its objective can be a
value its point does not have. After a SCIP solve the model's objective is evaluated at the
loaded point and, where the two differ by more than round-off allows, the point's value is
reported (module function `check_objective_at_point`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.var import VarData
from pyomo.core.expr.numeric_expr import SumExpression

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.linear_terms import linear_terms
from coplug.plugins.results import Result, Status
from coplug.plugins.varmap import INTEGER_SNAP

# SCIP's objective and the model's objective at its point may differ by this much,
# relative, before the point's value is reported (`check_objective_at_point`).
OBJECTIVE_RTOL = 1e-6
SUM_ROUNDOFF = 1e-12  # of the sum of |c_i x_i|: a linear objective's float rounding
OBJECTIVE_ATOL = 1e-5  # 10x SCIP's feasibility tolerance on a nonlinear objective's row


def check_objective_at_point(model: pyo.Block, result: Result, nonlinear: bool,
                             raw: Callable[[VarData], float | None] | None = None) -> None:
    """Compare SCIP's objective with the model's objective at the point loaded; where they
    differ by more than OBJECTIVE_RTOL (plus, for a linear one, float rounding of its sum),
    the result takes the point's value and an "optimal" becomes "feasible", with a warning
    (and SCIP's bound, where the point's value passes it, becomes unknown: a dropped term
    makes it no bound). A nonlinear objective reaches SCIP as a variable bounded by it, held
    to a tolerance relative to its terms' size: with terms near 1e18 SCIP called -1e-8 optimal for
    `(x - 1e9)**2 + (y + 2e9)**2 + 5` at a point where it is 5.07; and SCIP drops a linear
    coefficient of 1e-9 (`y - x / 1e9` was "optimal" 0 at a point where it is 16.2).
    `raw(var)`: SCIP's value of an integer variable before it was made whole (None: not
    known), so the allowance for that rounding counts what it moved."""
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    if objective is None or result.objective is None:
        return
    try:
        value = pyo.value(objective.expr, exception=False)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        return
    if value is None or not math.isfinite(value):
        return
    value = float(value)
    slack = (_nonlinear_slack(objective.expr, value) if nonlinear
             else OBJECTIVE_RTOL * max(1.0, abs(value)) + _linear_slack(objective.expr, raw))
    if abs(value - result.objective) <= slack:
        return
    warn_at_caller(f"SCIP's objective {result.objective:g} is not the objective at its point "
                   f"({value:g}; SCIP drops coefficients of 1e-9 or less and holds a "
                   "nonlinear objective to a tolerance relative to its terms' size); the "
                   "point's value is reported"
                   + (", as feasible, not optimal" if result.status is Status.OPTIMAL else ""))
    result.extra["scip_objective"] = result.objective
    result.objective = value
    if result.status is Status.OPTIMAL:
        result.status = Status.FEASIBLE
    maximize = objective.sense == pyo.maximize
    if result.bound is not None and (value > result.bound + slack if maximize
                                     else value < result.bound - slack):
        result.bound = math.inf if maximize else -math.inf  # the point refutes SCIP's bound


def _nonlinear_slack(expr: Any, value: float) -> float:
    """How far a nonlinear objective at the loaded point may lie from SCIP's value: SCIP's
    own absolute tolerance on the epigraph row (OBJECTIVE_ATOL), and OBJECTIVE_RTOL of the
    sizes of the objective's terms as written (a sum of squares shifted by -50250.39 to an
    optimum near 0 is off by 6e-5 in float64; terms of 1e18 in SCIP's expanded form are no
    excuse: they are 5 as written)."""
    parts = expr.args if isinstance(expr, SumExpression) else (expr,)
    try:
        size = sum(abs(float(pyo.value(part))) for part in parts)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        size = abs(value)
    return OBJECTIVE_RTOL * max(1.0, abs(value), size) + OBJECTIVE_ATOL


def _linear_slack(expr: Any, raw: Callable[[VarData], float | None] | None = None) -> float:
    """How far a linear objective at the loaded point may lie from SCIP's own value: float
    rounding of its sum, and what making the integers whole moved it (`snapped`: 1e6 x -
    1e6 y at x, y 1e-7 off moves it by 0.2). Counted per variable where `raw` knows SCIP's
    value, else up to INTEGER_SNAP each: INTEGER_SNAP of every integer's coefficient hid
    SCIP's 'optimal' 0 at an exact 0/1 point worth 3 under costs of 1e19."""
    terms = linear_terms(expr)
    if terms is None:
        return math.inf
    coefs = np.abs(terms.coefs)
    values = np.abs([var.value or 0.0 for var in terms.variables])
    moved = np.array([_moved(var, raw) for var in terms.variables], dtype=float)
    return float(SUM_ROUNDOFF * (coefs @ values) + coefs @ moved)


def _moved(var: VarData, raw: Callable[[VarData], float | None] | None) -> float:
    """How far loading moved `var` from SCIP's value (0 for a continuous or fixed one)."""
    if var.fixed or not var.is_integer():
        return 0.0
    given = None if raw is None else raw(var)
    if given is None or not math.isfinite(given):
        return INTEGER_SNAP
    return abs(given - (var.value or 0.0))
