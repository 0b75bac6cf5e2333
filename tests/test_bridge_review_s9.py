"""Fixes from the ninth session's review of `solve`: ranged constraints with a constant in
the body on SCIP, HiGHS's statuses, bounds and integer values, sides infinite in the
direction no point meets, and SCIP parameters of the wrong type."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import gisp, mknapsack
from coplug.plugins import InputError, Status, UnsupportedModelError, infeasibilities, solve


def _ranged(lower: float, body, upper: float, sense=pyo.minimize) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.p = pyo.Param(initialize=4.0, mutable=True)
    m.c = pyo.Constraint(expr=pyo.inequality(lower, body(m), upper))
    m.o = pyo.Objective(expr=m.x, sense=sense)
    return m


@pytest.mark.parametrize(("lower", "body", "upper", "sense"), [
    (-2, lambda m: 2 * m.x + 1, 5, pyo.minimize),
    (-1, lambda m: m.x + 3, 1, pyo.maximize),
    (0, lambda m: m.x - m.p, 10, pyo.minimize),
    (0, lambda m: 2 * m.x - 4, 10, pyo.maximize),
])
def test_ranged_constraint_with_a_constant_matches_highs(lower, body, upper, sense) -> None:
    scip = solve(_ranged(lower, body, upper, sense), solver="scip")
    highs = solve(_ranged(lower, body, upper, sense), solver="highs")
    assert scip.status is highs.status is Status.OPTIMAL
    assert scip.objective == pytest.approx(highs.objective)


def test_nonlinear_ranged_constraint_with_a_constant_on_scip() -> None:
    """5 <= x^2 + 3 <= 7, min x: x = -2 (it was reported infeasible)."""
    m = _ranged(5, lambda m: m.x**2 + 3, 7)
    result = solve(m)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(-2.0, abs=1e-6)
    assert 5 - 1e-6 <= pyo.value(m.x) ** 2 + 3 <= 7 + 1e-6


def test_highs_loads_whole_numbers_for_integer_variables() -> None:
    """HiGHS leaves 0.9999999999999876 on chosen items; int() of it was 0."""
    m = mknapsack(60, seed=0)
    result = solve(m, solver="highs")
    values = [v.value for v in m.component_data_objects(pyo.Var) if v.is_integer()]
    assert result.status is Status.OPTIMAL
    assert all(value in (0.0, 1.0) and math.copysign(1, value) > 0 for value in values)
    assert pyo.value(m.component_data_objects(pyo.Objective).__next__()) == pytest.approx(
        result.objective)


def test_highs_stopped_by_a_loose_gap_is_feasible_not_optimal() -> None:
    loose = solve(gisp(60, seed=1), solver="highs", mip_rel_gap=0.5)
    exact = solve(gisp(60, seed=1), solver="scip")
    gap = abs(loose.objective - loose.bound)
    if gap > 1e-4 * abs(loose.objective):
        assert loose.status is Status.FEASIBLE and not loose.optimal
    assert loose.objective <= exact.objective + 1e-6  # maximize: never past the optimum


def test_highs_solution_limit_is_feasible() -> None:
    m = gisp(40, seed=1)
    result = solve(m, solver="highs", mip_max_improving_sols=1)
    assert result.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert result.has_solution
    assert infeasibilities(m) == {}  # the point loaded into the model meets every row


def test_highs_unbounded_bound_matches_scip() -> None:
    def build() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, None))
        m.y = pyo.Var(bounds=(0, None))
        m.c = pyo.Constraint(expr=m.x - m.y <= 1)
        m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
        return m

    scip, highs = solve(build()), solve(build(), solver="highs")
    assert scip.status is highs.status is Status.UNBOUNDED
    assert scip.bound == highs.bound == math.inf


def _bound_model(kind: str) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.o = pyo.Objective(expr=m.x)
    if kind == "huge lower side":
        m.c = pyo.Constraint(expr=m.x >= 1e25)
    elif kind == "infinite lower side":
        m.c = pyo.Constraint(expr=m.x >= float("inf"))
    elif kind == "huge lower bound":
        m.x.setlb(1e21)
    elif kind == "huge negative upper bound":
        m.x.setub(-1e21)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("kind", ["huge lower side", "infinite lower side", "huge lower bound",
                                  "huge negative upper bound"])
def test_sides_infinite_where_no_point_meets_them_are_refused(kind: str, solver: str) -> None:
    with pytest.raises(InputError, match="read as infinity"):
        solve(_bound_model(kind), solver=solver)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_sides_infinite_the_other_way_mean_no_bound(solver: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1e30, 1e30))
    m.c = pyo.Constraint(expr=pyo.inequality(-1e25, m.x, 3.0))
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    assert solve(m, solver=solver).objective == pytest.approx(3.0)


def test_highs_model_errors_are_coplug_errors() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.RangeSet(0, 10, 2))
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(UnsupportedModelError, match="variable 'x': its domain"):
        solve(m, solver="highs")


@pytest.mark.parametrize(("key", "value"), [
    ("limits/nodes", 10.7), ("presolving/maxrounds", True), ("lp/presolving", 5),
    ("misc/catchctrlc", 0), ("limits/gap", "abc"), ("branching/scorefunc", 5),
])
def test_scip_parameters_of_the_wrong_type_are_refused(key: str, value: object) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match=f"SCIP parameter '{key}' takes"):
        solve(m, **{key: value})
    assert solve(m, **{key: {"limits/nodes": 10, "presolving/maxrounds": 2, "lp/presolving":
                             False, "misc/catchctrlc": True, "limits/gap": 0.1,
                             "branching/scorefunc": "p"}[key]}).status is Status.OPTIMAL


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_import_suffix_left_empty_is_named(solver: str) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=3 * m.x)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.slack = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with pytest.warns(UserWarning, match=r"fills no import Suffix slack \(only dual and rc"):
        assert solve(m, solver=solver).objective == pytest.approx(6.0)
    assert len(m.slack) == 0 and m.dual[m.c] == pytest.approx(3.0)  # dual: tests/test_duals.py
