"""Graphs with protected-group labels for fair clustering: seeded SBMs, bundled real graphs,
and the validation every fair-clustering method runs first."""

from __future__ import annotations

import numbers
import reprlib
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp

from coplug.formulations.checks import (
    check_count,
    check_memory,
    check_positive,
    check_seed,
    numeric_array,
)
from coplug.formulations.fair_metrics import recode_labels
from coplug.plugins.arguments import finite_real, refuse_masked
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality


@dataclass(frozen=True, eq=False)
class FairGraph(ValueEquality):
    """A symmetric sparse adjacency, one group code per node, and an optional planted labelling."""

    adjacency: sp.csr_matrix
    groups: np.ndarray
    name: str = "graph"
    planted: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of nodes."""
        return int(self.adjacency.shape[0])


def as_adjacency(graph: Any) -> sp.csr_matrix:
    """A networkx graph, scipy sparse matrix or dense array as a float CSR adjacency."""
    if isinstance(graph, FairGraph):
        return graph.adjacency
    if isinstance(graph, nx.Graph):
        if graph.is_directed():
            raise InputError("fair clustering needs an undirected graph, got a directed one")
        if graph.number_of_nodes() == 0:
            raise InputError("the graph has no nodes")
        _check_edge_weights(graph)
        return sp.csr_matrix(nx.to_scipy_sparse_array(graph, weight="weight", dtype=float))
    refuse_masked(graph, "adjacency")
    if (sp.issparse(graph) or isinstance(graph, np.ndarray)) and graph.dtype.kind == "c":
        raise InputError("adjacency weights must be real numbers, got a complex matrix")
    if isinstance(graph, np.ndarray) and graph.ndim != 2:  # csr_matrix made (12,) a (1, 12)
        raise InputError(f"adjacency must be a square 2-D matrix, got shape {graph.shape}")
    try:
        if sp.issparse(graph):
            return sp.csr_matrix(graph, dtype=float)
        if isinstance(graph, np.ndarray):
            return sp.csr_matrix(graph.astype(float))
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"adjacency weights must be real numbers: {exc}") from None
    raise InputError(
        f"graph must be a networkx Graph, a scipy sparse or a numpy adjacency, "
        f"got {type(graph).__name__}"
    )


def _check_edge_weights(graph: nx.Graph) -> None:
    """Refuse an edge whose "weight" attribute is not a real number, naming the edge."""
    for u, v, weight in graph.edges(data="weight", default=1.0):
        try:
            float(weight)
        except (ValueError, TypeError, OverflowError):  # OverflowError: an int past 1e308
            raise InputError(f"edge ({u!r}, {v!r}) has weight {reprlib.repr(weight)}: edge "
                             "weights must be real numbers") from None


def group_codes(graph: Any, groups: Any, n_groups: int | None = None) -> np.ndarray:
    """Group labels as codes 0..h-1 (a node-attribute name is read off a networkx graph)."""
    if isinstance(groups, str):
        if not isinstance(graph, nx.Graph):
            raise InputError(f"groups={groups!r} names a node attribute: pass a networkx graph")
        missing = [v for v, d in graph.nodes(data=True) if groups not in d]
        if missing:
            raise InputError(f"node {missing[0]!r} has no attribute {groups!r}")
        groups = [d[groups] for _, d in graph.nodes(data=True)]
    refuse_masked(groups, "groups")
    labels = np.asarray(groups)
    if labels.ndim != 1:
        raise InputError(f"groups must be one label per node (1-D), got shape {labels.shape}")
    if n_groups is not None:
        if not np.issubdtype(labels.dtype, np.integer):
            raise InputError("with n_groups, groups must be integer codes 0..n_groups-1")
        if labels.size and (labels.min() < 0 or labels.max() >= n_groups):
            raise InputError(f"group codes must lie in 0..{n_groups - 1}")
        absent = sorted(set(range(n_groups)) - set(labels.tolist()))
        if absent:
            raise InputError(f"group {absent[0]} is absent: no node carries it")
        return labels.astype(np.int64)
    return recode_labels(labels, "groups").astype(np.int64)


def check_n_clusters(n_clusters: Any) -> int:
    """n_clusters as an int, refusing None, bools, NaN, infinities and non-integers."""
    number = isinstance(n_clusters, int | float | np.integer | np.floating) \
        and finite_real(n_clusters)
    if not (number and int(n_clusters) == n_clusters and n_clusters >= 1):
        raise InputError(f"n_clusters must be a positive integer, got {n_clusters!r}")
    return int(n_clusters)


def check_adjacency(adjacency: sp.csr_matrix) -> sp.csr_matrix:
    """Refuse a non-square, non-finite, negative or asymmetric adjacency (returned as is):
    cuts and Laplacians of such a matrix are NaN or meaningless, never an error."""
    if adjacency.shape[0] != adjacency.shape[1]:
        raise InputError(f"adjacency must be square, got shape {adjacency.shape}")
    if adjacency.shape[0] == 0:
        raise InputError("the graph has no nodes")
    if not np.isfinite(adjacency.data).all():
        raise InputError("adjacency has NaN or infinite weights")
    if (adjacency.data < 0).any():
        raise InputError("adjacency has negative weights")
    if not np.isfinite(adjacency.data.sum()):  # degrees and cuts would be inf, then NaN
        raise InputError("adjacency's weights add up past the float range (degrees overflow): "
                         "divide them by a common factor")
    if abs(adjacency - adjacency.T).max() > 1e-9 * abs(adjacency).max():  # relative only:
        # with a floor of 1, a fully directed graph of weights 1e-9 passed as undirected
        raise InputError("adjacency is not symmetric: fair clustering needs an undirected graph")
    return adjacency


def validate_fair_graph(
    graph: Any, groups: Any, n_clusters: int | None = None, n_groups: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Check a graph and its groups for fair clustering; return (CSR adjacency, group codes).

    `groups=None` checks the graph alone (plain spectral clustering) and returns zeros.
    """
    adjacency = check_adjacency(as_adjacency(graph))
    n = adjacency.shape[0]
    codes = np.zeros(n, dtype=np.int64)
    if groups is not None:
        codes = group_codes(graph, groups, n_groups)
        if codes.size != n:
            raise InputError(f"groups has {codes.size} labels for a graph of {n} nodes")
        if codes.max(initial=0) < 1:
            raise InputError("all nodes are in one group: fairness needs at least two groups")
    degree = np.asarray(adjacency.sum(axis=1)).ravel() - adjacency.diagonal()
    isolated = np.flatnonzero(degree <= 0)
    if isolated.size:
        first = int(isolated[0])  # a networkx graph's nodes by name, in G.nodes order
        name = list(graph.nodes)[first] if isinstance(graph, nx.Graph) else first
        raise InputError(
            f"graph has {isolated.size} isolated node(s), e.g. node {name!r}: "
            "remove them or connect them"
        )
    if n_clusters is not None:
        n_clusters = check_n_clusters(n_clusters)
        if n_clusters > n:
            raise InputError(f"n_clusters={n_clusters} is larger than the {n} nodes")
    return adjacency, codes


def fair_sbm(
    n: int,
    n_clusters: int = 5,
    n_groups: int = 2,
    avg_degree: float = 30.0,
    affinity: tuple[float, float, float, float] = (6.0, 5.0, 1.5, 1.0),
    group_share: tuple[float, ...] | None = None,
    seed: int = 0,
) -> FairGraph:
    """Sparse SBM of Kleindessner et al. (2019): planted clusters as fair as the groups allow.

    Group labels are drawn at random (`group_share`), then each group's members are spread
    evenly over the clusters, so a cluster's share of a group is off by at most one member:
    an exactly fair partition exists only where every group's size divides by n_clusters
    (at n = 24, k = 3 the groups drawn were 10 and 14 and `fair_clustering_mip` at tolerance
    0 is infeasible; give it a tolerance on small graphs).

    `affinity` = relative edge rates (same cluster & group, same cluster only, same group
    only, neither), scaled so the expected degree is `avg_degree`. Edges are drawn block by
    block (binomial counts, then uniform pairs), so n = 100,000 takes seconds.
    """
    n, n_clusters = check_count(n, "n", 1), check_count(n_clusters, "n_clusters", 1)
    n_groups, seed = check_count(n_groups, "n_groups", 2), check_seed(seed)
    if n < n_clusters * n_groups:
        raise InputError(f"n={n} is smaller than n_clusters*n_groups={n_clusters * n_groups}")
    avg_degree = check_positive(avg_degree, "avg_degree")
    rates = numeric_array(affinity, "affinity") if affinity is not None else np.array([])
    if rates.shape != (4,) or not np.isfinite(rates).all() or (rates < 0).any() or \
            rates.max() <= 0:
        raise InputError(f"affinity must be 4 finite rates >= 0, not all 0, got {affinity!r}")
    check_memory(sbm_bytes(n, n_clusters * n_groups, avg_degree), f"fair_sbm(n={n})",
                 "use a smaller n or avg_degree (coplug fairsc: --n, --degree)")
    rng = np.random.default_rng(seed)
    share = (np.full(n_groups, 1.0 / n_groups) if group_share is None
             else numeric_array(group_share, "group_share"))
    if share.shape != (n_groups,) or not (np.isfinite(share) & (share > 0)).all():
        raise InputError(f"group_share must be {n_groups} positive numbers, got {group_share!r}")
    share = share / share.max()  # relative: (1e308, 1e308) summed to inf first
    share = share / share.sum()
    groups = _at_least(rng.choice(n_groups, size=n, p=share), n_groups, n_clusters, rng)
    clusters = np.empty(n, dtype=np.int64)
    for g in range(n_groups):
        members = np.flatnonzero(groups == g)
        clusters[members] = rng.permutation(np.arange(members.size) % n_clusters)
    block = clusters * n_groups + groups
    members = [np.flatnonzero(block == b) for b in range(n_clusters * n_groups)]
    a, b, c, d = (float(rate) for rate in rates / rates.max())  # relative: (1e308, 5, ..)
    rate = np.empty((len(members), len(members)))
    for i in range(len(members)):
        for j in range(len(members)):
            same_c, same_g = i // n_groups == j // n_groups, i % n_groups == j % n_groups
            rate[i, j] = a if same_c and same_g else b if same_c else c if same_g else d
    sizes = np.array([m.size for m in members], dtype=float)
    scale = avg_degree * n / (sizes @ rate @ sizes)
    rows, cols = [], []
    for i in range(len(members)):
        for j in range(i, len(members)):
            pairs = sizes[i] * sizes[j] if i != j else sizes[i] * (sizes[i] - 1) / 2
            m = rng.binomial(int(pairs), min(1.0, rate[i, j] * scale))
            rows.append(rng.choice(members[i], size=m))
            cols.append(rng.choice(members[j], size=m))
    r, c_ = np.concatenate(rows), np.concatenate(cols)
    keep = r != c_
    adjacency = sp.coo_matrix((np.ones(keep.sum()), (r[keep], c_[keep])), shape=(n, n)).tocsr()
    adjacency = ((adjacency + adjacency.T) > 0).astype(float).tocsr()
    adjacency = _connect_isolated(adjacency, block, members, rng)
    return FairGraph(adjacency, groups, f"fair_sbm(n={n},k={n_clusters})", clusters)


def _at_least(
    groups: np.ndarray, n_groups: int, minimum: int, rng: np.random.Generator
) -> np.ndarray:
    """Group codes where every group has `minimum` nodes, moving random nodes of the largest
    group to any group the draw left short (a small n could leave a group with fewer nodes
    than clusters, or none: a planted cluster without it is not fair). Needs n >= minimum *
    n_groups; a draw with no short group is returned unchanged."""
    counts = np.bincount(groups, minlength=n_groups)
    for g in np.flatnonzero(counts < minimum):
        while counts[g] < minimum:
            donor = int(np.argmax(counts))
            node = rng.choice(np.flatnonzero(groups == donor))
            groups[node], counts[donor], counts[g] = g, counts[donor] - 1, counts[g] + 1
    return groups


# Peak bytes fair_sbm holds per stored adjacency entry (n * avg_degree of them: drawn pairs,
# COO, its symmetrised CSR) and per node (group, cluster and block codes); measured 42 and
# under 80 at n = 200,000 and 400,000.
SBM_BYTES_PER_ENTRY = 48
SBM_BYTES_PER_NODE = 80


def sbm_bytes(n: int, blocks: int, avg_degree: float) -> float:
    """About the peak memory of `fair_sbm`: its edges, its per-node codes, its block rates."""
    return (SBM_BYTES_PER_ENTRY * float(n) * avg_degree + SBM_BYTES_PER_NODE * float(n)
            + 8.0 * blocks * blocks)


def _connect_isolated(
    adjacency: sp.csr_matrix, block: np.ndarray, members: list[np.ndarray], rng: np.random.Generator
) -> sp.csr_matrix:
    """Give each isolated node one edge inside its own block, so every node has a degree."""
    isolated = np.flatnonzero(np.diff(adjacency.indptr) == 0)
    if not isolated.size:
        return adjacency
    partners = _random_peers(isolated, block, np.array([m.size for m in members]), rng)
    extra = sp.coo_matrix((np.ones(isolated.size), (isolated, partners)), shape=adjacency.shape)
    return ((adjacency + extra + extra.T) > 0).astype(float).tocsr()


def _random_peers(nodes: np.ndarray, block: np.ndarray, sizes: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
    """For each node, one other node of its block drawn uniformly (any other node where it is
    alone in its block), all at once: one draw per node, in order, as a loop would draw."""
    order = np.argsort(block, kind="stable")  # the blocks' members, one block after another
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    own = np.empty_like(order)
    own[order] = np.arange(order.size)  # a node's place in `order`
    alone = sizes[block[nodes]] == 1
    draws = rng.integers(np.where(alone, block.size, sizes[block[nodes]]) - 1)
    place = own[nodes] - starts[block[nodes]]  # the node's own place within its block
    inside = np.where(alone, 0, starts[block[nodes]] + draws + (draws >= place))
    return np.where(alone, draws + (draws >= nodes), order[inside])


def fair_communities(size: int = 6, p_in: float = 0.8, seed: int = 5) -> FairGraph:
    """Two dense communities of `size` nodes (half of each group in each) joined by two edges:
    a tiny graph whose fair optimum is the planted split, small enough for the exact MIP."""
    if check_count(size, "size", 2) % 2:
        raise InputError(f"size must be an even number >= 2, got {size}")
    real = isinstance(p_in, numbers.Real) and not isinstance(p_in, (bool, np.bool_))
    if not (real and 0 <= p_in <= 1):  # NaN fails both; True was a probability of 1
        raise InputError(f"p_in must be a probability in [0, 1], got {p_in!r}")
    check_memory(40.0 * size * (size * p_in + 2), f"fair_communities(size={size})",
                 "it is a dense graph: use a smaller size or fair_sbm")
    rng = np.random.default_rng(check_seed(seed))
    ends = [np.array([0, size // 2]), np.array([size, size + size // 2])]  # the two bridges
    for start in (0, size):
        for i in range(size - 1):
            far = np.flatnonzero(rng.random(size - i - 2) < p_in) + i + 2  # j > i + 1
            tail = np.concatenate([[i + 1], far]) + start
            ends.append(np.full(tail.size, i + start))
            ends.append(tail)
    rows, cols = np.concatenate(ends[0::2]), np.concatenate(ends[1::2])
    adjacency = sp.csr_matrix((np.ones(2 * rows.size), (np.r_[rows, cols], np.r_[cols, rows])),
                              shape=(2 * size, 2 * size))
    groups = np.tile(np.repeat([0, 1], size // 2), 2)
    planted = np.repeat([0, 1], size)
    return FairGraph(adjacency, groups, f"fair_communities({2 * size})", planted)


def karate_club() -> FairGraph:
    """Zachary's karate club (networkx), groups = the two clubs members joined."""
    graph = nx.karate_club_graph()
    adjacency = as_adjacency(graph)
    return FairGraph(adjacency, group_codes(graph, "club"), "karate_club")


def davis_southern_women() -> FairGraph:
    """Davis southern women (networkx), groups = woman or event node (bipartite side)."""
    graph = nx.davis_southern_women_graph()
    return FairGraph(as_adjacency(graph), group_codes(graph, "bipartite"), "davis_southern_women")


def diabetes_knn(n_neighbors: int = 10) -> FairGraph:
    """kNN graph on scikit-learn's bundled diabetes data (442 patients), groups = sex.

    The sex column is the sensitive attribute and is left out of the features.
    """
    from sklearn.datasets import load_diabetes
    from sklearn.neighbors import kneighbors_graph
    from sklearn.preprocessing import StandardScaler

    data = load_diabetes()
    n_neighbors = check_count(n_neighbors, "diabetes_knn n_neighbors", 1,
                              data.data.shape[0] - 1)  # scikit-learn's errors otherwise
    sex = data.feature_names.index("sex")
    features = StandardScaler().fit_transform(np.delete(data.data, sex, axis=1))
    knn = kneighbors_graph(features, n_neighbors=n_neighbors, include_self=False)
    adjacency = sp.csr_matrix(knn.maximum(knn.T), dtype=float)
    return FairGraph(adjacency, group_codes(None, data.data[:, sex]), "diabetes_knn")


REAL_GRAPHS = {
    "karate": karate_club,
    "davis": davis_southern_women,
    "diabetes_knn": diabetes_knn,
}


def load_graph(name: str) -> FairGraph:
    """One of the bundled real graphs by name (see REAL_GRAPHS)."""
    if not isinstance(name, str) or name not in REAL_GRAPHS:
        raise InputError(f"unknown graph {name!r}; the bundled graphs are "
                         f"{', '.join(REAL_GRAPHS)} (a planted SBM is fair_sbm(...), "
                         "--graph sbm on the command line)")
    return REAL_GRAPHS[name]()
