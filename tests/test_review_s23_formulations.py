"""Formulation probe fixes (session 23): the QUBO command's memory refusal, ragged knapsack
data, an out-of-range arc length, and tours of non-whole cities."""

from __future__ import annotations

import pytest

from coplug.formulations import knapsack, openpit, tsp
from coplug.formulations.knapsack import KnapsackInstance
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("problem", ["openpit", "knapsack", "tsp"])
def test_the_qubo_command_refuses_a_size_past_memory_before_generating(
        problem, monkeypatch, capsys):
    """`coplug qubo openpit --size 4000000` reached 7 GB before this (`coplug solve`
    refused it at once)."""
    def never(*_args, **_kwargs):
        raise AssertionError("the instance was generated")

    monkeypatch.setattr(openpit, "random_block_model", never)
    monkeypatch.setattr(tsp, "random_euclidean", never)
    monkeypatch.setattr(knapsack, "random_knapsack", never)
    assert main(["qubo", problem, "--size", "100000000", "--starts", "1"]) == 2
    assert "of memory" in capsys.readouterr().err


def test_the_qubo_command_still_runs_a_small_case(capsys):
    assert main(["qubo", "knapsack", "--size", "12", "--starts", "4"]) == 0
    assert "knapsack n=12" in capsys.readouterr().out


@pytest.mark.parametrize("field", ["values", "weights"])
def test_ragged_knapsack_data_is_named(field):
    data = {"values": [1, 2], "weights": [1, 1]}
    data[field] = [1, [2, 3]]
    with pytest.raises(InputError, match=f"knapsack {field} must be a flat list of numbers"):
        KnapsackInstance(data["values"], data["weights"], 1)


def test_an_arc_length_past_float_precision_is_named():
    with pytest.raises(InputError, match="largest arc length must be an integer"):
        tsp.random_asymmetric(4, high=2**63)


@pytest.mark.parametrize(("tour", "expected"), [
    ([0, 1.5, 2.2], False), ([0, 2, 1], True), ([0.0, 2.0, 1.0], True), ([0, 1], False),
    ([0, 1, 1], False), (None, False), (["0", "1", "2"], False)])
def test_a_tour_is_whole_cities(tour, expected):
    """int() truncated 1.5 and 2.2 into cities 1 and 2: a 'tour'."""
    assert tsp.is_tour(tour, 3) is expected


@pytest.mark.parametrize("bad", [-1.0, float("nan"), 0.0])
def test_certify_refuses_a_scale_that_is_not_positive(bad):
    """A negative scale turned every slope's sign and the certificate meant nothing."""
    import numpy as np

    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
    from coplug.formulations.qubo_solvers import certify, gradient_scale

    qubo = knapsack_qubo_safe(random_knapsack(6, seed=0))
    scale = gradient_scale(qubo)
    assert certify(qubo, np.zeros(qubo.n), scale=scale) is not None
    scale[2] = bad
    with pytest.raises(InputError, match="scale must be finite and > 0"):
        certify(qubo, np.zeros(qubo.n), scale=scale)
