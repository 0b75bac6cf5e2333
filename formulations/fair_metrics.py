"""Quality measures of a partition of a graph with protected groups: balance and (ratio) cut."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from coplug.plugins.errors import InputError


def _codes(labels: np.ndarray, n: int) -> np.ndarray:
    """Cluster labels as codes 0..k-1, checked against the node count."""
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise InputError(f"labels must have one entry per node ({n}), got shape {labels.shape}")
    return np.unique(labels, return_inverse=True)[1]


def cluster_cuts(adjacency: sp.spmatrix, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster: the weight of edges leaving it, and its size."""
    adjacency = sp.csr_matrix(adjacency)
    codes = _codes(labels, adjacency.shape[0])
    k = int(codes.max()) + 1
    rows = np.arange(codes.size)
    indicator = sp.csr_matrix((np.ones(codes.size), (rows, codes)), shape=(codes.size, k))
    inside = np.asarray((indicator.T @ adjacency @ indicator).diagonal()).ravel()
    volume = np.asarray(indicator.T @ adjacency.sum(axis=1)).ravel()
    return volume - inside, np.bincount(codes, minlength=k).astype(float)


def ratio_cut(adjacency: sp.spmatrix, labels: np.ndarray) -> float:
    """RatioCut = sum over clusters of cut(C, V \\ C) / |C|."""
    cuts, sizes = cluster_cuts(adjacency, labels)
    return float((cuts / sizes).sum())


def cut_weight(adjacency: sp.spmatrix, labels: np.ndarray) -> float:
    """Total weight of edges between different clusters."""
    cuts, _ = cluster_cuts(adjacency, labels)
    return float(cuts.sum() / 2)


def balance(labels: np.ndarray, groups: np.ndarray) -> float:
    """min over clusters C and groups s != s' of |C & V_s| / |C & V_s'| (1 = perfectly fair)."""
    groups = np.asarray(groups)
    codes = _codes(labels, groups.size)
    table = np.zeros((int(codes.max()) + 1, int(groups.max()) + 1))
    np.add.at(table, (codes, groups), 1.0)
    largest = table.max(axis=1)
    return float((table.min(axis=1) / largest).min())


def proportion_deviation(labels: np.ndarray, groups: np.ndarray) -> float:
    """Largest |share of group s in cluster C - share of s in the whole graph|."""
    groups = np.asarray(groups)
    codes = _codes(labels, groups.size)
    table = np.zeros((int(codes.max()) + 1, int(groups.max()) + 1))
    np.add.at(table, (codes, groups), 1.0)
    shares = table / table.sum(axis=1, keepdims=True)
    overall = np.bincount(groups) / groups.size
    return float(np.abs(shares - overall).max())
