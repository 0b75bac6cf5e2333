"""Race SCIP and HiGHS on one Pyomo model: each solves it in a process of its own, the first
to reach a verdict (optimal, infeasible, unbounded) wins, the others are stopped, and the
winner's point is loaded into the model. Which solver is faster depends on the model
(HiGHS took the facility extensive forms of `benchmarks/benders_facility.py` 2.75x faster
than SCIP); the race needs no guess, at a price: on 2 shared cores it ran at 0.75x of the
faster solver alone, and 1.2x faster than always taking SCIP (`benchmarks/solver_race.py`).

The processes are forked (POSIX), so the model is not pickled (Pyomo models built with
lambda rules cannot be). Each child resets HiGHS's thread scheduler (the parent's worker
threads do not survive the fork, and a HiGHS solve there waited on them forever) and takes
output-capture locks of its own (Pyomo's is a multiprocessing lock shared across the fork:
a racer stopped while it held one left the parent waiting on it for good). Plugins,
native options and import Suffixes (duals) do not cross the process boundary: `race`
takes none and fills no Suffix; use `solve` for those.
"""

from __future__ import annotations

import math
import multiprocessing
import sys
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

import pyomo.environ as pyo
from pyomo.core.staleflag import StaleFlagManager

from coplug.plugins.bridge import available_solvers, solve
from coplug.plugins.errors import InputError, SolverNotAvailableError
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.results import Result, Status

# Statuses that end the race: nothing a slower solver says can improve on them.
VERDICTS = frozenset({Status.OPTIMAL, Status.INFEASIBLE, Status.UNBOUNDED,
                      Status.INFEASIBLE_OR_UNBOUNDED})
# Seconds a racer may run past the time limit before it is stopped (it stops itself at the
# limit; this covers its model build and the trip back).
GRACE = 30.0
# Seconds given, after Ctrl-C, for the racers to hand back what they have.
INTERRUPT_GRACE = 10.0


def race(model: pyo.Block, solvers: Sequence[str] = ("scip", "highs"),
         time_limit: float | None = None, tee: bool = False,
         warmstart: bool = False) -> Result:
    """Solve `model` with each of `solvers` at once; the first verdict wins (`result.solver`
    names it) and its point is loaded. Without a verdict (time limits) the best point
    found wins. `result.extra["race"]` has each racer's status and seconds, or why it has
    none (stopped, failed)."""
    names = _checked_solvers(solvers)
    time_limit = checked_time_limit(time_limit)
    context = _fork_context()
    variables = list(model.component_data_objects(pyo.Var, descend_into=True))
    start = time.perf_counter()
    racers = {name: _launch(context, model, variables, name, time_limit, tee, warmstart)
              for name in names}
    outcomes: dict[str, Any] = {}
    try:
        status = _collect(racers, outcomes, _deadline(start, time_limit))
    finally:
        _stop(racers)
    return _finish(model, variables, names, outcomes, status, time.perf_counter() - start)


def _checked_solvers(solvers: Any) -> list[str]:
    """The racers' names, each a solver `solve` knows, at least one, each once."""
    if isinstance(solvers, str) or not isinstance(solvers, Sequence) or not solvers:
        raise InputError(f"solvers must be a list of solver names, got {solvers!r}")
    names = [str(name).lower() for name in solvers]
    unknown = [name for name in names if name not in available_solvers() or name == "lap"]
    if unknown:
        raise InputError(f"race takes solvers among 'scip' and 'highs', got {unknown}")
    if len(set(names)) < len(names):
        raise InputError(f"a solver appears twice in the race: {names}")
    return names


def _fork_context() -> Any:
    """multiprocessing's fork context; a clear error where there is none (Windows)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        raise SolverNotAvailableError("race forks a process per solver, which this platform "
                                      "cannot; call solve() once per solver instead")
    return multiprocessing.get_context("fork")


def _launch(context: Any, model: pyo.Block, variables: list[Any], name: str,
            time_limit: float | None, tee: bool, warmstart: bool) -> tuple[Any, Connection]:
    """Start one racer; its end of the pipe is closed here so a crash reads as EOF."""
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_racer, name=f"coplug-race-{name}", daemon=True,
                              args=(send, model, variables, name, time_limit, tee, warmstart))
    process.start()
    send.close()
    return process, receive


def _racer(send: Connection, model: pyo.Block, variables: list[Any], name: str,
           time_limit: float | None, tee: bool, warmstart: bool) -> None:
    """In the child: solve, and send back ("ok", result, values) or ("error", exception)."""
    try:
        _private_locks()
        _reset_highs_scheduler()
        result = solve(model, solver=name, time_limit=time_limit, tee=tee,
                       warmstart=warmstart)
        values = [var.value for var in variables]
        send.send(("ok", _portable(result), values))
    except BaseException as exc:  # whatever stopped it, the parent decides
        send.send(("error", _portable_error(exc)))
    finally:
        send.close()


def _private_locks() -> None:
    """Give the child its own output-capture locks: Pyomo's `capture_output` lock and tqdm's
    write lock are multiprocessing locks shared across the fork, and a racer stopped while
    it held one (HiGHS's banner is captured at each build) left the parent's next solve
    waiting on it for good."""
    import threading

    from pyomo.common import dependencies

    dependencies.capture_output_lock = threading.Lock()
    tqdm = sys.modules.get("tqdm")
    if tqdm is not None:
        tqdm.tqdm.set_lock(threading.RLock())


def _reset_highs_scheduler() -> None:
    """Drop the HiGHS worker threads inherited from the parent (gone after the fork)."""
    try:
        import highspy
    except ImportError:
        return
    highspy.Highs.resetGlobalScheduler(False)


def _portable(result: Result) -> Result:
    """`result` without what may not pickle: plugin statistics and extras become their
    JSON-ready form."""
    data = result.to_dict()
    return Result(status=result.status, solver=result.solver, objective=result.objective,
                  bound=result.bound, nodes=result.nodes, time=result.time,
                  has_solution=result.has_solution, extra=data.get("extra", {}))


def _portable_error(exc: BaseException) -> BaseException:
    """`exc` itself when it pickles (coplug's errors do), else a RuntimeError saying it."""
    import pickle

    try:
        pickle.dumps(exc)
        return exc
    except Exception:  # an exception type that does not pickle: keep its message
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _deadline(start: float, time_limit: float | None) -> float | None:
    """When the last racer must have answered."""
    return None if time_limit is None else start + time_limit + GRACE


def _collect(racers: dict[str, tuple[Any, Connection]], outcomes: dict[str, Any],
             deadline: float | None) -> Status | None:
    """Read answers until a verdict, until every racer answered, or until the deadline;
    Ctrl-C (which reaches the racers too: each stops with what it has) gives them a
    moment to answer and returns `interrupted`."""
    try:
        _read_until_verdict(racers, outcomes, deadline)
        return None
    except KeyboardInterrupt:
        _read_until_verdict(racers, outcomes, time.perf_counter() + INTERRUPT_GRACE,
                            stop_at_verdict=False)
        return Status.INTERRUPTED


def _read_until_verdict(racers: dict[str, tuple[Any, Connection]], outcomes: dict[str, Any],
                        deadline: float | None, stop_at_verdict: bool = True) -> None:
    """Receive racers' answers into `outcomes` (by name)."""
    waiting = {conn: name for name, (_, conn) in racers.items() if name not in outcomes}
    while waiting:
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            return
        for conn in wait(list(waiting), timeout=left):
            name = waiting.pop(conn)
            try:
                outcomes[name] = conn.recv()
            except (EOFError, OSError):
                outcomes[name] = ("error", RuntimeError(f"the {name} process ended without "
                                                        "an answer"))
            if stop_at_verdict and outcomes[name][0] == "ok" and (
                    outcomes[name][1].status in VERDICTS):
                return


def _stop(racers: dict[str, tuple[Any, Connection]]) -> None:
    """Stop every racer still running and reap them all."""
    for process, conn in racers.values():
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        conn.close()


def _finish(model: pyo.Block, variables: list[Any], names: list[str],
            outcomes: dict[str, Any], status: Status | None, seconds: float) -> Result:
    """The winning result, its point loaded; the first racer's error when none answered."""
    answers = {name: outcome for name, outcome in outcomes.items() if outcome[0] == "ok"}
    if not answers:
        for name in names:
            if name in outcomes:
                raise outcomes[name][1]
        raise SolverNotAvailableError("no racer answered before the time limit")
    winner = _winner(model, names, answers)
    _, result, values = answers[winner]
    StaleFlagManager.mark_all_as_stale()
    if result.has_solution:
        for var, value in zip(variables, values, strict=True):
            if not var.fixed and value is not None:
                var.set_value(value, skip_validation=True)
    result.extra["race"] = {name: _summary(outcomes.get(name)) for name in names}
    result.extra["race"]["winner"] = winner
    result.time = seconds
    if status is Status.INTERRUPTED and result.status not in VERDICTS:
        result.status = Status.INTERRUPTED
    return result


def _winner(model: pyo.Block, names: list[str], answers: dict[str, Any]) -> str:
    """The racer with a verdict (the first to arrive), else the one with the best point."""
    for name, (_, result, _) in answers.items():
        if result.status in VERDICTS:
            return name
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    sign = -1.0 if objective is not None and objective.sense == pyo.maximize else 1.0

    def rank(name: str) -> tuple[int, float]:
        result = answers[name][1]
        if not result.has_solution or result.objective is None:
            return 1, math.inf
        return 0, sign * result.objective

    return min((name for name in names if name in answers), key=rank)


def _summary(outcome: Any) -> dict[str, Any]:
    """What one racer did, for `result.extra["race"]`."""
    if outcome is None:
        return {"status": "stopped"}
    if outcome[0] == "error":
        return {"status": "failed", "error": f"{type(outcome[1]).__name__}: {outcome[1]}"}
    result = outcome[1]
    return {"status": result.status.value, "seconds": result.time,
            "objective": result.objective}
