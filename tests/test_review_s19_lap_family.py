"""Review s19 of the LAP family: Pyomo assignment detection, the ranked (k best) path and
the assignment cost loaders, each test failing on the code before its fix."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.assignment import assignment_model, load_costs
from coplug.plugins import Status, k_best, solve
from coplug.plugins.errors import InputError


def _assignment(domain: object = pyo.NonNegativeReals) -> pyo.ConcreteModel:
    """A 2 x 2 assignment model, costs [[1, 2], [3, 5]] (optimum 5)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), range(2), domain=domain)
    m.row = pyo.Constraint(range(2), rule=lambda m, i: m.x[i, 0] + m.x[i, 1] == 1)
    m.col = pyo.Constraint(range(2), rule=lambda m, j: m.x[0, j] + m.x[1, j] == 1)
    cost = [[1.0, 2.0], [3.0, 5.0]]
    m.cost = pyo.Objective(expr=sum(cost[i][j] * m.x[i, j] for i in range(2) for j in range(2)))
    return m


@pytest.mark.parametrize("upper", [-1.0, -0.5])
def test_a_variable_whose_upper_bound_is_below_its_lower_one_makes_the_model_infeasible(
        upper: float) -> None:
    m = _assignment()
    m.x[0, 0].setub(upper)  # no value meets 0 <= x <= upper: SCIP calls the model infeasible
    reference = solve(m.clone(), solver="scip")
    assert reference.status is Status.INFEASIBLE
    result = solve(m, solver="lap")
    assert result.status is Status.INFEASIBLE
    assert "x[0,0]" in result.extra["reason"]
    ranked = k_best(m, 3, solver="lap")
    assert ranked.result.status is Status.INFEASIBLE and not ranked.solutions


@pytest.mark.parametrize(("name", "text"), [
    ("costs.csv", "1_0,2\n3,4\n"),
    ("costs.txt", "1 2\n3 4_0\n"),
    ("assign2.txt", "2\n1_0 2 3 4\n"),
    ("assignp2.txt", "2_0\n1 2 3 4\n"),
])
def test_numbers_with_underscores_are_refused_by_name(tmp_path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)  # Python's float() reads "1_0" as 10; no cost file means that
    with pytest.raises(InputError, match="holds an underscore"):
        load_costs(path)


@pytest.mark.parametrize("maximize", ["no", 1, None, np.float64(0.0)])
def test_assignment_model_refuses_a_maximize_flag_that_is_not_a_bool(maximize) -> None:
    # "no" is truthy: the model used to maximize what the caller meant to minimize
    with pytest.raises(InputError, match="maximize"):
        assignment_model(np.eye(2), maximize=maximize)


def test_assignment_model_accepts_numpy_bools() -> None:
    assert assignment_model(np.eye(2), maximize=np.bool_(True)).cost.sense == pyo.maximize


def test_assignment_model_refuses_integer_costs_float64_would_round() -> None:
    # 2**60 + 1 became 2**60 in the objective: solve(..., "lap") answered 1 below the optimum
    cost = np.array([[2**60 + 1, 2**61], [2**61, 2**60]], dtype=np.int64)
    with pytest.raises(InputError, match="1152921504606846977"):
        assignment_model(cost)
    exact = np.array([[2**60, 2**61], [2**61, 2**60]], dtype=np.int64)  # float64 holds these
    assert solve(assignment_model(exact), solver="lap").objective == 2.0**61
