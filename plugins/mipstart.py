"""MIP starts: hand the values already in a Pyomo model's variables to SCIP or HiGHS.

`solve(model, warmstart=True)` passes every variable that has a value (Pyomo's
``warmstart`` convention); variables without one are left to the solver, which then
completes the partial start itself (SCIP's completesol heuristic, HiGHS's sub-MIP). The
solver checks a start and drops it if infeasible, so it changes the answer by no more than
the solver's own feasibility tolerance.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError
from coplug.plugins.highs_interface import log_to
from coplug.plugins.lazy import shown_expression
from coplug.plugins.varmap import snapped

NO_VALUES = ("no variable has a value: warmstart=True passes the values already in the "
             "Pyomo variables (solve once, or set them, first)")


def start_values(pairs: Iterable[tuple[Any, Any]], rounded: bool = False
                 ) -> list[tuple[Any, float]]:
    """(solver variable, value) for each (Pyomo variable, solver variable) whose Pyomo
    variable holds a value, with `rounded` an integer one within INTEGER_SNAP of a whole
    number rounded to it, as its solution value is loaded; a value that is not a finite
    number is named."""
    out = []
    for var, solver_var in pairs:
        value = var.value
        if value is None:
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InputError(f"warm start: {var.name} holds {value!r}, not a number") from None
        if not math.isfinite(number):
            raise InputError(f"warm start: {var.name} holds {number}, not a finite number")
        out.append((solver_var, snapped(var, number) if rounded else number))
    return out


def _unused(report: dict[str, Any], reason: str) -> dict[str, Any]:
    """Mark the start unused for `reason`, in the report and in a warning at the caller's
    solve()."""
    report["accepted"], report["reason"] = False, reason
    warn_at_caller(f"warm start not used: {reason}")
    return report


def scip_mip_start(
    scip: Any, pairs: Iterable[tuple[Any, Any]], internal: Iterable[tuple[Any, float]] = (),
    con_names: Callable[[str], str] = str, plugins: Iterable[Any] = (),
) -> dict[str, Any]:
    """Add the values as a (partial, if some are missing) SCIP solution before the solve.

    `internal` are (SCIP variable, value) pairs for variables the Pyomo model does not show
    (mutable Params, the epigraph variable of a nonlinear objective), so a start that sets
    every Pyomo variable is complete. A complete start is checked against the original
    problem and stored only when feasible (`accepted`); a partial one is completed by SCIP
    during presolve (`accepted` None), unless so much is missing that SCIP's completesol
    would ignore it. An unused start (`accepted` False) carries its reason, naming the first
    bound or row an infeasible one violates (`con_names` maps SCIP's row names), and warns.
    """
    pairs, internal = list(pairs), list(internal)
    values = start_values(pairs, rounded=True)
    report: dict[str, Any] = {"values": len(values), "variables": len(pairs), "accepted": False}
    if not values:
        return _unused(report, NO_VALUES)
    values += internal
    n_vars = scip.getNVars(transformed=False)
    if len(values) < n_vars:
        unknown = 1.0 - len(values) / n_vars
        limit = scip.getParam("heuristics/completesol/maxunknownrate")
        if unknown > limit:
            return _unused(report, f"{unknown:.0%} of SCIP's variables have no value; SCIP "
                                   f"completes a partial start only up to {limit:.0%}")
    partial = len(values) < n_vars
    sol = _filled(scip, values, partial)
    if partial:
        scip.addSol(sol, free=True)
        report["accepted"] = None
        return report
    sos = _sos_violation(scip, sol, con_names)
    if sos is not None:  # SCIP's SOS check cannot run before the solve: it raised
        scip.freeSol(sol)
        return _unused(report, f"it violates {sos}")
    feasible = scip.checkSol(sol, printreason=False, original=True)
    if not feasible and _lazy_rejecting(plugins) is None:
        sol, feasible = _as_given(scip, sol, values, start_values(pairs) + internal)
    if not feasible:
        rejecting = _lazy_rejecting(plugins)
        var_names = {scip_var.name: var.name for var, scip_var in pairs}
        what = (_lazy_row(rejecting) if rejecting is not None
                else _violation(scip, sol, var_names.get, con_names))
        scip.freeSol(sol)
        if getattr(rejecting, "records_rejected", False):  # k_best's search kept it
            report["accepted"], report["recorded_by"] = True, rejecting.name
            return report
        return _unused(report, f"it violates {what}")
    report["accepted"] = bool(scip.addSol(sol, free=True))
    return report


def _filled(scip: Any, values: list[tuple[Any, float]], partial: bool = False) -> Any:
    """A new SCIP solution (partial: for SCIP to complete) holding `values`."""
    sol = scip.createPartialSol() if partial else scip.createSol()
    for solver_var, value in values:
        scip.setSolVal(sol, solver_var, value)
    return sol


def _as_given(scip: Any, sol: Any, rounded: list[tuple[Any, float]],
              given: list[tuple[Any, float]]) -> tuple[Any, bool]:
    """The start with its integers rounded (`sol`), unless only the values as given meet
    the model: (solution, feasible). Rounding keeps SCIP from taking y = 5e-7 as integral
    (under `max 1e7 y + z` it called 5 optimal where the loaded y = 0 is worth 0), but moves
    a row tying the integer to continuous variables (`1e7 x - 1e7 z == 0` by 5)."""
    if [value for _, value in given] == [value for _, value in rounded]:
        return sol, False
    original = _filled(scip, given)
    if not scip.checkSol(original, printreason=False, original=True):
        scip.freeSol(original)
        return sol, False
    scip.freeSol(sol)
    return original, True


def _lazy_rejecting(plugins: Iterable[Any]) -> Any:
    """The plugin whose lazy row rejected the start (`LazyConstraints.last_rejected`), if
    one did: SCIP's handler list alone does not say which."""
    return next((plugin for plugin in plugins
                 if getattr(plugin, "last_rejected", None) is not None), None)


def _lazy_row(plugin: Any) -> str:
    """The lazy row of `plugin` that rejected the start, as the warning names it."""
    return (f"the lazy row {shown_expression(plugin.last_rejected.expr)} of "
            f"{getattr(plugin, 'name', plugin)!r}")


def _sos_violation(scip: Any, sol: Any, con_name: Callable[[str], str]) -> str | None:
    """The first SOS1/SOS2 constraint `sol` violates (members nonzero beyond SCIP's
    tolerance: more than one, or two that are not neighbours in weight order), if any."""
    for cons in scip.getConss():
        kind = cons.getConshdlrName()
        if kind not in ("SOS1", "SOS2"):
            continue
        nonzero = [i for i, var in enumerate(scip.getConsVars(cons))
                   if not scip.isFeasZero(scip.getSolVal(sol, var))]
        if len(nonzero) > 1 and (kind == "SOS1" or len(nonzero) > 2
                                 or nonzero[1] - nonzero[0] != 1):
            return f"the {kind} constraint {con_name(cons.name)!r} ({len(nonzero)} nonzero)"
    return None


def _violation(scip: Any, sol: Any, var_name: Callable[[str], str | None],
               con_name: Callable[[str], str]) -> str:
    """The first variable bound, integrality or linear row that `sol` violates (SCIP's own
    tolerances), by its Pyomo name where it has one."""
    for var in scip.getVars(transformed=False):
        value, name = scip.getSolVal(sol, var), var_name(var.name) or var.name
        if scip.isFeasLT(value, var.getLbOriginal()) or scip.isFeasGT(value,
                                                                      var.getUbOriginal()):
            return f"the bounds of {name} (value {value:g})"
        if var.vtype() in ("BINARY", "INTEGER", "IMPLINT") and not scip.isFeasIntegral(value):
            return f"the integrality of {name} (value {value:g})"
    for cons in scip.getConss():
        if cons.getConshdlrName() != "linear":
            continue
        activity = sum(coef * scip.getSolVal(sol, var) for var, coef in
                       zip(scip.getConsVars(cons), scip.getConsVals(cons), strict=True))
        if scip.isFeasLT(activity, scip.getLhs(cons)) or scip.isFeasGT(activity,
                                                                        scip.getRhs(cons)):
            return f"constraint {con_name(cons.name)!r} (activity {activity:g})"
    handlers = sorted({cons.getConshdlrName() for cons in scip.getConss()} - {"linear"})
    return f"a constraint that is not a linear row (SCIP handlers: {', '.join(handlers)})"


def highs_mip_start(highs: Any, pairs: Iterable[tuple[Any, int]], tee: bool = False
                    ) -> dict[str, Any]:
    """Set the values as HiGHS's starting solution (sparse: HiGHS completes missing ones).

    HiGHS reports its verdict only in its log (``tee=True``: sent to `sys.stdout`, as the
    solve's), so `accepted` is None; without `tee` its "assessUserColValues" warnings on a
    fractional start are not shown.
    """
    values = start_values(pairs)
    report: dict[str, Any] = {"values": len(values), "variables": highs.getNumCol(),
                              "accepted": None}
    if not values:
        return _unused(report, NO_VALUES)
    index = np.array([col for col, _ in values], dtype=np.int32)
    value = np.array([v for _, v in values], dtype=np.float64)
    with log_to(highs, [sys.stdout] if tee else []):
        highs.setSolution(len(values), index, value)
    return report
