"""SCIP's "optimal" on unbounded nonlinear models (`coplug.plugins.nonlinear_optimum`): the
models below are unbounded (a ray is named in each), SCIP alone calls them optimal, and
bounded ones with large free values keep their optimum."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pyomo.environ as pyo
import pyscipopt
import pytest

from coplug.plugins import Status, solve
from coplug.plugins.files import solve_file
from coplug.plugins.nonlinear_optimum import _settle
from coplug.plugins.results import Result


def _squared_gap(integer_x: bool, sense=pyo.minimize) -> pyo.ConcreteModel:
    """min (x - y)**2 + x over free x, y: x = y = -t costs -t (unbounded)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers if integer_x else pyo.Reals)
    m.y = pyo.Var()
    sign = 1 if sense == pyo.minimize else -1
    m.o = pyo.Objective(expr=sign * ((m.x - m.y) ** 2 + m.x), sense=sense)
    return m


def _parabola() -> pyo.ConcreteModel:
    """min -x s.t. y >= x**2: x = t, y = t**2 costs -t (unbounded)."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.c = pyo.Constraint(expr=m.y >= m.x ** 2)
    m.o = pyo.Objective(expr=-m.x)
    return m


def _unbounded_by_scip(model: pyo.ConcreteModel) -> Result:
    with pytest.warns(UserWarning, match="the model is unbounded"):
        return solve(model, solver="scip", time_limit=60)


@pytest.mark.parametrize("build", [lambda: _squared_gap(False), lambda: _squared_gap(True),
                                   _parabola], ids=["qp", "miqp", "qcp"])
def test_unbounded_nonlinear_models_are_not_called_optimal(build):
    m = build()
    for t in (1e3, 1e6):  # the ray: every point along it is feasible and better
        m.x.value = -t if m.find_component("c") is None else t
        m.y.value = m.x.value if m.find_component("c") is None else t * t
        assert pyo.value(m.o) <= -t + 1e-6
    m.x.value = m.y.value = None
    result = _unbounded_by_scip(m)
    assert result.status is Status.UNBOUNDED and not result.has_solution
    assert result.objective is None and result.bound == -math.inf
    assert m.x.value is None  # no point at SCIP's stand-in for infinity is loaded


def test_scip_alone_calls_the_integer_model_optimal():
    """The guarded answer is needed: PySCIPOpt on the same model says optimal, -1e5."""
    s = pyscipopt.Model()
    s.hideOutput()
    x, y, z = s.addVar(vtype="I", lb=None), s.addVar(lb=None), s.addVar(lb=None)
    s.addCons((x - y) ** 2 + x <= z)
    s.setObjective(z)
    s.optimize()
    assert s.getStatus() == "optimal" and s.getObjVal() > -1e6  # x = y = -1e6 gives -1e6


def test_maximize_the_same_way():
    result = _unbounded_by_scip(_squared_gap(False, pyo.maximize))
    assert result.status is Status.UNBOUNDED and result.bound == math.inf


def test_highs_agrees_on_the_convex_one():
    assert solve(_squared_gap(False), solver="highs").status is Status.UNBOUNDED


def test_a_model_file_is_checked_too(tmp_path: Path):
    s = pyscipopt.Model()
    x, y, z = (s.addVar(name, vtype=kind, lb=None) for name, kind in
               (("x", "I"), ("y", "C"), ("z", "C")))
    s.addCons((x - y) ** 2 + x <= z, name="epi")
    s.setObjective(z)
    path = tmp_path / "squared_gap.lp"
    s.writeProblem(str(path), verbose=False)
    with pytest.warns(UserWarning, match="the model is unbounded"):
        result = solve_file(path)
    assert result.status is Status.UNBOUNDED and result.values is None


@pytest.mark.parametrize("integer", [False, True])
def test_large_free_values_of_a_bounded_model_keep_their_optimum(integer):
    """min y - x s.t. y >= (x - 2e4)**2: x = 2e4 + 1/2, y = 1/4, optimum -20000.25; the
    box check runs (x is 2e4, free) and finds nothing better."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers if integer else pyo.Reals)
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.y >= (m.x - 2e4) ** 2)
    m.o = pyo.Objective(expr=m.y - m.x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m, solver="scip")
    truth = -20000.0 if integer else -20000.25  # integer x = 2e4 or 2e4 + 1: y - x = -2e4
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth, abs=1e-5)
    assert pyo.value(m.o) == pytest.approx(truth, abs=1e-5)
    check = result.extra["nonlinear_check"]
    assert len(check["boxes"]) == 1 and check["boxes"][0]["box"] >= 100 * 1.9e4


def test_small_values_are_not_checked():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.o = pyo.Objective(expr=(m.x - 3) ** 2)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL and "nonlinear_check" not in result.extra


def _solved_scip() -> pyscipopt.Model:
    s = pyscipopt.Model()
    s.hideOutput()
    x = s.addVar(lb=-5, ub=5)
    s.setObjective(x)
    s.optimize()
    return s


@pytest.mark.parametrize("trail,status", [
    ([{"box": 1e7, "objective": -100.0}], Status.OPTIMAL),
    ([{"box": 1e7, "objective": -200.0}, {"box": 1e9, "objective": -200.0}], Status.FEASIBLE),
    ([{"box": 1e7, "objective": -200.0}, {"box": 1e9, "objective": -300.0}],
     Status.UNBOUNDED),
    ([], Status.FEASIBLE),
])
def test_how_the_boxes_settle_a_claim(trail, status):
    """A claim of -100: nothing better in the box keeps it; a better point that the wider box
    does not improve is only feasible; one that keeps improving is unbounded; no finished
    box leaves it unproven."""
    result = Result(status=Status.OPTIMAL, solver="scip", objective=-100.0, bound=-100.0,
                    has_solution=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _settle(_solved_scip(), result, -100.0, trail, maximize=False)
    assert result.status is status
    assert bool(caught) is (status is not Status.OPTIMAL)
    if status is Status.FEASIBLE:
        assert result.bound == -math.inf and result.has_solution
