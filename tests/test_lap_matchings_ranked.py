"""ranked_matchings: the k best matchings (rows and columns may stay unmatched at a price)
equal brute force over every matching, dense, sparse and maximized; each comes back once."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coplug.plugins.errors import InputError
from coplug.plugins.lap import ranked_assignments, ranked_matchings

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _every_matching(c: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """(cost, pairs) of every matching of `c` (inf pairs forbidden), unmatched lines priced."""
    n, m = c.shape
    for choice in itertools.product(*[[*range(m), None] for _ in range(n)]):
        used = [j for j in choice if j is not None]
        if len(used) != len(set(used)):
            continue
        pairs = tuple((i, j) for i, j in enumerate(choice) if j is not None)
        total = sum(c[i, j] for i, j in pairs) + sum(
            rows[i] for i in range(n) if choice[i] is None) + sum(
            cols[j] for j in range(m) if j not in used)
        if np.isfinite(total):
            yield total, pairs


def _check(c, rows, cols, result, k: int, maximize: bool) -> None:
    """Brute force's k best costs, each solution a distinct valid matching priced right."""
    every = list(_every_matching(c, rows, cols))
    expected = sorted((cost for cost, _ in every), reverse=maximize)[:k]
    np.testing.assert_allclose(result.costs, expected, rtol=1e-9, atol=1e-9)
    assert result.status == ("k_found" if len(every) >= k else "exhausted")
    assert result.info["fallbacks"] == 0
    priced = dict((pairs, cost) for cost, pairs in every)
    seen = set()
    for s in result.solutions:
        pairs = tuple(zip(s.row_ind.tolist(), s.col_ind.tolist(), strict=True))
        assert pairs in priced and pairs not in seen
        seen.add(pairs)
        assert np.isclose(s.cost, priced[pairs], rtol=1e-12, atol=1e-9)


def _case():
    """A small cost matrix with per-row and per-column unmatched costs."""
    shapes = st.tuples(st.integers(1, 4), st.integers(1, 4))

    def build(shape):
        ints = st.integers(-3, 3).map(float)
        return st.tuples(arrays(np.float64, shape, elements=ints),
                         arrays(np.float64, shape[0], elements=ints),
                         arrays(np.float64, shape[1], elements=ints))
    return shapes.flatmap(build)


@SETTINGS
@given(_case(), st.integers(1, 80), st.booleans())
def test_k_best_matchings_equal_brute_force(case, k: int, maximize: bool) -> None:
    c, rows, cols = case
    result = ranked_matchings(c, k, row_cost=rows, col_cost=cols, maximize=maximize)
    _check(c, rows, cols, result, k, maximize)


@SETTINGS
@given(_case(), st.data(), st.booleans())
def test_sparse_matchings_equal_brute_force(case, data: st.DataObject, maximize: bool) -> None:
    c, rows, cols = case
    mask = data.draw(arrays(np.bool_, c.shape))
    r, q = np.nonzero(mask)
    result = ranked_matchings(sp.coo_matrix((c[r, q], (r, q)), shape=c.shape), 50,
                              row_cost=rows, col_cost=cols, maximize=maximize)
    _check(np.where(mask, c, np.inf), rows, cols, result, 50, maximize)


def test_a_tracking_frame_ranks_hypotheses_with_misses_and_false_alarms() -> None:
    rng = np.random.default_rng(3)
    tracks, detections = rng.random((12, 2)), rng.random((14, 2))
    distance = np.linalg.norm(tracks[:, None] - detections[None], axis=2)
    gated = sp.csr_matrix(np.where(distance < 0.3, distance, 0.0))  # pairs beyond the gate
    result = ranked_matchings(gated, 30, row_cost=0.25, col_cost=0.2)
    assert result.status == "k_found" and result.costs == sorted(result.costs)
    for s in result.solutions:
        assert (distance[s.row_ind, s.col_ind] < 0.3).all()
    # when every line must be matched and no price can pay for leaving one out, the best
    # matching of a square problem is the best assignment
    square = rng.random((6, 6))
    assert np.isclose(ranked_matchings(square, 1, row_cost=1e3, col_cost=1e3).costs[0],
                      ranked_assignments(square, 1).costs[0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"row_cost": [1.0, 2.0]}, "row_cost must be a number or 3 numbers"),
        ({"col_cost": np.inf}, "col_cost is inf"),
        ({"row_cost": "cheap"}, "row_cost must be a number"),
        ({"k": 0}, "k must be a positive integer"),
        ({"maximize": 1}, "maximize must be True or False"),
    ],
)
def test_bad_input_is_named(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        ranked_matchings(np.ones((3, 4)), **kwargs)
