"""Fixes from the ninth session's review of games, TSP and open pit: a directed network no
longer gets the wrong link capacities, and malformed arguments are refused by name."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from coplug.formulations import openpit, tsp
from coplug.formulations.game_solvers import barrier_gradient_ascent
from coplug.formulations.games import (
    Game,
    cournot_equilibrium,
    network_flow,
    resource_allocation,
)
from coplug.plugins import InputError


def _directed_network() -> nx.DiGraph:
    """Arc b->a has capacity 1, the opposite arc a->b 100: one link cannot hold both."""
    graph = nx.DiGraph()
    graph.add_edge("s", "b", capacity=100.0)
    graph.add_edge("b", "a", capacity=1.0)
    graph.add_edge("a", "b", capacity=100.0)
    graph.add_edge("a", "t", capacity=100.0)
    return graph


@pytest.mark.parametrize("graph", [_directed_network(), nx.MultiGraph([("s", "t")])])
def test_network_flow_refuses_directed_and_multi_graphs(graph: nx.Graph) -> None:
    with pytest.raises(InputError, match="undirected nx.Graph"):
        network_flow(graph, demands=[("s", "t", 5.0)], paths_per_player=1)


def test_network_flow_on_the_undirected_version_respects_the_capacity() -> None:
    graph = nx.Graph()
    for u, v, cap in (("s", "b", 100.0), ("b", "a", 1.0), ("a", "t", 100.0)):
        graph.add_edge(u, v, capacity=cap)
    game = network_flow(graph, demands=[("s", "t", 50.0)], paths_per_player=1, latency=0.0)
    result = barrier_gradient_ascent(game)
    assert result.profile["source0"].sum() <= 1.0 + 1e-6


@pytest.mark.parametrize(("demands", "message"), [
    ([("s1", "t")], "triple"), (5, "list of"), ([("s1", "t", 1.0, 2.0)], "triple"),
])
def test_network_flow_demands_must_be_triples(demands: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        network_flow(demands=demands)


@pytest.mark.parametrize("call", [
    lambda: resource_allocation(weights=3.0),
    lambda: Game().add_player(5),
    lambda: cournot_equilibrium(0, 10.0, 1.0, 1.0, 5.0),
    lambda: cournot_equilibrium(3, 10.0, 0.0, 1.0, 5.0),
    lambda: cournot_equilibrium(3, float("nan"), 1.0, 1.0, 5.0),
    lambda: tsp.random_euclidean(5, scale=-1.0),
    lambda: tsp.random_euclidean(5, scale=float("nan")),
    lambda: tsp.tsp_qubo_naive(np.ones((4, 4)), penalty=-5.0),
    lambda: tsp.tsp_qubo_naive(np.ones((4, 4)), penalty="abc"),
    lambda: openpit.openpit_qubo_naive(openpit.random_block_model(10), penalty=-1.0),
])
def test_malformed_arguments_are_input_errors(call) -> None:
    with pytest.raises(InputError):
        call()


def test_cournot_equilibrium_still_matches_its_formula() -> None:
    assert cournot_equilibrium(3, 10.0, 1.0, 2.0, 100.0) == pytest.approx(2.0)
    assert cournot_equilibrium(3, 10.0, 1.0, 2.0, 3.0) == pytest.approx(1.0)


def test_barrier_weight_messages_say_why() -> None:
    game = resource_allocation()
    with pytest.raises(InputError) as zero:
        barrier_gradient_ascent(game, mu=0.0)
    assert "overflows" not in str(zero.value)
    with pytest.raises(InputError, match="overflows"):
        barrier_gradient_ascent(game, mu=1e300)


def test_overflowing_safe_qubo_says_to_rescale() -> None:
    with pytest.raises(InputError, match="rescale"):
        tsp.tsp_qubo_safe(np.full((4, 4), 1e308))


def _tight_knapsack(tmp_path) -> str:
    """Two items of weight 10**6, capacity one short of both: the optimum takes one."""
    path = tmp_path / "tight.txt"
    path.write_text("2 1999999\n1 1000000\n1 1000000\n")
    return str(path)


def test_exact_knapsack_optimum_respects_a_large_capacity(tmp_path) -> None:
    """SCIP's relative feasibility tolerance let a packing 1 over a capacity of 2e6 pass
    as the 'exact' optimum 2; the CLI's exact solve tightens it to 0.1 / C."""
    from coplug.formulations.qubo_cli import exact_optimum, make_case

    case = make_case("knapsack", 2, path=_tight_knapsack(tmp_path))
    optimum, _ = exact_optimum(case)
    assert optimum == 1


def test_knapsack_mip_refuses_data_float64_would_round() -> None:
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_mip

    inst = KnapsackInstance(values=np.array([5]), weights=np.array([2**53 + 1]),
                            capacity=2**53)
    with pytest.raises(InputError, match="2\\*\\*53"):
        knapsack_mip(inst)


def test_non_utf8_instance_files_are_input_errors(tmp_path) -> None:
    from coplug.formulations.knapsack import load_knapsack

    path = tmp_path / "bad.txt"
    path.write_bytes(b"2 10\xff\n1 2\n3 4\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_knapsack(path)
    with pytest.raises(InputError, match="not UTF-8"):
        tsp.load_tsplib(path)


def test_largest_int64_value_round_trips_through_the_file(tmp_path) -> None:
    from coplug.formulations.knapsack import load_knapsack, save_knapsack

    path = tmp_path / "max.txt"
    path.write_text(f"1 5\n{2**63 - 1} 3\n")
    inst = load_knapsack(path)
    save_knapsack(inst, tmp_path / "again.txt")
    assert load_knapsack(tmp_path / "again.txt").values[0] == 2**63 - 1
