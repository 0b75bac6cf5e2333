"""Session 36 review: behaviour found by probes of unusual array-likes and of exceptions
raised by the user's own code."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations.assignment import assignment_model
from coplug.formulations.bbo import load, numpy_evaluator, torch_evaluator
from coplug.formulations.fair_metrics import ratio_cut
from coplug.formulations.knapsack import KnapsackInstance
from coplug.formulations.tsp import TSPInstance, tour_length
from coplug.plugins.errors import InputError
from coplug.plugins.lap import ranked_matchings, solve_lap

MASKED = np.ma.masked_array([[1.0, 100.0], [100.0, 1.0]], mask=[[1, 0], [0, 1]])


@pytest.mark.parametrize("call", [
    lambda: solve_lap(MASKED),
    lambda: assignment_model(MASKED),
    lambda: ranked_matchings(np.full((2, 2), 10.0), k=1, col_cost=0.0,
                             row_cost=np.ma.masked_array([0.0, 100.0], mask=[1, 0])),
    lambda: ratio_cut(MASKED, [0, 1]),
    lambda: TSPInstance(MASKED),
    lambda: KnapsackInstance([1.0, 1.0], np.ma.masked_array([5, 1], mask=[1, 0]), 1),
    lambda: tour_length(MASKED, [0, 1]),
    lambda: numpy_evaluator(load("sum(x ** 2)", dim=2))(MASKED),
])
def test_masked_arrays_are_refused_by_name(call) -> None:
    """np.asarray drops a mask: the masked-out entries counted as data (an assignment model
    solved at the two masked-out costs of 1, a ratio cut over a masked edge)."""
    with pytest.raises(InputError, match="masked arrays are not supported"):
        call()


def test_tour_length_sums_in_float64() -> None:
    """float16 distances of 60,000 summed to inf in their own dtype."""
    dist = np.full((4, 4), 60000.0, dtype=np.float16)
    assert tour_length(dist, [0, 1, 2, 3]) == 240000.0


@pytest.mark.parametrize("dist", [np.full((3, 3), 1 + 5j), np.full((3, 3), "1"),
                                  np.ones((3, 3), dtype="m8[s]")])
def test_tour_length_refuses_what_is_no_distance(dist: np.ndarray) -> None:
    """A complex matrix was cut to its real part; strings and timedeltas failed in numpy."""
    with pytest.raises(InputError, match="distance matrix must be numeric"):
        tour_length(dist, [0, 1, 2])


def test_assignment_model_refuses_timedelta_costs_by_name() -> None:
    """validate_costs let timedelta64 through as a number and the model failed on float()."""
    with pytest.raises(InputError, match="costs must be real numbers, got dtype timedelta64"):
        assignment_model(np.ones((2, 2), dtype="m8[s]"))


def test_bbo_evaluators_refuse_complex_points() -> None:
    """Casting to float dropped the imaginary part (25 at (3 + 1j, 4))."""
    import torch

    program = load("sum(x ** 2)", dim=2)
    points = np.array([[3 + 1j, 4]])
    for evaluate in (numpy_evaluator(program), torch_evaluator(program)):
        with pytest.raises(InputError, match="points must be real numbers"):
            evaluate(points)
    with pytest.raises(InputError, match="points must be real numbers"):
        torch_evaluator(program)(torch.as_tensor(points))
    assert torch_evaluator(program)(torch.tensor([[3.0, 4.0]])).item() == 25.0
    assert numpy_evaluator(program)(np.array([[3, 4]], dtype=np.int8))[0] == 25.0
