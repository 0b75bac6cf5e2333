"""Numbers a solver cannot take, found before the solve: NaN, inf and coefficients at or
above 1e20 (SCIP's and HiGHS's infinity) in the active constraints and the objective, and
sides or bounds infinite in the direction no point meets (x >= 1e25, x.lb = 1e21), data that
cannot be evaluated (a Param without a value, a division by a Param at 0) and variable
domains neither continuous nor the integers ({0.5, 1.5, ...}, which HiGHS solved as the
integers). SCIP
loops on a NaN objective coefficient and both solvers return "optimal" answers for NaN
constraint coefficients, so these are refused up front; an objective too small for the
solvers' tolerances is solved with a warning. The constraints are judged in one pass first
(one log intercept, no names, their linear coefficients in one array); only a model that
fails it is checked constraint by constraint, which names the first offender."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.log import LoggingIntercept
from pyomo.core.expr.numvalue import native_numeric_types
from pyomo.core.expr.visitor import StreamBasedExpressionVisitor, identify_variables

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import CoplugError, InputError, UnsupportedModelError
from coplug.plugins.linear_terms import expanded_repn, final_linear_terms, final_parts
from coplug.plugins.outer_variables import used_outside, used_variables
from coplug.plugins.serial import one_solve_at_a_time

# How far from a whole number a fixed integer may be (the solvers' integrality tolerance).
FIXED_INTEGRAL_TOL = 1e-6
# SCIP's default infinity; HiGHS also reads values from 1e20 on as infinite.
SOLVER_INFINITY = 1e20
FLOAT_EXACT = 2**53  # every integer up to this is a float64 one
SCIP_HUGE = 1e15  # SCIP's numerics/hugeval: finite bounds past it are refused for SCIP
HUGE_BOUND_WHY = (f"lies past SCIP's numerics/hugeval ({SCIP_HUGE:g}), where SCIP's answers go "
                  "wrong (min -5.2 x with x <= 9 and x <= 1e18 came back 'optimal' 0, plain "
                  "PySCIPOpt too); give no bound where none is meant, or solve with "
                  "solver='highs'")
# An objective whose coefficients are all below this is lost in the solvers' absolute
# tolerances (HiGHS's MIP gap 1e-6, SCIP's feasibility 1e-6): solved, but with a warning.
TINY_OBJECTIVE = 1e-6
# A constraint coefficient of this size or less is a zero to both solvers (SCIP's epsilon,
# HiGHS's small_matrix_value): they drop it. Where its variable's bounds let the dropped term
# move the row by more than DROP_MATTERS (the solvers' feasibility tolerance), a warning
# names it: 1e-10 x <= 1 with x up to 1e12 was solved "optimal" at x = 1e12 by both.
SOLVER_ZERO = 1e-9
DROP_MATTERS = 1e-6
# A coefficient within this of a row's largest (at least 1) is what terms that cancel leave
# in float64 (0.3 y + 0.6 y + 0.1 y - y: -1.1e-16 y), not a term anyone wrote: not named.
ROUNDOFF = 1e-14


def check_model_data(model: pyo.Block, warn_tiny: bool = True) -> None:
    """Raise InputError naming a variable fixed without a value that an active constraint or
    objective uses, or the first non-finite or huge number in an active constraint, the
    active objective or a variable bound; warn about an objective too small for absolute
    tolerances when `warn_tiny` (not for the LAP path, whose tolerances are relative)."""
    constraints = list(model.component_data_objects(pyo.Constraint, active=True))
    tiny: list[bool] = []
    if not _constraints_plainly_fine(constraints, tiny):
        _check_each_constraint(constraints)
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    for obj in objectives:
        largest = check_objective_data(obj, tiny)
        if warn_tiny and 0 < largest < TINY_OBJECTIVE:
            warn_at_caller(f"objective {obj.name!r}: its largest coefficient is {largest:g}, "
                           f"below the solvers' absolute tolerances ({TINY_OBJECTIVE:g}), so "
                           "an 'optimal' answer may not be optimal; scale the objective up")
    if tiny:
        _warn_dropped_terms([(f"constraint {con.name!r}", con.body) for con in constraints]
                            + [(f"objective {obj.name!r}", obj.expr) for obj in objectives])
    _check_variables(model)


def huge_scip_bound(column: Any) -> tuple[str, float] | None:
    """The side and value of a SCIP column's finite bound past SCIP_HUGE, short of the
    solvers' infinity, or None (HUGE_BOUND_WHY says why such a bound is refused)."""
    for side, value in (("lower", column.getLbOriginal()), ("upper", column.getUbOriginal())):
        if SCIP_HUGE < abs(value) < SOLVER_INFINITY:
            return side, value
    return None


def fixed_off_whole(model: pyo.Block, tol: float = FIXED_INTEGRAL_TOL) -> list[Any]:
    """The integer variables the model's active constraints and objective use that are fixed
    more than `tol` from a whole number: both solvers call such a model infeasible whatever
    its rows (so must every path that answers for them). A whole model's own variables are
    looked at first, and its expressions walked only where one of them is such (the walk
    took 1.2 s of a 4.4 s LAP solve of 490,000 variables)."""
    def off(var: Any) -> bool:
        return (var.fixed and var.is_integer() and var.value is not None
                and math.isfinite(var.value) and abs(var.value - round(var.value)) > tol)

    if model.parent_block() is None and not any(
            map(off, model.component_data_objects(pyo.Var, descend_into=True))):
        return []  # a whole model uses its own variables only (`used_outside`)
    return [var for var in used_variables(model) if off(var)]


def check_objective_data(obj: Any, tiny: list[bool] | None = None) -> float:
    """Raise InputError naming a fixed variable without a value, a Param without one or a
    non-finite number in objective `obj` (active or not); its largest coefficient's size."""
    with _evaluating(f"objective {obj.name!r}", obj.expr):
        return _check_terms(obj.expr, f"objective {obj.name!r}", tiny)


def _check_variables(model: pyo.Block) -> None:
    """`_check_variable` on each variable that is not plainly fine: bounds compared inline
    (None, or below 1e20 / above -1e20, NaN failing both) and the domain judged once per
    domain object (half the time of checking each of 45,000 variables in full)."""
    verdicts: dict[tuple[type, int], tuple[Any, bool]] = {}
    for var in [*model.component_data_objects(pyo.Var, descend_into=True),
                *used_outside(model)]:
        try:
            lower, upper = var.bounds
        except ValueError:  # a NaN bound: `_check_variable` names it
            lower = upper = math.nan
        if not ((lower is None or lower < SOLVER_INFINITY
                 and (-FLOAT_EXACT <= lower <= FLOAT_EXACT or not _rounds(lower)))
                and (upper is None or upper > -SOLVER_INFINITY
                     and (-FLOAT_EXACT <= upper <= FLOAT_EXACT or not _rounds(upper)))):
            _check_variable(var)
            continue
        domain = var.domain
        known = verdicts.get((var.__class__, id(domain)))
        if known is None:  # the domain is kept alive with its verdict, so its id stays its own
            known = (domain, var.is_integer() or var.is_continuous())
            verdicts[var.__class__, id(domain)] = known
        if not known[1]:
            _check_variable(var)


def _check_variable(var: Any) -> None:
    """A variable's bounds (readable, not NaN, not unmeetable) and its domain."""
    try:
        lower, upper = var.bounds
    except ValueError as exc:  # Pyomo refuses a NaN bound when it is read
        raise InputError(f"variable {var.name!r}: {exc}") from None
    for side, value in (("lower", lower), ("upper", upper)):
        if _rounds(value):
            raise _inexact_error(f"variable {var.name!r}: its {side} bound", value)
        if value is not None and math.isnan(value):
            raise InputError(f"variable {var.name!r}: its {side} bound is NaN")
        if _unmeetable(value, side):
            raise _unmeetable_error(f"variable {var.name!r}: its {side} bound", value)
    if not (var.is_integer() or var.is_continuous()):
        raise UnsupportedModelError(
            f"variable {var.name!r}: its domain {var.domain} is neither continuous nor the "
            "integers (an offset or a step other than 1), which SCIP and HiGHS cannot "
            "take; substitute x = a + b*k")


def _check_each_constraint(constraints: Sequence[Any]) -> None:
    """`_check_constraint` on each in turn: raises for the first offender, by name."""
    for con in constraints:
        with _evaluating(f"constraint {con.name!r}", con.expr):
            _check_constraint(con)


def _constraints_plainly_fine(constraints: Sequence[Any], tiny: list[bool] | None = None
                              ) -> bool:
    """Whether every constraint would pass `_check_constraint`, judged in one pass under one
    log intercept, without names, the final linear bodies' numbers in one array (per-row
    intercepts, names and arrays took 2.4 of the 4 s a 40,000-row model spent in `solve`).
    False whenever anything fails or raises: the caller then checks one by one, which
    names the first offender exactly as before. Appends to `tiny` where a linear
    coefficient is a solver's zero (SOLVER_ZERO) but not 0."""
    tiny = [] if tiny is None else tiny
    lowers: list[float] = []
    uppers: list[float] = []
    numbers: list[Any] = []
    try:
        with pyomo_logs_quiet():
            for con in constraints:
                lower, body, upper = con.to_bounded_expression()  # what lower, body, upper read
                lowers.append(_side(lower, -math.inf))
                uppers.append(_side(upper, math.inf))
                parts = final_parts(body)
                if parts is None:
                    _check_terms(con.body, "", tiny)
                else:
                    numbers.extend(parts.coefs)
                    numbers.append(parts.constant)
            values = np.array(numbers, dtype=float)
    except Exception:  # the one-by-one check raises it again, by name
        return False
    if not tiny and any_solver_zero(values):
        tiny.append(True)  # a constant this small too: `_warn_dropped_terms` sorts it out
    sides = np.abs(np.array(lowers + uppers))
    return bool((np.abs(values) < SOLVER_INFINITY).all()
                and (np.array(lowers) < SOLVER_INFINITY).all()
                and (np.array(uppers) > -SOLVER_INFINITY).all()
                and not _past_exact(values, 0.0)
                and not _past_exact(sides[sides < SOLVER_INFINITY], 0.0))


def _side(value: Any, absent: float) -> float:
    """A constraint side as a float, `absent` when there is none (NaN stays NaN)."""
    if value is None:
        return absent
    return float(value if value.__class__ in native_numeric_types else pyo.value(value))


def _check_constraint(con: Any) -> None:
    """A constraint's sides (not NaN, not unmeetable) and the numbers in its body."""
    for side, value in (("lower", con.lower), ("upper", con.upper)):
        if value is not None and _rounds(pyo.value(value)):
            raise _inexact_error(f"constraint {con.name!r}: its {side} side", pyo.value(value))
        number = _value(value)
        if number is not None and math.isnan(number):
            raise InputError(f"constraint {con.name!r}: its {side} side is NaN")
        if _unmeetable(number, side):
            raise _unmeetable_error(f"constraint {con.name!r}: its {side} side", number)
    _check_terms(con.body, f"constraint {con.name!r}")


@contextmanager
def _evaluating(where: str, expr: Any = None) -> Iterator[None]:
    """Turn an error evaluating the model's data (a Param without a value, a division by a
    Param or fixed variable at 0, sqrt of a negative constant) into an InputError naming it;
    so too Pyomo's AttributeError or RuntimeError on a part of `expr` never given a value
    (`_undefined_part`)."""
    try:
        with pyomo_logs_quiet():
            yield
    except CoplugError:
        raise
    except RecursionError:
        raise InputError(f"{where}: its expression is nested too deep for Pyomo's readers "
                         "(Python's recursion limit); build it flat, with sum(...) or "
                         "quicksum") from None
    except (AttributeError, RuntimeError, TypeError) as exc:
        undefined = _undefined_part(expr)
        if undefined is None and "complex" in str(exc):  # (-4)**0.5 is complex in Python
            undefined = ("cannot evaluate its data (a complex number: a negative Param or "
                         "fixed variable to a fractional power?)")
        if undefined is None:
            raise
        raise InputError(f"{where}: {undefined}") from None
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        words = " ".join(str(exc).split())
        detail = words.split(". ")[0].rstrip(".") if words else type(exc).__name__
        raise InputError(f"{where}: cannot evaluate its data ({detail})") from None


def _undefined_part(expr: Any) -> str | None:
    """What in `expr` has no value for Pyomo to read, said for the user: a named Expression
    declared without one (`m.e = Expression()`: Pyomo failed on its None with an
    AttributeError) or a component never constructed (a Var of the AbstractModel used in
    its instance: Pyomo's RuntimeError came from deep inside); None when there is neither."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) in native_numeric_types or not hasattr(node, "is_expression_type"):
            continue
        component = node.parent_component() if hasattr(node, "parent_component") else None
        if component is not None and not component.is_constructed():
            return (f"it uses {node.name!r}, a component that was never constructed (one of "
                    "an AbstractModel, not of its instance?); use the model's own component")
        if node.is_named_expression_type() and node.expr is None:
            return (f"the Expression {node.name!r} in it has no value; give it one "
                    "(its set_value(...), or Expression(expr=...))")
        if node.is_expression_type():
            stack.extend(node.args)
    return None


@contextmanager
def pyomo_logs_quiet() -> Iterator[None]:
    """Swallow what Pyomo logs, at length, before it raises on data it cannot evaluate;
    under the process's solve lock: Pyomo's intercept swaps the shared loggers' handlers,
    and threads' `solve` data checks at once failed its own assertion and left Pyomo's
    warnings silenced for the rest of the process."""
    with (one_solve_at_a_time(),
          LoggingIntercept(io.StringIO(), "pyomo.common.numeric_types"),
          LoggingIntercept(io.StringIO(), "pyomo.core")):
        yield


def _unmeetable(value: float | None, side: str) -> bool:
    """A lower side at or above 1e20 (or an upper one at or below -1e20) is infinite to SCIP
    and HiGHS in the direction no point can meet: SCIP calls the model infeasible, HiGHS
    drops the side or stops with an empty model. The other direction (lower <= -1e20, upper
    >= 1e20) means no bound to both and is fine. Names are built for an offender only."""
    if value is None:
        return False
    return value >= SOLVER_INFINITY if side == "lower" else value <= -SOLVER_INFINITY


def _unmeetable_error(what: str, value: float) -> InputError:
    """The error for a side or bound `_unmeetable` refuses."""
    return InputError(f"{what} is {value:g}, at or beyond {SOLVER_INFINITY:g}, which SCIP and "
                      "HiGHS read as infinity (SCIP would call the model infeasible, HiGHS would "
                      "drop the bound); rescale the model")


def _past_exact(numbers: np.ndarray, constant: Any) -> bool:
    """Whether a number lies past 2**53, where an integer given may not be a float64 one."""
    return bool((np.abs(numbers) > FLOAT_EXACT).any()) or _rounds(constant) or (
        isinstance(constant, float) and abs(constant) > FLOAT_EXACT)


def _rounds(value: Any) -> bool:
    """Whether `value` is an integer float64 cannot hold (2**60 + 1 became 2**60)."""
    if type(value) is float or value is None:
        return False
    return ((type(value) is int or isinstance(value, np.integer))
            and not -FLOAT_EXACT <= value <= FLOAT_EXACT and int(float(value)) != value)


def _refuse_inexact_integer(expr: Any, where: str) -> None:
    """An InputError for the first integer in `expr` (a number or a Param's value) that
    float64 cannot hold; nothing where there is none."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) in native_numeric_types:
            value = node
        elif not hasattr(node, "is_expression_type"):
            continue
        elif node.is_variable_type():
            if not node.fixed:
                continue
            value = node.value  # a fixed variable is a constant to the solvers
        elif node.is_expression_type():
            stack.extend(node.args)
            continue
        else:
            value = pyo.value(node)  # a Param or a named constant
        if _rounds(value):
            raise _inexact_error(f"{where}: the number", value)


def _inexact_error(what: str, value: int) -> InputError:
    """The InputError for an integer the solvers, working in float64, would round."""
    return InputError(f"{what} {value} is an integer that float64 (in which the solvers "
                      f"work) rounds to {int(float(value))}: the answer would be for other "
                      "data than given; subtract a common offset or rescale")


def _value(expr: Any) -> float | None:
    """A constraint side as a float (None when absent)."""
    return None if expr is None else float(pyo.value(expr))


def _check_terms(expr: Any, where: str, tiny: list[bool] | None = None) -> float:
    """Coefficients and constant of the linear and quadratic parts, numbers inside the rest;
    returns the largest |coefficient| (0 without any), appending to `tiny` (where given)
    when a linear one is a solver's zero but not 0. Names are built for an offender only."""
    terms = final_linear_terms(expr)
    if terms is not None:
        if _past_exact(terms.coefs, terms.constant):
            _refuse_inexact_integer(expr, where)
        _check_linear(terms.constant, terms.coefs, terms.variables, where)
        if tiny is not None and any_solver_zero(terms.coefs):
            tiny.append(True)
        return float(np.abs(terms.coefs).max()) if terms.coefs.size else 0.0
    try:
        repn = expanded_repn(expr, quadratic=True)
    except TypeError:  # Pyomo adds a fixed variable's value None into the constant
        unset = _fixed_without_value(expr)
        if unset is None:
            raise
        raise InputError(f"{where}: variable {unset.name!r} is fixed but has no value; give "
                         "it one (var.fix(value)) or unfix it") from None
    linear = np.asarray(repn.linear_coefs, dtype=float)
    if _past_exact(np.asarray(repn.quadratic_coefs, dtype=float), repn.constant) or \
            _past_exact(linear, 0.0):
        _refuse_inexact_integer(expr, where)
    _check_linear(repn.constant, linear, repn.linear_vars, where)
    if tiny is not None and any_solver_zero(linear):
        tiny.append(True)
    quadratic = np.asarray(repn.quadratic_coefs, dtype=float)
    k = _first_bad(quadratic)
    if k is not None:
        a, b = repn.quadratic_vars[k]
        _check_number(quadratic[k], f"{where}: the coefficient of {a.name!r} * {b.name!r}")
    if repn.nonlinear_expr is not None:
        for number in _NumberCollector().walk_expression(repn.nonlinear_expr):
            _check_number(number, f"{where}: a number in its nonlinear part", huge_ok=True)
        return math.inf  # its own size is unknown: no "tiny objective" (-log(x) + x / 1e7)
    coefficients = np.abs(np.concatenate([linear, quadratic]))
    return float(coefficients.max()) if coefficients.size else 0.0


def any_solver_zero(coefs: np.ndarray) -> bool:
    """Whether a coefficient is a solver's zero (SOLVER_ZERO) but not 0."""
    return bool(((coefs != 0) & (np.abs(coefs) <= SOLVER_ZERO)).any())


def _warn_dropped_terms(parts: Sequence[tuple[str, Any]]) -> None:
    """Warn, naming the first, of the terms of the (where, expression) `parts` (constraint
    bodies, objectives) that the solvers drop as zeros (SOLVER_ZERO) whose variables' bounds
    let them move their row or objective by more than DROP_MATTERS."""
    found: list[tuple[str, float, str, float]] = []
    for where, expr in parts:
        repn = expanded_repn(expr)
        noise = ROUNDOFF * max([1.0, *map(abs, repn.linear_coefs)])
        for var, coef in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            if abs(coef) <= noise or abs(coef) > SOLVER_ZERO:
                continue
            reach = max(abs(_value(var.lb) if var.has_lb() else math.inf),
                        abs(_value(var.ub) if var.has_ub() else math.inf))
            if abs(coef) * reach > DROP_MATTERS:
                found.append((where, float(coef), var.name, abs(coef) * reach))
    if found:
        where, coef, var, moves = found[0]
        more = f" (and {len(found) - 1} more such terms)" if len(found) > 1 else ""
        reach = (f"{var} has no bound on a side" if math.isinf(moves)
                 else f"{var}'s bounds let it move the sum by {moves:g}")
        warn_at_caller(f"{where}: the coefficient {coef:g} of {var} is at or below the "
                       f"solvers' zero ({SOLVER_ZERO:g}), so SCIP and HiGHS may drop it, "
                       f"though {reach}{more}; scale the terms or the variable")


def _check_linear(constant: Any, coefs: np.ndarray, variables: Any, where: str) -> None:
    """The constant and the first bad linear coefficient, named by its variable."""
    _check_number(constant, f"{where}: its constant term")
    k = _first_bad(coefs)
    if k is not None:
        _check_number(coefs[k], f"{where}: the coefficient of {variables[k].name!r}")


def _fixed_without_value(expr: Any) -> Any:
    """The first variable in `expr` that is fixed with value None, or None."""
    return next((var for var in identify_variables(expr, include_fixed=True)
                 if var.fixed and var.value is None), None)


def _first_bad(values: np.ndarray) -> int | None:
    """Index of the first NaN, inf or |value| >= 1e20, or None."""
    bad = ~(np.abs(values) < SOLVER_INFINITY)  # NaN compares False
    return int(np.argmax(bad)) if bad.any() else None


def _check_number(value: Any, what: str, huge_ok: bool = False) -> None:
    """NaN, inf and (unless `huge_ok`) |value| >= 1e20 are refused, with `what` in the
    message; numbers inside nonlinear functions may be large (exp(-1e30 * x) is fine)."""
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise InputError(f"{what} is {number}")
    if not huge_ok and abs(number) >= SOLVER_INFINITY:
        raise InputError(f"{what} is {number:g}, at or above {SOLVER_INFINITY:g}, which SCIP "
                         "and HiGHS read as infinity; rescale the model")


class _NumberCollector(StreamBasedExpressionVisitor):
    """The constants and parameter values at the leaves of an expression."""

    def initializeWalker(self, expr: Any) -> tuple[bool, Any]:
        self.numbers: list[float] = []
        return True, None

    def beforeChild(self, node: Any, child: Any, index: int) -> tuple[bool, Any]:
        if type(child) in native_numeric_types:
            self.numbers.append(float(child))
            return False, None
        if not child.is_expression_type() and not child.is_potentially_variable():
            self.numbers.append(float(pyo.value(child)))  # a Param or a named constant
            return False, None
        return True, None

    def finalizeResult(self, result: Any) -> list[float]:
        return self.numbers
