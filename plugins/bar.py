"""Progress bars (tqdm) that stand down where there is no stream to draw on: with stderr
closed (`2>&-`, pythonw) Python sets `sys.stderr` to None, and a tqdm bar on it failed the
call it was drawn for ("'NoneType' object has no attribute 'write'": explain_infeasible's
checks, a ranking, QUBO minimization, evolution, training)."""

from __future__ import annotations

import sys
from typing import Any

import tqdm


def on_terminal() -> bool:
    """Whether stderr is a terminal, where a command draws its progress lines (in a file or
    a pipe they are carriage-return redraws, not lines)."""
    return sys.stderr is not None and sys.stderr.isatty()


def progress_bar(*args: Any, **kwargs: Any) -> tqdm.tqdm:
    """`tqdm.tqdm(*args, **kwargs)` (looked up at the call, so a test may stand in for it),
    disabled where its stream (`file`, else stderr) is None."""
    if kwargs.get("file", sys.stderr) is None:
        kwargs["disable"] = True
    return tqdm.tqdm(*args, **kwargs)
