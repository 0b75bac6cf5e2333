"""PMVB prefix mode, the paper's reference scheme: the likely region first as its own SCIP
model, then the two complementary regions with the incumbent as objective limit.

Exact whatever the prediction: the three regions partition the feasible set, and a region
is pruned only by an objective limit some solution already reaches.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyscipopt import quicksum

from coplug.plugins.pmvb import _NO_RESTARTS, PMVBBranching, steps_options
from coplug.plugins.results import Result, Status
from coplug.plugins.varmap import VarMap


class _RegionPlugin:
    """Adds global cardinality constraints over Pyomo variables and an objective limit."""

    name = "pmvb_region"
    adds_rows = True  # SCIP's "infeasible" is the region's (under the limit), not the model's

    def __init__(self, constraints: list[tuple[list[Any], str, int]], objlimit: float | None):
        self.constraints = constraints
        self.objlimit = objlimit

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        for k, (variables, sense, rhs) in enumerate(self.constraints):
            expr = quicksum(var_map.to_scip(v) for v in variables)
            cons = expr >= rhs if sense == ">=" else expr <= rhs
            scip_model.addCons(cons, name=f"pmvb_region_{k}")
        if self.objlimit is not None:
            scip_model.setObjlimit(self.objlimit)


def solve_pmvb_prefix(
    model: pyo.Block,
    predictor: Any = "lp",
    threshold: float | None = None,
    confidence: float | None = None,
    time_limit: float | None = None,
    **params: Any,
) -> Result:
    """PMVB prefix mode: solve the likely region, then its complement under the incumbent.

    Step 1 solves the model with a PMVB rule that keeps only the likely child (SCIP's
    in-tree restarts off: that lone child becomes SCIP's root); steps 2 and 3 solve the
    complementary regions (``sum_U x <= r_U - 1``; ``sum_U x >= r_U, sum_L x >= r_L + 1``)
    as fresh SCIP models with the best objective so far as objective limit. The best
    solution is loaded into `model`; nodes and time are summed over all steps. `params`
    (e.g. ``limits/nodes``) apply to each step's SCIP model; `time_limit` to all together.
    Under a limit the status is the limit hit and the bound the weakest over the regions,
    the root's for a region never reached. An interrupted step (Ctrl-C) ends the solve:
    the status is interrupted, with the best solution so far. A model without an active
    objective stops at the first step that finds a solution (any solution is optimal).
    """
    from coplug.plugins.bridge import as_solve_arguments, solve

    time_limit, params = steps_options("solve_pmvb_prefix", time_limit, params)
    start = time.perf_counter()
    rule = PMVBBranching(predictor, threshold, confidence, mode="branch")
    rule.only_likely = True
    first = solve(model, plugins=[rule], time_limit=time_limit,
                  **as_solve_arguments({**params, **_NO_RESTARTS}))
    steps = [first]
    maximize, feasibility = _is_maximize(model), not _has_objective(model)
    best_obj, best_x = _snapshot(model, first)
    if rule.root_planes is None:
        first.extra["pmvb_prefix"] = {"steps": 1, "likely_objective": None,
                                      "step_status": [first.status.value]}
        return first
    upper, lower, ru, rl = rule.root_planes
    regions = []
    if ru is not None:
        regions.append([(upper, "<=", ru - 1)])
    if rl is not None:
        regions.append(([(upper, ">=", ru)] if ru is not None else []) + [(lower, ">=", rl + 1)])
    for region in regions:
        left = None if time_limit is None else time_limit - (time.perf_counter() - start)
        if _stop_before_next(steps[-1], feasibility and best_x is not None, left):
            break
        result = solve(model, plugins=[_RegionPlugin(region, best_obj)], time_limit=left,
                       **as_solve_arguments(params))
        steps.append(result)
        obj, x = _snapshot(model, result)
        if x is not None and (best_x is None or _improves(obj, best_obj, maximize)):
            best_obj, best_x = obj, x
    if best_x is not None:
        for var, value in best_x.items():
            var.set_value(value, skip_validation=True)
    return _combine(steps, first, _Found(best_x is not None, best_obj, feasibility),
                    len(regions) + 1, time.perf_counter() - start, maximize,
                    rule._stats.root_bound)


@dataclass(frozen=True)
class _Found:
    """What the steps found: whether any solution, the best objective (None without an
    active objective), and whether the model has no objective (any solution is optimal)."""

    solution: bool
    objective: float | None
    feasibility: bool


def _stop_before_next(last: Result, solved_feasibility: bool, left: float | None) -> bool:
    """True when no further region should be solved: the last step was interrupted
    (Ctrl-C), a model without objective already has its solution, or no time is left."""
    out_of_time = left is not None and left <= 0
    return last.status is Status.INTERRUPTED or solved_feasibility or out_of_time


def _improves(obj: float | None, best: float | None, maximize: bool) -> bool:
    """True when `obj` beats the incumbent `best` in the model's sense (never without an
    objective value)."""
    if obj is None:
        return False
    return best is None or (obj > best if maximize else obj < best)


def _has_objective(model: pyo.Block) -> bool:
    """True when the model has an active objective (else it is a feasibility problem)."""
    return next(model.component_data_objects(pyo.Objective, active=True), None) is not None


def _is_maximize(model: pyo.Block) -> bool:
    """True when the model's (single) active objective is maximized."""
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    return bool(objs) and objs[0].sense == pyo.maximize


def _snapshot(model: pyo.Block, result: Result) -> tuple[float | None, ComponentMap | None]:
    """The objective and variable values a solve loaded into `model`, if it found a solution."""
    if not result.has_solution:
        return None, None
    values = ComponentMap(
        (v, v.value) for v in model.component_data_objects(pyo.Var, descend_into=True)
    )
    return result.objective, values


def _combine(
    steps: list[Result], first: Result, found: _Found, n_planned: int, wall: float,
    maximize: bool, root_bound: float | None,
) -> Result:
    """One Result for the prefix solve: proven optimal only if every region was closed
    (or a model without objective has a solution), else interrupted when a step was, else
    the first limit a step hit (time when the time ran out between steps)."""
    best = found.objective
    status = _prefix_status(steps, found, n_planned)
    pmvb = first.plugin_stats.get("pmvb", {})
    return Result(
        status=status,
        solver="scip",
        objective=best,
        bound=best if status is Status.OPTIMAL else _prefix_bound(
            steps, n_planned, best, maximize, root_bound),
        nodes=sum(r.nodes for r in steps),
        time=sum(r.time for r in steps),
        has_solution=found.solution,
        plugin_stats=first.plugin_stats,
        extra={
            "pmvb_prefix": {
                "steps": len(steps),
                # step 1's incumbent may come from a root heuristic outside the likely region
                "likely_objective": first.objective if pmvb.get("likely_held") else None,
                "likely_held": pmvb.get("likely_held"),
                "step_status": [r.status.value for r in steps],
                "step_nodes": [r.nodes for r in steps],
                "wall": round(wall, 3),
            }
        },
    )


def _prefix_status(steps: list[Result], found: _Found, n_planned: int) -> Status:
    """The prefix solve's status from its steps' (see `_combine`)."""
    closed = {Status.OPTIMAL, Status.INFEASIBLE}
    if found.solution and found.feasibility:
        return Status.OPTIMAL
    if len(steps) == n_planned and all(r.status in closed for r in steps):
        return Status.OPTIMAL if found.solution else Status.INFEASIBLE
    if any(r.status is Status.INTERRUPTED for r in steps):
        return Status.INTERRUPTED
    return next((r.status for r in steps if r.status not in closed), Status.TIME_LIMIT)


def _prefix_bound(
    steps: list[Result], n_planned: int, best: float | None, maximize: bool,
    root_bound: float | None,
) -> float | None:
    """The weakest region bound (a region found infeasible under the objective limit is
    bounded by the incumbent; one never searched by the root's bound), None when unknown.
    The root's bound holds for every region: a region's own weaker or missing bound (a
    step whose epigraph misjudged its point reports none) gives way to it, unless the
    incumbent refutes it or there is none (an infeasible model keeps no bound)."""
    bounds = [best if r.status is Status.INFEASIBLE else r.bound for r in steps]
    bounds += [root_bound] * (n_planned - len(steps))
    if root_bound is not None and best is not None and (
            root_bound >= best if maximize else root_bound <= best):  # not refuted by best
        tighter = min if maximize else max
        bounds = [root_bound if b is None else tighter(b, root_bound) for b in bounds]
    if any(b is None for b in bounds):
        return None
    return max(bounds) if maximize else min(bounds)
