"""Rectangular dense solves (n_rows < n_cols, or transposed): the row-reduction start, its
validation of the costs, and the certificate that rescans only the lines whose duals rose."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.errors import InputError
from coplug.plugins.lap import certify, jv, small
from coplug.plugins.lap.solver import solve_lap

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reduce(c: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Run the row reduction on c: (scale, u, col4row, row4col)."""
    n, m = c.shape
    u = np.empty(n)
    col4row, row4col = np.full(n, -1, np.int64), np.full(m, -1, np.int64)
    scale = jv.checked_row_reduction(c, u, col4row, row4col)
    return scale, u, col4row, row4col


@SETTINGS
@given(st.tuples(st.integers(1, 6), st.integers(1, 13)).flatmap(
    lambda s: arrays(np.float64, s, elements=st.integers(-3, 3).map(float))))
def test_row_reduction_takes_each_rows_first_minimum_while_its_column_is_free(c) -> None:
    """Row minima, max |c|, and the greedy matching in row order on each row's first
    minimizing column (narrow integers: many ties, so the lanes' tie-break is exercised)."""
    scale, u, col4row, row4col = _reduce(c)
    assert scale == np.abs(c).max()
    np.testing.assert_array_equal(u, c.min(axis=1))
    taken: set[int] = set()
    for i, j in enumerate(c.argmin(axis=1)):
        expected = -1 if j in taken else j
        taken.add(int(j))
        assert col4row[i] == expected
        if expected >= 0:
            assert row4col[j] == i


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [(0, 0), (2, 9), (4, 10)])  # a lane, the last lane, the tail
def test_row_reduction_returns_nan_on_any_non_finite_entry(bad: float, where) -> None:
    c = np.random.default_rng(0).random((5, 11))
    c[where] = bad
    assert np.isnan(_reduce(c)[0])


@pytest.mark.parametrize("transposed", [False, True])
def test_rectangular_solve_names_a_non_finite_entry(transposed: bool) -> None:
    c = generate("uniform", 200, seed=0, m=300)
    c[150, 7] = np.inf
    given_c = c.T.copy() if transposed else c
    where = r"cost\[7, 150\]" if transposed else r"cost\[150, 7\]"
    with pytest.raises(InputError, match=where + " is inf"):
        solve_lap(given_c)


@pytest.mark.parametrize("generator", ["uniform", "geometric", "low_rank", "transport"])
@pytest.mark.parametrize(("n", "m"), [(150, 190), (150, 300), (190, 150)])
def test_rectangular_cold_solves_match_scipy_with_feasible_duals(
    generator: str, n: int, m: int
) -> None:
    c = generate(generator, n, seed=3, m=m) if n < m else generate(generator, m, seed=3, m=n).T
    for maximize in (False, True):
        sol = solve_lap(c, maximize=maximize)
        rows, cols = linear_sum_assignment(c, maximize=maximize)
        assert sol.cost == pytest.approx(c[rows, cols].sum(), rel=1e-10)
        sign = -1.0 if maximize else 1.0
        reduced = sign * (c - sol.row_duals[:, None] - sol.col_duals[None, :])
        assert reduced.min() >= -1e-9 * np.abs(c).max()


def test_incremental_certificate_accepts_the_optimum_and_refuses_a_worse_assignment() -> None:
    """On a rectangle, the rescan of the rows whose duals rose since row reduction gives a
    bound that meets the optimum and stays a valid bound: a swapped assignment is refused."""
    c = generate("geometric", 120, seed=5, m=170)
    n, m = c.shape
    scale, u, col4row, row4col = _reduce(c)
    u_snap, v = u.copy(), np.zeros(m)
    free = np.flatnonzero(col4row < 0).astype(np.int64)
    jv.augmenting_row_reduction(c, v, col4row, row4col, free, free.size, 2 * m)
    jv.implicit_row_duals(c, v, col4row, u)
    jv.shortest_augmenting_paths(c, u, v, col4row, row4col, 0, n + 1, np.full(1, 2**62))
    primal, bound, *_ = certify.dense_gap_since(c, col4row, u, v, u_snap, np.zeros(m))
    rows, cols = linear_sum_assignment(c)
    assert primal == pytest.approx(c[rows, cols].sum(), rel=1e-12)
    assert certify.certified(primal, bound, scale, n)
    assert bound == pytest.approx(certify.dense_gap(c, col4row, u)[1], rel=1e-12)
    worse = col4row.copy()
    worse[[0, 1]] = worse[[1, 0]]
    primal_w, bound_w, *_ = certify.dense_gap_since(c, worse, u, v, u_snap, np.zeros(m))
    assert primal_w > primal and not certify.certified(primal_w, bound_w, scale, n)
    spares = np.setdiff1d(np.arange(m), col4row)
    slack = (c[:, spares] - u[:, None]).min(axis=0)
    assert slack.max() > 0
    raised = v.copy()
    raised[spares[slack.argmax()]] = 1.0  # rescanned down to its slack > 0, kept out of the bound
    assert certify.dense_gap_since(c, col4row, u, raised, u, v)[1] == pytest.approx(
        certify.dense_gap_since(c, col4row, u, v, u, v)[1], rel=1e-12)


def test_rectangular_cold_solve_certifies_by_rescan_not_a_full_pass(monkeypatch) -> None:
    """The row-reduction start is feasible everywhere, so the certificate rescans lines."""
    full = []
    original = certify.dense_gap
    monkeypatch.setattr(certify, "dense_gap", lambda *a: full.append(1) or original(*a))
    monkeypatch.setattr(small, "MAX_ENTRIES", 0)
    c = generate("geometric", 300, seed=1, m=400)
    sol = solve_lap(c)
    rows, cols = linear_sum_assignment(c)
    assert sol.cost == pytest.approx(c[rows, cols].sum(), rel=1e-12) and not full


def _duals_price_the_answer(c: np.ndarray, found, maximize: bool = False) -> None:
    """The returned duals are feasible (u_i + v_j <= c_ij; >= when maximizing), tight on the
    assignment, and sum to the cost: the certificate `LapSolution` promises."""
    reduced = c - found.row_duals[:, None] - found.col_duals[None, :]
    reduced = -reduced if maximize else reduced
    scale = 1e-9 * max(1.0, float(np.abs(c).max()))
    assert reduced.min() >= -scale
    assert np.abs(reduced[found.row_ind, found.col_ind]).max() <= scale
    assert found.row_duals.sum() + found.col_duals.sum() == pytest.approx(found.cost, abs=scale)


@pytest.mark.parametrize("case", ["shared-1e300", "spread-1e14", "one-1e124", "max-1x2",
                                  "sparse-1x2"])
def test_wide_warm_starts_far_out_of_scale_return_duals_that_price_the_answer(case: str
                                                                              ) -> None:
    """Padded to a square, row duals of 1e300 came back as duals 0 and 0 (reduced costs -2
    and -3 on the assignment), and 1e14 spread ones 0.013 off: the right cost, duals that
    certify nothing. A padded solve whose duals lost the costs' digits fell back to a cold
    one; dense costs now start in the rectangular frame (a shared constant taken out by the
    gauge, spread duals brought to the costs' scale as their columns are released to 0) and
    need no fallback; sparse ones are still padded, a shared constant centred away."""
    import scipy.sparse as sp

    rng = np.random.default_rng(262)
    maximize, sparse = case == "max-1x2", case == "sparse-1x2"
    c, u0 = {
        "shared-1e300": (np.array([[-2.0, 0, 1, 2], [-1, -3, 1, 3]]), np.full(2, 1e300)),
        "spread-1e14": (rng.random((4, 5)), 1e14 * (1 + rng.random(4))),
        "one-1e124": (np.array([[-2.0, 3, -1, 3], [-1, -1, 2, 1], [0, 0, -2, 0]]),
                      np.array([1e124, 0, 0])),
        "max-1x2": (np.array([[0.54000086, 0.01870087]]), np.array([-1e15])),
        "sparse-1x2": (np.array([[-5.0, 2.0]]), np.array([1e197])),
    }[case]
    found = solve_lap(sp.csr_matrix(c) if sparse else c, maximize=maximize, row_duals=u0)
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    assert found.cost == pytest.approx(c[rows, cols].sum(), abs=1e-12)
    _duals_price_the_answer(c, found, maximize)
    assert found.warm and not found.fallback
