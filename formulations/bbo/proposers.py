"""Program proposers behind one interface, and the offline one: symbolic search.

`Proposer` is the interface evolution calls and `Scored` what it shows proposers. Every
proposal goes through the same validation (`accept`); rejections are counted by reason in
`stats`. `SymbolicProposer` (the default, no network) mutates and crosses over expression
trees. The LLM proposer lives in `llm_proposer`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from coplug.formulations.bbo.grammar import (
    SCALAR,
    VECTOR,
    Node,
    Program,
    ProgramError,
    check_box,
    parse,
    shape_of,
    to_text,
)
from coplug.formulations.bbo.validate import load
from coplug.plugins.errors import InputError


@dataclass(frozen=True)
class Scored:
    """A program with its two objectives, as shown to proposers."""

    program: Program
    similarity: float
    differentiation: float
    target: str = ""
    features: tuple[float, ...] = ()


class Proposer(Protocol):
    """Anything that turns scored parents into new validated programs."""

    name: str
    stats: Counter

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator,
                context: dict[str, Any]) -> list[Program]: ...


def accept(text: Any, dim: int, lower: float, upper: float, max_nodes: int,
           stats: Counter) -> Program | None:
    """Parse and validate proposed text; count the outcome in `stats` by reason."""
    try:  # size first: validation's interval proofs took minutes on a 150 KB reply
        if parse(text, dim, lower, upper).size() > max_nodes:
            stats["rejected_too_large"] += 1
            return None
        program = load(text, dim, lower, upper)
    except ProgramError as exc:
        stats[f"rejected_{exc.kind}"] += 1
        return None
    if not any(node.op in ("x", "xi") for node in _all_nodes(program)):
        stats["rejected_constant"] += 1
        return None
    stats["accepted"] += 1
    return program


def _all_nodes(program: Program) -> list[Node]:
    return [n for tree in [*(t for _, t in program.lets), program.body] for n in tree.walk()]


# No tanh: Pyomo hands it to SCIP as a ratio of exponentials, which SCIP bounds poorly.
_UNARY = ("sin", "cos", "abs", "square", "sqrt_abs", "log1p_abs", "gauss")
_BINARY = ("add", "sub", "mul")


def _wrap(kind: str, a: Node) -> Node:
    """Apply a SCIP-friendly unary building block to a subtree."""
    if kind == "square":
        return Node("pow", (a, Node("num", value=2.0)))
    if kind == "sqrt_abs":
        return Node("sqrt", (Node("abs", (a,)),))
    if kind == "log1p_abs":
        return Node("log", (Node("add", (Node("num", value=1.0), Node("abs", (a,)))),))
    if kind == "gauss":
        return Node("exp", (Node("neg", (Node("pow", (a, Node("num", value=2.0))),)),))
    return Node(kind, (a,))


@dataclass
class SymbolicProposer:
    """Offline proposer: subtree replacement, constant jitter, wrapping, operator swap,
    shrinking, added terms, and subtree crossover between parents."""

    dim: int
    lower: float = -5.0
    upper: float = 5.0
    max_nodes: int = 40
    crossover_rate: float = 0.4
    attempts: int = 25
    name: str = "symbolic"
    stats: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        """Refuse a bad dim, box or search setting here, not deep inside numpy on first use."""
        self.dim, self.lower, self.upper = check_box(self.dim, self.lower, self.upper)
        for name in ("max_nodes", "attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise InputError(f"{name} must be an integer >= 1, got {value!r}")
        rate = self.crossover_rate
        if isinstance(rate, bool) or not isinstance(rate, int | float | np.number) \
                or not 0 <= rate <= 1:
            raise InputError(f"crossover_rate must be a number in [0, 1], got {rate!r}")

    def random_program(self, rng: np.random.Generator, depth: int = 3) -> Program:
        """A random valid program (the seeds of evolution and the random baseline)."""
        for _ in range(self.attempts * 4):
            body = self._random(rng, SCALAR, depth)
            program = accept(to_text(Program(self.dim, (), body, self.lower, self.upper)),
                             self.dim, self.lower, self.upper, self.max_nodes, Counter())
            if program is not None:
                return program
        raise InputError("could not draw a valid random program; raise max_nodes")

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator,
                context: dict[str, Any] | None = None) -> list[Program]:
        """n children of the given parents (a random program where every attempt fails)."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise InputError(f"n must be an integer >= 0 (programs to propose), got {n!r}")
        if not parents:
            return [self.random_program(rng) for _ in range(n)]
        out = []
        for _ in range(n):
            for _ in range(self.attempts):
                a = parents[int(rng.integers(len(parents)))].program
                if len(parents) > 1 and rng.random() < self.crossover_rate:
                    b = parents[int(rng.integers(len(parents)))].program
                    child = self._crossover(a, b, rng)
                else:
                    child = self._mutate(a, rng)
                program = accept(to_text(child), self.dim, self.lower, self.upper,
                                 self.max_nodes, self.stats) if child is not None else None
                if program is not None and program == a:  # kept by no one: not accepted
                    self.stats["accepted"] -= 1
                    self.stats["rejected_parent_copy"] += 1
                elif program is not None:
                    out.append(program)
                    break
            else:
                self.stats["fallback_random"] += 1
                out.append(self.random_program(rng))
        return out

    def _random(self, rng: np.random.Generator, shape: int, depth: int) -> Node:
        """A random expression of the given shape."""
        if depth <= 0 or rng.random() < 0.25:
            return self._leaf(rng, shape)
        r = rng.random()
        if shape == SCALAR and r < 0.45:
            return Node("sum", (self._random(rng, VECTOR, depth - 1),))
        if r < 0.7:
            op = _BINARY[int(rng.integers(len(_BINARY)))]
            other = shape if rng.random() < 0.6 else SCALAR
            left = self._random(rng, shape, depth - 1)
            return Node(op, (left, self._random(rng, other, depth - 1)))
        return _wrap(_UNARY[int(rng.integers(len(_UNARY)))], self._random(rng, shape, depth - 1))

    def _leaf(self, rng: np.random.Generator, shape: int) -> Node:
        span = self.upper - self.lower
        if shape == VECTOR:
            r = rng.random()
            if r < 0.4:
                return Node("x")
            shift = Node("vec", value=tuple(np.round(self.lower + span * (0.1 + 0.8 * rng.random(
                self.dim)), 2).tolist()))
            if r < 0.8:
                return Node("sub", (Node("x"), shift))
            scale = Node("vec", value=tuple(np.round(rng.uniform(0.2, 3.0, self.dim), 2).tolist()))
            return Node("mul", (scale, Node("x")))
        if rng.random() < 0.5:
            return Node("xi", value=int(rng.integers(self.dim)))
        return Node("num", value=float(np.round(rng.uniform(-3, 3), 2)))

    def _mutate(self, program: Program, rng: np.random.Generator) -> Program | None:
        trees = self._trees(program)
        k = int(rng.integers(len(trees)))
        nodes = list(trees[k].walk())
        target = nodes[int(rng.integers(len(nodes)))]
        shape = shape_of(target, program.shapes)
        kind = rng.choice(["subtree", "jitter", "wrap", "operator", "shrink", "add_term"])
        if kind == "jitter" and target.op in ("num", "vec"):
            noise = rng.normal(0, 0.3, np.shape(target.value))
            value = np.round(np.asarray(target.value) + noise, 3)
            value = float(value) if target.op == "num" else tuple(value.tolist())
            new = Node(target.op, value=value)
        elif kind == "wrap" and shape in (SCALAR, VECTOR):
            new = _wrap(_UNARY[int(rng.integers(len(_UNARY)))], target)
        elif kind == "operator" and target.op in _BINARY:
            new = Node(_BINARY[int(rng.integers(len(_BINARY)))], target.args)
        elif kind == "shrink":
            same = [a for a in target.args if shape_of(a, program.shapes) == shape]
            if not same:
                return None
            new = same[int(rng.integers(len(same)))]
        elif kind == "add_term" and shape in (SCALAR, VECTOR):
            new = Node("add", (target, self._random(rng, shape, 2)))
        elif shape in (SCALAR, VECTOR):
            new = self._random(rng, shape, 2)
        else:
            return None
        trees[k] = _replace(trees[k], target, new)
        return self._rebuild(program, trees)

    def _crossover(self, a: Program, b: Program, rng: np.random.Generator) -> Program | None:
        donors = [n for n in b.body.walk() if not any(m.op == "ref" for m in n.walk())
                  and shape_of(n, b.shapes) in (SCALAR, VECTOR)]
        nodes = list(a.body.walk())
        target = nodes[int(rng.integers(len(nodes)))]
        shape = shape_of(target, a.shapes)
        fitting = [n for n in donors if shape_of(n, b.shapes) == shape]
        if not fitting:
            return None
        donor = fitting[int(rng.integers(len(fitting)))]
        return replace(a, body=_replace(a.body, target, donor))

    @staticmethod
    def _trees(program: Program) -> list[Node]:
        return [tree for _, tree in program.lets] + [program.body]

    @staticmethod
    def _rebuild(program: Program, trees: list[Node]) -> Program:
        lets = tuple((name, tree) for (name, _), tree in zip(program.lets, trees, strict=False))
        return replace(program, lets=lets, body=trees[-1])


def _replace(tree: Node, target: Node, new: Node) -> Node:
    """Copy of `tree` with the first occurrence (by identity) of `target` replaced."""
    if tree is target:
        return new
    if not tree.args:
        return tree
    args = tuple(_replace(arg, target, new) for arg in tree.args)
    return tree if all(x is y for x, y in zip(args, tree.args, strict=True)) else Node(
        tree.op, args, tree.value)
