"""SCIP's objective for a Pyomo model: its linear terms in SCIP's own objective, the rest
bounded by the epigraph variable Pyomo's `scip_persistent` adds (`use_native_objective`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.plugins.modeldata import pyomo_logs_quiet


def use_native_objective(opt: Any, model: pyo.Block) -> Any | None:
    """Hand SCIP the objective's linear terms as its own objective, keeping Pyomo's
    epigraph variable for the nonlinear part (`objective_parts`); returns the expression
    that variable bounds (None where the objective is linear or absent).

    `scip_persistent` always minimizes an auxiliary variable bounded by the whole objective
    expression; that hides the objective coefficients from SCIP (and from plugins reading
    them) and weakens its bounding. Linear means linear once Params and fixed variables take
    their values (`cost * x` with a mutable Param, `price * q` with `price` fixed): Pyomo's
    expression walker would turn those into SCIP variables and a bilinear objective SCIP
    refuses.
    """
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    parts = objective_parts(objectives[0]) if objectives else ObjectiveParts([], None, 0.0)
    if parts is None:
        return objectives[0].expr  # the epigraph Pyomo built takes the objective as written
    scip = opt._solver_model
    if opt._obj_con is None:  # no active objective: Pyomo added no epigraph variable
        return None
    scip.delCons(opt._obj_con)
    opt._obj_con = None
    terms = [(coef, opt._pyomo_var_to_solver_var_map[var]) for coef, var in parts.linear]
    maximize = bool(objectives) and objectives[0].sense == pyo.maximize
    if parts.epigraph is None:
        scip.delVar(opt._obj_var)
        opt._obj_var = None
    else:
        bound = opt._expr_visitor.walk_expression(parts.epigraph)
        opt._obj_con = scip.addCons(opt._obj_var <= bound if maximize else opt._obj_var >= bound)
        terms.append((1.0, opt._obj_var))
    if terms:
        from pyscipopt import quicksum  # SCIP is optional until a SCIP model is built

        scip.setObjective(quicksum(coef * var for coef, var in terms),
                          sense="maximize" if maximize else "minimize")
    elif maximize:
        scip.setMaximize()
    scip.addObjoffset(parts.constant)
    return parts.epigraph


class ObjectiveParts(NamedTuple):
    """An objective as SCIP takes it: linear terms (coefficient, Pyomo variable) in its own
    objective, the expression its epigraph variable bounds (None: the objective is linear),
    and the constant offset (0 beside an epigraph, whose row holds the constant)."""

    linear: list[tuple[float, Any]]
    epigraph: Any | None
    constant: float


def objective_parts(objective: Any) -> ObjectiveParts | None:
    """`objective` split for SCIP; None where Pyomo's epigraph row takes it as written: no
    linear term would leave the row, or Pyomo cannot take it apart (`0*x` in a power, x
    without a value: its walk evaluates it). Only the linear terms of variables outside
    the nonlinear part leave Pyomo's epigraph row: with them inside, SCIP branched on the
    free epigraph variable without end (`min 3 y + 2 x**2 + 7`, y free, ran past any time
    limit; it is unbounded at once this way). A linear term of a variable in the nonlinear
    part stays with it (out of the row, SCIP ran to its time limit on the unbounded
    `min (x - y)**2 + x`, which it otherwise ends at a point the checks of
    `coplug.plugins.nonlinear_optimum` see through), and so does the constant (out of it,
    SCIP valued `(x - 1e8)**2 + (y + 3e7)**2 + 5` at 4.99999999)."""
    try:
        with pyomo_logs_quiet():
            repn = generate_standard_repn(objective.expr, compute_values=True,
                                          quadratic=False)
    except ValueError:
        return None
    linear = [(float(coef), var) for coef, var in zip(repn.linear_coefs, repn.linear_vars,
                                                      strict=True) if coef != 0]
    nonlinear = repn.nonlinear_expr
    if nonlinear is None:
        return ObjectiveParts(linear, None, float(repn.constant))
    inside = {id(var) for var in identify_variables(nonlinear, include_fixed=False)}
    outside = [(coef, var) for coef, var in linear if id(var) not in inside]
    if not outside:
        return None
    shared = [(coef, var) for coef, var in linear if id(var) in inside]
    epigraph = nonlinear + sum(coef * var for coef, var in shared) if shared else nonlinear
    if repn.constant:
        epigraph = epigraph + float(repn.constant)
    return ObjectiveParts(outside, epigraph, 0.0)


def expression_value(expr: Any) -> float | None:
    """`expr` at its variables' values; None where one has none or the point lies outside
    its domain (log of a negative)."""
    try:  # exception=False: Pyomo logs an ERROR for a variable without a value otherwise
        value = pyo.value(expr, exception=False)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None
    return None if value is None else float(value)
