"""PMVB as a primal heuristic (mode="start"): exact whatever the prediction, step 1 searches
the likely region and hands its solution to step 2, and misuse is named."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest
from pyomo.common.collections import ComponentMap

from coplug.formulations.mip_families import build_family
from coplug.plugins import InputError, solve
from coplug.plugins.pmvb import PMVBBranching
from coplug.plugins.pmvb_start import solve_pmvb_start
from coplug.plugins.results import Status

SMALL = {"mknapsack": 22, "setcover": 60, "gisp": 25, "indset": 120, "cauction": 30, "fcnf": 12}


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a))


def _optimum(model: pyo.ConcreteModel) -> ComponentMap:
    """Each binary's value in the solution loaded into `model`."""
    return ComponentMap((v, float(round(v.value))) for v in model.component_data_objects(pyo.Var)
                        if v.is_binary())


@pytest.mark.parametrize("family", sorted(SMALL))
def test_start_mode_keeps_the_optimum(family: str) -> None:
    for seed in range(2):
        model = build_family(family, SMALL[family], seed)
        reference = solve(model, solver="highs")
        assert reference.optimal
        for t, q in ((0.9, 0.99), (0.6, 0.2)):
            result = solve_pmvb_start(model, "lp", t, q)
            assert result.optimal and _same(result.objective, reference.objective), (seed, t, q)
            objective = next(model.component_data_objects(pyo.Objective, active=True))
            assert _same(pyo.value(objective), reference.objective)  # the loaded point


def test_oracle_start_finds_the_optimum_in_step_one() -> None:
    model = build_family("mknapsack", 25, 1)
    reference = solve(model)
    result = solve_pmvb_start(model, _optimum(model), threshold=0.9, confidence=0.3)
    report = result.extra["pmvb_start"]
    assert report["likely_held"] is True and report["rhs_lower"] is not None
    assert _same(report["likely_objective"], reference.objective)
    assert report["start_accepted"] is True and result.extra["warmstart"]["accepted"] is True
    assert result.optimal and _same(result.objective, reference.objective)
    assert result.nodes >= report["likely_nodes"] and result.time >= report["likely_time"]


def test_wrong_prediction_keeps_the_optimum() -> None:
    model = build_family("mknapsack", 30, 2)
    reference = solve(model)
    wrong = ComponentMap((v, 1.0 - x) for v, x in _optimum(model).items())
    result = solve_pmvb_start(model, wrong, threshold=0.9, confidence=0.3)
    report = result.extra["pmvb_start"]
    assert report["likely_held"] is not True
    if report["likely_objective"] is not None:  # maximizing: the likely region is worse
        assert report["likely_objective"] < reference.objective - 1e-6
    assert result.optimal and _same(result.objective, reference.objective)


def test_models_without_binaries_and_infeasible_models() -> None:
    lp = pyo.ConcreteModel()
    lp.x = pyo.Var(range(3), bounds=(0, 4))
    lp.c = pyo.Constraint(expr=lp.x[0] + 2 * lp.x[1] + lp.x[2] <= 5)
    lp.o = pyo.Objective(expr=lp.x[0] + lp.x[1] + 3 * lp.x[2], sense=pyo.maximize)
    result = solve_pmvb_start(lp)
    assert result.optimal and _same(result.objective, solve(lp, solver="highs").objective)
    assert result.extra["pmvb_start"]["n_upper"] == 0
    bad = build_family("mknapsack", 10, 0)
    bad.impossible = pyo.Constraint(expr=sum(bad.x.values()) >= 11)
    assert solve_pmvb_start(bad).status is Status.INFEASIBLE


def test_limits_and_misuse_are_named() -> None:
    model = build_family("setcover", 60, 0)
    limited = solve_pmvb_start(model, "lp", 0.6, 0.2, time_limit=1e-3)
    assert limited.status is Status.TIME_LIMIT
    with pytest.raises(InputError, match="takes no plugins"):
        solve_pmvb_start(model, plugins=[])
    with pytest.raises(InputError, match="drop warmstart"):
        solve_pmvb_start(model, warmstart=True)
    with pytest.raises(InputError, match="likely_nodes"):
        solve_pmvb_start(model, likely_nodes=0)
    with pytest.raises(InputError, match="solve_pmvb_start"):
        solve(model, plugins=[PMVBBranching("lp", mode="start")])


def test_cli_start_mode(capsys: pytest.CaptureFixture) -> None:
    from coplug.plugins.cli import main

    assert main(["pmvb", "setcover", "--size", "60", "--mode", "start",
                 "--threshold", "0.6", "--confidence", "0.3"]) == 0
    assert "same optimum: True" in capsys.readouterr().out


class _StopAfter:
    """A plugin that interrupts SCIP after `k` nodes, as SCIP's own Ctrl-C handler does."""

    name = "stop_after"

    def __init__(self, k: int) -> None:
        self.k = k

    def attach(self, scip, var_map) -> None:
        from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

        k = self.k

        class _Stop(Eventhdlr):
            def eventinit(self):
                self.model.catchEvent(SCIP_EVENTTYPE.NODESOLVED, self)

            def eventexec(self, event):
                if self.model.getNNodes() >= k:
                    self.model.interruptSolve()

        scip.includeEventhdlr(_Stop(), "stop_after", "interrupt after k nodes")


def test_interrupt_in_step_one_keeps_a_valid_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from coplug.plugins import bridge

    model = build_family("mknapsack", 40, 5)  # maximizes
    optimum = solve(model).objective
    wrong = ComponentMap()
    for var in model.component_data_objects(pyo.Var):
        if var.is_binary() and round(var.value) == 0 and len(wrong) < 4:
            wrong[var] = 1.0  # four binaries that are 0 at the optimum, predicted 1
    real = bridge.solve

    def interrupted_step_one(model, plugins=(), **kwargs):
        plugins = list(plugins)
        if any(isinstance(p, PMVBBranching) for p in plugins):
            plugins.append(_StopAfter(10))
        return real(model, plugins=plugins, **kwargs)

    monkeypatch.setattr(bridge, "solve", interrupted_step_one)
    result = solve_pmvb_start(model, wrong, threshold=0.9, confidence=0.2)
    assert result.status is Status.INTERRUPTED
    assert result.objective <= optimum + 1e-6 <= result.bound + 2e-6  # the root's bound


def test_likely_held_is_about_the_final_solution() -> None:
    """held: the optimum found by step 2 lies in the likely region; likely_objective only
    for a step-1 solution inside the region."""
    for seed in range(4):
        model = build_family("mknapsack", 30, seed)
        reference = solve(model)
        wrong = ComponentMap((v, 1.0 - x) for v, x in _optimum(model).items())
        result = solve_pmvb_start(model, wrong, threshold=0.6, confidence=0.2)
        report = result.extra["pmvb_start"]
        assert result.optimal and _same(result.objective, reference.objective)
        assert report["likely_held"] is False  # the region is built on the optimum's opposite
        assert result.plugin_stats["pmvb"]["likely_held"] is False
        if report["likely_objective"] is not None:
            assert report["likely_objective"] <= reference.objective + 1e-6


def test_user_node_limit_also_bounds_step_one() -> None:
    model = build_family("mknapsack", 40, 1)
    result = solve_pmvb_start(model, "lp", 0.6, 0.2, **{"limits/nodes": 2})
    assert result.status is Status.NODE_LIMIT
    assert result.extra["pmvb_start"]["likely_nodes"] <= 2
    busy = build_family("mknapsack", 40, 2)  # step 1 uses all its 50 nodes here
    unlimited = solve_pmvb_start(busy, "lp", 0.6, 0.2, **{"limits/nodes": -1})  # SCIP: none
    assert unlimited.optimal and unlimited.extra["pmvb_start"]["likely_nodes"] > 2
