"""Review of the sparse ranking path (session 17): brute force over itertools is the
reference; each test names the input that showed a bug."""

from __future__ import annotations

import itertools
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from coplug.plugins.errors import InputError
from coplug.plugins.lap import ranked, ranked_assignments, ranked_matchings


def _every_assignment(pairs: dict[tuple[int, int], float], n: int,
                      cols: list[int]) -> dict[tuple[int, ...], float]:
    """Every assignment of rows 0..n-1 to distinct `cols` on the allowed `pairs`: the
    columns by row, and the cost."""
    out = {}
    for chosen in itertools.permutations(cols, n):
        if all((i, j) in pairs for i, j in enumerate(chosen)):
            out[chosen] = sum(pairs[i, j] for i, j in enumerate(chosen))
    return out


@pytest.mark.parametrize("tall", [False, True])
def test_a_wide_matrix_of_few_pairs_ranks_in_memory_of_its_pairs(tall: bool) -> None:
    # 4 x 300,000 storing 12 pairs: every cell of the ranking held O(300,000) arrays (the
    # matching matrix kept every empty column), 400 MB for k=60 (1.35 GB on 20 x 10**6)
    rng = np.random.default_rng(0)
    n, m = 4, 300_000
    rows = np.repeat(np.arange(n), 3)
    cols = rng.choice(m, rows.size, replace=False)
    costs = rng.integers(-5, 6, rows.size).astype(float)
    csr = sp.csr_matrix((costs, (rows, cols)), shape=(n, m))
    pairs = {(int(i), int(j)): float(c) for i, j, c in zip(rows, cols, costs, strict=True)}
    every = _every_assignment(pairs, n, sorted(set(cols.tolist())))
    tracemalloc.start()
    try:
        result = ranked_assignments(csr.T if tall else csr, 100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20
    assert result.status == "exhausted"
    np.testing.assert_allclose(result.costs, sorted(every.values()))
    seen = set()
    for s in result.solutions:
        r, q = (s.col_ind, s.row_ind) if tall else (s.row_ind, s.col_ind)
        assert np.array_equal(np.sort(r), np.arange(n))
        key = tuple(q[np.argsort(r)].tolist())
        assert key in every and key not in seen and s.cost == every[key]
        seen.add(key)


@pytest.mark.parametrize("share", [1.0, 0.0])
def test_matching_costs_too_large_are_named_without_a_numpy_warning(
    monkeypatch: pytest.MonkeyPatch, share: float,
) -> None:
    # the root solve's start duals subtracted 1e308 - (-1e308) before the overflow check
    # ran: "RuntimeWarning: overflow encountered in subtract" (an error under -W error)
    monkeypatch.setattr(ranked, "SPARSE_SHARE", share)
    cost = sp.csr_matrix(np.array([[1e308, 0.0], [0.0, 1.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="overflow"):
            ranked_matchings(cost, 5, col_cost=[-1e308, 0.0])


def _every_matching(pairs: dict[tuple[int, int], float], rows: np.ndarray,
                    cols: np.ndarray) -> dict[tuple[tuple[int, int], ...], float]:
    """Every matching on the allowed `pairs` (rows and columns left unmatched at `rows`,
    `cols`): its pairs in row order, and the cost."""
    out = {}
    keys = sorted(pairs)
    for size in range(min(rows.size, cols.size) + 1):
        for chosen in itertools.combinations(keys, size):
            if len({i for i, _ in chosen}) < size or len({j for _, j in chosen}) < size:
                continue
            free_rows = np.setdiff1d(np.arange(rows.size), [i for i, _ in chosen])
            free_cols = np.setdiff1d(np.arange(cols.size), [j for _, j in chosen])
            out[chosen] = (sum(pairs[p] for p in chosen) + rows[free_rows].sum()
                           + cols[free_cols].sum())
    return out


@pytest.mark.parametrize("tall", [False, True])
def test_matchings_of_a_wide_matrix_of_few_pairs_rank_in_memory_of_its_pairs(
    tall: bool,
) -> None:
    # 3 x 300,000 storing 6 pairs, scalar line costs: the matching matrix kept every empty
    # line, so each ranked cell held O(300,000) arrays (1.35 GB and 8 s on 20 x 10**6
    # storing 60 pairs, k=30)
    rng = np.random.default_rng(1)
    n, m = 3, 300_000
    rows = np.repeat(np.arange(n), 2)
    cols = rng.choice(m, rows.size, replace=False)
    costs = rng.integers(-5, 3, rows.size).astype(float)
    csr = sp.csr_matrix((costs, (rows, cols)), shape=(n, m))
    used = np.unique(cols)
    pairs = {(int(i), int(np.searchsorted(used, j))): float(c)
             for i, j, c in zip(rows, cols, costs, strict=True)}
    every = _every_matching(pairs, np.full(n, 0.5), np.full(used.size, 0.5))
    fixed = 0.5 * (m - used.size)
    tracemalloc.start()
    try:
        result = ranked_matchings(csr.T if tall else csr, 100, row_cost=0.5, col_cost=0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20
    assert result.status == "exhausted"
    np.testing.assert_allclose(result.costs, sorted(c + fixed for c in every.values()))
    seen = set()
    for s in result.solutions:
        r, q = (s.col_ind, s.row_ind) if tall else (s.row_ind, s.col_ind)
        key = tuple(sorted(zip(r.tolist(), np.searchsorted(used, q).tolist(), strict=True)))
        assert key in every and key not in seen
        assert s.cost == pytest.approx(every[key] + fixed, rel=1e-12)
        seen.add(key)
