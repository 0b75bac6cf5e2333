"""Warnings that point at the user's line: the first frame outside coplug, Pyomo and
scikit-learn, however deep the call that raised them (a fixed stacklevel broke whenever a
solve path grew a frame; a solve through Pyomo's SolverFactory runs inside Pyomo's own
frames, an estimator's `fit_predict` or a Pipeline inside scikit-learn's)."""

from __future__ import annotations

import sys
import warnings

_OURS = ("coplug.", "pyomo.", "sklearn.")  # modules whose frames a warning skips on its way up


def caller_stacklevel() -> int:
    """The `stacklevel` of the first frame, above the function calling this, whose module is
    not part of coplug, Pyomo or scikit-learn."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_OURS):
        level += 1
        frame = frame.f_back
    return level


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn(message)` attributed to the user's code that called into coplug."""
    warnings.warn(message, category, stacklevel=caller_stacklevel())
