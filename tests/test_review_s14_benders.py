"""Review s14 of Benders cuts: each case is checked against the extensive form (every
scenario in one model) solved by HiGHS, or against HiGHS's answer for one subproblem."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest
from pyomo.common.collections import ComponentMap

from coplug.plugins import LazyConstraints, Status, solve
from coplug.plugins.benders import BendersCuts, Subproblem
from coplug.plugins.lazy import linear_row


def _threshold_master(y_lower: float) -> tuple[pyo.ConcreteModel, pyo.ConcreteModel]:
    """min y + eta over y in [y_lower, 10] with a subproblem that needs its copy >= 1/3:
    Q(y) = min 10 - x s.t. 0 <= x <= 10, x <= 3 y - 1, i.e. 11 - 3 y on [1/3, 11/3]."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(y_lower, 10))
    m.eta = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.y + m.eta)
    sp = pyo.ConcreteModel()
    sp.y = pyo.Var()
    sp.x = pyo.Var(bounds=(0, 10))
    sp.fit = pyo.Constraint(expr=sp.x <= 3 * sp.y - 1)
    sp.obj = pyo.Objective(expr=10 - sp.x)
    return m, sp


def _threshold_extensive(y_lower: float) -> float:
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(y_lower, 10))
    m.x = pyo.Var(bounds=(0, 10))
    m.fit = pyo.Constraint(expr=m.x <= 3 * m.y - 1)
    m.obj = pyo.Objective(expr=m.y + 10 - m.x)
    result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL
    return result.objective


@pytest.mark.parametrize("y_lower", [1 / 3 - 3.3e-7, 1 / 3 - 5e-8])
@pytest.mark.parametrize("fractional", [False, True])
def test_a_master_point_infeasible_within_scips_tolerance_still_bounds_the_estimate(
        y_lower, fractional):
    # The master's LP point y = y_lower misses the subproblem by a slack SCIP's tolerance
    # forgives: its feasibility cut was never added and, with no optimality cut there, eta
    # stayed at 0 (objective 0.33 against 11/3); at a slack under 1e-7 the solve raised.
    m, sp = _threshold_master(y_lower)
    cuts = BendersCuts([Subproblem(sp, [(m.y, sp.y)], m.eta)])
    result = solve(m, plugins=[LazyConstraints(cuts, fractional=fractional)])
    assert result.status is Status.OPTIMAL
    truth = _threshold_extensive(y_lower)
    assert result.objective == pytest.approx(truth, rel=1e-6)
    sp.y.fix(m.y.value)  # the loaded point: its subproblem is feasible, Q within eta
    q = solve(sp, solver="highs")
    assert q.status is Status.OPTIMAL
    assert m.eta.value >= q.objective - 1e-5


def test_the_cuts_at_a_nearly_feasible_point_bound_the_estimate_by_q_nearby():
    m, sp = _threshold_master(0.0)
    point = 1 / 3 - 3.3e-7
    cuts = BendersCuts([Subproblem(sp, [(m.y, sp.y)], m.eta)])
    rows = [linear_row(c) for c in cuts(ComponentMap([(m.y, point), (m.eta, 0.0)]))]
    sp.y.fix(1 / 3)  # the nearest point the subproblem accepts
    nearby = solve(sp, solver="highs").objective
    bounds = [row.upper - sum(c * point for v, c in zip(row.variables, row.coefs, strict=True)
                              if v is m.y)
              for row in rows if any(v is m.eta for v in row.variables)]
    # each row reads coef_eta * eta + coef_y * y <= upper with coef_eta = -1: eta >= -bound
    assert bounds and max(-b for b in bounds) == pytest.approx(nearby, abs=1e-4)


def _scenario_blocks(deactivate: bool) -> pyo.ConcreteModel:
    """An extensive form whose two scenarios are sub-blocks sc[s] with their own copy of y;
    the master part is y (integer) and eta[s]."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(range(2), domain=pyo.Integers, bounds=(0, 4))
    m.eta = pyo.Var(range(2), bounds=(-50, None))
    m.sc = pyo.Block(range(2))
    demand = {0: 5, 1: 7}
    for s in range(2):
        b = m.sc[s]
        b.y = pyo.Var(range(2))
        b.x = pyo.Var(range(2), bounds=(0, None))
        b.short = pyo.Var(bounds=(0, None))
        b.cap = pyo.Constraint(range(2), rule=lambda b, j: b.x[j] <= 2 * b.y[j])
        b.meet = pyo.Constraint(expr=b.x[0] + b.x[1] + b.short == demand[s])
        b.need = pyo.Constraint(expr=b.y[0] + b.y[1] >= 2)  # infeasible for some masters
        b.obj = pyo.Objective(expr=b.x[0] + 2 * b.x[1] + 9 * b.short - 3 * b.y[1])
        if deactivate:
            b.deactivate()
    return m


def test_deactivated_scenario_blocks_of_a_bigger_model_are_subproblems():
    # Scenario blocks kept out of the master's solve by deactivating them raised
    # "needs one minimized objective" (with an estimate) or a KeyError (without one).
    m = _scenario_blocks(deactivate=True)
    m.cost = pyo.Objective(expr=3 * m.y[0] + 4 * m.y[1] + 0.5 * (m.eta[0] + m.eta[1]))
    subs = [Subproblem(m.sc[s], [(m.y[j], m.sc[s].y[j]) for j in range(2)], m.eta[s])
            for s in range(2)]
    result = solve(m, plugins=[LazyConstraints(BendersCuts(subs))])
    assert all(not m.sc[s].active for s in range(2))  # the user's blocks are left alone

    ext = _scenario_blocks(deactivate=False)
    for s in range(2):
        ext.sc[s].obj.deactivate()
        ext.sc[s].link = pyo.Constraint(range(2), rule=lambda b, j: b.y[j] == ext.y[j])
    ext.cost = pyo.Objective(expr=3 * ext.y[0] + 4 * ext.y[1] + 0.5 * sum(
        ext.sc[s].obj.expr for s in range(2)))
    truth = solve(ext, solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, rel=1e-6)

    feasibility_only = _scenario_blocks(deactivate=True)
    feasibility_only.cost = pyo.Objective(expr=feasibility_only.y[0] + feasibility_only.y[1])
    block = feasibility_only.sc[0]
    result = solve(feasibility_only, plugins=[LazyConstraints(BendersCuts([Subproblem(
        block, [(feasibility_only.y[j], block.y[j]) for j in range(2)])]))])
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(2.0)


def test_a_subproblem_infeasible_at_every_master_point_makes_the_master_infeasible():
    # Its elastic form (links relaxed) has no point either: that raised SolverError
    # ("elastic form ended infeasible") where the extensive form is simply infeasible.
    m = pyo.ConcreteModel()
    m.y = pyo.Var(domain=pyo.Binary)
    m.eta = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.y + m.eta)
    sp = pyo.ConcreteModel()
    sp.y = pyo.Var(bounds=(0, 1))
    sp.x = pyo.Var(bounds=(0, 3))
    sp.c = pyo.Constraint(expr=sp.x + sp.y >= 5)
    sp.obj = pyo.Objective(expr=sp.x)
    ext = pyo.ConcreteModel()
    ext.y = pyo.Var(domain=pyo.Binary)
    ext.x = pyo.Var(bounds=(0, 3))
    ext.c = pyo.Constraint(expr=ext.x + ext.y >= 5)
    ext.obj = pyo.Objective(expr=ext.y + ext.x)
    assert solve(ext, solver="highs").status is Status.INFEASIBLE
    for estimate in (m.eta, None):
        for solver in ("highs", "scip"):
            result = solve(m, plugins=[LazyConstraints(BendersCuts(
                [Subproblem(sp, [(m.y, sp.y)], estimate)], solver=solver))])
            assert result.status is Status.INFEASIBLE


def test_on_solution_never_stops_at_a_point_missing_an_all_integer_row():
    # SCIP's first run takes x = (1, 1) (over the capacity by 1, inside its relative
    # tolerance); `solve` solves again at a tighter one, unless the callback had stopped at
    # that point: then it was the answer (status unknown, objective 2).
    from itertools import product

    from coplug.plugins.on_solution import OnSolution

    capacity = 2 * 10**6
    weights = (capacity // 2 + 1, capacity // 2)
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=weights[0] * m.x[0] + weights[1] * m.x[1] <= capacity)
    m.obj = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    truth = max(sum(p) for p in product((0, 1), repeat=2)  # exact, by enumeration
                if weights[0] * p[0] + weights[1] * p[1] <= capacity)
    seen = []

    def good_enough(solution, objective):
        point = [round(solution[m.x[i]]) for i in range(2)]
        seen.append(point)
        return objective >= 1

    result = solve(m, plugins=[OnSolution(good_enough)])
    assert all(weights[0] * p[0] + weights[1] * p[1] <= capacity for p in seen)
    assert result.objective == pytest.approx(truth)
    loaded = [round(m.x[i].value) for i in range(2)]
    assert weights[0] * loaded[0] + weights[1] * loaded[1] <= capacity
