"""A demanding user's review of `solve(..., solver="lap")`'s m.dual/m.rc and of
`explain_infeasible_file`: each case checked against an independent truth (LP duality from
the model's own data, scipy's MILP)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo
import pytest
from test_lap_duals import check_lp_duality

from coplug.plugins import solve

Side = Callable[[object], object]


def lap_model(cost: np.ndarray, row: Side, col: Side, maximize: bool = False
              ) -> pyo.ConcreteModel:
    """x[i,j] in [0, 1] over every pair, row(sum_j x) and col(sum_i x) as given, with m.dual
    and m.rc declared (the shape `check_lp_duality` reads)."""
    n, m = cost.shape
    model = pyo.ConcreteModel()
    model.x = pyo.Var([(i, j) for i in range(n) for j in range(m)], bounds=(0, 1))
    model.row = pyo.Constraint(range(n), rule=lambda mm, i: row(
        sum(mm.x[i, j] for j in range(m))))
    model.col = pyo.Constraint(range(m), rule=lambda mm, j: col(
        sum(mm.x[i, j] for i in range(n))))
    model.o = pyo.Objective(expr=sum(float(cost[i, j]) * model.x[i, j]
                                     for i in range(n) for j in range(m)),
                            sense=pyo.maximize if maximize else pyo.minimize)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return model


@pytest.mark.parametrize("seed", range(3))
def test_negated_at_most_one_with_slack_keeps_jv_duals(seed: int) -> None:
    """`-sum(x) >= -1` is `sum(x) <= 1` (Pyomo keeps only its lower side): a row of a
    matching written so that stays unmatched has slack, dual 0, and JV's shifted duals
    certify without an LP solve (they were refused for every such row, 8 of 10 seeds)."""
    cost = np.random.default_rng(seed).uniform(-10, 10, (4, 2))
    model = lap_model(cost, lambda e: -e >= -1, lambda e: e <= 1)
    result = solve(model, solver="lap")
    assert result.extra["duals"]["loaded"] and "duals_from" not in result.extra
    check_lp_duality(model)
