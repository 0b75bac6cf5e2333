"""Ctrl-C around solves. SCIP catches SIGINT itself (status `interrupted`, with its
incumbent); HiGHS notices an interrupt only through its Python callbacks, where a raised
KeyboardInterrupt became "Solve error" (the incumbent lost) or, with no callbacks on, was
not noticed until the solve ended. Here Ctrl-C asks HiGHS to stop instead.

A solve that absorbs Ctrl-C this way answers with what it has, which is right for one solve
(`coplug solve` prints it and exits 130) but let a run of many solves go on as if nothing
had been pressed; such stops are counted, and `stops_on_interrupt` turns them back into
KeyboardInterrupt for the demo and the scripts (`exit_on_interrupt`)."""

from __future__ import annotations

import ctypes
import functools
import io
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from coplug.plugins.errors import CoplugError, InputError
from coplug.plugins.serial import one_solve_at_a_time


def _in_main_thread() -> bool:
    """Signal handlers can only be set from the main thread."""
    return threading.current_thread() is threading.main_thread()


_RECORDED = [0]
_RAISING_IN: list[int | None] = [None]  # the process whose stops_on_interrupt block is open


def record_interrupt() -> None:
    """Count a solve or search that stopped early on Ctrl-C and returned what it had; inside
    `stops_on_interrupt` raise KeyboardInterrupt, as Python does when no solver caught it."""
    _RECORDED[0] += 1
    if _RAISING_IN[0] == os.getpid():
        raise KeyboardInterrupt


def interrupts_recorded() -> int:
    """How many Ctrl-Cs a solve or search has absorbed in this process."""
    return _RECORDED[0]


@contextmanager
def stops_on_interrupt() -> Iterator[None]:
    """Within the block a Ctrl-C that a solver absorbed (SCIP catches the signal and returns
    its incumbent, HiGHS is cancelled, a ranking returns what it found) raises
    KeyboardInterrupt: a run of many solves (the demo, a benchmark) stops as the user asked,
    and an error that a partial answer led to becomes KeyboardInterrupt too."""
    before = interrupts_recorded()
    saved, _RAISING_IN[0] = _RAISING_IN[0], os.getpid()
    try:
        yield
    except Exception:
        if interrupts_recorded() > before:
            raise KeyboardInterrupt from None
        raise
    finally:
        _RAISING_IN[0] = saved


def exit_on_interrupt(main: Callable[[], int]) -> NoReturn:
    """Run a script's `main` under `stops_on_interrupt` and exit with its code; Ctrl-C that
    the script does not handle itself exits 130 with one line, not a traceback, and so does
    a coplug error it does not handle (exit 2 for bad input, as argparse's, else 1): a
    benchmark's size below a family's minimum had ended in the InputError's traceback."""
    try:
        with stops_on_interrupt():
            code = main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    except CoplugError as exc:
        print(f"{os.path.basename(sys.argv[0])}: error: {exc}", file=sys.stderr)
        code = 2 if isinstance(exc, InputError) else 1
    sys.exit(code)


@contextmanager
def capture_output(*args: Any, **kwargs: Any) -> Iterator[Any]:
    """Pyomo's `capture_output`, except that Ctrl-C stays a KeyboardInterrupt: one that lands
    while Pyomo restores the streams came out as RuntimeError("KeyboardInterrupt: ..."). It
    holds the solve lock: the capture swaps the process's streams, and one outside the lock
    (a Benders subproblem or a staged HiGHS model built in a thread) deadlocked a HiGHS
    solve in another."""
    from pyomo.common.tee import capture_output as pyomo_capture_output

    with interrupt_kept(), one_solve_at_a_time(), pyomo_capture_output(*args, **kwargs) as out:
        yield out


@contextmanager
def capture_to_file() -> Iterator[io.StringIO]:
    """File descriptors 1 and 2 sent to a temporary file for the block, its text in the
    yielded buffer once the block ends. For C code that prints while it holds Python's
    lock (SCIP's readers and IIS finder): Pyomo's capture sends the output through a pipe
    that a Python thread empties, and SCIP's reader, printing past the pipe's 64 kB (a
    warning per column of a 5 MB file), waited on it for good."""
    said = io.StringIO()
    with interrupt_kept(), one_solve_at_a_time():
        sink = _sink()
        saved: list[int] = []
        try:
            _flush_all()
            saved.append(os.dup(1))
            saved.append(os.dup(2))
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield said
        finally:
            _put_back(saved)
            sink.seek(0)
            said.write(sink.read().decode(errors="replace"))


_SINKS: dict[int, Any] = {}  # the process's temporary file for captures, by process id


def _sink() -> Any:
    """This process's temporary file for `capture_to_file`, emptied: one file reused (a
    Ctrl-C landing while a new one opened or closed leaked its descriptor), one per process
    (a forked child would share the parent's offset)."""
    sink = _SINKS.get(os.getpid())
    if sink is None:
        sink = _SINKS.setdefault(os.getpid(), tempfile.TemporaryFile())
    sink.seek(0)
    sink.truncate()
    return sink


def _put_back(saved: list[int]) -> None:
    """Flush, point descriptors 1 and 2 back at `saved`'s copies and close those; a Ctrl-C
    landing on the way is raised once all is back (one left the streams on the deleted
    temporary file for good)."""
    steps = [_flush_all, *(functools.partial(os.dup2, fd, target)
                           for target, fd in zip((1, 2), saved, strict=False)),
             *(functools.partial(_close_quietly, fd) for fd in saved)]
    interrupted, done = False, 0
    while done < len(steps):
        try:
            steps[done]()
            done += 1
        except KeyboardInterrupt:  # each step may run again: dup2 and close alike
            interrupted = True
    if interrupted:
        raise KeyboardInterrupt


def _close_quietly(fd: int) -> None:
    """Close `fd`, already closed or not (a step run again after an interrupt)."""
    try:
        os.close(fd)
    except OSError:
        pass


def _flush_all() -> None:
    """Flush Python's and the C library's buffered standard streams (C code's output held in
    stdio's buffer would otherwise reach the stream after it was put back)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library to load (not on Linux or macOS)
        pass


@contextmanager
def interrupt_kept() -> Iterator[None]:
    """Ctrl-C as KeyboardInterrupt where Pyomo's stream capture, restoring the streams, made
    it RuntimeError("KeyboardInterrupt: ...") (around `capture_output`, and around Pyomo's
    own captures: its HiGHS interface builds a model inside one), or numba wrapped it in
    SystemError("... returned a result with an exception set") (a press while a cached
    kernel loads)."""
    try:
        yield
    except RuntimeError as exc:
        if any(line.startswith("KeyboardInterrupt:") for line in str(exc).splitlines()):
            raise KeyboardInterrupt from None
        raise
    except SystemError as exc:
        if _caused_by_interrupt(exc):
            raise KeyboardInterrupt from None
        raise


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt lies in `exc`'s chain of causes."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def generate_iis(scip: Any) -> Any:
    """SCIP's `generateIIS()`, with a Ctrl-C it caught raised as KeyboardInterrupt (and
    counted): SCIP's IIS finder stops on the signal and answers as if done, and
    `explain_infeasible` went on filtering and returned. PySCIPOpt tells no interrupt, so
    SCIP's own message on it ("pressed CTRL-C") is looked for in its output."""
    with capture_to_file() as log:  # the process's streams, through a file (no pipe to fill)
        found = scip.generateIIS()
    if "pressed CTRL-C" in log.getvalue():
        record_interrupt()
        raise KeyboardInterrupt
    return found


@contextmanager
def sigint_cancels(cancel: Callable[[], Any]) -> Iterator[None]:
    """Within the block Ctrl-C calls `cancel()` (the solver stops at its next check and
    reports an interrupt with what it has) instead of raising KeyboardInterrupt."""
    if not _in_main_thread():
        yield
        return
    saved = signal.getsignal(signal.SIGINT)
    presses: list[int] = []

    def pressed(_signum: int, _frame: Any) -> None:
        _RECORDED[0] += 1  # counted even when the solver had finished and ignores cancel()
        presses.append(1)
        cancel()

    signal.signal(signal.SIGINT, pressed)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved if saved is not None else signal.default_int_handler)
    if presses and _RAISING_IN[0] == os.getpid():
        raise KeyboardInterrupt  # inside stops_on_interrupt: stop now, whatever HiGHS answered


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Ctrl-C within the block is held until the block ends, then handed to the handler it
    would have met (Python's KeyboardInterrupt, an ignored SIGINT, the caller's own): files
    written together (a checkpoint and its JSON, every kind of a family) are written whole."""
    if not _in_main_thread():
        yield
        return
    saved = signal.getsignal(signal.SIGINT)
    presses: list[int] = []
    signal.signal(signal.SIGINT, lambda _signum, _frame: presses.append(1))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved if saved is not None else signal.default_int_handler)
        if presses:
            signal.raise_signal(signal.SIGINT)


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
