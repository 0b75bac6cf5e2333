"""LP sensitivity analysis (ranging) of a Pyomo linear program, through HiGHS.

``sensitivity(model)`` solves the LP with HiGHS's simplex method, loads the optimal point
into the Pyomo variables (as `coplug.plugins.solve` does: every other variable is marked
stale), certifies it with its duals (`coplug.plugins.lp_certificate`; a solution that fails
raises SolverError, it is never ranged) and returns a `Sensitivity` whose maps are keyed by
the model's own `Var` and `Constraint` data objects (`ComponentMap`s):

- ``cost[var]``: the interval of the variable's objective coefficient, as written in the
  model (a maximization's own coefficient), over which the current point stays optimal.
  Every variable of the LP has one (a variable absent from the objective has coefficient 0).
- ``rhs[con]``: the interval of one side of the row, as written in the model (for
  ``x + 1 <= 5`` a range around 5, the body's constant left where it is), over which the
  current basis stays optimal, so that the optimal objective moves linearly with slope
  ``dual[con]``; ``side[con]`` says which side: ``"upper"`` or ``"lower"`` for the side
  that is active (the one the dual prices, the other side held where it is: a ranged row's
  range stops at its other side); ``"both"`` for an equality row, whose two sides move
  together. A row with no active side (a basic row, dual 0) is ranged by its upper side
  when it has one, else its lower side: ``[activity, +inf)`` for an upper side and
  ``(-inf, activity]`` for a lower one, the objective constant across it. A row with no
  finite side has no entry.
- ``bound[var]``: the same for the variable's bounds, with slope ``reduced_cost[var]``:
  the active bound of a nonbasic variable (``"both"`` for lb == ub), else the upper bound
  ``[value, +inf)`` or the lower bound ``(-inf, value]`` of a basic one, also where a
  degenerate basis holds it at a bound (read ``side[var]``, not the bound it sits at); a
  variable without a finite bound has no entry.
- ``dual[con]`` and ``reduced_cost[var]``: the certified duals in Pyomo's sign (the
  derivative of the optimal objective with respect to the side or bound, in the model's
  own sense), as `solve` loads into ``m.dual`` / ``m.rc``; no Suffix is filled here.

Each `Range` holds ``low`` and ``high`` (+-inf where unlimited) and the optimal objective
(the model's own, constant included) with the coefficient or side at each end,
``objective_low`` and ``objective_high``: for a cost, the current point priced at that
coefficient; for a side or bound, the objective moved along its slope.

Ranging describes the optimal *basis* HiGHS returns. On a degenerate LP (ties among optimal
bases, a basic variable at a bound) another optimal basis can have other ranges, zero-width
ones included, and a dual at an end of its range is one of several; the numbers are exact
for generic (nondegenerate) data.

Refused with a one-line error: a model that is no Block or has no or several active
objectives, a component HiGHS does not read (InputError / UnsupportedModelError); an integer
variable or a nonlinear row or objective (UnsupportedModelError: ranging is for LPs); an
infeasible or unbounded LP (InputError); a time limit reached before the optimum
(TimeLimitError); any other HiGHS stop or a failed certificate (SolverError).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyomo.core.base.block import BlockData
from pyomo.core.staleflag import StaleFlagManager

from coplug.plugins.components import check_components
from coplug.plugins.duals import LinearProgram, MinForm, dual_request, min_form, read_lp
from coplug.plugins.errors import (
    InputError,
    SolverError,
    TimeLimitError,
    UnsupportedModelError,
)
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.lp_certificate import Certificate, certify
from coplug.plugins.modeldata import check_model_data
from coplug.plugins.serial import one_solve_at_a_time

# HiGHS's range ends may miss the current value by round-off; beyond this (relative to
# max(1, |value|)) they are inconsistent and refused.
RANGE_TOL = 1e-7


@dataclass(frozen=True)
class Range:
    """An interval [low, high] (+-inf where unlimited) of a coefficient, side or bound, and
    the optimal objective with it at each end."""

    low: float
    high: float
    objective_low: float
    objective_high: float


@dataclass(frozen=True)
class Sensitivity:
    """The optimum and its ranging, keyed by the model's own components (see the module's
    docstring for what each map holds)."""

    objective: float
    cost: ComponentMap
    rhs: ComponentMap
    bound: ComponentMap
    side: ComponentMap
    dual: ComponentMap
    reduced_cost: ComponentMap


@dataclass
class _Optimum:
    """HiGHS's certified optimum of the minimization form, with its basis and ranging."""

    x: np.ndarray
    activity: np.ndarray
    certificate: Certificate
    basic_cols: np.ndarray
    basic_rows: np.ndarray
    at_lower_cols: np.ndarray
    at_lower_rows: np.ndarray
    ranging: Any


def sensitivity(model: pyo.Block, time_limit: float | None = None) -> Sensitivity:
    """Solve the Pyomo LP `model` with HiGHS (within `time_limit` seconds, None for no
    limit), load its optimum into the variables and return the ranging of its costs, sides
    and bounds (module docstring)."""
    with one_solve_at_a_time():  # threads take turns (see coplug.plugins.serial)
        time_limit = checked_time_limit(time_limit)
        lp = _read(model)
        form = min_form(lp)
        optimum = _solve(form, [con for con, _, _, _ in lp.rows], time_limit)
        _load(form.variables, optimum.x)
        dual_request(model, read=False)  # emptied: an earlier solve's duals, not this point's
        constant = lp.objective.constant
        objective = form.sign * float(form.costs @ optimum.x) + constant
        dual = ComponentMap((con, form.sign * float(y) + 0.0)
                            for (con, _, _, _), y in zip(lp.rows, optimum.certificate.duals,
                                                         strict=True))
        reduced = ComponentMap((var, form.sign * float(r) + 0.0)
                               for var, r in zip(form.variables, optimum.certificate.reduced,
                                                 strict=True))
        side = ComponentMap()
        return Sensitivity(
            objective=objective,
            cost=_cost_ranges(form, optimum, objective),
            rhs=_row_ranges(lp, form, optimum, objective, dual, side),
            bound=_bound_ranges(form, optimum, objective, reduced, side),
            side=side,
            dual=dual,
            reduced_cost=reduced,
        )


def _read(model: Any) -> LinearProgram:
    """`model` as an LP with one objective and at least one variable, or a one-line error
    naming what keeps it from being one."""
    if not isinstance(model, BlockData):
        raise InputError(f"sensitivity() needs a Pyomo model (a Block), got "
                         f"{type(model).__name__}")
    objectives = sum(1 for _ in model.component_data_objects(pyo.Objective, active=True))
    if objectives != 1:
        what = "no active objective" if objectives == 0 else f"{objectives} active objectives"
        error = InputError if objectives == 0 else UnsupportedModelError
        raise error(f"sensitivity() needs one active objective to range; the model has {what}")
    check_components(model, "highs")
    check_model_data(model)
    lp, reason = read_lp(model)
    if lp is None:
        raise UnsupportedModelError(f"sensitivity ranging is for linear programs: {reason}")
    if not lp.variables:
        raise InputError("the model has no unfixed variable in its active constraints or "
                         "objective: nothing to range")
    return lp


def _solve(form: MinForm, rows: list[Any], time_limit: float | None) -> _Optimum:
    """Solve the minimization form of the LP with `rows` (its constraints) by HiGHS's
    simplex and return its certified optimum, basis and ranging; raise for any other
    outcome."""
    import highspy

    h = _build(form, time_limit)
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kUnboundedOrInfeasible:
        status = _settle(h, len(form.costs))
    if status == highspy.HighsModelStatus.kInfeasible:
        raise InputError("the LP is infeasible: it has no optimum to range "
                         "(coplug.plugins.explain_infeasible names a conflicting subset)")
    if status == highspy.HighsModelStatus.kUnbounded:
        raise InputError("the LP is unbounded: it has no optimum to range")
    if status == highspy.HighsModelStatus.kTimeLimit:
        raise TimeLimitError(f"time limit of {time_limit} s reached before HiGHS found the "
                             "optimum: no ranging")
    if status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"HiGHS stopped without an optimum (model status "
                          f"{h.modelStatusToString(status)!r}): no ranging")
    solution, basis = h.getSolution(), h.getBasis()
    if not (solution.value_valid and solution.dual_valid and basis.valid):
        raise SolverError("HiGHS called the LP optimal but returned no basic solution to range")
    x = np.asarray(solution.col_value, dtype=float)
    model_rows = len(rows)  # HiGHS may hold one more: `_build`'s free row
    certificate = _certified(form, x, np.asarray(solution.row_dual, dtype=float)[:model_rows],
                             rows)
    ranging_status, ranging = h.getRanging()
    if ranging_status != highspy.HighsStatus.kOk:
        raise SolverError("HiGHS found the optimum but could not range it")
    col_status = np.array([int(s) for s in basis.col_status])
    row_status = np.array([int(s) for s in basis.row_status][:model_rows], dtype=int)
    basic, lower = int(highspy.HighsBasisStatus.kBasic), int(highspy.HighsBasisStatus.kLower)
    return _Optimum(x, form.matrix @ x, certificate, col_status == basic, row_status == basic,
                    col_status == lower, row_status == lower, ranging)


def _build(form: MinForm, time_limit: float | None) -> Any:
    """A silent HiGHS model of the minimization form, solved once by simplex (as
    `benders._PersistentLP` builds it)."""
    import highspy

    from coplug.plugins.highs_interface import new_highs

    h = new_highs()
    h.silent()
    h.setOptionValue("solver", "simplex")  # ranging needs a simplex basis
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    n, matrix = len(form.costs), form.matrix
    calls = [
        h.addVars(n, form.col_lower, form.col_upper),
        h.changeColsCost(n, np.arange(n, dtype=np.int32), form.costs),
        h.addRows(matrix.shape[0], form.lower, form.upper, matrix.nnz,
                  matrix.indptr[:-1].astype(np.int32), matrix.indices.astype(np.int32),
                  matrix.data),
    ]
    if matrix.nnz == 0:  # HiGHS ranges no LP it solves without its simplex: add a free row
        calls.append(h.addRow(-np.inf, np.inf, 1, np.zeros(1, np.int32), np.ones(1)))
    if any(status == highspy.HighsStatus.kError for status in calls):
        raise SolverError("HiGHS refused the LP's columns or rows")
    _run(h)
    return h


def _run(h: Any) -> None:
    """Solve, Ctrl-C stopping HiGHS at its next check (highspy's own handling: the bare
    `run` finished a 96 s LP before the interrupt was seen) and raised as KeyboardInterrupt:
    there is no optimum to range."""
    import highspy

    h.HandleKeyboardInterrupt = True
    h.HandleUserInterrupt = True
    h.solve()
    if h.getModelStatus() == highspy.HighsModelStatus.kInterrupt:
        raise KeyboardInterrupt("sensitivity() interrupted: HiGHS stopped before the optimum")


def _settle(h: Any, n: int) -> Any:
    """Infeasible or unbounded, for HiGHS's "either" (its presolve's answer): the LP with a
    zero objective, which cannot be unbounded, is solved again."""
    import highspy

    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.zeros(n))
    _run(h)
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return highspy.HighsModelStatus.kUnbounded
    return status


def _certified(form: MinForm, x: np.ndarray, row_dual: np.ndarray,
               rows: list[Any]) -> Certificate:
    """The duality-gap certificate of HiGHS's point and duals; SolverError naming the
    constraint or variable that leaves most of the gap when it fails (such a point is
    never ranged)."""
    found = certify(form.costs, x, form.matrix, form.lower, form.upper, form.col_lower,
                    form.col_upper, row_dual)
    if not found.holds:
        kind, k = found.worst
        where = (f"constraint {rows[k].name!r}" if kind == "row"
                 else f"variable {form.variables[k].name!r}")
        raise SolverError(f"HiGHS's optimum is not certified: its duals leave a duality gap "
                          f"of {found.gap:.3g}, most of it at {where}; no ranging")
    return found


def _load(variables: list[Any], x: np.ndarray) -> None:
    """Load the optimum into the variables as `solve` does: every other one goes stale."""
    StaleFlagManager.mark_all_as_stale()
    for var, value in zip(variables, x, strict=True):
        var.set_value(float(value), skip_validation=True)


def _cost_ranges(form: MinForm, optimum: _Optimum, objective: float) -> ComponentMap:
    """Each variable's cost range in the model's sense (HiGHS ranges the minimization form,
    whose costs a maximization negates, which swaps the ends)."""
    ranging, sign = optimum.ranging, form.sign
    up = np.asarray(ranging.col_cost_up.value_, dtype=float)[:len(form.costs)]
    down = np.asarray(ranging.col_cost_dn.value_, dtype=float)[:len(form.costs)]
    ranges = ComponentMap()
    for j, var in enumerate(form.variables):
        cost = sign * form.costs[j]
        low, high = (down[j], up[j]) if sign > 0 else (-up[j], -down[j])
        _check_ends(low, high, cost, f"cost of {var.name!r}")
        x = float(optimum.x[j])
        ranges[var] = _range(low, high, _along(objective, x, low - cost),
                             _along(objective, x, high - cost))
    return ranges


def _row_ranges(lp: LinearProgram, form: MinForm, optimum: _Optimum, objective: float,
                dual: ComponentMap, side: ComponentMap) -> ComponentMap:
    """Each row's range of its active side (or the upper, else lower, side of a basic row)
    as written in the model, its body's constant added back; `side` gets which side."""
    ranging = optimum.ranging
    up = np.asarray(ranging.row_bound_up.value_, dtype=float)
    down = np.asarray(ranging.row_bound_dn.value_, dtype=float)
    ranges = ComponentMap()
    for i, (con, terms, lower, upper) in enumerate(lp.rows):
        found = _side_range(form.lower[i], form.upper[i], optimum.activity[i],
                            optimum.basic_rows[i], optimum.at_lower_rows[i], down[i], up[i],
                            f"side of constraint {con.name!r}")
        if found is None:
            continue
        which, at, low, high = found
        slope = 0.0 if optimum.basic_rows[i] else dual[con]
        side[con] = which
        written = float(lower if which == "lower" else upper)
        ranges[con] = _shifted(objective, slope, at, low, high, terms.constant, written)
    return ranges


def _bound_ranges(form: MinForm, optimum: _Optimum, objective: float, reduced: ComponentMap,
                  side: ComponentMap) -> ComponentMap:
    """Each variable's range of its active bound (or the upper, else lower, bound of a basic
    variable); `side` gets which bound."""
    ranging = optimum.ranging
    up = np.asarray(ranging.col_bound_up.value_, dtype=float)
    down = np.asarray(ranging.col_bound_dn.value_, dtype=float)
    ranges = ComponentMap()
    for j, var in enumerate(form.variables):
        found = _side_range(form.col_lower[j], form.col_upper[j], optimum.x[j],
                            optimum.basic_cols[j], optimum.at_lower_cols[j], down[j], up[j],
                            f"bound of {var.name!r}")
        if found is None:
            continue
        which, at, low, high = found
        slope = 0.0 if optimum.basic_cols[j] else reduced[var]
        side[var] = which
        ranges[var] = _shifted(objective, slope, at, low, high, 0.0, at)
    return ranges


def _side_range(lower: float, upper: float, value: float, basic: bool, at_lower: bool,
                down: float, up: float, what: str) -> tuple[str, float, float, float] | None:
    """(which side, its value, low, high) in the minimization form for a row or column with
    sides `lower`/`upper` and `value` at the optimum; None when it has no finite side. A
    nonbasic one takes HiGHS's ends for its active side; a basic one ranges its upper (else
    lower) side up to (down to) its value."""
    finite_lower, finite_upper = math.isfinite(lower), math.isfinite(upper)
    if not (finite_lower or finite_upper):
        return None
    both = finite_lower and lower == upper
    if basic:
        if both:  # a basic fixed row or column: degenerate, no room either way
            return "both", lower, lower, lower
        if finite_upper:
            return "upper", upper, min(float(value), upper), math.inf
        return "lower", lower, -math.inf, max(float(value), lower)
    which = "both" if both else ("lower" if at_lower else "upper")
    at = lower if which != "upper" else upper
    if not math.isfinite(at):
        raise SolverError(f"HiGHS left the {what} nonbasic at an infinite side: no ranging")
    _check_ends(float(down), float(up), at, what)
    return which, at, float(down), float(up)


def _shifted(objective: float, slope: float, at: float, low: float, high: float,
             constant: float, written: float) -> Range:
    """The Range of a side at `at` (minimization form) as written in the model (`written`):
    shifted by the body's `constant`, the objective moved along `slope` to each end."""
    return _range(_end(low, at, constant, written), _end(high, at, constant, written),
                  _along(objective, slope, low - at), _along(objective, slope, high - at))


def _end(end: float, at: float, constant: float, written: float) -> float:
    """A range's end (minimization form) on the side as written: `written` itself where the
    end is the side, else the end plus the body's `constant`, never past `written` on the
    wrong side (round-off from taking the constant off and adding it back, or HiGHS's ends
    within RANGE_TOL of the side, would leave the range missing the side it ranges)."""
    if end == at:
        return written
    shifted = end + constant
    return min(shifted, written) if end < at else max(shifted, written)


def _range(low: float, high: float, objective_low: float, objective_high: float) -> Range:
    """A Range of plain floats (no numpy scalars, no -0.0 from a negated zero)."""
    return Range(float(low) + 0.0, float(high) + 0.0, float(objective_low) + 0.0,
                 float(objective_high) + 0.0)


def _along(objective: float, slope: float, step: float) -> float:
    """objective + slope * step, unchanged when either is zero (no nan from 0 * inf)."""
    if slope == 0.0 or step == 0.0:
        return objective
    return objective + slope * step


def _check_ends(low: float, high: float, value: float, what: str) -> None:
    """SolverError when HiGHS's range [low, high] misses the current value: its numbers
    would be wrong, and are never returned."""
    slack = RANGE_TOL * max(1.0, abs(value))
    if math.isnan(low) or math.isnan(high) or not low - slack <= value <= high + slack:
        raise SolverError(f"HiGHS ranged the {what} at [{low}, {high}], which misses its "
                          f"value {value}: no ranging")
