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


_RECORDED = [0]


def record_interrupt() -> None:
    """Count a solve or search that stopped early on Ctrl-C and returned what it had: the
    caller of several solves (the demo) learns from the count that the user asked to stop."""
    _RECORDED[0] += 1


def interrupts_recorded() -> int:
    """How many solves or searches have stopped on Ctrl-C in this process."""
    return _RECORDED[0]


@contextmanager
def stops_on_interrupt() -> Iterator[None]:
    """Within the block, a solve that absorbed Ctrl-C (SCIP catches the signal and returns
    its incumbent) raises KeyboardInterrupt when the block ends, as does an error that such a
    partial answer led to: a caller running many solves stops as the user asked."""
    before = interrupts_recorded()
    try:
        yield
    except Exception:
        if interrupts_recorded() > before:
            raise KeyboardInterrupt from None
        raise
    if interrupts_recorded() > before:
        raise KeyboardInterrupt


@contextmanager
def sigint_cancels(cancel: Callable[[], Any]) -> Iterator[None]:
    """Within the block Ctrl-C calls `cancel()` (the solver stops at its next check and
    reports an interrupt with what it has) instead of raising KeyboardInterrupt."""
    if not _in_main_thread():
        yield
        return
    saved = signal.getsignal(signal.SIGINT)

    def pressed(_signum: int, _frame: Any) -> None:
        record_interrupt()  # counted even when the solver had finished and ignores cancel()
        cancel()

    signal.signal(signal.SIGINT, pressed)
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
