"""Curvature checks of a game's quadratic parts: the ascent's stationary points are
equilibria only where each utility is concave, and each constraint convex, in the player's
own variables. A utility like (x - 0.4)^2 ran to `converged=True` at a point its player could
improve by 0.2, without a word; `certify` measures such gaps, the ascent cannot."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import (
    DivisionExpression,
    NegationExpression,
    PowExpression,
    ProductExpression,
    SumExpression,
)
from pyomo.core.expr.visitor import identify_variables, polynomial_degree
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.formulations.games import Game
from coplug.plugins.modeldata import SOLVER_INFINITY

# An own-variable Hessian eigenvalue of the wrong sign beyond this share of the largest term
# is curvature, not round-off (see `_own_curvature`).
CURVATURE_TOL = 1e-9
# A Hessian entry below this share of its terms' |coefficient|s before they cancelled is
# what round-off left (0.1 + 0.2 - 0.3 = 5.6e-17): not scaled up to its box.
ROUND_OFF = 1e-12


def curvature_warnings(game: Game) -> list[str]:
    """One message per player utility not concave, and per constraint not convex, in that
    player's own variables, read off their quadratic terms (a player owning a variable of
    another nonlinear part is not checked there)."""
    messages = []
    for player in game.players:
        own = game.variables(player)
        curvature = _own_curvature(_quadratic(game.utility(player)), own)[1]
        if curvature is not None:
            messages.append(f"utility of player {player!r} is not concave in its own variables "
                            f"(own Hessian eigenvalue {curvature:+.3g}): the ascent's "
                            "stationary points need not be equilibria; certify() measures "
                            "the gap")
    for con, player, side, value in _nonconvex_rows(game):
        messages.append(f"constraint {con.name!r} is not convex in the variables of player "
                        f"{player!r} ({side} side, own Hessian eigenvalue {value:+.3g}): its "
                        "feasible set may split, and the ascent stay in one piece; certify() "
                        "measures the gap")
    return messages


def _nonconvex_rows(game: Game) -> Iterator[tuple[Any, str, str, float]]:
    """(constraint, player, side, eigenvalue) for each quadratic row whose body curves the
    wrong way for a side it has: convex needed under an upper side, concave over a lower.
    Each row's body is read once (linear rows, the common case, after one degree walk)."""
    rows = [(con, None) for con in game.coupling_constraints()]
    rows += [(con, player) for player in game.players for con in game.own_constraints(player)]
    for con, only in rows:
        terms = _quadratic(con.body)
        if terms is None:
            continue
        for player in ([only] if only is not None else game.players):
            concave, convex = _own_curvature(terms, game.variables(player))
            if con.has_ub() and concave is not None:
                yield con, player, "upper", concave
            if con.has_lb() and convex is not None:
                yield con, player, "lower", convex


@dataclass
class Terms:
    """An expression's quadratic terms (variable, variable, coefficient), the ids of the
    variables of its other nonlinear parts (no curvature is read for a player owning one),
    its linear coefficients by id(variable), and the expression itself."""

    quadratic: list[tuple[Any, Any, float]]
    others: set[int]
    linear: dict[int, float]
    expr: Any


def _quadratic(expr: Any) -> Terms | None:
    """The quadratic terms of `expr` and the variables of its other nonlinear parts; None
    when it has no curvature (a constant or linear expression). A log term of another
    player's variable had switched the check off for a utility convex in its own."""
    if expr is None or polynomial_degree(expr) in (0, 1):
        return None
    repn = generate_standard_repn(expr, compute_values=True, quadratic=True)
    rest = repn.nonlinear_expr
    others = {id(v) for v in identify_variables(rest, include_fixed=False)} if rest is not None \
        else set()
    linear = {id(var): float(coef)
              for var, coef in zip(repn.linear_vars, repn.linear_coefs, strict=True)}
    return Terms([(a, b, float(coef))
                  for (a, b), coef in zip(repn.quadratic_vars, repn.quadratic_coefs,
                                          strict=True)], others, linear, expr)


def _own_curvature(terms: Terms | None, own: Sequence[Any]
                   ) -> tuple[float | None, float | None]:
    """The own-variable Hessian's smallest eigenvalue where negative and its largest where
    positive, beyond round-off (one eigvalsh for both sides of a ranged row); (None, None)
    without quadratic terms in `own`, or where another nonlinear part uses one of them.

    A wrong sign counts when it does in the Hessian as written (beyond CURVATURE_TOL of its
    largest entry, at least 1), or in the variables scaled to their boxes (beyond
    CURVATURE_TOL of the largest scaled quadratic or linear term): 1e-10 x^2 over
    [0, 1e7] is worth 1e4 there. Before a sign is taken from the scaled test alone, entries
    left by cancelling terms (see `_cancelled`) are set to zero: the 5.6e-17 that
    0.1 + 0.2 - 0.3 leaves in front of x^2 had grown past any tolerance on a box of 1e7.
    """
    if terms is None or any(id(var) in terms.others for var in own):
        return None, None
    hessian = _own_hessian(terms.quadratic, own)
    if hessian is None:
        return None, None
    eigenvalues = np.linalg.eigvalsh(hessian)
    plain = CURVATURE_TOL * max(1.0, float(np.abs(hessian).max()))
    smallest, largest = float(eigenvalues[0]), float(eigenvalues[-1])
    concave, convex = smallest < -plain, largest > plain
    if not (concave and convex):
        low, high = _boxed_signs(hessian, terms, own)
        if (low and not concave) or (high and not convex):
            low, high = _boxed_signs(_cancelled(hessian, terms.expr, own), terms, own)
        concave, convex = concave or low, convex or high
    return smallest if concave else None, largest if convex else None


def _boxed_signs(hessian: np.ndarray, terms: Terms, own: Sequence[Any]) -> tuple[bool, bool]:
    """Whether `hessian`, in the variables scaled to their boxes, has a negative and a
    positive eigenvalue beyond CURVATURE_TOL of the largest scaled quadratic or linear
    term (past float's range: neither, the plain test alone decides)."""
    spans = _spans(own)
    with np.errstate(over="ignore", invalid="ignore"):
        weighted = hessian * np.outer(spans, spans)
        linear = np.array([abs(terms.linear.get(id(var), 0.0)) for var in own]) * spans
    if not (np.isfinite(weighted).all() and np.isfinite(linear).all()) or not weighted.any():
        return False, False
    scaled = np.linalg.eigvalsh(weighted)
    tolerance = CURVATURE_TOL * max(float(np.abs(weighted).max()), float(linear.max()))
    return bool(scaled[0] < -tolerance), bool(scaled[-1] > tolerance)


def _cancelled(hessian: np.ndarray, expr: Any, own: Sequence[Any]) -> np.ndarray:
    """`hessian` with each entry at or below ROUND_OFF of the size its terms had before
    they cancelled set to 0. Pyomo's standard form keeps only their sum (0.1 + 0.2 - 0.3 =
    5.6e-17 in front of x^2), whose size alone cannot tell round-off from a small
    coefficient; `_sizes` reads the sizes off the expression. Where it cannot (a nonlinear
    part), the entries stay."""
    sizes = _sizes(expr)
    if sizes is None:
        return hessian
    index = {id(var): k for k, var in enumerate(own)}
    magnitude = np.zeros_like(hessian)
    for key, size in sizes.items():
        if len(key) == 2:
            _add_term(magnitude, index, key[0], key[1], size)
    return np.where(np.abs(hessian) > ROUND_OFF * magnitude, hessian, 0.0)


# a polynomial of degree <= 2 as {(): constant, (id,): coefficient, (id, id): coefficient}
Sizes = dict[tuple[int, ...], float]


def _sizes(expr: Any) -> Sizes | None:
    """The polynomial `expr` with every coefficient replaced by the sum of the sizes of the
    terms that make it up, before any cancels: |a + b| -> |a| + |b|, |a b| -> |a| |b|, and so
    on through negations, divisions by constants and squares; None for anything else."""
    if not hasattr(expr, "is_potentially_variable") or not expr.is_potentially_variable() \
            or expr.is_fixed():
        constant = pyo.value(expr, exception=False)
        return None if constant is None else {(): abs(float(constant))}
    if expr.is_named_expression_type():
        return _sizes(expr.expr)
    if expr.is_variable_type():
        return {(id(expr),): 1.0}
    parts = [_sizes(arg) for arg in getattr(expr, "args", ())]
    if any(part is None for part in parts):
        return None
    if isinstance(expr, SumExpression):
        return _plus(parts)
    if isinstance(expr, NegationExpression):
        return parts[0]
    if isinstance(expr, ProductExpression):
        return _times(parts[0], parts[1])
    if isinstance(expr, DivisionExpression) and list(parts[1]) == [()] and parts[1][()] > 0:
        return {key: size / parts[1][()] for key, size in parts[0].items()}
    if isinstance(expr, PowExpression) and parts[1] in ({(): 1.0}, {(): 2.0}):
        return parts[0] if parts[1][()] == 1.0 else _times(parts[0], parts[0])
    return None


def _plus(parts: list[Sizes]) -> Sizes:
    """The sum of polynomials of sizes."""
    total: Sizes = {}
    for part in parts:
        for key, size in part.items():
            total[key] = total.get(key, 0.0) + size
    return total


def _times(a: Sizes | None, b: Sizes | None) -> Sizes | None:
    """The product of two polynomials of sizes; None past degree 2."""
    if a is None or b is None:
        return None
    product: Sizes = {}
    for key_a, size_a in a.items():
        for key_b, size_b in b.items():
            key = tuple(sorted(key_a + key_b))
            if len(key) > 2:
                return None
            product[key] = product.get(key, 0.0) + size_a * size_b
    return product


def _spans(own: Sequence[Any]) -> np.ndarray:
    """Each variable's box width (1 where a bound is missing, or past 1e20 as the solvers
    read it): a curvature's effect on the utility grows with the square of the range its
    variable moves over. The eigenvalues of the Hessian so scaled have the signs of its own
    (Sylvester's law of inertia)."""
    spans = np.ones(len(own))
    for k, var in enumerate(own):
        lower, upper = var.lb, var.ub
        if lower is not None and upper is not None and 0 < upper - lower < SOLVER_INFINITY:
            spans[k] = float(upper - lower)
    return spans


def _own_hessian(terms: list[tuple[Any, Any, float]], own: Sequence[Any]) -> np.ndarray | None:
    """The Hessian of the quadratic `terms` in the variables `own` (others held fixed: a
    term with another player's variable is linear in these), None when none is quadratic
    in them."""
    index = {id(var): k for k, var in enumerate(own)}
    hessian = np.zeros((len(own), len(own)))
    for a, b, coef in terms:
        _add_term(hessian, index, id(a), id(b), coef)
    return hessian if hessian.any() else None


def _add_term(hessian: np.ndarray, index: dict[int, int], a: int, b: int, coef: float) -> None:
    """Add the Hessian of coef * a * b, for the variables of ids `a` and `b`, in the
    variables `index` numbers by id (nothing when a or b is not one of them: the term is
    linear there)."""
    i, j = index.get(a), index.get(b)
    if i is not None and j is not None:
        hessian[i, j] += coef
        hessian[j, i] += coef
