"""LapHeuristic regressions from a review: presolve-aggregated variables, SCIP stopping
without a verdict at a closed gap, reuse across solves, honest counters, failures."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyscipopt import Heur
from pyscipopt.scip import PY_SCIP_HEURTIMING

from coplug.formulations.tsp import random_euclidean, tsp_mip
from coplug.plugins import SolverError, Status, solve
from coplug.plugins.lap.heuristic import LapHeuristic


def test_variables_presolve_multi_aggregated_do_not_abort_the_solve() -> None:
    # probing bound changes on them made SCIP fail ("cannot change bounds of multi-aggregated
    # variable"): the solve raised a bare Exception
    dist = random_euclidean(14, seed=3).dist
    plain = solve(tsp_mip(dist))
    result = solve(tsp_mip(dist), plugins=[LapHeuristic()])
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(plain.objective, rel=1e-9)
    assert result.plugin_stats["lap_heuristic"]["error"] is None


def _asymmetric_max_tsp() -> pyo.ConcreteModel:
    n = 20
    dist = np.random.default_rng(1).integers(1, 100, (n, n)).astype(float)
    np.fill_diagonal(dist, 0)
    model = tsp_mip(dist)
    model.length.sense = pyo.maximize
    return model


def test_a_closed_gap_is_optimal_even_when_scip_stops_without_a_verdict() -> None:
    # after the heuristic's incumbents SCIP restarted 4 times and stopped 'unknown' with
    # primal bound == dual bound: reported 'feasible'
    plain = solve(_asymmetric_max_tsp())
    result = solve(_asymmetric_max_tsp(), plugins=[LapHeuristic()])
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(plain.objective) == pytest.approx(result.bound)


def test_a_reused_heuristic_counts_each_solve_afresh_and_honestly() -> None:
    dist = random_euclidean(12, seed=1).dist
    heuristic = LapHeuristic(max_calls=5)
    first = solve(tsp_mip(dist), plugins=[heuristic]).plugin_stats["lap_heuristic"]
    second = solve(tsp_mip(dist), plugins=[heuristic]).plugin_stats["lap_heuristic"]
    fresh = solve(tsp_mip(dist), plugins=[LapHeuristic(max_calls=5)]).plugin_stats
    for stats in (first, second):
        assert 0 < stats["calls"] <= 5
        assert stats["candidates"] == stats["completed"] + stats["cut_off"]
        assert stats["accepted"] <= stats["completed"]
    counts = ("calls", "candidates", "completed", "cut_off", "accepted")
    assert [second[k] for k in counts] == [fresh["lap_heuristic"][k] for k in counts]


def test_a_failing_heuristic_call_warns_and_scip_goes_on(monkeypatch) -> None:
    def broken(self, scip, heur, block):
        raise RuntimeError("boom")

    monkeypatch.setattr(LapHeuristic, "_run_block", broken)
    dist = random_euclidean(8, seed=1).dist
    with pytest.warns(RuntimeWarning, match="LapHeuristic failed"):
        result = solve(tsp_mip(dist), plugins=[LapHeuristic()])
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(solve(tsp_mip(dist)).objective)
    assert result.plugin_stats["lap_heuristic"]["error"] == "RuntimeError: boom"


class _Raising(Heur):
    def heurexec(self, heurtiming, nodeinfeasible):
        raise RuntimeError("plugin bug")


class _RaisingPlugin:
    name = "raising"

    def attach(self, scip, var_map) -> None:
        scip.includeHeur(_Raising(), "raising", "raises", "R", priority=10**6, freq=1,
                         timingmask=PY_SCIP_HEURTIMING.BEFORENODE)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_scip_stopping_on_a_plugin_error_is_a_solver_error() -> None:
    with pytest.raises(SolverError, match="SCIP stopped with an error"):
        solve(tsp_mip(random_euclidean(6, seed=0).dist), plugins=[_RaisingPlugin()])
