"""Candidate infeasible subsystems from HiGHS's Farkas certificate of a model's LP relaxation.

HiGHS solving an infeasible LP with presolve off gives a dual ray y on the model's own rows:
by Farkas's lemma the rows with y_i != 0, with the bounds of the variables whose column
activity (A^T y)_j is not zero, cannot hold together. For a MIP the ray is the relaxation's
(every column continuous): where the relaxation is infeasible, so is the MIP on those rows
and bounds. The support is found in one LP solve, where SCIP's IIS finder solved sub-SCIPs
for 30 s on a 31-row conflict in 10,000 rows; it is a candidate, not the answer:
`explain_infeasible` checks it (integrality kept) and makes it irreducible.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pyomo.core.base.block import BlockData
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.var import VarData

from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.errors import SolverNotAvailableError, UnsupportedModelError
from coplug.plugins.highs_backend import user_interrupt
from coplug.plugins.interrupts import sigint_cancels

Bound = tuple[VarData, str]
# A multiplier or column activity counts as nonzero above this fraction of the ray's largest.
_SUPPORT_RTOL = 1e-9


def farkas_support(work: BlockData, time_limit: float | None
                   ) -> tuple[list[ConstraintData], list[Bound]] | None:
    """The rows of `work` (an objective-free copy) in the support of HiGHS's infeasibility
    ray of its LP relaxation and both bounds of each variable the ray's column activity
    reaches; None for a model HiGHS cannot take, or where HiGHS gives no ray (a feasible
    relaxation among them)."""
    try:
        opt = contrib_solver("highs", "HiGHS", "highspy")
        build_instance(opt, work, "HiGHS")
    except (UnsupportedModelError, SolverNotAvailableError):
        return None
    highs = opt._solver_model  # the highspy model; Pyomo keeps no public accessor
    relax_integrality(highs)
    support = ray_support(highs, time_limit)
    if support is None:
        return None
    rows, columns = support
    constraints = [opt._solver_con_to_pyomo_con_map[r] for r in rows]
    variables = [opt._vars[vid][0] for vid, col in opt._pyomo_var_to_solver_var_map.items()
                 if col in columns]
    bounds = [(var, side) for var in variables if not var.fixed
              for side, value in (("lower", var.lb), ("upper", var.ub)) if value is not None]
    return constraints, bounds


def ray_support(highs: Any, time_limit: float | None) -> tuple[list[int], set[int]] | None:
    """The rows with a nonzero multiplier in HiGHS's infeasibility ray of the LP in `highs`
    and the columns its activity A^T y reaches; None where HiGHS gives no ray."""
    ray = _dual_ray(highs, time_limit)
    if ray is None:
        return None
    rows = np.flatnonzero(np.abs(ray) > _SUPPORT_RTOL * np.abs(ray).max()).tolist()
    activity = np.abs(_column_activity(highs, ray))
    columns = set(np.flatnonzero(activity > _SUPPORT_RTOL * max(activity.max(), 1.0)).tolist())
    return rows, columns


def relax_integrality(highs: Any) -> None:
    """Make every column continuous: the LP relaxation, whose ray HiGHS can give."""
    import highspy

    columns = np.arange(highs.getNumCol(), dtype=np.int32)
    if columns.size:
        kinds = np.full(columns.size, highspy.HighsVarType.kContinuous)
        highs.changeColsIntegrality(columns.size, columns, kinds)


def _dual_ray(highs: Any, time_limit: float | None) -> np.ndarray | None:
    """HiGHS's dual ray of the LP (presolve off: a ray on the built rows), or None where the
    LP is not proved infeasible or no ray comes back. Ctrl-C stops HiGHS at its next check
    (it notices none without its interrupt callbacks) and raises KeyboardInterrupt."""
    import highspy

    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("presolve", "off")
    if time_limit is not None and math.isfinite(time_limit):
        highs.setOptionValue("time_limit", float(time_limit))
    highs.HandleUserInterrupt = True  # its interrupt callbacks check cancelSolve's flag
    cancel, interrupted = user_interrupt(highs)
    with sigint_cancels(cancel):
        highs.run()
    if interrupted():
        raise KeyboardInterrupt  # Ctrl-C stops the whole search, as in the check solves
    if highs.getModelStatus() != highspy.HighsModelStatus.kInfeasible:
        return None
    status, has_ray, ray = highs.getDualRay()
    ray = np.asarray(ray, dtype=float)
    if status != highspy.HighsStatus.kOk or not has_ray or not ray.size or not np.isfinite(
            ray).all() or not ray.any():
        return None
    return ray


def _column_activity(highs: Any, ray: np.ndarray) -> np.ndarray:
    """A^T y for the built LP's constraint matrix A (stored by columns or by rows)."""
    import highspy

    lp = highs.getLp()
    matrix = lp.a_matrix_
    starts = np.asarray(matrix.start_, dtype=np.int64)
    index = np.asarray(matrix.index_, dtype=np.int64)[:starts[-1]]
    value = np.asarray(matrix.value_, dtype=float)[:starts[-1]]
    outer = np.repeat(np.arange(starts.size - 1), np.diff(starts))
    if matrix.format_ != highspy.MatrixFormat.kColwise:  # by rows (partitioned or not)
        return np.bincount(index, weights=value * ray[outer], minlength=lp.num_col_)
    return np.bincount(outer, weights=value * ray[index], minlength=lp.num_col_)
