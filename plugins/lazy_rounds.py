"""Lazy constraints with HiGHS, which has no callback for them: solve, add the rows the
solution violates to the model, solve again, until a solution violates none.

The rows live in a temporary ConstraintList on the model during the rounds and are removed
after, so the model is left as it was (its variables hold the last solution). Each round is
a whole `solve` with its checks; the time limit covers all rounds together.

A round that is unbounded gives no point to ask `separate` about, and rows it has not seen
yet may bound the model (or make it infeasible): the rounds go on in a box (every variable's
missing bounds set to +-BOX for a while) until a box's optimum meets every lazy row or the
box holds no point, and then solve once more without the box, with the rows found in it.
Only a model still unbounded then (no row `separate` gave for the box's points bounds it)
is reported unbounded.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import pyomo.environ as pyo
from pyomo.common.collections import ComponentSet
from pyomo.common.modeling import unique_component_name
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables
from pyomo.util.vars_from_expressions import get_vars_from_components

from coplug.plugins.bar import progress_bar
from coplug.plugins.base import plugins_statistics
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.duals import ADDED_ROWS, dual_request, load_duals
from coplug.plugins.errors import InputError, SolverError
from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.outer_variables import put_back, values_a_solve_may_set
from coplug.plugins.results import Result, Status

# A round limit that only a `separate` returning new violated rows forever reaches.
MAX_ROUNDS = 10_000
# Rows judged at the loaded values: met within this much absolutely, as HiGHS judges its own
# rows, plus ROUNDOFF of the sizes compared (the float sum of the terms). Relative to a side
# (as SCIP's tolerance is), x <= 1e6 passed x = 1000000.5, and a whole-number row with side
# 2e8 passed a point 150 over it: neither row was added, and HiGHS, which would have judged
# them (and coplug its whole-number rows exactly), never saw them.
FEASIBILITY = 1e-6
ROUNDOFF = 1e-12
# The box an unbounded round is solved in again: far beyond a model's own values, well
# inside HiGHS's infinity (1e20).
BOX = 1e9
_OPEN = (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


class LoadedValues:
    """A solution view over the values loaded into the Pyomo variables of a solved `block`:
    those its active rows and objectives use, and fixed ones, which read as their values.
    Any other variable is named, as SCIP's view names it: a lazy row over a variable the
    solve never saw was judged at whatever value it held (-100, outside its bounds) and
    never added, and HiGHS's rounds came back "optimal" at a point that breaks it."""

    def __init__(self, block: pyo.Block) -> None:
        self._solved = ComponentSet(get_vars_from_components(
            block, (pyo.Constraint, pyo.Objective), active=True, include_fixed=False,
            descend_into=True))

    def __getitem__(self, var: VarData) -> float:
        if not isinstance(var, VarData):
            raise InputError(f"a solution is read one variable at a time (m.x[i]), got {var!r}")
        if var not in self._solved and not var.fixed:
            raise InputError(f"variable {var.name!r} is not in the solved model")
        if var.value is None:
            raise InputError(f"variable {var.name!r} has no value: is it in the solved model?")
        return float(var.value)

    def __call__(self, var: VarData) -> float:
        return self[var]

    def values_of(self, variables: Sequence[VarData]) -> list[float]:
        """`[self[v] for v in variables]`, as `SolutionView.values_of`."""
        return [self[var] for var in variables]


def feasible_le(a: float, b: float) -> bool:
    """a <= b within FEASIBILITY, plus ROUNDOFF of the larger size."""
    return a - b <= FEASIBILITY + ROUNDOFF * max(abs(a), abs(b))


def any_lazy(plugins: Sequence[Any]) -> bool:
    """Whether some of `plugins` are LazyConstraints."""
    return any(isinstance(p, LazyConstraints) for p in plugins)


def all_lazy(plugins: Sequence[Any]) -> bool:
    """Whether `plugins` are all LazyConstraints (what rounds can serve), and some."""
    return bool(plugins) and all(isinstance(p, LazyConstraints) for p in plugins)


def solve_in_rounds(model: pyo.Block, lazies: Sequence[LazyConstraints],
                    run: Callable[[float | None], Result], time_limit: float | None) -> Result:
    """Solve with `run(time_left)` and add violated lazy rows until none is violated; the
    last round's result, with `extra["lazy_rounds"]`, all rounds' nodes, their wall time
    as `time` and the solver's share of it as `extra["solver_time"]`."""
    for lazy in lazies:
        lazy.reset()
    before = values_a_solve_may_set(model)  # put back when no round ends with a solution
    solved = LoadedValues(model)  # the variables of the model as given (the rows use them)
    rows = pyo.ConstraintList()
    model.add_component(unique_component_name(model, "_coplug_lazy_rows"), rows)
    started, rounds, seconds, nodes = time.perf_counter(), 0, 0.0, 0
    boxed: list[tuple[VarData, str, Any]] = []  # the sides in the box now, their bounds
    box_done, box_empty = False, False  # a box since the last added row; it held no point
    try:
        with progress_bar(desc="lazy rounds", unit="round", file=sys.stderr, leave=False,
                          disable=sys.stderr is None or not sys.stderr.isatty()) as bar:
            while True:
                left = None if time_limit is None else time_limit - (time.perf_counter()
                                                                     - started)
                result = run(None if left is None else max(left, 1e-3))
                rounds, seconds, nodes = rounds + 1, seconds + result.time, nodes + result.nodes
                bar.update()
                if result.status in _OPEN and not boxed and not box_done \
                        and rounds < MAX_ROUNDS:
                    boxed = _box(model)
                    if boxed:
                        continue
                violated = [(lazy, row) for lazy in lazies
                            for row in lazy.violated_at(solved, feasible_le)
                            ] if result.has_solution else []
                if boxed and not violated and rounds < MAX_ROUNDS and (
                        result.status is Status.INFEASIBLE
                        or result.status is Status.OPTIMAL and result.has_solution):
                    # the box's optimum meets every row found (or no point is in the box):
                    # solve without the box, with those rows
                    box_empty = result.status is Status.INFEASIBLE
                    _unbox(boxed)
                    boxed, box_done = [], True
                    continue
                if not result.has_solution or not violated:
                    break
                if result.status is Status.OPTIMAL and time_limit is not None and \
                        time.perf_counter() - started >= time_limit:
                    result.status = Status.TIME_LIMIT  # no time is left for another round
                if result.status is not Status.OPTIMAL or rounds >= MAX_ROUNDS:
                    _unproven(result, len(violated), rounds)
                    break
                for lazy, row in violated:
                    rows.add(row.frozen())
                    lazy.record(row)
                box_done = False
        if not result.has_solution:
            put_back(before)  # as a solve without a solution leaves them, not a past round's
    except BaseException:
        put_back(before)  # `separate` raised (or Ctrl-C there): no unchecked round's point
        raise
    finally:
        _unbox(boxed)
        model.del_component(rows)
        duals = dual_request(model, read=False)  # empty: they priced the rows just removed
    if boxed:
        _boxed_stop(result)  # stopped in the box: its verdict is the box's, not the model's
    elif box_empty and result.status is Status.UNBOUNDED:
        # no point in the box, unbounded outside it: rows not seen yet may cut it all off
        result.status = Status.INFEASIBLE_OR_UNBOUNDED
    if duals is not None:
        duals.reason = ADDED_ROWS
        load_duals(duals, result)
    # the rounds' wall time, the user's function's and the rebuilt rows' included (as SCIP's
    # solve counts them): the solvers' alone said 0.03 s of a solve stopped at 1 s
    result.time, result.nodes = time.perf_counter() - started, nodes
    result.extra["lazy_rounds"], result.extra["solver_time"] = rounds, seconds
    result.plugin_stats = plugins_statistics(lazies)
    return result


def _box(model: pyo.Block) -> list[tuple[VarData, str, Any]]:
    """Set the missing bounds of the model's unfixed variables to -BOX / BOX; each side set
    (variable, "lower" or "upper", the bound it had: None, -inf, a mutable Param), for
    `_unbox`. A side the variable has (its own or its domain's) is left alone: written back
    it would become the variable's own (a NonPositiveReals variable kept an upper bound 0
    once its domain changed)."""
    seen, held = ComponentSet(), []
    for part in (pyo.Constraint, pyo.Objective):
        for data in model.component_data_objects(part, active=True, descend_into=True):
            for var in identify_variables(data.expr, include_fixed=False):
                if var in seen or var.has_lb() and var.has_ub():
                    continue
                seen.add(var)
                if not var.has_lb():
                    held.append((var, "lower", var.lower))
                    var.setlb(-BOX)
                if not var.has_ub():
                    held.append((var, "upper", var.upper))
                    var.setub(BOX)
    return held


def _unbox(held: list[tuple[VarData, str, Any]]) -> None:
    """Give the sides `_box` set their own bounds back."""
    for var, side, bound in held:
        if side == "lower":
            var.lower = bound
        else:
            var.upper = bound


def _boxed_stop(result: Result) -> None:
    """A round in the box stopped short (a time or node limit, or MAX_ROUNDS): a point it
    found meets every lazy row and stays a solution, but no bound or verdict is the
    model's."""
    warn_at_caller("lazy constraints: the model without its lazy rows is unbounded and the "
                   f"solve stopped while solving it within a box of +-{BOX:g}; no bound or "
                   "verdict of the model")
    result.bound = None
    if result.status in (Status.OPTIMAL, Status.INFEASIBLE, *_OPEN):
        result.status = Status.FEASIBLE if result.has_solution else Status.UNKNOWN


def _unproven(result: Result, violated: int, rounds: int) -> None:
    """A round stopped short of optimal (a time or node limit, or MAX_ROUNDS) with a
    solution that violates lazy rows: it is no solution of the model, so none is reported."""
    if rounds >= MAX_ROUNDS and result.status is Status.OPTIMAL:
        raise SolverError(f"lazy constraints: still {violated} violated rows after "
                          f"{rounds} rounds; does `separate` return new rows forever?")
    warn_at_caller(f"lazy constraints: the solve stopped ({result.status.value}) at a point "
                   f"that violates {violated} lazy rows; no solution is reported")
    result.has_solution = False
    result.objective = None
