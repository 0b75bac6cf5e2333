"""The benchmark-program grammar: a Python-syntax subset parsed with `ast`, never executed.

A program is a few let-bindings (`name = expr`) and a final scalar expression in the
decision vector `x` (length `dim`, box-bounded). Values are scalars, vectors of length
`dim` (`x`, `[1.0, 2.0]`, elementwise results) or constant `dim x dim` matrices used as
`M @ v`. Anything outside the whitelist is rejected with a `ProgramError` naming why.
"""

from __future__ import annotations

import ast
import math
import numbers
import reprlib
from dataclasses import dataclass, field
from typing import Any

from coplug.plugins.errors import InputError

FUNCTIONS: dict[str, int] = {
    "exp": 1, "log": 1, "sin": 1, "cos": 1, "sqrt": 1, "abs": 1, "tanh": 1,
    "floor": 1, "acos": 1, "sum": 1, "prod": 1, "max": 2, "min": 2,
}
REDUCTIONS = frozenset({"sum", "prod"})
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
          ast.MatMult: "matmul"}
RESERVED = frozenset({"x", *FUNCTIONS, *CONSTANTS})
MAX_TEXT = 500_000
MAX_NODES = 200_000
# Deepest syntax tree accepted: a fixed limit, so that a program accepted in one place is
# accepted everywhere (a limit set by Python's recursion depth depends on the caller), and
# every recursive pass over the tree (evaluators, Pyomo, text) has room below 1000 frames.
MAX_DEPTH = 360

SCALAR, VECTOR, MATRIX = 0, 1, 2


class ProgramError(InputError):
    """A rejected program; `kind` is syntax | unsafe | shape | non_finite | too_large."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"program rejected ({kind}): {reason}")
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True)
class Node:
    """One expression node: `op` plus children; `value` holds constants, indices and names."""

    op: str
    args: tuple[Node, ...] = ()
    value: Any = None

    def walk(self):
        """Yield this node and all its descendants, depth first (without recursion: nested
        generators made a walk cost its size times its depth)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.args))

    def size(self) -> int:
        """Number of nodes in this subtree."""
        return sum(1 for _ in self.walk())


@dataclass(frozen=True)
class Program:
    """A validated benchmark program over x in [lower, upper]^dim."""

    dim: int
    lets: tuple[tuple[str, Node], ...]
    body: Node
    lower: float = -5.0
    upper: float = 5.0
    shapes: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def text(self) -> str:
        """Canonical program text."""
        return to_text(self)

    def size(self) -> int:
        """Total number of expression nodes."""
        return self.body.size() + sum(node.size() for _, node in self.lets)


# The most dimensions a box may have: the finiteness check samples 256 points of it
# (200 MB at this size; numpy refused 1e30 with its own error).
MAX_DIM = 100_000


# Boxes the samplers and the solver portfolio can work in: bounds within +-BOX_MAX_ABS
# ([-1e300, 1e300] made the Lipschitz solver's bounds nan), width at least BOX_MIN_WIDTH
# of the box's size and BOX_MIN_ABS_WIDTH ([0, 5e-324] divided by zero inside CMA-ES;
# [0, 1e-13] works as [0, 1] does).
BOX_MAX_ABS = 1e100
BOX_MIN_WIDTH = 1e-12
BOX_MIN_ABS_WIDTH = 1e-100


def check_box(dim: Any, lower: Any, upper: Any) -> tuple[int, float, float]:
    """(dim, lower, upper) as (int, float, float), or InputError: dim an integer in
    [1, MAX_DIM] (numpy integers too, bools not), lower < upper finite real numbers within
    +-BOX_MAX_ABS, at least BOX_MIN_WIDTH of their size and BOX_MIN_ABS_WIDTH apart."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise InputError(f"dim must be a positive integer, got {dim!r}")
    if dim > MAX_DIM:
        raise InputError(f"dim must be at most {MAX_DIM}, got {dim}")
    real = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (lower, upper))
    if not (real and math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise InputError(f"box must satisfy finite lower < upper, got [{lower}, {upper}]")
    if not math.isfinite(upper - lower):  # sample points would be nan
        raise InputError(f"box [{lower}, {upper}] is too wide: upper - lower overflows")
    if max(abs(lower), abs(upper)) > BOX_MAX_ABS:  # the portfolio's Lipschitz bounds: nan
        raise InputError(f"box [{lower}, {upper}] reaches past +-{BOX_MAX_ABS:g}, where "
                         "squares overflow and the solvers' steps lose meaning")
    if upper - lower < max(BOX_MIN_WIDTH * max(abs(lower), abs(upper)), BOX_MIN_ABS_WIDTH):
        raise InputError(f"box [{lower}, {upper}] is too narrow: its width is below "
                         f"{BOX_MIN_WIDTH:g} of its size or {BOX_MIN_ABS_WIDTH:g}, where points "
                         "round to its bounds or squares underflow")
    return int(dim), float(lower), float(upper)


def parse(text: str, dim: int, lower: float = -5.0, upper: float = 5.0) -> Program:
    """Parse and validate program text for `dim` variables, or raise `ProgramError`."""
    if not isinstance(text, str):
        raise ProgramError("syntax", f"program must be text, got {type(text).__name__}")
    dim, lower, upper = check_box(dim, lower, upper)
    if len(text) > MAX_TEXT:
        raise ProgramError("too_large", f"text has {len(text)} characters (max {MAX_TEXT})")
    try:
        tree = ast.parse(text, mode="exec")
    except SyntaxError as exc:
        raise ProgramError("syntax", f"line {exc.lineno}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ProgramError("too_large", f"cannot parse: {type(exc).__name__}") from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise ProgramError("too_large", f"expression nested {depth} levels deep "
                           f"(max {MAX_DEPTH}); split it with `name = ...` lines")
    try:
        return _Reader(dim, float(lower), float(upper)).program(tree)
    except RecursionError:
        raise ProgramError("too_large", "expression nested too deeply") from None


def _depth(tree: ast.AST) -> int:
    """Nesting depth of a syntax tree, measured without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


class _Reader:
    """Turn a whitelisted `ast.Module` into a `Program`, inferring shapes as it goes."""

    def __init__(self, dim: int, lower: float, upper: float) -> None:
        self.dim, self.lower, self.upper = dim, lower, upper
        self.shapes: dict[str, int] = {}
        self.nodes = 0

    def program(self, tree: ast.Module) -> Program:
        if not tree.body:
            raise ProgramError("syntax", "empty program")
        lets = []
        for stmt in tree.body[:-1]:
            if not isinstance(stmt, ast.Assign):
                raise ProgramError("unsafe", f"line {stmt.lineno}: {type(stmt).__name__} "
                                   "statement not allowed (only `name = expr`)")
            lets.append(self._assign(stmt))
        last = tree.body[-1]
        if not isinstance(last, ast.Expr):
            raise ProgramError("syntax", f"line {last.lineno}: the last line must be the "
                               "objective expression")
        body, shape = self.expr(last.value)
        if shape != SCALAR:
            raise ProgramError("shape", "the objective must be a scalar (use sum(...))")
        return Program(self.dim, tuple(lets), body, self.lower, self.upper, dict(self.shapes))

    def _assign(self, stmt: ast.Assign) -> tuple[str, Node]:
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            raise ProgramError("unsafe", f"line {stmt.lineno}: assign to one plain name")
        name = stmt.targets[0].id
        if name in RESERVED or name.startswith("_"):
            raise ProgramError("unsafe", f"line {stmt.lineno}: cannot assign to {name!r}")
        if name in self.shapes:
            raise ProgramError("unsafe", f"line {stmt.lineno}: {name!r} assigned twice")
        node, shape = self.expr(stmt.value)
        if shape == MATRIX:  # every backend takes a matrix only as the literal of M @ v
            raise ProgramError("shape", f"line {stmt.lineno}: a matrix cannot be named; "
                               "write it where it is used, as [[...], ...] @ v")
        self.shapes[name] = shape
        return name, node

    def _count(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ProgramError("too_large", f"more than {MAX_NODES} expression nodes")

    def expr(self, node: ast.AST) -> tuple[Node, int]:
        """Translate one expression, returning the node and its shape."""
        self._count()
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Constant):
            return Node("num", value=self._number(node)), SCALAR
        if isinstance(node, ast.Name):
            return self._name(node.id, line)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            arg, shape = self.expr(node.operand)
            if shape == MATRIX:
                raise ProgramError("shape", f"line {line}: a matrix can only be used as M @ v")
            if isinstance(node.op, ast.UAdd):
                return arg, shape
            if arg.op == "num":
                return Node("num", value=-arg.value), SCALAR
            return Node("neg", (arg,)), shape
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return self._binary(BINARY[type(node.op)], node, line)
        if isinstance(node, ast.Call):
            return self._call(node, line)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, line)
        if isinstance(node, ast.List):
            return self._literal(node, line)
        raise ProgramError("unsafe", f"line {line}: {type(node).__name__} is not allowed")

    def _number(self, node: ast.AST) -> float:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self._number(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if not isinstance(node, ast.Constant):
            raise ProgramError("unsafe", f"line {getattr(node, 'lineno', '?')}: "
                               "list entries must be numbers")
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProgramError("unsafe", f"line {node.lineno}: constant {value!r} is not a number")
        if isinstance(value, int) and abs(value) > 2**53:
            raise ProgramError("non_finite", f"line {node.lineno}: integer constant too large")
        value = float(value)
        if not math.isfinite(value):
            raise ProgramError("non_finite", f"line {node.lineno}: constant is not finite")
        return value

    def _name(self, name: str, line: Any) -> tuple[Node, int]:
        if name == "x":
            return Node("x"), VECTOR
        if name in CONSTANTS:
            return Node("num", value=CONSTANTS[name]), SCALAR
        if name in self.shapes:
            return Node("ref", value=name), self.shapes[name]
        raise ProgramError("unsafe", f"line {line}: unknown name {name!r}")

    def _binary(self, op: str, node: ast.BinOp, line: Any) -> tuple[Node, int]:
        left, ls = self.expr(node.left)
        right, rs = self.expr(node.right)
        if op == "matmul":
            if ls != MATRIX or rs != VECTOR:
                raise ProgramError("shape", f"line {line}: @ needs a constant matrix @ a vector")
            return Node(op, (left, right)), VECTOR
        if MATRIX in (ls, rs):
            raise ProgramError("shape", f"line {line}: a matrix can only be used as M @ v")
        return Node(op, (left, right)), max(ls, rs)

    def _call(self, node: ast.Call, line: Any) -> tuple[Node, int]:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            what = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise ProgramError("unsafe", f"line {line}: call to {what!r} is not allowed; "
                               f"functions: {', '.join(sorted(FUNCTIONS))}")
        name = node.func.id
        if node.keywords or len(node.args) != FUNCTIONS[name]:
            raise ProgramError("syntax", f"line {line}: {name}() takes {FUNCTIONS[name]} "
                               "positional argument(s)")
        args = [self.expr(arg) for arg in node.args]
        shapes = [shape for _, shape in args]
        if MATRIX in shapes:
            raise ProgramError("shape", f"line {line}: a matrix can only be used as M @ v")
        if name in REDUCTIONS:
            if shapes[0] != VECTOR:
                raise ProgramError("shape", f"line {line}: {name}() needs a vector")
            return Node(name, (args[0][0],)), SCALAR
        return Node(name, tuple(a for a, _ in args)), max(shapes)

    def _subscript(self, node: ast.Subscript, line: Any) -> tuple[Node, int]:
        if not (isinstance(node.value, ast.Name) and node.value.id == "x"):
            raise ProgramError("unsafe", f"line {line}: only x[i] may be indexed")
        index = node.slice
        negative = isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) \
            and isinstance(index.operand, ast.Constant) and type(index.operand.value) is int \
            and index.operand.value > 0
        if negative:  # x[-1]: an integer literal, out of range as written
            raise ProgramError("shape", f"line {line}: x[-{index.operand.value}] is out of "
                               f"range for dim={self.dim} (indices run 0..{self.dim - 1})")
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            raise ProgramError("unsafe", f"line {line}: index of x must be an integer literal")
        if not 0 <= index.value < self.dim:
            raise ProgramError("shape", f"line {line}: x[{index.value}] is out of range for "
                               f"dim={self.dim}")
        return Node("xi", value=index.value), SCALAR

    def _literal(self, node: ast.List, line: Any) -> tuple[Node, int]:
        if node.elts and isinstance(node.elts[0], ast.List):
            rows = []
            for row in node.elts:
                if not isinstance(row, ast.List):
                    raise ProgramError("syntax", f"line {line}: ragged matrix literal")
                rows.append(tuple(self._number(v) for v in row.elts))
            if len(rows) != self.dim or any(len(r) != self.dim for r in rows):
                raise ProgramError("shape", f"line {line}: matrix must be {self.dim}x{self.dim}")
            return Node("mat", value=tuple(rows)), MATRIX
        values = tuple(self._number(v) for v in node.elts)
        if len(values) != self.dim:
            raise ProgramError("shape", f"line {line}: vector has {len(values)} entries, "
                               f"need dim={self.dim}")
        return Node("vec", value=values), VECTOR


_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2, "div": 2, "matmul": 2, "neg": 3, "pow": 4}
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@", "pow": "**"}
_ATOM = 5


def check_program(program: Any, where: str) -> Program:
    """`program` when it is a Program, else InputError naming `where` and how to make one
    (a text or a Pyomo model failed deep inside on `.dim`, a method of Pyomo blocks)."""
    if not isinstance(program, Program):
        raise InputError(f"{where} needs a Program (coplug.formulations.bbo.load(text, dim) "
                         f"makes one), got {type(program).__name__}")
    return program


def to_text(program: Program) -> str:
    """Canonical text of a program: one `name = expr` line per let, then the objective."""
    check_program(program, "to_text")
    lines = [f"{name} = {node_text(node)}" for name, node in program.lets]
    lines.append(node_text(program.body))
    return "\n".join(lines) + "\n"


def node_text(node: Node) -> str:
    """Canonical text of one expression, with the fewest parentheses that keep its tree."""
    return _text(node)[0]


def _num(value: float) -> str:
    return repr(float(value))


def _text(node: Node) -> tuple[str, int]:
    op = node.op
    if op == "num":
        return _num(node.value), (3 if node.value < 0 or str(node.value)[0] == "-" else _ATOM)
    if op == "vec":
        return "[" + ", ".join(_num(v) for v in node.value) + "]", _ATOM
    if op == "mat":
        rows = ("[" + ", ".join(_num(v) for v in row) + "]" for row in node.value)
        return "[" + ", ".join(rows) + "]", _ATOM
    if op == "x":
        return "x", _ATOM
    if op == "xi":
        return f"x[{node.value}]", _ATOM
    if op == "ref":
        return node.value, _ATOM
    if op == "neg":  # --x needs no parentheses (Python allows at most 200 nested ones)
        text, prec = _text(node.args[0])
        return "-" + (text if prec > 3 or node.args[0].op == "neg" else f"({text})"), 3
    if op in _SYMBOL:
        prec = _PRECEDENCE[op]
        (lt, lp), (rt, rp) = _text(node.args[0]), _text(node.args[1])
        if op == "pow":
            left = lt if lp > prec else f"({lt})"
            right = rt if rp >= prec or node.args[1].op == "neg" else f"({rt})"
        else:
            left = lt if lp >= prec else f"({lt})"
            right = rt if rp > prec else f"({rt})"
        return f"{left} {_SYMBOL[op]} {right}", prec
    return f"{op}(" + ", ".join(node_text(arg) for arg in node.args) + ")", _ATOM


def node_to_json(node: Node) -> dict[str, Any]:
    """A plain-JSON form of an expression tree (built without recursion: a 500-term sum is
    a tree 500 deep)."""
    forms: dict[int, dict[str, Any]] = {}
    for sub in _post_order(node):
        data: dict[str, Any] = {"op": sub.op}
        if sub.value is not None:
            data["value"] = [list(r) for r in sub.value] if sub.op == "mat" else (
                list(sub.value) if sub.op == "vec" else sub.value)
        if sub.args:
            data["args"] = [forms[id(arg)] for arg in sub.args]
        forms[id(sub)] = data
    return forms[id(node)]


def _post_order(node: Node) -> list[Node]:
    """Every node of a tree, children before parents, without recursion."""
    out, stack = [], [node]
    while stack:
        sub = stack.pop()
        out.append(sub)
        stack.extend(sub.args)
    return out[::-1]


def node_from_json(data: Any) -> Node:
    """Inverse of `node_to_json`, without recursion; a malformed tree is an InputError naming
    what is wrong (shape checks happen when the program text is re-parsed)."""
    done: list[Node] = []
    stack = [_json_frame(data)]
    while stack:
        op, value, args, built = stack[-1]
        if len(built) < len(args):
            stack.append(_json_frame(args[len(built)]))
            continue
        stack.pop()
        (stack[-1][3] if stack else done).append(Node(op, tuple(built), value))
    return done[0]


def _json_frame(data: Any) -> tuple[str, Any, list, list[Node]]:
    """One JSON tree node checked: (op, value, JSON args, children built so far)."""
    if not isinstance(data, dict) or not isinstance(data.get("op"), str):
        raise InputError(f"program JSON: a tree node must be an object with a string 'op', "
                         f"got {reprlib.repr(data)[:60]}")
    op, args, value = data["op"], data.get("args", []), data.get("value")
    if not isinstance(args, list):
        raise InputError(f"program JSON: 'args' of a {op!r} node must be a list")
    try:
        if op == "mat":
            value = tuple(tuple(float(v) for v in row) for row in value)
        elif op == "vec":
            value = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"program JSON: the value of a {op!r} node is not numbers") from None
    return op, value, args, []


def same_tree(a: Node, b: Node) -> bool:
    """Whether two trees are equal, compared without recursion (Node's == recurses)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if x.op != y.op or x.value != y.value or len(x.args) != len(y.args):
            return False
        stack.extend(zip(x.args, y.args, strict=True))
    return True


def shape_of(node: Node, let_shapes: dict[str, int] | None = None) -> int:
    """Shape code (SCALAR, VECTOR, MATRIX) of an already validated expression."""
    op = node.op
    if op in ("num", "xi") or op in REDUCTIONS:
        return SCALAR
    if op in ("vec", "x", "matmul"):
        return VECTOR
    if op == "mat":
        return MATRIX
    if op == "ref":
        return (let_shapes or {})[node.value]
    return max(shape_of(arg, let_shapes) for arg in node.args)
