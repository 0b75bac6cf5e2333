"""One solve at a time in a process. Pyomo's output capture swaps the process's stdout and
stderr, file descriptors included, so solves run from parallel threads tangled each other's
output and crashed ("Captured output ... does not match sys.stdout"); the entry points that
solve take this lock, and threads take turns. Re-entrant: a callback may solve again."""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = [threading.RLock()]


@contextmanager
def one_solve_at_a_time() -> Iterator[None]:
    """Hold the process's solve lock within the block (a `with` inside the entry point, not
    a decorator: the warnings `solve` gives name the caller's line, one frame up)."""
    with _LOCK[0], _streams_present():
        yield


@contextmanager
def warning_filters() -> Iterator[None]:
    """`warnings.catch_warnings()` under the solve lock: the filter list is the process's, and
    two threads saving and restoring it in turn left one's temporary "ignore" filter
    installed for good (k_best from threads silenced the lazy-rounds warning thereafter)."""
    with one_solve_at_a_time(), warnings.catch_warnings():
        yield


@contextmanager
def _streams_present() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` as streams within the block, the missing ones (None
    under pythonw, or where the process started with the descriptor closed) writing to the
    null device: Pyomo's output capture flushed None, and HiGHS solves and both solvers'
    file reads failed with "'NoneType' object has no attribute 'flush'"."""
    missing = [name for name in ("stdout", "stderr") if getattr(sys, name) is None]
    if not missing:
        yield
        return
    with open(os.devnull, "w") as sink:
        for name in missing:
            setattr(sys, name, sink)
        try:
            yield
        finally:
            for name in missing:
                if getattr(sys, name) is sink:
                    setattr(sys, name, None)


def fresh_lock() -> None:
    """A new, free lock for a forked child: a thread of the parent that was solving at the
    fork held the old one, and nobody in the child would ever release it."""
    _LOCK[0] = threading.RLock()


if hasattr(os, "register_at_fork"):  # every fork (multiprocessing's default on Linux too)
    os.register_at_fork(after_in_child=fresh_lock)
