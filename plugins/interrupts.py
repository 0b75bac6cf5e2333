"""Ctrl-C around HiGHS solves. SCIP catches SIGINT itself (status `interrupted`, with its
incumbent); HiGHS notices an interrupt only through its Python callbacks, where a raised
KeyboardInterrupt became "Solve error" (the incumbent lost) or, with no callbacks on, was
not noticed until the solve ended. Here Ctrl-C asks HiGHS to stop instead."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def _in_main_thread() -> bool:
    """Signal handlers can only be set from the main thread."""
    return threading.current_thread() is threading.main_thread()


@contextmanager
def sigint_cancels(cancel: Callable[[], Any]) -> Iterator[None]:
    """Within the block Ctrl-C calls `cancel()` (the solver stops at its next check and
    reports an interrupt with what it has) instead of raising KeyboardInterrupt."""
    if not _in_main_thread():
        yield
        return
    saved = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda _signum, _frame: cancel())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved if saved is not None else signal.default_int_handler)


def highspy_interrupt() -> Any:
    """HiGHS's model status for a solve stopped by a user interrupt."""
    import highspy

    return highspy.HighsModelStatus.kInterrupt


class _InterruptWarning(logging.Filter):
    """Drops Pyomo's "Received unhandled status=kInterrupt" (the bridge reports it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "kInterrupt" not in record.getMessage()


@contextmanager
def pyomo_highs_interrupt_quiet() -> Iterator[None]:
    """Within the block Pyomo's HiGHS interface does not warn about an interrupt status,
    which `solve` maps to `interrupted` itself."""
    log = logging.getLogger("pyomo.contrib.solver.solvers.highs")
    quiet = _InterruptWarning()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)
