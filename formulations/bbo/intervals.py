"""Interval bounds of program expressions over batches of boxes (no sampling, no solver).

Validation uses them to prove that a denominator or a log argument keeps away from 0 on
the whole box: sample points cannot see a pole the function only touches, such as
1 / (x[0] - 0.3) ** 2. Each bound is rounded outward by a relative EPS, which covers the
rounding of correctly rounded arithmetic and of numpy's transcendental functions, so a
proven sign holds for the values the evaluators compute. A box is an (n, dim) pair of
lower and upper corners; a scalar's bounds have shape (n, 1), a vector's (n, dim).
Written here rather than taken from Pyomo's FBBT (`compute_bounds_on_expr`) or mpmath's
`iv`: validation bounds up to 4096 sub-boxes per program in one vectorized numpy pass over
the program tree, where those evaluate one box at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container
from dataclasses import dataclass

import numpy as np

from coplug.formulations.bbo.evaluate import constant_value
from coplug.formulations.bbo.grammar import Node, Program

EPS = 1e-14
TWO_PI = 2.0 * math.pi

Bounds = tuple[np.ndarray, np.ndarray]


def _out(lo: np.ndarray, hi: np.ndarray) -> Bounds:
    """Round bounds outward by EPS; an undefined (nan) bound becomes infinite and an infinite
    one stays (inf - EPS * inf was nan, which every comparison took for a proof)."""
    lo = np.where(np.isnan(lo), -np.inf, np.where(np.isinf(lo), lo, lo - EPS * np.abs(lo)))
    hi = np.where(np.isnan(hi), np.inf, np.where(np.isinf(hi), hi, hi + EPS * np.abs(hi)))
    return lo, hi


def _full(like: np.ndarray) -> Bounds:
    """No information: (-inf, inf) in the shape of `like`."""
    return np.full(like.shape, -np.inf), np.full(like.shape, np.inf)


def _mul(a: Bounds, b: Bounds) -> Bounds:
    products = np.stack(np.broadcast_arrays(a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]))
    return _out(products.min(axis=0), products.max(axis=0))


def _reciprocal(b: Bounds) -> Bounds:
    """1 / b; unbounded where b's bounds include 0."""
    lo, hi = b
    zero = (lo <= 0.0) & (hi >= 0.0)
    return _out(np.where(zero, -np.inf, 1.0 / hi), np.where(zero, np.inf, 1.0 / lo))


def _int_pow(a: Bounds, n: float) -> Bounds:
    """a ** n for an integral n of any size (a negative n through the reciprocal)."""
    if n < 0:
        return _reciprocal(_int_pow(a, -n))
    lo, hi = a
    if n % 2:
        return _out(lo**n, hi**n)
    small = np.where(lo >= 0.0, lo, np.where(hi <= 0.0, -hi, 0.0))
    large = np.maximum(np.abs(lo), np.abs(hi))
    return _out(small**n, large**n)


def _pow(a: Bounds, b: Bounds, exponent: float | None) -> Bounds:
    """a ** b; a constant exponent exactly, a variable one as exp(b * log(a)) for a > 0."""
    lo, hi = a
    if exponent is not None and exponent == round(exponent):  # x ** 2e6 is even in x
        return _int_pow(a, exponent)
    if exponent is not None:
        base = (np.maximum(lo, 0.0), np.maximum(hi, 0.0))
        ends = (base[0] ** exponent, base[1] ** exponent)
        result = ends if exponent > 0 else (ends[1], ends[0])
        undefined = hi < 0.0
        return _out(np.where(undefined, -np.inf, result[0]), np.where(undefined, np.inf,
                                                                       result[1]))
    log_a = _monotone(np.log, (np.maximum(lo, 0.0), hi))
    lo_out, hi_out = _monotone(np.exp, _mul(b, log_a))
    positive = lo > 0.0
    return np.where(positive, lo_out, -np.inf), np.where(positive, hi_out, np.inf)


def _pow_each(a: Bounds, exponents: tuple[float, ...]) -> Bounds:
    """a ** [e_1, ..., e_d]: each component by its own constant exponent, as exactly as
    `_pow` takes one (abs(t) ** [2.0, 6.0] is >= 0, not unbounded below)."""
    lo, hi = np.broadcast_arrays(a[0], a[1], np.zeros((1, len(exponents))))[:2]
    parts = [_pow((lo[:, [i]], hi[:, [i]]), (lo[:, [i]], hi[:, [i]]), float(e))
             for i, e in enumerate(exponents)]
    return np.hstack([p[0] for p in parts]), np.hstack([p[1] for p in parts])


def _monotone(fn: Callable[[np.ndarray], np.ndarray], a: Bounds) -> Bounds:
    return _out(fn(a[0]), fn(a[1]))


def _periodic(fn: Callable[[np.ndarray], np.ndarray], a: Bounds, crest: float) -> Bounds:
    """sin or cos over an interval: 1 where it holds a crest crest + 2k pi, -1 where a
    trough, else the function's own end values (cos as sin(a + pi/2) erred by an ulp of
    the shifted argument, more than EPS of a value near 0, and proved a pole away)."""
    lo, hi = a
    ends = np.stack(np.broadcast_arrays(fn(lo), fn(hi)))
    out_lo, out_hi = ends.min(axis=0), ends.max(axis=0)
    slack = 1e-9 * (1.0 + np.abs(hi))
    for peak, is_max in ((crest, True), (crest - math.pi, False)):
        k = np.floor((hi + slack - peak) / TWO_PI)
        inside = peak + k * TWO_PI >= lo - slack
        if is_max:
            out_hi = np.where(inside, 1.0, out_hi)
        else:
            out_lo = np.where(inside, -1.0, out_lo)
    wide = ~np.isfinite(lo) | ~np.isfinite(hi) | (hi - lo >= TWO_PI)
    lo_out, hi_out = _out(np.where(wide, -1.0, out_lo), np.where(wide, 1.0, out_hi))
    return np.maximum(lo_out, -1.0), np.minimum(hi_out, 1.0)


def _abs(a: Bounds) -> Bounds:
    lo, hi = a
    small = np.where(lo >= 0.0, lo, np.where(hi <= 0.0, -hi, 0.0))
    return small, np.maximum(np.abs(lo), np.abs(hi))


def _domain(fn: Callable[[np.ndarray], np.ndarray], a: Bounds, low: float,
            high: float = np.inf, decreasing: bool = False) -> Bounds:
    """A monotone function defined on [low, high]: bounds over the defined part of a,
    no information where a misses the domain entirely; a decreasing one's ends are swapped
    before rounding outward (after, acos's bounds were rounded inward, proving a pole away)."""
    lo, hi = a
    ends = (fn(np.clip(lo, low, high)), fn(np.clip(hi, low, high)))
    out = _out(*(ends[::-1] if decreasing else ends))
    miss = (hi < low) | (lo > high)
    return np.where(miss, -np.inf, out[0]), np.where(miss, np.inf, out[1])


def _matmul(matrix: np.ndarray, v: Bounds) -> Bounds:
    """M @ v, rounded outward by the accumulated error of the dot products."""
    pos, neg = np.maximum(matrix, 0.0), np.minimum(matrix, 0.0)
    lo = v[0] @ pos.T + v[1] @ neg.T
    hi = v[1] @ pos.T + v[0] @ neg.T
    scale = np.maximum(np.abs(v[0]), np.abs(v[1])) @ np.abs(matrix).T
    slack = (matrix.shape[0] + 2) * 2.3e-16 * scale
    return _out(lo - slack, hi + slack)


def _sum(a: Bounds) -> Bounds:
    """Entries added one by one, each sum rounded outward (keeps a sum of positives positive)."""
    out = (a[0][..., :1], a[1][..., :1])
    for j in range(1, a[0].shape[-1]):
        out = _out(out[0] + a[0][..., j : j + 1], out[1] + a[1][..., j : j + 1])
    return out


def _prod(a: Bounds) -> Bounds:
    out = (a[0][..., :1], a[1][..., :1])
    for j in range(1, a[0].shape[-1]):
        out = _mul(out, (a[0][..., j : j + 1], a[1][..., j : j + 1]))
    return out


_UNARY: dict[str, Callable[[Bounds], Bounds]] = {
    "neg": lambda a: (-a[1], -a[0]),
    "exp": lambda a: _monotone(np.exp, a),
    "tanh": lambda a: _monotone(np.tanh, a),
    "floor": lambda a: (np.floor(a[0]), np.floor(a[1])),
    "log": lambda a: _domain(np.log, a, 0.0),
    "sqrt": lambda a: _domain(np.sqrt, a, 0.0),
    "acos": lambda a: _domain(np.arccos, a, -1.0, 1.0, decreasing=True),
    "sin": lambda a: _periodic(np.sin, a, 0.5 * math.pi),
    "cos": lambda a: _periodic(np.cos, a, 0.0),
    "abs": _abs,
    "sum": _sum,
    "prod": _prod,
}


@dataclass(frozen=True)
class LetTable:
    """A program's lets by name and their definition positions, built once per program
    (building them per box batch made checking a program of many lines quadratic)."""

    nodes: dict[str, Node]
    position: dict[str, int]

    @classmethod
    def of(cls, program: Program) -> LetTable:
        """The table of `program`'s lets."""
        return cls(dict(program.lets), {name: k for k, (name, _) in enumerate(program.lets)})


class IntervalEvaluator:
    """Bounds of a program's expressions over a batch of boxes (lets computed once, in
    definition order: a chain of lets costs no recursion depth); `lets` where the caller
    keeps its program's table."""

    def __init__(self, program: Program, lower: np.ndarray, upper: np.ndarray,
                 lets: LetTable | None = None, shared: bool = False) -> None:
        self.program = program
        self.lets = LetTable.of(program) if lets is None else lets
        self.lower, self.upper = lower, upper
        self.env: dict[str, Bounds] = {}
        # `shared`: every node's bounds kept (by id), for many expressions on one box batch
        # (guards nested around one subtree bounded it once each)
        self.memo: dict[int, Bounds] | None = {} if shared else None

    def bounds(self, node: Node) -> Bounds:
        """Lower and upper bounds of `node` on every box of the batch."""
        with np.errstate(all="ignore"):
            return self._bounds(node)

    def _bounds(self, node: Node) -> Bounds:
        if self.memo is None:
            return self._computed(node)
        found = self.memo.get(id(node))
        if found is None:
            found = self.memo[id(node)] = self._computed(node)
        return found

    def _computed(self, node: Node) -> Bounds:
        op = node.op
        if op in ("num", "vec"):
            c = np.atleast_2d(np.asarray(node.value, dtype=float))
            return c, c
        if op == "x":
            return self.lower, self.upper
        if op == "xi":
            i = node.value
            return self.lower[:, i : i + 1], self.upper[:, i : i + 1]
        if op == "ref":
            if node.value not in self.env:
                for name in lets_needed(self.lets, node, self.env):
                    self.env[name] = self._bounds(self.lets.nodes[name])
            return self.env[node.value]
        if op == "matmul":
            return _matmul(np.asarray(node.args[0].value, dtype=float),
                           self._bounds(node.args[1]))
        args = [self._bounds(arg) for arg in node.args]
        if op in _UNARY:
            return _UNARY[op](args[0])
        a, b = args
        if op == "add":
            return _out(a[0] + b[0], a[1] + b[1])
        if op == "sub":
            return _out(a[0] - b[1], a[1] - b[0])
        if op == "mul":
            return _int_pow(a, 2.0) if node.args[0] == node.args[1] else _mul(a, b)
        if op == "div":
            return _mul(a, _reciprocal(b))
        if op == "pow":
            exponent = node.args[1]
            value = (np.asarray(exponent.value, dtype=float) if exponent.op in ("num", "vec")
                     else constant_value(self.program, exponent))  # abs(2.0) is 2 too
            if value is None:
                return _pow(a, b, None)
            if value.size == 1:
                return _pow(a, b, float(value.ravel()[0]))
            return _pow_each(a, tuple(value.ravel()))
        if op in ("max", "min"):
            fn = np.maximum if op == "max" else np.minimum
            return fn(a[0], b[0]), fn(a[1], b[1])
        raise ValueError(f"no interval rule for op {op!r}")


def lets_needed(lets: LetTable, node: Node, known: Container[str] = ()) -> list[str]:
    """The lets `node` uses, directly or through other lets, less those in `known`, in
    definition order (each uses only earlier ones), found without recursion."""
    found: set[str] = set()
    stack = [node]
    while stack:
        sub = stack.pop()
        if sub.op == "ref" and sub.value not in found and sub.value not in known:
            found.add(sub.value)
            stack.append(lets.nodes[sub.value])
        stack.extend(sub.args)
    return sorted(found, key=lets.position.__getitem__)


def variables_of(program: Program, node: Node, lets: LetTable | None = None) -> list[int]:
    """Indices of the variables an expression depends on (through lets too)."""
    lets = LetTable.of(program) if lets is None else lets
    found: set[int] = set()
    seen: set[str] = set()
    stack = [node]
    while stack:
        sub = stack.pop()
        if sub.op == "x":
            return list(range(program.dim))
        if sub.op == "xi":
            found.add(sub.value)
        elif sub.op == "ref" and sub.value not in seen:
            seen.add(sub.value)
            stack.append(lets.nodes[sub.value])
        stack.extend(sub.args)
    return sorted(found)
