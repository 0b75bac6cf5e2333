"""Split constraints that share variables into two sides (rows and columns) per connected
component, the shape an assignment block has, with scipy's sparse graph routines.

Each variable links the two constraints it appears in (an edge; several variables may link
the same two). networkx's bipartite colouring on that multigraph took 12 s for a 400 x 400
assignment model. Here one connected-components pass over the bipartite double cover (node
v as (v, 0) and (v, 1); edge a-b as (a, 0)-(b, 1) and (a, 1)-(b, 0)) colours every
component at once: a component is bipartite exactly when (v, 0) and (v, 1) fall apart, and
then v's side is whether (v, 0) lies with (root, 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components


@dataclass
class Component:
    """One connected component: its two sides when bipartite and the edges inside it."""

    nodes: list[int]
    side_a: list[int]
    side_b: list[int]
    bipartite: bool
    edges: np.ndarray  # positions in the edge list given to `split`


def split(n_nodes: int, ends: np.ndarray) -> list[Component]:
    """Components with at least one edge of the graph on `n_nodes` nodes with edges `ends`
    (E x 2 node pairs), in order of their smallest node, each with its two sides (the
    smallest node's is side_a). Lone nodes are left out: they link nothing."""
    ends = np.asarray(ends, dtype=np.int64).reshape(-1, 2)
    if n_nodes == 0:
        return []
    a, b = ends[:, 0], ends[:, 1]
    labels = _labels(n_nodes, a, b)
    cover = _labels(2 * n_nodes, np.concatenate([2 * a, 2 * a + 1]),
                    np.concatenate([2 * b + 1, 2 * b]))
    even, odd = cover[0::2], cover[1::2]
    order = np.argsort(labels, kind="stable")  # nodes grouped by component, ascending
    starts = np.flatnonzero(np.r_[True, labels[order][1:] != labels[order][:-1]])
    stops = np.r_[starts[1:], n_nodes]
    root = np.empty(n_nodes, dtype=np.int64)  # each node's smallest component mate
    root[order] = np.repeat(order[starts], stops - starts)  # stable sort: node order kept
    colour = (even != even[root]).astype(np.int64)
    odd_cycle = even == odd
    edge_order = np.argsort(labels[a], kind="stable")
    edge_starts = np.searchsorted(labels[a][edge_order], np.arange(labels.max(initial=-1) + 2))
    spans = [(lo, hi) for lo, hi in zip(starts, stops, strict=True) if hi - lo > 1]
    out = []
    for lo, hi in sorted(spans, key=lambda span: order[span[0]]):
        nodes = np.sort(order[lo:hi])
        label = labels[nodes[0]]
        out.append(Component(
            nodes=nodes.tolist(),
            side_a=nodes[colour[nodes] == 0].tolist(),
            side_b=nodes[colour[nodes] == 1].tolist(),
            bipartite=not odd_cycle[nodes].any(),
            edges=edge_order[edge_starts[label]:edge_starts[label + 1]],
        ))
    return out


def _labels(n_nodes: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component label of each node of the undirected graph with edges a-b."""
    ones = np.ones(len(a), dtype=np.float64)  # duplicates add up; int8 wrapped at 256
    adj = sp.coo_matrix((ones, (a, b)), shape=(n_nodes, n_nodes)).tocsr()
    return connected_components(adj, directed=False)[1]
