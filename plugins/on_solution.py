"""A function called at each new best solution the solver finds, with the solution read by
Pyomo variable: log progress, keep the improving solutions, or stop the solve once one is
good enough (Gurobi's MIPSOL callback; SCIP's form is an event handler on BESTSOLFOUND,
HiGHS's its improving-MIP-solution callback)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables, replace_expressions
from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

from coplug.plugins.base import UserCallbackPlugin, checked_plugin_name, checked_user_function
from coplug.plugins.errors import InputError
from coplug.plugins.integral_rows import integral_rows, tightened_feastol, violations
from coplug.plugins.lazy import SolutionView
from coplug.plugins.lazy_rounds import LoadedValues
from coplug.plugins.linear_terms import linear_terms
from coplug.plugins.modeldata import any_solver_zero
from coplug.plugins.results import Result
from coplug.plugins.varmap import VarMap


class OnSolution(UserCallbackPlugin):
    """Call ``callback(solution, objective)`` at each new best solution of a SCIP or HiGHS
    solve (HiGHS calls it for MIPs only: an LP has no improving solutions).

    ``solution`` is a `SolutionView` (``solution[m.x[i]]``), valid during the call only;
    ``objective`` is the solution's objective value in the model's own sense. Returning
    True stops the solve (status ``interrupted``, with that solution loaded; either solver
    stops at its next interrupt check and loads its best point by then, which may be
    better, and HiGHS ends ``optimal`` where it had proven that first); anything else goes
    on, and no solution is handed on after a stop. An exception raised by `callback` stops
    the solve and comes out of `solve()`.
    A solution that SCIP's tolerance lets miss an all-integer row with large coefficients
    (which `solve` would discard by solving again at a tighter tolerance) is not passed on
    (counted as `skipped`): stopping at it left that infeasible point as the answer.
    """

    calls_back_after_loading = True  # `finish` may hand on the loaded solution

    def __init__(self, callback: Callable[[SolutionView, float], Any],
                 name: str = "on_solution") -> None:
        self.callback = checked_user_function(
            callback, "OnSolution needs a function callback(solution, objective)")
        self.name = checked_plugin_name(name)
        self._var_map: VarMap | None = None
        self._stats: dict[str, Any] = {}
        self._rows: list[Any] = []
        self._objective: Any = None  # a nonlinear objective's expression (see attach)
        self._last: float | None = None  # the objective of the last solution handed on
        self._maximize = False
        self._block: Any = None  # the solved block, whose loaded values `finish` hands on
        self._held = False  # a run whose points are not the model's (see `held`)

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        """Include the event handler that catches SCIP's new best solutions."""
        self.bind(scip_model, var_map)
        self._var_map = var_map
        self._stats = {"calls": 0, "skipped": 0, "stopped": False, "seconds": 0.0}
        self._last, self._maximize = None, maximizes(var_map.block)
        self._block = var_map.block
        self._rows = misjudged_rows(scip_model)
        self._objective = objective_to_evaluate(var_map)
        try:
            scip_model.includeEventhdlr(_BestSolution(self), self.name,
                                        "calls a Python function at each new best solution")
        except Exception as exc:  # PySCIPOpt raises a bare Exception for SCIP's error code
            raise InputError(f"SCIP refused the event handler {self.name!r} ({exc}); give "
                             "each OnSolution of a solve a name of its own") from exc

    def attach_highs(self, highs: Any, columns: dict[int, int], block: Any,
                     rejects: Callable[[Any], bool] | None = None) -> None:
        """Subscribe to HiGHS's improving MIP solutions; `columns` maps id(Pyomo variable)
        to its HiGHS column; a point `rejects(values)` calls one `solve` would discard
        (it misses a row once its integers are rounded) is skipped.

        A stop interrupts HiGHS at its next interrupt check through a flag of this plugin
        (`resume_highs` clears it for a solve again): highspy's `cancelSolve` and the
        callback's interrupt flag stay set across runs, so the second solve of the same
        model interrupted itself at once and had no solution."""
        self._failure, self._stats = None, {"calls": 0, "skipped": 0, "stopped": False,
                                             "seconds": 0.0}
        self._last, self._maximize = None, maximizes(block)
        self._block = block
        self._halt, self._clear = False, False

        def halt() -> None:
            self._halt = True

        def improving(event: Any) -> None:
            if self._failure is not None or self._halt:  # an error or a stop: no more calls
                return
            values = event.data_out.mip_solution
            if rejects is not None and rejects(values):
                self._stats["skipped"] += 1
                return
            try:
                view = SolutionView(columns, values.__getitem__)
                self._call(view, event.data_out.objective_function_value, halt)
            except BaseException as exc:  # the user's (KeyboardInterrupt too): raised after
                if self._failure is None:
                    self._failure = exc
                halt()

        def interrupt(event: Any) -> None:
            if self._halt:
                event.interrupt()
            elif self._clear:  # the flag a stop of an earlier run left set
                event.interrupt(False)
            self._clear = False

        highs.cbMipImprovingSolution.subscribe(improving)
        for checks in (highs.cbMipInterrupt, highs.cbSimplexInterrupt, highs.cbIpmInterrupt):
            checks.subscribe(interrupt)

    def resume_highs(self) -> None:
        """HiGHS solves again (its first answer discarded): a stop asked in the first run
        no longer holds (an error still does)."""
        if self._failure is None:
            self._halt, self._clear = False, True

    @property
    def stopped_solve(self) -> bool:
        """Whether `callback` stopped this solve (SCIP then reports a user interrupt)."""
        return bool(self._stats.get("stopped"))

    @contextmanager
    def held(self) -> Iterator[None]:
        """Within the block no SCIP solution is handed on: the run that settles 'infeasible
        or unbounded' solves at a zero objective, and handed `callback` its points with 0
        as their objective."""
        self._held = True
        try:
            yield
        finally:
            self._held = False

    def statistics(self) -> dict[str, Any]:
        """Calls of `callback`, solutions skipped (missing an all-integer row), whether it
        stopped the solve, seconds spent in it."""
        return dict(self._stats)

    def new_best(self) -> None:
        """SCIP found a new best solution: hand it to `callback`, stop if it says so."""
        if self._stats["stopped"] or self._held:  # a stop: SCIP finds more before its
            return  # interrupt check, and no more are handed on
        scip = self._scip
        sol = scip.getBestSol()
        if self._rows and violations(self._rows, lambda var: scip.getSolVal(sol, var)):
            self._stats["skipped"] += 1
            return
        view = SolutionView.of_scip(scip, sol, self._var_map)
        objective = evaluated(self._objective, view, lambda: scip.getSolObjVal(sol))
        self._call(view, objective, scip.interruptSolve)

    def finish(self, result: Result) -> None:
        """The solve is over, its solution loaded: hand that solution on when it beats the
        last one handed on, after the fact (HiGHS does not pass every last solution to its
        callback: 1 of 200 random MIPs ended at 24.905 with the last call at 24.796)."""
        if not result.has_solution or result.objective is None or self._failure is not None \
                or self._stats.get("stopped"):  # told to stop: no solution after that one
            return
        final = float(result.objective)
        if self._last is not None and not self._beats(final, self._last):
            return
        self._call(LoadedValues(self._block), final, lambda: None)

    def _beats(self, objective: float, than: float) -> bool:
        """Whether `objective` is better than `than` beyond round-off."""
        margin = 1e-9 * max(1.0, abs(than))
        return objective > than + margin if self._maximize else objective < than - margin

    def _call(self, view: Any, objective: float, stop_solve: Callable[[], Any]) -> None:
        """Hand one solution to `callback`, timed; `stop_solve()` if it returns True."""
        started = time.perf_counter()
        self._last = float(objective)
        try:
            stop = self.callback(view, float(objective))
        finally:
            self._stats["calls"] += 1
            self._stats["seconds"] += time.perf_counter() - started
        if _says_stop(stop):
            self._stats["stopped"] = True
            stop_solve()


def _says_stop(returned: Any) -> bool:
    """Whether a callback's return value asks to stop: True, numpy's too (a comparison with
    a numpy number gives np.True_, which `is True` missed, so the solve went on)."""
    return isinstance(returned, (bool, np.bool_)) and bool(returned)


def maximizes(block: Any) -> bool:
    """Whether the solved block's active objective maximizes."""
    objective = None if block is None else next(
        block.component_data_objects(pyo.Objective, active=True), None)
    return objective is not None and objective.sense == pyo.maximize


def misjudged_rows(scip_model: Any) -> list[Any]:
    """The all-integer rows SCIP's tolerance may let a solution miss, which `solve` checks
    exactly (none when its tolerance judges them all)."""
    feastol = float(scip_model.getParam("numerics/feastol"))
    rows = integral_rows(scip_model, feastol)
    return rows if tightened_feastol(rows, feastol) < feastol else []


def objective_to_evaluate(var_map: VarMap) -> Any:
    """The solved block's objective expression where SCIP's objective values are not its
    values (`solve(m.b)` solves `m.b`'s, not `m.obj`), else None. A nonlinear objective SCIP
    minimizes as a variable of its own bounding it (a linear one it takes natively, see
    `scip_objective.use_native_objective`), which its first solutions leave loose (100000 for a
    point whose objective is 205.6); a linear one with a coefficient SCIP drops as a zero
    (SOLVER_ZERO) it values without that term (a pool held 9e-8 for a point worth 16)."""
    if var_map.block is None:
        return None
    objective = next(var_map.block.component_data_objects(pyo.Objective, active=True), None)
    if objective is None:
        return None
    terms = linear_terms(objective.expr)
    if terms is not None and not any_solver_zero(terms.coefs):
        return None
    return objective.expr


def evaluated(expr: Any, view: SolutionView, scip_value: Callable[[], float]) -> float:
    """`expr` at the values `view` reads; SCIP's own objective value where there is no
    expression or it cannot be evaluated there (a point just outside a function's domain)."""
    value = None if expr is None else value_at(expr, view)
    return scip_value() if value is None else value


def value_at(expr: Any, view: SolutionView) -> float | None:
    """`expr` at the values `view` reads, substituted (the model's variables keep theirs);
    None where it cannot be evaluated there (a point just outside a function's domain)."""
    values = {id(v): view[v] for v in identify_variables(expr, include_fixed=False)}
    try:
        return float(pyo.value(replace_expressions(expr, values)))
    except (ArithmeticError, ValueError):
        return None


class _BestSolution(Eventhdlr):
    """SCIP's side of `OnSolution`."""

    def __init__(self, owner: OnSolution) -> None:
        self.owner = owner

    def eventinit(self):
        self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexit(self):
        self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexec(self, event):
        try:
            self.owner.new_best()
        except BaseException as exc:  # the user's (KeyboardInterrupt too): raised after
            self.owner.fail(exc)
