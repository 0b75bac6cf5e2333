"""Validate a program: `load` parses it and rejects one that is not safe on its box.

A program is accepted only if it is finite with |f| <= MAX_ABS at sample points of its box,
every constant subexpression is finite, no floor-free denominator changes sign among them,
and interval bounds prove on the whole box that every denominator (a power's base counts
as one when its exponent can be negative) keeps away from 0, every log argument above 0,
every base of sqrt or of a power with a fractional or variable exponent at 0 or above,
every acos argument within [-1, 1] and every exp argument below EXP_LIMIT. A rejection is
a ProgramError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from coplug.formulations.bbo.evaluate import (
    Backend,
    Closure,
    check_points,
    closure,
    constant_value,
    numpy_evaluator,
)
from coplug.formulations.bbo.grammar import (
    VECTOR,
    Node,
    Program,
    ProgramError,
    check_program,
    node_text,
    parse,
)
from coplug.formulations.checks import available_memory, check_positive

if TYPE_CHECKING:
    from coplug.formulations.bbo.intervals import IntervalEvaluator, LetTable

MAX_ABS = 1e12


def validate(program: Program, n: int = 256, seed: int = 0, max_abs: float = MAX_ABS) -> None:
    """Reject (ProgramError 'non_finite') a program that is not finite and bounded on its box
    (|f| <= max_abs, a number > 0 that may be inf: NaN turned the bound off)."""
    check_positive(max_abs, "max_abs", inf_ok=True)
    points = check_points(check_program(program, "validate"), n, seed)
    _check_lines_memory(program, len(points))
    values = numpy_evaluator(program)(points)
    bad = ~np.isfinite(values)
    if bad.any():
        raise ProgramError("non_finite", f"not finite at {int(bad.sum())} of {values.size} "
                           "sample points of the box")
    if np.abs(values).max() > max_abs:
        raise ProgramError("non_finite", f"|f| reaches {np.abs(values).max():.3g} on the box "
                           f"(limit {max_abs:.0e})")
    _reject_non_finite_constants(program)
    _reject_hidden_non_finite(program, points)
    _reject_sign_changing_denominators(program, points)
    _reject_guards_outside_domains(program)


def _vector_lets(program: Program, names: Any) -> int:
    """How many of the lets `names` hold a vector (a let of unknown shape counts as one)."""
    return sum(program.shapes.get(name, VECTOR) == VECTOR for name in names)


def _check_lines_memory(program: Program, rows: int) -> None:
    """Reject (ProgramError 'too_large') a program whose lines cannot all be held at `rows`
    points in the memory available: every let is kept while the program is checked, a
    vector one as rows x dim numbers (2,000 lines of `a = x + 1.0` at dim 1000 took 4 GB,
    and the text limit allows some 28,000)."""
    vectors = _vector_lets(program, (name for name, _ in program.lets))
    needed = 8.0 * rows * (vectors * program.dim + len(program.lets))
    available = available_memory()
    if available is not None and needed > available:
        raise ProgramError("too_large", f"its {len(program.lets)} lines ({vectors} vectors of "
                           f"{program.dim}) need about {needed / 2**30:.1f} GiB at {rows} "
                           f"sample points, this machine has {available / 2**30:.1f} GiB "
                           "available")


def _reject_non_finite_constants(program: Program) -> None:
    """Reject a constant subexpression that is not finite (min(exp(1000.0), x[0])).

    numpy can hide it (the min is x[0]), but the Pyomo model folds constants into floats
    and writes max/min as b + (d +- |d|) / 2 with d = a - b, so an inf there makes the
    model NaN and the exported script name `inf`. The innermost such node is named.
    """
    be = Backend("numpy")
    values: dict[str, Any] = {}
    for name, node in program.lets:
        values[name] = _constant_value(node, values, be)
    _constant_value(program.body, values, be)


def _constant_value(node: Node, lets: dict[str, Any], be: Backend) -> Any:
    """The value of a node that does not depend on x (None if it does), children first;
    raise ProgramError 'non_finite' at the first constant one that is not finite."""
    if node.op in ("x", "xi"):
        return None
    if node.op == "ref":
        return lets[node.value]
    if node.op in ("num", "vec", "mat"):
        return be.const(node.value)
    args = [_constant_value(arg, lets, be) for arg in node.args]
    if any(arg is None for arg in args):
        return None
    leaves = tuple(Node("num", value=arg) for arg in args)
    with np.errstate(all="ignore"):
        value = np.asarray(closure(Node(node.op, leaves, node.value), be)(None, {}))
        spread_ok = node.op not in ("max", "min") or np.isfinite(args[0] - args[1]).all()
    if not np.isfinite(value).all():
        bad = value.ravel()[~np.isfinite(value.ravel())][0]
        raise ProgramError("non_finite", f"the constant subexpression {node_text(node)[:80]} "
                           f"is not finite (it folds to {bad})")
    if not spread_ok:
        raise ProgramError("non_finite", f"the constant subexpression {node_text(node)[:80]} "
                           "overflows in the Pyomo model, which writes it as b + (d +- |d|) / 2 "
                           "with d = a - b not finite")
    return value


def _reject_hidden_non_finite(program: Program, points: np.ndarray) -> None:
    """Reject a subexpression (or a max/min spread a - b) that is not finite at a sample
    point although the program is: numpy hides it (min(exp(exp(9 * x[0])), 1.0), an unused
    let x[0] / 0.0), but the Pyomo model cannot be built or evaluated there (Python raises on
    exp overflow and on division by 0.0, and max/min's b + (d +- |d|) / 2 is nan)."""
    be = Backend("numpy")
    env: dict[str, Any] = {}
    with np.errstate(all="ignore"):
        for name, node in program.lets:
            env[name] = _finite_value(node, points, env, be)
        _finite_value(program.body, points, env, be)


def _finite_value(node: Node, points: np.ndarray, env: dict[str, Any], be: Backend) -> Any:
    """A node's values at the points, children first; raise ProgramError 'non_finite' at
    the innermost subexpression that is not finite at one of them (see above)."""
    if node.op == "mat":  # finite: literals are checked when parsed
        return np.asarray(node.value, dtype=float)
    if not node.args:
        value = np.asarray(closure(node, be)(points, env))
    else:
        args = [_finite_value(arg, points, env, be) for arg in node.args]
        leaves = tuple(Node("num", value=arg) for arg in args)
        value = np.asarray(closure(Node(node.op, leaves, node.value), be)(points, env))
        if node.op in ("max", "min"):
            _require_finite(node, args[0] - args[1], points, "its spread a - b, which the "
                            "Pyomo model's b + (d +- |d|) / 2 uses,")
            _require_model_max_min(node, args[0], args[1], value, points)
    _require_finite(node, value, points, "it")
    return value


# How far max(a, b) or min(a, b) may move at a sample point in the Pyomo model's form,
# relative to max(1, |value|) (certify refuses a model and evaluator 1e-5 apart).
MAX_MIN_TOL = 1e-9


def _require_model_max_min(node: Node, a: np.ndarray, b: np.ndarray, value: np.ndarray,
                           points: np.ndarray) -> None:
    """Reject a max/min that the Pyomo model's b + (d +- |d|) / 2, d = a - b, moves by more
    than MAX_MIN_TOL at a sample point: b + d is a only to within an ulp of b, so the model
    of min(x[1], 1e21 + x[0]) is 0 where numpy's is x[1]."""
    d = a - b
    model = b + 0.5 * (d + np.abs(d) if node.op == "max" else d - np.abs(d))
    error = np.abs(model - value) / np.maximum(1.0, np.abs(value))
    error = np.broadcast_to(error, np.broadcast_shapes(error.shape, (len(points), 1)))
    row, col = np.unravel_index(int(np.argmax(error)), error.shape)
    if error[row, col] > MAX_MIN_TOL:
        raise ProgramError("non_finite", f"{node_text(node)[:80]} is "
                           f"{np.broadcast_to(value, error.shape)[row, col]:.10g} at x="
                           f"{np.round(points[row], 6).tolist()}, but the Pyomo model, which "
                           "writes it as b + (d +- |d|) / 2 with d = a - b, gives "
                           f"{np.broadcast_to(model, error.shape)[row, col]:.10g} there: "
                           "its operands differ too much in magnitude")


def _require_finite(node: Node, value: np.ndarray, points: np.ndarray, what: str) -> None:
    """Raise ProgramError 'non_finite' naming the node and a point where `value` is not."""
    bad = ~np.isfinite(np.broadcast_to(value, np.broadcast_shapes(value.shape,
                                                                 (len(points), 1))))
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        raise ProgramError("non_finite", f"the subexpression {node_text(node)[:80]} is not "
                           f"finite at x={np.round(points[row], 6).tolist()} on the box, so "
                           f"the Pyomo model cannot evaluate {what} there (numpy's value of "
                           "the program hides it)")


def _reject_sign_changing_denominators(program: Program, points: np.ndarray) -> None:
    """Reject a division whose denominator takes both signs on the sample points: a pole.

    Every operation but floor is continuous where it is defined, so a floor-free denominator
    that is positive at one point and negative at another vanishes (or is undefined) on the
    segment between them, inside the box. Interval bounds would over-reject: they cannot
    tell (x - 1)**2 + 1 written out from a denominator that really reaches 0.
    """
    with_floor = _lets_using_floor(program)
    denominators = [den for den in (_denominator(node, program)
                                    for node in program_nodes(program))
                    if den is not None and not _uses_floor(den, with_floor)]
    if not denominators:
        return
    be = Backend("numpy")
    env: dict[str, Any] = {}
    compiled: dict[int, Closure] = {}  # denominators nested in each other share subtrees
    with np.errstate(all="ignore"):
        for name, node in program.lets:
            env[name] = closure(node, be, compiled)(points, env)
        for den in denominators:
            raw = np.asarray(closure(den, be, compiled)(points, env))
            values = np.broadcast_to(raw, np.broadcast_shapes(raw.shape, (len(points), 1)))
            values = np.where(np.isfinite(values), values, 0.0)
            if ((values > 0).any(axis=0) & (values < 0).any(axis=0)).any():
                raise ProgramError("non_finite", f"the denominator {node_text(den)[:80]} "
                                   "changes sign on the box, so the program has a pole there")


# Boxes the proof that a denominator or log argument keeps away from 0 may split before it
# gives up (fewer where a box's arrays are wide: its bounds, dim numbers each, within
# PROOF_BOX_NUMBERS per array; and a guard over the whole vector or vector lets, whose every
# operation makes such arrays, within PROOF_VECTOR_NUMBERS: 2,048 boxes at dim 30,000 took
# 5.7 GB), and the relative box width at which a bound still including 0 means a zero.
PROOF_BOXES = 4096
PROOF_MIN_BOXES = 8
PROOF_BOX_NUMBERS = 1 << 25
PROOF_VECTOR_NUMBERS = 1 << 22
ZERO_WIDTH = 1e-12


# An exp argument must stay below this on the box: exp(709.79) overflows float64.
EXP_LIMIT = 709.0


# How far, relative to their size, outward-rounded bounds may lie past a domain's closed
# end that the expression only reaches (sqrt(x[0] + 5.0) at x[0] = -5, acos(x[0] / 5.0)
# at 5): ten operations' rounding of `intervals.EPS` (1e-14 each).
DOMAIN_ROUNDING = 1e-13


def _rounding(end: np.ndarray) -> np.ndarray:
    """DOMAIN_ROUNDING of a bound's size (at least 1): of the end that may lie past the
    domain's, not the other (a bound of 28 made room for -1e-12 in sqrt((x[0] - 0.3) ** 2
    - 1e-12), nan at 0.3)."""
    return DOMAIN_ROUNDING * np.maximum(1.0, np.abs(end))


@dataclass(frozen=True)
class _Domain:
    """What a guard expression must satisfy on the whole box: `open_(lo, hi)` says where
    interval bounds leave it unproven, `score(values)` how far values keep inside (below 0:
    outside, and the program is not finite there), and how an error names it."""

    what: str
    open_: Callable[[np.ndarray, np.ndarray], np.ndarray]
    score: Callable[[np.ndarray], np.ndarray]
    outside: str  # how a value outside reads: "a pole", "a log singularity"
    strict: bool = True  # a score of exactly 0 is outside too


_DOMAINS = {
    "denominator": _Domain("denominator", lambda lo, hi: (lo <= 0.0) & (hi >= 0.0), np.abs,
                           "a pole"),
    "log": _Domain("log argument", lambda lo, hi: lo <= 0.0, lambda v: v,
                   "a log singularity"),
    "root": _Domain("base", lambda lo, hi: lo < -_rounding(lo), lambda v: v,
                    "a negative base, where sqrt and a power with a fractional or variable "
                    "exponent have no real value (and the Pyomo model keeps such a base >= 0)",
                    strict=False),
    "acos": _Domain("acos argument",
                    lambda lo, hi: (lo < -1.0 - _rounding(lo)) | (hi > 1.0 + _rounding(hi)),
                    lambda v: 1.0 - np.abs(v), "no real value", strict=False),
    "exp": _Domain("exp argument", lambda lo, hi: hi >= EXP_LIMIT, lambda v: EXP_LIMIT - v,
                   "an overflow to inf"),
}


def _guards(program: Program) -> list[tuple[Node, _Domain]]:
    """(expression, domain) pairs each non-constant expression must keep inside on the box:
    denominators (nonzero), log arguments (positive), the bases of sqrt and of powers whose
    exponent is fractional or not constant (nonnegative: numpy's nan, and the Pyomo model
    bounds such a base below by 0, so SCIP searched only part of the box), acos arguments
    (within [-1, 1]) and exp arguments (below EXP_LIMIT); each once."""
    found: dict[Node, _Domain] = {}
    for node in program_nodes(program):
        den = _denominator(node, program)
        if den is not None and (den.op != "num" or den.value == 0.0):  # 0.0 ** (x - 1)
            found.setdefault(den, _DOMAINS["denominator"])
        arg = node.args[0] if node.args else None
        if arg is None or arg.op == "num":
            continue
        if node.op == "log":
            found[arg] = _DOMAINS["log"]
        elif node.op == "sqrt" or node.op == "pow" and _real_power_only(program,
                                                                         node.args[1]):
            found.setdefault(arg, _DOMAINS["root"])
        elif node.op in ("acos", "exp"):
            found.setdefault(arg, _DOMAINS[node.op])
    return list(found.items())


def _real_power_only(program: Program, exponent: Node) -> bool:
    """Whether `base ** exponent` has a real value only for a base >= 0: an exponent that
    is not a whole-number constant (or a vector of them; `abs(2.0)` and `1.0 + 1.0` are
    constants too, which the Pyomo model folds)."""
    value = constant_value(program, exponent)
    return value is None or not bool(np.all(value == np.round(value)))


def _reject_guards_outside_domains(program: Program) -> None:
    """Reject a program with a guard (`_guards`: a denominator, a log, sqrt, acos or exp
    argument, a power's base) that leaves its domain on the box.

    Sample points miss a pole the function only touches (1 / (x[0] - 0.3) ** 2), or a nan
    in a narrow well (sqrt((x[0] - 0.3) ** 2 - 1e-12)), so each such expression must be
    proven inside by interval bounds, splitting the box where they still leave it open
    (PROOF_BOXES boxes at most). One that cannot be proven is rejected, naming the value
    closest to leaving seen: the rule is conservative. Expressions using floor are exempt
    where unproven: near a jump of floor the bounds of adjacent steps merge, so a proof can
    fail for a denominator that never vanishes.
    """
    from coplug.formulations.bbo.intervals import IntervalEvaluator, LetTable

    with_floor = _lets_using_floor(program)
    be = Backend("numpy")
    table = LetTable.of(program)
    box = np.full((1, program.dim), program.lower), np.full((1, program.dim), program.upper)
    shared = _Shared(table, IntervalEvaluator(program, *box, table, shared=True), {})
    for guard, domain in _guards(program):
        failure = _outside(program, guard, domain, be, shared)
        if failure is None or (failure[0] == "unproven" and _uses_floor(guard, with_floor)):
            continue
        outcome, value, where = failure
        point = np.round(where, 6).tolist()
        if outcome == "outside":
            shown = f"reaches {value:.3g}" if np.isfinite(value) else "is not finite"
            raise ProgramError("non_finite", f"the {domain.what} {node_text(guard)[:80]} "
                               f"{shown} at x={point} on the box, so the program has "
                               f"{domain.outside} there")
        raise ProgramError("non_finite", f"the {domain.what} {node_text(guard)[:80]} cannot "
                           "be shown to keep inside its domain on the box (interval bounds "
                           f"leave it open; its value {value:.3g} near x={point} is the "
                           f"closest seen), so the program may have {domain.outside} there")


@dataclass
class _Shared:
    """What the guards of one program share: its let table, interval bounds on the whole
    box (the first step of every proof) and compiled closures, so that guards nested around
    one subtree do not each redo it."""

    table: LetTable
    whole_box: IntervalEvaluator
    closures: dict[int, Closure]


def _outside(program: Program, guard: Node, domain: _Domain, be: Backend,
             shared: _Shared) -> tuple[str, float, np.ndarray] | None:
    """None when interval bounds prove the guard inside `domain` on the whole box; else
    ('outside' | 'unproven', the value closest to leaving it, where) from a branch and
    bound. Only the lets the guard uses are compiled and evaluated (all of them for each
    guard made a program of 1000 independent lines take 39 s)."""
    from coplug.formulations.bbo.intervals import IntervalEvaluator, lets_needed, variables_of

    table = shared.table
    dims = variables_of(program, guard, table)
    lower = np.full((1, program.dim), program.lower)
    upper = np.full((1, program.dim), program.upper)
    evaluate = closure(guard, be, shared.closures)
    lets = [(name, closure(table.nodes[name], be, shared.closures))
            for name in lets_needed(table, guard)]
    if not dims:  # a constant, (1.0 - 1.0) unfolded: its value decides
        values = _guard_values(evaluate, lets, lower)
        score = float(np.min(domain.score(values)))
        bad = not np.isfinite(score) or score < 0.0 or domain.strict and score == 0.0
        return ("outside", float(values.ravel()[0]), lower[0]) if bad else None
    best, value, where, used = np.inf, np.nan, lower[0], 0
    limit = _box_limit(program, [name for name, _ in lets], len(dims) == program.dim)
    span = program.upper - program.lower
    evaluator = shared.whole_box
    while True:
        lo, hi = evaluator.bounds(guard)
        open_ = domain.open_(lo, hi)
        keep = np.broadcast_to(open_, (len(lower), open_.shape[-1])).any(axis=1)
        if not keep.any():
            return None
        lower, upper = lower[keep], upper[keep]
        middle = 0.5 * (lower + upper)
        values = _guard_values(evaluate, lets, middle)
        scores = np.where(np.isfinite(values), domain.score(values), -np.inf)
        k, column = np.unravel_index(int(np.argmin(scores)), scores.shape)
        if scores[k, column] < best:
            best, value, where = float(scores[k, column]), float(values[k, column]), middle[k]
        if best < 0.0 or domain.strict and best <= 0.0:
            return "outside", value, where
        used += len(lower)
        widths = (upper - lower)[:, dims]
        if used > limit or widths.max() <= ZERO_WIDTH * span:
            return "unproven", value, where
        lower, upper = _bisect(lower, upper, dims, widths)
        evaluator = IntervalEvaluator(program, lower, upper, table)


def _box_limit(program: Program, lets: list[str], whole: bool) -> int:
    """How many boxes a proof over the guard that uses `lets` (and the whole vector x, where
    `whole`) may split into: PROOF_BOXES, fewer where the boxes' bounds or the guard's vector
    values are wide arrays (a guard over x[0] and x[1] alone keeps 4,096 to dim 8,192)."""
    vectors = _vector_lets(program, lets) + whole
    limit = min(PROOF_BOXES, PROOF_BOX_NUMBERS // program.dim)
    if vectors and program.dim > 1:
        limit = min(limit, PROOF_VECTOR_NUMBERS // (program.dim * vectors))
    return max(PROOF_MIN_BOXES, limit)


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


# An exponent whose interval lower bound lies less than NEGATIVE_EXPONENT_ULPS ulps (of the
# bounds' size) below 0 counts as >= 0: bounds are rounded outward, so an exponent reaching
# exactly 0 (x / 5 + 1 on [-5, 5]) has a lower bound a few ulps below 0, and 0 ** 0 = 1 is
# no pole. A fixed 1e-9 took abs(x[0] - 0.3) ** (0 * x[1] - 1e-10), infinite at x[0] = 0.3,
# as safe.
NEGATIVE_EXPONENT_ULPS = 64


def _can_be_negative(program: Program, node: Node) -> bool:
    """Whether interval bounds leave room for the expression below 0 somewhere on the box."""
    from coplug.formulations.bbo.intervals import IntervalEvaluator

    lower = np.full((1, program.dim), program.lower)
    upper = np.full((1, program.dim), program.upper)
    low, high = IntervalEvaluator(program, lower, upper).bounds(node)
    low, size = float(np.min(low)), float(np.max(np.abs([low, high]), initial=1.0))
    return bool(low < -NEGATIVE_EXPONENT_ULPS * np.finfo(float).eps * size)


def program_nodes(program: Program) -> list[Node]:
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
