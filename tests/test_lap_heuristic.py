"""The LAP primal heuristic inside real SCIP solves: it finds the assignment block of a TSP
generically, is called, submits patched tours SCIP accepts, and never changes the optimum."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyscipopt import SCIP_PARAMSETTING

from coplug.formulations.assignment import assignment_model
from coplug.plugins import solve
from coplug.plugins.lap.heuristic import LapHeuristic, patch_cycles, successor_cycles
from coplug.plugins.lap.solver import solve_lap


@pytest.fixture(scope="module", autouse=True)
def warm_jit() -> None:
    import scipy.sparse as sp

    solve_lap(sp.csr_matrix(np.arange(1.0, 10.0).reshape(3, 3)), row_duals=np.zeros(3))
    solve_lap(sp.csr_matrix(np.arange(1.0, 10.0).reshape(3, 3)))


def _own_tsp(dist: np.ndarray) -> pyo.ConcreteModel:
    """MTZ TSP with x[i,j] (i != j), out_degree / in_degree (fallback when formulations/tsp.py
    is absent)."""
    n = len(dist)
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(arcs, domain=pyo.Binary)
    m.u = pyo.Var(range(1, n), bounds=(1, n - 1))
    m.out_degree = pyo.Constraint(
        range(n), rule=lambda m, i: sum(m.x[i, j] for j in range(n) if j != i) == 1
    )
    m.in_degree = pyo.Constraint(
        range(n), rule=lambda m, j: sum(m.x[i, j] for i in range(n) if i != j) == 1
    )
    m.mtz = pyo.Constraint(
        [(i, j) for i, j in arcs if i and j],
        rule=lambda m, i, j: m.u[i] - m.u[j] + (n - 1) * m.x[i, j] <= n - 2,
    )
    m.length = pyo.Objective(expr=sum(float(dist[i, j]) * m.x[i, j] for i, j in arcs))
    return m


def tsp_model(dist: np.ndarray) -> pyo.ConcreteModel:
    """The project's TSP formulation when available, else the local MTZ model."""
    try:
        from coplug.formulations.tsp import tsp_mip
    except ImportError:
        return _own_tsp(dist)
    return tsp_mip(dist, subtour="mtz")


def _distances(n: int, seed: int) -> np.ndarray:
    p = np.random.default_rng(seed).random((n, 2))
    return np.round(100 * np.linalg.norm(p[:, None] - p[None], axis=2))


class _NoOtherHeuristics:
    """Test plugin: switch SCIP's own heuristics off so ours must supply the incumbents."""

    name = "no_heuristics"

    def attach(self, scip_model, var_map) -> None:
        scip_model.setHeuristics(SCIP_PARAMSETTING.OFF)


@pytest.mark.parametrize("seed", [0, 1])
def test_heuristic_runs_in_scip_and_keeps_the_optimum(seed: int) -> None:
    dist = _distances(11, seed)
    plain = solve(tsp_model(dist))
    heuristic = LapHeuristic()
    limit = 600.0 if seed else None  # seed 1: the heuristic passes SCIP's time left to JV
    with_plugin = solve(tsp_model(dist), plugins=[_NoOtherHeuristics(), heuristic],
                        time_limit=limit)
    stats = with_plugin.plugin_stats["lap_heuristic"]
    assert plain.optimal and with_plugin.optimal
    assert with_plugin.objective == pytest.approx(plain.objective)
    assert stats["blocks"] == 1 and stats["calls"] >= 1 and stats["lap_solves"] >= 1
    assert stats["accepted"] >= 1


def test_blocks_found_generically_in_a_pure_assignment() -> None:
    cost = np.random.default_rng(2).integers(0, 9, size=(6, 6)).astype(float)
    heuristic = LapHeuristic()
    result = solve(assignment_model(cost), plugins=[heuristic])
    reference = solve(assignment_model(cost), solver="lap")
    assert heuristic.statistics()["blocks"] == 1
    assert result.objective == pytest.approx(reference.objective)


def test_no_block_means_no_heuristic() -> None:
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(3), domain=pyo.Binary)
    model.c = pyo.Constraint(expr=2 * model.x[0] + model.x[1] + model.x[2] <= 2)
    model.o = pyo.Objective(expr=-sum(model.x[i] for i in range(3)))
    heuristic = LapHeuristic()
    assert solve(model, plugins=[heuristic]).objective == pytest.approx(-2)
    assert heuristic.statistics()["blocks"] == 0 and heuristic.statistics()["calls"] == 0


def test_patching_turns_cycles_into_one_tour() -> None:
    n = 8
    cost = _distances(n, 3)
    np.fill_diagonal(cost, np.inf)
    partner = np.arange(n)
    two_cycles = np.array([1, 2, 3, 0, 5, 6, 7, 4])
    assert len(successor_cycles(two_cycles, partner)) == 2
    tour = patch_cycles(two_cycles, cost, partner)
    assert len(successor_cycles(tour, partner)) == 1
    assert sorted(tour.tolist()) == list(range(n))


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_block_costs_follow_the_objective_sense(sense: str) -> None:
    """On a maximizing model the block's LAP (which minimizes) must find the maximum."""
    from pyscipopt import Model, quicksum

    from coplug.plugins.lap.heuristic import find_blocks

    cost = np.random.default_rng(5).integers(0, 100, size=(5, 5)).astype(float)
    scip = Model()
    x = {(i, j): scip.addVar(vtype="B", name=f"x_{i}_{j}") for i in range(5) for j in range(5)}
    for k in range(5):
        scip.addCons(quicksum(x[k, j] for j in range(5)) == 1)
        scip.addCons(quicksum(x[i, k] for i in range(5)) == 1)
    scip.setObjective(quicksum(cost[i, j] * x[i, j] for i, j in x), sense)
    (block,) = find_blocks(scip)
    chosen = solve_lap(block.dense(block.costs))
    picked = {(block.vars[k].name) for k in range(len(block.rows))
              if chosen.col_ind[block.rows[k]] == block.cols[k]}
    value = sum(cost[i, j] for (i, j), var in x.items() if var.name in picked)
    assert value == solve_lap(cost, maximize=sense == "maximize").cost
