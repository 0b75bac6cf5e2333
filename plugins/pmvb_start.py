"""PMVB as a primal heuristic (``mode="start"``): search the likely region briefly, then
solve the whole model warm-started from what it found.

Step 1 solves the model with a PMVB rule that keeps only the likely child (the two
Hoeffding hyperplanes), a node limit and no root cuts: a cheap search of the region where
the predictor says the optimum lies. Step 2 solves the unchanged model with step 1's best
solution as a MIP start (`solve(model, warmstart=True)`). Step 2 alone decides status,
objective and bound, so the answer is exact whatever the prediction; a good prediction
only hands SCIP a strong incumbent before its presolve. Because step 1 is a heuristic,
tighter hyperplanes than branching would use pay off here (lower q, e.g. 0.3).
"""

from __future__ import annotations

import numbers
import time
from typing import Any

import numpy as np
import pyomo.environ as pyo

from coplug.plugins.errors import InputError
from coplug.plugins.limits import checked_scip_int
from coplug.plugins.pmvb import _NO_RESTARTS, PMVBBranching, planes_hold, steps_options
from coplug.plugins.results import Result, Status

# Step 1: no cutting rounds at the root (its LP alone feeds the predictor) and no restarts
# (a restart would drop the likely child's hyperplanes).
_LIKELY_SETTINGS = {**_NO_RESTARTS, "separating/maxroundsroot": 0}
# A step-1 answer about the whole model (no hyperplanes were added) needs no step 2.
_FINAL = {Status.OPTIMAL, Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED}


def solve_pmvb_start(
    model: pyo.Block,
    predictor: Any = "lp",
    threshold: float | None = None,
    confidence: float | None = None,
    time_limit: float | None = None,
    likely_nodes: int = 50,
    **params: Any,
) -> Result:
    """Likely region first (at most `likely_nodes` nodes), then the whole model from its
    best solution. Times and nodes are summed over both steps; `params` apply to both
    (step 1 overrides root cuts, restarts and the node limit); `time_limit` to both
    together. ``result.extra["pmvb_start"]`` reports step 1."""
    from coplug.plugins.bridge import as_solve_arguments, solve

    time_limit, params = steps_options("solve_pmvb_start", time_limit, params)
    if "warmstart" in params:
        raise InputError("solve_pmvb_start makes its own warm start; drop warmstart=")
    likely_nodes = checked_scip_int("PMVB likely_nodes", likely_nodes, 1)
    user_nodes = _user_node_limit(params.get("limits/nodes", -1))  # SCIP: -1 is no limit
    if user_nodes >= 0:  # a user's limit (np.int64, 2.0, 0 too) also bounds step 1
        likely_nodes = min(likely_nodes, user_nodes)
    start = time.perf_counter()
    rule = PMVBBranching(predictor, threshold, confidence, mode="branch")
    rule.only_likely = True
    step1 = solve(model, plugins=[rule], time_limit=time_limit,
                  **as_solve_arguments({**params, **_LIKELY_SETTINGS,
                                        "limits/nodes": likely_nodes}))
    report = _step1_report(rule, step1)
    if rule.root_planes is None and step1.status in _FINAL:
        return _with_report(step1, step1, report, rule)
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    if step1.status is Status.INTERRUPTED or (left is not None and left <= 0):
        return _with_report(_cut_short(step1, rule), step1, report, rule)
    step2 = solve(model, time_limit=left, warmstart=step1.has_solution,
                  **as_solve_arguments(params))
    report["start_accepted"] = step2.extra.get("warmstart", {}).get("accepted")
    return _with_report(step2, step1, report, rule)


def _user_node_limit(value: Any) -> int:
    """The caller's limits/nodes as an int, checked as solve() checks it: step 1 replaces
    it, so a bad value would otherwise go unnoticed whenever step 1 answers alone."""
    numeric = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if not numeric or not float(value).is_integer():
        raise InputError(f"SCIP parameter 'limits/nodes' takes an integer, got {value!r}")
    if value < -1:
        raise InputError(f"SCIP parameter 'limits/nodes' must be -1 (no limit) or a node "
                         f"count, got {value!r}")
    return int(value)


def _in_likely_region(rule: PMVBBranching) -> bool | None:
    """Whether the point loaded in the Pyomo model lies in the likely region (None without
    hyperplanes or without values)."""
    if rule.root_planes is None:
        return None
    upper, lower, ru, rl = rule.root_planes
    if any(v.value is None for v in (*upper, *lower)):
        return None
    return planes_hold(sum(v.value for v in upper), sum(v.value for v in lower), ru, rl)


def _step1_report(rule: PMVBBranching, step1: Result) -> dict[str, Any]:
    """What step 1 did: its status, the hyperplanes and, when its best solution lies in the
    likely region, that solution's objective (it may come from a heuristic outside it)."""
    stats = rule.statistics()
    inside = step1.has_solution and _in_likely_region(rule)
    return {
        "likely_status": step1.status.value,
        "likely_objective": step1.objective if inside else None,
        "likely_held": None,
        "likely_nodes": step1.nodes,
        "likely_time": step1.time,
        "n_upper": stats["n_upper"], "rhs_upper": stats["rhs_upper"],
        "n_lower": stats["n_lower"], "rhs_lower": stats["rhs_lower"],
        "start_accepted": None,
    }


def _cut_short(step1: Result, rule: PMVBBranching) -> Result:
    """Step 1's solution as the answer when it was interrupted or no time is left for step
    2: step 1's status (time_limit when it finished in time), and the root's bound, since
    step 1's own bound covers only the likely region."""
    status = Status.INTERRUPTED if step1.status is Status.INTERRUPTED else Status.TIME_LIMIT
    bound = step1.bound if rule.root_planes is None else rule._stats.root_bound
    return Result(status=status, solver="scip", objective=step1.objective, bound=bound,
                  has_solution=step1.has_solution)  # no step 2: it adds no nodes or time


def _with_report(final: Result, step1: Result, report: dict[str, Any],
                 rule: PMVBBranching) -> Result:
    """`final` with both steps' nodes and time, PMVB's statistics and the step-1 report;
    `likely_held` says whether the final solution lies in the likely region."""
    if final is step1:
        nodes, seconds = step1.nodes, step1.time
    else:
        nodes, seconds = step1.nodes + final.nodes, step1.time + final.time
    held = _in_likely_region(rule) if final.has_solution else None
    report["likely_held"] = held
    stats = {**step1.plugin_stats, "pmvb": {**step1.plugin_stats.get("pmvb", {}),
                                            "likely_held": held}}
    return Result(
        status=final.status, solver="scip", objective=final.objective, bound=final.bound,
        nodes=nodes, time=seconds, has_solution=final.has_solution,
        plugin_stats=stats, extra={**final.extra, "pmvb_start": report},
    )
