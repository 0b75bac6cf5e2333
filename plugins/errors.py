"""Errors that coplug raises on purpose: each names what is wrong in one line."""

from __future__ import annotations


class CoplugError(Exception):
    """Base class: an error the user can act on, printed without a traceback by the CLI."""


class InputError(CoplugError, ValueError):
    """Bad input data: wrong shape, sign, NaN, a malformed file, an unknown name."""


class SolverNotAvailableError(CoplugError, RuntimeError):
    """The requested solver is not installed or not usable here."""


class UnsupportedModelError(CoplugError, ValueError):
    """The model uses a construct the chosen solver cannot take (e.g. nonlinear to HiGHS)."""


class SolverError(CoplugError, RuntimeError):
    """The solver stopped with an error of its own (its status named) and no answer."""


class TimeLimitError(CoplugError, TimeoutError):
    """A solve ran out of its time limit before it had a certified answer to return."""
