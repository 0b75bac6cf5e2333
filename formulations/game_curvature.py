"""Curvature checks of a game's quadratic parts: the ascent's stationary points are
equilibria only where each utility is concave, and each constraint convex, in the player's
own variables. A utility like (x - 0.4)^2 ran to `converged=True` at a point its player could
improve by 0.2, without a word; `certify` measures such gaps, the ascent cannot."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from pyomo.core.expr.visitor import identify_variables, polynomial_degree
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.formulations.games import Game
from coplug.plugins.modeldata import SOLVER_INFINITY

# An own-variable Hessian eigenvalue of the wrong sign beyond this share of the largest term
# is curvature, not round-off (see `_own_curvature`).
CURVATURE_TOL = 1e-9
# A Hessian entry below this share of the expression's largest coefficient may be what
# cancelling terms leave (0.1 + 0.2 - 0.3 = 5.6e-17): not scaled up to its box.
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


# (variable, variable, coefficient) of each x_a * x_b, the ids of the variables in the rest
# (not quadratic: no curvature is read for a player owning one of them), and id(variable)
# -> coefficient of the linear terms
Terms = tuple[list[tuple[Any, Any, float]], set[int], dict[int, float]]


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
    return ([(a, b, float(coef))
             for (a, b), coef in zip(repn.quadratic_vars, repn.quadratic_coefs, strict=True)],
            others, linear)


def _own_curvature(terms: Terms | None, own: Sequence[Any]
                   ) -> tuple[float | None, float | None]:
    """The own-variable Hessian's smallest eigenvalue where negative and its largest where
    positive, beyond round-off (one eigvalsh for both sides of a ranged row); (None, None)
    without quadratic terms in `own`, or where another nonlinear part uses one of them.

    A wrong sign counts when it does in the Hessian as written (beyond CURVATURE_TOL of its
    largest entry, at least 1), or in the variables scaled to their boxes (beyond
    CURVATURE_TOL of the largest scaled quadratic or linear term): 1e-10 x^2 over
    [0, 1e7] is worth 1e4 there. The scaled test leaves out entries below ROUND_OFF of the
    largest coefficient of a term in `own`: the 5.6e-17 that 0.1 + 0.2 - 0.3 leaves in
    front of x^2 beside -x had grown past any tolerance on a box of 1e7.
    """
    if terms is None or any(id(var) in terms[1] for var in own):
        return None, None
    hessian = _own_hessian(terms[0], own)
    if hessian is None:
        return None, None
    eigenvalues = np.linalg.eigvalsh(hessian)
    plain = CURVATURE_TOL * max(1.0, float(np.abs(hessian).max()))
    spans = _spans(own)
    written = np.where(np.abs(hessian) > ROUND_OFF * _coefficient_scale(terms, own), hessian,
                       0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        weighted = written * np.outer(spans, spans)
        linear = np.array([abs(terms[2].get(id(var), 0.0)) for var in own]) * spans
    if np.isfinite(weighted).all() and np.isfinite(linear).all():
        scaled = np.linalg.eigvalsh(weighted)
        boxed = CURVATURE_TOL * max(float(np.abs(weighted).max()), float(linear.max()))
    else:  # past float's range: the plain test alone
        scaled, boxed = np.zeros(2), math.inf
    smallest, largest = float(eigenvalues[0]), float(eigenvalues[-1])
    return (smallest if smallest < -plain or scaled[0] < -boxed else None,
            largest if largest > plain or scaled[-1] > boxed else None)


def _coefficient_scale(terms: Terms, own: Sequence[Any]) -> float:
    """The largest |coefficient| of the expression's terms in `own` variables (linear, and
    quadratic with one or both in `own`): the size their round-off is relative to (another
    player's large term had hidden 1e-10 x^2 on a wide box)."""
    ids = {id(var) for var in own}
    quadratic = [abs(coef) for a, b, coef in terms[0] if id(a) in ids or id(b) in ids]
    linear = [abs(coef) for key, coef in terms[2].items() if key in ids]
    return max([*quadratic, *linear, 0.0])


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
        i, j = index.get(id(a)), index.get(id(b))
        if i is not None and j is not None:
            hessian[i, j] += coef
            hessian[j, i] += coef
    return hessian if hessian.any() else None
