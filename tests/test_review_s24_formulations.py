"""Review of session 24 (formulations): bad input to the games, assignment, fair
clustering and black-box-benchmark entry points is a one-line InputError naming it."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations import games
from coplug.formulations.assignment import assignment_model
from coplug.formulations.bbo.pyomo_model import set_point, to_pyomo
from coplug.formulations.bbo.validate import load
from coplug.formulations.fair_clustering_mip import mip_labels
from coplug.formulations.game_solvers import certify
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("profile,message", [
    ([1.0, 2.0], "a profile must map each player to its values, got list"),
    ({"firm0": ["a"], "firm1": [1.0]}, "the values of player 'firm0' must be numbers"),
    ({"firm9": [1.0]}, "the profile names 'firm9', not a player"),
])
def test_a_bad_profile_to_certify_is_named(profile, message) -> None:
    with pytest.raises(InputError, match=message):
        certify(games.cournot(2), profile)


def test_game_constructors_name_their_bad_arguments() -> None:
    with pytest.raises(InputError, match="cournot intercept must be a finite number"):
        games.cournot(2, intercept=10**400)
    with pytest.raises(InputError, match="unknown game"):
        games.example(["cournot"])
    game = games.cournot(2)  # the good ones still build and certify
    assert sorted(game.profile()) == ["firm0", "firm1"]


def test_ragged_costs_are_named() -> None:
    with pytest.raises(InputError, match="rows of different lengths"):
        assignment_model([[1, 2], [3]])


def test_mip_labels_names_a_model_it_did_not_build() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    with pytest.raises(InputError, match="needs a model built by fair_clustering_mip"):
        mip_labels(m)


def test_a_point_of_text_is_named() -> None:
    model = to_pyomo(load("x[0] * x[0] + x[1]", 2))
    with pytest.raises(InputError, match="the point must hold numbers"):
        set_point(model, ["a", "b"])
    set_point(model, np.array([0.5, -1.0]))
    assert pyo.value(model.obj) == pytest.approx(-0.75)
