"""Exact Pyomo MIP of fair k-clustering of a small graph: the ground truth for spectral methods.

Binary x[i, c] puts node i in cluster c; every cluster holds each group within `tolerance`
of its graph-wide share; the objective is the cut or the ratio cut sum_c cut(C_c)/|C_c|,
made linear with one binary per (cluster, size) pair. Solve with coplug.plugins.solve
(SCIP or HiGHS); meant for graphs of a few dozen nodes.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from coplug.formulations.fair_graphs import check_n_clusters, validate_fair_graph
from coplug.plugins.errors import InputError

OBJECTIVES = ("ratio_cut", "cut")


def fair_clustering_mip(
    graph: Any,
    groups: Any,
    n_clusters: int,
    objective: str = "ratio_cut",
    tolerance: float = 0.0,
) -> pyo.ConcreteModel:
    """Build the fair k-clustering MIP; read the partition back with `mip_labels`."""
    if objective not in OBJECTIVES:
        raise InputError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) \
            or not 0 <= tolerance < 1:
        raise InputError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    adjacency, codes = validate_fair_graph(graph, groups, check_n_clusters(n_clusters))
    n, k = adjacency.shape[0], int(n_clusters)
    share = np.bincount(codes) / n
    upper = sp.triu(adjacency, k=1).tocoo()
    edges = list(zip(upper.row.tolist(), upper.col.tolist(), upper.data.tolist(), strict=True))

    m = pyo.ConcreteModel(name="fair_clustering")
    m.N = pyo.RangeSet(0, n - 1)
    m.C = pyo.RangeSet(0, k - 1)
    m.E = pyo.RangeSet(0, len(edges) - 1)
    m.S = pyo.RangeSet(0, share.size - 1)
    m.x = pyo.Var(m.N, m.C, domain=pyo.Binary)
    m.y = pyo.Var(m.E, m.C, domain=pyo.NonNegativeReals)
    m.assign = pyo.Constraint(m.N, rule=lambda m, i: sum(m.x[i, c] for c in m.C) == 1)
    m.nonempty = pyo.Constraint(m.C, rule=lambda m, c: sum(m.x[i, c] for i in m.N) >= 1)
    for i in range(n):
        for c in range(i + 1, k):
            m.x[i, c].fix(0)
    m.cut_out = pyo.Constraint(
        m.E, m.C, rule=lambda m, e, c: m.y[e, c] >= m.x[edges[e][0], c] - m.x[edges[e][1], c]
    )
    m.cut_in = pyo.Constraint(
        m.E, m.C, rule=lambda m, e, c: m.y[e, c] >= m.x[edges[e][1], c] - m.x[edges[e][0], c]
    )

    def size(m: pyo.ConcreteModel, c: int) -> Any:
        return sum(m.x[i, c] for i in m.N)

    def members(m: pyo.ConcreteModel, c: int, s: int) -> Any:
        return sum(m.x[i, c] for i in np.flatnonzero(codes == s).tolist())

    m.fair_low = pyo.Constraint(
        m.C, m.S, rule=lambda m, c, s: members(m, c, s) >= (share[s] - tolerance) * size(m, c)
    )
    m.fair_high = pyo.Constraint(
        m.C, m.S, rule=lambda m, c, s: members(m, c, s) <= (share[s] + tolerance) * size(m, c)
    )
    m.cut = pyo.Expression(
        m.C, rule=lambda m, c: sum(edges[e][2] * m.y[e, c] for e in m.E)
    )
    if objective == "cut":
        m.objective = pyo.Objective(expr=sum(m.cut[c] for c in m.C) / 2)
        return m
    total = float(sum(w for _, _, w in edges))
    m.M = pyo.RangeSet(1, n)
    m.z = pyo.Var(m.C, m.M, domain=pyo.Binary)
    m.t = pyo.Var(m.C, domain=pyo.NonNegativeReals)
    m.one_size = pyo.Constraint(m.C, rule=lambda m, c: sum(m.z[c, s] for s in m.M) == 1)
    m.size_link = pyo.Constraint(
        m.C, rule=lambda m, c: size(m, c) == sum(s * m.z[c, s] for s in m.M)
    )
    m.ratio = pyo.Constraint(
        m.C, m.M, rule=lambda m, c, s: m.t[c] >= m.cut[c] / s - total * (1 - m.z[c, s])
    )
    m.objective = pyo.Objective(expr=sum(m.t[c] for c in m.C))
    return m


def mip_labels(model: pyo.ConcreteModel) -> np.ndarray:
    """Cluster label of each node from a solved fair-clustering MIP."""
    n = len(model.N)
    labels = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for c in model.C:
            if (model.x[i, c].value or 0.0) > 0.5:
                labels[i] = c
    if (labels < 0).any():
        raise InputError("the model holds no solution: solve it first")
    return labels


def registry_model(size: int, seed: int) -> pyo.ConcreteModel:
    """`coplug solve fair_clustering --size N`: exact fair 2-clustering of two planted
    communities of about N/2 nodes each (half of each group in each)."""
    from coplug.formulations.fair_graphs import fair_communities

    data = fair_communities(max(2, size // 4 * 2), seed=seed)
    return fair_clustering_mip(data.adjacency, data.groups, 2)
