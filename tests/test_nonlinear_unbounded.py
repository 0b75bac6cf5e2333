"""SCIP's "optimal" on unbounded nonlinear models (`coplug.plugins.nonlinear_optimum`): the
models below are unbounded (a ray is named in each), SCIP alone calls them optimal, and
bounded ones with large free values keep their optimum."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
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
    assert len(check["boxes"]) == 1 and check["boxes"][0]["finished"]


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


def _box(objective: float | None, finished: bool = True, widen: float = 100.0) -> dict:
    return {"widen": widen, "objective": objective, "finished": finished}


@pytest.mark.parametrize("trail,status", [
    ([_box(-100.0)], Status.OPTIMAL),
    ([_box(-100.0, finished=False)], Status.OPTIMAL),
    ([_box(-200.0), _box(-200.0, widen=1e4)], Status.FEASIBLE),
    ([_box(-200.0, finished=False)], Status.FEASIBLE),
    ([_box(-200.0), _box(-300.0, widen=1e4)], Status.UNBOUNDED),
    ([], Status.OPTIMAL),
])
def test_how_the_boxes_settle_a_claim(trail, status):
    """A claim of -100: nothing better in the box keeps it, finished or not (so does no box
    at all, the time being up); a better point that the wider box does not improve, or that
    an unfinished box found, is only feasible; one that keeps improving is unbounded."""
    result = Result(status=Status.OPTIMAL, solver="scip", objective=-100.0, bound=-100.0,
                    has_solution=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _settle(_solved_scip(), result, -100.0, trail, maximize=False)
    assert result.status is status
    assert bool(caught) is (status is not Status.OPTIMAL)
    if status is Status.FEASIBLE:
        assert result.bound == -math.inf and result.has_solution


def _quiet_solve(m: pyo.ConcreteModel, **kwargs) -> Result:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return solve(m, solver="scip", **kwargs)


def test_a_bounded_optimum_near_scips_infinity_stays_optimal():
    """min x**2 with x >= 4e9 as a row: 1.6e19, below SCIP's 1e20 (it was called unbounded
    as "at SCIP's infinity")."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=m.x >= 4e9)
    m.o = pyo.Objective(expr=m.x ** 2)
    result = _quiet_solve(m)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1.6e19, rel=1e-6)


def test_values_past_the_box_cap_keep_their_optimum():
    """min y, y >= x**2, x >= 1e8 (a row): 1e16; the box for y would pass 1e15, so that side
    stays open (a box smaller than SCIP's point crashed the check)."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.c = pyo.Constraint(expr=m.y >= m.x ** 2)
    m.d = pyo.Constraint(expr=m.x >= 1e8)
    m.o = pyo.Objective(expr=m.y)
    result = _quiet_solve(m)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1e16, rel=1e-6)


def test_a_box_check_that_cannot_finish_leaves_the_optimum_in_time():
    """A nonconvex QP whose free variables rows hold to +-3e5 (solved in 0.03 s): boxes
    sized by the objective (2.5e13) stalled SCIP past any time limit. The optimum is found
    apart, exactly: the objective is convex in x0 and in x1 (a maximum at their bounds) and
    concave in x2 (a maximum at its stationary point, clipped to the box)."""
    bound = 3e5
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3))
    m.lo = pyo.Constraint(range(3), rule=lambda m, i: m.x[i] >= -bound)
    m.hi = pyo.Constraint(range(3), rule=lambda m, i: m.x[i] <= bound)
    x = m.x
    m.o = pyo.Objective(
        expr=0.3 * x[0] ** 2 + 0.8 * x[1] * x[0] + 0.3 * x[1] ** 2 + 0.8 * x[1] * x[2]
        + 0.3 * x[2] * x[0] + 1.2 * x[2] * x[1] - 0.9 * x[2] ** 2
        - 60.2 * x[0] - 42.8 * x[1] + 7.2 * x[2], sense=pyo.maximize)
    result = _quiet_solve(m, time_limit=60)
    assert result.status is Status.OPTIMAL and result.time < 20
    assert result.objective == pytest.approx(float(_box_qp_optimum(bound)), rel=1e-9)


def _box_qp_optimum(bound: float) -> Fraction:
    """The maximum of the test's QP over the box [-bound, bound]^3, in exact arithmetic."""
    b = Fraction(bound)

    def value(x0: Fraction, x1: Fraction, x2: Fraction) -> Fraction:
        c = [Fraction(s) for s in ("0.3", "0.8", "0.3", "0.8", "0.3", "1.2", "-0.9", "-60.2",
                                   "-42.8", "7.2")]
        return (c[0] * x0 * x0 + c[1] * x1 * x0 + c[2] * x1 * x1 + c[3] * x1 * x2
                + c[4] * x2 * x0 + c[5] * x2 * x1 + c[6] * x2 * x2 + c[7] * x0 + c[8] * x1
                + c[9] * x2)

    best = None
    for x0 in (-b, b):
        for x1 in (-b, b):  # d/dx2 = 0.8 x1 + 0.3 x0 + 1.2 x1 - 1.8 x2 + 7.2
            stationary = (Fraction("2.0") * x1 + Fraction("0.3") * x0 + Fraction("7.2")) \
                / Fraction("1.8")
            x2 = min(max(stationary, -b), b)
            found = value(x0, x1, x2)
            best = found if best is None or found > best else best
    return best


def test_the_warning_names_the_models_variable():
    m = pyo.ConcreteModel()
    m.flow, m.price = pyo.Var(), pyo.Var()
    m.o = pyo.Objective(expr=(m.flow - m.price) ** 2 + m.flow)
    with pytest.warns(UserWarning, match=r"SCIP's point puts (flow|price) at"):
        solve(m, solver="scip")


def test_a_model_with_lazy_rows_is_not_boxed_on_a_copy_without_them():
    """min (x - 1e6)**2 with the lazy row x <= 2e4: a copy of the model holds no lazy rows,
    so its boxes would find x = 1e6 "better"; the check is skipped and the optimum stays."""
    from coplug.plugins import LazyConstraints

    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.o = pyo.Objective(expr=(m.x - 1e6) ** 2)
    result = solve(m, solver="scip", plugins=[LazyConstraints(lambda _s: [m.x <= 2e4])])
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx((2e4 - 1e6) ** 2, rel=1e-9)
    assert "skipped" in result.extra["nonlinear_check"]
