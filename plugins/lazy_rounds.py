"""Lazy constraints with HiGHS, which has no callback for them: solve, add the rows the
solution violates to the model, solve again, until a solution violates none.

The rows live in a temporary ConstraintList on the model during the rounds and are removed
after, so the model is left as it was (its variables hold the last solution). Each round is
a whole `solve` with its checks; the time limit covers all rounds together.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pyomo.environ as pyo
from pyomo.common.modeling import unique_component_name
from pyomo.core.base.var import VarData
from tqdm import tqdm

from coplug.plugins.duals import ADDED_ROWS, dual_request, load_duals
from coplug.plugins.errors import InputError, SolverError
from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.results import Result, Status

# A round limit that only a `separate` returning new violated rows forever reaches.
MAX_ROUNDS = 10_000
# Rows judged at the loaded values: met within this much of a side's size (at least 1),
# about the solvers' own feasibility tolerances.
FEASIBILITY = 1e-6


class LoadedValues:
    """A solution view over the values loaded into the Pyomo variables."""

    def __getitem__(self, var: VarData) -> float:
        if not isinstance(var, VarData):
            raise InputError(f"a solution is read one variable at a time (m.x[i]), got {var!r}")
        if var.value is None:
            raise InputError(f"variable {var.name!r} has no value: is it in the solved model?")
        return float(var.value)

    def __call__(self, var: VarData) -> float:
        return self[var]


def feasible_le(a: float, b: float) -> bool:
    """a <= b within FEASIBILITY relative to the larger size (at least 1)."""
    return a - b <= FEASIBILITY * max(1.0, abs(a), abs(b))


def all_lazy(plugins: Sequence[Any]) -> bool:
    """Whether `plugins` are all LazyConstraints (what rounds can serve), and some."""
    return bool(plugins) and all(isinstance(p, LazyConstraints) for p in plugins)


def solve_in_rounds(model: pyo.Block, lazies: Sequence[LazyConstraints],
                    run: Callable[[float | None], Result], time_limit: float | None) -> Result:
    """Solve with `run(time_left)` and add violated lazy rows until none is violated; the
    last round's result, with `extra["lazy_rounds"]` and all rounds' time and nodes."""
    for lazy in lazies:
        lazy.reset()
    rows = pyo.ConstraintList()
    model.add_component(unique_component_name(model, "_coplug_lazy_rows"), rows)
    started, rounds, seconds, nodes = time.perf_counter(), 0, 0.0, 0
    try:
        with tqdm(desc="lazy rounds", unit="round", file=sys.stderr,
                  disable=not sys.stderr.isatty(), leave=False) as bar:
            while True:
                left = None if time_limit is None else time_limit - (time.perf_counter()
                                                                     - started)
                result = run(None if left is None else max(left, 1e-3))
                rounds, seconds, nodes = rounds + 1, seconds + result.time, nodes + result.nodes
                bar.update()
                if not result.has_solution:
                    break
                violated = [(lazy, row) for lazy in lazies
                            for row in lazy.violated_at(LoadedValues(), feasible_le)]
                if not violated:
                    break
                if result.status is not Status.OPTIMAL or rounds >= MAX_ROUNDS:
                    _unproven(result, len(violated), rounds)
                    break
                for lazy, row in violated:
                    rows.add(row.expr)
                    lazy.record(row)
    finally:
        model.del_component(rows)
    _no_duals(model, result)
    result.time, result.nodes = seconds, nodes
    result.extra["lazy_rounds"] = rounds
    result.plugin_stats = {lazy.name: lazy.statistics() for lazy in lazies}
    return result


def _no_duals(model: pyo.Block, result: Result) -> None:
    """Empty `m.dual`/`m.rc`, with the reason: the last round's duals priced rows that are
    gone, so they are no duals of the model."""
    request = dual_request(model, read=False)
    if request is not None:
        request.reason = ADDED_ROWS
        load_duals(request, result)


def _unproven(result: Result, violated: int, rounds: int) -> None:
    """A round stopped short of optimal (a time or node limit, or MAX_ROUNDS) with a
    solution that violates lazy rows: it is no solution of the model, so none is reported."""
    if rounds >= MAX_ROUNDS and result.status is Status.OPTIMAL:
        raise SolverError(f"lazy constraints: still {violated} violated rows after "
                          f"{rounds} rounds; does `separate` return new rows forever?")
    warnings.warn(f"lazy constraints: the solve stopped ({result.status.value}) at a point "
                  f"that violates {violated} lazy rows; no solution is reported",
                  UserWarning, stacklevel=3)
    result.has_solution = False
    result.objective = None
