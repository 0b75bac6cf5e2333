"""Review of coplug.plugins.multiobjective: cases the brute-force fuzz found wrong."""

from __future__ import annotations

import itertools

import pyomo.environ as pyo
import pytest

import coplug.plugins.multiobjective as mo
from coplug.plugins import InputError, Result, Status, infeasibilities
from coplug.plugins.multiobjective import lexicographic, pareto_front
from coplug.plugins.stages import StagedSolver


def _binaries() -> pyo.ConcreteModel:
    """Three binaries, at least one of them 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 1)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_inactive_indexed_objective_comes_back_inactive(solver):
    m = _binaries()
    m.o = pyo.Objective([0, 1], rule=lambda m, i: m.x[0] + 2 * m.x[1] if i == 0
                        else -m.x[1] - m.x[2])
    m.o.deactivate()
    assert lexicographic(m, [m.o], solver=solver).values == [0.0, -1.0]
    assert [p.values for p in pareto_front(m, m.o[0], m.o[1], solver=solver).points] == [
        (0.0, -1.0), (2.0, -2.0)]
    assert not m.o.active and not any(o.active for o in m.o.values())


def test_an_objective_in_a_deactivated_block_is_refused():
    # the solve never sees it: the stage minimized nothing and called any point optimal
    m = _binaries()
    m.b = pyo.Block()
    m.b.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] - m.x[2])
    m.o = pyo.Objective(expr=m.x[0])
    m.b.deactivate()
    with pytest.raises(InputError, match="deactivated block"):
        lexicographic(m, [m.b.o])
    with pytest.raises(InputError, match="deactivated block"):
        pareto_front(m, m.o, m.b.o)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_constant_objective_keeps_no_row(solver):
    # Pyomo refuses `5 <= 5.000001` as a row (a plain True)
    m = _binaries()
    m.k = pyo.Objective(expr=5)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    m.o.deactivate()
    assert lexicographic(m, [m.k, m.o], solver=solver).values == [5.0, 6.0]
    for first, second, values in ((m.k, m.o, (5.0, 6.0)), (m.o, m.k, (6.0, 5.0))):
        front = pareto_front(m, first, second, solver=solver)
        assert [p.values for p in front.points] == [values]
        assert front.complete and front.status is Status.OPTIMAL
    assert m.k.active and not m.o.active
    assert [c.name for c in m.component_objects(pyo.Constraint)] == ["c"]


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_sub_block_front_keeps_the_variables_declared_outside_it(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.b = pyo.Block()
    m.b.c = pyo.Constraint(expr=sum(m.x.values()) >= 1)
    m.b.o1 = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2])
    m.b.o2 = pyo.Objective(expr=-3 * m.x[0] - 2 * m.x[1] - m.x[2])
    front = pareto_front(m.b, m.b.o1, m.b.o2, solver=solver)
    assert [p.values for p in front.points] == [(1.0, -3.0), (3.0, -5.0), (6.0, -6.0)]
    for point in front.points:
        point.solution.load()
        assert (pyo.value(m.b.o1.expr), pyo.value(m.b.o2.expr)) == point.values
        assert infeasibilities(m.b) == {}


def _dot(coefs, terms):
    """sum(coefs[k] * terms[k])."""
    return sum(a * v for a, v in zip(coefs, terms, strict=True))


def test_highs_stages_are_not_misled_by_their_start():
    # HiGHS 1.16 handed back this MIP start, (1, 2) here, as "optimal" with objective -2
    # (its offset alone): the front kept a dominated point (solve now drops such a start)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.z = pyo.Var(range(2), domain=pyo.Integers, bounds=lambda m, i: ((-1, 2), (-2, 1))[i])
    coefs = ((4, 1, 0, 1, 4, 5), (-4, -4, -1, -3, 2, -1), (-3, 3, -4, -1, 5, -4))
    terms = [m.x[0], m.x[1], m.x[2], m.x[3], m.z[0], m.z[1]]
    m.row = pyo.Constraint(expr=_dot(coefs[0], terms) <= 5)
    m.o1 = pyo.Objective(expr=_dot(coefs[1], terms), sense=pyo.maximize)
    m.o2 = pyo.Objective(expr=_dot(coefs[2], terms) - 2)
    points = set()
    for point in itertools.product((0, 1), (0, 1), (0, 1), (0, 1), range(-1, 3), range(-2, 2)):
        if _dot(coefs[0], point) <= 5:
            points.add((_dot(coefs[1], point), _dot(coefs[2], point)))
    points = {(a, b - 2) for a, b in points}
    expected = sorted((p for p in points if not any(
        q[0] >= p[0] and q[1] <= p[1] and q != p for q in points)), reverse=True)
    front = pareto_front(m, m.o1, m.o2, solver="highs")
    assert [p.values for p in front.points] == expected


@pytest.mark.parametrize("staged", [True, False])
def test_a_later_stage_called_infeasible_leaves_the_front_incomplete(monkeypatch, staged):
    # only a first stage without a point ends the front; a second stage that finds none
    # after an optimal first one (also when tried again with room) is numerical trouble,
    # not the end of the front
    calls = []
    if staged:
        real_staged = StagedSolver.solve

        def second_stage_fails(self, objective, rows, time_limit, warmstart):
            calls.append(objective)
            if len(calls) in (4, 5):  # the stage and its retry with room
                return Result(Status.INFEASIBLE, "scip")
            return real_staged(self, objective, rows, time_limit, warmstart)

        monkeypatch.setattr(StagedSolver, "solve", second_stage_fails)
    else:
        real = mo.solve
        monkeypatch.setattr(mo, "open_stages", lambda *args: None)

        def second_stage_fails(model, **kwargs):
            calls.append(kwargs)
            if len(calls) in (4, 5):  # the stage and its retry with room
                return Result(Status.INFEASIBLE, kwargs["solver"])
            return real(model, **kwargs)

        monkeypatch.setattr(mo, "solve", second_stage_fails)
    m = _binaries()
    m.o1 = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2])
    m.o2 = pyo.Objective(expr=-3 * m.x[0] - 2 * m.x[1] - m.x[2])
    front = pareto_front(m, m.o1, m.o2)
    assert [p.values for p in front.points] == [(1.0, -3.0)]
    assert not front.complete and front.status is Status.INFEASIBLE


@pytest.mark.parametrize("staged", [True, False])
def test_highs_by_any_spelling_runs_without_a_relative_gap(monkeypatch, staged):
    # solve takes "HiGHS" as "highs"; the stages ran at HiGHS's 1e-4 gap under that name
    import coplug.plugins.highs_backend as hb

    if not staged:
        monkeypatch.setattr(mo, "open_stages", lambda *args: None)
    seen = []
    real = hb.run_highs

    def spy(opt, model, **kwargs):
        seen.append((kwargs["params"].get("mip_rel_gap"), kwargs.get("warmstart")))
        return real(opt, model, **kwargs)

    monkeypatch.setattr(hb, "run_highs", spy)
    m = _binaries()
    m.o1 = pyo.Objective(expr=m.x[0] + 2 * m.x[1])
    m.o2 = pyo.Objective(expr=-m.x[2])
    lexicographic(m, [m.o1, m.o2], solver="HiGHS")
    assert seen == [(0.0, False), (0.0, True)]
