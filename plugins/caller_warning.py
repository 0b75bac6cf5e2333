"""Warnings that point at the user's line: the first frame outside coplug, however deep the
call that raised them (a fixed stacklevel broke whenever a solve path grew a frame)."""

from __future__ import annotations

import sys
import warnings


def caller_stacklevel() -> int:
    """The `stacklevel` of the first frame, above the function calling this, whose module is
    not part of coplug."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("coplug."):
        level += 1
        frame = frame.f_back
    return level


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn(message)` attributed to the user's code that called into coplug."""
    warnings.warn(message, category, stacklevel=caller_stacklevel())
