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
    if solver == "scip":
        with pytest.warns(UserWarning, match="warm start not used: it violates constraint "
                                             r"'capacity\[\d\]'") as caught:
            result = solve(model, solver=solver, warmstart=True)
        assert caught[0].filename == __file__  # pointed at the caller's solve()
        assert result.extra["warmstart"]["accepted"] is False
        assert result.extra["warmstart"]["reason"].startswith("it violates constraint")
    else:
        result = solve(model, solver=solver, warmstart=True)
    assert result.optimal and result.objective == pytest.approx(optimum, rel=1e-9)


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


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_no_values_is_no_start_and_says_so(solver: str) -> None:
    with pytest.warns(UserWarning, match="no variable has a value") as caught:
        result = solve(mknapsack(20, seed=4), solver=solver, warmstart=True)
    assert caught[0].filename == __file__
    assert result.status is Status.OPTIMAL
    report = result.extra["warmstart"]
    assert (report["values"], report["variables"], report["accepted"]) == (0, 20, False)
    assert "solve once, or set them" in report["reason"]


def test_an_out_of_bounds_or_fractional_start_names_the_variable() -> None:
    model, optimum = solved(seed=5)
    model.x[3].set_value(2.0, skip_validation=True)
    with pytest.warns(UserWarning, match=r"the bounds of x\[3\] \(value 2\)"):
        assert solve(model, warmstart=True).objective == pytest.approx(optimum, rel=1e-9)
    model.x[3].set_value(0.5, skip_validation=True)
    with pytest.warns(UserWarning, match=r"the integrality of x\[3\] \(value 0.5\)"):
        assert solve(model, warmstart=True).objective == pytest.approx(optimum, rel=1e-9)


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


def _param_model() -> pyo.ConcreteModel:
    """Pick at least `need` (a mutable Param) of three weighted items, cheapest first."""
    m = pyo.ConcreteModel()
    m.need = pyo.Param(initialize=2, mutable=True)
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= m.need)
    m.o = pyo.Objective(expr=sum((i + 1) * m.x[i] for i in range(3)))
    return m


def test_params_and_nonlinear_objectives_make_complete_checked_starts() -> None:
    m = _param_model()
    for i, value in enumerate((1, 0, 0)):  # one item where two are needed: infeasible
        m.x[i].set_value(value)
    with pytest.warns(UserWarning, match="it violates constraint 'c'"):
        bad = solve(m, warmstart=True)
    assert bad.extra["warmstart"]["accepted"] is False and bad.objective == 3.0
    for i, value in enumerate((1, 1, 0)):
        m.x[i].set_value(value)
    assert solve(m, warmstart=True).extra["warmstart"]["accepted"] is True
    q = pyo.ConcreteModel()
    q.x = pyo.Var(range(2), bounds=(0, 3))
    q.y = pyo.Var(domain=pyo.Binary)
    q.c = pyo.Constraint(expr=q.x[0] + q.x[1] >= 1 + q.y)
    q.o = pyo.Objective(expr=(q.x[0] - 1) ** 2 + q.x[1] ** 2 + q.y)  # SCIP: epigraph variable
    q.x[0].set_value(1.0), q.x[1].set_value(0.0), q.y.set_value(0)
    warm = solve(q, warmstart=True, **{"limits/solutions": 1})
    assert warm.extra["warmstart"]["accepted"] is True
    assert warm.objective == pytest.approx(0.0, abs=1e-6)  # the start, optimal


def test_too_partial_a_start_is_reported_unused() -> None:
    model, _ = solved()
    for k, var in enumerate(model.component_data_objects(pyo.Var)):
        if k >= 2:
            var.set_value(None)
    with pytest.warns(UserWarning, match="completes a partial start only"):
        report = solve(model, warmstart=True).extra["warmstart"]
    assert report["accepted"] is False and "completes a partial start only" in report["reason"]


def test_a_model_with_nothing_to_decide_reports_its_start() -> None:
    m = _param_model()
    for i in range(3):
        m.x[i].fix(1)
    for solver in ("scip", "highs"):
        result = solve(m, solver=solver, warmstart=True)
        assert result.optimal and result.objective == 6.0 and "warmstart" in result.extra


def test_a_start_beside_a_variable_fixed_past_scips_infinity_is_used() -> None:
    """p fixed at 1e30 enters SCIP at its value and its own SCIP variable is free: the start
    gave it 1e30, past SCIP's infinity, and SCIP refused the whole start."""
    import warnings

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10), initialize=1.1)
    m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 5), initialize=0)
    m.p = pyo.Var(initialize=1e30)
    m.p.fix()
    m.c = pyo.Constraint(expr=m.x + m.y >= 1.1)
    m.o = pyo.Objective(expr=m.x + pyo.exp(m.x / m.p) + m.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a refused start warns
        result = solve(m, solver="scip", warmstart=True)
    assert result.extra["warmstart"]["accepted"] is True
    assert result.objective == pytest.approx(2.1)  # x = 1.1, y = 0, exp(~0) = 1


def _start_trap() -> pyo.ConcreteModel:
    """A 6-variable MIP whose start [0, 0, 0, 0, 0, -1] (worth 4; the optimum is 1) HiGHS
    1.16 handed back as "optimal" with only the objective's offset, 0, as its value."""
    lower, upper = [0, 0, 0, 0, -1, -2], [1, 1, 1, 1, 2, 1]
    cost = [-3, 3, -4, -1, 5, -4]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Integers, bounds=lambda _, j: (lower[j], upper[j]))
    m.r1 = pyo.Constraint(expr=sum(c * m.x[j] for j, c in enumerate([4, 1, 0, 1, 4, 5])) <= 5)
    m.r2 = pyo.Constraint(expr=sum(c * m.x[j] for j, c in enumerate([-4, -4, -1, -3, 2, -1]))
                          >= 1)
    m.r3 = pyo.Constraint(expr=sum(c * m.x[j] for j, c in enumerate(cost)) <= 4)
    m.o = pyo.Objective(expr=sum(c * m.x[j] for j, c in enumerate(cost)))
    for j, value in enumerate([0, 0, 0, 0, 0, -1]):
        m.x[j].value = value
    return m


def test_a_start_highs_returns_with_a_wrong_objective_is_dropped() -> None:
    truth = solve(_start_trap(), solver="scip")
    m = _start_trap()
    result = solve(m, solver="highs", warmstart=True)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective) == pytest.approx(1.0)
    assert pyo.value(m.o) == pytest.approx(1.0)
    assert result.extra["warmstart"]["accepted"] is False
    assert "solved again without the start" in result.extra["warmstart"]["note"]
