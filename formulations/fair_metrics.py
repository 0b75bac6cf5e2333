"""Quality measures of a partition of a graph with protected groups: balance and (ratio) cut."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from coplug.plugins.arguments import refuse_masked
from coplug.plugins.errors import InputError


def recode_labels(values: object, field: str, n: int | None = None) -> np.ndarray:
    """Any 1-D labels (ints of any range, floats, strings) as codes 0..k-1 via np.unique.

    Labels are never used as indices, so gaps, negative codes and non-integer labels count
    as the groups or clusters they name; NaN (also inside an object array) and a length other
    than `n` are refused.
    """
    refuse_masked(values, field)
    labels = np.asarray(values)
    if labels.ndim != 1:
        raise InputError(f"{field} must be 1-D (one entry per node), got shape {labels.shape}")
    if n is not None and labels.size != n:
        raise InputError(f"{field} must have one entry per node ({n}), got {labels.size}")
    if labels.size == 0:
        raise InputError(f"{field} is empty: the partition needs at least one node")
    missing = np.flatnonzero(_nan_mask(labels))
    if missing.size:
        raise InputError(f"{field} has a NaN label (first at node {int(missing[0])})")
    try:
        return np.unique(labels, return_inverse=True)[1].reshape(-1)
    except TypeError as exc:
        raise InputError(f"{field} mixes labels that cannot be compared: {exc}") from None


def _nan_mask(labels: np.ndarray) -> np.ndarray:
    """Which labels are NaN, for float, complex and object arrays alike."""
    if labels.dtype.kind in "fc":
        return np.isnan(labels)
    if labels.dtype.kind == "O":
        return np.array([isinstance(v, float | complex | np.floating | np.complexfloating)
                         and v != v for v in labels], dtype=bool)
    return np.zeros(labels.shape, dtype=bool)


def _codes(labels: np.ndarray, n: int) -> np.ndarray:
    """Cluster labels as codes 0..k-1, checked against the node count."""
    return recode_labels(labels, "labels", n)


def _contingency(labels: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Node counts per (cluster, group) and the group codes, both recoded from any labels."""
    group_codes = recode_labels(groups, "groups")
    codes = recode_labels(labels, "labels")
    if codes.size != group_codes.size:  # neither holds the node count: name both lengths
        raise InputError(f"labels and groups must have one entry per node each, got "
                         f"{codes.size} labels and {group_codes.size} groups")
    table = np.zeros((int(codes.max()) + 1, int(group_codes.max()) + 1))
    np.add.at(table, (codes, group_codes), 1.0)
    return table, group_codes


def cluster_cuts(adjacency: Any, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster: the weight of edges leaving it, and its size. `adjacency` is anything
    `fair_graphs.as_adjacency` takes (networkx graph, scipy sparse or numpy array), square,
    finite, non-negative and symmetric (`fair_graphs.check_adjacency`)."""
    from coplug.formulations.fair_graphs import as_adjacency, check_adjacency  # imports us

    adjacency = check_adjacency(as_adjacency(adjacency))
    codes = _codes(labels, adjacency.shape[0])
    k = int(codes.max()) + 1
    rows = np.arange(codes.size)
    indicator = sp.csr_matrix((np.ones(codes.size), (rows, codes)), shape=(codes.size, k))
    inside = np.asarray((indicator.T @ adjacency @ indicator).diagonal()).ravel()
    volume = np.asarray(indicator.T @ adjacency.sum(axis=1)).ravel()
    return volume - inside, np.bincount(codes, minlength=k).astype(float)


def ratio_cut(adjacency: Any, labels: np.ndarray) -> float:
    """RatioCut = sum over clusters of cut(C, V \\ C) / |C|."""
    cuts, sizes = cluster_cuts(adjacency, labels)
    return float((cuts / sizes).sum())


def cut_weight(adjacency: Any, labels: np.ndarray) -> float:
    """Total weight of edges between different clusters."""
    cuts, _ = cluster_cuts(adjacency, labels)
    return float(cuts.sum() / 2)


def balance(labels: np.ndarray, groups: np.ndarray) -> float:
    """min over clusters C and groups s != s' of |C & V_s| / |C & V_s'|: 1 only if every
    cluster holds the groups in equal numbers; an exactly proportional (fair) partition scores
    the dataset's own min/max group-size ratio, its largest possible value."""
    table, _ = _contingency(labels, groups)
    return float((table.min(axis=1) / table.max(axis=1)).min())


def proportion_deviation(labels: np.ndarray, groups: np.ndarray) -> float:
    """Largest |share of group s in cluster C - share of s in the whole graph|."""
    table, group_codes = _contingency(labels, groups)
    shares = table / table.sum(axis=1, keepdims=True)
    overall = np.bincount(group_codes) / group_codes.size
    return float(np.abs(shares - overall).max())
