"""Faults of Pyomo's Pyomo-to-SCIP expression walker (pyomo.contrib.solver, 6.10), fixed
by replacing the walker's handler while it is Pyomo's faulty one.

- Ranged constraints `lo <= body <= hi` are built as `lo <= (body <= hi)`: PySCIPOpt moves
  the body's constant off the right side only, so a body with a constant got the wrong left
  side (`-2 <= 2x + 1 <= 5`, min x: SCIP answered -1 instead of -1.5, `5 <= x**2 + 3 <= 7`
  came back infeasible). `ExprCons(body, lhs, rhs)` shifts both sides.
- A ranged side that is a mutable Param or a fixed variable becomes a SCIP variable there,
  which `ExprCons` cannot take, and a body without variables became a Python bool that
  SCIP refused with an AssertionError; an exponent that is a Param or a fixed variable
  was refused too (`x ** p`). coplug builds a fresh SCIP model for every solve, so in the
  models it marks (`mark_one_shot`) such parts are taken at their current values; a
  persistent model built by Pyomo's interface directly keeps Pyomo's construction.
- `abs()` (AbsExpression), an Objective used as a term (`m.o2 <= 3`, the epsilon-constraint
  pattern) and unit literals (`50 * units.m`) have no entry in the walker's type table, and
  the last two none in Pyomo's component collector either: SCIP refused the first and the
  others failed with a multi-line "Internal Pyomo implementation error". The walker's own
  abs and named-expression handlers and a skip in the collector take them.
- For the same reason, in a one-shot model every mutable Param and fixed variable is taken
  at its value: Pyomo builds each as a fixed SCIP variable, so `p * x` became a bilinear
  (nonlinear) constraint, which SCIP linearizes only in presolve and whose LP duals it
  cannot give.
- Sums are built with Python's `sum`, which copies PySCIPOpt's growing expression at every
  term: quadratic in the length, 85 of the 96 s that building a 100,000-item knapsack took.
  PySCIPOpt's `quicksum` adds in place, in linear time, with the same result.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyomo.contrib.observer.component_collector as collector
import pyomo.contrib.solver.solvers.scip.base as scip_base
import pyomo.environ as pyo
from pyomo.core.base.objective import ObjectiveData, ScalarObjective
from pyomo.core.base.units_container import _PyomoUnit
from pyomo.core.expr.numeric_expr import AbsExpression, NPV_AbsExpression
from pyomo.core.expr.numvalue import is_fixed, native_numeric_types
from pyomo.core.expr.relational_expr import TrivialRelationalExpression
from pyscipopt import quicksum
from pyscipopt.scip import Expr, ExprCons

_FAULTY_RANGED = scip_base._handle_ranged
_FAULTY_SUM = scip_base._handle_sum
_FAULTY_POW = scip_base._handle_pow
_PYOMO_INEQUALITY = scip_base._handle_inequality
_PYOMO_EQUALITY = scip_base._handle_equality
_PYOMO_PARAM = scip_base._handle_param
_PYOMO_VAR = scip_base._handle_var
_ONE_SHOT = "_coplug_one_shot"
_POW_TYPES = (scip_base.PowExpression, scip_base.NPV_PowExpression)
_SUM_TYPES = (scip_base.SumExpression, scip_base.LinearExpression, scip_base.NPV_SumExpression)


def _ranged(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """`lo <= body <= hi` with the body's constant taken off both sides; sides are taken at
    their values, and a body without variables gives a constraint on its constant alone
    (always met or never)."""
    lower, upper = (_fixed_value(node.args[k], data[k], opt) for k in (0, 2))
    body = data[1]
    if not all(isinstance(side, numbers.Real) for side in (lower, upper)):
        return _FAULTY_RANGED(node, data, opt, visitor)
    if isinstance(body, numbers.Real):
        body = Expr() + float(body)
    return ExprCons(body, lhs=float(lower), rhs=float(upper))


def _pow(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """`x ** y` with a fixed exponent (a Param or fixed variable too) taken at its value."""
    exponent = _fixed_value(node.args[1], data[1], opt)
    if isinstance(exponent, numbers.Real):
        return data[0] ** float(exponent)
    return _FAULTY_POW(node, data, opt, visitor)


def _fixed_value(arg: Any, built: Any, opt: Any) -> Any:
    """The value of a Pyomo expression with no free variable in a one-shot model, else what
    the walker built."""
    if isinstance(built, numbers.Real) or not getattr(opt, _ONE_SHOT, False):
        return built
    return pyo.value(arg) if is_fixed(arg) else built


def _param(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """A mutable Param at its value in a one-shot model (Pyomo's SCIP variable otherwise)."""
    if getattr(opt, _ONE_SHOT, False):
        return float(node.value)
    return _PYOMO_PARAM(node, data, opt, visitor)


def _var(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """A fixed variable at its value in a one-shot model; the SCIP variable otherwise."""
    if node.fixed and getattr(opt, _ONE_SHOT, False):
        return float(node.value)
    return _PYOMO_VAR(node, data, opt, visitor)


def _inequality(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """`a <= b`; between two numbers (every variable fixed) a constraint on a constant,
    met or not, where Python's comparison gave SCIP a bool."""
    if all(isinstance(item, numbers.Real) for item in data):
        return ExprCons(Expr() + float(data[1]) - float(data[0]), lhs=0.0)
    return _PYOMO_INEQUALITY(node, data, opt, visitor)


def _equality(node: Any, data: list[Any], opt: Any, visitor: Any) -> Any:
    """`a == b`, a constraint on a constant between two numbers (see `_inequality`)."""
    if all(isinstance(item, numbers.Real) for item in data):
        return ExprCons(Expr() + float(data[1]) - float(data[0]), lhs=0.0, rhs=0.0)
    return _PYOMO_EQUALITY(node, data, opt, visitor)


def unsupported_part(model: pyo.Block) -> str | None:
    """Where the walker fails on `model` ("constraint 'c': Expr_ifExpression"), named for
    the user, or None when it finds no part without a SCIP form."""
    parts = [("constraint", con) for con in model.component_data_objects(
        pyo.Constraint, active=True, descend_into=True)]
    parts += [("objective", obj) for obj in model.component_data_objects(
        pyo.Objective, active=True, descend_into=True)]
    for kind, part in parts:
        stack = [part.expr]
        while stack:
            node = stack.pop()
            if type(node) in native_numeric_types or not hasattr(node, "is_expression_type"):
                continue
            if isinstance(node, _POW_TYPES) and not _power_has_form(node):
                return (f"{kind} {part.name!r}: {node} raises to a variable power, which SCIP "
                        "takes only as exp(y * log(x)), for a base x with a lower bound above "
                        "0; give the base one")
            handler = scip_base._operator_map.get(type(node))
            if handler is None:
                return f"{kind} {part.name!r}: {type(node).__name__} has no SCIP form"
            if handler is scip_base._handle_unary and node.getname() not in scip_base._unary_map:
                return f"{kind} {part.name!r}: the function {node.getname()} has no SCIP form"
            if node.is_expression_type():
                stack.extend(node.args)
    return None


def _power_has_form(node: Any) -> bool:
    """Whether SCIP can take `x ** y`: a fixed exponent, or a base bounded above 0 (Pyomo's
    walker then builds exp(y * log(x)); otherwise it failed with a bare TypeError)."""
    base, exponent = node.args
    if is_fixed(exponent):
        return True
    lower = pyo.value(base) if is_fixed(base) else scip_base.compute_bounds_on_expr(base)[0]
    return lower is not None and lower > 0


def mark_one_shot(opt: Any) -> None:
    """Mark a Pyomo SCIP interface whose model is built once and never updated, so Params
    and fixed variables may be taken at their values. Such a model then needs no SCIP
    variable for a Param, and a fixed variable's SCIP variable is in no constraint: Pyomo's
    interface still fixed one at each value, and at 1e20 or beyond (`exp(x / p)` with p =
    1e30) SCIP read it as infinity and answered 100000 for an optimum of 1.1."""
    setattr(opt, _ONE_SHOT, True)
    opt._add_parameters = lambda params: None
    pyomo_bounds = opt._scip_lb_ub_from_var

    def bounds(var: Any) -> tuple[float, float]:
        if var.is_fixed() and var.value is not None and not (
                abs(var.value) < opt._solver_model.infinity()):
            return -opt._solver_model.infinity(), opt._solver_model.infinity()
        return pyomo_bounds(var)

    opt._scip_lb_ub_from_var = bounds
    _binaries_off_unit_as_integers(opt)


def _binaries_off_unit_as_integers(opt: Any) -> None:
    """Build a binary whose bounds (or fixed value) leave [0, 1], such as bounds (1, -1), as
    an integer: SCIP refuses such a binary with a bare "error in input data", while as an
    integer its empty bounds make the model infeasible, as HiGHS reports it."""
    pyomo_vtype, bounds = opt._scip_vtype_from_var, opt._scip_lb_ub_from_var

    def vtype(var: Any) -> str:
        kind = pyomo_vtype(var)
        if kind == "B":
            lb, ub = bounds(var)
            if not 0 <= lb <= ub <= 1:
                return "I"
        return kind

    opt._scip_vtype_from_var = vtype


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
    for kind in _POW_TYPES:
        if handlers.get(kind) is _FAULTY_POW:
            handlers[kind] = _pow
    for kind, handler in ((AbsExpression, scip_base._handle_unary),
                          (NPV_AbsExpression, scip_base._handle_unary),
                          (ObjectiveData, scip_base._handle_named_expression),
                          (ScalarObjective, scip_base._handle_named_expression)):
        handlers.setdefault(kind, handler)
    # Constraint.Feasible and .Infeasible (`0 <= 0`, `1 <= 0`) have no entry either: SCIP
    # refused a rule's `return Constraint.Feasible` as a TrivialRelationalExpression
    handlers.setdefault(TrivialRelationalExpression, _inequality)
    for kind in (ObjectiveData, ScalarObjective, _PyomoUnit):
        if kind not in collector.collector_handlers:  # its children are still visited
            collector.collector_handlers[kind] = collector.handle_skip
    for kind, pyomo_handler, ours in ((scip_base.ParamData, _PYOMO_PARAM, _param),
                                      (scip_base.ScalarParam, _PYOMO_PARAM, _param),
                                      (scip_base.VarData, _PYOMO_VAR, _var),
                                      (scip_base.ScalarVar, _PYOMO_VAR, _var),
                                      (scip_base.AutoLinkedBinaryVar, _PYOMO_VAR, _var),
                                      (scip_base.InequalityExpression, _PYOMO_INEQUALITY,
                                       _inequality),
                                      (scip_base.EqualityExpression, _PYOMO_EQUALITY,
                                       _equality)):
        if handlers.get(kind) is pyomo_handler:
            handlers[kind] = ours


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
