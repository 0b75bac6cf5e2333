"""`solve(model, solver="highs")`: linear and convex quadratic models through Pyomo's
contrib `highs` interface, with coplug's statuses, checks and Ctrl-C handling.

HiGHS stops a MIP as "optimal" once the gap is within its `mip_rel_gap` (1e-4) or
`mip_abs_gap` (1e-6); a stop at a looser gap set by the caller is reported `feasible`,
as SCIP reports its gap limit. Integer values are snapped as SCIP's are (HiGHS leaves
0.9999999999999876 for a chosen item).
"""

from __future__ import annotations

import math
import numbers
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.common.collections import ComponentMap, ComponentSet
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.core.expr.numeric_expr import MonomialTermExpression, ProductExpression, SumExpression
from pyomo.core.expr.visitor import identify_variables
from pyomo.core.staleflag import StaleFlagManager
from pyomo.repn.standard_repn import generate_standard_repn
from scipy.sparse.csgraph import connected_components

from coplug.plugins.base import (
    finish_plugins,
    plugin_name,
    plugins_statistics,
    raise_plugin_failures,
)
from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.duals import DualRequest, dual_request, gradient_duals, load_duals
from coplug.plugins.errors import InputError, SolverError, UnsupportedModelError
from coplug.plugins.highs_interface import log_to, new_highs, option_value
from coplug.plugins.highs_rows import (
    RowView,
    highs_integral_rows,
    lp_certificate,
    misjudged,
    point_violations,
    row_matrix,
    solution_violations,
    symmetric_hessian,
    tightened_tolerance,
)
from coplug.plugins.integral_rows import (
    IntegralRow,
    flag_fractional,
    flag_violations,
    pyomo_integers,
)
from coplug.plugins.interrupts import (
    highspy_interrupt,
    pyomo_highs_interrupt_quiet,
    sigint_cancels,
    sigint_deferred,
)
from coplug.plugins.linear_terms import plainly_linear
from coplug.plugins.mipstart import highs_mip_start
from coplug.plugins.modeldata import FIXED_INTEGRAL_TOL, fixed_off_whole
from coplug.plugins.results import OBJECTIVE_LIMIT, Result, Status
from coplug.plugins.row_scaling import highs_row_factors, scale_highs_rows
from coplug.plugins.stationarity import improving_ray
from coplug.plugins.varmap import INTEGER_SNAP, snapped

T = TypeVar("T")

# HiGHS's default MIP stopping gaps: an "optimal" MIP beyond both was stopped by a looser
# gap the caller set.
DEFAULT_REL_GAP = 1e-4
DEFAULT_ABS_GAP = 1e-6
GAP_ROUNDING = 1e-14  # of the largest value a gap is computed from (see beyond_default_gap)
# HiGHS's defaults for the limits that end a MIP with its "solution limit" status.
_DEFAULT_LIMITS = {"mip_max_nodes": 2**31 - 1, "mip_max_leaves": 2**31 - 1,
                   "mip_max_stall_nodes": 2**31 - 1, "mip_max_improving_sols": 2**31 - 1}
# Costs from this size on are scaled down to it (`user_objective_scale`) where HiGHS stopped
# with no answer (`objective_scale`).
OBJECTIVE_SCALE_FROM = 1e6

_PYOMO_STATUS = {
    TerminationCondition.convergenceCriteriaSatisfied: Status.OPTIMAL,
    TerminationCondition.provenInfeasible: Status.INFEASIBLE,
    TerminationCondition.locallyInfeasible: Status.INFEASIBLE,
    TerminationCondition.unbounded: Status.UNBOUNDED,
    TerminationCondition.infeasibleOrUnbounded: Status.INFEASIBLE_OR_UNBOUNDED,
    TerminationCondition.maxTimeLimit: Status.TIME_LIMIT,
    TerminationCondition.iterationLimit: Status.ITERATION_LIMIT,
    TerminationCondition.interrupted: Status.INTERRUPTED,
}


def check_linear_for_highs(model: pyo.Block) -> None:
    """HiGHS takes linear constraints and a linear or quadratic objective: name the offender."""
    for con in model.component_data_objects(pyo.Constraint, active=True):
        if _degree(con.body) not in (0, 1):
            raise UnsupportedModelError(
                f"HiGHS cannot take nonlinear constraint {con.name!r}; use solver='scip'"
            )
    for obj in model.component_data_objects(pyo.Objective, active=True):
        degree = _degree(obj.expr)
        if degree not in (0, 1, 2):
            raise UnsupportedModelError(
                f"HiGHS cannot take nonlinear objective {obj.name!r}; use solver='scip'"
            )
        if degree == 2 and _has_integers(model):
            raise UnsupportedModelError(
                f"HiGHS cannot take quadratic objective {obj.name!r} with integer variables "
                "(MIQP); use solver='scip'"
            )
        if degree == 2 and not _convex_quadratic(obj):
            direction = "maximize" if obj.sense == pyo.maximize else "minimize"
            raise UnsupportedModelError(
                f"HiGHS cannot {direction} the non-convex quadratic objective {obj.name!r}; "
                "use solver='scip'"
            )


def _degree(expr: Any) -> int | None:
    """`expr`'s polynomial degree (None: not a polynomial), 1 for a plainly linear sum
    without Pyomo's walk (0.05 of the 0.8 s a 45,000-variable LP spent in `solve`)."""
    return 1 if plainly_linear(expr) else expr.polynomial_degree()


# Largest quadratic objective (variables in its quadratic part) checked for convexity up front;
# beyond it HiGHS's own refusal is reported after the solve.
CONVEXITY_CHECK_MAX_VARS = 2000
# A Hessian eigenvalue below -NONCONVEX_REL * max(1, largest |eigenvalue|) is non-convex at any
# variable range (HiGHS refuses such a Hessian itself).
NONCONVEX_REL = 1e-9
# A negative eigenvalue within ROUNDOFF_REL of the largest |eigenvalue| is float round-off
# (Gram matrices built through Pyomo stay under 1e-15): accepted even along unbounded variables.
ROUNDOFF_REL = 1e-12
# A smaller negative curvature is refused once it could move the objective by more than
# CURVATURE_TOL * max(1, the objective's magnitude) over the variables' ranges: HiGHS would
# treat it as convex and report a wrong "optimal" answer.
CURVATURE_TOL = 1e-6
# Eigenvector components below this are round-off: they do not tie a direction to a variable.
COMPONENT_TOL = 1e-12


def _convex_quadratic(obj: Any) -> bool:
    """Whether the objective's Hessian is PSD (minimize) or NSD (maximize), as HiGHS needs,
    allowing only negative curvature too small to matter over the variables' ranges."""
    repn = generate_standard_repn(obj.expr, compute_values=True, quadratic=True)
    index = ComponentMap()
    for var in (v for pair in repn.quadratic_vars for v in pair):
        index.setdefault(var, len(index))
    if not index or len(index) > CONVEXITY_CHECK_MAX_VARS:
        return True
    hessian = _hessian(repn, index)
    if obj.sense == pyo.maximize:
        hessian = -hessian
    if _diagonally_dominant(hessian):
        return True
    eigenvalues = _eigenvalues(hessian)
    top = float(np.abs(eigenvalues).max())
    if eigenvalues[0] >= -ROUNDOFF_REL * top:
        return True
    if eigenvalues[0] < -NONCONVEX_REL * max(1.0, top):
        return False
    return _negligible_curvature(hessian, top, [_width(var) for var in index], repn)


def read_hessian_convex(highs: Any) -> bool:
    """Whether the quadratic objective HiGHS holds (read from a file) is convex in its sense,
    PSD to minimize and NSD to maximize, short of negative curvature below NONCONVEX_REL of
    its largest (past CONVEXITY_CHECK_MAX_VARS columns, not checked): HiGHS returned a
    saddle point as optimal for an indefinite one with a zero diagonal."""
    import highspy

    model = highs.getModel()
    q = model.hessian_
    if q.dim_ == 0 or not any(q.value_):
        return True
    stored = sp.csc_matrix((np.asarray(q.value_, dtype=float), np.asarray(q.index_),
                            np.asarray(q.start_)), shape=(q.dim_, q.dim_))
    stored.eliminate_zeros()
    used = np.unique(stored.nonzero())  # the columns of quadratic terms, as solve() counts
    if used.size > CONVEXITY_CHECK_MAX_VARS:
        return True
    stored = stored[np.ix_(used, used)].toarray()
    hessian = stored if q.format_ == highspy.HessianFormat.kSquare else (
        stored + stored.T - np.diag(np.diag(stored)))  # the lower triangle, as HiGHS keeps it
    if model.lp_.sense_ == highspy.ObjSense.kMaximize:
        hessian = -hessian
    if _diagonally_dominant(hessian):
        return True
    eigenvalues = _eigenvalues(hessian)
    return bool(eigenvalues[0] >= -NONCONVEX_REL * max(1.0, float(np.abs(eigenvalues).max())))


def _diagonally_dominant(hessian: np.ndarray) -> bool:
    """Whether each diagonal entry is at least the sum of the other |entries| in its row:
    then no eigenvalue is negative (Gershgorin's discs), with no eigenvalues computed
    (eigvalsh took 4 to 8 s of a 2,000-variable separable QP's solve)."""
    diagonal = np.diag(hessian)
    others = np.abs(hessian).sum(axis=1) - np.abs(diagonal)
    return bool(np.all(diagonal >= others))


def _eigenvalues(hessian: np.ndarray) -> np.ndarray:
    """The symmetric Hessian's eigenvalues in ascending order, block by block where its
    variables split into groups no term couples: a grouped objective's blocks are small
    (eigvalsh of a whole 2,000-variable Hessian of groups of 20 took 1 to 18 s)."""
    count, labels = connected_components(sp.csr_matrix(hessian != 0), directed=False)
    if count == 1:
        return np.linalg.eigvalsh(hessian)
    order = np.argsort(labels, kind="stable")
    blocks = np.split(order, np.flatnonzero(np.diff(labels[order])) + 1)
    return np.sort(np.concatenate([np.linalg.eigvalsh(hessian[np.ix_(block, block)])
                                   for block in blocks]))


def _negligible_curvature(hessian: np.ndarray, top: float, widths: list[float],
                          repn: Any) -> bool:
    """Whether every negative curvature beyond round-off moves the objective by at most
    CURVATURE_TOL * max(1, its magnitude) over the variables' ranges (`widths`)."""
    eigenvalues, vectors = np.linalg.eigh(hessian)
    tolerance = CURVATURE_TOL * max(1.0, _magnitude(repn))
    for value, vector in zip(eigenvalues, vectors.T, strict=True):
        if value < -ROUNDOFF_REL * top and (
                0.5 * -value * _extent(vector, np.array(widths)) ** 2 > tolerance):
            return False
    return True


def _hessian(repn: Any, index: ComponentMap) -> np.ndarray:
    """The Hessian of the quadratic part of `repn`, its rows and columns numbered by `index`."""
    hessian = np.zeros((len(index), len(index)))
    for coef, (a, b) in zip(repn.quadratic_coefs, repn.quadratic_vars, strict=True):
        hessian[index[a], index[b]] += coef
        hessian[index[b], index[a]] += coef
    return hessian


def _width(var: Any) -> float:
    """The length of a variable's range: inf when a side is unbounded."""
    lb, ub = var.lb, var.ub
    return math.inf if lb is None or ub is None else float(ub) - float(lb)


def _extent(vector: np.ndarray, widths: np.ndarray) -> float:
    """How far the variables' box reaches along a unit direction: inf when it involves an
    unbounded variable."""
    involved = np.abs(vector) > COMPONENT_TOL
    return float(np.sum(np.abs(vector[involved]) * widths[involved]))


def _bound_size(var: Any) -> float:
    """The largest |value| a variable's bounds allow: inf when a side is unbounded."""
    lb, ub = var.lb, var.ub
    return math.inf if lb is None or ub is None else max(abs(float(lb)), abs(float(ub)))


def _magnitude(repn: Any) -> float:
    """How large the objective can get over the bounded variables' ranges: the scale its
    tolerance is relative to (terms with an unbounded variable are left out)."""
    terms = [abs(float(repn.constant))]
    terms += [abs(coef) * _bound_size(var)
              for coef, var in zip(repn.linear_coefs, repn.linear_vars, strict=True)]
    terms += [abs(coef) * _bound_size(a) * _bound_size(b)
              for coef, (a, b) in zip(repn.quadratic_coefs, repn.quadratic_vars, strict=True)]
    return float(sum(term for term in terms if math.isfinite(term)))


def _free_variables(model: pyo.Block) -> Iterator[Any]:
    """Unfixed variables of the active constraints and objectives, lazily (repeats allowed)."""
    components = (pyo.Constraint, pyo.Objective)
    for data in model.component_data_objects(components, active=True):
        yield from identify_variables(data.expr, include_fixed=False)


def _has_integers(model: pyo.Block) -> bool:
    """Whether an unfixed binary or integer variable appears in an active component."""
    return any(var.is_integer() for var in _free_variables(model))


def has_free_variables(model: pyo.Block) -> bool:
    """Whether an unfixed variable appears in an active constraint or objective."""
    return next(_free_variables(model), None) is not None


HIGHS_FEASIBILITY_TOL = 1e-7  # HiGHS's default primal_feasibility_tolerance


def _constant_result(model: pyo.Block, solver: str, tol: float = HIGHS_FEASIBILITY_TOL
                     ) -> Result:
    """The answer for a model with nothing left to decide (every variable fixed or absent):
    its objective value when every constraint holds, else infeasible. HiGHS gets no model,
    so a row is judged as HiGHS judges such a row beside free variables (an empty row, its
    side moved by the constant): missed by more than `tol`, absolute. A tolerance relative
    to the body had let `f <= 1e12 - 900` at f = 1e12 through as optimal. An integer fixed
    off a whole number makes it infeasible, as it does beside free variables."""
    if fixed_off_whole(model):
        return Result(status=Status.INFEASIBLE, solver=solver)
    for con in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        if (con.has_lb() and body < pyo.value(con.lower) - tol) or (
            con.has_ub() and body > pyo.value(con.upper) + tol
        ):
            return Result(status=Status.INFEASIBLE, solver=solver)
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    value = None if objective is None else float(pyo.value(objective.expr))
    return Result(status=Status.OPTIMAL, solver=solver, objective=value, bound=value,
                  has_solution=True)


def _finish_unsolved(plugins: list[Any], model: pyo.Block, result: Result) -> None:
    """Tell `plugins` the outcome of a model HiGHS never sees (`_constant_result`), each
    attached to an empty HiGHS first: a SolutionPool stayed empty where SCIP's held the one
    point, and an OnSolution was never called."""
    if not plugins:
        return
    empty = new_highs()
    empty.setOptionValue("output_flag", False)
    for plugin in plugins:
        plugin.attach_highs(empty, {}, model, None)
    finish_plugins(plugins, result)


def highs_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's HiGHS options, checked up front (Pyomo's interface ignores the status
    HiGHS returns, so a typo would otherwise change nothing without a word) and given the
    type HiGHS wants where the value means the same: a whole float for an integer option
    (1e3 nodes), 0/1 for a bool, an integer for a text option (log_file=2024). NaN is
    refused: HiGHS's range checks let it through (a NaN feasibility tolerance misjudged)."""
    if not params:
        return {}
    import highspy

    checker = new_highs()
    checker.setOptionValue("output_flag", False)
    typed = {}
    for key, value in params.items():
        if isinstance(value, numbers.Real) and math.isnan(value):
            raise InputError(f"HiGHS option {key!r} is nan: HiGHS takes it without a word "
                             "and solves wrongly (needs a number)")
        if key.endswith("_tolerance") and isinstance(value, numbers.Real) and \
                math.isinf(value):
            raise InputError(f"HiGHS option {key!r} is {value}: HiGHS takes an infinite "
                             "tolerance and answers wrongly (a bounded knapsack came back "
                             "unbounded); give a finite one")
        typed[key] = _as_highs_type(checker, key, value)
        try:
            accepted = checker.setOptionValue(key, typed[key]) == highspy.HighsStatus.kOk
        except TypeError:  # a value of no type HiGHS takes (a dict: `params={...}`)
            accepted = False
        if not accepted:
            raise InputError(_refusal(checker, key, value))
    return typed


def _refusal(checker: Any, key: str, value: Any) -> str:
    """Why HiGHS refused `key` = `value`: no such option (with the nearest names), or what
    the option takes and its default."""
    import difflib

    import highspy

    status, kind = checker.getOptionType(key)
    if status != highspy.HighsStatus.kOk:
        names = [name for name in dir(checker.getOptions()) if not name.startswith("_")]
        near = difflib.get_close_matches(key, names, n=3)
        hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
        return f"unknown HiGHS option {key!r}{hint}"
    what = {highspy.HighsOptionType.kBool: "True or False",
            highspy.HighsOptionType.kInt: "an integer",
            highspy.HighsOptionType.kDouble: "a number",
            highspy.HighsOptionType.kString: "text"}.get(kind, "another value")
    default = option_value(checker, key)
    return (f"cannot set HiGHS option {key!r} to {value!r}: it takes {what} (default "
            f"{default!r}) within HiGHS's range for it")


def _as_highs_type(checker: Any, key: str, value: Any) -> Any:
    """`value` in the type HiGHS's option `key` takes, where the meaning is unchanged."""
    import highspy

    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()  # numpy scalars as Python numbers: HiGHS refuses np.float32
    status, kind = checker.getOptionType(key)
    if status != highspy.HighsStatus.kOk or isinstance(value, bool):
        return value
    if kind == highspy.HighsOptionType.kInt and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == highspy.HighsOptionType.kBool and isinstance(value, int) and value in (0, 1):
        return bool(value)
    if kind == highspy.HighsOptionType.kString and isinstance(value, int):
        return str(value)
    if kind == highspy.HighsOptionType.kDouble and isinstance(value, numbers.Real) and \
            not isinstance(value, int | float):  # np.longdouble (its item() stays one)
        return float(value)
    return value


def solve_highs(
    model: pyo.Block,
    *,
    plugins: list[Any],
    time_limit: float | None,
    params: Mapping[str, Any],
    tee: bool,
    warmstart: bool = False,
) -> Result:
    """Solve with HiGHS through Pyomo's contrib `highs` interface; `plugins` are those with
    `attach_highs(highs, columns, block)` (OnSolution)."""
    for plugin in plugins:
        if not callable(getattr(plugin, "attach_highs", None)):
            raise InputError(f"HiGHS takes no {plugin_name(plugin)!r} plugin; it runs inside "
                             "SCIP (solver='scip')")
    opt = contrib_solver("highs", "HiGHS", "highspy")
    check_linear_for_highs(model)
    params = highs_options(params)
    duals = dual_request(model, quadratic_ok=True)  # HiGHS gives a convex QP its duals
    if not has_free_variables(model):
        tol = params.get("primal_feasibility_tolerance", HIGHS_FEASIBILITY_TOL)
        result = _constant_result(model, "highs", tol)
        _finish_unsolved(plugins, model, result)
        if warmstart:  # nothing to decide: the solver never sees a start
            result.extra["warmstart"] = {"values": 0, "variables": 0, "accepted": False}
        if duals is not None:  # no row has a variable left: every dual is 0
            if duals.lp is not None:
                duals.row_duals = [0.0] * len(duals.lp.rows)
            load_duals(duals, result)
        return result
    build_highs(opt, model)
    result, results = run_highs(opt, model, plugins=plugins, time_limit=time_limit,
                                params=params, tee=tee, warmstart=warmstart)
    if duals is not None:
        if duals.lp is not None and result.status is Status.OPTIMAL:
            _read_highs_duals(duals, results, opt)
        load_duals(duals, result, fallback=gradient_duals)
    return result


def build_highs(opt: Any, model: pyo.Block) -> None:
    """Build `model` in Pyomo's contrib `highs` interface `opt`, fixed columns continuous
    (see `fixed_columns_continuous`), rows with huge coefficients divided
    (`coplug.plugins.row_scaling`)."""
    try:
        with quadratic_objective_folded(model):  # built now, so Ctrl-C can reach it in a solve
            build_instance(opt, model, "HiGHS", _nonlinear_as_written)
    except (UnsupportedModelError, ValueError) as exc:
        if "uninitialized" not in str(exc):
            raise
        raise UnsupportedModelError(  # Pyomo's walk evaluates `0*x` in a power as a constant
            f"HiGHS cannot take this model as it stands: Pyomo's HiGHS interface evaluates a "
            f"term like (0*x + 1)**3 and needs a value for its variable ({exc.__cause__ or exc});"
            " give the variables values first, or use solver='scip'") from None
    check_rows_taken(opt)
    fixed_columns_continuous(opt)
    scale_highs_rows(opt._solver_model)
    refuse_crashing_coefficients(opt)


# HiGHS 1.16's MIP solver ended the process (segmentation fault, no error) on a 7-item
# knapsack row with weights 1.3e14-2.9e14, and on 11 of 15 random ones with weights
# 2e14-5e14 (none of 15 at 4e13-1e14): coefficients of integer columns from here on are
# refused before it runs.
HIGHS_MIP_COEFFICIENT_LIMIT = 1e14


def refuse_crashing_coefficients(opt: Any) -> None:
    """An UnsupportedModelError naming the row where HiGHS would get a coefficient of at
    least HIGHS_MIP_COEFFICIENT_LIMIT on an integer column (as built, rows scaled)."""
    import highspy

    lp = opt._solver_model.getLp()
    integer = np.array([kind != highspy.HighsVarType.kContinuous for kind in lp.integrality_],
                       dtype=bool)
    if not integer.any():
        return
    matrix = lp.a_matrix_
    values = np.abs(np.asarray(matrix.value_, dtype=float))
    lines = np.repeat(np.arange(len(matrix.start_) - 1), np.diff(matrix.start_))
    index = np.asarray(matrix.index_)
    rows, cols = (lines, index) if matrix.format_ == highspy.MatrixFormat.kRowwise else (
        index, lines)
    big = np.flatnonzero((values >= HIGHS_MIP_COEFFICIENT_LIMIT) & integer[cols])
    if big.size == 0:
        return
    k = int(big[0])
    con = next(c for c, row in opt._pyomo_con_to_solver_con_map.items() if row == rows[k])
    raise UnsupportedModelError(
        f"constraint {con.name!r} has a coefficient of {values[k]:.3g} on an integer "
        f"variable: HiGHS's MIP solver crashed the process on such rows (from about "
        f"{HIGHS_MIP_COEFFICIENT_LIMIT:g}); rescale the row or use solver='scip'")


def check_rows_taken(opt: Any) -> None:
    """Raise InputError naming the coefficient where HiGHS refused the model's rows: it
    refuses every row of a batch over one coefficient of its `large_matrix_value` (1e15) or
    more, with a status Pyomo's interface ignores, and then solved the model without rows
    ("optimal" 15 for a true 4)."""
    highs = opt._solver_model
    if highs.getNumRow() == len(opt._pyomo_con_to_solver_con_map):
        return
    limit = float(option_value(highs, "large_matrix_value"))
    for con in opt._pyomo_con_to_solver_con_map:
        repn = generate_standard_repn(con.body, compute_values=True, quadratic=False)
        for var, coef in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            if abs(coef) >= limit:
                raise InputError(
                    f"constraint {con.name!r}: the coefficient {coef:g} of {var.name} is at "
                    f"or past HiGHS's limit on matrix values ({limit:g}), and HiGHS refuses "
                    "such rows; rescale the row or use solver='scip'")
    raise SolverError(f"HiGHS took {highs.getNumRow()} of the model's "
                      f"{len(opt._pyomo_con_to_solver_con_map)} rows")


def _folded_for_highs(expr: Any) -> bool:
    """Whether an objective is to be folded for Pyomo's HiGHS interface: of degree 2, or of
    degree 1 at its Params' values but not linear as written (`p * (x**2 + y)` at p = 0,
    which the interface refused as "of degree None")."""
    if plainly_linear(expr):
        return False
    degree = expr.polynomial_degree()
    if degree == 2:
        return True
    if degree != 1:
        return False
    return not generate_standard_repn(expr, compute_values=False, quadratic=False).is_linear()


def _nonlinear_as_written(model: pyo.Block) -> str | None:
    """The constraint Pyomo's HiGHS interface refused as "of degree None": nonlinear as
    written though linear at its Params' values (`p * x**2 + x <= 3` with p = 0)."""
    for con in model.component_data_objects(pyo.Constraint, active=True):
        if plainly_linear(con.body):
            continue
        repn = generate_standard_repn(con.body, compute_values=False, quadratic=False)
        if repn.nonlinear_expr is not None:
            return (f"constraint {con.name!r}: it is nonlinear as written (linear only at its "
                    "Params' values); drop the vanishing terms or use solver='scip'")
    return None


@contextmanager
def quadratic_objective_folded(model: pyo.Block) -> Iterator[None]:
    """The active quadratic objective as plain terms with its Params' values, while Pyomo's
    HiGHS interface reads it: that refused `p * ((x - y)**2 + x*x)` for a mutable Param `p`
    ("expressions of degree None"), and each solve builds afresh, so values suffice."""
    obj = next(model.component_data_objects(pyo.Objective, active=True), None)
    if obj is None or not _folded_for_highs(obj.expr):
        yield
        return
    original = obj.expr
    folded = _flat_quadratic(generate_standard_repn(original, compute_values=True,
                                                    quadratic=True))
    kept = ComponentSet(identify_variables(folded))
    obj.expr = folded + sum(  # a variable its Params zero out keeps its column (and value)
        MonomialTermExpression((0.0, var))
        for var in identify_variables(original, include_fixed=False) if var not in kept)
    try:
        yield
    finally:
        obj.expr = original


def _flat_quadratic(repn: Any) -> Any:
    """The quadratic standard form as one flat sum, in the form's own term order
    (`to_expression` sorted the terms by their names: half of its 1.5 s at 2,000 variables)."""
    terms = [MonomialTermExpression((coef, var))
             for coef, var in zip(repn.linear_coefs, repn.linear_vars, strict=True)]
    terms += [ProductExpression((MonomialTermExpression((coef, a)), b))
              for coef, (a, b) in zip(repn.quadratic_coefs, repn.quadratic_vars, strict=True)]
    return SumExpression([repn.constant, *terms])


def run_highs(opt: Any, model: pyo.Block, *, plugins: list[Any], time_limit: float | None,
              params: Mapping[str, Any], tee: bool, warmstart: bool = False,
              ) -> tuple[Result, Any]:
    """Solve the model built in `opt` (options in HiGHS's types, see `highs_options`) with
    `plugins` attached, load the point back; the Result and Pyomo's results (for duals)."""
    mip_start = None
    highs = opt._solver_model
    refuse_mip_objective_bound(highs, params)
    if warmstart:  # persistent: the start set on the built model survives solve()'s update
        columns = opt._pyomo_var_to_solver_var_map  # id(var) -> HiGHS column
        pairs = ((opt._vars[vid][0], col) for vid, col in columns.items())
        mip_start = highs_mip_start(highs, pairs, tee)
    view = RowView(highs)  # the model is final: its rows are read once for every check
    rows = highs_integral_rows(highs, mip_tolerance(highs, params), view)
    rejects = (None if "mip_feasibility_tolerance" in params
               else point_misjudged(rows, view))  # what `guard_verdict` would discard
    for plugin in plugins:
        plugin.attach_highs(highs, opt._pyomo_var_to_solver_var_map, model, rejects)
    start = time.perf_counter()  # `time` counts the solves, as SCIP's does, not the build
    results, status, checked = _solve_checked(opt, model, time_limit, params, tee, start,
                                              view, rows, plugins)
    if mip_start is not None and misreported(highs, view):
        highs.clearSolver()  # drops the start with the answer it spoiled
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - start),
                                                   1e-3)
        results, status, checked = _solve_checked(opt, model, left, params, tee, start,
                                                  view, rows, plugins)
        mip_start["accepted"] = False
        mip_start["note"] = START_MISREPORTED
    raise_plugin_failures(plugins)
    elapsed = time.perf_counter() - start
    has_solution = (
        results.solution_status != SolutionStatus.noSolution and status is not Status.UNBOUNDED
    )
    if status is Status.UNKNOWN and has_solution:
        status = Status.FEASIBLE
    if status is Status.UNKNOWN and (
            results.termination_condition is not TerminationCondition.objectiveLimit):
        raise SolverError(  # an objective limit the caller set is a status (`stopped_at`)
            "HiGHS stopped with no answer (model status "
            f"{highs.modelStatusToString(highs.getModelStatus())!r}); rerun with tee=True "
            "for its log"
        )
    if status is Status.UNBOUNDED and not quadratic_ray(highs):
        raise SolverError("HiGHS called a model with a convex quadratic objective unbounded, "
                          "but no direction its rows and bounds allow lowers the objective "
                          "without bound (it did so for min x**2 - 2e7 x); solve it with "
                          "solver='scip'")
    ray = "duality_gap" in checked and has_solution and qp_ray(highs) is True
    has_solution = has_solution and not ray  # nothing loaded, as for HiGHS's own unbounded
    StaleFlagManager.mark_all_as_stale()
    if has_solution:
        _load_snapped(opt)
    info = highs.getInfo()
    bound = _bound(results.objective_bound, status, model)
    if status is Status.OPTIMAL and has_solution and beyond_default_gap(
            results.incumbent_objective, bound, int(getattr(info, "mip_node_count", -1)),
            highs.getObjectiveOffset()[1]):
        status = Status.FEASIBLE
    result = Result(
        extra={} if mip_start is None else {"warmstart": mip_start},
        status=status,
        solver="highs",
        objective=results.incumbent_objective if has_solution else None,
        bound=None if bound is None else float(bound),
        nodes=max(int(getattr(info, "mip_node_count", 0)), 0),
        time=elapsed,
        has_solution=has_solution,
    )
    result.plugin_stats = plugins_statistics(plugins)
    result.extra.update(checked)  # `time` already spans both solves
    if results.termination_condition is TerminationCondition.objectiveLimit and (
            status is not Status.OPTIMAL):
        result.extra["stopped_at"] = OBJECTIVE_LIMIT
    factors = highs_row_factors(highs)
    if factors is not None:
        result.extra["scaled_rows"] = int(np.count_nonzero(factors != 1.0))
    result.nodes += checked.get("first_solve", {}).get("nodes", 0)
    if ray:
        unbounded_qp(result, highs)
    elif "duality_gap" in checked:
        flag_duality_gap(result)
    if has_solution:
        _check_rows(opt, result, rows, view)
        flag_fractional(result, pyomo_integers(
            opt._vars[vid][0] for vid in opt._pyomo_var_to_solver_var_map),
            "HiGHS", "mip_feasibility_tolerance", params)
    finish_plugins(plugins, result)
    return result, results


def _solve_checked(opt: Any, model: pyo.Block, time_limit: float | None,
                   params: Mapping[str, Any], tee: bool, start: float, view: RowView,
                   rows: list[IntegralRow], plugins: Sequence[Any] = (),
                   ) -> tuple[Any, Status, dict[str, Any]]:
    """Solve through Pyomo and guard the verdict (`guard_verdict`) of the model with the
    large all-integer rows `rows`. A solve again (its first answer discarded) lets `plugins`
    stop it anew (`resume_highs`): a stop asked in the first one interrupted the second
    at once, which then had no solution at all. Returns the results, the status and what
    goes into `result.extra`."""
    highs = opt._solver_model
    cancel, interrupted = user_interrupt(highs)
    first = _run(opt, model, time_limit, params, tee, cancel)
    scale = objective_scale(highs, params)
    if scale is not None and not interrupted():
        params = {**params, "user_objective_scale": scale}
        left = None if time_limit is None else max(
            time_limit - (time.perf_counter() - start), 1e-3)
        first = _run(opt, model, left, params, tee, cancel)

    def again(rest: float | None, options: Mapping[str, float]) -> Any:
        for plugin in plugins:
            resume = getattr(plugin, "resume_highs", None)
            if callable(resume):
                resume()
        return _run(opt, model, rest, {**params, **options}, tee, cancel)

    results, status, checked = guard_verdict(
        highs, rows, params, time_limit, tee, start, first, again,
        lambda results: _status(results, highs), view, interrupted)
    if scale is not None:
        checked["user_objective_scale"] = scale
    return results, status, checked


def quadratic_ray(highs: Any) -> bool:
    """Whether HiGHS's model can be unbounded as it says: an LP (no Hessian), or a QP with an
    improving ray (`stationarity.improving_ray`, which finds none in a strictly convex one;
    where it cannot say, HiGHS is believed)."""
    return qp_ray(highs) is not False


def qp_ray(highs: Any) -> bool | None:
    """Whether HiGHS's QP has an improving ray (`stationarity.improving_ray`); None for an
    LP, or where that cannot be said."""
    import highspy

    model = highs.getModel()
    if int(model.hessian_.dim_) == 0:
        return None
    lp = model.lp_
    sign = -1.0 if lp.sense_ == highspy.ObjSense.kMaximize else 1.0
    hessian = sp.csr_matrix(symmetric_hessian(model.hessian_))
    hessian.resize((lp.num_col_, lp.num_col_))  # columns past the Hessian's are flat
    return improving_ray(sign * np.asarray(lp.col_cost_, dtype=float), sign * hessian,
                         row_matrix(lp),
                         np.asarray(lp.row_lower_, dtype=float),
                         np.asarray(lp.row_upper_, dtype=float),
                         np.asarray(lp.col_lower_, dtype=float),
                         np.asarray(lp.col_upper_, dtype=float))


def objective_scale(highs: Any, params: Mapping[str, Any]) -> int | None:
    """The `user_objective_scale` (a power of two) to solve again with where HiGHS stopped
    with no answer on an objective with costs of OBJECTIVE_SCALE_FROM or more, which the
    caller did not scale; None otherwise. Its dual simplex gave up on costs near 1e10
    ("excessive dual values": model status 'Not Set') on an LP it then called infeasible at
    2**-14, the scale its log suggests (largest cost near 1e6)."""
    import highspy

    status = highspy.HighsModelStatus
    stuck = (status.kNotset, status.kSolveError, status.kPostsolveError, status.kUnknown)
    if "user_objective_scale" in params or highs.getModelStatus() not in stuck:  # no answer
        return None
    costs = np.abs(np.asarray(highs.getLp().col_cost_, dtype=float))
    largest = float(costs.max()) if costs.size else 0.0
    if not largest >= OBJECTIVE_SCALE_FROM:
        return None
    return -math.ceil(math.log2(largest / OBJECTIVE_SCALE_FROM))


def user_interrupt(highs: Any) -> tuple[Callable[[], None], Callable[[], bool]]:
    """What Ctrl-C calls (stop HiGHS) and whether it was called: after Ctrl-C `solve`
    solves no more (HiGHS's cancel flag stays set, so a solve again stopped at once and
    the first run's point was lost)."""
    pressed: list[bool] = []

    def cancel() -> None:
        pressed.append(True)
        highs.cancelSolve()

    return cancel, lambda: bool(pressed)


# Why a HiGHS MIP start was dropped and the model solved again without it.
START_MISREPORTED = ("HiGHS returned the start as its answer with an objective the point "
                     "does not have; solved again without the start")


def misreported(highs: Any, view: RowView) -> bool:
    """Whether HiGHS reports, for the point it returns, an objective that point does not
    have. HiGHS 1.16 handed a MIP start back as "optimal" with only the objective's offset as
    its value (a 6-variable MIP: reported 0 at a point worth 4, the optimum is 1)."""
    info = highs.getInfo()
    if not view.integer.any() or int(info.primal_solution_status) == 0:
        return False
    lp = view.lp
    value = float(lp.offset_) + float(np.dot(lp.col_cost_, highs.getSolution().col_value))
    reported = float(info.objective_function_value)
    return not abs(value - reported) <= 1e-6 * max(1.0, abs(value))


def point_misjudged(rows: list[IntegralRow], view: RowView) -> Callable[[Any], bool]:
    """Whether HiGHS's column values are a point `misjudged` would discard (a row they
    miss, `point_violations`). OnSolution skips such points: a callback that stopped at one
    left it as the answer, or handed on a point `solve` then discarded."""
    return lambda values: bool(point_violations(rows, view, values))


def guard_verdict(highs: Any, rows: list[IntegralRow], params: Mapping[str, Any],
                  time_limit: float | None, tee: bool, start: float, first: T,
                  run: Callable[[float | None, Mapping[str, float]], T],
                  status_of: Callable[[T], Status], view: RowView | None = None,
                  interrupted: Callable[[], bool] = lambda: False,
                  ) -> tuple[T, Status, dict[str, Any]]:
    """Guard HiGHS's verdict after its first solve (`first`, whatever `run` returns): a MIP
    answer its tolerance misjudges is solved again tighter (`solve_tightened`), an optimal LP
    answer is certified by its duals (`recheck_lp`), an 'infeasible or unbounded' is settled.
    `run(time_left, options)` solves again with options set; `status_of` reads the status of
    what it returned; `view` holds the model's rows read once (see `RowView`); after Ctrl-C
    (`interrupted()`) nothing is solved again and the first run's point stays. Returns the
    last run's value, the status and what goes into `result.extra`. Shared by models
    (through Pyomo) and files (HiGHS alone)."""
    def left() -> float | None:
        return None if time_limit is None else time_limit - (time.perf_counter() - start)

    results, checked = first, {}
    if interrupted():
        return results, status_of(results), checked
    if "mip_feasibility_tolerance" not in params and misjudged(highs, rows, view):
        again, checked = solve_tightened(highs, rows, params, time_limit,
                                         time.perf_counter() - start, run, view)
        results = results if again is None else again
    status = status_of(results)
    if status is Status.OPTIMAL:
        again, lp_check = recheck_lp(highs, params, left(), run)
        if again is not None:
            results, status = again, status_of(again)
        checked.update(lp_check)
    if status is Status.INFEASIBLE_OR_UNBOUNDED:
        with sigint_cancels(highs.cancelSolve):
            status = settle_infeasible_or_unbounded(highs, left(), tee)
    return results, status, checked


# Pyomo's persistent interface re-reads the whole model before every solve to find what
# changed since it was built (`update`); `solve_highs` builds it just before the first solve
# and changes nothing in the Pyomo model between solves, so each check is off (0.03 s of
# the 0.7 s a 45,000-variable LP spent in `solve`, 0.06 s on 40,000 two-term rows).
_NO_UPDATES = dict.fromkeys(
    ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
     "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
     "update_vars", "update_parameters", "update_named_expressions", "update_objective"),
    False)


def _run(opt: Any, model: pyo.Block, time_limit: float | None, params: Mapping[str, Any],
         tee: bool, cancel: Callable[[], None] | None = None) -> Any:
    """One HiGHS solve through Pyomo of the model built in `opt` (its interrupt callbacks on:
    Ctrl-C calls `cancel`, by default HiGHS's cancelSolve, which sets their flag)."""
    with sigint_cancels(cancel or opt._solver_model.cancelSolve), \
            pyomo_highs_interrupt_quiet(), threads_option(params):
        return opt.solve(
            model,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            time_limit=time_limit,
            solver_options=dict(params),
            tee=tee,
            auto_updates=_NO_UPDATES,
        )


@contextmanager
def threads_option(params: Mapping[str, Any]) -> Iterator[None]:
    """Let a solve set HiGHS's `threads`. HiGHS starts its pool of worker threads at the
    first solve of the process and refuses any later `threads` (the solve stopped with no
    answer: "the scheduler has already been initialized"), so the pool is dropped before
    such a solve and again after it, for the next solve to start HiGHS's default pool."""
    if "threads" not in params:
        yield
        return
    import highspy

    highspy.Highs.resetGlobalScheduler(True)  # solves take turns: no HiGHS run is using it
    try:
        yield
    finally:
        highspy.Highs.resetGlobalScheduler(True)


def mip_tolerance(highs: Any, params: Mapping[str, Any]) -> float:
    """The mip_feasibility_tolerance the solve will run at."""
    if "mip_feasibility_tolerance" in params:
        return float(params["mip_feasibility_tolerance"])
    return float(option_value(highs, "mip_feasibility_tolerance"))


def solve_tightened(highs: Any, rows: list[IntegralRow], params: Mapping[str, Any],
                    time_limit: float | None, spent: float,
                    run: Callable[[float | None, Mapping[str, float]], T],
                    view: RowView | None = None) -> tuple[T | None, dict[str, Any]]:
    """Solve again, by `run(time_left, options)`, at the mip_feasibility_tolerance that
    refuses an overshoot of 0.1 on every row it misjudged, with the time that remains.
    Returns what `run` returned (None when no time remains) and what goes into
    `result.extra`: the tolerance and the discarded first solve."""
    info = highs.getInfo()
    first = {"time": spent, "nodes": max(int(info.mip_node_count), 0),
             "objective": info.objective_function_value
             if highs.getSolution().value_valid else None}
    remaining = None if time_limit is None else time_limit - spent
    if remaining is not None and remaining <= 0.0:
        return None, {}
    tolerance = tightened_tolerance(highs, rows, mip_tolerance(highs, params), view)
    return (run(remaining, {"mip_feasibility_tolerance": tolerance}),
            {"mip_feasibility_tolerance": tolerance, "first_solve": first})


LP_RETRY = {"dual_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10}


def recheck_lp(highs: Any, params: Mapping[str, Any], time_left: float | None,
               rerun: Callable[[float | None, Mapping[str, float]], T],
               ) -> tuple[T | None, dict[str, Any]]:
    """Certify HiGHS's optimal LP answer by the duality gap of its own primal and dual
    solution; when the gap is too large, solve again by `rerun(time_left, options)` at the
    LP_RETRY tolerances (unless the caller set them) and certify that. Returns what `rerun`
    returned (None when not run) and what goes into `result.extra`: the retry's tolerances,
    and the gap left where no certificate held."""
    found = lp_certificate(highs)
    if found is None or found.holds:
        return None, {}
    again, extra = None, {}
    if not set(LP_RETRY) & set(params) and (time_left is None or time_left > 0):
        again = rerun(time_left, LP_RETRY)
        extra["lp_retry"] = dict(LP_RETRY)
        found = lp_certificate(highs)
        if found is None or found.holds:
            return again, extra
    extra["duality_gap"] = {"gap": found.gap, "relative": found.gap / found.scale}
    return again, extra


def unbounded_qp(result: Result, highs: Any) -> None:
    """Status `unbounded` for a QP HiGHS called optimal at a point its duals do not prove,
    where an improving ray exists: HiGHS called 17 of 23 random unbounded convex QPs optimal
    (at some point far out), which `feasible` had left as an answer."""
    warn_at_caller("HiGHS called the model optimal, but its duals do not prove the point and "
                   "a direction its rows and bounds allow lowers the quadratic objective "
                   "without bound: the model is unbounded")
    import highspy

    result.status, result.objective, result.has_solution = Status.UNBOUNDED, None, False
    maximize = highs.getLp().sense_ == highspy.ObjSense.kMaximize
    result.bound = math.inf if maximize else -math.inf


def flag_duality_gap(result: Result) -> None:
    """Status `feasible` and no bound for an LP answer its duals do not prove optimal."""
    gap = result.extra["duality_gap"]
    warn_at_caller(f"HiGHS called the model optimal, but its duals leave a duality gap of "
                   f"{gap['gap']:.3g} ({gap['relative']:.1e} of the objective's scale): the "
                   "status is 'feasible' (rescale the rows, or try solver='scip')")
    result.status, result.bound = Status.FEASIBLE, None


def _check_rows(opt: Any, result: Result, rows: list[IntegralRow], view: RowView) -> None:
    """Judge HiGHS's final solution on the large all-integer rows exactly and on the rows with
    integer variables at its rounded integers; a violation makes the status `unknown` (named
    by Pyomo constraint) with a warning."""
    violated = solution_violations(opt._solver_model, rows, view)
    if violated:
        names = {str(row): con.name for con, row in opt._pyomo_con_to_solver_con_map.items()}
        flag_violations(result, {names.get(k, k): v for k, v in violated.items()}, "HiGHS",
                        "absolute", "constraint(s) with integer variables")


def settle_infeasible_or_unbounded(highs: Any, time_left: float | None, tee: bool) -> Status:
    """Decide HiGHS's 'infeasible or unbounded' (its answer for unbounded MIPs, where SCIP
    says unbounded) by one more run with a zero objective, which cannot be unbounded: a
    feasible point means unbounded, none infeasible. A QP, or a run that does not finish,
    keeps the verdict."""
    import highspy

    model = highs.getModel()
    if model.hessian_.dim_ > 0 or (time_left is not None and time_left <= 0):
        return Status.INFEASIBLE_OR_UNBOUNDED
    columns = np.arange(model.lp_.num_col_, dtype=np.int32)
    costs = np.array(model.lp_.col_cost_, dtype=float)
    highs.changeColsCost(len(columns), columns, np.zeros(len(columns)))
    highs.setOptionValue("output_flag", bool(tee))
    if time_left is not None:
        highs.setOptionValue("time_limit", float(time_left))
    shown = [sys.stdout] if tee and not option_value(highs, "log_to_console") else []
    # no improving-solution callbacks: this run's points are not the model's (objective 0)
    with _improving_callbacks_off(highs), log_to(highs, shown):
        highs.run()
    verdict = highs.getModelStatus()
    highs.changeColsCost(len(columns), columns, costs)
    if verdict == highspy.HighsModelStatus.kOptimal:
        return Status.UNBOUNDED
    if verdict == highspy.HighsModelStatus.kInfeasible:
        return Status.INFEASIBLE
    return Status.INFEASIBLE_OR_UNBOUNDED


@contextmanager
def _improving_callbacks_off(highs: Any) -> Iterator[None]:
    """Within the block HiGHS calls no improving-solution callback (`OnSolution`): the
    settle run's zero objective handed the callback its points with the objective's
    constant as their value."""
    import highspy

    kind = highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution
    subscribed = getattr(highs, "cbMipImprovingSolution", None)
    active = bool(getattr(subscribed, "callbacks", None))
    if active:
        highs.stopCallback(kind)
    try:
        yield
    finally:
        if active:
            highs.startCallback(kind)


def _read_highs_duals(request: DualRequest, results: Any, opt: Any) -> None:
    """HiGHS's row duals through Pyomo's loader (a row Pyomo did not pass on has none), those
    of rows `scale_highs_rows` divided multiplied back."""
    try:
        duals = results.solution_loader.get_duals()
    except Exception as exc:  # Pyomo raises NoDualsError when HiGHS has no valid duals
        request.reason = f"HiGHS gave no duals ({type(exc).__name__})"
        return
    factors = highs_row_factors(opt._solver_model)
    rows = opt._pyomo_con_to_solver_con_map
    request.row_duals = [
        float(duals.get(con, 0.0)) * (1.0 if factors is None or con not in rows
                                      else float(factors[rows[con]]))
        for con, _, _, _ in request.lp.rows]



def fixed_columns_continuous(opt: Any) -> None:
    """Make the HiGHS columns of integer variables fixed at integral values continuous: Pyomo
    passes them as integer columns, which would make a convex QP a MIQP HiGHS cannot solve.
    One fixed off-integral stays integer, so HiGHS finds the model infeasible as SCIP does."""
    import highspy

    columns = []
    for vid, col in opt._pyomo_var_to_solver_var_map.items():
        var, _, _, fixed, _, value = opt._vars[vid]
        if fixed and var.is_integer() and value is not None and (
                abs(value - round(value)) <= FIXED_INTEGRAL_TOL):
            columns.append(col)
    if columns:
        kinds = [highspy.HighsVarType.kContinuous] * len(columns)
        opt._solver_model.changeColsIntegrality(len(columns), np.array(columns), np.array(kinds))


def _status(results: Any, highs: Any) -> Status:
    """Pyomo's termination condition as a Status, with the HiGHS stops Pyomo does not map
    or maps together: an interrupt, a memory limit, and a solution limit (feasible, as SCIP
    reports its own)."""
    import highspy

    model_status = highs.getModelStatus()
    if model_status == highspy.HighsModelStatus.kSolutionLimit:
        return solution_limit_status(highs, results.solution_status != SolutionStatus.noSolution)
    if results.termination_condition is TerminationCondition.objectiveLimit:  # as SCIP's
        has_point = results.solution_status != SolutionStatus.noSolution
        return Status.FEASIBLE if has_point else Status.UNKNOWN
    status = _PYOMO_STATUS.get(results.termination_condition, Status.UNKNOWN)
    if status is Status.UNKNOWN and model_status == highspy_interrupt():
        return Status.INTERRUPTED  # Pyomo does not map HiGHS's kInterrupt
    if model_status == highspy.HighsModelStatus.kMemoryLimit:
        return Status.MEMORY_LIMIT
    return status


def refuse_mip_objective_bound(highs: Any, params: Mapping[str, Any]) -> None:
    """Refuse HiGHS's `objective_bound` on a model with integer variables: HiGHS takes it
    as a cutoff there, and its verdicts are not the model's (at half the optimum it called
    a point 11% above the optimum optimal, and a feasible maximization infeasible)."""
    value = params.get("objective_bound")
    if value is None or float(value) == math.inf:  # HiGHS's default: no cutoff (-inf cuts
        return  # off every point: a feasible set cover came back infeasible)
    import highspy

    continuous = highspy.HighsVarType.kContinuous
    if any(kind != continuous for kind in highs.getLp().integrality_):
        raise InputError("HiGHS's objective_bound on a model with integer variables cuts off "
                         "solutions and answers for the cut model, not yours; stop at a good "
                         "enough point with objective_target, or use solver='scip' with "
                         "limits/primal or limits/dual")


def solution_limit_status(highs: Any, has_solution: bool) -> Status:
    """HiGHS's one "solution limit" stop as SCIP would name it: `optimal` where the gap is
    closed by then (HiGHS proves the optimum and stops before it says so: SCIP says
    optimal), `node_limit` when a node, leaf or stall-node limit the caller set was
    reached, else `feasible` (an improving-solution limit), or `unknown` without a
    solution."""
    def option(name: str) -> int:
        return int(option_value(highs, name))

    def lowered(name: str) -> bool:
        return option(name) < _DEFAULT_LIMITS[name]

    info = highs.getInfo()
    nodes = int(info.mip_node_count)
    if has_solution and math.isfinite(info.mip_dual_bound) and not beyond_default_gap(
            info.objective_function_value, info.mip_dual_bound, nodes,
            highs.getObjectiveOffset()[1], min(option_value(highs, "mip_rel_gap"),
                                                DEFAULT_REL_GAP),
            min(option_value(highs, "mip_abs_gap"), DEFAULT_ABS_GAP)):
        return Status.OPTIMAL
    if (lowered("mip_max_nodes") and nodes >= option("mip_max_nodes")) or (
            (lowered("mip_max_leaves") or lowered("mip_max_stall_nodes"))
            and not lowered("mip_max_improving_sols")):
        return Status.NODE_LIMIT
    return Status.FEASIBLE if has_solution else Status.UNKNOWN


def _bound(bound: float | None, status: Status, model: pyo.Block) -> float | None:
    """The dual bound as SCIP reports it: none for an infeasible model or an undecided one,
    +-inf (the objective's direction) for an unbounded one."""
    if status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED):
        return None
    if status is Status.UNBOUNDED:
        objective = next(model.component_data_objects(pyo.Objective, active=True), None)
        if objective is None:
            return None
        return math.inf if objective.sense == pyo.maximize else -math.inf
    return bound


def beyond_default_gap(objective: float | None, bound: float | None, nodes: int,
                       offset: float = 0.0, rel_gap: float = DEFAULT_REL_GAP,
                       abs_gap: float = DEFAULT_ABS_GAP) -> bool:
    """Whether a MIP (nodes >= 0; HiGHS reports -1 for an LP) stopped "optimal" with a gap
    HiGHS's defaults (or the tighter `rel_gap`, `abs_gap` given) would not have accepted,
    beyond the float rounding of values as large as the objective's `offset` (HiGHS proved
    0 with an offset of 8 at a bound of -1.000000001e-6, and an exact 1e-6 took a proven
    optimum for a feasible point)."""
    if nodes < 0 or objective is None or bound is None:
        return False
    gap = abs(float(objective) - float(bound))
    rounding = GAP_ROUNDING * max(1.0, abs(float(objective)), abs(float(bound)), abs(offset))
    return gap > abs_gap + rounding and \
        gap > rel_gap * abs(float(objective)) * (1 + 1e-9) + rounding


def _load_snapped(opt: Any) -> None:
    """Load HiGHS's point into the Pyomo variables with the integer values it leaves a hair
    off rounded (see `snapped`; only those `_snappable` picks are visited: 0.02 s on 45,000
    variables before), all in one batch as Pyomo's loader does: rounding after Pyomo's
    load changed fresh values under its delayed stale flag and left all but the last
    rounded variable stale (12 of 30 on one model)."""
    primals = opt._get_primals()
    variables, values = list(primals.keys()), list(primals.values())
    for k in _snappable(values):
        var = variables[k]
        if values[k] is not None and not var.fixed:
            values[k] = snapped(var, values[k])
    with sigint_deferred():  # the whole point or none (see `bridge._load_scip_solution`)
        for var, value in zip(variables, values, strict=True):
            var.set_value(value, skip_validation=True)
    StaleFlagManager.mark_all_as_stale(delayed=True)


def _snappable(values: list[Any]) -> list[int]:
    """Indices of the values `snapped` may change: -0.0, within INTEGER_SNAP of a whole
    number but off it, NaN, inf and None; every index unless each is a float or None
    (`snapped` turns an int or a numpy float into a float)."""
    if not {value.__class__ for value in values} <= {float, type(None)}:
        return list(range(len(values)))
    array = np.array(values, dtype=float)  # None reads as NaN
    nearest = np.round(array)
    odd = ~np.isfinite(array) | ((array == 0) & np.signbit(array))
    with np.errstate(invalid="ignore"):  # inf - inf
        near = (array != nearest) & (np.abs(array - nearest) <= INTEGER_SNAP)
    return np.flatnonzero(odd | near).tolist()
