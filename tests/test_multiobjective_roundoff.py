"""Fronts over continuous variables, where a solver's point misses its optimum by its
feasibility tolerance (HiGHS answered y = 1.750002 for 1.75): the front neither ends early
as 'infeasible' nor keeps a point the next one dominates."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

import coplug.plugins.multiobjective as mo
from coplug.plugins import Result, Status, infeasibilities, pareto_front

STEP = 0.5


def _model() -> pyo.ConcreteModel:
    """Seven binaries and a continuous y under a capacity row; both objectives move with y
    (y raises the first and lowers the second twice as fast), so stretches of the front
    run along y. A review's case: HiGHS found 5 of its points and called it infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(7), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, 3))
    w, a, b = [9, 7, 5, 6, 5, 3, 9], [4, 1, 0, 3, 6, 6, 4], [8, 5, 6, 2, 8, 0, 2]
    m.cap = pyo.Constraint(expr=sum(w[j] * m.x[j] for j in range(7)) + m.y <= 22)
    m.c1 = pyo.Constraint(expr=m.x[5] + m.x[4] <= 1)
    m.c2 = pyo.Constraint(expr=m.x[4] + m.x[6] <= 1)
    m.c3 = pyo.Constraint(expr=m.y + m.x[0] <= 3.5)
    m.f1 = pyo.Objective(expr=sum(a[j] * m.x[j] for j in range(7)) + m.y, sense=pyo.maximize)
    m.f2 = pyo.Objective(expr=sum(b[j] * m.x[j] for j in range(7)) - 2 * m.y,
                         sense=pyo.maximize)
    m.f2.deactivate()
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_front_along_a_continuous_variable_completes_without_dominated_points(solver):
    m = _model()
    front = pareto_front(m, m.f1, m.f2, solver=solver, step=STEP)
    assert front.complete and front.status is Status.OPTIMAL
    values = [p.values for p in front.points]
    assert len(values) >= 15  # SCIP finds 20; HiGHS's round-off may merge one stretch
    for (f1, f2), (g1, g2) in zip(values[:-1], values[1:], strict=True):
        assert g1 < f1 - 1e-5  # the first objective worsens: no point dominates another
        assert g2 >= f2 + STEP - 1e-5  # the second improves by the step
    for point in front.points:
        point.solution.load()
        assert infeasibilities(m, tol=1e-5) == {}
        assert (pyo.value(m.f1.expr), pyo.value(m.f2.expr)) == pytest.approx(point.values)


def test_a_point_the_next_one_dominates_is_dropped(monkeypatch):
    # a point whose first objective round-off kept above the true optimum (15.500002) is
    # followed by the point it missed (15.5 with a far better second objective)
    script = iter([(16.0, -2.0), (15.500002, -1.0), (15.5, 5.0), None])

    def scripted(chain, activate, keep, stage, deadline, tolerances):
        values = next(script)
        if values is None:
            return mo.Lexicographic([Result(Status.INFEASIBLE, "scip")])
        return mo.Lexicographic([Result(Status.OPTIMAL, "scip")], list(values))

    monkeypatch.setattr(mo, "_lexicographic", scripted)
    m = _model()
    front = pareto_front(m, m.f1, m.f2, solver="scip", step=STEP)
    assert [p.values for p in front.points] == [(16.0, -2.0), (15.5, 5.0)]
    assert front.complete


def test_an_infeasible_later_stage_is_tried_again_with_room():
    # the kept first objective asked for 2e-6 more than any point reaches: the stage is
    # solved again with the first objective kept within NUMERIC_ROOM of its value
    m = _model()
    stages = []

    def stage(objective, left, warmstart):
        from coplug.plugins import solve

        if len(stages) == 1:
            stages.append("infeasible")
            return Result(Status.INFEASIBLE, "scip")
        stages.append(sum(1 for _ in keep.values()))
        return solve(m, time_limit=left, warmstart=warmstart)

    def activate(objective):
        for o in (m.f1, m.f2):
            o.deactivate()
        objective.activate()

    keep = pyo.ConstraintList()
    m.keep = keep
    lex = mo._lexicographic([m.f1, m.f2], activate, keep, stage, None, (0.0, 0.0))
    assert stages == [0, "infeasible", 1]
    assert lex.status is Status.OPTIMAL
    assert lex.results[1].extra["numeric_room"] == mo.NUMERIC_ROOM
    assert 16.0 - 16.0 * mo.NUMERIC_ROOM - 1e-9 <= lex.values[0] <= 16.0 + 1e-6  # gave way
