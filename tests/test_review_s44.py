"""Session 44's review fixes: a user heuristic at a node whose LP has no solution, and
callbacks during the run that settles SCIP's 'infeasible or unbounded'."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import OnSolution, UserHeuristic, solve


def test_user_heuristic_at_infeasible_nodes_keeps_a_bounded_model_bounded() -> None:
    """mknapsack(30, seed=2) restarts and meets infeasible node LPs, where SCIP's LP values
    are SCIP_INVALID: an all-zero proposal started from them ended "unbounded"."""
    plain = solve(mknapsack(30, seed=2))
    m = mknapsack(30, seed=2)
    seen: list[float] = []

    def zeros(lp):
        seen.extend(lp[v] for v in m.x.values())
        return [(v, 0) for v in m.x.values()]

    result = solve(m, plugins=[UserHeuristic(zeros)])
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(plain.objective, rel=1e-9)
    assert seen and all(math.isfinite(value) and -1e-6 <= value <= 1 + 1e-6 for value in seen)
    rows = list(m.component_data_objects(pyo.Constraint, active=True))
    assert all(pyo.value(row.body) <= pyo.value(row.upper) + 1e-6 for row in rows)


def _ray_model() -> pyo.ConcreteModel:
    """max x0 + x1 + x2 + 2 over integers x >= 0 with x0 + x1 - 2 x2 == 1: SCIP's presolve
    answers 'infeasible or unbounded', which `solve` settles by a zero-objective run."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] - 2 * m.x[2] == 1)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1] + m.x[2] + 2, sense=pyo.maximize)
    return m


def test_on_solution_gets_no_point_of_the_settling_run() -> None:
    """The settling run's points have objective 0, not the model's: none is handed on."""
    m = _ray_model()
    calls: list[tuple[float, float]] = []

    def record(solution, objective):
        calls.append((objective, sum(solution[m.x[i]] for i in range(3)) + 2))

    result = solve(m, plugins=[OnSolution(record)])
    assert result.status.value == "unbounded"
    assert all(objective == pytest.approx(at_point) for objective, at_point in calls)
