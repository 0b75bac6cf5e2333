"""Solve limits checked the same way by every backend (Pyomo bridge, files, LAP), and the
integer range of SCIP's plugin parameters (priorities, frequencies, depths)."""

from __future__ import annotations

import numbers
from typing import Any

from coplug.plugins.errors import InputError

# SCIP refuses time limits from its infinity (1e20) on; such a limit is no limit.
NO_LIMIT_FROM = 1e20


def checked_time_limit(time_limit: float | None) -> float | None:
    """A positive number of seconds as a Python float (a numpy float16 kept its type, and
    `perf_counter() + limit` rounded to inf past 65,504 s of uptime), None for no limit
    (inf, or 1e20 and above, too)."""
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
    ):
        raise InputError(f"time_limit must be a number of seconds, got {time_limit!r}")
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"time_limit must be positive, got {time_limit}")
    if time_limit is None:
        return None
    try:  # before comparing: a float16 overflowed casting 1e20
        seconds = float(time_limit)
    except OverflowError:  # 10**400 seconds
        return None
    return None if seconds >= NO_LIMIT_FROM else seconds


def zero_mip_gap(solver: Any, params: dict[str, Any]) -> dict[str, Any]:
    """`params` with HiGHS's relative MIP gap at 0 unless the caller set one: HiGHS calls a
    point within 1e-4 of the optimum optimal where SCIP closes the gap, so a front stepped
    past a point (179 of 180 on a 35-item knapsack) and a race's answer hung on which
    solver finished first."""
    highs = isinstance(solver, str) and solver.lower() == "highs"
    if highs and "mip_rel_gap" not in params:  # `options=` merged in already
        return {**params, "mip_rel_gap": 0.0}
    return params


# SCIP takes plugin priorities, frequencies and depths as C ints.
SCIP_INT_MAX = 2**31 - 1


def checked_scip_int(what: str, value: Any, low: int) -> int:
    """An integer in [low, SCIP_INT_MAX) (bools and fractions refused), else InputError
    naming `what` (e.g. "PMVB depth")."""
    whole = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not whole or not low <= int(value) < SCIP_INT_MAX:
        raise InputError(f"{what} must be an integer in [{low}, {SCIP_INT_MAX}), got {value!r}")
    return int(value)
