"""A solver's "unbounded" checked against the variables' bounds before it is believed.

Where every variable of the objective has bounds that keep the objective finite (Pyomo's
interval bounds on the expression, both well inside the solvers' infinity of 1e20), no
point can make it unbounded: such a verdict is the solver's fault (SCIP once took a
heuristic's solution with an invalid objective of 1e99 as the best ever, and ended
"unbounded" on a 0/1 knapsack). It is raised as a SolverError rather than returned.
"""

from __future__ import annotations

import math
from typing import Any

import pyomo.environ as pyo
from pyomo.contrib.fbbt.fbbt import compute_bounds_on_expr
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.errors import SolverError
from coplug.plugins.results import Result, Status

# Objective values from here on are infinite to SCIP and HiGHS: a bound past it proves
# nothing against their "unbounded".
SOLVER_INFINITY = 1e20

_SOLVER_NAMES = {"scip": "SCIP", "highs": "HiGHS"}


def _infinite_to_solvers(var: Any) -> bool:
    """Whether a bound of `var` lies at or past SOLVER_INFINITY: the solvers read it as
    none, where Pyomo's interval arithmetic takes it as a number (min 1e-5 x with x >=
    -1e20 is unbounded to both solvers, bounded at -1e15 to fbbt)."""
    return any(side is not None and abs(side) >= SOLVER_INFINITY for side in var.bounds)


def check_unbounded_verdict(model: pyo.Block, result: Result, solver: str) -> Result:
    """`result`, unless it says unbounded where `model`'s objective is bounded over its
    variables' bounds: then a SolverError naming the bound."""
    if result.status is not Status.UNBOUNDED:
        return result
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    if objective is None or any(_infinite_to_solvers(var) for var in
                                identify_variables(objective.expr, include_fixed=False)):
        return result
    try:
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
