"""Session 31 review: each test fails without its fix."""
from __future__ import annotations

from bench_loader import bench

from coplug.formulations.tsp import is_tour


def test_is_tour_refuses_bools_that_numpy_makes_integers():
    assert is_tour([2, 0, 1], 3)
    assert not is_tour([True, False, 2], 3)
    assert not is_tour((1, 0, True), 3)


def test_games_summary_names_a_slope_it_cannot_fit():
    row = {"game": "cournot", "epsilon": 0.1, "reached": 3, "final_gap": 5e-5,
           "feasible": True}
    line = bench("games_convergence").summary([row], ["cournot"])
    assert "nan" not in line
    assert "(1/eps)^? (a slope needs 2 targets reached)" in line
