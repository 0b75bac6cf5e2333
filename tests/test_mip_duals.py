"""solve(m, mip_duals="fixed"): duals of the LP with the integers fixed at the MIP optimum,
checked against Pyomo's own HiGHS interface solving that fixed LP by itself."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.solvers.highs import Highs

from coplug.plugins import InputError, Status, solve

SOLVERS = ["scip", "highs"]


def unit_commitment(seed: int, hours: int = 4) -> pyo.ConcreteModel:
    """Generators with on/off binaries, start costs, min and max output; demand per hour.
    The demand rows' fixed-model duals are the hourly marginal prices."""
    rng = np.random.default_rng(seed)
    n = 4
    cost, fixed = rng.uniform(10, 50, n), rng.uniform(50, 200, n)
    lo, hi = rng.uniform(5, 20, n), rng.uniform(40, 80, n)
    demand = rng.uniform(0.3, 0.8, hours) * hi.sum()
    m = pyo.ConcreteModel()
    m.G, m.T = range(n), range(hours)
    m.on = pyo.Var(m.G, m.T, domain=pyo.Binary)
    m.p = pyo.Var(m.G, m.T, domain=pyo.NonNegativeReals)
    m.up = pyo.Constraint(m.G, m.T, rule=lambda mm, g, t: mm.p[g, t] <= hi[g] * mm.on[g, t])
    m.down = pyo.Constraint(m.G, m.T, rule=lambda mm, g, t: mm.p[g, t] >= lo[g] * mm.on[g, t])
    m.demand = pyo.Constraint(m.T, rule=lambda mm, t: sum(mm.p[g, t] for g in m.G)
                              >= demand[t])
    m.o = pyo.Objective(expr=sum(cost[g] * m.p[g, t] + fixed[g] * m.on[g, t]
                                 for g in m.G for t in m.T))
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def fixed_lp_duals(model: pyo.ConcreteModel) -> dict[str, float]:
    """Pyomo's own HiGHS on a copy with the binaries fixed at the loaded values."""
    copy = model.clone()
    for var in copy.on.values():  # continuous and fixed: Pyomo's HiGHS keeps fixed columns
        var.domain = pyo.Reals
        var.fix(round(var.value))
    Highs().solve(copy)
    return {con.name: copy.dual[con] for con in copy.component_data_objects(pyo.Constraint)}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(4))
def test_fixed_model_duals_match_pyomo_highs_on_the_fixed_lp(solver: str, seed: int) -> None:
    m = unit_commitment(seed)
    result = solve(m, solver=solver, mip_duals="fixed")
    assert result.status is Status.OPTIMAL and result.extra["duals"]["loaded"]
    assert result.extra["fixed_lp"]["objective"] == pytest.approx(result.objective)
    assert all(not v.fixed for v in m.on.values())  # put back as they were
    reference = fixed_lp_duals(m)
    for t in m.T:  # hourly prices: unique here (one generator sets the price)
        assert m.dual[m.demand[t]] == pytest.approx(reference[m.demand[t].name], abs=1e-6)
        assert m.dual[m.demand[t]] >= -1e-9  # more demand cannot lower the cost


def test_mip_values_stay_loaded_and_integral() -> None:
    m = unit_commitment(1)
    reference = unit_commitment(1)
    reference.del_component(reference.dual)
    reference.del_component(reference.rc)
    plain = solve(reference, solver="highs")
    result = solve(m, solver="highs", mip_duals="fixed")
    assert result.objective == pytest.approx(plain.objective)
    assert all(v.value in (0.0, 1.0) for v in m.on.values())
    assert pyo.value(m.o) == pytest.approx(result.objective)


def test_without_the_option_a_mip_still_gets_no_duals() -> None:
    m = unit_commitment(0)
    with pytest.warns(UserWarning, match="a MIP has no LP duals"):
        solve(m, solver="scip")
    assert len(m.dual) == 0


def test_infeasible_mip_gives_no_duals_and_bad_values_are_named() -> None:
    m = unit_commitment(2)
    m.cap = pyo.Constraint(expr=sum(m.on.values()) <= 0)
    with pytest.warns(UserWarning, match="ended infeasible"):
        result = solve(m, solver="highs", mip_duals="fixed")
    assert result.status is Status.INFEASIBLE and len(m.dual) == 0
    with pytest.raises(InputError, match="mip_duals must be None or 'fixed'"):
        solve(unit_commitment(0), mip_duals="yes")
    with pytest.raises(InputError, match="needs solver='scip' or 'highs'"):
        solve(unit_commitment(0), solver="lap", mip_duals="fixed")


def test_a_fixed_lp_with_another_optimum_loads_no_duals() -> None:
    from coplug.plugins.mip_duals import load_fixed_duals
    from coplug.plugins.results import Result

    m = unit_commitment(3)
    mip = solve(m, solver="highs", mip_duals="fixed")
    assert len(m.dual) > 0

    def resolve_elsewhere() -> Result:  # the real fixed LP, reported 1% off the MIP optimum
        lp = solve(m, solver="highs")
        lp.objective *= 1.01
        return lp

    with pytest.warns(UserWarning, match="is not the MIP's"):
        load_fixed_duals(m, mip, resolve_elsewhere)
    assert len(m.dual) == 0 and not mip.extra["duals"]["loaded"]


def test_pyomo_factories_take_mip_duals() -> None:
    import coplug.plugins  # noqa: F401  (registers the factories)

    m = unit_commitment(0)
    pyo.assert_optimal_termination(pyo.SolverFactory("coplug_highs").solve(m, mip_duals="fixed"))
    reference = fixed_lp_duals(m)
    assert m.dual[m.demand[0]] == pytest.approx(reference[m.demand[0].name], abs=1e-6)
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory

    results = NewFactory("coplug_scip").solve(unit_commitment(0), mip_duals="fixed")
    assert results.solution_loader.get_duals()  # certified fixed-model duals


def test_a_fixed_lp_that_fails_keeps_the_mip_answer() -> None:
    from coplug.plugins import SolverError
    from coplug.plugins.mip_duals import load_fixed_duals

    m = unit_commitment(2)
    mip = solve(m, solver="highs", mip_duals="fixed")
    values = [v.value for v in m.on.values()]

    def failing() -> None:
        raise SolverError("HiGHS stopped with status 'Not Set'")

    with pytest.warns(UserWarning, match="could not be solved: HiGHS stopped"):
        load_fixed_duals(m, mip, failing)
    assert [v.value for v in m.on.values()] == values and not any(v.fixed for v in m.on.values())
    assert not mip.extra["duals"]["loaded"]


def test_the_factory_says_why_an_integer_has_no_reduced_cost() -> None:
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory

    m = unit_commitment(0)
    loader = NewFactory("coplug_highs").solve(m, mip_duals="fixed").solution_loader
    assert loader.get_reduced_costs([m.p[0, 0]])  # a free variable of the fixed LP
    with pytest.raises(InputError, match=r"an integer one fixed in mip_duals='fixed'"):
        loader.get_reduced_costs([m.on[0, 0]])
