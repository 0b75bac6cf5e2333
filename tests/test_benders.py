"""Benders decomposition through lazy constraints: the master's optimum equals the
extensive form's (solved by HiGHS), with optimality and feasibility cuts."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.formulations.facility import (
    benders_models,
    extensive_model,
    random_facility_instance,
)
from coplug.plugins import InputError, LazyConstraints, Status, solve
from coplug.plugins.benders import BendersCuts, Subproblem


def _components(model: pyo.Block) -> list[str]:
    return sorted(c.name for c in model.component_objects(descend_into=True))


@pytest.mark.parametrize("penalty", [None, 40.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_benders_reaches_the_extensive_forms_optimum(seed, penalty):
    inst = random_facility_instance(4, 8, 3, seed=seed, penalty=penalty)
    master, subs = benders_models(inst)
    before = [_components(s.model) for s in subs]
    cuts = BendersCuts(subs)
    result = solve(master, plugins=[LazyConstraints(cuts, fractional=seed == 2)])
    truth = solve(extensive_model(inst), solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, rel=1e-6)
    assert cuts.stats["optimality_cuts"] > 0
    if penalty is not None:
        assert cuts.stats["feasibility_cuts"] == 0  # unmet demand keeps every scenario feasible
    assert [_components(s.model) for s in subs] == before  # the user's models are untouched
    opened = [j for j in master.open if master.open[j].value > 0.5]
    for s in range(inst.shape[2]):  # each scenario's demand fits the opened capacity
        assert penalty is not None or sum(inst.capacity[j] for j in opened) >= (
            inst.demand[s].sum() - 1e-6)


def test_feasibility_cuts_are_made_when_demand_must_be_met():
    inst = random_facility_instance(5, 10, 3, seed=4)
    master, subs = benders_models(inst)
    cuts = BendersCuts(subs)
    result = solve(master, plugins=[LazyConstraints(cuts)])
    assert result.objective == pytest.approx(solve(extensive_model(inst),
                                                   solver="highs").objective, rel=1e-6)
    assert cuts.stats["feasibility_cuts"] > 0


def test_a_feasibility_only_subproblem_keeps_the_master_within_its_points():
    m = pyo.ConcreteModel()
    m.y = pyo.Var(range(3), domain=pyo.Binary)
    m.obj = pyo.Objective(expr=m.y[0] + 2 * m.y[1] + 3 * m.y[2])
    sp = pyo.ConcreteModel()
    sp.y = pyo.Var(range(3), bounds=(0, 1))
    sp.z = pyo.Var(bounds=(0, 10))
    sp.need = pyo.Constraint(expr=sp.z == 4)
    sp.fit = pyo.Constraint(expr=sp.z <= 3 * sp.y[0] + 1 * sp.y[1] + 2 * sp.y[2])  # >= 4
    result = solve(m, plugins=[LazyConstraints(BendersCuts([Subproblem(sp, [
        (m.y[i], sp.y[i]) for i in range(3)])]))])
    m.direct = pyo.Constraint(expr=3 * m.y[0] + m.y[1] + 2 * m.y[2] >= 4)
    assert result.objective == pytest.approx(solve(m, solver="highs").objective)


def _tiny():
    m = pyo.ConcreteModel()
    m.y = pyo.Var(domain=pyo.Binary)
    m.eta = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.y + m.eta)
    sp = pyo.ConcreteModel()
    sp.y = pyo.Var(bounds=(0, 1))
    sp.x = pyo.Var(bounds=(0, None))
    sp.c = pyo.Constraint(expr=sp.x >= 2 - 2 * sp.y)
    sp.obj = pyo.Objective(expr=3 * sp.x)
    return m, sp


def test_tiny_model_opens_because_the_recourse_costs_more():
    m, sp = _tiny()
    result = solve(m, plugins=[LazyConstraints(BendersCuts([Subproblem(sp, [(m.y, sp.y)],
                                                                       m.eta)]))])
    assert result.objective == pytest.approx(1.0) and m.y.value == 1  # min(0 + 6, 1 + 0)


@pytest.mark.parametrize("change,fragment", [
    (lambda m, sp: Subproblem(sp, [(m.y, sp.y)], m.free), "lower bound"),
    (lambda m, sp: Subproblem(sp, [(m.y, m.eta)], m.eta), "not a variable of its model"),
    (lambda m, sp: Subproblem(sp, [(sp.x, sp.y)], m.eta), "belongs to the subproblem"),
    (lambda m, sp: Subproblem(sp, [], m.eta), "no links"),
    (lambda m, sp: Subproblem(sp, [(m.y, sp.y)], 3), "estimate must be"),
    (lambda m, sp: "sub", "must be a Subproblem"),
])
def test_bad_subproblems_are_named(change, fragment):
    m, sp = _tiny()
    m.free = pyo.Var()
    with pytest.raises(InputError, match=fragment):
        BendersCuts([change(m, sp)])


def test_a_maximized_subproblem_and_an_empty_list_are_refused():
    m, sp = _tiny()
    sp.obj.sense = pyo.maximize
    with pytest.raises(InputError, match="one minimized objective"):
        BendersCuts([Subproblem(sp, [(m.y, sp.y)], m.eta)])
    with pytest.raises(InputError, match="at least one"):
        BendersCuts([])


def test_an_unbounded_subproblem_is_named():
    m, sp = _tiny()
    sp.obj.expr = -sp.x
    with pytest.raises(InputError, match="unbounded"):
        solve(m, plugins=[LazyConstraints(BendersCuts([Subproblem(sp, [(m.y, sp.y)],
                                                                  m.eta)]))])


def test_the_persistent_highs_path_agrees_with_solving_each_clone_through_solve(monkeypatch):
    inst = random_facility_instance(4, 8, 3, seed=5)
    truth = solve(extensive_model(inst), solver="highs").objective
    fast_master, fast_subs = benders_models(inst)
    fast = BendersCuts(fast_subs)
    solve(fast_master, plugins=[LazyConstraints(fast)])
    assert pyo.value(fast_master.cost) == pytest.approx(truth, rel=1e-6)
    assert fast.stats["fallbacks"] == 0
    scip_master, scip_subs = benders_models(inst)  # SCIP subproblems: no persistent model
    via_scip = BendersCuts(scip_subs, solver="scip")
    solve(scip_master, plugins=[LazyConstraints(via_scip)])
    assert pyo.value(scip_master.cost) == pytest.approx(truth, rel=1e-6)
    from coplug.plugins import benders

    monkeypatch.setattr(benders._PersistentLP, "solve", lambda self, point: None)
    master, subs = benders_models(inst)  # every answer uncertified: each clone via solve
    slow = BendersCuts(subs)
    solve(master, plugins=[LazyConstraints(slow)])
    assert pyo.value(master.cost) == pytest.approx(truth, rel=1e-6)
    assert slow.stats["fallbacks"] == slow.stats["subproblem_solves"] > 0


def test_a_subproblem_that_is_not_an_lp_or_reaches_outside_is_named():
    m, sp = _tiny()
    sp.k = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    sp.c2 = pyo.Constraint(expr=sp.k <= sp.x)
    with pytest.raises(InputError, match="not an LP"):
        BendersCuts([Subproblem(sp, [(m.y, sp.y)], m.eta)])
    m, sp = _tiny()
    sp.c2 = pyo.Constraint(expr=sp.x >= m.eta)
    with pytest.raises(InputError, match="variable of another model"):
        BendersCuts([Subproblem(sp, [(m.y, sp.y)], m.eta)])


def _reused_case():
    """The master and subproblem of the reuse tests below: 3 at d = 1, 13 at d = 8."""
    master = pyo.ConcreteModel()
    master.y = pyo.Var(domain=pyo.Binary)
    master.t = pyo.Var(bounds=(0, None))
    master.obj = pyo.Objective(expr=5 * master.y + master.t)
    sub = pyo.ConcreteModel()
    sub.d = pyo.Param(initialize=1.0, mutable=True)
    sub.yc = pyo.Var(bounds=(0, 1))
    sub.f = pyo.Var(bounds=(0, None))
    sub.u = pyo.Var(bounds=(0, None))
    sub.cap = pyo.Constraint(expr=sub.f <= 10 * sub.yc)
    sub.dem = pyo.Constraint(expr=sub.f + sub.u >= sub.d)
    sub.obj = pyo.Objective(expr=sub.f + 3 * sub.u)
    return master, sub


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_reused_cuts_read_the_subproblems_data_as_it_is_at_each_solve(solver):
    # BendersCuts cloned its subproblems once: after the demand changed, a second solve
    # with the same cuts object gave the first demand's optimum (3 for 13)
    master, sub = _reused_case()
    cuts = BendersCuts([Subproblem(sub, [(master.y, sub.yc)], master.t)])
    first = solve(master, solver=solver, plugins=[LazyConstraints(cuts)])
    assert first.objective == pytest.approx(3.0)  # y = 0, all demand unmet at 3
    sub.d = 8.0
    second = solve(master, solver=solver, plugins=[LazyConstraints(cuts)])
    assert second.objective == pytest.approx(13.0)  # y = 1 (5) and 8 shipped
    assert cuts.stats["subproblem_solves"] > 0


@pytest.mark.parametrize("seed", range(4))
def test_negative_unit_costs_give_the_extensive_optimum(seed):
    """The master's estimates were bounded below by 0: with negative unit costs Benders
    stopped at 1 where the extensive model reaches -9."""
    from coplug.formulations.facility import FacilityInstance

    base = random_facility_instance(3, 4, 2, seed=seed, penalty=20.0)
    inst = FacilityInstance(fixed=base.fixed, capacity=base.capacity, cost=base.cost - 6.0,
                            demand=base.demand, penalty=base.penalty)
    assert (inst.cost < 0).any()
    exact = solve(extensive_model(inst), solver="highs").objective
    for solver in ("scip", "highs"):
        master, subs = benders_models(inst)
        result = solve(master, solver=solver, plugins=[LazyConstraints(BendersCuts(subs))])
        assert result.objective == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_solve_that_made_no_cut_does_not_keep_old_clones(solver):
    """After a solve whose master had no point (no cut cached), the next solve kept the
    clones of the old data: 3 for 13."""
    master, sub = _reused_case()
    cuts = BendersCuts([Subproblem(sub, [(master.y, sub.yc)], master.t)])
    master.bad = pyo.Constraint(expr=master.y >= 2)
    assert solve(master, solver=solver, plugins=[LazyConstraints(cuts)]).status \
        is Status.INFEASIBLE
    master.bad.deactivate()
    sub.d = 8.0
    assert solve(master, solver=solver, plugins=[LazyConstraints(cuts)]).objective \
        == pytest.approx(13.0)


def test_solving_again_after_bounding_an_unbounded_subproblem_works():
    """The error says 'bound the subproblem'; doing so and solving with the same cuts
    raised the same error."""
    m, sp = _tiny()
    sp.obj.expr = -sp.x
    cuts = BendersCuts([Subproblem(sp, [(m.y, sp.y)], m.eta)])
    m.eta.setlb(-100)
    with pytest.raises(InputError, match="unbounded"):
        solve(m, plugins=[LazyConstraints(cuts)])
    sp.x.setub(10)
    assert solve(m, plugins=[LazyConstraints(cuts)]).objective == pytest.approx(-10.0)


def test_a_copy_fixed_after_construction_is_named_at_the_next_solve():
    """It was a KeyError deep in the persistent LP (and with SCIP subproblems a quiet 24)."""
    master, sub = _reused_case()
    cuts = BendersCuts([Subproblem(sub, [(master.y, sub.yc)], master.t)])
    assert solve(master, plugins=[LazyConstraints(cuts)]).objective == pytest.approx(3.0)
    sub.yc.fix(0)
    with pytest.raises(InputError, match="fixed"):
        solve(master, plugins=[LazyConstraints(cuts)])


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_unbounded_subproblem_at_a_point_another_rules_out_is_no_error(solver):
    """Sub 0 is unbounded at y = 0, where sub 1 has no point: the model is infeasible, not
    'unbounded' (an InputError said so)."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(domain=pyo.Binary)
    m.t = pyo.Var(bounds=(-50, None))
    m.obj = pyo.Objective(expr=m.y + m.t)
    s0 = pyo.ConcreteModel()
    s0.yc = pyo.Var(bounds=(0, 1))
    s0.x = pyo.Var(bounds=(0, None))
    s0.open = pyo.Constraint(expr=s0.yc <= 0)
    s0.obj = pyo.Objective(expr=-s0.x)
    s1 = pyo.ConcreteModel()
    s1.yc = pyo.Var(bounds=(0, 1))
    s1.need = pyo.Constraint(expr=s1.yc >= 1)
    s1.obj = pyo.Objective(expr=0 * s1.yc)
    cuts = BendersCuts([Subproblem(s0, [(m.y, s0.yc)], m.t), Subproblem(s1, [(m.y, s1.yc)])])
    assert solve(m, solver=solver, plugins=[LazyConstraints(cuts)]).status is Status.INFEASIBLE
