"""SCIP's "infeasible" on a nonlinear model, checked at three plain points before it is
believed.

SCIP called `max 1/x` over x in [1e-10, 4] infeasible (PySCIPOpt alone the same), and so
the same model with the reciprocal in a row; x = 2 meets every row. Where SCIP says
infeasible and the model has a nonlinear row or objective, the model is evaluated at the
values its variables hold, at the middle of their bounds (whole for integers; 0, or a
finite side, where a bound is missing) and at the value of their bounds nearest 0: a
point meeting every active row, bound and integrality (`infeasibilities` within FEASTOL,
relative to the sides; an integer within 1e-6 of a whole number taken as that number)
refutes the verdict, and the result becomes `feasible` at that point, with no bound and a
warning. A point that misses is no evidence either way, and the verdict stands.
"""

from __future__ import annotations

import math

import pyomo.environ as pyo
from pyomo.core.base.var import VarData
from pyomo.util.vars_from_expressions import get_vars_from_components

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.feasibility import infeasibilities
from coplug.plugins.outer_variables import put_back
from coplug.plugins.results import Result, Status
from coplug.plugins.varmap import snapped

# How far, relative to a side of 1 or more, a refuting point may miss a row: far inside
# SCIP's own 1e-6, so a model infeasible by a hair (x**2 <= -1e-9) keeps its verdict.
FEASTOL = 1e-9


def check_infeasible_verdict(model: pyo.Block, result: Result) -> None:
    """Turn SCIP's `infeasible` on a nonlinear `model` into `feasible` at a plain point that
    meets every row (module docstring); the point is left loaded. Anything else is left."""
    if result.status is not Status.INFEASIBLE or not _nonlinear(model):
        return
    variables = list(get_vars_from_components(model, (pyo.Constraint, pyo.Objective),
                                              active=True, include_fixed=False,
                                              descend_into=True))
    before = [(var, var.value) for var in variables]
    candidates = [[var.value for var in variables], [_middle(var) for var in variables],
                  [_nearest_zero(var) for var in variables]]
    for point in candidates:
        if any(value is None for value in point):
            continue
        for var, value in zip(variables, point, strict=True):
            var.set_value(snapped(var, value), skip_validation=True)
        value = _objective_value(model)
        if value is not None and not infeasibilities(model, FEASTOL):
            _refuted(result, value)
            return
    put_back(before)


def _nonlinear(model: pyo.Block) -> bool:
    """Whether an active row or objective of `model` is neither constant nor linear."""
    parts = (pyo.Constraint, pyo.Objective)
    return any(data.expr.polynomial_degree() not in (0, 1)
               for part in parts
               for data in model.component_data_objects(part, active=True, descend_into=True))


def _middle(var: VarData) -> float:
    """The middle of `var`'s bounds (a missing side: the other one, or 0), whole for an
    integer variable."""
    lower, upper = var.bounds
    if lower is not None and upper is not None:
        middle = 0.5 * (lower + upper)
    else:
        middle = lower if lower is not None else upper if upper is not None else 0.0
    return float(round(middle) if var.is_integer() else middle)


def _nearest_zero(var: VarData) -> float:
    """The value of `var`'s bounds nearest 0 (0 itself where they hold it; whole for an
    integer variable, rounded inward)."""
    lower, upper = var.bounds
    value = max(lower, 0.0) if lower is not None else 0.0
    value = min(upper, value) if upper is not None else value
    if var.is_integer():
        value = math.ceil(value) if value > 0 else math.floor(value) if value < 0 else 0.0
    return float(value)


def _objective_value(model: pyo.Block) -> float | None:
    """The active objective's value at the values loaded (0.0 without an objective); None
    where it is not defined there: SCIP takes a nonlinear objective's domain as a row
    (`log(x[0] - 10)` over x[0] in [-5, 5] is rightly infeasible)."""
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    if objective is None:
        return 0.0
    try:
        value = float(pyo.value(objective.expr))
    except (ArithmeticError, ValueError, TypeError):
        return None
    return value if math.isfinite(value) else None


def _refuted(result: Result, value: float) -> None:
    """SCIP's infeasible met a point that meets every row: `feasible` there, no bound."""
    warn_at_caller("SCIP called the model infeasible, but a plain point (the variables' "
                   "values, or the middle of their bounds, or their values nearest 0) meets "
                   "every row; that point is "
                   "loaded as feasible, with no bound (SCIP misjudges some nonlinear models, "
                   "such as 1/x near a bound of 1e-10)")
    result.status = Status.FEASIBLE
    result.has_solution = True
    result.objective = value
    result.bound = None
    result.extra["infeasible_refuted"] = True
