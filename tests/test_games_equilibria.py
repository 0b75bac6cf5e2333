"""Constrained concave games: barrier ascent reaches the equilibrium, the certifier is honest."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.game_solvers import (
    barrier_gradient_ascent,
    certify,
    compile_game,
    max_violation,
)
from coplug.formulations.games import (
    Game,
    cournot,
    cournot_equilibrium,
    network_flow,
    resource_allocation,
)
from coplug.plugins.errors import InputError, UnsupportedModelError


@pytest.mark.parametrize("capacity", [5.0, 10.0])
def test_symmetric_cournot_converges_to_closed_form(capacity: float) -> None:
    game = cournot(n_firms=3, intercept=10.0, slope=1.0, costs=1.0, capacity=capacity)
    result = barrier_gradient_ascent(game, mu=1e-6)
    expected = cournot_equilibrium(3, 10.0, 1.0, 1.0, capacity)
    assert result.converged
    assert result.min_slack > 0
    for quantities in result.profile.values():
        assert quantities[0] == pytest.approx(expected, abs=1e-4)
    assert certify(game).epsilon < 1e-4


def test_certifier_gap_large_off_equilibrium_small_at_equilibrium() -> None:
    game = cournot(n_firms=3, intercept=10.0, slope=1.0, costs=1.0, capacity=5.0)
    # Others at 0.5: firm 0 earns q (8 - q) - ... best response q = 4 (capacity left 4): 16.
    off = certify(game, {"firm0": [0.5], "firm1": [0.5], "firm2": [0.5]})
    assert off.best_values["firm0"] == pytest.approx(16.0, abs=1e-6)
    assert off.gaps["firm0"] == pytest.approx(16.0 - 0.5 * (10 - 1.5) + 0.5, abs=1e-6)
    assert off.epsilon > 1.0
    q = cournot_equilibrium(3, 10.0, 1.0, 1.0, 5.0)
    at = certify(game, {f"firm{i}": [q] for i in range(3)})
    assert at.epsilon < 1e-6
    assert all(status == "optimal" for status in at.statuses.values())


def test_infeasible_or_boundary_start_is_rejected() -> None:
    game = cournot(n_firms=3, capacity=5.0)
    with pytest.raises(InputError, match="infeasible start: capacity"):
        barrier_gradient_ascent(game, start={"firm0": [3], "firm1": [3], "firm2": [3]})
    with pytest.raises(InputError, match="infeasible start"):
        barrier_gradient_ascent(game, start={"firm0": [0], "firm1": [1], "firm2": [1]})
    with pytest.raises(InputError, match="no values for player 'firm2'"):
        barrier_gradient_ascent(game, start={"firm0": [1], "firm1": [1]})
    with pytest.raises(InputError, match="profile is infeasible"):
        certify(game, {"firm0": [3], "firm1": [3], "firm2": [3]})


def test_nonconvex_coupling_iterates_stay_feasible_and_certifier_matches_grid() -> None:
    game = resource_allocation()
    result = barrier_gradient_ascent(game, mu=1e-3, max_iter=300, keep_iterates=True)
    assert result.min_slack > 0
    compiled = compile_game(game)
    for x in result.iterates[:: max(1, len(result.iterates) // 50)] + [result.x]:
        game.set_profile(compiled.profile(x))
        assert max_violation(game)[0] <= 0.0
    game.set_profile(result.profile)
    certificate = certify(game)
    x = {p: float(v[0]) for p, v in result.profile.items()}
    weights = (3.0, 2.0, 1.5)
    grid = np.linspace(0, 10, 200_001)
    for i, player in enumerate(game.players):
        others = [x[p] for p in game.players if p != player]
        used = grid + sum(others) + 0.5 * (grid * sum(others) + others[0] * others[1])
        utility = weights[i] * np.log1p(grid) - 0.1 * grid
        assert certificate.best_values[player] == pytest.approx(
            utility[used <= 4.0].max(), abs=1e-4
        )


def test_network_flow_and_resource_allocation_certified() -> None:
    for game, mu in ((network_flow(), 1e-5), (resource_allocation(), 1e-5)):
        result = barrier_gradient_ascent(game, mu=mu, max_iter=3000)
        assert result.min_slack > 0
        assert certify(game).epsilon < 1e-3


def test_game_written_by_hand_and_bad_games() -> None:
    game = Game("two")
    a, b = game.add_player("a"), game.add_player("b")
    a.x = pyo.Var(bounds=(0, 4), initialize=1.0)
    b.y = pyo.Var(bounds=(0, 4), initialize=1.0)
    a.utility = pyo.Expression(expr=-((a.x - 3) ** 2))
    b.utility = pyo.Expression(expr=-((b.y - 3) ** 2))
    game.model.share = pyo.Constraint(expr=a.x + b.y <= 4)
    result = barrier_gradient_ascent(game, mu=1e-7)
    assert result.profile["a"][0] == pytest.approx(2.0, abs=1e-3)
    assert certify(game).epsilon < 1e-5
    game.model.fixed_sum = pyo.Constraint(expr=a.x + b.y == 3)
    with pytest.raises(UnsupportedModelError, match="equality constraint 'fixed_sum'"):
        compile_game(game)
    game.model.fixed_sum.deactivate()
    del b.utility
    with pytest.raises(InputError, match="player 'b' has no component named 'utility'"):
        compile_game(game)
    with pytest.raises(InputError, match="new Python identifier"):
        game.add_player("a")


def test_cli_game_prints_certified_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    from coplug.plugins.cli import main

    assert main(["game", "cournot", "--mu", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert float(out.split("certified epsilon ")[1].split()[0]) < 1e-4
