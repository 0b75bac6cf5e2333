"""Fair spectral clustering: planted recovery, FairSC vs R-FairSC, exact MIP, bad input."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from coplug.formulations.fair_clustering_mip import fair_clustering_mip, mip_labels
from coplug.formulations.fair_graphs import (
    fair_communities,
    fair_sbm,
    load_graph,
    validate_fair_graph,
)
from coplug.formulations.fair_metrics import balance, proportion_deviation, ratio_cut
from coplug.learned.fair_spectral import FairSpectralClustering
from coplug.plugins import solve
from coplug.plugins.errors import InputError


def _brute_force_fair_ratio_cut(adjacency: sp.csr_matrix, groups: np.ndarray, k: int) -> float:
    """Smallest ratio cut over every exactly fair labelling (node 0 fixed in cluster 0)."""
    best = np.inf
    for tail in itertools.product(range(k), repeat=adjacency.shape[0] - 1):
        labels = np.array((0, *tail))
        if np.unique(labels).size == k and proportion_deviation(labels, groups) < 1e-12:
            best = min(best, ratio_cut(adjacency, labels))
    return best


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_mip_is_the_exact_fair_optimum(solver: str) -> None:
    data = fair_communities(6, p_in=0.7, seed=11)
    adjacency, groups = data.adjacency, data.groups
    model = fair_clustering_mip(adjacency, groups, 2)
    result = solve(model, solver=solver)
    assert result.optimal
    labels = mip_labels(model)
    assert proportion_deviation(labels, groups) < 1e-9
    assert ratio_cut(adjacency, labels) == pytest.approx(result.objective, abs=1e-6)
    assert result.objective == pytest.approx(
        _brute_force_fair_ratio_cut(adjacency, groups, 2), abs=1e-6
    )


def test_spectral_methods_compared_with_mip_optimum() -> None:
    data = fair_communities(6, seed=5)
    graph = nx.from_scipy_sparse_array(data.adjacency)
    adjacency, groups = data.adjacency, data.groups
    model = fair_clustering_mip(graph, groups, 2)
    optimum = solve(model, solver="highs").objective
    for method in ("riemannian", "nullspace"):
        labels = FairSpectralClustering(2, groups, method=method).fit_predict(graph)
        assert balance(labels, groups) == pytest.approx(1.0)
        assert ratio_cut(adjacency, labels) == pytest.approx(optimum, rel=1e-9)


def test_riemannian_recovers_planted_fair_partition() -> None:
    data = fair_sbm(2000, n_clusters=4, avg_degree=25, seed=2)
    estimator = FairSpectralClustering(4, data.groups, method="riemannian")
    labels = estimator.fit_predict(data.adjacency)
    assert adjusted_rand_score(data.planted, labels) > 0.95
    assert balance(labels, data.groups) > 0.85
    assert estimator.embedding_.shape == (2000, 4)
    assert estimator.admm_info_["residual"] < 1e-3


@pytest.mark.parametrize("laplacian", ["normalized", "unnormalized"])
def test_fairsc_and_rfairsc_agree_on_small_graphs(laplacian: str) -> None:
    data = fair_sbm(300, n_clusters=3, avg_degree=40, seed=4)
    runs = {
        method: FairSpectralClustering(3, data.groups, method=method, laplacian=laplacian).fit(
            data.adjacency
        )
        for method in ("nullspace", "riemannian")
    }
    a, b = runs["nullspace"].labels_, runs["riemannian"].labels_
    assert adjusted_rand_score(a, b) > 0.98
    assert ratio_cut(data.adjacency, b) == pytest.approx(ratio_cut(data.adjacency, a), rel=0.02)
    assert abs(balance(a, data.groups) - balance(b, data.groups)) < 0.02
    # Same subspace: the embeddings span the same k-dimensional space.
    qa = np.linalg.qr(runs["nullspace"].embedding_)[0]
    qb = np.linalg.qr(runs["riemannian"].embedding_)[0]
    assert np.linalg.svd(qa.T @ qb, compute_uv=False).min() > 0.99


def test_accepts_networkx_and_real_graphs() -> None:
    data = load_graph("diabetes_knn")
    assert data.n == 442 and np.bincount(data.groups).tolist() == [235, 207]
    labels = FairSpectralClustering(2, data.groups, method="normalized").fit_predict(
        data.adjacency
    )
    assert labels.shape == (data.n,)
    davis = load_graph("davis")
    labels = FairSpectralClustering(2, davis.groups).fit_predict(davis.adjacency)
    assert set(labels) == {0, 1}
    karate = nx.karate_club_graph()
    labels = FairSpectralClustering(2, "club", method="nullspace").fit_predict(karate)
    assert set(labels) == {0, 1}


def test_bad_input_is_a_clear_error() -> None:
    data = fair_sbm(60, n_clusters=2, seed=0)
    with pytest.raises(InputError, match="group 2 is absent"):
        validate_fair_graph(data.adjacency, data.groups, n_groups=3)
    with pytest.raises(InputError, match="one group"):
        FairSpectralClustering(2, np.zeros(60, int)).fit(data.adjacency)
    with pytest.raises(InputError, match="larger than the 60 nodes"):
        FairSpectralClustering(61, data.groups).fit(data.adjacency)
    with pytest.raises(InputError, match="larger than"):
        fair_clustering_mip(data.adjacency, data.groups, 61)
    with pytest.raises(InputError, match="tolerance must be a number in"):
        fair_clustering_mip(data.adjacency, data.groups, 2, tolerance="0.1")
    isolated = data.adjacency.tolil()
    isolated[7, :] = 0
    isolated[:, 7] = 0
    with pytest.raises(InputError, match="isolated node.*node 7"):
        FairSpectralClustering(2, data.groups).fit(isolated.tocsr())
    with pytest.raises(InputError, match="labels for a graph of 60"):
        FairSpectralClustering(2, data.groups[:10]).fit(data.adjacency)
    with pytest.raises(InputError, match="method must be one of"):
        FairSpectralClustering(2, data.groups, method="magic").fit(data.adjacency)
    with pytest.raises(InputError, match="needs groups"):
        FairSpectralClustering(2).fit(data.adjacency)
    directed = nx.DiGraph([(0, 1)])
    with pytest.raises(InputError, match="undirected"):
        FairSpectralClustering(2, [0, 1]).fit(directed)


def test_nullspace_refuses_what_does_not_fit() -> None:
    from coplug.learned.fair_spectral import fairness_matrix, laplacian, nullspace_embedding

    data = fair_sbm(500, n_clusters=2, seed=0)
    lap, _ = laplacian(data.adjacency, normalized=False)
    with pytest.raises(InputError, match="GiB of dense matrices.*riemannian"):
        nullspace_embedding(lap, fairness_matrix(data.groups), 2, max_bytes=1e6)


def test_cli_fairsc_runs_and_reports_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    from coplug.plugins.cli import main

    assert main(["fairsc", "--n", "400", "--clusters", "2", "--method", "riemannian"]) == 0
    out = capsys.readouterr().out
    assert "riemannian" in out and "balance" in out
    assert main(["fairsc", "--n", "3", "--clusters", "5"]) == 2
    assert "smaller than n_clusters*n_groups" in capsys.readouterr().err
