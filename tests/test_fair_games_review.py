"""Review fixes for fair clustering and games: each test fails on the code before its fix."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.linalg as la
import scipy.sparse as sp

from coplug.formulations.fair_cli import print_mip
from coplug.formulations.fair_clustering_mip import fair_clustering_mip
from coplug.formulations.fair_graphs import as_adjacency, fair_sbm, group_codes, validate_fair_graph
from coplug.formulations.fair_metrics import balance, proportion_deviation
from coplug.formulations.game_solvers import barrier_gradient_ascent, certify
from coplug.formulations.games import Game, cournot
from coplug.learned.fair_spectral import (
    FairSpectralClustering,
    fairness_matrix,
    laplacian,
    polar,
    riemannian_admm_embedding,
    spectral_start,
)
from coplug.plugins.errors import InputError, UnsupportedModelError


def _chorded_cycle() -> sp.csr_matrix:
    """12-cycle with two chords; with 3 groups its fair subspace has 10 dimensions."""
    graph = nx.cycle_graph(12)
    graph.add_edges_from([(0, 6), (3, 9)])
    return as_adjacency(graph)


def _fair_problem(
    adjacency: sp.csr_matrix, groups: np.ndarray, normalized: bool
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Laplacian, constraint matrix and the exact fair eigenvalues (full QR + dense eigvalsh)."""
    lap, degree = laplacian(adjacency, normalized)
    constraint = fairness_matrix(groups)
    if normalized:
        constraint = constraint / np.sqrt(degree)[:, None]
    basis = la.qr(constraint, mode="full")[0][:, constraint.shape[1]:]
    return lap, constraint, la.eigvalsh(basis.T @ lap.toarray() @ basis)


def test_spectral_start_drops_dependent_directions() -> None:
    groups = np.array([0, 1, 2] * 4)
    lap, constraint, exact = _fair_problem(_chorded_cycle(), groups, normalized=True)
    start = spectral_start(lap, constraint, 8)
    x, info = riemannian_admm_embedding(lap, constraint, 8, start=start)
    assert np.abs(constraint.T @ x).max() < 1e-12
    assert np.abs(x.T @ x - np.eye(8)).max() < 1e-10
    assert info["objective"] == pytest.approx(exact[:8].sum(), rel=1e-9)


def test_admm_stays_at_an_optimal_start_near_the_fair_dimension() -> None:
    data = fair_sbm(40, 4, n_groups=2, avg_degree=8, seed=1)
    lap, constraint, exact = _fair_problem(data.adjacency, data.groups, normalized=False)
    start = spectral_start(lap, constraint, 36)
    _, info = riemannian_admm_embedding(lap, constraint, 36, start=start)
    assert info["converged"]
    assert info["objective"] == pytest.approx(exact[:36].sum(), rel=1e-8)


@pytest.mark.parametrize(("k", "kind"), [(9, "unnormalized"), (10, "unnormalized"),
                                         (10, "normalized")])
def test_riemannian_falls_back_to_nullspace_near_the_fair_dimension(k: int, kind: str) -> None:
    groups = np.array([0, 1, 2] * 4)
    adjacency = _chorded_cycle()
    lap, _, exact = _fair_problem(adjacency, groups, normalized=kind == "normalized")
    estimator = FairSpectralClustering(k, groups, laplacian=kind, n_init=2).fit(adjacency)
    assert "nullspace" in estimator.admm_info_["fallback"]
    assert estimator.admm_info_["objective"] == pytest.approx(exact[:k].sum(), rel=1e-9)
    assert np.abs(fairness_matrix(groups).T @ estimator.embedding_).max() < 1e-12
    assert np.abs(estimator.embedding_).max() < 10


@pytest.mark.parametrize("init", ["spectral", "random"])
def test_riemannian_matches_the_exact_optimum_with_three_groups(init: str) -> None:
    data = fair_sbm(60, 3, n_groups=3, avg_degree=10, seed=3)
    lap, _, exact = _fair_problem(data.adjacency, data.groups, normalized=True)
    for k in (3, 12, 25):
        estimator = FairSpectralClustering(k, data.groups, init=init, n_init=1)
        info = estimator.fit(data.adjacency).admm_info_
        assert info["method"] == "riemannian" and info["converged"]
        assert info["objective"] == pytest.approx(exact[:k].sum(), rel=1e-4)


def test_polar_refuses_a_rank_deficient_matrix() -> None:
    with pytest.raises(InputError, match="rank-deficient"):
        polar(np.outer(np.arange(1.0, 6.0), [1.0, 2.0]))
    q = polar(np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
    assert np.allclose(q, np.eye(3, 2))


def test_cli_mip_prints_the_real_balance(capsys: pytest.CaptureFixture[str]) -> None:
    data = fair_sbm(12, 2, seed=0)
    assert np.bincount(data.groups).tolist() == [4, 8]
    objective = print_mip(data, 2)
    row = capsys.readouterr().out.split()
    assert row[:2] == ["exact", "MIP"]
    assert float(row[2]) == pytest.approx(4 / 8)
    assert float(row[3]) == pytest.approx(objective, abs=1e-4)


def test_cli_mip_says_infeasible_without_nan(capsys: pytest.CaptureFixture[str]) -> None:
    data = fair_sbm(12, 2, seed=0)
    assert print_mip(data, 5) is None
    out = capsys.readouterr().out
    assert "infeasible" in out and "nan" not in out and "exactly fair (" not in out


def test_balance_of_a_proportional_partition_is_the_group_ratio() -> None:
    groups = np.array([0] * 4 + [1] * 8)
    labels = np.array([0, 0, 1, 1] + [0] * 4 + [1] * 4)
    assert proportion_deviation(labels, groups) == 0.0
    assert balance(labels, groups) == pytest.approx(2 / 4)


def _asymmetric_cournot_barrier_point(mu: float) -> np.ndarray:
    """Stationary point of the barrier game of price 10 - Q, costs (1, 3), q0 + q1 <= 3, solved
    by hand-written equations (each firm: marginal profit - mu/s + mu/q - mu/(3 - q) = 0)."""
    from scipy.optimize import fsolve

    def residual(q: np.ndarray) -> np.ndarray:
        s = 3 - q[0] - q[1]
        barrier = -mu / s + mu / q - mu / (3 - q)
        return np.array([9 - 2 * q[0] - q[1], 7 - 2 * q[1] - q[0]]) + barrier

    q = fsolve(residual, [2.5 - mu, 0.5 - mu], xtol=1e-13)
    assert np.abs(residual(q)).max() < 1e-9 and q.sum() < 3
    return q


@pytest.mark.parametrize(("mu", "update"), [(1e-2, "sequential"), (3e-2, "simultaneous")])
def test_barrier_ascent_converged_means_stationary_near_the_ve(mu: float, update: str) -> None:
    game = cournot(2, 10, 1, [1, 3], 3)
    result = barrier_gradient_ascent(game, mu=mu, update=update)
    assert result.converged
    q = result.x
    s = 3 - q.sum()
    gradient = np.array([9 - 2 * q[0] - q[1], 7 - 2 * q[1] - q[0]]) + mu * (
        -1 / s + 1 / q - 1 / (3 - q))
    assert np.abs(gradient).max() <= 1e-5 * (1 + 1e-6)
    assert q == pytest.approx(_asymmetric_cournot_barrier_point(mu), abs=1e-4)
    assert np.abs(q - [2.5, 0.5]).max() < 2 * mu


def _game_with_parent_variable() -> Game:
    """Player a's utility adds z, a variable on the parent model that no player owns."""
    game = Game("p")
    a, b = game.add_player("a"), game.add_player("b")
    game.model.z = pyo.Var(bounds=(0, 10), initialize=1.0)
    a.x = pyo.Var(bounds=(0, 1), initialize=0.5)
    b.y = pyo.Var(bounds=(0, 1), initialize=0.5)
    a.utility = pyo.Expression(expr=-((a.x - 0.5) ** 2) + game.model.z)
    b.utility = pyo.Expression(expr=-((b.y - 0.5) ** 2))
    return game


def test_utility_with_a_variable_no_player_owns_is_refused() -> None:
    game = _game_with_parent_variable()
    with pytest.raises(InputError, match="utility of player 'a' uses 'z', owned by no player"):
        certify(game)
    with pytest.raises(InputError, match="'z', owned by no player"):
        barrier_gradient_ascent(game)
    game.model.z.fix()
    assert certify(game).epsilon < 1e-6


@pytest.mark.parametrize("k", [float("nan"), None, float("inf"), True, 2.5, "2"])
def test_bad_n_clusters_is_a_clear_error(k: object) -> None:
    graph, groups = nx.cycle_graph(8), [0, 1] * 4
    with pytest.raises(InputError, match="n_clusters must be a positive integer"):
        FairSpectralClustering(k, groups, method="normalized").fit(graph)
    with pytest.raises(InputError, match="n_clusters must be a positive integer"):
        fair_clustering_mip(graph, groups, k)
    if k is not None:
        with pytest.raises(InputError, match="n_clusters must be a positive integer"):
            validate_fair_graph(graph, groups, k)


@pytest.mark.parametrize(("groups", "match"), [
    (np.array([0, "a"] * 4, dtype=object), "groups mixes labels"),
    (np.array([0, None] * 4, dtype=object), "groups mixes labels"),
    (np.array([0.0, np.nan] * 4), "groups has a NaN label .first at node 1"),
    (np.array(["a", float("nan")] * 4, dtype=object), "groups has a NaN label"),
])
def test_bad_group_labels_are_a_clear_error(groups: np.ndarray, match: str) -> None:
    graph = nx.cycle_graph(8)
    with pytest.raises(InputError, match=match):
        FairSpectralClustering(2, groups).fit(graph)
    with pytest.raises(InputError, match=match):
        fair_clustering_mip(graph, groups, 2)
    with pytest.raises(InputError, match=match):
        group_codes(graph, groups)


def _two_player_game(utility_a: Any) -> Game:
    """Players a (x in [0.1, 4]) and b (y in [0, 4]); a's utility built by `utility_a`."""
    game = Game("s")
    a, b = game.add_player("a"), game.add_player("b")
    a.x = pyo.Var(bounds=(0.1, 4), initialize=1.0)
    b.y = pyo.Var(bounds=(0, 4), initialize=1.0)
    utility_a(a)
    b.utility = pyo.Expression(expr=-((b.y - 1) ** 2))
    return game


def test_expr_if_utility_is_refused_by_name() -> None:
    def piecewise(a: pyo.Block) -> None:
        a.utility = pyo.Expression(expr=pyo.Expr_if(IF=a.x <= 2, THEN=a.x, ELSE=4 - a.x))

    with pytest.raises(UnsupportedModelError, match="utility of player 'a' uses Expr_if"):
        barrier_gradient_ascent(_two_player_game(piecewise))


def test_objective_utility_is_refused_up_front() -> None:
    def objective(a: pyo.Block) -> None:
        a.utility = pyo.Objective(expr=-((a.x - 0.3) ** 2), sense=pyo.maximize)

    with pytest.raises(InputError, match="utility of player 'a' is a pyo.Objective"):
        certify(_two_player_game(objective))

    def extra(a: pyo.Block) -> None:
        a.utility = pyo.Expression(expr=-((a.x - 0.3) ** 2))
        a.goal = pyo.Objective(expr=a.x)

    with pytest.raises(InputError, match="active objective 'a.goal'"):
        certify(_two_player_game(extra))


@pytest.mark.parametrize(("setting", "match"), [
    ({"mu": float("inf")}, "mu must be a number in"),
    ({"mu": 1e300}, "mu must be a number in"),
    ({"mu_start": float("inf")}, "mu_start must be a number in"),
    ({"mu_start": float("nan")}, "mu_start must be a number in"),
    ({"max_iter": 0}, "max_iter must be an integer >= 1"),
    ({"max_iter": -5}, "max_iter must be an integer >= 1"),
    ({"max_iter": 2.5}, "max_iter must be an integer >= 1"),
    ({"tol": float("inf")}, "tol must be a finite number > 0"),
    ({"step": float("inf")}, "step must be a finite number > 0"),
])
def test_bad_ascent_settings_are_refused(setting: dict[str, float], match: str) -> None:
    with pytest.raises(InputError, match=match):
        barrier_gradient_ascent(cournot(), **setting)


@pytest.mark.parametrize("argv", [
    ["game", "cournot", "--mu", "inf"],
    ["game", "cournot", "--mu", "nan"],
    ["game", "cournot", "--max-iter", "0"],
    ["game", "cournot", "--max-iter", "-5"],
    ["fairsc", "--degree", "nan"],
    ["fairsc", "--n", "0"],
])
def test_bad_cli_flags_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from coplug.plugins.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "expected" in capsys.readouterr().err


@pytest.mark.parametrize(("setting", "match"), [
    ({"avg_degree": float("nan")}, "avg_degree must be a finite number"),
    ({"avg_degree": float("inf")}, "avg_degree must be a finite number"),
    ({"affinity": (6.0, float("nan"), 1.5, 1.0)}, "affinity must be 4 finite rates"),
    ({"group_share": (0.5, float("nan"))}, "group_share must be 2 positive numbers"),
])
def test_bad_sbm_settings_are_refused(setting: dict[str, Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        fair_sbm(100, 2, **setting)
