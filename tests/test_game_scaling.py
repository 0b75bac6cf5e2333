"""The compiled game (sparse slack Jacobian, per-player barrier utilities) agrees with a plain
dense sympy translation of the same Pyomo game, and one player's barrier utility reads only
that player's expressions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
import pytest
import sympy
from pyomo.core.expr.sympy_tools import Pyomo2SympyVisitor, PyomoSympyBimap

from coplug.formulations.game_solvers import CompiledGame, compile_game
from coplug.formulations.games import Game, cournot, network_flow, resource_allocation

RTOL = 1e-12
MU = 1e-2


@dataclass
class Reference:
    """Dense numpy functions of a game, straight from sympy: every row differentiated in every
    variable, evaluated with the math module."""

    utilities: Callable[[np.ndarray], np.ndarray]
    utility: list[Callable[[np.ndarray], np.ndarray]]
    own_gradient: Callable[[np.ndarray], np.ndarray]
    slacks: Callable[[np.ndarray], np.ndarray]
    jacobian: Callable[[np.ndarray], np.ndarray]
    involves: np.ndarray
    pattern: set[tuple[int, int]]


def _mixed_game() -> Game:
    """Players with several, one-sided and no bounds, a ranged own constraint, a coupling
    constraint between two of three players, a parent constraint on one player, a fixed
    variable and logs, exponentials, powers and products in the expressions."""
    game = Game("mixed")
    a, b, c = game.add_player("a"), game.add_player("b"), game.add_player("c")
    game.model.w = pyo.Var(initialize=1.5)
    game.model.w.fix()
    a.x = pyo.Var([0, 1], bounds=(0, 4), initialize=0.5)
    b.y = pyo.Var(bounds=(None, 3), initialize=0.5)
    c.z = pyo.Var(initialize=0.5)
    a.utility = pyo.Expression(expr=pyo.log(1 + a.x[0]) + a.x[0] * (a.x[1] + a.x[0]) * b.y
                               - game.model.w * a.x[1] ** 2)
    b.utility = pyo.Expression(expr=b.y * (game.model.w - a.x[0]) - b.y ** 2)
    c.utility = pyo.Expression(expr=-((c.z - a.x[1]) ** 2) + pyo.exp(-c.z))
    a.ranged = pyo.Constraint(expr=pyo.inequality(0.1, a.x[0] + 2 * a.x[1], 5))
    game.model.share = pyo.Constraint(expr=a.x[0] * b.y + a.x[1] <= 6)
    game.model.solo = pyo.Constraint(expr=c.z ** 2 <= 9)
    return game


GAMES = {
    "cournot": cournot,
    "network_flow": network_flow,
    "resource_allocation": resource_allocation,
    "cournot30": lambda: cournot(30, costs=np.linspace(0.5, 1.5, 30), capacity=5.0),
    "mixed": _mixed_game,
}


def _reference(game: Game) -> Reference:
    """Translate the game to sympy expression by expression, in the documented row order."""
    bimap = PyomoSympyBimap()
    visitor = Pyomo2SympyVisitor(bimap)
    variables = [v for p in game.players for v in game.variables(p)]
    owner = [i for i, p in enumerate(game.players) for _ in game.variables(p)]
    symbols = [bimap.getSympySymbol(v) for v in variables]

    def to_sympy(expr: object) -> sympy.Expr:
        result = sympy.sympify(visitor.walk_expression(expr))
        fixed = {s: pyo.value(bimap.getPyomoSymbol(s)) for s in result.free_symbols
                 if s not in symbols}
        return result.subs(fixed)

    utilities = [to_sympy(game.utility(p)) for p in game.players]
    own_gradient = [sympy.diff(utilities[owner[j]], s) for j, s in enumerate(symbols)]
    rows = []
    for con in [c for p in game.players for c in game.own_constraints(p)] + \
            game.coupling_constraints():
        body = to_sympy(con.body)
        if con.has_ub():
            rows.append(pyo.value(con.upper) - body)
        if con.has_lb():
            rows.append(body - pyo.value(con.lower))
    for var, symbol in zip(variables, symbols, strict=True):
        if var.has_lb():
            rows.append(symbol - var.lb)
        if var.has_ub():
            rows.append(var.ub - symbol)
    dense = [[sympy.diff(row, s) for s in symbols] for row in rows]
    involves = np.zeros((len(rows), len(game.players)))
    pattern = set()
    for r, row in enumerate(rows):
        for j, symbol in enumerate(symbols):
            if symbol in row.free_symbols:
                involves[r, owner[j]] = 1.0
                pattern.add((r, j))

    def numeric(exprs: list) -> Callable[[np.ndarray], np.ndarray]:
        function = sympy.lambdify(symbols, exprs, modules="math")
        return lambda x: np.array(function(*x.tolist()), dtype=float).reshape(np.shape(exprs))

    return Reference(numeric(utilities), [numeric([u]) for u in utilities],
                     numeric(own_gradient), numeric(rows), numeric(dense), involves, pattern)


def _interior_points(reference: Reference, start: np.ndarray, count: int,
                     seed: int) -> list[np.ndarray]:
    """Random strictly feasible points: random moves from the (feasible) start, halved until
    every reference slack is positive."""
    rng = np.random.default_rng(seed)
    points = []
    while len(points) < count:
        step = rng.uniform(-1.0, 1.0, start.size) * np.maximum(np.abs(start), 0.2)
        for _ in range(60):
            if (reference.slacks(start + step) > 0).all():
                points.append(start + step)
                break
            step /= 2
    return points


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal to RTOL relative (absolute below 1 in size)."""
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=RTOL)


@pytest.fixture(scope="module", params=list(GAMES))
def setting(request: pytest.FixtureRequest) -> tuple[CompiledGame, Reference, list[np.ndarray]]:
    game = GAMES[request.param]()
    compiled, reference = compile_game(game), _reference(game)
    start = compiled.vector(game.profile())
    return compiled, reference, _interior_points(reference, start, 4, seed=len(start))


def test_compiled_functions_match_dense_sympy(setting: tuple) -> None:
    compiled, reference, points = setting
    np.testing.assert_array_equal(compiled.involves, reference.involves)
    pairs = set(zip(compiled.jacobian_rows.tolist(), compiled.jacobian_cols.tolist(),
                    strict=True))
    assert pairs == reference.pattern
    assert len(pairs) == compiled.jacobian_rows.size
    for x in points:
        slack = reference.slacks(x)
        jacobian = reference.jacobian(x)
        _close(compiled.utilities(x), reference.utilities(x))
        _close(compiled.own_gradient(x), reference.own_gradient(x))
        _close(compiled.slacks(x), slack)
        _close(compiled.slack_jacobian(x), jacobian)
        assert compiled.slack_jacobian(x).shape == (len(compiled.names), x.size)
        _close(compiled.pseudo_gradient(x, MU),
               reference.own_gradient(x) + MU * (jacobian.T @ (1.0 / slack)))


def test_player_barrier_utility_matches_all_players(setting: tuple) -> None:
    compiled, reference, points = setting
    for x in points:
        expected = reference.utilities(x) + MU * (np.log(reference.slacks(x))
                                                  @ reference.involves)
        _close(compiled.barrier_utilities(x, MU), expected)
        for i in range(len(compiled.players)):
            assert compiled.barrier_utility(x, MU, i) == pytest.approx(
                compiled.barrier_utilities(x, MU)[i], rel=RTOL, abs=RTOL)


def test_player_barrier_utility_outside_the_feasible_region(setting: tuple) -> None:
    """Moving one player out of the feasible region (as a too long trial step does) gives that
    player -inf in both evaluations; every other player gets -inf exactly when one of its own
    rows is violated, and otherwise its barrier utility from its own rows."""
    compiled, reference, points = setting
    x = points[0]
    moved = 0
    for i, part in enumerate(compiled.slices):
        for far in (-1e3, 1e3):
            trial = x.copy()
            trial[part] = far
            slack = reference.slacks(trial)
            if (slack > 0).all():
                continue
            moved += 1
            assert np.isneginf(compiled.barrier_utilities(trial, MU)).all()
            assert compiled.barrier_utility(trial, MU, i) == -np.inf
            for j in range(len(compiled.players)):
                mine = reference.involves[:, j] > 0
                value = compiled.barrier_utility(trial, MU, j)
                if (slack[mine] > 0).all():
                    expected = reference.utility[j](trial)[0] + MU * np.log(slack[mine]).sum()
                    assert value == pytest.approx(expected, rel=RTOL, abs=RTOL)
                else:
                    assert value == -np.inf
    assert moved > 0


def test_per_player_evaluation_reads_only_the_players_own_variables() -> None:
    """NaN in the variables a player's utility and rows do not mention leaves its barrier
    utility finite: a trial evaluates that player's expressions only."""
    game = _mixed_game()
    compiled = compile_game(game)
    x = compiled.vector(game.profile())
    c = compiled.players.index("c")
    untouched = x.copy()
    untouched[compiled.slices[compiled.players.index("b")]] = np.nan
    assert np.isfinite(compiled.barrier_utility(untouched, MU, c))
    assert compiled.barrier_utility(untouched, MU, c) == pytest.approx(
        compiled.barrier_utilities(x, MU)[c], rel=RTOL)
    assert np.isneginf(compiled.barrier_utilities(untouched, MU)).all()


def test_jacobian_is_sparse_in_a_large_cournot() -> None:
    """30 firms, one capacity: 30 + 60 derivatives are kept, not 61 x 30, and each firm's
    slacks come from its bounds and the capacity."""
    compiled = compile_game(cournot(30, costs=np.linspace(0.5, 1.5, 30)))
    assert len(compiled.names) == 61
    assert compiled.jacobian_rows.size == 90
    assert all(len(pieces) == 2 for pieces in compiled.player_slacks)
