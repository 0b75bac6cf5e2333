"""Vectorized numpy/torch evaluators of a program.

Evaluators take a batch `X` of shape (n, dim) and return (n,) values. Each node compiles to
a closure `(X, env) -> value` over one array library (`closure`, reused by validation on
subexpressions); `check_points` are the sample points of the box a program is checked at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import qmc

from coplug.formulations.bbo.grammar import Node, Program, check_program
from coplug.formulations.checks import check_count, check_memory, check_seed, numeric_array
from coplug.plugins.errors import InputError


class Backend:
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
        """A float64 array of the library holding a constant (number, vector, matrix)."""
        if self.lib == "numpy":
            return np.asarray(value, dtype=float)
        return self.m.as_tensor(np.asarray(value, dtype=float))

    def reduce(self, name: str, v: Any) -> Any:
        """sum or prod over the last axis, keeping it (a scalar of shape (n, 1))."""
        if self.lib == "numpy":
            return (np.sum if name == "sum" else np.prod)(v, axis=-1, keepdims=True)
        return (self.m.sum if name == "sum" else self.m.prod)(v, dim=-1, keepdim=True)


# n x dim arrays an evaluation holds at once, about (the sample, its scaled copy and the
# operands of one operator), for refusing sample sizes past the machine's memory.
SAMPLE_COPIES = 4

# The binary operators; the Pyomo model folds constants and builds expressions with them.
BINOPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a**b, "matmul": lambda m, v: v @ m.T,
}

Closure = Callable[[Any, dict[str, Any]], Any]


def closure(node: Node, be: Backend, memo: dict[int, Closure] | None = None) -> Closure:
    """Compile one node into a closure `(X, env) -> value` (scalars carry shape (n, 1));
    `memo` (by node id, for one program's nodes) shares the closures of common subtrees
    between calls."""
    if memo is not None:
        found = memo.get(id(node))
        if found is None:
            found = memo[id(node)] = _compiled(node, be, memo)
        return found
    return _compiled(node, be, None)


def _compiled(node: Node, be: Backend, memo: dict[int, Closure] | None) -> Closure:
    """`closure` of one node, its children through `memo`."""
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
    args = [closure(arg, be, memo) for arg in node.args]
    if op == "neg":
        (a,) = args
        return lambda X, env: -a(X, env)
    if op in BINOPS:
        f, (a, b) = BINOPS[op], args
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


def _as_tensors(be: Backend, a: Any, b: Any) -> tuple[Any, Any]:
    """torch.maximum needs tensors on both sides; numpy takes anything."""
    if be.lib == "numpy":
        return a, b
    return be.m.as_tensor(a, dtype=be.m.float64), be.m.as_tensor(b, dtype=be.m.float64)


def _evaluator(program: Program, lib: str) -> Callable[[Any], Any]:
    """Evaluator in `lib` (numpy or torch): the lets in order, then the body, as (n,) values."""
    be = Backend(lib)
    lets = [(name, closure(node, be)) for name, node in program.lets]
    body = closure(program.body, be)
    dim = program.dim

    def evaluate(X: Any) -> Any:
        if X.ndim < 2:  # one point (a number, for dim 1)
            X = X.reshape(1, -1)
        if X.ndim != 2 or X.shape[-1] != dim:
            raise InputError(f"points must have {dim} columns, got shape {tuple(X.shape)}")
        env: dict[str, Any] = {}
        for name, f in lets:
            env[name] = f(X, env)
        out = body(X, env)
        if lib == "numpy":
            return np.broadcast_to(out, (X.shape[0], 1)).reshape(-1).astype(float)
        return out.expand(X.shape[0], 1).reshape(-1)

    return evaluate


def constant_value(program: Program, node: Node) -> np.ndarray | None:
    """`node`'s value where it does not depend on x (through the lets it uses either), else
    None: an exponent written `abs(2.0)` or `1.0 + 1.0` is the whole number 2, which the
    Pyomo model folds to a constant and which takes any base."""
    lets = dict(program.lets)
    used: set[str] = set()
    stack = [node]
    while stack:
        sub = stack.pop()
        if sub.op in ("x", "xi"):
            return None
        if sub.op == "ref" and sub.value not in used:
            used.add(sub.value)
            stack.append(lets[sub.value])
        stack.extend(sub.args)
    be = Backend("numpy")
    point = np.zeros((1, program.dim))
    env: dict[str, Any] = {}
    with np.errstate(all="ignore"):
        for name, let in program.lets:
            if name in used:
                env[name] = closure(let, be)(point, env)
        return np.asarray(closure(node, be)(point, env), dtype=float)


def numpy_evaluator(program: Program) -> Callable[[np.ndarray], np.ndarray]:
    """Vectorized numpy evaluator: (n, dim) points -> (n,) values (nan/inf propagate)."""
    inner = _evaluator(check_program(program, "numpy_evaluator"), "numpy")

    def evaluate(X: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return inner(numeric_array(X, "points"))  # complex would lose its imaginary part

    return evaluate


def torch_evaluator(program: Program) -> Callable[[Any], Any]:
    """Vectorized, differentiable torch evaluator on float64 tensors of shape (n, dim)."""
    import torch

    check_program(program, "torch_evaluator")
    inner = _evaluator(program, "torch")

    def evaluate(X: Any) -> Any:
        if isinstance(X, torch.Tensor):
            if X.is_complex():
                raise InputError(f"points must be numeric, got {X.dtype} data")
            return inner(X.to(torch.float64))
        return inner(torch.as_tensor(numeric_array(X, "points"), dtype=torch.float64))

    return evaluate


def check_points(program: Program, n: int = 256, seed: int = 0) -> np.ndarray:
    """Points used for the finiteness check: a Latin hypercube, the center and corners."""
    d = check_program(program, "check_points").dim
    n, seed = check_count(n, "n (sample points)", 0), check_seed(seed)
    check_memory(8.0 * SAMPLE_COPIES * (n + 1) * d, f"{n} sample points in {d} dimensions",
                 "use fewer samples")
    unit = qmc.LatinHypercube(d=d, seed=seed).random(n)
    corners = np.array(np.meshgrid(*[[0.0, 1.0]] * d)).reshape(d, -1).T if d <= 10 else []
    unit = np.vstack([unit, np.full((1, d), 0.5), *([corners] if len(corners) else [])])
    return program.lower + unit * (program.upper - program.lower)
