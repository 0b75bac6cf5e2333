"""The warm certificate under mixed cost magnitudes and out-of-scale duals: never a wrong
answer, and constant offsets cost nothing (regressions from a review)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.learned.rowdualnet import load
from coplug.plugins import InputError
from coplug.plugins.lap import solve_lap


def _optimum(c: np.ndarray, maximize: bool = False) -> float:
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    return float(c[rows, cols].sum())


@pytest.mark.usefixtures("duals_reach_the_certificate")
def test_one_huge_cost_does_not_loosen_the_warm_certificate() -> None:
    # max |c| = 1e13 made the accepted gap 3e4: these duals returned 13 (optimum 10) as certified
    c = np.array([[1e13, 7.0, 4.0], [5.0, 6.0, 7.0], [0.0, 4.0, 1.0]])
    sol = solve_lap(c, row_duals=np.array([-1e16, 3e16, 0.0]))
    assert sol.cost == _optimum(c)
    assert sol.fallback


@pytest.mark.parametrize("maximize", [False, True])
def test_integer_costs_with_an_outlier_stay_exact_from_huge_duals(maximize: bool) -> None:
    rng = np.random.default_rng(0)
    for _ in range(40):
        c = np.round(rng.random((30, 30)) * 100)
        c[0, 0] = 1e13  # assigned under maximize, avoided under minimize
        duals = rng.normal(size=30) * 10.0 ** rng.integers(8, 17)
        sol = solve_lap(c, maximize=maximize, row_duals=duals)
        assert sol.cost == _optimum(c, maximize)


def test_a_constant_dual_offset_is_harmless() -> None:
    c = generate("uniform", 80, seed=3)
    base = solve_lap(c)
    sol = solve_lap(c, row_duals=base.row_duals + 1e15)
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)
    assert not sol.fallback


def test_cold_duals_far_above_the_assigned_costs_still_certify() -> None:
    # the cold solve keeps its max |c|-relative tolerance: duals near 1e9, assigned costs < 100
    c = np.array([[1e9, 5.0], [3.0, 98.0]])
    assert solve_lap(c).cost == _optimum(c)


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.parametrize("name", ["uniform", "low_rank", "transport"])
def test_predicted_warm_solves_pass_the_strict_certificate(name: str) -> None:
    c = generate(name, 600, seed=11)
    sol = solve_lap(c, predictor=load())
    assert sol.info["prediction"] == "used" and not sol.fallback
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)


def test_argument_types_are_named() -> None:
    c = generate("uniform", 20, seed=1)
    for bad, match in [({"time_limit": "1"}, "time_limit"), ({"arr_passes": 1.5}, "arr_passes"),
                       ({"row_duals": np.zeros((4, 5))}, "one value per row"),
                       ({"row_duals": np.zeros(20, complex)}, "real")]:
        with pytest.raises(InputError, match=match):
            solve_lap(c, **bad)
    column = solve_lap(c, row_duals=np.zeros((20, 1)))
    assert column.cost == pytest.approx(_optimum(c), rel=1e-12)


def test_a_predictor_on_sparse_costs_says_why_it_was_not_used() -> None:
    c = generate("uniform", 40, seed=2)
    sol = solve_lap(sp.csr_matrix(c), predictor=load())
    assert sol.info["prediction"].startswith("skipped: a predictor needs a dense cost matrix")
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)


def test_maximizing_a_zero_matrix_costs_plus_zero() -> None:
    assert str(solve_lap(np.zeros((3, 3)), maximize=True).cost) == "0.0"
