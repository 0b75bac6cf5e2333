"""Check the point loaded in a Pyomo model against the model itself: each active constraint,
variable bound and integrality it misses, by name and amount. Pyomo's own
`log_infeasible_constraints` only logs; a pooled solution, a MIP start or a heuristic's
point wants an answer a program can act on."""

from __future__ import annotations

import math
import numbers
from typing import Any

import pyomo.environ as pyo
from pyomo.common.collections import ComponentSet
from pyomo.core.base.block import BlockData
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.components import check_checkable
from coplug.plugins.errors import InputError

# Integer values within this of a whole number count as integral (the solvers' own default).
INTEGRALITY_TOL = 1e-6


def infeasibilities(model: pyo.Block, tol: float = 1e-6) -> dict[str, float]:
    """How far the values loaded in `model` miss each active constraint (SOS constraints
    included), and the bounds and integrality of each variable a solve sees (those of active
    blocks, and any an active constraint or objective uses), by the component's name; only
    misses beyond `tol` relative to max(1, |side|) count (integrality: beyond
    INTEGRALITY_TOL; an SOS: its members' |values| outside the run it allows). A
    constraint whose body cannot be evaluated (a variable without a value) or is NaN misses
    by inf, as does a NaN side and a value that is not finite. A component it cannot check
    (a raw disjunction, a logical constraint) is refused by name."""
    if not isinstance(model, BlockData):
        raise InputError(f"infeasibilities() needs a Pyomo model (a Block), got {model!r}")
    if not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not 0 <= tol < math.inf:
        raise InputError(f"tol must be a finite number >= 0 (inf would pass any point), got "
                         f"{tol!r}")
    check_checkable(model)
    missed: dict[str, float] = {}
    variables = ComponentSet(model.component_data_objects(pyo.Var, active=True,
                                                          descend_into=True))
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        amount = _row_miss(con, tol)
        if amount:
            _note(missed, con.name, amount)
        variables.update(identify_variables(con.body, include_fixed=False))
    for sos in model.component_data_objects(pyo.SOSConstraint, active=True,
                                            descend_into=True):
        amount = _sos_miss(sos, tol)
        if amount:
            _note(missed, sos.name, amount)
        variables.update(var for var, _ in sos.get_items())
    for obj in model.component_data_objects(pyo.Objective, active=True, descend_into=True):
        variables.update(identify_variables(obj.expr, include_fixed=False))
    for var in variables:  # a deactivated block's own only where a row or objective uses them
        if var.value is None:
            continue
        amount = _bound_miss(var, tol)
        if amount:
            _note(missed, var.name, amount)
    return missed


def _note(missed: dict[str, float], name: str, amount: float) -> None:
    """Record a miss under `name`, keeping the larger of two components that print alike
    (c[None] and c['None'] share a name: the second's smaller miss had replaced the first's)."""
    missed[name] = max(missed.get(name, 0.0), amount)


def _row_miss(con: pyo.Constraint, tol: float) -> float:
    """How far the constraint's body lies outside its sides (0 within tolerance)."""
    try:
        body = float(pyo.value(con.body))
        lower, upper = pyo.value(con.lower), pyo.value(con.upper)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        return math.inf
    if math.isnan(body) or any(side is not None and math.isnan(side) for side in (lower, upper)):
        return math.inf
    return max(_below(body, lower, tol), _above(body, upper, tol))


def _sos_miss(sos: pyo.SOSConstraint, tol: float) -> float:
    """How much of the members' total |value| lies outside the best run of `level`
    neighbours (in weight order) that an SOS of that level allows to be nonzero (a member
    within `tol` of 0 counts as 0): 0 when the point meets it, inf where a member has no
    value."""
    values = [var.value for var, _ in sorted(sos.get_items(), key=lambda item: item[1])]
    if any(value is None for value in values):
        return math.inf
    sizes = [abs(float(value)) for value in values]
    if not all(math.isfinite(size) for size in sizes):
        return math.inf
    sizes = [size if size > tol else 0.0 for size in sizes]  # zero within tol, as SCIP's
    window = max(1, int(sos.level))
    kept = max((sum(sizes[i:i + window]) for i in range(max(1, len(sizes) - window + 1))),
               default=0.0)
    miss = sum(sizes) - kept
    return miss if miss > tol else 0.0


def _bound_miss(var: pyo.Var, tol: float) -> float:
    """How far the variable lies outside its bounds or off a whole number (0 within
    tolerance); inf for a value that is not a finite number."""
    try:
        value = float(var.value)
    except (TypeError, ValueError):
        raise InputError(f"variable {var.name!r} holds {var.value!r}, not a number") from None
    if not math.isfinite(value):
        return math.inf
    miss = max(_below(value, var.lb, tol), _above(value, var.ub, tol))
    if var.is_integer():
        off = abs(value - round(value))
        if off > INTEGRALITY_TOL:
            miss = max(miss, off)
    elif not var.is_continuous():  # a stepped or finite domain: RangeSet(0, 10, 2), {1, 3, 7}
        miss = max(miss, _off_domain(var.domain, value))
    return miss


def _off_domain(domain: Any, value: float) -> float:
    """How far `value` lies from the nearest member of a discrete domain (0 when within
    INTEGRALITY_TOL of one): bounds alone passed 3 in RangeSet(0, 10, 2)."""
    nearest = math.inf
    for part in domain.ranges():
        start, end, step = part.start, part.end, part.step
        if not step:  # a continuous stretch
            low, high = min(start, end), max(start, end)
            nearest = min(nearest, max(low - value, value - high, 0.0))
            continue
        last = math.inf if math.isinf(end) else math.floor((end - start) / step + 1e-9)
        k = min(max(round((value - start) / step), 0), last)  # the nearest step in the range
        nearest = min(nearest, abs(value - (start + k * step)))
    return 0.0 if nearest <= INTEGRALITY_TOL else nearest


def _below(value: float, side: float | None, tol: float) -> float:
    """How far `value` lies below `side` beyond the tolerance (0 when it does not)."""
    if side is None or not value < side - tol * max(1.0, abs(side)):
        return 0.0
    return side - value


def _above(value: float, side: float | None, tol: float) -> float:
    """How far `value` lies above `side` beyond the tolerance (0 when it does not)."""
    if side is None or not value > side + tol * max(1.0, abs(side)):
        return 0.0
    return value - side
