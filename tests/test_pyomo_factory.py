"""coplug's backends through Pyomo's solver factories (legacy and new interface), checked
against Pyomo's own HiGHS interface and against the models' constraints."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pyomo.kernel as pmo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.common.util import (
    NoDualsError,
    NoFeasibleSolutionError,
    NoOptimalSolutionError,
)
from pyomo.contrib.solver.solvers.highs import Highs
from pyomo.opt import TerminationCondition as LegacyTC

import coplug.plugins  # noqa: F401  (registers coplug_scip, coplug_highs, coplug_lap)
from coplug.formulations.mip_families import setcover
from coplug.plugins import InputError
from coplug.plugins.pmvb import PMVBBranching

NAMES = ["coplug_scip", "coplug_highs"]


def knapsack(seed: int, n: int = 12) -> pyo.ConcreteModel:
    """A random 0-1 knapsack (maximize)."""
    rng = np.random.default_rng(seed)
    w, v = rng.integers(1, 30, n), rng.integers(1, 40, n)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(int(w[i]) * m.x[i] for i in range(n)) <= int(w.sum()) // 3)
    m.o = pyo.Objective(expr=sum(int(v[i]) * m.x[i] for i in range(n)), sense=pyo.maximize)
    return m


def production_lp() -> pyo.ConcreteModel:
    """A small LP with a binding and a slack row, declaring dual and rc Suffixes."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 10))
    m.labour = pyo.Constraint(expr=2 * m.x[0] + m.x[1] + 3 * m.x[2] <= 12)
    m.wood = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] + m.x[2] <= 30)
    m.o = pyo.Objective(expr=5 * m.x[0] + 2 * m.x[1] + 6 * m.x[2], sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def infeasible() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] >= 3)
    m.o = pyo.Objective(expr=m.x[0])
    return m


def _reference(model: pyo.ConcreteModel) -> float:
    """Pyomo's own HiGHS interface's optimum of a copy of `model`."""
    return Highs().solve(model.clone()).incumbent_objective


def _packs(m: pyo.ConcreteModel) -> bool:
    """The loaded point is binary and within the knapsack capacity."""
    values = [m.x[i].value for i in m.x]
    return all(v in (0.0, 1.0) for v in values) and pyo.value(m.cap.body) <= m.cap.upper + 1e-9


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", range(5))
def test_legacy_factory_solves_to_pyomo_highs_optimum(name: str, seed: int) -> None:
    m = knapsack(seed)
    results = pyo.SolverFactory(name).solve(m)
    pyo.assert_optimal_termination(results)
    assert results.problem.lower_bound == pytest.approx(_reference(m))
    assert pyo.value(m.o) == pytest.approx(results.problem.lower_bound) and _packs(m)


@pytest.mark.parametrize("name", NAMES)
def test_new_interface_results_and_loader(name: str) -> None:
    m = knapsack(7)
    results = NewFactory(name).solve(m, load_solutions=False)
    assert results.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    assert results.solution_status is SolutionStatus.optimal
    assert results.incumbent_objective == pytest.approx(_reference(m))
    assert results.objective_bound == pytest.approx(results.incumbent_objective)
    assert all(m.x[i].value is None for i in m.x)  # nothing loaded
    results.solution_loader.load_vars()
    assert pyo.value(m.o) == pytest.approx(results.incumbent_objective) and _packs(m)
    assert results.solver_name == name and results.solver_version[0] >= 1


@pytest.mark.parametrize("name", NAMES)
def test_lp_duals_through_both_interfaces_match_pyomo_highs(name: str) -> None:
    reference = production_lp()
    Highs().solve(reference)  # Pyomo's own interface fills the Suffixes
    m = production_lp()
    pyo.SolverFactory(name).solve(m)
    for con in (m.labour, m.wood):
        assert m.dual[con] == pytest.approx(reference.dual[reference.find_component(con)])
    for i in m.x:
        assert m.rc[m.x[i]] == pytest.approx(reference.rc[reference.x[i]], abs=1e-9)
    fresh = production_lp()
    results = NewFactory(name).solve(fresh, load_solutions=False)
    assert len(fresh.dual) == 0 and fresh.x[0].value is None  # the model is left as it was
    duals = results.solution_loader.get_duals([fresh.labour])
    assert duals[fresh.labour] == pytest.approx(m.dual[m.labour]) and m.dual[m.labour] > 0


def test_duals_need_a_declared_suffix_and_an_lp() -> None:
    m = production_lp()
    m.del_component(m.dual)
    results = NewFactory("coplug_highs").solve(m)
    with pytest.raises(NoDualsError, match="declare m.dual"):
        results.solution_loader.get_duals()
    mip = knapsack(1)
    mip.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with pytest.warns(UserWarning, match="integer"):
        results = pyo.SolverFactory("coplug_scip").solve(mip)  # legacy: loads what it can
    pyo.assert_optimal_termination(results)
    assert len(mip.dual) == 0


@pytest.mark.parametrize("name", NAMES)
def test_infeasible_raises_like_pyomo_or_reports(name: str) -> None:
    with pytest.raises(NoFeasibleSolutionError, match="infeasible"):
        pyo.SolverFactory(name).solve(infeasible())
    m = infeasible()
    results = pyo.SolverFactory(name).solve(m, load_solutions=False)
    assert results.solver.termination_condition == LegacyTC.infeasible
    new = NewFactory(name).solve(m, load_solutions=False,
                                 raise_exception_on_nonoptimal_result=False)
    assert new.termination_condition is TerminationCondition.provenInfeasible
    assert new.solution_status is SolutionStatus.noSolution and new.incumbent_objective is None


def test_node_limit_is_iteration_limit_and_not_optimal() -> None:
    m = setcover(150, seed=3)
    solver = NewFactory("coplug_scip")
    with pytest.raises(NoOptimalSolutionError, match="node_limit"):
        solver.solve(m, solver_options={"limits/nodes": 1, "presolving/maxrounds": 0,
                                        "separating/maxroundsroot": 0})
    assert all(v.value is None for v in m.component_data_objects(pyo.Var))  # put back
    results = solver.solve(m, solver_options={"limits/nodes": 1, "presolving/maxrounds": 0,
                                              "separating/maxroundsroot": 0},
                           raise_exception_on_nonoptimal_result=False)
    if results.termination_condition is TerminationCondition.convergenceCriteriaSatisfied:
        pytest.skip("SCIP closed this instance at the root")
    assert results.termination_condition is TerminationCondition.iterationLimit
    assert results.objective_bound <= results.incumbent_objective + 1e-9  # a minimization


def test_gap_options_map_to_native_ones() -> None:
    m = setcover(250, seed=3)
    results = NewFactory("coplug_scip").solve(m, rel_gap=10.0, solver_options={
        "presolving/maxrounds": 0, "separating/maxroundsroot": 0})
    out = results.extra_info.coplug
    assert out["status"] == "feasible"  # stopped at the first incumbent within the gap
    assert results.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    # converged at the caller's gap: 'optimal', as Pyomo's own SCIP and HiGHS interfaces say
    assert results.solution_status is SolutionStatus.optimal
    assert out["bound"] <= out["objective"] <= 11 * out["bound"]
    with pytest.raises(InputError, match="threads"):
        NewFactory("coplug_scip").solve(knapsack(0), threads=4)
    with pytest.raises(InputError, match="no gap options"):
        NewFactory("coplug_lap").solve(knapsack(0), rel_gap=0.1)


def test_plugins_and_warmstart_ride_in_the_config() -> None:
    m = knapsack(4, n=30)
    results = pyo.SolverFactory("coplug_scip").solve(m, plugins=[PMVBBranching("lp")])
    pyo.assert_optimal_termination(results)
    assert results.problem.lower_bound == pytest.approx(_reference(m))
    new = NewFactory("coplug_highs").solve(m, warmstart=True)
    assert new.extra_info.coplug["extra"]["warmstart"]["values"] == len(m.x)
    assert pyo.SolverFactory("coplug_scip").warm_start_capable()


def test_lap_backend_by_name_matches_highs() -> None:
    rng = np.random.default_rng(0)
    cost = rng.uniform(0, 10, (6, 6))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), range(6), bounds=(0, 1))
    m.row = pyo.Constraint(range(6), rule=lambda m, i: sum(m.x[i, j] for j in range(6)) == 1)
    m.col = pyo.Constraint(range(6), rule=lambda m, j: sum(m.x[i, j] for i in range(6)) == 1)
    m.o = pyo.Objective(expr=sum(cost[i, j] * m.x[i, j] for i in range(6) for j in range(6)))
    results = NewFactory("coplug_lap").solve(m)
    assert results.incumbent_objective == pytest.approx(_reference(m))
    assert all(pyo.value(c.body) == pytest.approx(1) for c in m.component_data_objects(
        pyo.Constraint))


@pytest.mark.parametrize("name", NAMES)
def test_factory_names_what_it_got_instead_of_a_model(name):
    kernel = pmo.block()
    kernel.x = pmo.variable(lb=0, ub=3)
    kernel.o = pmo.objective(kernel.x)
    opt = NewFactory(name)
    with pytest.raises(InputError, match="not pyomo.kernel ones"):
        opt.solve(kernel)
    m = pyo.ConcreteModel()
    m.b = pyo.Block([1, 2])
    with pytest.raises(InputError, match=r"indexed Block 'b'; pass one of its blocks"):
        opt.solve(m.b)
    with pytest.raises(InputError, match="needs a Pyomo model \\(a Block\\), got str"):
        opt.solve("model.lp")
