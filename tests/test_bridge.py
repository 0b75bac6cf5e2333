"""The Pyomo -> SCIP/HiGHS bridge: same optimum from both, plugins called, statuses."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import assignment_model
from pyscipopt import SCIP_RESULT, Branchrule
from scipy.optimize import linear_sum_assignment

from coplug.formulations.knapsack import knapsack_mip, random_knapsack
from coplug.plugins import (
    InputError,
    SolverNotAvailableError,
    Status,
    UnsupportedModelError,
    VarMap,
    solve,
)


def _brute_force_knapsack(values: np.ndarray, weights: np.ndarray, capacity: int) -> float:
    best = 0.0
    for bits in itertools.product((0, 1), repeat=len(values)):
        x = np.array(bits)
        if weights @ x <= capacity:
            best = max(best, float(values @ x))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["uncorrelated", "strongly_correlated"])
def test_knapsack_scip_and_highs_agree_with_enumeration(seed: int, kind: str) -> None:
    instance = random_knapsack(12, seed=seed, kind=kind)
    expected = _brute_force_knapsack(instance.values, instance.weights, instance.capacity)
    for solver in ("scip", "highs"):
        model = knapsack_mip(instance)
        result = solve(model, solver=solver)
        assert result.status is Status.OPTIMAL
        assert result.objective == pytest.approx(expected)
        x = np.array([round(model.x[i].value) for i in model.I])
        assert instance.is_feasible(x)
        assert instance.value(x) == pytest.approx(expected)


def test_assignment_scip_and_highs_agree_with_scipy(rng: np.random.Generator) -> None:
    cost = rng.integers(-20, 50, size=(7, 7)).astype(float)
    rows, cols = linear_sum_assignment(cost)
    expected = cost[rows, cols].sum()
    for solver in ("scip", "highs"):
        model = assignment_model(cost)
        result = solve(model, solver=solver)
        assert result.status is Status.OPTIMAL
        assert result.objective == pytest.approx(expected)
        x = np.array([[model.x[i, j].value for j in model.I] for i in model.I])
        assert np.allclose(x.sum(axis=0), 1) and np.allclose(x.sum(axis=1), 1)


class _CountingBranching(Branchrule):
    """Branches on the first fractional LP candidate and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.seen_pyomo_names: set[str] = set()
        self.var_map: VarMap | None = None

    def branchexeclp(self, allowaddcons):
        self.calls += 1
        cands, *_ = self.model.getLPBranchCands()
        pyomo_var = self.var_map.to_pyomo(cands[0])
        if pyomo_var is not None:
            self.seen_pyomo_names.add(pyomo_var.name)
        self.model.branchVar(cands[0])
        return {"result": SCIP_RESULT.BRANCHED}


class CountingPlugin:
    """A coplug plugin wrapping the branching rule above."""

    name = "counting"

    def __init__(self) -> None:
        self.rule = _CountingBranching()

    def attach(self, scip_model, var_map: VarMap) -> None:
        self.rule.var_map = var_map
        scip_model.includeBranchrule(
            self.rule, "counting", "counts calls", priority=10**6, maxdepth=-1, maxbounddist=1
        )

    def statistics(self) -> dict:
        return {"calls": self.rule.calls}


def test_branching_plugin_is_called_and_speaks_pyomo_names() -> None:
    instance = random_knapsack(40, seed=3, kind="strongly_correlated")
    reference = solve(knapsack_mip(instance), solver="highs")
    model = knapsack_mip(instance)
    plugin = CountingPlugin()
    result = solve(
        model,
        plugins=[plugin],
        **{"presolving/maxrounds": 0, "separating/maxrounds": 0, "separating/maxroundsroot": 0,
           "heuristics/trivial/freq": -1},
    )
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(reference.objective)
    assert plugin.rule.calls > 0
    assert result.plugin_stats["counting"]["calls"] == plugin.rule.calls
    assert result.nodes > 1
    assert plugin.rule.seen_pyomo_names
    assert all(name.startswith("x[") for name in plugin.rule.seen_pyomo_names)


def _infeasible_model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] >= 3)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1])
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_infeasible_model_reports_status(solver: str) -> None:
    result = solve(_infeasible_model(), solver=solver)
    assert result.status is Status.INFEASIBLE
    assert not result.has_solution and result.objective is None


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_unbounded_model_reports_status(solver: str) -> None:
    m = pyo.ConcreteModel()
    m.y = pyo.Var(domain=pyo.Integers)
    m.o = pyo.Objective(expr=m.y)
    result = solve(m, solver=solver)
    assert result.status in (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)
    assert not result.has_solution


def test_nonlinear_model_to_highs_names_the_constraint() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.circle = pyo.Constraint(expr=m.x**3 <= 1)
    m.o = pyo.Objective(expr=-m.x)
    with pytest.raises(UnsupportedModelError, match="circle"):
        solve(m, solver="highs")
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(-1.0, abs=1e-5)


def test_nonlinear_objective_keeps_scip_exact() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-3, 3))
    m.o = pyo.Objective(expr=(m.x - 1.5) ** 2 + 2)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(2.0, abs=1e-6)
    assert m.x.value == pytest.approx(1.5, abs=1e-3)


def test_bad_requests_give_clear_errors() -> None:
    model = knapsack_mip(random_knapsack(5))
    with pytest.raises(SolverNotAvailableError, match="unknown solver 'gurobi'"):
        solve(model, solver="gurobi")
    with pytest.raises(InputError, match="HiGHS takes no 'counting' plugin; it runs inside SCIP"):
        solve(model, solver="highs", plugins=[CountingPlugin()])
    with pytest.raises(InputError, match="limits/bogus"):
        solve(model, **{"limits/bogus": 3})
    with pytest.raises(InputError, match="time_limit"):
        solve(model, time_limit=-1)
    with pytest.raises(InputError, match="Pyomo model"):
        solve("not a model")
    with pytest.raises(InputError, match="solver must be a name"):
        solve(model, solver=None)
    with pytest.raises(InputError, match="plugins must be a list"):
        solve(model, plugins=None)
    with pytest.raises(InputError, match="shape"):
        random_knapsack(3).__class__(values=np.ones(3), weights=np.ones(4), capacity=2)


def test_time_limit_is_reported() -> None:
    instance = random_knapsack(2000, seed=5, kind="strongly_correlated")
    result = solve(
        knapsack_mip(instance), time_limit=0.01, **{"presolving/maxrounds": 0}
    )
    assert result.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if result.status is Status.TIME_LIMIT:
        assert result.gap is None or result.gap >= 0


def test_model_without_objective_is_a_feasibility_problem_for_scip_and_highs() -> None:
    model = pyo.ConcreteModel()
    model.x = pyo.Var(bounds=(0, 3), domain=pyo.Integers)
    model.c = pyo.Constraint(expr=model.x >= 1.5)
    for solver in ("scip", "highs"):
        model.x.set_value(None)
        result = solve(model, solver=solver)
        assert result.status is Status.OPTIMAL and model.x.value in (2.0, 3.0)
        assert result.objective is None  # no objective, no objective value (SCIP said 0.0)


def test_infinite_time_limit_means_none() -> None:
    model = pyo.ConcreteModel()
    model.x = pyo.Var(domain=pyo.Binary)
    model.o = pyo.Objective(expr=model.x, sense=pyo.maximize)
    assert solve(model, time_limit=math.inf).objective == pytest.approx(1.0)
    for solver in ("scip", "highs"):  # SCIP refuses limits from its infinity, 1e20, on
        assert solve(model, solver=solver, time_limit=1e30).objective == pytest.approx(1.0)


def test_highs_refuses_a_quadratic_objective_over_integers() -> None:
    """HiGHS has no MIQP; it used to return status unknown without a word."""
    model = pyo.ConcreteModel()
    model.x = pyo.Var(bounds=(-3, 3), domain=pyo.Integers)
    model.o = pyo.Objective(expr=(model.x - 1.4) ** 2)
    with pytest.raises(UnsupportedModelError, match="MIQP"):
        solve(model, solver="highs")
    assert solve(model).objective == pytest.approx(0.16)


@pytest.mark.parametrize("option", [{"mip_rel_gapz": 0.1}, {"mip_rel_gap": "abc"},
                                    {"mip_rel_gap": -1.0}])
def test_bad_highs_option_is_named(option: dict) -> None:
    """Pyomo's HiGHS interface ignores HiGHS's status, so a typo used to change nothing."""
    model = pyo.ConcreteModel()
    model.x = pyo.Var(domain=pyo.Binary)
    model.o = pyo.Objective(expr=model.x, sense=pyo.maximize)
    with pytest.raises(InputError, match=f"HiGHS option {next(iter(option))!r}"):
        solve(model, solver="highs", **option)
    assert solve(model, solver="highs", mip_rel_gap=0.1).objective == pytest.approx(1.0)
