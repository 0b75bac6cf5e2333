"""Dense JV: exact against scipy on random, tied, negative, rectangular and maximize
matrices; warm starts from arbitrary (adversarial) duals stay exact; duals certify."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.errors import InputError, TimeLimitError
from coplug.plugins.lap import certify
from coplug.plugins.lap.solver import counters, solve_lap
from coplug.plugins.lap.warmstart import (
    checked_min_trick,
    column_record,
    column_reduction_state,
    min_trick,
    warm_state,
)

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def warm_jit() -> None:
    """Compile (or load from cache) every kernel once for this module."""
    c = np.arange(12.0).reshape(3, 4)
    solve_lap(c)
    solve_lap(c, row_duals=np.zeros(3))
    solve_lap(c.astype(np.float32), row_duals=np.zeros(3))


def _matrices(max_side: int = 7, square: bool = False):
    """Small matrices: integer costs in a narrow range give many ties; negatives included."""
    sides = st.integers(1, max_side)
    shapes = sides.map(lambda k: (k, k)) if square else st.tuples(sides, sides)
    ints = shapes.flatmap(lambda s: arrays(np.int64, s, elements=st.integers(-4, 4)))
    floats = shapes.flatmap(
        lambda s: arrays(np.float64, s, elements=st.floats(-1e3, 1e3, allow_nan=False))
    )
    return st.one_of(ints.map(lambda a: a.astype(np.float64)), floats)


def _scipy_objective(c: np.ndarray, maximize: bool) -> float:
    r, k = linear_sum_assignment(c, maximize=maximize)
    return float(c[r, k].sum())


def _check_duals(c: np.ndarray, sol, maximize: bool) -> None:
    """u_i + v_j <= c_ij (>= when maximizing), tight on the assignment."""
    slack = c - sol.row_duals[:, None] - sol.col_duals[None, :]
    slack = -slack if maximize else slack
    tol = 1e-7 * max(1.0, np.abs(c).max())
    assert slack.min() >= -tol
    assert np.abs(slack[sol.row_ind, sol.col_ind]).max() <= tol


@SETTINGS
@given(_matrices(), st.booleans())
def test_cold_objective_equals_scipy(c: np.ndarray, maximize: bool) -> None:
    sol = solve_lap(c, maximize=maximize)
    assert len(set(sol.col_ind.tolist())) == len(sol.col_ind) == min(c.shape)
    assert len(set(sol.row_ind.tolist())) == len(sol.row_ind)
    assert sol.cost == pytest.approx(_scipy_objective(c, maximize), abs=1e-7)
    assert sol.cost == pytest.approx(float(c[sol.row_ind, sol.col_ind].sum()), abs=1e-7)
    if c.shape[0] == c.shape[1]:
        _check_duals(c, sol, maximize)


@SETTINGS
@given(_matrices(), st.booleans(), st.data())
def test_warm_from_adversarial_duals_is_exact(c: np.ndarray, maximize: bool, data) -> None:
    n = c.shape[0]
    magnitude = data.draw(st.sampled_from([1e-3, 1.0, 1e3, 1e9, 1e15]))
    u = data.draw(arrays(np.float64, n, elements=st.floats(-1, 1, allow_nan=False))) * magnitude
    sol = solve_lap(c, maximize=maximize, row_duals=u if n <= c.shape[1] else None)
    assert sol.cost == pytest.approx(_scipy_objective(c, maximize), abs=1e-7)


@pytest.mark.usefixtures("duals_reach_the_certificate")
def test_huge_duals_fall_back_to_cold_and_are_counted() -> None:
    c = np.random.default_rng(3).random((40, 40))
    before = counters()["fallbacks"]
    u = np.zeros(40)
    u[0] = 1e17  # v_j = min_i (c_ij - u_i) loses every digit of c: certificate must fail
    sol = solve_lap(c, row_duals=u)
    assert sol.cost == pytest.approx(_scipy_objective(c, False), abs=1e-9)
    assert sol.fallback
    assert counters()["fallbacks"] == before + 1


@pytest.mark.usefixtures("duals_reach_the_certificate")
def test_duals_that_swamp_the_costs_are_not_certified() -> None:
    # Found by hypothesis: at 1e15 the 0.0625 cost difference vanishes in c_ij - u_i, so the
    # weak-duality gap reads 0 for the wrong assignment; the certificate must refuse it.
    c = np.array([[0.0, -0.0625], [0.0, 0.0]])
    sol = solve_lap(c, row_duals=np.array([1e15, -1e15]))
    assert sol.cost == -0.0625
    assert sol.fallback


@SETTINGS
@given(_matrices(), st.data())
def test_min_trick_makes_any_row_duals_feasible(c: np.ndarray, data) -> None:
    u = data.draw(arrays(np.float64, c.shape[0], elements=st.floats(-1e6, 1e6, allow_nan=False)))
    v = np.empty(c.shape[1])
    min_trick(c, u, v)
    scale = max(1.0, np.abs(c).max(), np.abs(u).max())
    assert (u[:, None] + v[None, :] <= c + 1e-12 * scale).all()


@SETTINGS
@given(_matrices(), st.data())
def test_checked_min_trick_finds_column_minima_scale_and_non_finite(c: np.ndarray, data) -> None:
    """The first pass's column duals, minimizing rows and cost scale equal numpy's; one NaN
    or inf anywhere turns the scale into NaN."""
    n, m = c.shape
    u = data.draw(arrays(np.float64, n, elements=st.floats(-1e3, 1e3, allow_nan=False)))
    v, argmin = np.empty(m), np.empty(m, np.int64)
    scale = checked_min_trick(c, u, v, argmin, column_record(0))
    reduced = c - u[:, None]
    assert scale == np.abs(c).max()
    np.testing.assert_array_equal(v, reduced.min(axis=0))
    np.testing.assert_array_equal(reduced[argmin, np.arange(m)], v)
    bad = c.copy()
    bad[data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, m - 1))] = data.draw(
        st.sampled_from([np.nan, np.inf, -np.inf]))
    assert np.isnan(checked_min_trick(bad, u, v, argmin, column_record(0)))


@SETTINGS
@given(_matrices(square=True), st.data())
def test_warm_state_is_a_feasible_tight_partial_matching(c: np.ndarray, data) -> None:
    """Column-minimum matches plus row tightening: duals feasible, every matched edge tight,
    col4row and row4col consistent."""
    n = c.shape[0]
    u0 = data.draw(arrays(np.float64, n, elements=st.floats(-1e3, 1e3, allow_nan=False)))
    (u, v, col4row, row4col), _, _ = warm_state(c, u0)
    scale = max(1.0, np.abs(c).max(), np.abs(u0).max())
    slack = c - u[:, None] - v[None, :]
    assert slack.min() >= -1e-12 * scale
    rows = np.flatnonzero(col4row >= 0)
    assert np.abs(slack[rows, col4row[rows]]).max(initial=0.0) <= 1e-12 * scale
    np.testing.assert_array_equal(row4col[col4row[rows]], rows)
    assert np.count_nonzero(row4col >= 0) == rows.size


@SETTINGS
@given(_matrices(square=True), st.data())
def test_incremental_certificate_bound_is_valid_for_any_final_duals(c: np.ndarray, data) -> None:
    """From a tightened snapshot, whatever duals a solve ends with (even adversarial ones),
    the rescanned bound never exceeds the optimum: a wrong assignment cannot be certified."""
    n = c.shape[0]
    duals = arrays(np.float64, n, elements=st.floats(-1e3, 1e3, allow_nan=False))
    (u_snap, v_snap, _, _), _, _ = warm_state(c, data.draw(duals))
    u, v = data.draw(duals), data.draw(duals)
    rows, cols = linear_sum_assignment(c)
    best = float(c[rows, cols].sum())
    scale = max(1.0, np.abs(c).max(), np.abs(u).max(), np.abs(v).max(), np.abs(u_snap).max())
    for assignment in (cols, np.roll(cols, 1)):
        primal, bound, *_ = certify.dense_gap_since(c, assignment, u, v, u_snap, v_snap)
        assert primal == pytest.approx(float(c[rows, assignment].sum()))
        assert bound <= best + 1e-9 * scale * n
        if primal > best + 1e-6 * scale:
            assert not certify.certified(primal, bound, np.abs(c).max(), n)


@pytest.mark.parametrize("name", ["uniform", "geometric", "low_rank", "transport"])
def test_incremental_certificate_certifies_optimal_solves(name: str) -> None:
    """A solve's own duals pass the rescanning certificate, with the same gap as a full pass."""
    c = generate(name, 150, seed=5)
    (u_snap, v_snap, _, _), _ = column_reduction_state(c)
    sol = solve_lap(c)
    primal, bound, *_ = certify.dense_gap_since(c, sol.col_ind, sol.row_duals, sol.col_duals,
                                            u_snap, v_snap)
    assert certify.certified(primal, bound, np.abs(c).max(), 150)
    assert primal == pytest.approx(_scipy_objective(c, False), rel=1e-12)


@pytest.mark.parametrize("name", ["uniform", "geometric", "low_rank", "transport"])
def test_generators_cold_and_warm_match_scipy(name: str) -> None:
    c = generate(name, 150, seed=4)
    ref = _scipy_objective(c, False)
    cold = solve_lap(c)
    warm = solve_lap(c, row_duals=cold.row_duals + np.random.default_rng(0).normal(size=150))
    assert cold.cost == pytest.approx(ref, rel=1e-12)
    assert warm.cost == pytest.approx(ref, rel=1e-12)
    primal, bound, *_ = certify.dense_gap(c, cold.col_ind, cold.row_duals)
    assert primal - bound <= 1e-9


def test_float32_costs_solve_exactly() -> None:
    c = generate("geometric", 120, seed=2, dtype=np.float32)
    sol = solve_lap(c, row_duals=np.zeros(120))
    assert sol.cost == pytest.approx(_scipy_objective(c.astype(np.float64), False), rel=1e-9)


def test_certificate_rejects_a_suboptimal_assignment() -> None:
    c = np.array([[1.0, 5.0], [5.0, 1.0]])
    primal, bound, *_ = certify.dense_gap(c, np.array([1, 0]), np.array([1.0, 1.0]))
    assert not certify.certified(primal, bound, 5.0, 2)


@pytest.mark.parametrize(
    ("cost", "duals", "message"),
    [
        (np.array([[1.0, np.nan]]), None, "nan"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), None, "scipy.sparse"),
        (np.arange(4.0), None, "2-D"),
        (np.zeros((0, 3)), None, "empty"),
        (np.array([["a", "b"]]), None, "numeric"),
        (np.ones((2, 2)), np.ones(3), "one value per row"),
        (np.ones((2, 2)), np.array([0.0, np.nan]), "finite"),
        (np.ones((3, 2)), np.ones(2), "one value per row"),  # tall: checked, then unused
        (np.ma.masked_array(np.eye(2), mask=np.eye(2)), None, "masked"),
        (np.full((2, 2), 1e308), None, "overflow float64"),
    ],
)
def test_bad_input_names_the_problem(cost, duals, message: str) -> None:
    with pytest.raises(InputError, match=message):
        solve_lap(cost, row_duals=duals)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("warm", [False, True])
def test_non_finite_entry_is_named_where_the_caller_put_it(
    shape: tuple[int, int], maximize: bool, warm: bool
) -> None:
    """The finiteness check rides on the solve's first pass, whatever path it takes (square,
    padded, transposed, negated, warm); the error still names the caller's entry."""
    c = np.arange(float(shape[0] * shape[1])).reshape(shape)
    c[shape[0] - 1, 1] = np.inf
    duals = np.zeros(shape[0]) if warm else None
    with pytest.raises(InputError, match=rf"cost\[{shape[0] - 1}, 1\] is inf"):
        solve_lap(c, maximize=maximize, row_duals=duals)


@pytest.mark.parametrize("sparse_input", [False, True])
def test_time_limit_stops_between_augmentation_chunks(sparse_input: bool) -> None:
    import scipy.sparse as sp

    c = generate("uniform", 300, seed=0)
    full = solve_lap(sp.csr_matrix(c) if sparse_input else c, time_limit=60.0)
    assert full.augmentations > 4  # more than the first chunk, so the deadline is checked
    with pytest.raises(TimeLimitError, match="time limit"):
        solve_lap(sp.csr_matrix(c) if sparse_input else c, time_limit=1e-9)


@pytest.mark.parametrize("limit", [0.0, -1.0, float("nan")])
def test_bad_time_limit_is_refused(limit: float) -> None:
    with pytest.raises(InputError, match="time_limit"):
        solve_lap(np.eye(3), time_limit=limit)


def test_maximize_duals_can_be_passed_back() -> None:
    """Returned duals are in the max convention and so are given ones: passing them back
    restarts at the optimum (few augmentations) instead of far from it."""
    c = generate("low_rank", 200, seed=1)
    cold = solve_lap(c, maximize=True)
    again = solve_lap(c, maximize=True, row_duals=cold.row_duals)
    assert again.cost == pytest.approx(cold.cost, rel=1e-12) and not again.fallback
    assert again.augmentations < cold.augmentations / 4


def test_wide_sparse_matrix_is_not_padded_for_a_warm_start() -> None:
    """Sparse warm starts pad to a square, refused past twice the pattern; dense ones start
    in the rectangular frame at any width."""
    import scipy.sparse as sp

    c = np.random.default_rng(0).random((3, 400))
    r, k = linear_sum_assignment(c)
    sol = solve_lap(sp.csr_matrix(c), row_duals=np.zeros(3))
    assert not sol.warm and "would add 158800 entries, more than its 1200 stored pairs" in (
        sol.info["prediction"])
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)
    sol = solve_lap(c, row_duals=np.zeros(3))
    assert sol.warm and sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


@pytest.mark.parametrize("scale", [1e-13, 1e-200])
def test_costs_far_below_one_keep_their_digits(scale: float) -> None:
    """The certificate's tolerance is relative to the costs, not at least 1."""
    c = generate("transport", 120, seed=3) * scale
    r, k = linear_sum_assignment(c)
    for duals in (None, np.random.default_rng(2).normal(scale=scale, size=120)):
        assert solve_lap(c, row_duals=duals).cost == pytest.approx(c[r, k].sum(), rel=1e-9, abs=0)
