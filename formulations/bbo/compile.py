"""Compile a program to vectorized numpy/torch evaluators and to a Pyomo model.

Evaluators take a batch `X` of shape (n, dim) and return (n,) values. The Pyomo model has
box-bounded variables `x[i]`, one named `Expression` per let-binding and the program as
its (minimized) objective; it can be exported as a plain Pyomo script, a JSON form, or
any format Pyomo's `model.write` knows (.nl, .gms, .lp when linear).

A large subexpression used more than once (an operand of max/min, a let referenced
twice, a vector entry several matrix rows use, a scalar broadcast over a vector) is bound
to an auxiliary variable `aux[k]`, bounded by its interval range, with the defining
equality `aux_def[k]: aux[k] == expr`, so the model stays linear in the program's size:
Pyomo, SCIP and the writers expand a shared `Expression` at every use, which is
exponential along a chain of lets (BBOB f21 nests 100 max). The model is an exact
reformulation; `set_point` (used by `pyomo_objective_at`) sets x and then each auxiliary
variable to its defining value. abs is exact (a function node SCIP's interface takes; the
file writers get Pyomo's AbsExpression); max/min are b + (d +- |d|) / 2 with d = a - b,
exact where the result is b and within an ulp or two of a otherwise (no exact
floating-point form of max exists that SCIP's interface takes).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
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
from scipy.stats import qmc

from coplug.formulations.bbo.grammar import (
    Node,
    Program,
    ProgramError,
    node_from_json,
    node_text,
    node_to_json,
    parse,
    same_tree,
    to_text,
)
from coplug.plugins.errors import InputError, UnsupportedModelError

JSON_FORMAT = "coplug-bbo-program"
MAX_ABS = 1e12


class _Backend:
    """Array operations for one library (numpy or torch), used by the closure compiler."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        if lib == "numpy":
            self.m = np
            self.fns = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
                        "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh, "floor": np.floor,
                        "acos": np.arccos, "max": np.maximum, "min": np.minimum}
        else:
            import torch

            self.m = torch
            self.fns = {"exp": torch.exp, "log": torch.log, "sin": torch.sin, "cos": torch.cos,
                        "sqrt": torch.sqrt, "abs": torch.abs, "tanh": torch.tanh,
                        "floor": torch.floor, "acos": torch.arccos, "max": torch.maximum,
                        "min": torch.minimum}

    def const(self, value: Any) -> Any:
        if self.lib == "numpy":
            return np.asarray(value, dtype=float)
        return self.m.as_tensor(np.asarray(value, dtype=float))

    def reduce(self, name: str, v: Any) -> Any:
        if self.lib == "numpy":
            return (np.sum if name == "sum" else np.prod)(v, axis=-1, keepdims=True)
        return (self.m.sum if name == "sum" else self.m.prod)(v, dim=-1, keepdim=True)


_BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a**b, "matmul": lambda m, v: v @ m.T,
}

Closure = Callable[[Any, dict[str, Any]], Any]


def _closure(node: Node, be: _Backend) -> Closure:
    """Compile one node into a closure `(X, env) -> value` (scalars carry shape (n, 1))."""
    op = node.op
    if op in ("num", "vec", "mat"):
        c = be.const(node.value)
        return lambda X, env: c
    if op == "x":
        return lambda X, env: X
    if op == "xi":
        i = node.value
        return lambda X, env: X[:, i : i + 1]
    if op == "ref":
        name = node.value
        return lambda X, env: env[name]
    args = [_closure(arg, be) for arg in node.args]
    if op == "neg":
        (a,) = args
        return lambda X, env: -a(X, env)
    if op in _BINOPS:
        f, (a, b) = _BINOPS[op], args
        return lambda X, env: f(a(X, env), b(X, env))
    if op in ("sum", "prod"):
        (a,) = args
        return lambda X, env: be.reduce(op, a(X, env))
    fn = be.fns[op]
    if len(args) == 1:
        (a,) = args
        return lambda X, env: fn(a(X, env))
    a, b = args
    if op in ("max", "min"):
        return lambda X, env: fn(*_as_tensors(be, a(X, env), b(X, env)))
    return lambda X, env: fn(a(X, env), b(X, env))


def _as_tensors(be: _Backend, a: Any, b: Any) -> tuple[Any, Any]:
    """torch.maximum needs tensors on both sides; numpy takes anything."""
    if be.lib == "numpy":
        return a, b
    return be.m.as_tensor(a, dtype=be.m.float64), be.m.as_tensor(b, dtype=be.m.float64)


def _evaluator(program: Program, lib: str) -> Callable[[Any], Any]:
    be = _Backend(lib)
    lets = [(name, _closure(node, be)) for name, node in program.lets]
    body = _closure(program.body, be)
    dim = program.dim

    def evaluate(X: Any) -> Any:
        if X.ndim == 1:
            X = X.reshape(1, -1)
        if X.shape[-1] != dim:
            raise InputError(f"points must have {dim} columns, got shape {tuple(X.shape)}")
        env: dict[str, Any] = {}
        for name, f in lets:
            env[name] = f(X, env)
        out = body(X, env)
        if lib == "numpy":
            return np.broadcast_to(out, (X.shape[0], 1)).reshape(-1).astype(float)
        return out.expand(X.shape[0], 1).reshape(-1)

    return evaluate


def numpy_evaluator(program: Program) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorized numpy evaluator: (n, dim) points -> (n,) values (nan/inf propagate)."""
    inner = _evaluator(program, "numpy")

    def evaluate(X: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return inner(np.asarray(X, dtype=float))

    return evaluate


def torch_evaluator(program: Program) -> Callable[[Any], Any]:
    """Vectorized, differentiable torch evaluator on float64 tensors of shape (n, dim)."""
    import torch

    inner = _evaluator(program, "torch")
    return lambda X: inner(torch.as_tensor(X, dtype=torch.float64))


def check_points(program: Program, n: int = 256, seed: int = 0) -> np.ndarray:
    """Points used for the finiteness check: a Latin hypercube, the center and corners."""
    d = program.dim
    unit = qmc.LatinHypercube(d=d, seed=seed).random(n)
    corners = np.array(np.meshgrid(*[[0.0, 1.0]] * d)).reshape(d, -1).T if d <= 10 else []
    unit = np.vstack([unit, np.full((1, d), 0.5), *([corners] if len(corners) else [])])
    return program.lower + unit * (program.upper - program.lower)


def validate(program: Program, n: int = 256, seed: int = 0, max_abs: float = MAX_ABS) -> None:
    """Reject (ProgramError 'non_finite') a program that is not finite and bounded on its box."""
    points = check_points(program, n, seed)
    values = numpy_evaluator(program)(points)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ProgramError("non_finite", f"not finite at {int(bad.sum())} of {values.size} "
                           "sample points of the box")
    if np.abs(values).max() > max_abs:
        raise ProgramError("non_finite", f"|f| reaches {np.abs(values).max():.3g} on the box "
                           f"(limit {max_abs:.0e})")
    _reject_sign_changing_denominators(program, points)
    _reject_zero_touching_guards(program)


def _reject_sign_changing_denominators(program: Program, points: np.ndarray) -> None:
    """Reject a division whose denominator takes both signs on the sample points: a pole.

    Every operation but floor is continuous where it is defined, so a floor-free denominator
    that is positive at one point and negative at another vanishes (or is undefined) on the
    segment between them, inside the box. Interval bounds would over-reject: they cannot
    tell (x - 1)**2 + 1 written out from a denominator that really reaches 0.
    """
    with_floor = _lets_using_floor(program)
    denominators = [den for den in (_denominator(node, program)
                                    for node in _program_nodes(program))
                    if den is not None and not _uses_floor(den, with_floor)]
    if not denominators:
        return
    be = _Backend("numpy")
    env: dict[str, Any] = {}
    with np.errstate(all="ignore"):
        for name, node in program.lets:
            env[name] = _closure(node, be)(points, env)
        for den in denominators:
            raw = np.asarray(_closure(den, be)(points, env))
            values = np.broadcast_to(raw, np.broadcast_shapes(raw.shape, (len(points), 1)))
            values = np.where(np.isfinite(values), values, 0.0)
            if ((values > 0).any(axis=0) & (values < 0).any(axis=0)).any():
                raise ProgramError("non_finite", f"the denominator {node_text(den)[:80]} "
                                   "changes sign on the box, so the program has a pole there")


# Boxes the proof that a denominator or log argument keeps away from 0 may split before it
# gives up, and the relative box width at which a bound still including 0 means a zero.
PROOF_BOXES = 4096
ZERO_WIDTH = 1e-12


def _guards(program: Program) -> list[tuple[Node, bool]]:
    """(expression, must be positive) pairs that must keep away from 0 on the box: every
    non-constant denominator (nonzero) and log argument (positive), each once."""
    found: dict[Node, bool] = {}
    for node in _program_nodes(program):
        den = _denominator(node, program)
        if den is not None and den.op != "num":
            found.setdefault(den, False)
        if node.op == "log" and node.args[0].op != "num":
            found[node.args[0]] = True
    return list(found.items())


def _reject_zero_touching_guards(program: Program) -> None:
    """Reject a program with a denominator or log argument that reaches 0 on the box.

    Sample points miss a pole the function only touches (1 / (x[0] - 0.3) ** 2), so each
    such expression must be proven away from 0 by interval bounds, splitting the box
    where they still include 0 (PROOF_BOXES boxes at most). One that cannot be proven is
    rejected, naming the smallest value seen: the rule is conservative. Expressions using
    floor are exempt where unproven: near a jump of floor the bounds of adjacent steps
    merge, so a proof can fail for a denominator that never vanishes.
    """
    with_floor = _lets_using_floor(program)
    be = _Backend("numpy")
    for guard, positive in _guards(program):
        failure = _zero_touching(program, guard, positive, be)
        if failure is None or (failure[0] == "unproven" and _uses_floor(guard, with_floor)):
            continue
        outcome, smallest, where = failure
        what = "log argument" if positive else "denominator"
        point = np.round(where, 6).tolist()
        if outcome == "zero":
            value = f"reaches {smallest:.3g}" if np.isfinite(smallest) else "is not finite"
            raise ProgramError("non_finite", f"the {what} {node_text(guard)[:80]} {value} "
                               f"at x={point} on the box")
        raise ProgramError("non_finite", f"the {what} {node_text(guard)[:80]} cannot be "
                           "shown to keep away from 0 on the box (interval bounds include 0; "
                           f"{'smallest value' if positive else '|value|'} down to "
                           f"{smallest:.3g} near x={point}), so the program may have "
                           f"{'a log singularity' if positive else 'a pole'} there")


def _zero_touching(program: Program, guard: Node, positive: bool,
                   be: _Backend) -> tuple[str, float, np.ndarray] | None:
    """None when interval bounds prove the guard away from 0 (above 0 when `positive`);
    else ('zero' | 'unproven', smallest value seen, where) from a branch and bound."""
    from coplug.formulations.bbo.intervals import IntervalEvaluator, variables_of

    dims = variables_of(program, guard)
    if not dims:
        return None
    lower = np.full((1, program.dim), program.lower)
    upper = np.full((1, program.dim), program.upper)
    evaluate = _closure(guard, be)
    lets = [(name, _closure(node, be)) for name, node in program.lets]
    best, where, used = np.inf, lower[0], 0
    span = program.upper - program.lower
    while True:
        lo, hi = IntervalEvaluator(program, lower, upper).bounds(guard)
        open_ = (lo <= 0.0) if positive else (lo <= 0.0) & (hi >= 0.0)
        keep = np.broadcast_to(open_, (len(lower), open_.shape[-1])).any(axis=1)
        if not keep.any():
            return None
        lower, upper = lower[keep], upper[keep]
        middle = 0.5 * (lower + upper)
        values = _guard_values(evaluate, lets, middle)
        score = values if positive else np.abs(values)
        score = np.where(np.isfinite(score), score, -np.inf).min(axis=1)
        k = int(np.argmin(score))
        if score[k] < best:
            best, where = float(score[k]), middle[k]
        if best <= 0.0:
            return "zero", best, where
        used += len(lower)
        widths = (upper - lower)[:, dims]
        if used > PROOF_BOXES or widths.max() <= ZERO_WIDTH * span:
            return "unproven", best, where
        lower, upper = _bisect(lower, upper, dims, widths)


def _guard_values(evaluate: Closure, lets: list[tuple[str, Closure]],
                  points: np.ndarray) -> np.ndarray:
    """A guard expression's values at points, shape (n, components)."""
    env: dict[str, Any] = {}
    with np.errstate(all="ignore"):
        for name, f in lets:
            env[name] = f(points, env)
        raw = np.asarray(evaluate(points, env), dtype=float)
    return np.broadcast_to(raw, (len(points), raw.shape[-1] if raw.ndim else 1))


def _bisect(lower: np.ndarray, upper: np.ndarray, dims: list[int],
            widths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split every box in two across its widest dimension among `dims`."""
    rows = np.arange(len(lower))
    cut = np.asarray(dims)[np.argmax(widths, axis=1)]
    middle = 0.5 * (lower[rows, cut] + upper[rows, cut])
    left_upper, right_lower = upper.copy(), lower.copy()
    left_upper[rows, cut] = middle
    right_lower[rows, cut] = middle
    return np.vstack([lower, right_lower]), np.vstack([left_upper, upper])


def _denominator(node: Node, program: Program) -> Node | None:
    """What a node divides by: the right side of `/`, the base of a power whose exponent
    can be negative (a negative constant, or an expression whose interval bounds on the
    box reach below 0: abs(u) ** (0 * x[1] - 0.5) is 1 / sqrt(abs(u)))."""
    if node.op == "div":
        return node.args[1]
    if node.op != "pow":
        return None
    exponent = node.args[1]
    if exponent.op == "num":
        return node.args[0] if exponent.value < 0 else None
    return node.args[0] if _can_be_negative(program, exponent) else None


# An exponent whose interval lower bound is above -NEGATIVE_EXPONENT counts as >= 0: bounds
# are rounded outward, so an exponent reaching exactly 0 (x / 5 + 1 on [-5, 5]) has a lower
# bound a few ulps below 0, and 0 ** 0 = 1 is no pole.
NEGATIVE_EXPONENT = 1e-9


def _can_be_negative(program: Program, node: Node) -> bool:
    """Whether interval bounds leave room for the expression below 0 somewhere on the box."""
    from coplug.formulations.bbo.intervals import IntervalEvaluator

    lower = np.full((1, program.dim), program.lower)
    upper = np.full((1, program.dim), program.upper)
    low = np.min(IntervalEvaluator(program, lower, upper).bounds(node)[0])
    return bool(low < -NEGATIVE_EXPONENT)


def _program_nodes(program: Program) -> list[Node]:
    """Every expression node of the program's lets and body."""
    return [n for tree in [*(t for _, t in program.lets), program.body] for n in tree.walk()]


def _lets_using_floor(program: Program) -> set[str]:
    """Names of the lets whose value depends on floor (directly or through earlier lets)."""
    names: set[str] = set()
    for name, node in program.lets:
        if _uses_floor(node, names):
            names.add(name)
    return names


def _uses_floor(node: Node, floor_lets: set[str]) -> bool:
    """Whether an expression uses floor, the one discontinuous op, itself or via a let."""
    return any(sub.op == "floor" or (sub.op == "ref" and sub.value in floor_lets)
               for sub in node.walk())


def load(text: str, dim: int, lower: float = -5.0, upper: float = 5.0,
         max_abs: float = MAX_ABS) -> Program:
    """Parse and validate a program (grammar, shapes, finiteness on the box); `max_abs`
    bounds |f| on the sample points (trusted built-ins such as BBOB f12 may exceed 1e12)."""
    program = parse(text, dim, lower, upper)
    try:
        validate(program, max_abs=max_abs)
    except RecursionError:
        raise ProgramError("too_large", "expression nested too deeply to evaluate") from None
    return program


# A shared value of at most this many nodes is copied at each use instead of named by an
# auxiliary variable: copying caps growth at this factor, and keeps the models of programs
# without runaway sharing as they always were (SCIP certifies them no worse than before).
COPY_LIMIT = 64
# Added to a power's base that can reach 0 (exponent >= 1), so that SCIP's exp(y log x) form
# of x ** y sees x > 0; changes the power far below SCIP's feasibility tolerance.
POW_BASE_SHIFT = 1e-9


@dataclass(frozen=True)
class _Sized:
    """An algebra expression with the node count of its tree once every name is expanded."""

    expr: Any
    size: int


Scalar = float | _Sized


def _expr(a: Scalar) -> Any:
    """What the algebra takes: the float itself or the wrapped expression."""
    return a if isinstance(a, float) else a.expr


def _size(a: Scalar) -> int:
    """Expanded node count (a float is one node)."""
    return 1 if isinstance(a, float) else a.size


class _Scalarizer:
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
        self.uses = Counter(n.value for n in _program_nodes(program) if n.op == "ref")

    def run(self) -> Any:
        for name, node in self.p.lets:
            value = self.value(node)
            if self.uses[name] > 1:
                value = self.share(value)
            self.refs[name] = self._define(name, value)
        return _expr(self.value(self.p.body))

    def _define(self, name: str, value: Scalar | list[Scalar]) -> Scalar | list[Scalar]:
        """Name a let's value in the algebra; each use of the name expands to the value."""
        named = self.alg.define(name, [_expr(v) for v in value] if isinstance(value, list)
                                else _expr(value))
        if isinstance(value, list):
            return [_Sized(e, _size(v)) for e, v in zip(named, value, strict=True)]
        return _Sized(named, _size(value))

    def share(self, value: Any) -> Any:
        """The value (or list of values) made cheap to use again: one over COPY_LIMIT nodes
        becomes an auxiliary variable, a smaller one is copied at each use."""
        if isinstance(value, list):
            return [self.share(item) for item in value]
        if _size(value) <= COPY_LIMIT:
            return value
        return _Sized(self.alg.bind(value.expr), 1)

    def value(self, node: Node) -> Any:
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
        terms = [self.binary("mul", c, v) for c, v in zip(row, vec, strict=True) if c != 0.0]
        out: Scalar = 0.0
        for term in terms:
            out = term if isinstance(out, float) and out == 0.0 else self.binary("add", out, term)
        return out

    def _elementwise(self, op: str, args: list[Any]) -> Any:
        if any(isinstance(a, list) for a in args):
            n = self.p.dim
            cols = [a if isinstance(a, list) else [self.share(a) if n > 1 else a] * n
                    for a in args]
            return [self._elementwise(op, list(items)) for items in zip(*cols, strict=True)]
        if op == "neg":
            a = args[0]
            return -a if isinstance(a, float) else _Sized(self.alg.neg(a.expr), 1 + a.size)
        if op == "pow" and not isinstance(args[1], float) and _size(args[0]) > 1:
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
        where it is a, b + d rounds twice, so it is within an ulp or two of a (exact when
        a - b is, e.g. for a and b within a factor 2). No squares: nothing overflows or
        underflows before the result does.
        """
        b = self.share(b)
        d = self.share(self.binary("sub", a, b))
        half = self.binary("mul", 0.5, self.binary("add" if op == "max" else "sub", d,
                                                   self.unary("abs", d)))
        return half if isinstance(b, float) and b == 0.0 else self.binary("add", b, half)

    def binary(self, op: str, a: Scalar, b: Scalar) -> Scalar:
        if isinstance(a, float) and isinstance(b, float):
            with np.errstate(all="ignore"):
                return float(_BINOPS[op](np.float64(a), np.float64(b)))
        return _Sized(self.alg.binary(op, _expr(a), _expr(b)), 1 + _size(a) + _size(b))

    def unary(self, op: str, a: Scalar) -> Scalar:
        if isinstance(a, float):
            fn = {"acos": np.arccos, "abs": np.abs}.get(op, getattr(np, op, None))
            with np.errstate(all="ignore"):
                return float(fn(a))
        return _Sized(self.alg.unary(op, a.expr), 1 + a.size)


def pyomo_abs(a: Any) -> UnaryFunctionExpression:
    """Exact |a| as a function node named 'abs': Pyomo's SCIP interface takes that one
    (SCIP's own abs), but not the AbsExpression that Python's abs() builds."""
    return UnaryFunctionExpression((a,), "abs", abs)


_PYO_FN = {"exp": pyo.exp, "log": pyo.log, "sin": pyo.sin, "cos": pyo.cos, "sqrt": pyo.sqrt,
           "abs": pyomo_abs, "tanh": pyo.tanh, "floor": pyo.floor, "acos": pyo.acos}


class _PyomoAlgebra:
    """Builds Pyomo expressions on a model with an indexed variable `x`; `abs_fn` makes
    |a| (`pyomo_abs` for SCIP, Python's abs for the file writers)."""

    def __init__(self, model: pyo.ConcreteModel, abs_fn: Callable[[Any], Any]) -> None:
        self.m = model
        self.fns = _PYO_FN | {"abs": abs_fn}
        self.records: list[tuple[tuple[float | None, float | None], float]] = []
        self.zero_bases: list[str] = []
        self.bound_values: dict[int, Any] = {}

    def var(self, i: int) -> Any:
        return self.m.x[i]

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
        return _BINOPS[op](a, b)

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
    return _build_pyomo(program, name, pyomo_abs)


def scip_model(program: Program) -> tuple[pyo.ConcreteModel, str | None]:
    """The model of `to_pyomo` and why SCIP cannot take it, or None: a power x ** y with a
    variable exponent whose base can reach 0 (the base shift covers only y >= 1)."""
    m, algebra = _build_pyomo_algebra(program, "bbo_program", pyomo_abs)
    if not algebra.zero_bases:
        return m, None
    return m, (f"SCIP cannot take x ** y with a variable exponent y when the base x can "
               f"reach 0, unless y >= 1 (then the base is shifted by {POW_BASE_SHIFT:g}): "
               f"its interface writes x ** y as exp(y log x), which needs x > 0; here "
               f"{algebra.zero_bases[0]}")


def _build_pyomo(program: Program, name: str, abs_fn: Callable[[Any], Any]) -> pyo.ConcreteModel:
    """The model of `to_pyomo`, with |a| written by `abs_fn`."""
    return _build_pyomo_algebra(program, name, abs_fn)[0]


def _build_pyomo_algebra(program: Program, name: str, abs_fn: Callable[[Any], Any]
                         ) -> tuple[pyo.ConcreteModel, _PyomoAlgebra]:
    """The model and the algebra that built it (its records and zero-reaching power bases)."""
    m = pyo.ConcreteModel(name=name)
    m.I = pyo.RangeSet(0, program.dim - 1)
    center = 0.5 * (program.lower + program.upper)
    m.x = pyo.Var(m.I, bounds=(program.lower, program.upper), initialize=center)
    algebra = _PyomoAlgebra(m, abs_fn)
    objective = _Scalarizer(program, algebra).run()
    m.obj = pyo.Objective(expr=objective, sense=pyo.minimize)
    return m, algebra


class _TextAlgebra:
    """Builds Python source text of Pyomo expressions (for the exported script); the
    auxiliary variables get the bounds and shifts `to_pyomo` gave them, in the same order."""

    def __init__(self, records: list[tuple[tuple[float | None, float | None], float]]) -> None:
        self.lines: list[str] = []
        self.records = records
        self.aux = 0

    def lit(self, a: Any) -> str:
        return repr(a) if isinstance(a, float) else a

    def var(self, i: int) -> str:
        return f"m.x[{i}]"

    def bind(self, value: Any, exponent: Any = None) -> str:
        """Emit the next auxiliary variable with its defining constraint; return its name."""
        name = f"m.aux[{self.aux + 1}]"
        bounds, shift = self.records[self.aux]
        defined = f"{self.lit(value)} + {shift!r}" if shift else self.lit(value)
        self.lines.append(f"m.aux_def.add(m.aux.add() == {defined})")
        self.lines.append(f"{name}.bounds = {bounds!r}")
        self.aux += 1
        return name

    def define(self, name: str, value: Any) -> Any:
        if isinstance(value, list):
            items = ",\n    ".join(f"{i}: {self.lit(v)}" for i, v in enumerate(value))
            self.lines.append(f"m.e_{name} = pyo.Expression(m.I, initialize={{\n    {items},\n}})")
            return [f"m.e_{name}[{i}]" for i in range(len(value))]
        self.lines.append(f"m.e_{name} = pyo.Expression(expr={self.lit(value)})")
        return f"m.e_{name}"

    def neg(self, a: str) -> str:
        return f"(-{a})"

    def binary(self, op: str, a: Any, b: Any) -> str:
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}[op]
        return f"({self.lit(a)} {sym} {self.lit(b)})"

    def unary(self, op: str, a: Any) -> str:
        return f"_abs({a})" if op == "abs" else f"pyo.{op}({a})"


def pyomo_script(program: Program, name: str = "bbo_program") -> str:
    """A standalone Python script that builds the same Pyomo model (`model = build()`)."""
    alg = _TextAlgebra(_build_pyomo_algebra(program, name, pyomo_abs)[1].records)
    objective = alg.lit(_Scalarizer(program, alg).run())
    center = 0.5 * (program.lower + program.upper)
    source = "\n".join(f"# {line}" for line in to_text(program).splitlines()[:50])
    declare = ["m.aux = pyo.VarList()", "m.aux_def = pyo.ConstraintList()"] if alg.aux else []
    lines = [*declare, *alg.lines]
    body = "\n".join(["    " + line for block in lines for line in block.splitlines()])
    return f'''"""Pyomo model of a coplug.formulations.bbo benchmark program (dim={program.dim}).

Generated by `coplug bbo export`; the program text (first lines):
{source}
"""

import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import UnaryFunctionExpression


def _abs(a):
    """Exact |a| as a function node Pyomo's SCIP interface takes (abs() builds another)."""
    return UnaryFunctionExpression((a,), "abs", abs)


def build():
    m = pyo.ConcreteModel(name={name!r})
    m.I = pyo.RangeSet(0, {program.dim - 1})
    m.x = pyo.Var(m.I, bounds=({program.lower!r}, {program.upper!r}), initialize={center!r})
{body}
    m.obj = pyo.Objective(expr={objective}, sense=pyo.minimize)
    return m


model = build()

if __name__ == "__main__":
    model.pprint()
'''


def program_to_json(program: Program) -> dict[str, Any]:
    """JSON form: box, dimension, canonical text and the expression trees."""
    return {
        "format": JSON_FORMAT,
        "version": 1,
        "dim": program.dim,
        "lower": program.lower,
        "upper": program.upper,
        "text": to_text(program),
        "lets": [[name, node_to_json(node)] for name, node in program.lets],
        "body": node_to_json(program.body),
    }


def program_from_json(data: Any) -> Program:
    """Read the JSON form back (text is authoritative; the trees must agree with it); a
    missing or mistyped field is an InputError naming it."""
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        raise InputError(f"not a {JSON_FORMAT} JSON document")
    for name, kinds, what in (("text", str, "text"), ("dim", int, "an integer"),
                              ("lower", (int, float), "a number"),
                              ("upper", (int, float), "a number")):
        if name not in data:
            raise InputError(f"program JSON lacks field {name!r}")
        if not isinstance(data[name], kinds) or isinstance(data[name], bool):
            raise InputError(f"program JSON: field {name!r} must be {what}, "
                             f"got {data[name]!r}")
    program = load(data["text"], data["dim"], float(data["lower"]), float(data["upper"]))
    if "body" in data:
        lets = data.get("lets", [])
        if not isinstance(lets, list) or not all(
                isinstance(item, list) and len(item) == 2 for item in lets):
            raise InputError("program JSON: 'lets' must be a list of [name, tree] pairs")
        trees = tuple((name, node_from_json(node)) for name, node in lets)
        body = node_from_json(data["body"])
        if len(trees) != len(program.lets) or not same_tree(body, program.body) or not all(
                name == mine and same_tree(tree, my_tree)
                for (name, tree), (mine, my_tree) in zip(trees, program.lets, strict=True)):
            raise InputError("program JSON: trees disagree with the text")
    return program


# Recursion limit while JSON is encoded or decoded: the C codec counts each nesting level
# against it, and the JSON of the deepest tree `load` accepts (a ~500-term sum, or ~1000
# nested minus signs) nests two levels per tree level, past Python's default of 1000.
JSON_RECURSION_LIMIT = 10_000


@contextmanager
def _json_depth() -> Iterator[None]:
    """Room for the JSON codec to nest as deep as a program tree can (JSON_RECURSION_LIMIT)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, JSON_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def json_text(data: Any) -> str:
    """JSON text (indent 1) of data holding program trees, however deep `load` let them be."""
    with _json_depth():
        return json.dumps(data, indent=1) + "\n"


def read_program_json(text: str, where: str) -> Program:
    """A program from its JSON text; text that is not JSON or nests beyond what any program
    can is an InputError naming `where`."""
    try:
        with _json_depth():
            data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply for a program") from None
    return program_from_json(data)


WRITE_FORMATS = ("py", "json", "nl", "gms", "lp", "bar")


def write_program(program: Program, path: str | Path, fmt: str | None = None) -> Path:
    """Write the program as a Pyomo script (py), JSON form (json) or via `model.write`; the
    format is `fmt`, else the file's suffix."""
    path = Path(path)
    fmt = export_format(path, fmt)
    try:
        if fmt == "py":
            path.write_text(pyomo_script(program))
        elif fmt == "json":
            path.write_text(json_text(program_to_json(program)))
        else:
            _write_pyomo(program, path, fmt)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def export_format(path: Path, fmt: str | None = None) -> str:
    """The format to write `path` in: `fmt`, else its suffix; a suffix naming another
    format is refused, so f.json never silently holds a Pyomo script."""
    suffix = path.suffix.lstrip(".").lower()
    if fmt is None and suffix not in WRITE_FORMATS:
        raise InputError(f"unknown export format for {path}: its suffix is none of "
                         f".{', .'.join(WRITE_FORMATS)}; name one or give a format (--format)")
    fmt = (fmt or suffix).lower()
    if fmt not in WRITE_FORMATS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(WRITE_FORMATS)}")
    if suffix in WRITE_FORMATS and suffix != fmt:
        raise InputError(f"{path} ends in .{suffix} but the export format is {fmt}: name a "
                         f".{fmt} file or choose format {suffix} (--format {suffix})")
    return fmt


def _write_pyomo(program: Program, path: Path, fmt: str) -> None:
    """`model.write` in one of Pyomo's formats (|a| as Pyomo's AbsExpression, which the
    writers know; BARON's writes it as (a^2)^0.5); a construct it cannot write is named.
    Written to a hidden sibling and renamed, so a failed write leaves no truncated file."""
    model = _build_pyomo(program, "bbo_program", abs)
    partial = path.with_name(f".{path.stem}.partial.{fmt}")  # Pyomo reads the format off it
    sidecars = [(partial.with_suffix(s), path.with_suffix(s)) for s in _SIDECARS]
    partial.touch()  # an unwritable place is named here, not inside Pyomo's writer
    try:
        model.write(str(partial), io_options={"symbolic_solver_labels": True})
        os.replace(partial, path)
        for written, final in sidecars:
            if written.exists():
                os.replace(written, final)
    except (ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise UnsupportedModelError(f"Pyomo cannot write this program as .{fmt}: "
                                    f"{str(exc).splitlines()[0]}") from None
    finally:
        for leftover in (partial, *(written for written, _ in sidecars)):
            leftover.unlink(missing_ok=True)


# Files Pyomo's .nl writer puts beside the model with symbolic labels (names of x and rows).
_SIDECARS = (".row", ".col")


def auxiliary_definitions(model: pyo.Block) -> list[tuple[Any, Any]]:
    """(auxiliary variable, defining expression) pairs of an emitted model, in the order
    they were defined (each may use only x and earlier auxiliaries)."""
    definitions = model.component("aux_def")
    if definitions is None:
        return []
    return [tuple(con.expr.args) for con in definitions.values()]


def update_auxiliaries(model: pyo.Block) -> None:
    """Set every auxiliary variable to its defining value at the current x (one pass)."""
    for var, expr in auxiliary_definitions(model):
        var.set_value(float(pyo.value(expr)), skip_validation=True)


def set_point(model: pyo.ConcreteModel, point: np.ndarray) -> None:
    """Put an emitted model at one point: x, then the auxiliary variables it determines."""
    for i, v in enumerate(np.asarray(point, dtype=float)):
        model.x[i].set_value(float(v), skip_validation=True)
    update_auxiliaries(model)


def pyomo_objective_at(model: pyo.ConcreteModel, point: np.ndarray) -> float:
    """Objective value of an emitted model at one point (sets x and the auxiliaries)."""
    set_point(model, point)
    return float(pyo.value(model.obj))
