"""solve() on SCIP judges all-integer rows with large sides exactly: SCIP's relative
feasibility tolerance let a packing 1 over a capacity of 2e6 come back optimal."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.files import solve_file
from coplug.plugins.integral_rows import FEASTOL_FLOOR, integral_rows, violations
from coplug.plugins.results import Status


def _tight_pair(capacity: int) -> pyo.ConcreteModel:
    """Two items of value 1 whose weights sum to capacity + 1: the optimum takes one."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=(capacity // 2 + 1) * m.x[0] + (capacity // 2) * m.x[1]
                           <= capacity)
    m.obj = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    return m


def _activity(m: pyo.ConcreteModel) -> float:
    return pyo.value(m.cap.body)


@pytest.mark.parametrize("capacity", [2 * 10**6, 10**7, 10**8])
def test_large_integral_capacity_is_respected(capacity: int) -> None:
    m = _tight_pair(capacity)
    result = solve(m)
    assert result.optimal
    assert _activity(m) <= capacity
    assert result.objective == solve(_tight_pair(capacity), solver="highs").objective == 1
    assert result.extra["feastol"] <= 0.1 / capacity or result.extra["feastol"] == FEASTOL_FLOOR


def test_beyond_the_floor_a_violated_row_is_reported_not_optimal() -> None:
    m = _tight_pair(10**11)
    with pytest.warns(UserWarning, match="violates 1 all-integer constraint"):
        result = solve(m)
    assert _activity(m) == 10**11 + 1  # SCIP took the overshoot: not called optimal
    assert result.status is Status.UNKNOWN
    assert result.extra["violated_rows"] == {"cap": 1.0}


def test_an_equality_row_with_a_large_side_is_judged_exactly() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 10**6))
    m.y = pyo.Var(domain=pyo.Binary)
    m.eq = pyo.Constraint(expr=3 * m.x + m.y == 2_999_998)  # 3x = 2,999,997 + (1 - y)...
    m.obj = pyo.Objective(expr=m.y, sense=pyo.maximize)
    result = solve(m)
    assert result.optimal
    assert 3 * round(m.x.value) + round(m.y.value) == 2_999_998
    assert result.objective == solve_objective_highs(m)


def solve_objective_highs(m: pyo.ConcreteModel) -> float:
    return solve(m.clone(), solver="highs").objective


def test_a_caller_feastol_is_kept_and_the_answer_still_checked() -> None:
    m = _tight_pair(2 * 10**6)
    with pytest.warns(UserWarning, match="'cap' by 1"):
        result = solve(m, **{"numerics/feastol": 1e-6})
    assert "feastol" not in result.extra
    assert result.status is Status.UNKNOWN
    assert result.extra["violated_rows"] == {"cap": 1.0}


def _scip_rows(m: pyo.ConcreteModel, feastol: float = 1e-6) -> list:
    """The integral rows of `m` as Pyomo's SCIP interface builds it."""
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    build_instance(opt, m, "SCIP")
    rows = integral_rows(opt._solver_model, feastol)
    m._keep_opt = opt  # the SCIP variables live as long as their model
    return rows


def test_rows_with_a_continuous_variable_are_left_to_scip_and_fractions_kept_exact() -> None:
    """A fraction was left out too, until a half-integer row let SCIP call a model with no
    solution optimal (tests/test_review_s23_numerics.py)."""
    from fractions import Fraction

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.z = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(domain=pyo.Binary)
    m.mixed = pyo.Constraint(expr=2e6 * m.x + m.z <= 2e6)
    m.frac = pyo.Constraint(expr=2.5 * m.y + 1e6 * m.x <= 3e6)
    m.obj = pyo.Objective(expr=m.x + m.z + m.y, sense=pyo.maximize)
    rows = {row.name: row for row in _scip_rows(m)}
    mixed, frac = rows["c1"], rows["c2"]  # SCIP's names for m.mixed and m.frac
    assert mixed.integer == [True, False]  # rechecked only where rounding moves it
    assert frac.integer is None and frac.denominator == 2
    assert sorted(Fraction(c, 2) for c in frac.coefs) == [Fraction(5, 2), 1000000]
    assert "feastol" not in solve(m).extra


def test_small_sides_are_not_read() -> None:
    assert _scip_rows(_tight_pair(1000)) == []
    assert len(_scip_rows(_tight_pair(1000), 1e-3)) == 1  # a looser tolerance: at risk
    assert "feastol" not in solve(_tight_pair(1000)).extra


@pytest.mark.parametrize("form", ["constant", "constant_ge", "fixed"])
def test_a_capacity_inside_the_body_is_seen(form: str) -> None:
    """SCIP moves a body's constant onto the side: the check must see that side too."""
    capacity = 2 * 10**6
    m = _tight_pair(capacity)
    load = (capacity // 2 + 1) * m.x[0] + (capacity // 2) * m.x[1]
    if form == "constant":
        m.cap.set_value(load - capacity <= 0)
    elif form == "constant_ge":
        m.cap.set_value(capacity - load >= 0)
    else:
        m.w = pyo.Var(domain=pyo.Integers)
        m.w.fix(5)
        m.cap.set_value(load + m.w <= capacity + 5)
    assert len(_scip_rows(m)) == 1
    result = solve(m)
    assert result.optimal and result.objective == 1
    assert (capacity // 2 + 1) * round(m.x[0].value) + (capacity // 2) * round(m.x[1].value) \
        <= capacity


def test_sides_beyond_float_precision_are_checked_exactly() -> None:
    """1e16 + 1 rounds to 1e16 in float64: the activity is summed in integers."""
    m = _tight_pair(10**16)
    with pytest.warns(UserWarning, match="'cap' by 1"):
        result = solve(m)
    assert result.status is Status.UNKNOWN


def test_files_get_the_same_guard(tmp_path) -> None:
    m = _tight_pair(2 * 10**6)
    path = tmp_path / "tight.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    result = solve_file(path)
    assert result.optimal and result.objective == 1
    assert result.extra["feastol"] <= 0.1 / (2 * 10**6)
    with pytest.warns(UserWarning, match="violates 1 all-integer"):
        loose = solve_file(path, **{"numerics/feastol": 1e-6})
    assert loose.status is Status.UNKNOWN


def test_violations_skip_values_off_a_whole_number() -> None:
    rows = _scip_rows(_tight_pair(2 * 10**6))
    (row,) = rows
    assert violations(rows, lambda var: 1.0) == {row.name: 1.0}
    assert violations(rows, lambda var: 0.5) == {}
    assert violations(rows, lambda var: 1.0 - 1e-9) == {row.name: 1.0}


def test_a_first_solve_that_meets_the_rows_exactly_is_kept() -> None:
    """SCIP's tolerance region contains the exact one, so an exactly feasible optimum at the
    default tolerance is exactly optimal: no second solve, no lowered tolerance."""
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack

    inst = random_knapsack(60, seed=1, r=10**6)
    m = knapsack_mip(inst)
    # the knapsack row (Pyomo's own interface adds an objective row, which solve does not)
    assert len([row for row in _scip_rows(knapsack_mip(inst)) if row.integer is None]) == 1
    result = solve(m)
    assert result.optimal
    assert "feastol" not in result.extra and "first_solve" not in result.extra
    assert sum(int(w) * round(m.x[i].value) for i, w in enumerate(inst.weights)) \
        <= inst.capacity
    exact = solve(knapsack_mip(inst), solver="highs", mip_rel_gap=0.0, mip_abs_gap=0.0)
    assert result.objective == pytest.approx(exact.objective, abs=1e-6)


def test_a_violated_first_solve_is_solved_again_and_counted() -> None:
    m = _tight_pair(2 * 10**6)
    result = solve(m)
    first = result.extra["first_solve"]
    assert first["objective"] == 2  # the overshooting packing SCIP's tolerance accepted
    assert result.objective == 1 and result.optimal
    assert result.time >= first["time"] and result.nodes >= first["nodes"]


def test_the_second_solve_gets_what_remains_of_the_time_limit() -> None:
    import pyscipopt

    from coplug.plugins.integral_rows import optimize_checked

    scip = pyscipopt.Model()
    scip.hideOutput()
    x = [scip.addVar(vtype="B", obj=1.0) for _ in range(2)]
    scip.addCons(10**6 * x[0] + (10**6 + 1) * x[1] <= 2 * 10**6)
    scip.setMaximize()
    scip.setParam("limits/time", 100.0)
    rows, extra = optimize_checked(scip, {}, scip.optimize)
    assert len(rows) == 1
    assert scip.getParam("limits/time") == pytest.approx(100.0 - extra["first_solve"]["time"])
    assert scip.getParam("numerics/feastol") == extra["feastol"]


def test_plugins_run_again_in_the_second_solve() -> None:
    from coplug.plugins.pmvb import PMVBBranching

    m = _tight_pair(2 * 10**6)
    result = solve(m, plugins=[PMVBBranching("lp")])
    assert "first_solve" in result.extra
    assert result.optimal and result.objective == 1
    assert _activity(m) <= 2 * 10**6
