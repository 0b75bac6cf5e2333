"""A primal heuristic written as a Python function over Pyomo variables: after each node's
LP it gets the LP solution and may propose values (a rounding, a repair, a greedy
completion), which SCIP checks against the whole model and keeps if feasible (Gurobi's
cbSetSolution; SCIP's form is a heuristic plugin)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyomo.environ as pyo
from pyomo.core.base.var import VarData
from pyscipopt import SCIP_HEURTIMING, SCIP_LPSOLSTAT, SCIP_RESULT, Heur

from coplug.plugins.base import UserCallbackPlugin, checked_plugin_name, checked_user_function
from coplug.plugins.errors import InputError
from coplug.plugins.lazy import SolutionView
from coplug.plugins.limits import SCIP_INT_MAX, checked_scip_int
from coplug.plugins.on_solution import value_at
from coplug.plugins.varmap import VarMap

# What `propose` returns: a ComponentMap {var: value} (Pyomo variables are not hashable, so
# not a dict) or (var, value) pairs; None for no proposal.
Proposal = Mapping[VarData, float] | Iterable[tuple[VarData, float]] | None


class UserHeuristic(UserCallbackPlugin):
    """Call ``propose(lp_solution)`` after the LP of every `freq`-th depth's nodes whose LP
    was solved to optimality (an infeasible node's LP has no solution to give); it returns
    values as ``(pyomo_var, value)`` pairs or a Pyomo ``ComponentMap``, or None for no
    proposal.

    Variables it leaves out take their value in the LP solution; a fixed Pyomo variable is
    skipped (the solve takes it as its value). SCIP keeps a proposal only if it is feasible
    for the whole model (within SCIP's tolerances) and better than its incumbent.
    `max_calls` bounds the calls per `solve()` (both runs where it solves again at a
    tighter tolerance; the statistics count both). An exception raised by `propose` stops the
    solve and comes out of `solve()`.
    """

    def __init__(self, propose: Callable[[SolutionView], Proposal],
                 freq: int = 1, max_calls: int = 1000, priority: int = -1000,
                 name: str = "user_heuristic") -> None:
        self.propose = checked_user_function(
            propose, "UserHeuristic needs a function propose(lp_solution)")
        self.freq = checked_scip_int("UserHeuristic freq", freq, 0)
        self.max_calls = checked_scip_int("UserHeuristic max_calls", max_calls, 1)
        self.priority = checked_scip_int("UserHeuristic priority", priority, -SCIP_INT_MAX)
        self.name = checked_plugin_name(name)
        self._var_map: VarMap | None = None
        self._stats: dict[str, Any] = {}

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        """Include the heuristic, run after each node's LP at depths that are multiples of
        `freq`."""
        self.bind(scip_model, var_map)
        self._var_map = var_map
        self._stats = {"calls": 0, "proposed": 0, "accepted": 0, "seconds": 0.0}
        try:
            scip_model.includeHeur(
                _Heur(self), self.name, "a Python function proposing solutions", "U",
                priority=self.priority, freq=self.freq, freqofs=0, maxdepth=-1,
                timingmask=SCIP_HEURTIMING.AFTERLPNODE,
            )
        except Exception as exc:  # PySCIPOpt raises a bare Exception for SCIP's error code
            raise InputError(f"SCIP refused the heuristic {self.name!r} ({exc}); give each "
                             "UserHeuristic of a solve a name of its own") from exc

    def statistics(self) -> dict[str, Any]:
        """Calls of `propose`, proposals made, proposals SCIP kept, seconds in `propose`."""
        return dict(self._stats)

    def run(self, heur: Any) -> Any:
        """One call: ask `propose`, try what it returns; a SCIP_RESULT. Not at a node
        whose LP has no optimal solution: SCIP calls the heuristic there too, with every LP
        value SCIP_INVALID (1e99), and a solution started from them kept an invalid
        objective that `trySol` took as the best ever (a bounded model ended "unbounded")."""
        stats, scip = self._stats, self._scip
        if stats["calls"] >= self.max_calls or scip.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
            return SCIP_RESULT.DIDNOTRUN
        started = time.perf_counter()
        try:
            values = self.propose(SolutionView.of_scip(scip, None, self._var_map))
        finally:
            stats["calls"] += 1
            stats["seconds"] += time.perf_counter() - started
        if values is None:
            return SCIP_RESULT.DIDNOTFIND
        stats["proposed"] += 1
        incumbent = scip.getPrimalbound()
        if scip.trySol(self._solution(heur, values)):
            if scip.getPrimalbound() != incumbent:  # stored is not kept: it must improve
                stats["accepted"] += 1
            return SCIP_RESULT.FOUNDSOL
        return SCIP_RESULT.DIDNOTFIND

    def _solution(self, heur: Any, values: Proposal) -> Any:
        """A SCIP solution: the LP solution, overwritten by `values`."""
        scip, var_map = self._scip, self._var_map
        sol = scip.createOrigSol(heur)  # in the original space: presolve's fixings and
        for var in scip.getVars(transformed=False):  # aggregations cannot refuse a value
            scip.setSolVal(sol, var, scip.getSolVal(None, var))
        for var, value in _pairs(values):
            if not isinstance(var, VarData):
                raise InputError(f"propose returned a key that is not one variable: {var!r}")
            if var not in var_map:
                if var.fixed:
                    continue
                raise InputError(f"propose returned variable {var.name!r}, which is not in "
                                 "the solved model")
            scip.setSolVal(sol, var_map.to_scip(var), _number(var, value))
        if var_map.epigraph is not None:
            # a nonlinear objective's epigraph variable takes what it bounds at `sol` (left
            # at the LP's value, it made every proposal infeasible: none was kept)
            epigraph_var, bounded = var_map.epigraph
            value = value_at(bounded, SolutionView.of_scip(scip, sol, var_map))
            if value is not None:
                scip.setSolVal(sol, epigraph_var, value)
        return sol


def _number(var: VarData, value: Any) -> float:
    """A proposed value as a finite float (a Pyomo Param's too); an InputError naming the
    variable for anything else (float() of None or an array named neither)."""
    try:
        number = float(pyo.value(value, exception=False))
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise InputError(f"propose returned {value!r} for {var.name!r}; give a finite number")
    return number


def _pairs(values: Proposal) -> Iterable[tuple[Any, Any]]:
    """(var, value) pairs of a proposal; an InputError for anything else."""
    if isinstance(values, Mapping):
        return values.items()
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InputError(f"propose must return (variable, value) pairs, a ComponentMap or "
                         f"None, got {type(values).__name__}")
    pairs = list(values)
    if not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
        raise InputError("propose must return (variable, value) pairs, a ComponentMap or "
                         "None")
    return pairs


class _Heur(Heur):
    """SCIP's side of `UserHeuristic`."""

    def __init__(self, owner: UserHeuristic) -> None:
        super().__init__()
        self.owner = owner

    def heurexec(self, heurtiming, nodeinfeasible):
        try:
            return {"result": self.owner.run(self)}
        except BaseException as exc:  # the user's (KeyboardInterrupt too): raised after
            self.owner.fail(exc)
            return {"result": SCIP_RESULT.DIDNOTRUN}
