"""LP duals and reduced costs into Pyomo's import Suffixes (`m.dual`, `m.rc`), certified.

Pyomo's own SCIP interface loads no duals. `solve` fills `m.dual` and `m.rc` when the model
declares them (`m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)`) and is a linear program:
continuous variables, linear rows and objective (for HiGHS also a convex quadratic
objective: its gradient at the optimum takes the place of `c`). Signs follow Pyomo's
convention: a dual is the derivative of the optimal objective with respect to the row's
side, a reduced cost that of the variable's bound (so for a minimization a `>=` row has a
dual >= 0).

The row duals come from the solver (SCIP solves such an LP without presolving and
propagation, whose reductions would leave the final LP's duals to a different model); the
reduced costs are computed from them, `c - A'y`. Before anything is loaded the pair is
checked as an optimality certificate against the model itself: signs, and complementary
slackness with the loaded primal point. Duals that fail it are not loaded, with a warning
naming the row or variable, so an empty Suffix never reads as "all duals zero" and a wrong
one never reaches the user.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.plugins.linear_terms import LinearTerms, linear_terms
from coplug.plugins.results import Result, Status

DUAL_SUFFIXES = ("dual", "rc")
_INFINITY = 1e20  # both solvers' infinity: a side at or beyond it is no side
_DUAL_TOL = 1e-6  # relative: a dual or reduced cost smaller than this is zero
_SIDE_TOL = 1e-6  # relative: a row or variable this close to a side is at it


@dataclass
class LinearProgram:
    """The rows, bounds and objective of a Pyomo LP, with values computed."""

    rows: list[tuple[Any, LinearTerms, float | None, float | None]]
    objective: LinearTerms | None
    maximize: bool
    quadratic: list[tuple[Any, Any, float]] = field(default_factory=list)  # HiGHS's convex QPs


@dataclass
class DualRequest:
    """The Suffixes to fill and the LP to certify them on (None: `reason` says why not)."""

    suffixes: dict[str, pyo.Suffix]
    lp: LinearProgram | None
    reason: str = ""
    row_duals: list[float] = field(default_factory=list)


def dual_request(model: pyo.Block, quadratic_ok: bool = False) -> DualRequest | None:
    """The `dual`/`rc` import Suffixes of `model`, emptied for this solve, with the model
    read as an LP (or, with `quadratic_ok`, a QP); None when it declares neither."""
    suffixes = {s.local_name: s for s in _import_suffixes(model, descend=False)
                if s.local_name in DUAL_SUFFIXES}
    if not suffixes:
        return None
    for suffix in suffixes.values():
        suffix.clear()
    lp, reason = _read_lp(model, quadratic_ok)
    return DualRequest(suffixes, lp, reason)


def other_import_suffixes(model: pyo.Block, fills_duals: bool) -> list[str]:
    """Names of the import Suffixes `solve` leaves empty: all of them for a backend that
    gives no duals, else all but `dual` and `rc` on the model itself (as in Pyomo's solvers,
    those on sub-blocks are not filled)."""
    filled = set(map(id, _import_suffixes(model, descend=False))) if fills_duals else set()
    return [s.name for s in _import_suffixes(model, descend=True)
            if not (id(s) in filled and s.local_name in DUAL_SUFFIXES)]


def _import_suffixes(model: pyo.Block, descend: bool) -> list[pyo.Suffix]:
    """Active import Suffixes on `model` (and its sub-blocks with `descend`)."""
    return [s for s in model.component_objects(pyo.Suffix, active=True, descend_into=descend)
            if s.import_enabled()]


def _read_lp(model: pyo.Block, quadratic_ok: bool) -> tuple[LinearProgram | None, str]:
    """The model as an LP (a QP with `quadratic_ok`), or None and why it is not one."""
    rows = []
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        terms = linear_terms(con.body)
        if terms is None:
            return None, f"constraint {con.name!r} is nonlinear"
        rows.append((con, terms, _side(con.lb), _side(con.ub)))
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    obj_terms, quadratic = None, []
    if objective is not None:
        obj_terms = linear_terms(objective.expr)
        if obj_terms is None and quadratic_ok:
            obj_terms, quadratic = _quadratic_terms(objective.expr)
        if obj_terms is None:
            return None, "the objective is nonlinear"
    lp = LinearProgram(rows, obj_terms, objective is not None and objective.sense == pyo.maximize,
                       quadratic)
    for var in _variables(lp):
        if not var.is_continuous():
            return None, f"variable {var.name!r} is integer (a MIP has no LP duals)"
    return lp, ""


def _quadratic_terms(expr: Any) -> tuple[LinearTerms | None, list[tuple[Any, Any, float]]]:
    """The linear part and the (x, y, coef) terms of a quadratic objective (None when it is
    not quadratic)."""
    repn = generate_standard_repn(expr, compute_values=True, quadratic=True)
    if repn.nonlinear_expr is not None:
        return None, []
    linear = LinearTerms(list(repn.linear_vars), np.asarray(repn.linear_coefs, dtype=float),
                         float(repn.constant))
    return linear, [(x, y, float(c)) for (x, y), c in zip(repn.quadratic_vars,
                                                          repn.quadratic_coefs, strict=True)]


def _side(value: float | None) -> float | None:
    """A row side or bound as a float, None where it is absent or infinite."""
    if value is None or abs(value) >= _INFINITY:
        return None
    return float(value)


def _variables(lp: LinearProgram) -> list[Any]:
    """Each unfixed variable of the rows and objective once, in order of appearance."""
    seen: dict[int, Any] = {}
    groups = [t.variables for _, t, _, _ in lp.rows]
    groups += [lp.objective.variables] if lp.objective else []
    groups += [(x, y) for x, y, _ in lp.quadratic]
    for variables in groups:
        for var in variables:
            seen.setdefault(id(var), var)
    return list(seen.values())


def prepare_scip(scip: Any) -> None:
    """Solve the LP as given: presolving and propagation would change the rows and bounds
    whose duals SCIP's final LP holds (a row presolve removes has none at all)."""
    from pyscipopt import SCIP_PARAMSETTING

    scip.setPresolve(SCIP_PARAMSETTING.OFF)
    scip.disablePropagation()


def restore_scip(scip: Any) -> None:
    """Undo `prepare_scip` (SCIP's default presolving and propagation)."""
    from pyscipopt import SCIP_PARAMSETTING

    scip.setPresolve(SCIP_PARAMSETTING.DEFAULT)
    for key in ("propagating/maxrounds", "propagating/maxroundsroot"):
        scip.resetParam(key)


NO_PRESOLVE_FAILED = ("SCIP's LP solver failed on the LP without presolving (numerical "
                      "trouble); it was solved again with presolving, which leaves no duals")


def read_scip_duals(request: DualRequest, scip: Any, con_map: Any) -> None:
    """Read SCIP's row duals (in Pyomo's sign; for a row SCIP keeps as a variable bound,
    the dual it recovers from the reduced cost)."""
    duals = []
    for con, _, _, _ in request.lp.rows:
        scip_con = con_map.get(con)
        if scip_con is None:  # no variables left once values are in: nothing to price
            duals.append(0.0)
            continue
        try:
            duals.append(float(scip.getDualSolVal(scip_con)))
        except Exception as exc:  # PySCIPOpt raises a bare Exception or Warning
            request.reason = f"SCIP gave no dual for constraint {con.name!r} ({exc})"
            return
    request.row_duals = duals


def load_duals(request: DualRequest, result: Result) -> None:
    """Certify the row duals against the loaded primal point and fill the Suffixes, or warn
    why they stay empty; `result.extra["duals"]` says which."""
    if not request.reason and result.status is not Status.OPTIMAL:
        request.reason = f"the solve ended {result.status.value}, not optimal"
    if not request.reason and not request.row_duals and request.lp.rows:
        request.reason = "the solver returned no duals"
    reduced = None if request.reason else _certified_reduced_costs(request)
    names = ", ".join(s.name for s in request.suffixes.values())
    if reduced is None:
        result.extra["duals"] = {"loaded": False, "reason": request.reason}
        warnings.warn(f"{names} left empty: {request.reason}", UserWarning, stacklevel=4)
        return
    if "dual" in request.suffixes:
        for (con, _, _, _), dual in zip(request.lp.rows, request.row_duals, strict=True):
            request.suffixes["dual"][con] = dual
    if "rc" in request.suffixes:
        for var, cost in reduced:
            request.suffixes["rc"][var] = cost
    result.extra["duals"] = {"loaded": True, "rows": len(request.lp.rows),
                             "variables": len(reduced)}


def _certified_reduced_costs(request: DualRequest) -> list[tuple[Any, float]] | None:
    """Reduced costs c - A'y when (y, c - A'y) certify the loaded point optimal, else None
    with `request.reason` set. Checked in minimization form: a row dual > 0 needs the row at
    its lower side, < 0 at its upper; likewise each reduced cost and its variable's bounds."""
    lp = request.lp
    sign = -1.0 if lp.maximize else 1.0
    variables = _variables(lp)
    index = {id(var): k for k, var in enumerate(variables)}
    reduced = np.zeros(len(variables))
    scale = np.zeros(len(variables))
    if lp.objective is not None:
        cols = _columns(lp.objective, index)
        np.add.at(reduced, cols, sign * lp.objective.coefs)
        np.add.at(scale, cols, np.abs(lp.objective.coefs))
    for x, y, coef in lp.quadratic:  # the gradient of coef * x * y at the loaded point
        for var, other in ((x, y), (y, x)):
            reduced[index[id(var)]] += sign * coef * float(other.value)
            scale[index[id(var)]] += abs(coef * float(other.value))
    duals = sign * np.asarray(request.row_duals, dtype=float)
    dual_tol = _DUAL_TOL * max(1.0, float(np.max(np.abs(duals), initial=0.0)))
    for (con, terms, lower, upper), dual in zip(lp.rows, duals, strict=True):
        if not np.isfinite(dual):
            request.reason = f"the dual of constraint {con.name!r} is {dual}"
            return None
        cols = _columns(terms, index)
        np.add.at(reduced, cols, -dual * terms.coefs)
        np.add.at(scale, cols, np.abs(dual * terms.coefs))
        if abs(dual) > dual_tol:
            activity = terms.constant + float(np.dot(terms.coefs, _values(terms.variables)))
            side, name = (lower, "lower") if dual > 0 else (upper, "upper")
            if not _at(activity, side):
                request.reason = (f"the dual of constraint {con.name!r} ({sign * dual:.6g}) "
                                  f"needs it at its {name} side, but its activity is "
                                  f"{activity:.6g}")
                return None
    for var, cost, size in zip(variables, reduced, scale, strict=True):
        if abs(cost) > _DUAL_TOL * max(1.0, size):
            side, name = (_side(var.lb), "lower") if cost > 0 else (_side(var.ub), "upper")
            if not _at(float(var.value), side):
                request.reason = (f"the reduced cost of {var.name!r} ({sign * cost:.6g}) needs "
                                  f"it at its {name} bound, but it is {var.value:.6g}")
                return None
    return [(var, sign * float(cost)) for var, cost in zip(variables, reduced, strict=True)]


def _columns(terms: LinearTerms, index: dict[int, int]) -> np.ndarray:
    """Column numbers of the terms' variables."""
    return np.fromiter((index[id(v)] for v in terms.variables), dtype=np.int64,
                       count=len(terms.variables))


def _values(variables: Any) -> np.ndarray:
    """The loaded values of `variables`."""
    return np.fromiter((float(v.value) for v in variables), dtype=float, count=len(variables))


def _at(value: float, side: float | None) -> bool:
    """Whether `value` lies at `side` (relative tolerance; an absent side is never met)."""
    return side is not None and abs(value - side) <= _SIDE_TOL * max(1.0, abs(side))
