"""A solver's "unbounded" checked against the variables' bounds before it is believed.

Where every variable of the objective has bounds that keep the objective finite (Pyomo's
interval bounds on the expression, both well inside the solvers' infinity of 1e20), no
point can make it unbounded: such a verdict is the solver's fault (SCIP once took a
heuristic's solution with an invalid objective of 1e99 as the best ever, and ended
"unbounded" on a 0/1 knapsack). It is raised as a SolverError rather than returned.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pyomo.environ as pyo
from pyomo.contrib.fbbt.fbbt import compute_bounds_on_expr
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.errors import SolverError
from coplug.plugins.modeldata import SOLVER_INFINITY  # a bound past it proves nothing
from coplug.plugins.results import Result, Status

_SOLVER_NAMES = {"scip": "SCIP", "highs": "HiGHS"}


@contextmanager
def solver_bounds(variables: Iterable[Any]) -> Iterator[None]:
    """Within the block the variables' bounds at or past SOLVER_INFINITY are none, as the
    solvers read them (min 1e-5 x with x >= -1e20 is unbounded to both, bounded at -1e15 to
    Pyomo's interval arithmetic); put back after."""
    changed = []  # (var, its lower and upper bound as given: numbers or Params)
    for var in variables:
        low, high = _past_infinity(var)
        if low or high:
            changed.append((var, var.lower, var.upper))
            if low:
                var.lower = None
            if high:
                var.upper = None
    try:
        yield
    finally:
        for var, lower, upper in changed:
            var.lower, var.upper = lower, upper


def _past_infinity(var: Any) -> tuple[bool, bool]:
    """Whether `var`'s lower and upper bounds (its domain's included) lie at or past
    SOLVER_INFINITY."""
    lb, ub = var.lb, var.ub
    return lb is not None and lb <= -SOLVER_INFINITY, ub is not None and ub >= SOLVER_INFINITY


def check_unbounded_verdict(model: pyo.Block, result: Result, solver: str) -> Result:
    """`result`, unless it says unbounded where `model`'s objective is bounded over its
    variables' bounds: then a SolverError naming the bound."""
    if result.status is not Status.UNBOUNDED:
        return result
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    if objective is None:
        return result
    variables = list(identify_variables(objective.expr, include_fixed=False))
    try:
        with solver_bounds(variables):
            if any(any(_past_infinity(var)) for var in variables):
                return result  # a domain's bound past the solvers' infinity: no evidence
            lower, upper = compute_bounds_on_expr(objective.expr)
    except Exception:  # an expression fbbt cannot bound: no evidence either way
        return result
    side = upper if objective.sense == pyo.maximize else lower
    if side is None or not math.isfinite(side) or abs(side) >= SOLVER_INFINITY:
        return result
    word = "at most" if objective.sense == pyo.maximize else "at least"
    solver = _SOLVER_NAMES.get(solver.lower(), solver)
    raise SolverError(f"{solver} reported the model unbounded, but its objective "
                      f"{objective.name!r} is {word} {side:g} over its variables' bounds: "
                      f"the verdict is {solver}'s fault (try other settings or the other "
                      "solver)")
