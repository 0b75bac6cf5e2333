"""Calls that load a new point leave no duals of an earlier solve in `m.dual`/`m.rc`:
`sensitivity`, `race` and `k_best(solver="lap")` loaded their point beside the last
solve's duals (labour 1, wood 1 where the new point's are 0 and 3)."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import k_best, race, sensitivity, solve


def _lp() -> pyo.ConcreteModel:
    """Chairs and tables under labour and wood, both priced by `m.dual` after a solve."""
    m = pyo.ConcreteModel()
    m.cap = pyo.Param(initialize=10, mutable=True)
    m.x = pyo.Var(["c", "t"], within=pyo.NonNegativeReals)
    m.labour = pyo.Constraint(expr=2 * m.x["c"] + m.x["t"] <= m.cap)
    m.wood = pyo.Constraint(expr=m.x["c"] + 3 * m.x["t"] <= 15)
    m.p = pyo.Objective(expr=3 * m.x["c"] + 4 * m.x["t"], sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


@pytest.mark.parametrize("call", [sensitivity, race], ids=["sensitivity", "race"])
def test_a_new_point_comes_without_the_last_solves_duals(call):
    m = _lp()
    solve(m)
    assert m.dual[m.labour] == pytest.approx(1.0) and m.dual[m.wood] == pytest.approx(1.0)
    m.cap = 40  # wood binds alone now: its dual is 3 and labour's 0
    call(m)
    assert (pyo.value(m.x["c"]), pyo.value(m.x["t"])) == pytest.approx((15.0, 0.0))
    assert len(m.dual) == 0 and len(m.rc) == 0


def test_ranked_assignments_come_without_the_last_solves_duals():
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 2)
    cost = [[4, 1, 3], [2, 0, 5], [3, 2, 2]]
    m.x = pyo.Var(m.I, m.I, bounds=(0, 1))
    m.row = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.I) == 1)
    m.col = pyo.Constraint(m.I, rule=lambda m, j: sum(m.x[i, j] for i in m.I) == 1)
    m.o = pyo.Objective(expr=sum(cost[i][j] * m.x[i, j] for i in m.I for j in m.I))
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    solve(m)
    assert len(m.dual) == 6
    for var in m.x.values():
        var.domain = pyo.Binary  # k_best ranks binaries; the duals are the LP's
    best = k_best(m, k=3, solver="lap")
    assert len(best.solutions) == 3 and len(m.dual) == 0
