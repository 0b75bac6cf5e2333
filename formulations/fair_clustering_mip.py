"""Exact Pyomo MIP of fair k-clustering of a small graph: the ground truth for spectral methods.

Binary x[i, c] puts node i in cluster c; every cluster holds each group within `tolerance`
of its graph-wide share; the objective is the cut or the ratio cut sum_c cut(C_c)/|C_c|.
One binary z[c, s] per cluster and admissible size s (a size at which some cluster can be
fair) picks the cluster's size, and the fairness rows bound each group's members by the
whole numbers that size allows, so no row tolerance can admit an unfair cluster.

The ratio cut is made linear edge by edge: ys[e, c, s] >= y[e, c] - (1 - z[c, s]), edge
e's cut indicator counted at the cluster's size with weight w_e / s. A big-M on the whole cut
(t_c >= cut_c/s - M (1 - z[c, s]), M the total weight) let the integrality tolerance
(z = 1 - 1e-6) hide about 1e-6 M of cut: with edges of weight 1e6 both solvers called a
partition of ratio cut 5 optimal at objective 0 (the optimum is 0.5).

Solve with coplug.plugins.solve (SCIP or HiGHS); meant for graphs of a few dozen nodes.
`mip_labels` reads the partition back and warns when the model's objective value is below its
ratio cut (or cut); `mip_objective` recomputes that value from the labels.
"""

from __future__ import annotations

import numbers
from functools import partial
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from coplug.formulations.checks import check_choice
from coplug.formulations.fair_graphs import check_n_clusters, validate_fair_graph
from coplug.formulations.fair_metrics import ratio_cut, recode_labels
from coplug.plugins.arguments import check_flag
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError

OBJECTIVES = ("ratio_cut", "cut")
# Relative disagreement between the solver's objective and the labels' own value that
# `mip_labels` reports (solver tolerances are 1e-6 to 1e-9 of each term).
OBJECTIVE_RTOL = 1e-5
# Edge weights spanning more than this (largest / smallest) are past what the solvers'
# tolerances (about 1e-7 of the largest coefficient) resolve: HiGHS returned a partition 7x
# worse than the optimum as optimal from a span of 3e8 on.
WEIGHT_SPAN_WARN = 1e7


def fair_sizes(counts: np.ndarray, n_clusters: int, tolerance: float) -> list[int]:
    """Cluster sizes s at which a cluster can hold each group g within `tolerance` of its share
    counts[g] / n: some integer m_g in [0, counts[g]] with |m_g - share_g s| <= tolerance s
    and sum_g m_g = s. Sizes above n - n_clusters + 1 cannot occur (the others are nonempty)."""
    n = int(counts.sum())
    sizes = []
    for s in range(1, n - n_clusters + 2):
        low, high = group_bounds(counts, tolerance, s)
        if (low <= high).all() and low.sum() <= s <= high.sum():
            sizes.append(s)
    return sizes


def group_bounds(counts: np.ndarray, tolerance: float, size: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The fewest and most members of each group a cluster of `size` nodes may hold within
    `tolerance` of the group's share (whole numbers, rounded with 1e-9 of slack)."""
    share, slack = counts / counts.sum(), 1e-9 * size
    low = np.maximum(np.ceil((share - tolerance) * size - slack), 0)
    high = np.minimum(np.floor((share + tolerance) * size + slack), counts)
    return low, high


def warn_weight_span(weights: np.ndarray) -> None:
    """UserWarning when the positive edge weights span more than WEIGHT_SPAN_WARN."""
    positive = weights[weights > 0]
    if positive.size and positive.max() > WEIGHT_SPAN_WARN * positive.min():
        warn_at_caller(
            f"edge weights span {positive.max() / positive.min():.1e} (largest / smallest): "
            f"past {WEIGHT_SPAN_WARN:.0e} the solvers' tolerances can misjudge the light "
            "edges and call a worse partition optimal"
        )


def fair_clustering_mip(
    graph: Any,
    groups: Any,
    n_clusters: int,
    objective: str = "ratio_cut",
    tolerance: float = 0.0,
) -> pyo.ConcreteModel:
    """Build the fair k-clustering MIP; read the partition back with `mip_labels`."""
    if groups is None:  # validate_fair_graph reads None as plain clustering: no fairness
        raise InputError("fair_clustering_mip needs groups (one per node): without them "
                         "every partition is fair")
    check_choice(objective, "objective", OBJECTIVES)
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) \
            or not 0 <= tolerance < 1:
        raise InputError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    adjacency, codes = validate_fair_graph(graph, groups, check_n_clusters(n_clusters))
    n, k = adjacency.shape[0], int(n_clusters)
    upper = sp.triu(adjacency, k=1).tocoo()
    edges = list(zip(upper.row.tolist(), upper.col.tolist(), upper.data.tolist(), strict=True))
    warn_weight_span(upper.data)

    m = pyo.ConcreteModel(name="fair_clustering")
    m.fair_adjacency = adjacency
    m.fair_objective = objective
    m.N = pyo.RangeSet(0, n - 1)
    m.C = pyo.RangeSet(0, k - 1)
    m.E = pyo.RangeSet(0, len(edges) - 1)
    m.S = pyo.RangeSet(0, int(codes.max()))
    m.x = pyo.Var(m.N, m.C, domain=pyo.Binary)
    m.assign = pyo.Constraint(m.N, rule=_one_cluster)
    m.nonempty = pyo.Constraint(m.C, rule=_nonempty)
    for i in range(n):
        for c in range(i + 1, k):
            m.x[i, c].fix(0)
    counts = np.bincount(codes)
    sizes = fair_sizes(counts, k, tolerance)
    _add_sizes(m, sizes)
    bounds = {size: group_bounds(counts, tolerance, size) for size in sizes}
    m.fair_low = pyo.Constraint(m.C, m.S, rule=partial(_fair_low, codes, bounds))
    m.fair_high = pyo.Constraint(m.C, m.S, rule=partial(_fair_high, codes, bounds))
    _add_cut_indicators(m, edges)
    if objective == "cut":
        m.objective = pyo.Objective(expr=sum(m.cut[c] for c in m.C) / 2)
    else:
        _add_ratio_cut_objective(m, edges)
    return m


def _add_sizes(m: pyo.ConcreteModel, sizes: list[int]) -> None:
    """z[c, s] picks cluster c's size among the admissible `sizes` (with none admissible,
    size_link empties every cluster: infeasible)."""
    m.Z = pyo.Set(initialize=sizes, ordered=True)
    m.z = pyo.Var(m.C, m.Z, domain=pyo.Binary)
    m.one_size = pyo.Constraint(m.C, rule=partial(_one_size, sizes))
    m.size_link = pyo.Constraint(m.C, rule=_size_link)


def _one_cluster(m: pyo.ConcreteModel, i: int) -> Any:
    """Node i lies in exactly one cluster."""
    return sum(m.x[i, c] for c in m.C) == 1


def _nonempty(m: pyo.ConcreteModel, c: int) -> Any:
    """Cluster c holds some node."""
    return sum(m.x[i, c] for i in m.N) >= 1


def _members(codes: np.ndarray, m: pyo.ConcreteModel, c: int, s: int) -> Any:
    """How many nodes of group s cluster c holds."""
    return sum(m.x[i, c] for i in np.flatnonzero(codes == s).tolist())


def _fair_low(codes: np.ndarray, bounds: dict[int, tuple[np.ndarray, np.ndarray]],
              m: pyo.ConcreteModel, c: int, g: int) -> Any:
    """Group g's members in cluster c at least the fewest its chosen size allows. Whole
    numbers on both sides: `members >= (share - tol) * size` let the solvers' row tolerance
    pass a cluster 1e-7 past a tolerance of 0.25 - 1e-7, at another optimum."""
    return _members(codes, m, c, g) >= sum(int(bounds[s][0][g]) * m.z[c, s] for s in m.Z)


def _fair_high(codes: np.ndarray, bounds: dict[int, tuple[np.ndarray, np.ndarray]],
               m: pyo.ConcreteModel, c: int, g: int) -> Any:
    """Group g's members in cluster c at most the most its chosen size allows."""
    return _members(codes, m, c, g) <= sum(int(bounds[s][1][g]) * m.z[c, s] for s in m.Z)


def _add_cut_indicators(m: pyo.ConcreteModel, edges: list[tuple[int, int, float]]) -> None:
    """y[e, c] >= |x[i, c] - x[j, c]|: edge e = (i, j) leaves cluster c; cut[c] its weight."""
    m.y = pyo.Var(m.E, m.C, domain=pyo.NonNegativeReals)
    m.cut_out = pyo.Constraint(m.E, m.C, rule=partial(_cut_out, edges))
    m.cut_in = pyo.Constraint(m.E, m.C, rule=partial(_cut_in, edges))
    m.cut = pyo.Expression(m.C, rule=partial(_cut_weight, edges))


def _cut_out(edges: list[tuple[int, int, float]], m: pyo.ConcreteModel, e: int, c: int) -> Any:
    """y[e, c] >= x[i, c] - x[j, c] for edge e = (i, j)."""
    return m.y[e, c] >= m.x[edges[e][0], c] - m.x[edges[e][1], c]


def _cut_in(edges: list[tuple[int, int, float]], m: pyo.ConcreteModel, e: int, c: int) -> Any:
    """y[e, c] >= x[j, c] - x[i, c] for edge e = (i, j)."""
    return m.y[e, c] >= m.x[edges[e][1], c] - m.x[edges[e][0], c]


def _cut_weight(edges: list[tuple[int, int, float]], m: pyo.ConcreteModel, c: int) -> Any:
    """The weight of the edges leaving cluster c."""
    return sum(edges[e][2] * m.y[e, c] for e in m.E)


def _add_ratio_cut_objective(m: pyo.ConcreteModel, edges: list[tuple[int, int, float]]
                             ) -> None:
    """Objective sum_c cut(C_c)/|C_c|: z[c, s] picks cluster c's size among the admissible
    `sizes`, and ys[e, c, s] >= y[e, c] - (1 - z[c, s]) counts edge e's cut indicator at that
    size, weighted w_e / s. The only big-M is 1, on a 0/1 indicator, so the integrality
    tolerance (z = 1 - 1e-6) drops at most 1e-6 of each cut edge's own weight: a relative
    error, not one of the total weight. sum_s ys[e, c, s] >= y[e, c] is valid and tightens
    the LP."""
    m.ys = pyo.Var(m.E, m.C, m.Z, domain=pyo.NonNegativeReals)
    m.at_size = pyo.Constraint(m.E, m.C, m.Z, rule=_at_size)
    m.some_size = pyo.Constraint(m.E, m.C, rule=_some_size)
    m.objective = pyo.Objective(expr=sum(
        edges[e][2] / s * m.ys[e, c, s] for e in m.E for c in m.C for s in m.Z
    ))


def _one_size(sizes: list[int], m: pyo.ConcreteModel, c: int) -> Any:
    """Cluster c takes exactly one admissible size (no row when none is admissible)."""
    return (sum(m.z[c, s] for s in m.Z) == 1) if sizes else pyo.Constraint.Skip


def _size_link(m: pyo.ConcreteModel, c: int) -> Any:
    """Cluster c's node count equals its chosen size."""
    return sum(m.x[i, c] for i in m.N) == sum(s * m.z[c, s] for s in m.Z)


def _at_size(m: pyo.ConcreteModel, e: int, c: int, s: int) -> Any:
    """ys[e, c, s] >= y[e, c] when cluster c has size s."""
    return m.ys[e, c, s] >= m.y[e, c] - (1 - m.z[c, s])


def _some_size(m: pyo.ConcreteModel, e: int, c: int) -> Any:
    """The size copies of edge e's cut indicator cover it."""
    return sum(m.ys[e, c, s] for s in m.Z) >= m.y[e, c]


def mip_objective(model: pyo.ConcreteModel, labels: np.ndarray) -> float:
    """The model's objective (ratio cut or cut) of a labelling, computed from the graph."""
    _require_fair_model(model, "mip_objective")
    adjacency = model.fair_adjacency
    if model.fair_objective == "ratio_cut":
        return ratio_cut(adjacency, labels)
    codes = recode_labels(labels, "labels", adjacency.shape[0])  # as ratio_cut checks them
    different = codes[:, None] != codes[None, :]
    return float(sp.triu(adjacency, k=1).multiply(different).sum())


def objective_mismatch(
    model: pyo.ConcreteModel, labels: np.ndarray, reported: float | None = None
) -> str | None:
    """A one-line message when the solver's objective value (`reported`, default the model's
    objective at its loaded solution) is below the labels' own ratio cut (or cut) by more than
    OBJECTIVE_RTOL (relative, or of the lightest edge weight over n), else None. Above is no
    contradiction: a stopped solve's incumbent may count slack cut variables."""
    if reported is None:
        reported = pyo.value(model.objective, exception=False)
    if reported is None:
        return None
    true = mip_objective(model, labels)
    weights = model.fair_adjacency.data
    floor = float(weights[weights > 0].min()) / len(model.N) if weights.size else 1.0
    if reported >= true - OBJECTIVE_RTOL * max(abs(true), floor):
        return None
    return (f"the solver's objective {reported:.6g} is below the {model.fair_objective} "
            f"{true:.6g} of the partition it returned: do not trust this solve")


def _require_fair_model(model: Any, what: str) -> None:
    """Refuse anything but a model built by fair_clustering_mip, naming what it lacks."""
    if not isinstance(model, pyo.Block):
        raise InputError(f"{what} needs a model built by fair_clustering_mip, got "
                         f"{type(model).__name__}")
    missing = [name for name in ("N", "C", "x", "fair_adjacency", "fair_objective")
               if not hasattr(model, name)]
    if missing:
        raise InputError(f"{what} needs a model built by fair_clustering_mip; this one has "
                         f"no {missing[0]!r}")


def mip_labels(model: pyo.ConcreteModel, check: bool = True) -> np.ndarray:
    """Cluster label of each node from a solved fair-clustering MIP; with `check`, warns
    (UserWarning) when the model's objective value is below the ratio cut (or cut) of these
    labels (`objective_mismatch`)."""
    check = check_flag(check, "check")
    _require_fair_model(model, "mip_labels")
    n = len(model.N)
    labels = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for c in model.C:
            if (model.x[i, c].value or 0.0) > 0.5:
                labels[i] = c
    if (labels < 0).any():
        raise InputError("the model holds no solution: solve it first (a solve that found "
                         "it infeasible, with no fair partition into these clusters, or that "
                         "stopped before a first point, leaves none)")
    mismatch = objective_mismatch(model, labels) if check else None
    if mismatch is not None:
        warn_at_caller(mismatch)
    return labels


def registry_model(size: int, seed: int) -> pyo.ConcreteModel:
    """`coplug solve fair_clustering --size N`: exact fair 2-clustering of two planted
    communities of about N/2 nodes each (half of each group in each)."""
    from coplug.formulations.fair_graphs import fair_communities

    data = fair_communities(max(2, size // 4 * 2), seed=seed)
    return fair_clustering_mip(data.adjacency, data.groups, 2)
