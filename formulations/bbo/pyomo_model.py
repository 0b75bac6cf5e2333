"""Build the Pyomo model of a program (`to_pyomo`, `scip_model`) and evaluate it at a point.

The model has box-bounded variables `x[i]`, one named `Expression` per let-binding and the
program as its (minimized) objective.

A large subexpression used more than once (an operand of max/min, a let referenced
twice, a vector entry several matrix rows use, a scalar broadcast over a vector) is bound
to an auxiliary variable `aux[k]`, bounded by its interval range, with the defining
equality `aux_def[k]: aux[k] == expr`, so the model stays linear in the program's size:
Pyomo, SCIP and the writers expand a shared `Expression` at every use, which is
exponential along a chain of lets (BBOB f21 nests 100 max). The model is an exact
reformulation; `set_point` (used by `pyomo_objective_at`) sets x and then each auxiliary
variable to its defining value. abs is exact (a function node SCIP's interface takes; the
file writers get Pyomo's AbsExpression); max/min are b + (d +- |d|) / 2 with d = a - b,
exact where the result is b and within an ulp or two of the larger of |a|, |b| otherwise
(no exact floating-point form of max exists that SCIP's interface takes; `load` rejects a
program whose value this moves at its sample points).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.errors import InfeasibleConstraintException
from pyomo.contrib.fbbt.expression_bounds_walker import (
    ExpressionBoundsExitNodeDispatcher,
    ExpressionBoundsVisitor,
    _handle_UnaryFunctionExpression,
)
from pyomo.contrib.fbbt.interval import interval_abs
from pyomo.core.expr.numeric_expr import UnaryFunctionExpression

from coplug.formulations.bbo.evaluate import BINOPS
from coplug.formulations.bbo.grammar import Node, Program, check_program
from coplug.formulations.bbo.validate import program_nodes
from coplug.plugins.errors import InputError

# A shared value of at most this many nodes is copied at each use instead of named by an
# auxiliary variable: copying caps growth at this factor, and keeps the models of programs
# without runaway sharing as they always were (SCIP certifies them no worse than before).
COPY_LIMIT = 64
# A let whose value nests deeper than this once expanded is bound to an auxiliary variable
# (Pyomo's walkers recurse per level; a single expression may nest grammar.MAX_DEPTH).
LET_DEPTH = 150
# Added to a power's base that can reach 0 (exponent >= 1), so that SCIP's exp(y log x) form
# of x ** y sees x > 0; changes the power far below SCIP's feasibility tolerance.
POW_BASE_SHIFT = 1e-9


@dataclass(frozen=True)
class _Sized:
    """An algebra expression with the node count and nesting depth of its tree once every
    name is expanded (`flat`: a sum, which one more term does not deepen)."""

    expr: Any
    size: int
    depth: int = 1
    flat: bool = False


Scalar = float | _Sized


def _expr(a: Scalar) -> Any:
    """What the algebra takes: the float itself or the wrapped expression."""
    return a if isinstance(a, float) else a.expr


def _size(a: Scalar) -> int:
    """Expanded node count (a float is one node)."""
    return 1 if isinstance(a, float) else a.size


def _depth(a: Scalar) -> int:
    """Expanded nesting depth (a float is none)."""
    return 0 if isinstance(a, float) else a.depth


class Scalarizer:
    """Expand a program into scalar expressions of some algebra (Pyomo or script text).

    Vectors become lists of length dim; python floats are folded eagerly so constants
    never reach the algebra as operations. A value used more than once goes through
    `share`: one larger than COPY_LIMIT nodes is bound to an auxiliary variable, smaller
    ones are copied, so the expanded output is at most COPY_LIMIT times the work done.
    The base of a power with a variable exponent is an auxiliary variable too: Pyomo's
    SCIP interface writes such a power as exp(y log x) when the base's bounds are
    positive, and reads them with Pyomo's own interval walker, which knows no `pyomo_abs`.
    A base that can reach 0 (BBOB's asymmetric transform max(u, 0) ** (1 + ...)) is kept
    at least POW_BASE_SHIFT when the exponent is at least 1 (see `_PyomoAlgebra.bind`).
    The rule depends only on the program, so every algebra builds the same model.
    """

    def __init__(self, program: Program, algebra: Any) -> None:
        self.p, self.alg = program, algebra
        self.refs: dict[str, Any] = {}
        self.uses = Counter(n.value for n in program_nodes(program) if n.op == "ref")

    def run(self) -> Any:
        """Define every let in the algebra, then return the body's expression."""
        for name, node in self.p.lets:
            value = self.value(node)
            if self.uses[name] > 1:
                value = self.share(value)
            self.refs[name] = self._define(name, self._shallow(value))
        return _expr(self.value(self.p.body))

    def _define(self, name: str, value: Scalar | list[Scalar]) -> Scalar | list[Scalar]:
        """Name a let's value in the algebra; each use of the name expands to the value."""
        named = self.alg.define(name, [_expr(v) for v in value] if isinstance(value, list)
                                else _expr(value))
        if isinstance(value, list):
            return [_Sized(e, _size(v), 1 + _depth(v)) for e, v in zip(named, value,
                                                                       strict=True)]
        return _Sized(named, _size(value), 1 + _depth(value))

    def _shallow(self, value: Any) -> Any:
        """The value, bound to an auxiliary variable where it nests past LET_DEPTH once its
        names are expanded: a chain of lines each used once nests without bound, and
        Pyomo's expression walkers ran out of Python's recursion limit (300 lines)."""
        if isinstance(value, list):
            return [self._shallow(item) for item in value]
        if _depth(value) <= LET_DEPTH:
            return value
        return _Sized(self.alg.bind(value.expr), 1)

    def share(self, value: Any) -> Any:
        """The value (or list of values) made cheap to use again: one over COPY_LIMIT nodes
        becomes an auxiliary variable, a smaller one is copied at each use."""
        if isinstance(value, list):
            return [self.share(item) for item in value]
        if _size(value) <= COPY_LIMIT:
            return value
        return _Sized(self.alg.bind(value.expr), 1)

    def value(self, node: Node) -> Any:
        """A node's value: a scalar, or a list of dim scalars for a vector."""
        op = node.op
        if op == "num":
            return float(node.value)
        if op in ("vec", "mat"):
            return [list(r) for r in node.value] if op == "mat" else list(node.value)
        if op == "x":
            return [_Sized(self.alg.var(i), 1) for i in range(self.p.dim)]
        if op == "xi":
            return _Sized(self.alg.var(node.value), 1)
        if op == "ref":
            return self.refs[node.value]
        args = [self.value(arg) for arg in node.args]
        if op == "matmul":
            mat, vec = args
            reused = [sum(row[j] != 0.0 for row in mat) > 1 for j in range(len(vec))]
            vec = [self.share(v) if again else v for v, again in zip(vec, reused, strict=True)]
            return [self._dot(row, vec) for row in mat]
        if op in ("sum", "prod"):
            out = args[0][0]
            for item in args[0][1:]:
                out = self.binary("add" if op == "sum" else "mul", out, item)
            return out
        return self._elementwise(op, args)

    def _dot(self, row: list[float], vec: list[Scalar]) -> Scalar:
        """One matrix row times the vector, skipping zero coefficients."""
        terms = [self.binary("mul", c, v) for c, v in zip(row, vec, strict=True) if c != 0.0]
        out: Scalar = 0.0
        for term in terms:
            out = term if isinstance(out, float) and out == 0.0 else self.binary("add", out, term)
        return out

    def _elementwise(self, op: str, args: list[Any]) -> Any:
        """An elementwise op, broadcast over vectors (a scalar operand is shared)."""
        if any(isinstance(a, list) for a in args):
            n = self.p.dim
            cols = [a if isinstance(a, list) else [self.share(a) if n > 1 else a] * n
                    for a in args]
            return [self._elementwise(op, list(items)) for items in zip(*cols, strict=True)]
        if op == "neg":
            a = args[0]
            return -a if isinstance(a, float) else _Sized(self.alg.neg(a.expr), 1 + a.size,
                                                          1 + a.depth)
        if op == "pow" and not isinstance(args[1], float) and (
                _size(args[0]) > 1 or self.alg.may_reach_zero(args[0])):
            base = self.alg.bind(_expr(args[0]), exponent=_expr(args[1]))
            return self.binary(op, _Sized(base, 1), args[1])
        if op in ("add", "sub", "mul", "div", "pow"):
            return self.binary(op, *args)
        if op in ("max", "min"):
            return self._max_min(op, args[0], args[1])
        return self.unary(op, args[0])

    def _max_min(self, op: str, a: Scalar, b: Scalar) -> Scalar:
        """max(a, b) = b + (d + |d|) / 2 and min(a, b) = b + (d - |d|) / 2, d = a - b.

        Exact in floating point where the result is b (d + |d| or d - |d| is exactly 0);
        where it is a, b + d rounds twice, so it is within an ulp or two of max(|a|, |b|)
        (exact when a - b is, e.g. for a and b within a factor 2; `load` rejects programs
        this moves). No squares: nothing overflows or underflows before the result does.
        """
        b = self.share(b)
        d = self.share(self.binary("sub", a, b))
        half = self.binary("mul", 0.5, self.binary("add" if op == "max" else "sub", d,
                                                   self.unary("abs", d)))
        return half if isinstance(b, float) and b == 0.0 else self.binary("add", b, half)

    def binary(self, op: str, a: Scalar, b: Scalar) -> Scalar:
        """`a op b`, folded to a float when both are floats."""
        if isinstance(a, float) and isinstance(b, float):
            with np.errstate(all="ignore"):
                return float(BINOPS[op](np.float64(a), np.float64(b)))
        flat = op in ("add", "sub")
        if flat and isinstance(a, _Sized) and a.flat:  # one more term of a sum
            depth = max(a.depth, 1 + _depth(b))
        else:
            depth = 1 + max(_depth(a), _depth(b))
        return _Sized(self.alg.binary(op, _expr(a), _expr(b)), 1 + _size(a) + _size(b),
                      depth, flat)

    def unary(self, op: str, a: Scalar) -> Scalar:
        """`op(a)`, folded to a float when a is one."""
        if isinstance(a, float):
            fn = {"acos": np.arccos, "abs": np.abs}.get(op, getattr(np, op, None))
            with np.errstate(all="ignore"):
                return float(fn(a))
        return _Sized(self.alg.unary(op, a.expr), 1 + a.size, 1 + a.depth)


def pyomo_abs(a: Any) -> UnaryFunctionExpression:
    """Exact |a| as a function node named 'abs': Pyomo's SCIP interface takes that one
    (SCIP's own abs), but not the AbsExpression that Python's abs() builds."""
    return UnaryFunctionExpression((a,), "abs", abs)


_PYO_FN = {"exp": pyo.exp, "log": pyo.log, "sin": pyo.sin, "cos": pyo.cos, "sqrt": pyo.sqrt,
           "abs": pyomo_abs, "tanh": pyo.tanh, "floor": pyo.floor, "acos": pyo.acos}


class _PyomoAlgebra:
    """Builds Pyomo expressions on a model with an indexed variable `x`; `abs_fn` makes
    |a| (`pyomo_abs` for SCIP, Python's abs for the file writers)."""

    def __init__(self, model: pyo.ConcreteModel, abs_fn: Callable[[Any], Any],
                 pow_fn: Callable[[Any, Any], Any] | None = None) -> None:
        self.m = model
        self.fns = _PYO_FN | {"abs": abs_fn}
        self.pow_fn = pow_fn  # writes base ** exponent where the exponent is no constant
        self.zero_reaching: list[bool] = []  # `may_reach_zero`'s answers, in order
        self.records: list[tuple[tuple[float | None, float | None], float]] = []
        self.zero_bases: list[str] = []
        self.bound_values: dict[int, Any] = {}

    def var(self, i: int) -> Any:
        return self.m.x[i]

    def may_reach_zero(self, base: Any) -> bool:
        """`_may_reach_zero`, its answer kept for the script's text algebra to replay."""
        answer = _may_reach_zero(base)
        self.zero_reaching.append(answer)
        return answer

    def bind(self, value: Any, exponent: Any = None) -> Any:
        """A new auxiliary variable aux[k] with the defining constraint aux[k] == value,
        bounded by the value's interval range (SCIP's interface needs bounds on pow bases).

        As the base of `exponent` (not a constant) it is also at least 0, where a real
        power is defined, and a base that can reach 0 under an exponent of at least 1 is
        written aux[k] == value + POW_BASE_SHIFT: SCIP takes x ** y only as exp(y log x)
        with x > 0, and the shift moves the power by at most y (x + s) ** (y - 1) s, far
        below SCIP's feasibility tolerance. Each aux's (bounds, shift) is kept in `records`.
        """
        if self.m.component("aux") is None:
            self.m.aux = pyo.VarList()
            self.m.aux_def = pyo.ConstraintList()
        lower, upper = _implied_bounds(value)
        shift = 0.0
        if exponent is not None and (lower is None or lower <= 0.0):
            lower = 0.0
            if (_implied_bounds(exponent)[0] or 0.0) >= 1.0 - 1e-6:  # bounds rounded outward
                shift = POW_BASE_SHIFT
                lower, upper = shift, None if upper is None else upper + shift
        var = self.m.aux.add()
        var.bounds = (lower, upper)
        self.m.aux_def.add(var == (value + shift if shift else value))
        self.records.append(((lower, upper), shift))
        self.bound_values[id(var)] = value
        return var

    def define(self, name: str, value: Any) -> Any:
        if isinstance(value, list):
            comp = pyo.Expression(self.m.I, initialize=dict(enumerate(value)))
            self.m.add_component(f"e_{name}", comp)
            return [comp[i] for i in self.m.I]
        comp = pyo.Expression(initialize=value)
        self.m.add_component(f"e_{name}", comp)
        return comp

    def neg(self, a: Any) -> Any:
        return -a

    def binary(self, op: str, a: Any, b: Any) -> Any:
        if op == "pow" and not isinstance(b, float):
            self._note_zero_base(a, b)
        if op == "mul" and (_is_zero(a) or _is_zero(b)):  # the operands are finite here
            return 0.0  # a named expression 3 (x + 0 |x|) lost its 3 in Pyomo's .nl writer
        if op == "pow" and self.pow_fn is not None and not isinstance(b, float):
            return self.pow_fn(a, b)
        return BINOPS[op](a, b)

    def unary(self, op: str, a: Any) -> Any:
        return self.fns[op](a)

    def _note_zero_base(self, base: Any, exponent: Any) -> None:
        """Record `base ** exponent` (variable exponent) when the base can reach 0: SCIP's
        interface writes it as exp(y log x), which needs x > 0 (see `bind`)."""
        low = base if isinstance(base, float) else _implied_bounds(base)[0]
        if low is None or low <= 0.0:
            base = self.bound_values.get(id(base), base)
            self.zero_bases.append(f"({str(base)[:60]}) ** ({str(exponent)[:60]})")


def _unary_bounds(visitor: Any, node: Any, arg: tuple[float, float]) -> tuple[float, float]:
    """Pyomo's interval rule for a function node, plus one for `pyomo_abs`; sqrt of an
    interval reaching below 0 is taken over its domain (Pyomo's rule refuses it)."""
    if node.getname() == "abs":
        return interval_abs(*arg)
    if node.getname() == "sqrt" and arg[0] < 0.0 <= arg[1]:
        return 0.0, math.sqrt(arg[1])
    return _handle_UnaryFunctionExpression(visitor, node, arg)


class _BoundsVisitor(ExpressionBoundsVisitor):
    """Pyomo's interval walker (as in compute_bounds_on_expr) that also knows `pyomo_abs`."""

    _operator_dispatcher = ExpressionBoundsExitNodeDispatcher(
        {**ExpressionBoundsVisitor._operator_dispatcher,
         UnaryFunctionExpression: _unary_bounds})


def _may_reach_zero(base: Any) -> bool:
    """Whether a power's base (a variable, a let of one) may reach 0 on the box: it then
    goes through `bind` for its shift under an exponent of at least 1, as larger bases do
    (`x[0] ** (1 + x[1])` on [0, 2] was refused where `(1.0 * x[0]) ** ...` solved)."""
    if isinstance(base, float):
        return False
    lower = _implied_bounds(_expr(base))[0]
    return lower is None or lower <= 0.0


def _implied_bounds(expr: Any) -> tuple[float | None, float | None]:
    """Interval range of a Pyomo expression over its variables' bounds, rounded outward by
    a relative 1e-9 so float error cannot cut a feasible value; None where unknown."""
    try:
        lower, upper = _BoundsVisitor(use_fixed_var_values_as_bounds=True).walk_expression(expr)
    except (KeyError, ValueError, ArithmeticError, InfeasibleConstraintException):
        return None, None
    lower = lower - 1e-9 * abs(lower) if np.isfinite(lower) else None
    upper = upper + 1e-9 * abs(upper) if np.isfinite(upper) else None
    if lower is not None and upper is not None and lower > upper:
        return None, None
    return lower, upper


def to_pyomo(program: Program, name: str = "bbo_program") -> pyo.ConcreteModel:
    """Pyomo model: x in [lower, upper]^dim, one Expression per let, auxiliary variables
    for shared subexpressions, minimize the program (evaluate it with `pyomo_objective_at`)."""
    return build_pyomo(check_program(program, "to_pyomo"), name, pyomo_abs)


def scip_model(program: Program) -> tuple[pyo.ConcreteModel, str | None]:
    """The model of `to_pyomo` and why SCIP cannot take it, or None: a power x ** y with a
    variable exponent whose base can reach 0 (the base shift covers only y >= 1)."""
    m, algebra = build_pyomo_algebra(program, "bbo_program", pyomo_abs)
    if not algebra.zero_bases:
        return m, None
    return m, (f"SCIP cannot take x ** y with a variable exponent y when the base x can "
               f"reach 0, unless y >= 1 (then the base is shifted by {POW_BASE_SHIFT:g}): "
               f"its interface writes x ** y as exp(y log x), which needs x > 0; here "
               f"{algebra.zero_bases[0]}")


def _is_zero(value: Any) -> bool:
    """Whether `value` is the number 0 (not an expression)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


def build_pyomo(program: Program, name: str, abs_fn: Callable[[Any], Any],
                pow_fn: Callable[[Any, Any], Any] | None = None) -> pyo.ConcreteModel:
    """The model of `to_pyomo`, with |a| written by `abs_fn` (and a power whose exponent is
    no constant by `pow_fn`, where given)."""
    return build_pyomo_algebra(program, name, abs_fn, pow_fn)[0]


def build_pyomo_algebra(program: Program, name: str, abs_fn: Callable[[Any], Any],
                        pow_fn: Callable[[Any, Any], Any] | None = None
                        ) -> tuple[pyo.ConcreteModel, _PyomoAlgebra]:
    """The model and the algebra that built it (its records and zero-reaching power bases)."""
    m = pyo.ConcreteModel(name=name)
    m.I = pyo.RangeSet(0, program.dim - 1)
    center = 0.5 * (program.lower + program.upper)
    m.x = pyo.Var(m.I, bounds=(program.lower, program.upper), initialize=center)
    algebra = _PyomoAlgebra(m, abs_fn, pow_fn)
    objective = Scalarizer(program, algebra).run()
    m.obj = pyo.Objective(expr=objective, sense=pyo.minimize)
    return m, algebra


def auxiliary_definitions(model: pyo.Block) -> list[tuple[Any, Any]]:
    """(auxiliary variable, defining expression) pairs of an emitted model, in the order
    they were defined (each may use only x and earlier auxiliaries)."""
    definitions = model.component("aux_def")
    if definitions is None:
        return []
    return [tuple(con.expr.args) for con in definitions.values()]


def update_auxiliaries(model: pyo.Block) -> None:
    """Set every auxiliary variable to its defining value at the current x (one pass); one
    Pyomo cannot evaluate there is an InputError naming it (math's domain error had come
    raw from a program numpy evaluates: Pyomo writes x / 49 as x * (1 / 49), a hair below
    1 at x = 49 under a square root of x / 49 - 1)."""
    for var, expr in auxiliary_definitions(model):
        var.set_value(_value_here(expr, var.name), skip_validation=True)


def _value_here(expr: Any, name: str) -> float:
    """pyo.value(expr) as a float, or an InputError naming `name` where Pyomo cannot
    evaluate it (without the ERROR line Pyomo logs before re-raising)."""
    logger = logging.getLogger("pyomo.common.numeric_types")
    was = logger.disabled
    logger.disabled = True
    try:
        return float(pyo.value(expr))
    except (ValueError, ArithmeticError) as exc:
        raise InputError(f"the Pyomo form cannot be evaluated at this point: {name} ({exc}; "
                         "Pyomo's arithmetic rounds apart from numpy's at the edge of a "
                         "function's domain)") from None
    finally:
        logger.disabled = was


def set_point(model: pyo.ConcreteModel, point: np.ndarray) -> None:
    """Put an emitted model at one point: x, then the auxiliary variables it determines.
    The point must hold one coordinate per x[i]: a shorter one left the rest at stale values."""
    try:
        point = np.asarray(point, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"the point must hold numbers, got {point!r}") from None
    if point.shape != (len(model.x),):
        raise InputError(f"the point must be a vector of {len(model.x)} coordinates, got "
                         f"shape {point.shape}")
    for i, v in enumerate(point):
        model.x[i].set_value(float(v), skip_validation=True)
    update_auxiliaries(model)


def pyomo_objective_at(model: pyo.ConcreteModel, point: np.ndarray) -> float:
    """Objective value of an emitted model at one point (sets x and the auxiliaries)."""
    set_point(model, point)
    return _value_here(model.obj, "the objective")
