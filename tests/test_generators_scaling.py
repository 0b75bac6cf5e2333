"""Generators rewritten to scale (open-pit ore bodies in a window, auction item rows from an
inverted index, isolated SBM nodes joined all at once) give what the straightforward,
quadratic constructions gave, seed for seed."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

from coplug.formulations import fair_graphs, mip_families, openpit


def _reference_grades(size: int, seed: int, dims: int, max_depth: int = 8) -> np.ndarray:
    """`random_block_model`'s values with every ore body added over the whole grid."""
    rng = np.random.default_rng(seed)
    if dims == 2:
        nz = int(np.clip(round(size**0.5 / 3), 2, max_depth))
        shape: tuple[int, ...] = (nz, max(2, size // nz))
    else:
        nz = int(np.clip(round(size ** (1 / 3) / 2), 2, max_depth))
        side = max(2, int(round((size / nz) ** 0.5)))
        shape = (nz, side, side)
    grids = np.indices(shape).astype(float)
    grade = np.zeros(shape)
    for _ in range(max(1, int(np.prod(shape[1:])) // 25)):
        centre = [rng.uniform(0.4, 1.0) * shape[0]] + [rng.uniform(0, s) for s in shape[1:]]
        spread = rng.uniform(1.0, 3.0)
        dist2 = sum((g - c) ** 2 for g, c in zip(grids, centre, strict=True))
        grade += rng.uniform(4, 12) * np.exp(-dist2 / (2 * spread**2))
    return np.round(grade - 1.0 + rng.normal(0, 0.3, size=shape), 1)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("size", [4, 60, 700, 5000])
def test_block_model_values_match_the_whole_grid_construction(dims, size):
    for seed in range(4):
        got = openpit.random_block_model(size, seed, dims=dims).values
        assert np.array_equal(got, _reference_grades(size, seed, dims)), (size, seed)


def test_auction_item_rows_list_exactly_the_bids_on_each_item():
    m = mip_families.cauction(80, seed=3)
    rows = {i: [v.index() for v in pyo.expr.identify_variables(m.item[i].body)]
            for i in m.item}
    for bids in rows.values():
        assert bids == sorted(set(bids))  # each bid once, in bid order, as before
    on_bid = {b: sum(b in bids for bids in rows.values()) for b in m.B}
    assert all(1 <= count <= 8 for count in on_bid.values())  # bundles hold 1..8 items
    assert sum(len(bids) for bids in rows.values()) == sum(on_bid.values())


def _reference_partners(isolated, block, members, rng):
    """The node-by-node draw `_connect_isolated` makes all at once."""
    partners = []
    for v in isolated:
        peers = members[block[v]]
        peers = peers[peers != v] if peers.size > 1 else np.delete(np.arange(block.size), v)
        partners.append(peers[rng.integers(peers.size)])
    return np.array(partners)


@pytest.mark.parametrize("seed", range(6))
def test_isolated_nodes_get_the_partners_a_loop_would_draw(seed):
    rng = np.random.default_rng(100 + seed)
    blocks = 7
    block = np.concatenate(([blocks + 1], rng.permutation(np.arange(57) % blocks),
                            [blocks, blocks]))  # node 0 alone in its block: any other node
    members = [np.flatnonzero(block == b) for b in range(blocks + 2)]
    empty = sp.csr_matrix((60, 60))
    got = fair_graphs._connect_isolated(empty, block, members, np.random.default_rng(seed))
    partners = _reference_partners(np.arange(60), block, members, np.random.default_rng(seed))
    expected = sp.coo_matrix((np.ones(60), (np.arange(60), partners)), shape=(60, 60))
    expected = ((expected + expected.T) > 0).astype(float)
    assert (got != expected).nnz == 0
    assert (got.diagonal() == 0).all()
    rows, cols = got.nonzero()
    away = (rows != 0) & (cols != 0)
    assert (block[rows[away]] == block[cols[away]]).all()


def test_sparse_sbm_is_unchanged_by_the_vectorised_join(monkeypatch):
    fast = fair_graphs.fair_sbm(3000, avg_degree=0.5, seed=4)

    def loop(adjacency, block, members, rng):
        isolated = np.flatnonzero(np.diff(adjacency.indptr) == 0)
        partners = _reference_partners(isolated, block, members, rng)
        extra = sp.coo_matrix((np.ones(isolated.size), (isolated, partners)),
                              shape=adjacency.shape)
        return ((adjacency + extra + extra.T) > 0).astype(float).tocsr()

    monkeypatch.setattr(fair_graphs, "_connect_isolated", loop)
    slow = fair_graphs.fair_sbm(3000, avg_degree=0.5, seed=4)
    assert (fast.adjacency != slow.adjacency).nnz == 0
