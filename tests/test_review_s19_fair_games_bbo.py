"""Review s19: fair graph clustering, coupled concave games and evolved BBO benchmarks."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

from coplug.formulations.bbo import load, to_pyomo
from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.evolve import EvolutionConfig
from coplug.formulations.bbo.proposers import SymbolicProposer
from coplug.formulations.bbo.pyomo_model import pyomo_objective_at
from coplug.formulations.fair_graphs import as_adjacency, fair_sbm
from coplug.formulations.fair_metrics import (
    balance,
    cut_weight,
    proportion_deviation,
    ratio_cut,
)
from coplug.formulations.game_solvers import certify
from coplug.formulations.games import Game, cournot
from coplug.plugins.errors import InputError

SQUARE = np.ones((4, 4)) - np.eye(4)
LABELS = np.array([0, 0, 1, 1])


# --- fair clustering --------------------------------------------------------------------------


@pytest.mark.parametrize("adjacency, what", [
    (np.ones((4, 3)), "square"),
    (np.where(SQUARE > 0, np.nan, 0.0), "NaN"),
    (np.where(SQUARE > 0, np.inf, 0.0), "infinite"),
    (-SQUARE, "negative"),
    (np.triu(SQUARE), "symmetric"),
])
@pytest.mark.parametrize("metric", [ratio_cut, cut_weight])
def test_cut_metrics_refuse_bad_adjacency(adjacency: np.ndarray, what: str, metric) -> None:
    with pytest.raises(InputError, match=what):
        metric(adjacency, LABELS)


@pytest.mark.parametrize("make", [np.zeros, lambda shape: sp.csr_matrix(shape)])
def test_empty_graph_is_refused_by_name(make) -> None:
    from coplug.learned.fair_spectral import FairSpectralClustering

    with pytest.raises(InputError, match="no nodes"):
        ratio_cut(make((0, 0)), [])
    with pytest.raises(InputError, match="no nodes"):
        FairSpectralClustering(1, method="normalized").fit(make((0, 0)))


def test_cut_metrics_still_take_isolated_nodes_and_self_loops() -> None:
    adjacency = np.zeros((5, 5))
    adjacency[:4, :4] = SQUARE + np.eye(4)
    labels = np.array([0, 0, 1, 1, 1])
    # clusters {0,1} and {2,3,4}: 4 crossing edges, each counted once per side
    assert ratio_cut(adjacency, labels) == pytest.approx(4 / 2 + 4 / 3)
    assert cut_weight(adjacency, labels) == pytest.approx(4.0)


@pytest.mark.parametrize("make", [np.array, sp.csr_matrix])
def test_complex_adjacency_is_refused_not_truncated(make) -> None:
    adjacency = make(SQUARE * (1 + 2j))
    with pytest.raises(InputError, match="real"):
        as_adjacency(adjacency)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n, k, h", [(4, 2, 2), (6, 3, 2), (9, 3, 3)])
def test_fair_sbm_planted_partition_holds_every_group(seed: int, n: int, k: int, h: int) -> None:
    data = fair_sbm(n, n_clusters=k, n_groups=h, avg_degree=2.0, seed=seed)
    assert np.bincount(data.groups, minlength=h).min() >= k
    assert np.unique(data.planted).size == k
    # every planted cluster holds every group, as evenly as integer sizes allow
    counts = np.zeros((k, h))
    np.add.at(counts, (data.planted, data.groups), 1)
    assert (counts.min(axis=0) >= 1).all()
    assert (counts.max(axis=0) - counts.min(axis=0) <= 1).all()


def test_fair_sbm_keeps_its_draw_when_groups_are_large() -> None:
    data = fair_sbm(400, n_clusters=4, seed=3)
    rng = np.random.default_rng(3)
    assert np.array_equal(data.groups, rng.choice(2, size=400, p=[0.5, 0.5]))
    assert balance(data.planted, data.groups) > 0.8
    assert proportion_deviation(data.planted, data.groups) < 0.05


# --- games ------------------------------------------------------------------------------------


@pytest.mark.parametrize("tol", [float("nan"), -1.0, "1e-9", None])
def test_certify_refuses_bad_feasibility_tol(tol: object) -> None:
    game = cournot(2)
    with pytest.raises(InputError, match="feasibility_tol"):
        certify(game, profile={"firm0": [5.0], "firm1": [5.0]}, feasibility_tol=tol)


def _one_player(kind: str) -> Game:
    game = Game("g")
    a = game.add_player("a")
    a.x = pyo.Var(bounds=(0, 4), initialize=1.0)
    if kind == "indexed":
        a.utility = pyo.Expression([0, 1], rule=lambda b, i: -(b.x - i) ** 2)
    elif kind == "constraint":
        a.utility = pyo.Constraint(expr=a.x <= 3)
    elif kind == "block":
        a.utility = pyo.Block()
    return game


@pytest.mark.parametrize("kind", ["indexed", "constraint", "block"])
def test_utility_that_is_not_a_scalar_expression_is_refused(kind: str) -> None:
    from coplug.formulations.game_solvers import barrier_gradient_ascent

    game = _one_player(kind)
    with pytest.raises(InputError, match="utility of player 'a' must be a scalar"):
        game.validate()
    with pytest.raises(InputError, match="scalar"):
        certify(game)
    with pytest.raises(InputError, match="scalar"):
        barrier_gradient_ascent(game, max_iter=5)


# --- bbo --------------------------------------------------------------------------------------


def test_pyomo_objective_at_refuses_a_point_of_the_wrong_length() -> None:
    model = to_pyomo(load("sum(x ** 2)", 2))
    assert pyomo_objective_at(model, np.array([1.0, 1.0])) == pytest.approx(2.0)
    for point in (np.array([0.0]), np.zeros(3), np.zeros((1, 2))):
        with pytest.raises(InputError, match="2 coordinates"):
            pyomo_objective_at(model, point)
    assert pyomo_objective_at(model, [0.5, 0.0]) == pytest.approx(0.25)


@pytest.mark.parametrize("dim", [True, -1, 2.0, "2"])
def test_load_refuses_a_dim_that_is_not_a_positive_integer(dim: object) -> None:
    with pytest.raises(InputError, match="dim must be a positive integer"):
        load("sum(x)", dim)


def test_load_takes_a_numpy_integer_dim() -> None:
    program = load("sum(x ** 2)", np.int64(3))
    assert program.dim == 3 and type(program.dim) is int


@pytest.mark.parametrize("dim", [-1, 0, True, 1.5])
def test_symbolic_proposer_refuses_bad_dim(dim: object) -> None:
    with pytest.raises(InputError, match="dim must be a positive integer"):
        SymbolicProposer(dim).random_program(np.random.default_rng(0))


@pytest.mark.parametrize("field, value", [("max_nodes", 0), ("attempts", 0),
                                          ("crossover_rate", 1.5), ("lower", 6.0)])
def test_symbolic_proposer_refuses_bad_settings(field: str, value: object) -> None:
    with pytest.raises(InputError, match=field if field != "lower" else "lower < upper"):
        SymbolicProposer(2, **{field: value})


def test_symbolic_proposer_refuses_negative_n() -> None:
    with pytest.raises(InputError, match="n must be"):
        SymbolicProposer(2).propose([], -1, np.random.default_rng(0))


@pytest.mark.parametrize("instance", [-1, 1.5, True, "1"])
def test_bbob_refuses_bad_instance(instance: object) -> None:
    with pytest.raises(InputError, match="instance"):
        bbob_problem(1, 2, instance=instance)


def test_bbob_instances_differ_and_keep_their_optimum() -> None:
    for instance in (0, 1, 7):
        problem = bbob_problem(3, 2, instance=instance)
        value = load(problem.program.text, 2, max_abs=np.inf)
        from coplug.formulations.bbo import numpy_evaluator

        assert numpy_evaluator(value)(problem.x_opt[None, :])[0] == pytest.approx(problem.f_opt)


@pytest.mark.parametrize("field, value", [
    ("population", 2.5), ("seeds", 5.5), ("generations", 1.5), ("budget", 2.5),
    ("sample", -3), ("max_nodes", 0), ("dim", True), ("population", True),
])
def test_evolution_config_names_a_bad_count(field: str, value: object) -> None:
    with pytest.raises(InputError, match=field):
        EvolutionConfig(**{field: value})
