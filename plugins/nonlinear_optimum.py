"""SCIP's "optimal" on nonlinear models with unbounded variables, checked before it is
believed.

SCIP does not detect unbounded nonlinear models. It calls them "optimal" at a point on its
infinity (`min (x - y)**2 + x` over free x, y: objective -1e20), or at one of its finite
stand-ins for infinity, with a dual bound to match (the same model with x integer: "optimal"
-1e5, while x = y = -1e6 gives -1e6). So where SCIP says optimal and a variable of a
nonlinear constraint sits at 1e4 or more on a side it has no bound on:

- a value at SCIP's infinity means the model is unbounded;
- otherwise (and also where a first-order check of a continuous QP finds that SCIP's point
  is no local optimum: SCIP called `min (0.01 x - y)**2 + 0.01 x` optimal at 0) the model
  is solved again with each such variable boxed, on its open sides, at
  100 times its own size in SCIP's point (at least 1e4; a side past 1e15 stays open). The
  boxed model is a restriction of the model that holds SCIP's point, so a better point in it
  refutes SCIP's optimum; none leaves SCIP's answer as it was. Where it is refuted, a box 100
  times wider again tells an objective that keeps falling (unbounded) from one that settles
  (feasible: SCIP's point, with a warning naming the better objective). The boxes are
  solved on copies of the model, from SCIP's point; a model whose copy lacks constraints
  (a Python plugin's: lazy rows) is not checked.

A linear model's "optimal" past BOX_CAP at a point with a variable at SCIP's infinity on an
open side is unbounded too (an unbounded MIP came back "optimal" 3.4e18 at k = 6.2e19).

Each box solve gets at most CHECK_SECONDS or ten times SCIP's own time, whichever is more,
within the caller's time limit. `result.extra["nonlinear_check"]` records the boxes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.results import Result, Status

SUSPECT = 1e4  # SCIP's stand-ins for infinity land at 1e5 (and 5e4 in PySCIPOpt issue 516)
WIDEN = 100.0  # each box this many times wider than the last (the first: than SCIP's point)
AT_INFINITY = 0.5  # SCIP's points at its infinity hold 1e20 less round-off (-9.99999998e19)
BOX_CAP = 1e15  # SCIP's numerics/hugeval: a side wider than this stays open
BETTER = 1e-6  # relative improvement that refutes an optimum
CHECK_SECONDS = 5.0  # the least time a box solve gets (else 10x SCIP's own solve)


@dataclass
class _Free:
    """A variable of a nonlinear constraint with an infinite bound: which sides are open,
    and its value in SCIP's point."""

    var: Any
    lower: bool
    upper: bool
    value: float


def check_nonlinear_optimum(scip: Any, result: Result, epigraph: str | None = None,
                            names: Callable[[str], str] = str,
                            descent: Callable[[], str | None] | None = None) -> None:
    """Check SCIP's "optimal" `result` of a model with nonlinear constraints whose variables
    have infinite bounds (module docstring), changing `result` where SCIP is refuted.
    `epigraph` names the variable that carries a nonlinear objective (its value is the
    objective, whose size alone is no sign of trouble); `names` maps SCIP's variable names
    to the model's, for the warnings. `descent` says how the objective falls from SCIP's
    point where it is no local optimum (`coplug.plugins.stationarity`), else None: such a
    point is checked in boxes too, whatever the size of its values."""
    if result.status is not Status.OPTIMAL or not result.has_solution:
        return
    if _point_at_infinity(scip, result, names):
        return
    free = _free_nonlinear_vars(scip)
    infinite = sorted((f for f in free if abs(f.value) >= AT_INFINITY * scip.infinity()),
                      key=lambda f: f.var.name == epigraph)  # a model's variable first
    if infinite:
        at = infinite[0]
        what = "the objective" if at.var.name == epigraph else names(at.var.name)
        _unbounded(scip, result, f"SCIP's point puts {what} at {at.value:g}, its infinity")
        return
    own = [f for f in free if f.var.name != epigraph]
    if any(_suspect(f) for f in own):
        _box_check(scip, result, own)
    elif own and descent is not None:
        falls = descent()
        if falls is not None:
            _box_check(scip, result, own)
            result.extra.setdefault("nonlinear_check", {})["first_order"] = falls


def _point_at_infinity(scip: Any, result: Result, names: Callable[[str], str]) -> bool:
    """Where SCIP's optimum lies past BOX_CAP, whether its point puts a variable at SCIP's
    infinity on a side it has no bound on (then `result` is made unbounded): SCIP called an
    unbounded linear MIP "optimal" 3.4e18 at k = 6.2e19, where HiGHS said unbounded."""
    if result.objective is None or not abs(float(result.objective)) >= BOX_CAP:
        return False
    far = AT_INFINITY * scip.infinity()
    for var in scip.getVars(transformed=False):
        value = float(scip.getVal(var))
        if abs(value) >= far and scip.isInfinity(
                var.getUbOriginal() if value > 0 else -var.getLbOriginal()):
            _unbounded(scip, result, f"SCIP's point puts {names(var.name)} at {value:g}, its "
                       "infinity")
            return True
    return False


def _free_nonlinear_vars(scip: Any) -> list[_Free]:
    """The original variables of nonlinear constraints with an infinite bound, each once."""
    seen: dict[str, _Free] = {}
    for cons in scip.getConss(transformed=False):
        if cons.isNonlinear():
            for var in scip.getConsVars(cons):
                lower = scip.isInfinity(-var.getLbOriginal())
                upper = scip.isInfinity(var.getUbOriginal())
                if (lower or upper) and var.name not in seen:
                    seen[var.name] = _Free(var, lower, upper, float(scip.getVal(var)))
    return list(seen.values())


def _suspect(free: _Free) -> bool:
    """Whether the value is large (SUSPECT) on a side where the variable has no bound."""
    return abs(free.value) >= SUSPECT and (free.upper if free.value > 0 else free.lower)


def _box_check(scip: Any, result: Result, free: list[_Free]) -> None:
    """Solve copies of the model in up to two ever wider boxes (module docstring) and settle
    `result` by them; SCIP's own model, and so the point loaded, stays as it is."""
    maximize = scip.getObjectiveSense() == "maximize"
    claimed, limit = float(result.objective), float(scip.getParam("limits/time"))
    budget = max(CHECK_SECONDS, 10.0 * result.time)
    point = _point(scip)
    trail: list[dict[str, Any]] = []
    for widen in (WIDEN, WIDEN * WIDEN):
        left = limit - result.time
        if left <= 0.0:
            break
        found = _solve_in_box(scip, result, free, point, widen, min(left, budget))
        if found is None:
            result.extra["nonlinear_check"] = {"claimed": claimed, "skipped": COPY_INCOMPLETE}
            return
        trail.append({"widen": widen, **found})
        last = trail[-2]["objective"] if len(trail) > 1 else claimed
        if found["objective"] is None or not found["finished"] or not _better(
                found["objective"], last, maximize):
            break
    result.extra["nonlinear_check"] = {"claimed": claimed, "boxes": trail}
    _settle(scip, result, claimed, trail, maximize)


# Where a copy of the model lacks constraints (a Python plugin's, lazy rows: SCIP copies only
# what its plugins can copy), its box is no restriction of the model and proves nothing.
COPY_INCOMPLETE = "a copy of the model lacks its plugins' constraints"


def _point(scip: Any) -> dict[str, float]:
    """SCIP's best point by original variable name."""
    best = scip.getBestSol()
    return {var.name: scip.getSolVal(best, var) for var in scip.getVars(transformed=False)}


def _solve_in_box(scip: Any, result: Result, free: list[_Free], point: dict[str, float],
                  widen: float, seconds: float) -> dict[str, Any] | None:
    """Solve a copy of the model with each of `free` bounded on its open sides at `widen`
    times its size (at least SUSPECT; a side past BOX_CAP stays open), from SCIP's `point`,
    for at most `seconds` (its time and nodes count in `result`): the best objective found
    (None without a point) and whether the run finished; None where the copy is incomplete.
    A copy, not SCIP's model after freeTransform: SCIP re-solving a nonconvex QP it had
    proved optimal in 0.03 s ran into any time limit once transformed afresh."""
    from pyscipopt import Model

    copy = Model(sourceModel=scip, origcopy=True)
    if copy.getNConss(transformed=False) != scip.getNConss(transformed=False):
        return None
    copy.hideOutput()
    variables = {var.name: var for var in copy.getVars(transformed=False)}
    for item in free:
        width = widen * max(SUSPECT, abs(item.value))
        if width <= BOX_CAP:
            if item.lower:
                copy.chgVarLb(variables[item.var.name], -width)
            if item.upper:
                copy.chgVarUb(variables[item.var.name], width)
    start = copy.createSol()
    for name, value in point.items():
        copy.setSolVal(start, variables[name], value)
    copy.addSol(start, free=True)
    copy.setParam("limits/time", max(seconds, 0.0))
    try:
        copy.optimize()
    except Exception as exc:  # SCIP's error code (an LP solver error): the box decides nothing
        return {"objective": None, "finished": False, "error": str(exc)}
    result.time += float(copy.getSolvingTime())
    result.nodes += int(copy.getNTotalNodes())
    objective = float(copy.getObjVal()) if copy.getNSols() > 0 else None
    return {"objective": objective, "finished": copy.getStatus() == "optimal"}


def _better(new: float, old: float, maximize: bool) -> bool:
    """Whether `new` improves on `old` by more than round-off (BETTER, relative)."""
    margin = BETTER * max(1.0, abs(old))
    return new > old + margin if maximize else new < old - margin


def _settle(scip: Any, result: Result, claimed: float, trail: list[dict[str, Any]],
            maximize: bool) -> None:
    """Read the boxes: no better point keeps SCIP's optimum; a better one, and then another
    in the wider box, is unbounded; a better one the wider box did not improve (or an
    unfinished box found) makes SCIP's point a feasible one, with a warning naming the
    better objective."""
    best = [step["objective"] for step in trail if step["objective"] is not None]
    if not best or not _better(best[0], claimed, maximize):
        return
    objectives = ", ".join(f"{step['objective']:g} with {step['widen']:g}x boxes"
                           for step in trail if step["objective"] is not None)
    refuted = f"SCIP called {claimed:g} optimal, but boxes around its unbounded variables gave"
    if len(best) == 2 and trail[0]["finished"] and _better(best[1], best[0], maximize):
        _unbounded(scip, result, f"{refuted} {objectives}")
        return
    result.status = Status.FEASIBLE
    result.bound = math.inf if maximize else -math.inf
    warn_at_caller(f"{refuted} {objectives}; SCIP's point is loaded, feasible but not "
                   "optimal")


def _unbounded(scip: Any, result: Result, why: str) -> None:
    """Report `result` unbounded, with no point, and warn why."""
    maximize = scip.getObjectiveSense() == "maximize"
    result.status, result.objective, result.has_solution = Status.UNBOUNDED, None, False
    result.bound = math.inf if maximize else -math.inf
    warn_at_caller(f"{why}: the model is unbounded (SCIP took a point at its infinity, or "
                   "near it, for an optimum)")
