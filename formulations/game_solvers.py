"""Solvers for `Game`: log-barrier gradient ascent to a constrained Nash equilibrium, and a
certifier that bounds each player's best-response gap with SCIP.

The ascent (independent learning, as in the seed result): every player climbs the gradient of
its own utility plus mu * sum log(slack) over the constraints and bounds that involve its
variables. Steps are adaptive per player (grow after success, halve until the point is
strictly feasible and the player's barrier utility rises by an Armijo margin), so no
iterate ever leaves the interior. It stops at a stationary point of this barrier game (a
gradient test, independent of the step sizes). Gradients are exact: the Pyomo expressions
are turned into sympy (Pyomo's own bridge), differentiated once and compiled to numpy. Each
slack row is differentiated only in the variables it contains (a sparse Jacobian), and a
player's trial step evaluates only that player's utility and rows.

The certifier fixes every other player at the profile and solves the player's own problem
through `coplug.plugins.solve` (SCIP handles the nonconvex nonlinear cases); SCIP's dual
bound minus the player's utility is a verified upper bound on what that player can gain.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
import sympy
from pyomo.common.modeling import unique_component_name
from pyomo.core.expr.numeric_expr import Expr_ifExpression
from pyomo.core.expr.sympy_tools import Pyomo2SympyVisitor, PyomoSympyBimap
from pyomo.core.expr.visitor import identify_variables, polynomial_degree

from coplug.formulations.checks import check_choice, require_instance
from coplug.formulations.game_curvature import curvature_warnings
from coplug.formulations.games import Game
from coplug.plugins.arguments import check_flag, detached
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError, UnsupportedModelError
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.value_equality import ValueEquality

# How to make the game the solvers take, for their type errors.
GAME_HINT = ("build one with cournot(...), network_flow(...), resource_allocation(...) or "
             "example(name)")


@dataclass(eq=False)
class CompiledGame(ValueEquality):
    """Numpy callables for a game: utilities, own-variable gradients, slacks and their Jacobian.

    Slack rows are the inequality constraints (s = upper - body or body - lower) followed by
    the finite variable bounds; `involves[r, i]` says whether row r depends on player i. The
    Jacobian is kept sparse: `jacobian_values(x)[k]` is the derivative of row
    `jacobian_rows[k]` in variable `jacobian_cols[k]` (`slack_jacobian` scatters them into the
    dense (m, n) array). For one player's barrier utility at the cost of that player's own
    expressions, `player_utilities[i](x)` is [u_i] and the outputs of the functions
    `player_slacks[i]`, concatenated, are the slacks of the rows involving i (its own rows,
    then each group of rows shared with the same other players, compiled once per group).
    """

    players: list[str]
    slices: list[slice]
    names: list[str]
    utilities: Callable[[np.ndarray], np.ndarray]
    own_gradient: Callable[[np.ndarray], np.ndarray]
    slacks: Callable[[np.ndarray], np.ndarray]
    slack_jacobian: Callable[[np.ndarray], np.ndarray]
    involves: np.ndarray
    jacobian_rows: np.ndarray
    jacobian_cols: np.ndarray
    jacobian_values: Callable[[np.ndarray], np.ndarray]
    player_utilities: list[Callable[[np.ndarray], np.ndarray]]
    player_slacks: list[list[Callable[[np.ndarray], np.ndarray]]]
    variable_names: list[str] = field(default_factory=list)

    def pseudo_gradient(self, x: np.ndarray, mu: float) -> np.ndarray:
        """Each variable's partial derivative of its owner's barrier-regularized utility
        (J^T (1/s) summed over the Jacobian's nonzeros only)."""
        weights = self.jacobian_values(x) * (1.0 / self.slacks(x))[self.jacobian_rows]
        barrier = np.bincount(self.jacobian_cols, weights=weights, minlength=x.size)
        return self.own_gradient(x) + mu * barrier

    def barrier_utilities(self, x: np.ndarray, mu: float) -> np.ndarray:
        """u_i(x) + mu * sum of log slacks of the rows involving player i (-inf outside)."""
        slack = self.slacks(x)
        if not (slack > 0).all():
            return np.full(len(self.players), -np.inf)
        return self.utilities(x) + mu * (np.log(slack) @ self.involves)

    def barrier_utility(self, x: np.ndarray, mu: float, i: int) -> float:
        """Player i's barrier utility from its own expressions only: -inf where a row involving
        i is not strictly positive (u_i is then not evaluated), else barrier_utilities(x, mu)[i]
        up to rounding wherever the other rows are strictly feasible, as on every trial step."""
        slack = np.concatenate([piece(x) for piece in self.player_slacks[i]])
        if not (slack > 0).all():
            return -np.inf
        return float(self.player_utilities[i](x)[0] + mu * np.log(slack).sum())

    def vector(self, profile: Mapping[str, Any]) -> np.ndarray:
        """Concatenate a {player: values} profile in variable order."""
        if not isinstance(profile, Mapping):
            raise InputError(f"the start profile must map each player to its values, got "
                             f"{type(profile).__name__}")
        unknown = [p for p in profile if p not in self.players]
        if unknown:
            raise InputError(f"the start profile names {unknown[0]!r}, not a player "
                             f"({', '.join(self.players)})")
        missing = [p for p in self.players if p not in profile]
        if missing:
            raise InputError(f"the start profile has no values for player {missing[0]!r}")
        parts = []
        for player, part in zip(self.players, self.slices, strict=True):
            given = detached(profile[player], f"the start values of player {player!r}")
            try:
                values = np.asarray(given, dtype=float).ravel()
            except (TypeError, ValueError):
                raise InputError(f"the start values of player {player!r} must be numbers, "
                                 f"got {profile[player]!r}") from None
            if values.size != part.stop - part.start:
                raise InputError(f"player {player!r} needs {part.stop - part.start} values, "
                                 f"got {values.size}")
            parts.append(values)
        return np.concatenate(parts)

    def profile(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Split a variable vector into a {player: values} profile."""
        return {p: x[s].copy() for p, s in zip(self.players, self.slices, strict=True)}


def compile_game(game: Game) -> CompiledGame:
    """Translate the Pyomo game into compiled numpy functions (exact derivatives via sympy)."""
    require_instance(game, Game, "compile_game", GAME_HINT)
    game.validate()
    bimap = PyomoSympyBimap()
    variables, slices, owner = [], [], []
    for index, player in enumerate(game.players):
        own = game.variables(player)
        slices.append(slice(len(variables), len(variables) + len(own)))
        variables.extend(own)
        owner.extend([index] * len(own))
    symbols = [bimap.getSympySymbol(v) for v in variables]
    column = {symbol: j for j, symbol in enumerate(symbols)}
    visitor = Pyomo2SympyVisitor(bimap)

    def to_sympy(expr: Any, where: str) -> sympy.Expr:
        _refuse_piecewise(expr, where)
        try:
            result = sympy.sympify(visitor.walk_expression(expr))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise UnsupportedModelError(
                f"{where} cannot be differentiated exactly (sympy: {type(exc).__name__}: "
                f"{exc})"
            ) from None
        extra = {s: float(pyo.value(bimap.getPyomoSymbol(s))) for s in result.free_symbols
                 if s not in column}
        result = result.subs(extra) if extra else result
        if result.has(sympy.nan, sympy.zoo):  # 0 * x with a NaN Param: sympy folds it to nan
            raise InputError(f"{where} is NaN (a NaN Param or coefficient in it)")
        return result

    utilities = [to_sympy(game.utility(p), f"utility of player {p!r}") for p in game.players]
    own_grad = [_derivative(utilities[owner[j]], symbols[j]) for j in range(len(symbols))]
    rows, names = _slack_rows(game, variables, symbols, to_sympy)
    row_columns = [sorted(column[s] for s in row.free_symbols if s in column) for row in rows]
    jacobian_rows = np.array([r for r, cols in enumerate(row_columns) for _ in cols], dtype=int)
    jacobian_cols = np.array([j for cols in row_columns for j in cols], dtype=int)
    derivatives = [_derivative(rows[r], symbols[j])
                   for r, j in zip(jacobian_rows, jacobian_cols, strict=True)]
    involves = np.zeros((len(rows), len(game.players)))
    groups: dict[frozenset[int], list] = {}
    for r, cols in enumerate(row_columns):
        involves[r, [owner[j] for j in cols]] = 1.0
        groups.setdefault(frozenset(owner[j] for j in cols), []).append(rows[r])
    shared = {group: _partial_function(symbols, column, members)
              for group, members in groups.items() if len(group) > 1}
    player_slacks = [
        [_partial_function(symbols, column, groups.get(frozenset({i}), []))]
        + [function for group, function in shared.items() if i in group]
        for i in range(len(game.players))
    ]
    player_utilities = [_partial_function(symbols, column, [u]) for u in utilities]
    jacobian_values = _vector_function(symbols, derivatives)
    return CompiledGame(
        players=game.players,
        slices=slices,
        names=names,
        utilities=_stacked(player_utilities),
        own_gradient=_vector_function(symbols, own_grad),
        slacks=_vector_function(symbols, rows),
        slack_jacobian=_scatter(jacobian_rows, jacobian_cols, jacobian_values,
                                (len(rows), len(symbols))),
        involves=involves,
        jacobian_rows=jacobian_rows,
        jacobian_cols=jacobian_cols,
        jacobian_values=jacobian_values,
        player_utilities=player_utilities,
        player_slacks=player_slacks,
        variable_names=[v.name for v in variables],
    )


def _slack_rows(game: Game, variables: list, symbols: list,
                to_sympy: Callable[[Any, str], sympy.Expr]) -> tuple[list, list[str]]:
    """The slack expressions (constraints, then finite variable bounds) and their names."""
    rows, names = [], []
    for con in [c for p in game.players for c in game.own_constraints(p)] + \
            game.coupling_constraints():
        if con.equality:
            raise UnsupportedModelError(
                f"equality constraint {con.name!r}: the log-barrier method needs inequalities"
            )
        body = to_sympy(con.body, f"constraint {con.name!r}")
        if con.has_ub():
            rows.append(float(pyo.value(con.upper)) - body)
            names.append(f"{con.name} (upper)")
        if con.has_lb():
            rows.append(body - float(pyo.value(con.lower)))
            names.append(f"{con.name} (lower)")
    for var, symbol in zip(variables, symbols, strict=True):
        if var.has_lb():
            rows.append(symbol - float(pyo.value(var.lb)))
            names.append(f"{var.name} >= {pyo.value(var.lb)}")
        if var.has_ub():
            rows.append(float(pyo.value(var.ub)) - symbol)
            names.append(f"{var.name} <= {pyo.value(var.ub)}")
    return rows, names


def _derivative(expr: sympy.Expr, symbol: sympy.Symbol) -> sympy.Expr:
    """d expr / d symbol (the same expression as sympy.diff), applying the sum and product
    rules only to the terms that contain the symbol: sympy.diff builds a Derivative for every
    term of a sum, n^2 of them for n utilities of a shared total."""
    if not (expr.is_Add or expr.is_Mul):
        return sympy.diff(expr, symbol)
    parts = [(k, _derivative(a, symbol)) for k, a in enumerate(expr.args) if a.has(symbol)]
    if expr.is_Add:
        return sympy.Add(*[d for _, d in parts])
    return sympy.Add(*[sympy.Mul(*expr.args[:k], d, *expr.args[k + 1:]) for k, d in parts])


def _refuse_piecewise(expr: Any, where: str) -> None:
    """Refuse Expr_if (if-then-else) anywhere in an expression: it has no gradient the ascent
    could follow, and sympy cannot even translate its condition."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Expr_ifExpression) and node.is_potentially_variable():
            raise UnsupportedModelError(
                f"{where} uses Expr_if (an if-then-else): the barrier ascent needs "
                "differentiable expressions; write it smoothly or split the cases"
            )
        if getattr(node, "is_expression_type", lambda: False)():
            stack.extend(node.args)


def _vector_function(symbols: list, exprs: list) -> Callable[[np.ndarray], np.ndarray]:
    """A numpy function x -> array of the expressions."""
    if not exprs:
        return lambda x: np.zeros(0)
    compiled = sympy.lambdify(symbols, exprs, modules="numpy", cse=True, docstring_limit=0)
    return lambda x: np.asarray(compiled(*x), dtype=float)


def _partial_function(symbols: list, column: Mapping[Any, int],
                      exprs: list) -> Callable[[np.ndarray], np.ndarray]:
    """A numpy function x -> array of the expressions that reads only the variables they use,
    so its cost is the size of these expressions, not of the whole game."""
    used = sorted({column[s] for e in exprs for s in e.free_symbols if s in column})
    compiled = sympy.lambdify([symbols[j] for j in used], exprs, modules="numpy",
                              docstring_limit=0)
    used_index = np.array(used, dtype=int)
    return lambda x: np.asarray(compiled(*x[used_index]), dtype=float)


def _stacked(functions: list[Callable[[np.ndarray], np.ndarray]]
             ) -> Callable[[np.ndarray], np.ndarray]:
    """A numpy function x -> the outputs of the functions, concatenated."""
    return lambda x: np.concatenate([function(x) for function in functions])


def _scatter(rows: np.ndarray, cols: np.ndarray, values: Callable[[np.ndarray], np.ndarray],
             shape: tuple[int, int]) -> Callable[[np.ndarray], np.ndarray]:
    """A numpy function x -> the dense matrix whose nonzeros values(x) sit at (rows, cols)."""
    def dense(x: np.ndarray) -> np.ndarray:
        matrix = np.zeros(shape)
        matrix[rows, cols] = values(x)
        return matrix
    return dense


# An iterate beyond this size (in any coordinate) means the ascent is running off to infinity:
# barrier_gradient_ascent stops and reports the game as unbounded (keyword divergence_bound).
DIVERGENCE_BOUND = 1e12


@dataclass(eq=False)
class AscentResult(ValueEquality):
    """Where the ascent stopped, how many iterations it took, and the smallest slack seen."""

    profile: dict[str, np.ndarray]
    x: np.ndarray
    iterations: int
    mu: float
    converged: bool
    min_slack: float
    trace: list[dict[str, float]] = field(default_factory=list)
    iterates: list[np.ndarray] = field(default_factory=list)


def _refuse_pinned(game: Game) -> None:
    """InputError for a free variable whose bounds meet: no profile is strictly feasible,
    which the barrier method needs (the start was blamed for it)."""
    for player in game.players:
        for var in game.variables(player):
            if not (var.has_lb() and var.has_ub()):
                continue
            lower, upper = pyo.value(var.lb), pyo.value(var.ub)
            if lower > upper:
                raise InputError(f"{var.name} has lower bound {lower} above its upper bound "
                                 f"{upper}: no profile is feasible")
            if lower == upper:
                raise InputError(f"{var.name} has lower bound {lower} and upper bound {upper}: "
                                 "no profile is strictly feasible for the barrier method; fix "
                                 f"it ({var.name}.fix({lower})) instead, a player keeping at "
                                 "least one free variable")


def barrier_gradient_ascent(
    game: Game,
    start: Mapping[str, Any] | None = None,
    mu: float = 1e-6,
    mu_start: float | None = None,
    mu_decay: float = 0.2,
    tol: float = 1e-5,
    max_iter: int = 50_000,
    update: str = "simultaneous",
    step: float = 1e-2,
    keep_iterates: bool = False,
    callback: Callable[[int, np.ndarray, float], None] | None = None,
    divergence_bound: float = DIVERGENCE_BOUND,
) -> AscentResult:
    """Independent log-barrier gradient ascent from a strictly feasible start.

    `mu` is the barrier weight (the equilibrium gap is about mu times the number of active
    constraints per player), fixed as in the analysed method; `mu_start` > mu instead follows
    the barrier path down from mu_start by factors `mu_decay`. A stage at weight m ends when
    the barrier pseudo-gradient (each variable's partial derivative of its owner's barrier
    utility) is at most `tol * m / mu` in absolute value, so `converged` means the returned
    profile is a stationary point of the barrier game to within `tol`; as mu -> 0 these
    points tend to the variational equilibrium (equal multipliers on shared constraints).
    Reaching it can be slow: along a binding shared constraint on which the players' marginal
    gains differ, every step is capped by the barrier's curvature, so the profile slides along
    the constraint at a speed proportional to mu (about 1/mu iterations; `update="sequential"`
    is several times faster there). `converged=False` says the stationary point was not
    reached within `max_iter`; the profile can still be a good approximate Nash equilibrium,
    which `certify` measures. The game's variables hold the result. An iterate that is
    non-finite or beyond `divergence_bound` in absolute value raises InputError: a utility
    that grows without bound on the feasible set has no equilibrium to reach; so does one
    where a utility is not defined (the others' moves can take a player's log argument
    below 0, where its own steps are all refused).
    """
    require_instance(game, Game, "barrier_gradient_ascent", GAME_HINT)
    _check_ascent_settings(mu, mu_start, mu_decay, tol, max_iter, step, divergence_bound)
    check_choice(update, "update", ("simultaneous", "sequential"))
    keep_iterates = check_flag(keep_iterates, "keep_iterates")
    compiled = compile_game(game)  # names non-finite bounds and sides first
    _refuse_pinned(game)
    for message in curvature_warnings(game):
        warn_at_caller(message)
    x = compiled.vector(start if start is not None else game.profile())
    if not np.isfinite(x).all():
        raise InputError("the start profile has missing or non-finite values")
    slack = compiled.slacks(x)
    if slack.size and slack.min() <= 0:
        worst = int(np.argmin(slack))
        raise InputError(
            f"infeasible start: {compiled.names[worst]} has slack {slack[worst] + 0.0:.3g}; "
            "the barrier method needs a strictly feasible profile"
        )
    _check_defined(compiled, x)
    level = max(mu, mu_start) if mu_start is not None else mu
    eta = np.full(len(compiled.players), float(step))
    damping = [1.0]
    min_slack = float(slack.min(initial=np.inf))
    trace: list[dict[str, float]] = []
    iterates = [x.copy()] if keep_iterates else []
    converged = False
    iteration = 0
    while iteration < max_iter:
        iteration += 1
        if update == "sequential":
            gains = _sequential_step(compiled, x, eta, level)
        else:
            gains = _simultaneous_step(compiled, x, eta, level, damping)
        _check_bounded(compiled, x, iteration, divergence_bound)
        _check_defined(compiled, x, iteration)
        slack = compiled.slacks(x)
        min_slack = min(min_slack, float(slack.min(initial=np.inf)))
        stationarity = float(np.abs(compiled.pseudo_gradient(x, level)).max(initial=0.0))
        trace.append({"iteration": iteration, "mu": level, "gain": float(gains.max()),
                      "stationarity": stationarity,
                      "min_slack": float(slack.min(initial=np.inf))})
        if keep_iterates:
            iterates.append(x.copy())
        if callback is not None:  # a copy: writing into the iterate made it infeasible
            callback(iteration, x.copy(), level)
        if stationarity <= tol * level / mu:
            if level <= mu:
                converged = True
                break
            level = max(mu, level * mu_decay)
    game.set_profile(compiled.profile(x))
    return AscentResult(compiled.profile(x), x, iteration, level, converged, min_slack, trace,
                        iterates)


MU_MAX = 1e100


def _is_number(value: Any) -> bool:
    """A real number (Python or numpy), not a bool."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _check_ascent_settings(mu: Any, mu_start: Any, mu_decay: Any, tol: Any, max_iter: Any,
                           step: Any, divergence_bound: Any) -> None:
    """Refuse settings the ascent cannot use, each named, before any work is done."""
    for name, value in (("mu", mu), ("mu_start", mu_start)):
        if name == "mu_start" and value is None:
            continue
        if not (_is_number(value) and 0 < value <= MU_MAX):
            why = (" (a larger barrier weight overflows the squared gradients)"
                   if _is_number(value) and value > MU_MAX else "")
            raise InputError(f"{name} must be a number in (0, {MU_MAX:g}], got {value!r}{why}")
    checks = (
        ("mu_decay", mu_decay, "a number in (0, 1)", lambda v: 0 < v < 1),
        ("tol", tol, "a finite number > 0", lambda v: 0 < v < math.inf),
        ("step", step, "a finite number > 0", lambda v: 0 < v < math.inf),
        ("divergence_bound", divergence_bound, "a number > 0", lambda v: v > 0),
    )
    for name, value, what, ok in checks:
        if not (_is_number(value) and ok(value)):
            raise InputError(f"{name} must be {what}, got {value!r}")
    if not (isinstance(max_iter, int | np.integer) and not isinstance(max_iter, bool)
            and max_iter >= 1):
        raise InputError(f"max_iter must be an integer >= 1, got {max_iter!r}")


def _check_defined(compiled: CompiledGame, x: np.ndarray, iteration: int = 0) -> None:
    """Refuse a profile where a utility or its gradient is not finite (log(x - 2) at x = 1):
    the ascent stood there for all of max_iter, 45 s at the default, and returned it. At the
    start (`iteration` 0) the start is named; later, the other players' moves that took a
    utility outside its domain (log(x - y + 0.01) once y rose past x)."""
    with np.errstate(all="ignore"):
        utilities, gradient = compiled.utilities(x), compiled.own_gradient(x)
    for i, player in enumerate(compiled.players):
        part = compiled.slices[i]
        if not (np.isfinite(utilities[i]) and np.isfinite(gradient[part]).all()):
            if iteration == 0:
                raise InputError(f"the utility of player {player!r} (or its gradient) is "
                                 "not finite at the start profile: start where every "
                                 "utility is defined")
            raise InputError(f"the utility of player {player!r} (or its gradient) is not "
                             f"finite after iteration {iteration}: the players' moves took "
                             "it outside its domain, which its own steps cannot leave; "
                             "bound the variables (or add a shared constraint) so that "
                             "every utility stays defined on the feasible set")


def _check_bounded(compiled: CompiledGame, x: np.ndarray, iteration: int, bound: float) -> None:
    """Stop a diverging ascent: a non-finite iterate or one beyond `bound` means no equilibrium."""
    bad = ~np.isfinite(x) | (np.abs(x) > bound)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"the game looks unbounded: variable {compiled.variable_names[j]!r} reached "
            f"{x[j]:.3g} after {iteration} iterations (divergence_bound {bound:.3g}); "
            "bound the variable or check that its utility cannot grow without limit"
        )


def _own_step(compiled: CompiledGame, x: np.ndarray, i: int, gradient: np.ndarray,
              eta: float, mu: float) -> tuple[float, float]:
    """Player i's Armijo step along its own barrier gradient (others fixed): (accepted step or
    0, next eta).

    Tries 2 eta, then halves up to 80 times; after a failure the next eta is the last size
    tried, so a badly scaled start keeps shrinking the step over the iterations. Near a
    shared constraint the utility gain of a step can fall below the rounding of the utility;
    there a step is accepted when the player's directional derivative at the trial point
    keeps half its value (for a utility concave in the player's variables this implies the
    Armijo gain), so rounding cannot freeze the ascent.
    """
    part = compiled.slices[i]
    norm2 = float(gradient @ gradient)
    if norm2 == 0.0 or not np.isfinite(norm2):
        return 0.0, eta
    current = compiled.barrier_utility(x, mu, i)
    noise = 64 * np.finfo(float).eps * max(1.0, abs(current))
    size = min(float(eta) * 2.0, np.finfo(float).max)  # 1e308 doubled: inf (a numpy float
    # warned of the overflow), kept finite
    for _ in range(80):
        trial = x.copy()
        trial[part] += size * gradient
        value = compiled.barrier_utility(trial, mu, i)
        if value >= current + 1e-4 * size * norm2:
            return size, size
        if np.isfinite(value) and abs(value - current) <= noise and \
                float(compiled.pseudo_gradient(trial, mu)[part] @ gradient) >= 0.5 * norm2:
            return size, size
        size /= 2.0
    return 0.0, max(size, 1e-300)


def _sequential_step(compiled: CompiledGame, x: np.ndarray, eta: np.ndarray,
                     mu: float) -> np.ndarray:
    """One round: each player in turn takes an Armijo step on its barrier utility (in place).

    Updating players one after another keeps the barrier potential monotone in potential
    games, and each accepted point is strictly feasible by construction.
    """
    gains = np.zeros(len(compiled.players))
    for i, part in enumerate(compiled.slices):
        gradient = compiled.pseudo_gradient(x, mu)[part]
        size, eta[i] = _own_step(compiled, x, i, gradient, eta[i], mu)
        if size > 0.0:
            x[part] += size * gradient
            gains[i] = size * float(gradient @ gradient)
    return gains


def _simultaneous_step(compiled: CompiledGame, x: np.ndarray, eta: np.ndarray,
                       mu: float, damping: list[float]) -> np.ndarray:
    """One round of independent play: every player picks its Armijo step against the current
    profile, all move at once scaled by a shared damping; the damping is halved until the joint
    move is strictly feasible and the pseudo-gradient along the move has not turned by more
    than half (in a potential game: the barrier potential rises, no joint overshoot).

    Returns each player's unilateral predicted gain eta_i ||g_i||^2.
    """
    gradient = compiled.pseudo_gradient(x, mu)
    gains = np.zeros(len(compiled.players))
    steps = np.zeros_like(x)
    for i, part in enumerate(compiled.slices):
        size, eta[i] = _own_step(compiled, x, i, gradient[part], eta[i], mu)
        if size > 0.0:
            gains[i] = size * float(gradient[part] @ gradient[part])
            steps[part] = size
    move = steps * gradient
    slope = float(gradient @ move)
    theta = min(1.0, 2.0 * damping[0])
    for _ in range(80):
        trial = x + theta * move
        slack = compiled.slacks(trial)
        if (not slack.size or slack.min() > 0) and (
            float(compiled.pseudo_gradient(trial, mu) @ move) >= -0.5 * slope
        ):
            x[:] = trial
            break
        theta /= 2.0
    damping[0] = theta
    return gains


@dataclass(eq=False)
class Certificate(ValueEquality):
    """Per player: utility at the profile, SCIP's best response value and dual bound, and the
    verified gap (bound - utility); `epsilon` is the largest gap."""

    utilities: dict[str, float]
    best_values: dict[str, float]
    bounds: dict[str, float]
    gaps: dict[str, float]
    best_responses: dict[str, np.ndarray]
    statuses: dict[str, str]

    @property
    def epsilon(self) -> float:
        """The certified epsilon: max over players of the best-response gap."""
        return max(self.gaps.values())


def _require_values(game: Game) -> None:
    """Every player variable needs a finite value before the profile can be checked."""
    for player in game.players:
        for var in game.variables(player):
            if var.value is None:
                raise InputError(f"variable {var.name!r} has no value: give a profile or "
                                 "initialize it before checking or certifying the game")
            if not math.isfinite(var.value):
                raise InputError(f"variable {var.name!r} has the non-finite value {var.value}")


def max_violation(game: Game) -> tuple[float, str]:
    """Largest constraint or bound violation at the current profile, and where (Pyomo values)."""
    _require_values(game)
    worst, where = 0.0, ""
    for con in game.model.component_data_objects(pyo.Constraint, active=True):
        body = float(pyo.value(con.body))
        for limit, sign in ((con.upper, 1.0), (con.lower, -1.0)):
            if limit is not None and sign * (body - float(pyo.value(limit))) > worst:
                worst, where = sign * (body - float(pyo.value(limit))), con.name
    for player in game.players:
        for var in game.variables(player):
            for limit, sign in ((var.ub, 1.0), (var.lb, -1.0)):
                if limit is not None and sign * (var.value - limit) > worst:
                    worst, where = sign * (var.value - limit), var.name
    return worst, where


def check_certifier(game: Game, solver: str) -> None:
    """Refuse a certifier that cannot take the game before any work: the LAP path takes
    assignment models only (it named the internal 'best_response' objective), HiGHS linear
    constraints and quadratic utilities only (the CLI ran a 5 s ascent first)."""
    if isinstance(solver, str) and solver.lower() == "lap":
        raise InputError("certify solves each player's best response, which no assignment "
                         "model holds: use solver='scip' or solver='highs', not 'lap'")
    if not isinstance(solver, str) or solver.lower() != "highs":
        return
    from coplug.plugins.highs_backend import check_linear_for_highs

    for player in game.players:
        degree = polynomial_degree(game.utility(player))
        if degree is None or degree > 2:
            raise UnsupportedModelError(f"HiGHS cannot take the utility of player {player!r} "
                                        "(not quadratic); use solver='scip'")
    check_linear_for_highs(game.model)


def _restore(game: Game, values: dict[str, list[float | None]]) -> None:
    """Put back the variable values a refused profile replaced (None included)."""
    for player, player_values in values.items():
        for var, value in zip(game.variables(player), player_values, strict=True):
            var.set_value(value, skip_validation=True)


def certify(
    game: Game,
    profile: Mapping[str, Any] | None = None,
    solver: str = "scip",
    time_limit: float | None = 60.0,
    feasibility_tol: float = 1e-9,
) -> Certificate:
    """Best-response gap of every player at `profile` (default: the current values).

    For each player, the others are fixed and the player's own problem (its utility, its
    constraints, the coupling constraints) is solved to proven optimality; a nonlinear
    utility reaches SCIP as an epigraph constraint. The profile must be feasible to within
    `feasibility_tol` (a finite number >= 0: NaN or inf would let any profile through).
    `time_limit` covers all the players' solves together (each gets what is left)."""
    require_instance(game, Game, "certify", GAME_HINT)
    if not (_is_number(feasibility_tol) and 0 <= feasibility_tol < math.inf):
        raise InputError(f"feasibility_tol must be a finite number >= 0, got {feasibility_tol!r}")
    if not isinstance(solver, str):  # solve() names the solvers; an array failed before it
        raise InputError(f"solver must be a name such as 'scip' or 'highs', got {solver!r}")
    time_limit = checked_time_limit(time_limit)
    game.validate()
    check_certifier(game, solver)
    before = {p: [v.value for v in game.variables(p)] for p in game.players}
    if profile is not None:
        game.set_profile(profile)
    try:
        return _certified(game, solver, time_limit, feasibility_tol)
    except BaseException:  # a refused profile (infeasible, a utility undefined) is not kept
        _restore(game, before)
        raise


def _certified(game: Game, solver: str, time_limit: float | None,
               feasibility_tol: float) -> Certificate:
    """The certificate at the game's current profile (see `certify`)."""
    violation, where = max_violation(game)
    if violation > feasibility_tol:
        raise InputError(f"profile is infeasible: {where} is violated by {violation:.3g}")
    from coplug.plugins import solve

    deadline = None if time_limit is None else time.perf_counter() + time_limit
    here = game.utilities()
    values = game.profile()
    result: dict[str, dict[str, Any]] = {k: {} for k in
                                         ("best", "bound", "gap", "response", "status")}
    for player in game.players:
        model = game.model.clone()
        for other in game.players:
            if other != player:
                for var in _block_vars(model.component(other)):
                    var.fix()
        for con in model.component_data_objects(pyo.Constraint, active=True):
            if not any(True for _ in identify_variables(con.body, include_fixed=False)):
                con.deactivate()
        block = model.component(player)
        # a name no component of the game has: a row named best_response was replaced
        model.add_component(unique_component_name(model, "best_response"),
                            pyo.Objective(expr=block.component("utility"), sense=pyo.maximize))
        params = {"limits/gap": 0.0, "limits/absgap": 1e-10} if solver == "scip" else {}
        left = None if deadline is None else max(deadline - time.perf_counter(), MIN_SECONDS)
        outcome = solve(model, solver=solver, time_limit=left, **params)
        best = outcome.objective if outcome.has_solution else math.nan
        bound = outcome.bound if outcome.bound is not None else math.inf
        status = outcome.status.value
        if not outcome.has_solution:
            bound = math.inf
        elif _runs_off(block):  # SCIP stops at its infinity and may call that optimal
            bound, status = math.inf, "unbounded"
        result["best"][player] = float(best)
        result["bound"][player] = float(bound)
        result["gap"][player] = max(float(bound) - here[player], 0.0)
        result["response"][player] = np.array([v.value for v in _block_vars(block)])
        result["status"][player] = status
    game.set_profile(values)
    return Certificate(here, result["best"], result["bound"], result["gap"], result["response"],
                       result["status"])


# A best response with a coordinate this large sits at the solver's infinity (SCIP's
# numerics/hugeval): the player's utility has no maximum, and the gap is infinite.
HUGE_RESPONSE = 1e15
# The least time a player's best-response solve gets once `certify`'s time limit is spent:
# its status then says time_limit for that player (the limit covers all the players).
MIN_SECONDS = 0.01


def _runs_off(block: pyo.Block) -> bool:
    """Whether the solved best response has a coordinate at the solver's infinity."""
    return any(v.value is not None and abs(v.value) >= HUGE_RESPONSE for v in _block_vars(block))


def _block_vars(block: pyo.Block) -> list[Any]:
    """Unfixed variables of a block (the player's decision variables)."""
    return [v for v in block.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
