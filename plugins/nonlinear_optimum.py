"""SCIP's "optimal" on nonlinear models with unbounded variables, checked before it is
believed.

SCIP does not detect unbounded nonlinear models. It calls them "optimal" at a point on its
infinity (`min (x - y)**2 + x` over free x, y: objective -1e20), or at one of its finite
stand-ins for infinity, with a dual bound to match (the same model with x integer: "optimal"
-1e5, while x = y = -1e6 gives -1e6). So where SCIP says optimal and a variable of a
nonlinear constraint sits at 1e4 or more on a side it has no bound on:

- a value at SCIP's infinity means the model is unbounded;
- otherwise the model is solved again with every such variable boxed, 100 times wider than
  the largest value SCIP's point holds. The boxed model is a restriction of the model, so a
  better point in the box refutes SCIP's optimum. A second box, 100 times wider again, then
  tells an objective that keeps falling (unbounded) from one that settles (a feasible point,
  the best found, without a proof of optimality).

`result.extra["nonlinear_check"]` records the boxes and their objectives.
"""

from __future__ import annotations

import math
from typing import Any

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.results import Result, Status

SUSPECT = 1e4  # SCIP's stand-ins for infinity land at 1e5 (and 5e4 in PySCIPOpt issue 516)
WIDEN = 100.0  # each box this many times wider than the last (the first: than SCIP's point)
AT_INFINITY = 0.1  # a value of this share of SCIP's infinity or more is SCIP's infinity
BOX_CAP = 1e15  # SCIP's numerics/hugeval: wider boxes are not solved reliably
BETTER = 1e-6  # relative improvement that refutes an optimum


def check_nonlinear_optimum(scip: Any, result: Result, epigraph: str | None = None) -> None:
    """Check SCIP's "optimal" `result` of a model with nonlinear constraints whose variables
    have infinite bounds (module docstring), changing `result` where SCIP is refuted.
    `epigraph` names the variable that carries a nonlinear objective: its value is the
    objective, whose size alone is no sign of trouble."""
    if result.status is not Status.OPTIMAL or not result.has_solution:
        return
    free = _free_nonlinear_vars(scip)
    if not free:
        return
    values = {var.name: scip.getVal(var) for var, _, _ in free}
    infinity = scip.infinity()
    if abs(result.objective) >= AT_INFINITY * infinity or any(
            abs(value) >= AT_INFINITY * infinity for value in values.values()):
        at = max(values, key=lambda name: abs(values[name]))
        _unbounded(scip, result, f"SCIP's point puts {at} at {values[at]:g}, its infinity")
        return
    if not any(_suspect(var, values[var.name], lower, upper) for var, lower, upper in free
               if var.name != epigraph):
        return
    _box_check(scip, result, free, max(SUSPECT, *map(abs, values.values())))


def _free_nonlinear_vars(scip: Any) -> list[tuple[Any, bool, bool]]:
    """The original variables of nonlinear constraints with an infinite bound, each once,
    with whether their lower and their upper bound is infinite."""
    seen: dict[str, tuple[Any, bool, bool]] = {}
    for cons in scip.getConss(transformed=False):
        if cons.isNonlinear():
            for var in scip.getConsVars(cons):
                lower = scip.isInfinity(-var.getLbOriginal())
                upper = scip.isInfinity(var.getUbOriginal())
                if lower or upper:
                    seen.setdefault(var.name, (var, lower, upper))
    return list(seen.values())


def _suspect(var: Any, value: float, lower: bool, upper: bool) -> bool:
    """Whether `value` of `var` is large (SUSPECT) on a side where it has no bound (`lower`,
    `upper`: its bound there is infinite)."""
    return abs(value) >= SUSPECT and (upper if value > 0 else lower)


def _box_check(scip: Any, result: Result, free: list[tuple[Any, bool, bool]],
               largest: float) -> None:
    """Solve in two ever wider boxes (module docstring) and settle `result` by them."""
    maximize = scip.getObjectiveSense() == "maximize"
    claimed, limit = float(result.objective), float(scip.getParam("limits/time"))
    trail: list[dict[str, float]] = []
    box = min(WIDEN * largest, BOX_CAP)
    for _ in range(2):
        if limit - result.time <= 0.0 or (trail and box <= trail[-1]["box"]):
            break
        objective = _solve_in_box(scip, result, free, box, limit)
        if objective is None:
            break
        trail.append({"box": box, "objective": objective})
        if not _better(objective, claimed if len(trail) == 1 else trail[-2]["objective"],
                       maximize):
            break
        box = min(box * WIDEN, BOX_CAP)
    result.extra["nonlinear_check"] = {"claimed": claimed, "boxes": trail}
    _settle(scip, result, claimed, trail, maximize)


def _solve_in_box(scip: Any, result: Result, free: list[tuple[Any, bool, bool]], box: float,
                  limit: float) -> float | None:
    """Bound each of `free` within [-box, box] on its open sides and solve again (the time
    and nodes count in `result`); the box's optimum, or None where the run found none."""
    scip.freeTransform()
    for var, lower, upper in free:
        if lower:
            scip.chgVarLb(var, -box)
        if upper:
            scip.chgVarUb(var, box)
    scip.setParam("limits/time", max(limit - result.time, 0.0))
    scip.optimize()
    result.time += float(scip.getSolvingTime())
    result.nodes += int(scip.getNTotalNodes())
    if scip.getStatus() != "optimal" or scip.getNSols() == 0:
        return None
    return float(scip.getObjVal())


def _better(new: float, old: float, maximize: bool) -> bool:
    """Whether `new` improves on `old` by more than round-off (BETTER, relative)."""
    margin = BETTER * max(1.0, abs(old))
    return new > old + margin if maximize else new < old - margin


def _settle(scip: Any, result: Result, claimed: float, trail: list[dict[str, float]],
            maximize: bool) -> None:
    """Read the boxes' objectives: none better keeps SCIP's optimum (its point, solved again
    in the box); a better one and then another is unbounded; a better one that the wider box
    did not improve is a feasible point, the best found."""
    if not trail:
        _feasible(scip, result, "the check of SCIP's optimum did not finish (time limit)")
        return
    if not _better(trail[0]["objective"], claimed, maximize):
        result.objective = trail[-1]["objective"]
        return
    objectives = ", ".join(f"{step['objective']:g} within {step['box']:g}" for step in trail)
    if len(trail) == 2 and _better(trail[1]["objective"], trail[0]["objective"], maximize):
        _unbounded(scip, result, f"SCIP called {claimed:g} optimal, but boxes around its "
                                 f"unbounded variables gave {objectives}")
        return
    _feasible(scip, result, f"SCIP called {claimed:g} optimal, but boxes around its unbounded "
                            f"variables gave {objectives}; the best point found is loaded, "
                            "without a proof of optimality")


def _unbounded(scip: Any, result: Result, why: str) -> None:
    """Report `result` unbounded, with no point, and warn why."""
    maximize = scip.getObjectiveSense() == "maximize"
    result.status, result.objective, result.has_solution = Status.UNBOUNDED, None, False
    result.bound = math.inf if maximize else -math.inf
    warn_at_caller(f"{why}: the model is unbounded (SCIP does not detect unbounded nonlinear "
                   "models)")


def _feasible(scip: Any, result: Result, why: str) -> None:
    """Report `result` feasible at SCIP's best point, its bound unknown, and warn why."""
    maximize = scip.getObjectiveSense() == "maximize"
    result.status, result.objective = Status.FEASIBLE, float(scip.getObjVal())
    result.bound = math.inf if maximize else -math.inf
    warn_at_caller(why)
