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

Ctrl-C stops the racers (passed on to them when it reached the parent alone), and the best
point they hand back within a few seconds wins, status `interrupted`. On Linux a racer dies
with the parent, even one killed outright. Without a time limit the race waits for a verdict
as `solve` would: a racer that never finishes, and no other with a verdict, keep it waiting.
"""

from __future__ import annotations

import builtins
import math
import multiprocessing
import os
import pickle
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

import pyomo.environ as pyo
from pyomo.core.staleflag import StaleFlagManager

from coplug.plugins.bridge import available_solvers, check_block, solve
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.duals import dual_request
from coplug.plugins.errors import (
    CoplugError,
    InputError,
    SolverError,
    SolverNotAvailableError,
    TimeLimitError,
)
from coplug.plugins.interrupts import record_interrupt
from coplug.plugins.limits import checked_time_limit, zero_mip_gap
from coplug.plugins.on_solution import maximizes
from coplug.plugins.outer_variables import used_outside
from coplug.plugins.results import Result, Status

# Statuses that end the race: nothing a slower solver says can improve on them.
VERDICTS = frozenset({Status.OPTIMAL, Status.INFEASIBLE, Status.UNBOUNDED,
                      Status.INFEASIBLE_OR_UNBOUNDED})
# Seconds a racer may run past the time limit before it is stopped (it stops itself at the
# limit; this covers its model build and the trip back).
GRACE = 30.0
# The longest single wait for answers (the loop waits again): the selector's timeout
# overflowed past about 25 days (time_limit=2.2e6 raised OverflowError).
WAIT_STEP = 3600.0
# Seconds given, after Ctrl-C, for the racers to hand back what they have.
INTERRUPT_GRACE = 10.0
# Seconds the racers get to answer a Ctrl-C before it is passed on to them: one typed at a
# terminal reached them already, and they stop sooner than a second one could cost an answer.
INTERRUPT_PASS_ON = 1.0


def race(model: pyo.Block, solvers: Sequence[str] = ("scip", "highs"),
         time_limit: float | None = None, tee: bool = False,
         warmstart: bool = False) -> Result:
    """Solve `model` with each of `solvers` at once; the first verdict wins (`result.solver`
    names it) and its point is loaded. Without a verdict (time limits) the best point
    found wins. `result.extra["race"]` has each racer's status and seconds, or why it has
    none (stopped, failed)."""
    check_block(model, "race()")
    names = _checked_solvers(solvers)
    time_limit = checked_time_limit(time_limit)
    context = _fork_context()
    variables = _race_variables(model)
    start = time.perf_counter()
    racers: dict[str, tuple[Any, Connection]] = {}
    outcomes: dict[str, Any] = {}
    try:
        for name in names:
            racers[name] = _launch(context, model, variables, name, time_limit, tee, warmstart)
        status = _collect(racers, outcomes, _deadline(start, time_limit))
    finally:
        _stop(racers)
    return _finish(model, variables, names, outcomes, status, time.perf_counter() - start)


def _checked_solvers(solvers: Any) -> list[str]:
    """The racers' names, each a solver `solve` knows, at least one, each once."""
    if isinstance(solvers, str) or not isinstance(solvers, Sequence):
        raise InputError(f"solvers must be a list of solver names, got {solvers!r}")
    if not solvers:
        raise InputError("solvers is empty: name at least one solver to race, such as "
                         "['scip', 'highs']")
    names = [str(name).lower() for name in solvers]
    unknown = [name for name in names if name not in available_solvers() or name == "lap"]
    if unknown:
        raise InputError(f"race takes solvers among 'scip' and 'highs', got {unknown}")
    if len(set(names)) < len(names):
        raise InputError(f"a solver appears twice in the race: {names}")
    return names


def _race_variables(model: pyo.Block) -> list[Any]:
    """The variables whose values come back: the block's own and, for a sub-block, those of
    the blocks above it that its active constraints and objectives use (`solve` loads those
    too)."""
    return [*model.component_data_objects(pyo.Var, descend_into=True), *used_outside(model)]


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
                              args=(send, model, variables, name, time_limit, tee, warmstart,
                                    os.getpid()))
    process.start()
    send.close()
    return process, receive


def _racer(send: Connection, model: pyo.Block, variables: list[Any], name: str,
           time_limit: float | None, tee: bool, warmstart: bool, parent: int) -> None:
    """In the child: solve, and send back ("ok", result, values, warnings) or ("error",
    exception); the warnings (category name, text) are the winner's to give in the parent."""
    try:
        _die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # not the parent's handler
        _private_locks()
        _reset_highs_scheduler()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            result = solve(model, solver=name, time_limit=time_limit, tee=tee,
                           warmstart=warmstart, **zero_mip_gap(name, {}))
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cost the answer
        notes = [(w.category.__name__, str(w.message)) for w in said]
        answer = ("ok", _portable(result), _loaded_values(variables), notes)
    except BaseException as exc:  # whatever stopped it, the parent decides
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        answer = ("error", _portable_error(name, exc))
    try:
        send.send(answer)
    except OSError:  # the parent stopped listening: nobody wants the answer
        pass
    finally:
        send.close()


def _die_with_parent(parent: int) -> None:
    """On Linux, have the kernel kill this racer when the parent dies: a parent killed
    outright cannot stop its racers, and one without a time limit would run on unseen."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: the racer ends with its solve
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def _loaded_values(variables: list[Any]) -> list[Any]:
    """Each variable's value where the solve set one (it is fresh), else None: a variable no
    solver saw keeps its value and stays stale, as after `solve`."""
    return [None if var.stale else var.value for var in variables]


def _private_locks() -> None:
    """Give the child its own output-capture locks: Pyomo's `capture_output` lock and tqdm's
    write lock are multiprocessing locks shared across the fork, and a racer stopped while
    it held one (HiGHS's banner is captured at each build) left the parent's next solve
    waiting on it for good (coplug's own solve lock is fresh in every forked child:
    `coplug.plugins.serial`)."""
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
    JSON-ready form, an extra that still does not pickle its repr."""
    extra = result.to_dict().get("extra", {})
    if not _survives_pickling(extra):
        extra = {key: value if _survives_pickling(value) else repr(value)
                 for key, value in extra.items()}
    return Result(status=result.status, solver=result.solver, objective=result.objective,
                  bound=result.bound, nodes=result.nodes, time=result.time,
                  has_solution=result.has_solution, extra=extra)


def _survives_pickling(value: Any) -> bool:
    """Whether `value` crosses the pipe: it pickles, and its pickle loads again."""
    try:
        pickle.loads(pickle.dumps(value))
        return True
    except Exception:  # any failure of either side means it does not
        return False


def _portable_error(name: str, exc: BaseException) -> BaseException:
    """`exc` itself when it is coplug's (or Ctrl-C) and crosses the pipe, else a SolverError
    naming it: the parent raises only what callers catch as coplug's errors, never a
    racer's SystemExit."""
    if isinstance(exc, (CoplugError, KeyboardInterrupt)) and _survives_pickling(exc):
        return exc
    return SolverError(f"the {name} racer failed: {type(exc).__name__}: {exc}")


def _deadline(start: float, time_limit: float | None) -> float | None:
    """When the last racer must have answered."""
    return None if time_limit is None else start + time_limit + GRACE


def _collect(racers: dict[str, tuple[Any, Connection]], outcomes: dict[str, Any],
             deadline: float | None) -> Status | None:
    """Read answers until a verdict, until every racer answered, or until the deadline;
    Ctrl-C (passed on to the racers that have not answered: each stops with what it has)
    gives them a moment to answer and returns `interrupted`."""
    try:
        _read_until_verdict(racers, outcomes, deadline)
        return None
    except KeyboardInterrupt:
        _read_until_verdict(racers, outcomes, time.perf_counter() + INTERRUPT_PASS_ON)
        _interrupt(racers, outcomes)
        _read_until_verdict(racers, outcomes, time.perf_counter() + INTERRUPT_GRACE)
        record_interrupt()
        return Status.INTERRUPTED


def _interrupt(racers: dict[str, tuple[Any, Connection]], outcomes: dict[str, Any]) -> None:
    """Send Ctrl-C to each racer yet to answer: a Ctrl-C that reached the parent alone (a
    signal from another program, a timer) would leave them solving on."""
    for name, (process, _) in racers.items():
        if name not in outcomes and process.pid is not None:
            try:
                os.kill(process.pid, signal.SIGINT)
            except ProcessLookupError:  # it ended meanwhile: its pipe says how
                pass


def _read_until_verdict(racers: dict[str, tuple[Any, Connection]], outcomes: dict[str, Any],
                        deadline: float | None) -> None:
    """Receive racers' answers into `outcomes` (by name) until one is a verdict, all have
    answered, or `deadline` passes."""
    waiting = {conn: name for name, (_, conn) in racers.items() if name not in outcomes}
    while waiting:
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            return
        for conn in wait(list(waiting), timeout=None if left is None else min(left, WAIT_STEP)):
            name = waiting.pop(conn)
            try:
                outcomes[name] = conn.recv()
            except Exception as exc:  # it died (EOF), or its answer did not load
                outcomes[name] = ("error", SolverError(
                    f"the {name} racer ended without an answer ({type(exc).__name__})"))
            if outcomes[name][0] == "ok" and outcomes[name][1].status in VERDICTS:
                return


def _stop(racers: dict[str, tuple[Any, Connection]]) -> None:
    """Stop every racer still running, reap them all and release their pipes: left to the
    garbage collector, a race that raised kept 4 descriptors open per call (its error's
    traceback held the processes)."""
    for process, conn in racers.values():
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        conn.close()
        if process.exitcode is not None:
            process.close()


def _finish(model: pyo.Block, variables: list[Any], names: list[str],
            outcomes: dict[str, Any], status: Status | None, seconds: float) -> Result:
    """The winning result, its point loaded; when none answered, KeyboardInterrupt after
    Ctrl-C, else the first racer's error, else TimeLimitError."""
    answers = {name: outcome for name, outcome in outcomes.items() if outcome[0] == "ok"}
    if not answers:
        if status is Status.INTERRUPTED:
            raise KeyboardInterrupt
        for name in names:
            if name in outcomes:
                raise outcomes[name][1]
        raise TimeLimitError(f"no racer answered within {GRACE:g} s after the time limit")
    winner = _winner(model, names, answers)
    _, result, values, notes = answers[winner]
    for category, text in dict.fromkeys(notes):  # each once, as the winner's solve gave them
        warn_at_caller(text, getattr(builtins, category, UserWarning))
    StaleFlagManager.mark_all_as_stale()
    dual_request(model, read=False)  # emptied: the racer's duals stay in its process
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
    for name, (_, result, _, _) in answers.items():
        if result.status in VERDICTS:
            return name
    sign = -1.0 if maximizes(model) else 1.0

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
