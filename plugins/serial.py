"""One solve at a time in a process. Pyomo's output capture swaps the process's stdout and
stderr, file descriptors included, so solves run from parallel threads tangled each other's
output and crashed ("Captured output ... does not match sys.stdout"); the entry points that
solve take this lock, and threads take turns. Re-entrant: a callback may solve again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = [threading.RLock()]


@contextmanager
def one_solve_at_a_time() -> Iterator[None]:
    """Hold the process's solve lock within the block (a `with` inside the entry point, not
    a decorator: the warnings `solve` gives name the caller's line, one frame up)."""
    with _LOCK[0]:
        yield


def fresh_lock() -> None:
    """A new, free lock for a forked child: a thread of the parent that was solving at the
    fork held the old one, and nobody in the child would ever release it."""
    _LOCK[0] = threading.RLock()
