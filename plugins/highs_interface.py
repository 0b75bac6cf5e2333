"""Pyomo's contrib HiGHS interface without its process-wide output capture.

Pyomo's interface builds and runs HiGHS inside `capture_output(capture_fd=True)`, which
swaps `sys.stdout`, `sys.stderr` and file descriptors 1 and 2 for the whole process: while
a solve ran, other threads' prints vanished or raised "I/O operation on closed file",
user callbacks' prints were dropped, and processes forked meanwhile (`race`) held the
capture's pipe open. Here HiGHS writes its log through its logging callback to the
streams the solve tees to, and nothing else's output is touched.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TextIO

from pyomo.common.errors import ApplicationError
from pyomo.common.tee import TeeStream
from pyomo.contrib.solver.solvers.highs import Highs

from coplug.plugins.interrupts import capture_output
from coplug.plugins.serial import one_solve_at_a_time

_banner_kept = [False]


def new_highs() -> Any:
    """A `highspy.Highs` that logs to no console. HiGHS prints its banner at the first
    construction in a process, so only that one is built under a capture (and under the
    solve lock, the one lock the capture takes: a lock of its own, taken in the other
    order by a solve building its model, deadlocked two threads)."""
    import highspy

    with one_solve_at_a_time():
        if not _banner_kept[0]:
            with capture_output(capture_fd=True):
                highs = highspy.Highs()
            _banner_kept[0] = True
        else:
            highs = highspy.Highs()
    highs.setOptionValue("log_to_console", False)
    return highs


@contextmanager
def log_to(highs: Any, streams: Sequence[TextIO | None]) -> Iterator[None]:
    """Send HiGHS's log to `streams` while in the block (nowhere when there are none). A
    stream that fails to take a line gets no more: the log must not stop the solve (an
    OSError from a broken stdout came out of `solve`)."""
    live = [stream for stream in streams if stream is not None]
    if not live:
        yield
        return

    def write(event: Any) -> None:
        for stream in list(live):
            try:
                stream.write(event.message)
            except Exception:  # any failure of the caller's stream
                live.remove(stream)

    highs.cbLogging.subscribe(write)
    try:
        yield
    finally:
        highs.cbLogging.unsubscribe(write)
        for stream in live:
            with suppress(Exception):
                stream.flush()


class UncapturedHighs(Highs):
    """Pyomo's `Highs` with its log sent through HiGHS's logging callback (see the module)."""

    def set_instance(self, model: Any) -> None:
        """Build `model` in a new HiGHS, as Pyomo's `set_instance` does, uncaptured."""
        if self._last_results_object is not None:
            self._last_results_object.solution_loader.invalidate()
        if not self.available():
            raise ApplicationError(f"Solver {type(self).__qualname__} is not available "
                                   f"({self.available()}).")
        self._reinit()
        self._model = model
        self._solver_model = new_highs()
        with log_to(self._solver_model, self._active_config.tee):
            self.add_block(model)
            if self._objective is None:
                self.set_objective(None)

    def _solve(self) -> Any:
        """Set the run's options and run HiGHS, its log to the config's tee streams."""
        config = self._active_config
        highs = self._solver_model
        highs.setOptionValue("log_to_console", False)
        generic = {"threads": config.threads, "time_limit": config.time_limit,
                   "mip_rel_gap": config.rel_gap, "mip_abs_gap": config.abs_gap}
        for key, value in {**{k: v for k, v in generic.items() if v is not None},
                           **config.solver_options}.items():
            highs.setOptionValue(key, value)
        with log_to(highs, config.tee), printing_solver(highs, config.tee):
            config.timer.start("optimize")
            highs.HandleKeyboardInterrupt = True
            highs.run()
            config.timer.stop("optimize")
        return self._postsolve(io.StringIO())


def option_value(highs: Any, name: str) -> Any:
    """HiGHS's option `name` (highspy 1.16 returns (status, value), earlier ones the value)."""
    value = highs.getOptionValue(name)
    return value[1] if isinstance(value, tuple) else value


@contextmanager
def printing_solver(highs: Any, streams: Sequence[TextIO | None]) -> Iterator[None]:
    """The process's output captured (to `streams`) while HiGHS's PDLP solver runs: it
    prints its progress to descriptor 1 itself, past HiGHS's log (20 lines on stdout with
    tee=False); the other solvers log only through the callback."""
    if option_value(highs, "solver") != "pdlp":
        yield
        return
    live = [stream for stream in streams if stream is not None]
    with capture_output(TeeStream(*live) if live else io.StringIO(), capture_fd=True):
        yield
