"""`solve(model, warmstart=True)`: the values in the variables reach SCIP and HiGHS as a MIP
start, a bad start never changes the optimum, and bad requests are named."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import solve
from coplug.plugins.errors import InputError
from coplug.plugins.results import Status

# Stop at the first solution found: with a start taken, that is the start itself.
FIRST_SOLUTION = {"scip": {"limits/solutions": 1}, "highs": {"mip_max_improving_sols": 1}}


def solved(seed: int = 1) -> tuple[pyo.ConcreteModel, float]:
    """A knapsack with HiGHS's optimum loaded into it, and that optimum."""
    model = mknapsack(20, seed=seed)
    result = solve(model, solver="highs")
    assert result.optimal
    return model, result.objective


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_optimal_start_is_the_first_solution(solver: str) -> None:
    model, optimum = solved()
    cold = solve(mknapsack(20, seed=1), solver=solver, **FIRST_SOLUTION[solver])
    warm = solve(model, solver=solver, warmstart=True, **FIRST_SOLUTION[solver])
    assert warm.objective == pytest.approx(optimum, rel=1e-9)
    assert cold.objective < optimum - 1.0  # without the start the first solution is worse
    assert warm.extra["warmstart"]["values"] == warm.extra["warmstart"]["variables"] == 20
    if solver == "scip":
        assert warm.extra["warmstart"]["accepted"] is True


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_infeasible_start_keeps_the_optimum(solver: str) -> None:
    model, optimum = solved(seed=2)
    for var in model.component_data_objects(pyo.Var):
        var.set_value(1.0)  # every item packed: over capacity
    result = solve(model, solver=solver, warmstart=True)
    assert result.optimal and result.objective == pytest.approx(optimum, rel=1e-9)
    if solver == "scip":
        assert result.extra["warmstart"]["accepted"] is False


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_partial_start_is_completed_by_the_solver(solver: str) -> None:
    model, optimum = solved(seed=3)
    for k, var in enumerate(model.component_data_objects(pyo.Var)):
        if k % 2:
            var.set_value(None)
    result = solve(model, solver=solver, warmstart=True)
    assert result.optimal and result.objective == pytest.approx(optimum, rel=1e-9)
    assert result.extra["warmstart"]["values"] == 10
    assert result.extra["warmstart"]["accepted"] is None


def test_no_values_is_no_start() -> None:
    result = solve(mknapsack(20, seed=4), warmstart=True)
    assert result.status is Status.OPTIMAL
    assert result.extra["warmstart"] == {"values": 0, "variables": 20, "accepted": False}


def test_cold_solve_reports_no_start() -> None:
    assert "warmstart" not in solve(mknapsack(20, seed=4)).extra


def test_bad_requests_are_named() -> None:
    model, _ = solved()
    with pytest.raises(InputError, match="warmstart must be True or False"):
        solve(model, warmstart="yes")
    with pytest.raises(InputError, match="solver='scip' or 'highs'"):
        solve(model, solver="lap", warmstart=True)
    var = next(model.component_data_objects(pyo.Var))
    var.set_value("full", skip_validation=True)
    with pytest.raises(InputError, match=r"x\[0\] holds 'full'"):
        solve(model, warmstart=True)
    var.set_value(float("nan"), skip_validation=True)
    with pytest.raises(InputError, match="not a finite number"):
        solve(model, solver="highs", warmstart=True)
