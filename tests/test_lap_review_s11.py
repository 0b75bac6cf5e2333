"""Review s11 of the LAP plugin: inputs that gave wrong answers, raw tracebacks or silent
acceptance before, each checked against scipy or for a named coplug error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from coplug.learned.rowdualnet import load
from coplug.plugins.errors import InputError
from coplug.plugins.lap import solve_lap

FMAX = np.finfo(np.float64).max


def _scipy_cost(c: np.ndarray, maximize: bool = False) -> float:
    """scipy's optimal objective of the dense matrix `c`."""
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    return float(c[rows, cols].sum())


def _csr_with_column(column: int) -> sp.csr_matrix:
    """A 2x2 CSR whose second stored entry is moved to `column` behind scipy's back."""
    c = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 1, 1]), np.array([0, 2, 3])),
                      shape=(2, 2))
    c.indices[1] = column
    return c


@pytest.mark.parametrize(("column", "message"), [(5, "indices must be < 2"),
                                                 (-1, "indices must be >= 0")])
def test_sparse_indices_outside_the_shape_are_refused(column: int, message: str) -> None:
    c = _csr_with_column(column)
    with pytest.raises(InputError, match=f"invalid index arrays: {message}"):
        solve_lap(c)
    assert c.indices[1] == column  # the caller's matrix is left as it was
    with pytest.raises(InputError, match="invalid index arrays"):
        solve_lap(c.T)  # the same defect in CSC form


def test_coo_and_index_pointer_defects_are_refused() -> None:
    coo = sp.coo_matrix((np.array([1.0, 2.0, 3.0]), (np.array([0, 0, 1]), np.array([0, 1, 1]))),
                        shape=(2, 2))
    coo.col[1] = 9
    with pytest.raises(InputError, match="index 9 exceeds matrix dimension 2"):
        solve_lap(coo)
    c = _csr_with_column(1)
    c.indptr[:] = [0, 2, 7]
    with pytest.raises(InputError, match="invalid index arrays: Last value of index pointer"):
        solve_lap(c)


@pytest.mark.parametrize("duals", [np.full(4, FMAX), np.full(4, -FMAX),
                                   np.array([FMAX, -FMAX, FMAX, -FMAX])])
@pytest.mark.parametrize("maximize", [False, True])
def test_given_duals_near_the_float_maximum_warn_nothing(duals, maximize: bool) -> None:
    c = np.random.default_rng(0).random((4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # np.median overflowed: "overflow encountered in reduce"
        solution = solve_lap(c, row_duals=duals, maximize=maximize)
    assert solution.cost == pytest.approx(_scipy_cost(c, maximize), abs=1e-12)


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.parametrize("big", [1e308, FMAX])
def test_rowdualnet_duals_stay_finite_next_to_costs_near_the_float_maximum(big: float) -> None:
    rng = np.random.default_rng(0)
    c = rng.random((80, 80))
    c[rng.random(c.shape) < 0.05] = big
    net = load()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        duals = net.predict_duals(c)
        assert np.isfinite(duals).all()  # 2.0 ** 1024 overflowed: the duals came back NaN
        assert np.isfinite(net.predict_duals(np.full((5, 5), -FMAX))).all()
        solution = solve_lap(c, predictor=net)
    assert solution.info["prediction"] == "used"
    assert solution.cost == pytest.approx(_scipy_cost(c), abs=1e-12)


@pytest.mark.parametrize("shift", [0.0, -1.0])
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_rectangular_solves_own_duals_start_it_at_its_optimum(
    shift: float, maximize: bool, sparse: bool
) -> None:
    c = np.random.default_rng(0).random((300, 599)) + shift
    given = sp.csr_matrix(c) if sparse else c  # no zero entries: every pair is allowed
    previous = solve_lap(given, maximize=maximize)
    warm = solve_lap(given, maximize=maximize, row_duals=previous.row_duals)
    assert warm.warm and not warm.fallback  # was 365 augmentations and a cold re-solve
    # was 297 of 300 rows when the costs were negative; 34-35 since the cold rectangular
    # start is row reduction: its optimal duals tie more rows with alternative columns, and
    # the Min-Trick's first-row tie-break hands some of those to the wrong row
    assert warm.augmentations <= 40
    assert warm.cost == pytest.approx(_scipy_cost(c, maximize), abs=1e-9)


@pytest.mark.parametrize("to_sparse", [np.asarray, sp.csr_matrix, sp.coo_array])
def test_integer_costs_float64_would_round_are_refused(to_sparse) -> None:
    c = np.array([[2**63 - 1, 2**63 - 2], [2**63 - 4, 2**63 - 1]], dtype=np.int64)
    # float64 made all four equal and returned the diagonal, 4 above the exact optimum
    with pytest.raises(InputError, match="integer 9223372036854775807, which float64 .* "
                       "rounds to 9223372036854775808"):
        solve_lap(to_sparse(c))
    with pytest.raises(InputError, match="integer 18446744073709551615"):
        solve_lap(to_sparse(np.array([[2**64 - 1, 0], [0, 1]], dtype=np.uint64)))
    with pytest.raises(InputError, match="integer 9007199254740993"):
        solve_lap(to_sparse(np.array([[2**53 + 1, 0], [0, 1]], dtype=np.int64)))
    exact = np.array([[2**62, -(2**63)], [2**53, 1]], dtype=np.int64)  # representable: solved
    assert solve_lap(to_sparse(exact), maximize=True).cost == 2.0**62 + 1
