"""`race`: the winner's answer is checked against each solver alone, its point against the
model, and no racer process outlives the race."""

from __future__ import annotations

import multiprocessing

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import build_family
from coplug.plugins import (
    InputError,
    Status,
    UnsupportedModelError,
    infeasibilities,
    solve,
)
from coplug.plugins.solver_race import race


@pytest.mark.parametrize("family,size", [("mknapsack", 20), ("setcover", 60), ("fcnf", 8),
                                         ("indset", 30)])
def test_the_winner_agrees_with_each_solver_alone_and_its_point_is_loaded(family, size):
    truth = solve(build_family(family, size, 2), solver="scip")
    m = build_family(family, size, 2)
    result = race(m)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, rel=1e-6)
    assert result.solver == result.extra["race"]["winner"] in ("scip", "highs")
    assert infeasibilities(m) == {}
    objective = next(m.component_data_objects(pyo.Objective, active=True))
    assert pyo.value(objective) == pytest.approx(result.objective, rel=1e-6)
    assert multiprocessing.active_children() == []


def test_highs_races_after_highs_ran_in_this_process():
    # the parent's HiGHS worker threads do not survive the fork: without resetting the
    # scheduler the racer waited on them forever
    solve(build_family("mknapsack", 15, 0), solver="highs")
    result = race(build_family("mknapsack", 15, 1), solvers=["highs"], time_limit=20)
    assert result.status is Status.OPTIMAL and result.solver == "highs"


@pytest.mark.parametrize("expected", [Status.INFEASIBLE, Status.UNBOUNDED])
def test_verdicts_other_than_optimal_end_the_race(expected):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    if expected is Status.INFEASIBLE:
        m.c = pyo.Constraint(expr=m.x + m.y <= -1)
    else:
        m.c = pyo.Constraint(expr=m.x - m.y <= 2)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    result = race(m)
    assert result.status is expected and not result.has_solution


def test_a_racer_that_cannot_take_the_model_leaves_the_race_to_the_other():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-3, 3))
    m.c = pyo.Constraint(expr=pyo.exp(m.x[0]) + m.x[1] ** 2 <= 10)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    result = race(m)
    assert result.status is Status.OPTIMAL and result.solver == "scip"
    assert result.objective == pytest.approx(solve(m).objective)
    assert result.extra["race"]["highs"]["status"] in ("failed", "stopped")
    with pytest.raises(UnsupportedModelError):
        race(m, solvers=["highs"])


def test_without_a_verdict_the_best_point_wins():
    m = build_family("cauction", 150, 0)
    result = race(m, time_limit=1.0)
    assert result.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if result.status is Status.TIME_LIMIT:
        objectives = [v.get("objective") for k, v in result.extra["race"].items()
                      if k != "winner" and v.get("objective") is not None]
        assert result.objective == max(objectives)
    assert infeasibilities(m) == {}


@pytest.mark.parametrize("solvers,fragment", [
    ("scip", "list of solver names"),
    ([], "solvers is empty"),
    (["scip", "scip"], "twice"),
    (["lap"], "among 'scip' and 'highs'"),
    (["gurobi"], "among 'scip' and 'highs'"),
])
def test_bad_racers_are_refused(solvers, fragment):
    with pytest.raises(InputError, match=fragment):
        race(build_family("mknapsack", 5, 0), solvers=solvers)


def test_a_racer_stopped_inside_output_capture_leaves_no_lock_held(monkeypatch):
    # Pyomo's capture_output lock is a multiprocessing lock shared across the fork: a racer
    # killed while it held it (HiGHS's banner is captured at each build) left the parent's
    # next solve waiting on it for good
    import time

    from pyomo.common import dependencies

    import coplug.plugins.solver_race as race_module

    real = race_module.solve

    def slow_highs(model, solver, **kwargs):
        if solver == "highs":  # stopped while entering a capture: the lock is held then
            dependencies.capture_output_lock.acquire()
            time.sleep(60)
        time.sleep(1.0)  # SCIP wins once the HiGHS racer holds the lock
        return real(model, solver=solver, **kwargs)

    monkeypatch.setattr(race_module, "solve", slow_highs)
    assert dependencies.multiprocessing.Lock  # Pyomo upgrades its lock once this is imported
    assert type(dependencies.capture_output_lock).__module__.startswith("multiprocessing")
    result = race(build_family("mknapsack", 10, 0))
    assert result.solver == "scip" and result.extra["race"]["highs"]["status"] == "stopped"
    lock = dependencies.capture_output_lock
    assert lock.acquire(timeout=5)
    lock.release()
