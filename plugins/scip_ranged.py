"""Ranged constraints `lo <= body <= hi` built right in SCIP.

Pyomo's SCIP interface (pyomo.contrib.solver, 6.10) builds them as `lo <= (body <= hi)`:
PySCIPOpt moves the body's constant off the right side only, so a body with a constant
gets the wrong left side (`-2 <= 2x + 1 <= 5`, min x: SCIP answered -1 instead of -1.5,
`5 <= x**2 + 3 <= 7` came back infeasible). `ExprCons(body, lhs, rhs)` shifts both sides.
The fix replaces Pyomo's handler only while it is the one with this fault.
"""

from __future__ import annotations

import numbers
from typing import Any

import pyomo.contrib.solver.solvers.scip.base as scip_base
from pyscipopt.scip import ExprCons

_FAULTY = scip_base._handle_ranged


def _ranged(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """`lo <= body <= hi` with the body's constant taken off both sides; sides that are not
    plain numbers (mutable Params become fixed SCIP variables) keep Pyomo's construction."""
    lower, body, upper = data
    if not all(isinstance(side, numbers.Real) for side in (lower, upper)) or isinstance(
            body, numbers.Real):
        return _FAULTY(node, data, opt, visitor)
    return ExprCons(body, lhs=float(lower), rhs=float(upper))


def fix_ranged_constraints() -> None:
    """Install the corrected handler (idempotent; leaves a handler Pyomo has changed alone)."""
    if scip_base._operator_map.get(scip_base.RangedExpression) is _FAULTY:
        scip_base._operator_map[scip_base.RangedExpression] = _ranged
