"""Certified global optima of emitted programs: the Pyomo model solved by SCIP.

SCIP proves optimality by spatial branch and bound (the bridge keeps a nonlinear objective
as an epigraph); a result counts as certified only with status optimal and a gap near 0,
and the numpy evaluator must agree with SCIP's objective at SCIP's point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from coplug.formulations.bbo.compile import numpy_evaluator, to_pyomo
from coplug.formulations.bbo.grammar import Program
from coplug.plugins.bridge import solve
from coplug.plugins.errors import UnsupportedModelError
from coplug.plugins.results import Result, Status


@dataclass(frozen=True)
class Certificate:
    """SCIP's answer for one program: result, point, and whether the optimum is certified."""

    result: Result
    x: np.ndarray | None
    numpy_value: float | None
    certified: bool

    @property
    def objective(self) -> float | None:
        return self.result.objective

    @property
    def bound(self) -> float | None:
        return self.result.bound


# Statuses a box-bounded program that is finite on its box can never have.
_IMPOSSIBLE = (Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


def certify(program: Program, time_limit: float = 10.0, gap_tol: float = 1e-6,
            value_tol: float = 1e-5) -> Certificate:
    """Solve the program's Pyomo model with SCIP; certified = optimal, gap <= gap_tol and
    the numpy value at SCIP's point matches SCIP's objective within value_tol (relative).
    A model SCIP cannot take (e.g. floor, acos) or fails on (e.g. LP errors near a pole)
    comes back uncertified with the reason in `result.extra["error"]`."""
    model = to_pyomo(program)
    try:
        result = solve(model, solver="scip", time_limit=time_limit)
    except UnsupportedModelError as exc:
        return _failed(str(exc))
    except Exception as exc:
        if not _is_scip_error(exc):
            raise
        return _failed(f"SCIP stopped with an error ({exc}): numerical trouble, e.g. a pole "
                       "or a near-singular point of the program on its box")
    if result.status in _IMPOSSIBLE:
        result.extra["error"] = (f"SCIP reports {result.status.value}, which a program finite "
                                 "on its box cannot be: it is undefined somewhere on the box "
                                 "(a pole, log of a negative) or SCIP hit numerical trouble")
    if not result.has_solution:
        return Certificate(result, None, None, False)
    x = np.array([pyo.value(model.x[i]) for i in model.I])
    value = float(numpy_evaluator(program)(x[None])[0])
    agree = abs(value - result.objective) <= value_tol * max(1.0, abs(value))
    gap = result.gap
    certified = bool(result.optimal and gap is not None and gap <= gap_tol and agree)
    return Certificate(result, x, value, certified)


def _failed(reason: str) -> Certificate:
    """An uncertified answer without a point, carrying why in `result.extra["error"]`."""
    return Certificate(Result(Status.UNKNOWN, "scip", extra={"error": reason}), None, None, False)


def _is_scip_error(exc: Exception) -> bool:
    """PySCIPOpt reports a SCIP error return code as a bare Exception('SCIP: ...')."""
    return type(exc) is Exception and str(exc).startswith("SCIP")
