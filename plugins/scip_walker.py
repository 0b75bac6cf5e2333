"""Two faults of Pyomo's Pyomo-to-SCIP expression walker (pyomo.contrib.solver, 6.10), fixed
by replacing the walker's handler while it is Pyomo's faulty one.

- Ranged constraints `lo <= body <= hi` are built as `lo <= (body <= hi)`: PySCIPOpt moves
  the body's constant off the right side only, so a body with a constant got the wrong left
  side (`-2 <= 2x + 1 <= 5`, min x: SCIP answered -1 instead of -1.5, `5 <= x**2 + 3 <= 7`
  came back infeasible). `ExprCons(body, lhs, rhs)` shifts both sides.
- Sums are built with Python's `sum`, which copies PySCIPOpt's growing expression at every
  term: quadratic in the length, 85 of the 96 s that building a 100,000-item knapsack took.
  PySCIPOpt's `quicksum` adds in place, in linear time, with the same result.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyomo.contrib.solver.solvers.scip.base as scip_base
from pyscipopt import quicksum
from pyscipopt.scip import ExprCons

_FAULTY_RANGED = scip_base._handle_ranged
_FAULTY_SUM = scip_base._handle_sum
_SUM_TYPES = (scip_base.SumExpression, scip_base.LinearExpression, scip_base.NPV_SumExpression)


def _ranged(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """`lo <= body <= hi` with the body's constant taken off both sides; sides that are not
    plain numbers (mutable Params become fixed SCIP variables) keep Pyomo's construction."""
    lower, body, upper = data
    if not all(isinstance(side, numbers.Real) for side in (lower, upper)) or isinstance(
            body, numbers.Real):
        return _FAULTY_RANGED(node, data, opt, visitor)
    return ExprCons(body, lhs=float(lower), rhs=float(upper))


def _sum(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """The sum of the children's SCIP expressions, added in place (a sum of plain numbers
    stays a number, as Pyomo's handler leaves it)."""
    if all(isinstance(item, numbers.Real) for item in data):
        return sum(data)
    return quicksum(data)


def fix_scip_walker() -> None:
    """Install the corrected handlers (idempotent; a handler Pyomo has changed is left alone)."""
    handlers = scip_base._operator_map
    if handlers.get(scip_base.RangedExpression) is _FAULTY_RANGED:
        handlers[scip_base.RangedExpression] = _ranged
    for kind in _SUM_TYPES:
        if handlers.get(kind) is _FAULTY_SUM:
            handlers[kind] = _sum


@contextmanager
def pyomo_sum_handler() -> Iterator[None]:
    """Pyomo's own (quadratic) sum handler for the duration, for side-by-side comparison."""
    handlers = scip_base._operator_map
    saved = {kind: handlers[kind] for kind in _SUM_TYPES}
    handlers.update({kind: _FAULTY_SUM for kind in _SUM_TYPES})
    try:
        yield
    finally:
        handlers.update(saved)
