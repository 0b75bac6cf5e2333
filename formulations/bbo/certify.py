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


def certify(program: Program, time_limit: float = 10.0, gap_tol: float = 1e-6,
            value_tol: float = 1e-5) -> Certificate:
    """Solve the program's Pyomo model with SCIP; certified = optimal, gap <= gap_tol and
    the numpy value at SCIP's point matches SCIP's objective within value_tol (relative).
    A model SCIP cannot take (e.g. floor, acos) comes back uncertified with the reason in
    `result.extra["error"]`."""
    model = to_pyomo(program)
    try:
        result = solve(model, solver="scip", time_limit=time_limit)
    except UnsupportedModelError as exc:
        return Certificate(Result(Status.UNKNOWN, "scip", extra={"error": str(exc)}), None, None,
                           False)
    if not result.has_solution:
        return Certificate(result, None, None, False)
    x = np.array([pyo.value(model.x[i]) for i in model.I])
    value = float(numpy_evaluator(program)(x[None])[0])
    agree = abs(value - result.objective) <= value_tol * max(1.0, abs(value))
    gap = result.gap
    certified = bool(result.optimal and gap is not None and gap <= gap_tol and agree)
    return Certificate(result, x, value, certified)
