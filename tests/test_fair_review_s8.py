"""Review s8b fixes for fair clustering: the exact MIP's big-M, R-FairSC's stopping test on
disconnected graphs, and `coplug fairsc` (MIP time limit, skipped methods, ignored flags)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from coplug.formulations.fair_cli import method_note, print_mip
from coplug.formulations.fair_clustering_mip import (
    fair_clustering_mip,
    fair_sizes,
    mip_labels,
    mip_objective,
    objective_mismatch,
)
from coplug.formulations.fair_graphs import fair_communities, fair_sbm
from coplug.formulations.fair_metrics import ratio_cut
from coplug.learned import fair_spectral
from coplug.learned.fair_spectral import FairSpectralClustering, objective_settled
from coplug.plugins import solve
from coplug.plugins.cli import main


def _heavy_blocks(heavy: float = 1e6) -> tuple[np.ndarray, np.ndarray]:
    """The reviewer's graph: 4 blocks of 4 nodes, edges of weight `heavy` inside a block,
    light edges 1, 1, 10, 10 between blocks; groups 0, 0, 1, 1 in every block."""
    adjacency = np.zeros((16, 16))
    for block in range(4):
        for i, j in itertools.combinations(range(4 * block, 4 * block + 4), 2):
            adjacency[i, j] = heavy
    for a, b, weight in ((0, 1, 1.0), (2, 3, 1.0), (0, 2, 10.0), (1, 3, 10.0)):
        adjacency[4 * a, 4 * b] = weight
    return adjacency + adjacency.T, np.tile([0, 0, 1, 1], 4)


def _brute_force_fair_2_ratio_cut(adjacency: np.ndarray, groups: np.ndarray) -> float:
    """Smallest ratio cut over every exactly fair 2-clustering of a graph with two equal
    groups (node 0 in cluster 1), all 2^(n-1) labellings at once."""
    n = adjacency.shape[0]
    tails = np.array(list(itertools.product((0.0, 1.0), repeat=n - 1)))
    x = np.hstack([np.ones((tails.shape[0], 1)), tails])
    cut = np.einsum("pi,ij,pj->p", x, adjacency, 1 - x)
    size = x.sum(axis=1)
    fair = ((x @ (groups == 0)) == (x @ (groups == 1))) & (size < n)
    return float((cut[fair] / size[fair] + cut[fair] / (n - size[fair])).min())


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_heavy_edges_mip_reports_the_true_optimum(solver: str) -> None:
    adjacency, groups = _heavy_blocks()
    optimum = _brute_force_fair_2_ratio_cut(adjacency, groups)
    assert optimum == pytest.approx(0.5)
    model = fair_clustering_mip(sp.csr_matrix(adjacency), groups, 2)
    result = solve(model, solver=solver)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        labels = mip_labels(model)
    assert result.optimal
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert ratio_cut(adjacency, labels) == pytest.approx(optimum, rel=1e-9)


def test_mip_labels_warn_when_the_objective_is_not_the_labels_ratio_cut() -> None:
    data = fair_communities(4)
    model = fair_clustering_mip(data.adjacency, data.groups, 2)
    result = solve(model, solver="highs")
    labels = mip_labels(model)
    assert mip_objective(model, labels) == pytest.approx(result.objective, rel=1e-9)
    assert objective_mismatch(model, labels, 0.0) is not None
    for i, c in model.x:  # another fair partition, the objective left at the optimum's
        model.x[i, c].value = float(c == (1 - labels[i] if i in (0, 2, 4, 6) else labels[i]))
    with pytest.warns(UserWarning, match="is below the ratio_cut .* do not trust"):
        mip_labels(model)


def test_cli_mip_row_shows_the_labels_ratio_cut_and_a_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import coplug.plugins

    def understated(model: object, **options: object) -> object:
        result = solve(model, **options)
        result.objective = 0.0
        return result

    monkeypatch.setattr(coplug.plugins, "solve", understated)
    data = fair_communities(4)
    value = print_mip(data, 2)
    out = capsys.readouterr().out
    assert value == pytest.approx(ratio_cut(data.adjacency, data.planted))
    assert f"{value:.4f}" in out.splitlines()[0]
    assert "WARNING: the solver's objective 0 is below the ratio_cut" in out


def test_fair_sizes_and_weight_span_warning() -> None:
    assert fair_sizes(np.array([4, 8]), 2, 0.0) == [3, 6, 9]
    assert fair_sizes(np.array([5, 7]), 3, 0.0) == []
    assert fair_sizes(np.array([2, 2]), 2, 0.3) == [2, 3]
    assert fair_sizes(np.array([2, 2]), 2, 0.5) == [1, 2, 3]
    adjacency, groups = _heavy_blocks(1e9)
    with pytest.warns(UserWarning, match="edge weights span 1.0e"):
        fair_clustering_mip(adjacency, groups, 2)


def test_mip_with_no_fair_cluster_size_is_infeasible() -> None:
    data = fair_sbm(12, 2, seed=0)  # groups 4 / 8: fair sizes are multiples of 3
    result = solve(fair_clustering_mip(data.adjacency, data.groups, 5), solver="highs")
    assert result.status.value == "infeasible"


@pytest.mark.parametrize(("n", "laplacian"), [(500, "normalized"), (200, "unnormalized")])
def test_rfairsc_reaches_zero_on_a_disconnected_graph(n: int, laplacian: str) -> None:
    data = fair_sbm(n, 5, 2, 0.01, seed=0)  # degree 0.01: many components
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = FairSpectralClustering(5, data.groups, laplacian=laplacian).fit(data.adjacency)
    info = fitted.admm_info_
    assert info["converged"] and info["iterations"] < 50
    assert abs(info["objective"]) < 1e-9
    exact = FairSpectralClustering(5, data.groups, method="nullspace", laplacian=laplacian)
    assert ratio_cut(data.adjacency, fitted.labels_) == pytest.approx(
        ratio_cut(data.adjacency, exact.fit_predict(data.adjacency)), abs=1e-12)


def test_stopping_test_passes_at_a_zero_optimum() -> None:
    assert objective_settled(3e-17, -2e-17, 1e-7, 10.0)
    assert not objective_settled(0.04100, 0.04099, 1e-7, 10.0)
    assert objective_settled(50.0, 50.0 + 1e-6, 1e-7, 10.0)


def test_unconverged_admm_warns() -> None:
    data = fair_sbm(200, 5, 2, 0.01, seed=0)
    estimator = FairSpectralClustering(5, data.groups, init="random", max_iter=5)
    with pytest.warns(UserWarning, match="did not converge in max_iter=5"):
        estimator.fit(data.adjacency)
    assert estimator.admm_info_["converged"] is False
    assert "NOT converged in 5 iterations" in method_note(estimator.admm_info_)


def test_cli_row_says_the_admm_did_not_converge(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fair_spectral.riemannian_admm_embedding

    def one_iteration(lap, constraint, k, rho, max_iter, *rest):  # noqa: ANN001, ANN202
        return real(lap, constraint, k, rho, 1, *rest)

    monkeypatch.setattr(fair_spectral, "riemannian_admm_embedding", one_iteration)
    assert main(["fairsc", "--n", "300", "--clusters", "3"]) == 0
    captured = capsys.readouterr()
    assert "riemannian" in captured.out and "NOT converged in 1 iterations" in captured.out
    assert "did not converge" not in captured.err


def test_cli_method_all_skips_a_refusing_method(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fair_spectral, "nullspace_bytes", lambda n: 1e12)
    assert main(["fairsc", "--n", "300", "--clusters", "3", "--method", "all"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == {"riemannian", "nullspace", "unnormalized", "normalized"}
    assert "skipped: FairSC (nullspace) needs about 931.3 GiB" in rows["nullspace"]
    assert rows["nullspace"].endswith("use --method riemannian")
    assert main(["fairsc", "--n", "300", "--clusters", "3", "--method", "nullspace"]) == 2
    err = capsys.readouterr().err
    assert "use --method riemannian" in err and "method='" not in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--graph", "karate", "--n", "5", "--degree", "3"], "--n, --degree: for --graph sbm only"),
    (["--graph", "davis", "--groups", "7"], "--groups: for --graph sbm only"),
    (["--method", "normalized", "--laplacian", "unnormalized"], "--laplacian picks"),
    (["--time-limit", "5"], "--time-limit limits the exact MIP: add --mip"),
])
def test_cli_refuses_flags_it_would_ignore(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fairsc", "--clusters", "2", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_row_says_when_rfairsc_fell_back_to_nullspace(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fairsc", "--graph", "karate", "--clusters", "20"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("riemannian")
    assert "ran nullspace instead: k is over half the 33 fair dimensions" in row


def test_cli_mip_stops_at_its_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["fairsc", "--n", "24", "--clusters", "4", "--mip", "--seed", "2",
            "--method", "normalized", "--time-limit", "1"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    row = captured.out.splitlines()[-1]
    assert row.startswith("exact MIP") and "time_limit" in row
    assert "time limit 1 s" in captured.err
