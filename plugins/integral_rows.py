"""All-integer rows whose sides are too large for SCIP's relative feasibility tolerance.

SCIP accepts a row when (activity - side) / max(|activity|, |side|, 1) <= numerics/feastol
(1e-6 by default), so a knapsack row with a capacity of 2e6 let a packing 1 over it pass
and the answer came back "optimal". A row whose variables are all integer and whose
coefficients and constant are whole numbers has a whole-number activity at every integral
point, so it can be judged exactly: `tightened_feastol` lowers SCIP's tolerance until an
overshoot of 0.1 is refused on every such row (not below 1e-9: SoPlex will not go under
1e-10 without GMP), and `violations` checks the loaded solution against the rows with an
absolute tolerance, which catches what a tolerance at that floor still lets through.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pyomo.environ as pyo

from coplug.plugins.linear_terms import linear_terms
from coplug.plugins.modeldata import SOLVER_INFINITY

# The smallest overshoot an integral row must refuse: a whole-number activity over a
# whole-number side is over by at least 1, over a fractional side by its fraction.
STEP = 0.1
# The lowest numerics/feastol set on the user's behalf; SoPlex (SCIP's LP solver) clamps
# anything under 1e-10 and says so on stdout.
FEASTOL_FLOOR = 1e-9
# A whole-number activity beyond its side by more than this is a violation.
ABS_TOL = 1e-6


class IntegralRow(NamedTuple):
    """lower <= constant + coefs @ variables <= upper, every variable integer and every
    coefficient (and the constant) a whole number."""

    name: str
    variables: Sequence[Any]
    coefs: np.ndarray
    constant: float
    lower: float | None
    upper: float | None


def integral_rows(model: pyo.Block, feastol: float) -> list[IntegralRow]:
    """The active all-integer linear rows on which `feastol` (relative) admits an overshoot
    of STEP or more, i.e. with a side of at least STEP / feastol. Sides are read first, so a
    model without large sides costs one pass over its constraints."""
    threshold = STEP / feastol
    rows = []
    for con in model.component_data_objects(pyo.Constraint, active=True):
        lower, upper = _side(con.lower), _side(con.upper)
        if max(abs(lower or 0.0), abs(upper or 0.0)) < threshold:
            continue
        row = _integral_row(con.name, con.body, lower, upper)
        if row is not None:
            rows.append(row)
    return rows


def tightened_feastol(rows: Sequence[IntegralRow], feastol: float) -> float:
    """The feastol that refuses an overshoot of STEP on every row (at least FEASTOL_FLOOR,
    at most `feastol`)."""
    largest = max((_largest_side(row) for row in rows), default=0.0)
    if largest <= 0.0:
        return feastol
    return min(feastol, max(FEASTOL_FLOOR, STEP / largest))


def violations(rows: Sequence[IntegralRow]) -> dict[str, float]:
    """Row name -> amount by which the variables' current values violate it, for every row
    they violate by more than ABS_TOL; rows with a variable off a whole number are skipped
    (no exact verdict there)."""
    found = {}
    for row in rows:
        values = np.array([_value(var) for var in row.variables], dtype=float)
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            continue
        activity = float(row.coefs @ values) + row.constant
        over = max(activity - row.upper if row.upper is not None else 0.0,
                   row.lower - activity if row.lower is not None else 0.0)
        if over > ABS_TOL:
            found[row.name] = over
    return found


def _integral_row(name: str, body: Any, lower: float | None,
                  upper: float | None) -> IntegralRow | None:
    """The row as an IntegralRow, or None when it is nonlinear, has a continuous variable or
    a fractional coefficient or constant."""
    terms = linear_terms(body)
    if terms is None or terms.coefs.size == 0:
        return None
    if not float(terms.constant).is_integer() or np.any(terms.coefs != np.round(terms.coefs)):
        return None
    if not all(var.is_integer() for var in terms.variables):
        return None
    return IntegralRow(name, terms.variables, terms.coefs, float(terms.constant), lower, upper)


def _side(expr: Any) -> float | None:
    """A constraint side as a float, None when absent or infinite to the solvers."""
    if expr is None:
        return None
    number = float(pyo.value(expr))
    return number if abs(number) < SOLVER_INFINITY else None


def _largest_side(row: IntegralRow) -> float:
    """max(|lower|, |upper|) over the sides the row has."""
    return max(abs(row.lower or 0.0), abs(row.upper or 0.0))


def _value(var: Any) -> float:
    """The variable's current value (NaN when it has none)."""
    return math.nan if var.value is None else float(var.value)
