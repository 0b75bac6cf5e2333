"""Probe fixes (session 23) in fair clustering, games and benchmark evolution: inputs named
up front, a certifier refused before the ascent, and counts that add up."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations import games_cli
from coplug.formulations.bbo import bbob_problem
from coplug.formulations.bbo.proposers import Scored, SymbolicProposer
from coplug.formulations.bbo.validate import load
from coplug.formulations.fair_graphs import fair_communities, fair_sbm
from coplug.formulations.game_solvers import barrier_gradient_ascent, certify
from coplug.formulations.games import Game, cournot
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


@pytest.mark.parametrize(("args", "kwargs", "named"), [
    ((100.5, 2), {}, "n must be"), ((100, 2.5), {}, "n_clusters must be"),
    ((100, 2, 2.0), {}, "n_groups must be"), ((100, 2), {"seed": -1}, "seed must be"),
])
def test_fair_sbm_names_a_bad_argument(args, kwargs, named):
    with pytest.raises(InputError, match=named):
        fair_sbm(*args, **kwargs)


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"size": 6.0}, "size must be"), ({"p_in": 2}, "p_in must be"),
    ({"p_in": float("nan")}, "p_in must be"), ({"seed": -1}, "seed must be")])
def test_fair_communities_names_a_bad_argument(kwargs, named):
    """p_in = 2 and NaN were taken silently."""
    with pytest.raises(InputError, match=named):
        fair_communities(**kwargs)


def test_fairsc_refuses_a_seed_the_methods_cannot_take(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fairsc", "--n", "60", "--clusters", "2", "--seed", str(2**32)])
    assert stop.value.code == 2 and "--seed: must be an integer in [0, 2**32)" in \
        capsys.readouterr().err


def test_a_highs_certifier_is_refused_before_the_ascent(monkeypatch, capsys):
    """The CLI ran a 5 s ascent, then HiGHS refused the utility."""
    def never(*_args, **_kwargs):
        raise AssertionError("the ascent ran")

    monkeypatch.setattr(games_cli, "barrier_gradient_ascent", never)
    assert main(["game", "resource_allocation", "--solver", "highs"]) == 2
    assert "HiGHS cannot take the utility of player" in capsys.readouterr().err


def test_highs_still_certifies_a_quadratic_game():
    game = cournot()
    barrier_gradient_ascent(game, mu=1e-6)
    assert certify(game, solver="highs").epsilon < 1e-4


@pytest.mark.parametrize(("start", "message"), [
    ([1, 1, 1], "must map each player"),
    ({"firm0": "a", "firm1": 1, "firm2": 1}, "start values of player 'firm0' must be numbers"),
    ({"firm0": .1, "firm1": .1, "firm2": .1, "typo": 5}, "names 'typo', not a player"),
])
def test_a_bad_start_profile_is_named(start, message):
    with pytest.raises(InputError, match=message):
        barrier_gradient_ascent(cournot(), start=start)


def test_a_var_as_utility_is_refused():
    """It became a decision variable, and the game 'looked unbounded'."""
    game = Game()
    player = game.add_player("a")
    player.x = pyo.Var(bounds=(0, 1), initialize=0.5)
    player.utility = pyo.Var(initialize=0.0)
    with pytest.raises(InputError, match="is a pyo.Var"):
        barrier_gradient_ascent(game)


def test_bbob_takes_numpy_integers_and_refuses_floats_and_bools():
    assert bbob_problem(3, np.int64(3)).fid == 3
    for fid, dim in ((15.0, 2), (True, 2), (1, 2.0), (1, True)):
        with pytest.raises(InputError, match="BBOB"):
            bbob_problem(fid, dim)


def test_accepted_counts_only_the_children_kept():
    """A child equal to its parent was counted accepted, then dropped (9 for 8 kept)."""
    proposer = SymbolicProposer(2, crossover_rate=0.0)
    parent = Scored(load("sum(x ** 2)", 2), 0.5, 0.1, "f1", (0.0,) * 7)
    children = proposer.propose([parent], 40, np.random.default_rng(0))
    assert proposer.stats["accepted"] == len(children) - proposer.stats["fallback_random"]
    assert proposer.stats["rejected_parent_copy"] > 0  # the case occurred
