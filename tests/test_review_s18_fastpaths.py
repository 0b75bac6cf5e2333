"""Review of the small-solve, copy-free CSR and rectangular row-reduction fast paths: inputs
the fast paths must take exactly as the kernel-by-kernel and checked paths do."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from coplug.plugins.errors import InputError
from coplug.plugins.lap import small
from coplug.plugins.lap.solver import solve_lap


@pytest.mark.parametrize("shape", [(6, 6), (4, 7)])
@pytest.mark.parametrize("passes", [2**63, 2**70, np.uint64(2**63)])
def test_arr_passes_beyond_int64_is_taken_by_the_one_call_path(shape, passes) -> None:
    """Any non-negative integer is a valid `arr_passes`; the kernel path's Python loop takes
    2**63 and more, and so must the one compiled call: it raised OverflowError or a numba
    TypingError, or (typed uint64, wrapped to a negative range) ran no pass at all."""
    c = np.random.default_rng(3).random(shape)
    rows, cols = linear_sum_assignment(c)
    fast = solve_lap(c, arr_passes=passes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(small, "MAX_ENTRIES", 0)
        kernels = solve_lap(c, arr_passes=passes)
    assert fast.cost == pytest.approx(c[rows, cols].sum(), rel=1e-12)
    np.testing.assert_array_equal(fast.col_ind, kernels.col_ind)
    assert fast.info["row_reduction_scans"] == kernels.info["row_reduction_scans"]


@pytest.mark.parametrize("indptr", [[0, 2], [0, 1, 2, 2], []])
def test_csr_whose_index_pointer_does_not_fit_its_shape_is_refused_by_name(indptr) -> None:
    """A CSR whose indptr was replaced by one of the wrong length (every entry otherwise in
    order; or empty, which `is_canonical` would read past) is named as invalid index arrays,
    not passed on to scipy's bare ValueError."""
    cost = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 1]), np.array([0, 1, 2])),
                         shape=(2, 2))
    cost.indptr = np.array(indptr, dtype=cost.indices.dtype)
    with pytest.raises(InputError, match="invalid index arrays: index pointer size"):
        solve_lap(cost)
