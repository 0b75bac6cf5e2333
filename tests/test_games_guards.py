"""Games the solvers cannot treat are refused with an error naming the cause: missing values,
integer variables, mismatched Cournot costs and games whose ascent runs off to infinity."""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.game_solvers import barrier_gradient_ascent, certify, max_violation
from coplug.formulations.games import (
    Game,
    cournot,
    default_network,
    network_flow,
    resource_allocation,
)
from coplug.plugins.errors import InputError


def _one_player(domain: object = pyo.Reals, bounds: tuple | None = (0, 4), value=1.0) -> Game:
    game = Game("one")
    block = game.add_player("p")
    block.x = pyo.Var(domain=domain, bounds=bounds, initialize=value)
    block.utility = pyo.Expression(expr=-((block.x - 1.6) ** 2))
    return game


def test_certify_names_a_variable_without_value() -> None:
    game = _one_player(value=None)
    with pytest.raises(InputError, match=r"variable 'p\.x' has no value"):
        max_violation(game)
    with pytest.raises(InputError, match=r"variable 'p\.x' has no value"):
        certify(game)


def test_certify_names_a_variable_with_a_nan_value() -> None:
    game = _one_player()
    with pytest.raises(InputError, match=r"variable 'p\.x' has the non-finite value nan"):
        certify(game, {"p": [np.nan]})


@pytest.mark.parametrize("domain", [pyo.Integers, pyo.Binary, pyo.NonNegativeIntegers])
def test_integer_variables_are_rejected(domain: object) -> None:
    bounds = None if domain is pyo.Binary else (0, 4)
    game = _one_player(domain=domain, bounds=bounds)
    with pytest.raises(InputError, match=r"variable 'p\.x' is not continuous"):
        barrier_gradient_ascent(game, max_iter=10)
    with pytest.raises(InputError, match=r"variable 'p\.x' is not continuous"):
        certify(game)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_firms": 2, "costs": [1, 2, 3]}, "3 costs for 2 firms"),
        ({"n_firms": 3, "costs": [[1, 2, 3]]}, "costs must be one number or one per firm"),
        ({"n_firms": 0}, "n_firms must be an integer >= 1, got 0"),
        ({"n_firms": 2.5}, "n_firms must be an integer >= 1, got 2.5"),
        ({"n_firms": 2, "costs": "a"}, "costs must be a number or one number per firm"),
        ({"n_firms": 2, "slope": "1"}, "slope must be a finite number > 0, got '1'"),
        ({"n_firms": 2, "costs": [1, np.nan]}, "finite"),
        ({"n_firms": 2, "intercept": np.inf}, "finite"),
    ],
)
def test_cournot_checks_its_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        cournot(**kwargs)


def test_cournot_takes_one_cost_per_firm() -> None:
    game = cournot(3, intercept=10.0, slope=1.0, costs=[1.0, 2.0, 3.0])
    game.set_profile({p: [1.0] for p in game.players})
    assert list(game.utilities().values()) == pytest.approx([6.0, 5.0, 4.0])


def test_unbounded_game_is_reported_not_returned() -> None:
    game = Game("unbounded")
    block = game.add_player("p")
    block.x = pyo.Var(domain=pyo.NonNegativeReals, initialize=1.0)
    block.utility = pyo.Expression(expr=block.x)
    with pytest.raises(InputError, match=r"unbounded.*'p\.x'"):
        barrier_gradient_ascent(game, max_iter=50_000)


def test_an_unbounded_best_response_has_an_infinite_gap() -> None:
    """SCIP stops log(1 + x) over x >= 0 at its infinity and calls it optimal; the
    certificate must not turn that into a finite epsilon."""
    game = Game("unbounded")
    player = game.add_player("p")
    player.x = pyo.Var(domain=pyo.NonNegativeReals, initialize=1.0)
    player.utility = pyo.Expression(expr=pyo.log(1 + player.x))
    certificate = certify(game)
    assert certificate.statuses["p"] == "unbounded" and certificate.epsilon == math.inf


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"demands": (("t", "t", 1.0),)}, "starts and ends at 't'"),
    ({"paths_per_player": 0}, "paths_per_player must be an integer >= 1"),
    ({"demands": (("s1", "t", float("nan")),)}, "weight of demand 0 must be"),
    ({"latency": -1.0}, "latency must be"),
])
def test_network_flow_checks_its_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        network_flow(**kwargs)


@pytest.mark.parametrize("capacity", [0.0, -1.0, float("nan"), "big"])
def test_network_flow_names_a_bad_link_capacity(capacity: object) -> None:
    graph = default_network()
    graph.edges["b", "t"]["capacity"] = capacity
    with pytest.raises(InputError, match=r"capacity of link \('b', 't'\) must be a number > 0"):
        network_flow(graph)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"weights": ()}, "at least one player"),
    ({"weights": (1.0, float("nan"))}, r"weights\[1\] must be"),
    ({"budget": float("nan")}, "budget must be a finite number > 0"),
    ({"price": "0.1"}, "price must be"),
])
def test_resource_allocation_checks_its_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        resource_allocation(**kwargs)
