"""Maximum cardinality matching (`cardinality.maximum_matching`): its size equals
networkx's Hopcroft-Karp on random patterns, the matching uses stored pairs once each, a
deep deficient pattern names a row left out, and a gated tracking pattern on which scipy's
search took 5.8 s is checked at once."""

from __future__ import annotations

import time

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial import cKDTree

from coplug.plugins.errors import InputError
from coplug.plugins.lap import solve_lap
from coplug.plugins.lap.cardinality import maximum_matching
from coplug.plugins.lap.sparse import check_pattern


def _matched(csr: sp.csr_matrix) -> np.ndarray:
    """maximum_matching on a CSR, its validity checked: stored pairs, each column once."""
    match = maximum_matching(csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                             csr.shape[1])
    rows = np.flatnonzero(match >= 0)
    assert np.unique(match[rows]).size == rows.size
    assert (np.asarray(csr[rows, match[rows]]).ravel() != 0).all()
    return match


def _networkx_size(csr: sp.csr_matrix) -> int:
    """Maximum matching size by networkx's Hopcroft-Karp (the reference)."""
    n, m = csr.shape
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_nodes_from(range(n, n + m))
    coo = csr.tocoo()
    graph.add_edges_from(zip(coo.row.tolist(), (n + coo.col).tolist(), strict=True))
    return len(nx.bipartite.hopcroft_karp_matching(graph, top_nodes=range(n))) // 2


@pytest.mark.parametrize("seed", range(60))
def test_size_equals_networkx_on_random_patterns(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 40, size=2)
    csr = sp.random(n, m, density=float(rng.uniform(0.02, 0.3)), format="csr",
                    random_state=seed)
    csr.data[:] = 1.0
    assert int((_matched(csr) >= 0).sum()) == _networkx_size(csr)


def _ladder(levels: int) -> sp.csr_matrix:
    """Two extra rows above `levels` levels of two rows and two columns, each level's rows
    joined to both columns of their level and of the next: two rows more than columns,
    alternating paths `levels` deep and 2**levels of them."""
    rows, cols = [0, 0, 1, 1], [0, 1, 0, 1]
    for d in range(levels):
        for a in range(2):
            r = 2 + 2 * d + a
            for b in range(2):
                rows += [r] * (2 if d + 1 < levels else 1)
                cols += [2 * d + b, 2 * (d + 1) + b][: 2 if d + 1 < levels else 1]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(2 + 2 * levels,
                                                                   2 * levels))


def test_a_deep_layered_pattern_finishes_at_once_and_names_a_row_left_out() -> None:
    csr = _ladder(200)
    start = time.perf_counter()
    match = _matched(csr)
    assert time.perf_counter() - start < 5.0
    assert int((match >= 0).sum()) == 400 == _networkx_size(csr)
    with pytest.raises(InputError, match="at most 400 of 402 rows can be assigned"):
        check_pattern(csr)


def test_a_gated_tracking_pattern_is_checked_fast() -> None:
    # 10,000 tracks gated to their 8 nearest detections: scipy's check took 5.8 s here
    rng = np.random.default_rng(0)
    tracks = rng.random((10_000, 2))
    detections = tracks[rng.permutation(10_000)] + rng.normal(0, 0.002, tracks.shape)
    dist, near = cKDTree(detections).query(tracks, k=8)
    csr = sp.csr_matrix((dist.ravel() + 1.0, (np.repeat(np.arange(10_000), 8), near.ravel())),
                        shape=(10_000, 10_000))
    start = time.perf_counter()
    try:
        check_pattern(csr)
        feasible = True
    except InputError:
        feasible = False
    assert time.perf_counter() - start < 2.0
    assert feasible == (int((_matched(csr) >= 0).sum()) == 10_000)
    if feasible:
        assert solve_lap(csr).cost > 0


def test_solve_lap_names_an_infeasible_pattern_only_once_the_solve_fails() -> None:
    # the maximum matching runs only when the solve finds a row it cannot assign
    allowed = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]], float)
    with pytest.raises(InputError, match="at most 3 of 4 rows can be assigned"):
        solve_lap(sp.csr_matrix(allowed))
    tall = np.zeros((6, 4))
    tall[:2, :3] = 1.0  # columns 0-2 only at rows 0 and 1
    tall[:, 3] = 1.0
    with pytest.raises(InputError, match="at most 3 of 4 columns can be assigned"):
        solve_lap(sp.csr_matrix(tall))
