"""The one-call path for small dense solves (`plugins/lap/small.py`) and the copy-free path for
canonical CSR input: both exact against scipy and against the kernel-by-kernel path, the
caller's matrix untouched, bad input still named."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import gated, generate
from coplug.plugins.errors import InputError, TimeLimitError
from coplug.plugins.lap import ranked_assignments, small, sparse
from coplug.plugins.lap.solver import solve_lap

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _cases():
    """Small matrices with ties (narrow integers) or spread floats, any shape, and optional
    warm row duals drawn far from the optimum's."""
    shapes = st.tuples(st.integers(1, 9), st.integers(1, 9))
    ints = shapes.flatmap(lambda s: arrays(np.int64, s, elements=st.integers(-3, 3)))
    floats = shapes.flatmap(lambda s: arrays(np.float64, s, elements=st.floats(-1e4, 1e4)))
    costs = st.one_of(ints.map(lambda a: a.astype(np.float64)), floats)
    return st.tuples(costs, st.booleans(), st.booleans(), st.integers(0, 2**31))


def _duals_feasible(c: np.ndarray, sol) -> bool:
    """u_i + v_j <= c_ij (minimizing) everywhere, up to round-off."""
    gap = c - sol.row_duals[:, None] - sol.col_duals[None, :]
    return bool((gap >= -1e-9 * (1 + np.abs(c).max())).all())


@SETTINGS
@given(_cases())
def test_one_call_path_matches_scipy_and_the_kernel_path(case) -> None:
    c, maximize, warm, seed = case
    duals = np.random.default_rng(seed).normal(0, 1e3, c.shape[0]) if warm else None
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    best = c[rows, cols].sum()
    fast = solve_lap(c, maximize=maximize, row_duals=duals)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(small, "MAX_ENTRIES", 0)
        kernels = solve_lap(c, maximize=maximize, row_duals=duals)
    tol = 1e-9 * (1 + np.abs(c).sum())
    # the same steps in the same order: the same assignment, work and fallbacks
    np.testing.assert_array_equal(fast.col_ind, kernels.col_ind)
    np.testing.assert_array_equal(fast.row_duals, kernels.row_duals)
    np.testing.assert_array_equal(fast.col_duals, kernels.col_duals)
    assert (fast.augmentations, fast.fallback, fast.info["row_reduction_scans"]) == (
        kernels.augmentations, kernels.fallback, kernels.info["row_reduction_scans"])
    assert fast.cost == pytest.approx(best, abs=tol)
    assert kernels.cost == pytest.approx(best, abs=tol)
    assert c[fast.row_ind, fast.col_ind].sum() == pytest.approx(fast.cost, abs=tol)
    assert len(set(fast.col_ind.tolist())) == len(fast.col_ind) == min(c.shape)
    if not maximize:
        assert _duals_feasible(c, fast)


def test_one_call_path_is_taken_up_to_its_size_only(monkeypatch) -> None:
    """Square matrices up to MAX_ENTRIES go through `small.solve`, larger ones do not."""
    calls = []
    original = small.solve
    monkeypatch.setattr(small, "solve", lambda *a: calls.append(a[0].shape) or original(*a))
    side = int(np.sqrt(small.MAX_ENTRIES))
    solve_lap(generate("uniform", side, seed=1))
    solve_lap(generate("uniform", side + 1, seed=1))
    assert calls == [(side, side)]


def test_one_call_path_float32_and_warm_start_from_its_own_duals() -> None:
    c = generate("geometric", 40, seed=2).astype(np.float32)
    cold = solve_lap(c)
    rows, cols = linear_sum_assignment(c)
    assert cold.cost == pytest.approx(float(c[rows, cols].astype(np.float64).sum()), rel=1e-6)
    again = solve_lap(c, row_duals=cold.row_duals)
    assert again.warm and not again.fallback and again.augmentations <= 1
    assert again.cost == pytest.approx(cold.cost, rel=1e-12)


def test_one_call_path_names_a_non_finite_entry() -> None:
    c = np.ones((5, 6))
    c[3, 4] = np.nan
    with pytest.raises(InputError, match=r"cost\[3, 4\] is nan"):
        solve_lap(c)
    with pytest.raises(InputError, match=r"cost\[4, 3\] is nan"):
        solve_lap(c.T.copy(), row_duals=np.zeros(6))


def test_one_call_path_checks_a_deadline_before_it_runs() -> None:
    with pytest.raises(TimeLimitError, match="time limit"):
        solve_lap(generate("uniform", 20, seed=0), time_limit=1e-12)
    assert solve_lap(generate("uniform", 20, seed=0), time_limit=10.0).cost > 0


@pytest.mark.parametrize("kind", ["csr_matrix", "csr_array"])
def test_canonical_csr_is_used_without_a_copy_and_left_as_given(kind: str) -> None:
    """A canonical float64 CSR is wrapped, not copied, and nothing downstream writes to it:
    a maximizing solve and ranking (which negate their costs) leave the caller's data be."""
    frame = gated(60, seed=4)
    cost = frame if kind == "csr_matrix" else sp.csr_array(frame)
    before = cost.data.copy()
    wrapped = sparse.as_csr(cost)
    assert wrapped is not cost and np.shares_memory(wrapped.data, cost.data)
    best = solve_lap(cost, maximize=True)
    ranked = ranked_assignments(cost, 5, maximize=True)
    np.testing.assert_array_equal(cost.data, before)
    dense = np.where(frame.toarray() != 0, frame.toarray(), -1e6)
    rows, cols = linear_sum_assignment(dense, maximize=True)
    assert best.cost == pytest.approx(dense[rows, cols].sum(), rel=1e-12)
    assert ranked.costs[0] == pytest.approx(best.cost, rel=1e-12)


@pytest.mark.parametrize(
    ("indptr", "indices", "data", "canonical"),
    [
        ([0, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0], True),
        ([0, 2, 3], [2, 0, 1], [1.0, 2.0, 3.0], False),  # unsorted row
        ([0, 2, 3], [1, 1, 1], [1.0, 2.0, 3.0], False),  # repeated pair
        ([0, 2, 3], [0, 3, 1], [1.0, 2.0, 3.0], False),  # column out of range
        ([0, 2, 2], [0, 2, 1], [1.0, 2.0, 3.0], False),  # stored tail past indptr[-1]
        ([1, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0], False),  # indptr not from 0
        ([0, 3, 2], [0, 1, 2], [1.0, 2.0, 3.0], False),  # indptr decreasing
        ([0, 2, 3], [0, 2, 1], [1.0, np.inf, 3.0], False),  # not finite
    ],
)
def test_is_canonical_accepts_only_what_the_kernels_may_index_as_is(
    indptr: list, indices: list, data: list, canonical: bool
) -> None:
    assert sparse.is_canonical(np.array(indptr), np.array(indices), np.array(data), 3) is (
        canonical
    )


def test_non_canonical_csr_still_takes_the_checked_path() -> None:
    """Unsorted rows are sorted on a copy (the caller's order kept); a repeated pair is named."""
    unsorted = sp.csr_matrix((np.array([5.0, 1.0, 2.0, 7.0]), np.array([1, 0, 0, 1]),
                              np.array([0, 2, 4])), shape=(2, 2))
    unsorted.has_sorted_indices = False
    order = unsorted.indices.copy()
    assert solve_lap(unsorted).cost == pytest.approx(5.0 + 2.0)
    np.testing.assert_array_equal(unsorted.indices, order)
    repeated = sp.csr_matrix((np.array([5.0, 1.0, 2.0]), np.array([1, 1, 0]),
                              np.array([0, 2, 3])), shape=(2, 2))
    with pytest.raises(InputError, match=r"stores \(0, 1\) more than once"):
        solve_lap(repeated)
