"""Review s13: Pyomo idioms through coplug's solver factories, native options and
explain_infeasible, each checked against Pyomo's own interfaces or scipy's MILP."""

from __future__ import annotations

import io
import warnings

import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
from pyomo.contrib.solver.common.results import TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs

import coplug.plugins  # noqa: F401  (registers coplug_scip, coplug_highs, coplug_lap)
from coplug.formulations.mip_families import setcover
from coplug.plugins import InputError

NAMES = ["coplug_scip", "coplug_highs"]


def production_lp() -> pyo.ConcreteModel:
    """A small maximizing LP with a binding and a slack row, declaring dual and rc."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 10))
    m.labour = pyo.Constraint(expr=2 * m.x[0] + m.x[1] + 3 * m.x[2] <= 12)
    m.wood = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] + m.x[2] <= 30)
    m.o = pyo.Objective(expr=5 * m.x[0] + 2 * m.x[1] + 6 * m.x[2], sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


# ---- the solver factories ---------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_reduced_costs_of_all_variables_as_pyomo_highs_gives_them(name: str) -> None:
    m, copy = production_lp(), production_lp()
    reference = Highs().solve(copy).solution_loader.get_reduced_costs()
    loader = NewFactory(name).solve(m, load_solutions=False).solution_loader
    got = loader.get_reduced_costs()
    assert {v.name: got[v] for v in m.x.values()} == pytest.approx(
        {v.name: value for v, value in reference.items()}, abs=1e-9)
    assert loader.get_reduced_costs([m.x[1]])[m.x[1]] == pytest.approx(got[m.x[1]])


@pytest.mark.parametrize("name", NAMES)
def test_legacy_load_solutions_false_with_rc_declared_then_load_from(name: str) -> None:
    m = production_lp()
    results = pyo.SolverFactory(name).solve(m, load_solutions=False)
    assert m.x[0].value is None
    m.solutions.load_from(results)
    assert pyo.value(m.o) == pytest.approx(30) and len(m.dual) == 2


@pytest.mark.parametrize("name", NAMES)
def test_report_timing_prints_a_timer_as_pyomos_highs_does(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    results = pyo.SolverFactory(name).solve(production_lp(), report_timing=True)
    pyo.assert_optimal_termination(results)
    assert "solve" in capsys.readouterr().out


def test_load_solutions_false_leaves_outer_variables_of_a_block_alone() -> None:
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 1), initialize=0.3)
    m.b = pyo.Block()
    m.b.x = pyo.Var(bounds=(0, 4))
    m.b.c = pyo.Constraint(expr=m.b.x + m.y >= 2)
    m.b.o = pyo.Objective(expr=m.b.x - m.y)
    results = NewFactory("coplug_scip").solve(m.b, load_solutions=False)
    assert m.y.value == 0.3 and m.b.x.value is None
    assert results.solution_loader.get_vars([m.y])[m.y] == pytest.approx(1)


@pytest.mark.parametrize("name, options", [
    ("coplug_scip", {"limits/gap": 0.3}), ("coplug_highs", {"mip_rel_gap": 0.3}),
    ("coplug_scip", {"limits/absgap": 80.0}), ("coplug_highs", {"mip_abs_gap": 80.0})])
def test_a_native_gap_limit_converges_as_in_pyomos_own_interfaces(name: str,
                                                                   options: dict) -> None:
    m = setcover(250, seed=3)
    options = {**options, **({"presolving/maxrounds": 0, "separating/maxroundsroot": 0}
                             if name == "coplug_scip" else {"presolve": "off"})}
    results = NewFactory(name).solve(m, solver_options=options)
    assert results.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    legacy = pyo.SolverFactory(name).solve(setcover(250, seed=3), options=options)
    assert pyo.check_optimal_termination(legacy)


@pytest.mark.parametrize("name", NAMES)
def test_get_vars_includes_fixed_variables_as_pyomo_highs_does(name: str) -> None:
    m = pyo.ConcreteModel()
    m.p = pyo.Param(mutable=True, initialize=3)
    m.x = pyo.Var(bounds=(0, 10), initialize=7)
    m.y = pyo.Var(bounds=(0, 10), initialize=2)
    m.y.fix()
    m.c = pyo.Constraint(expr=m.x + m.y >= m.p)
    m.o = pyo.Objective(expr=m.p * m.x + m.y)
    reference = Highs().solve(m.clone(), load_solutions=False).solution_loader.get_vars()
    loader = NewFactory(name).solve(m, load_solutions=False).solution_loader
    assert m.x.value == 7 and m.y.value == 2 and m.y.fixed
    got = loader.get_vars()
    assert {v.name: value for v, value in got.items()} == pytest.approx(
        {v.name: value for v, value in reference.items()})
    assert loader.get_vars([m.y])[m.y] == 2


def test_get_duals_names_a_constraint_it_has_no_dual_for() -> None:
    m = production_lp()
    other = production_lp()
    loader = NewFactory("coplug_scip").solve(m, load_solutions=False).solution_loader
    with pytest.raises(InputError, match="labour"):
        loader.get_duals([other.labour])
    with pytest.raises(InputError, match="x\\[0\\]"):
        loader.get_reduced_costs([other.x[0]])


@pytest.mark.parametrize("text", ["no", "false", "maybe", 2])
def test_warmstart_takes_pyomos_booleans_not_any_truthy_text(text: object) -> None:
    solver = NewFactory("coplug_scip")
    if text in ("no", "false"):  # bool("no") is True: Pyomo's Bool reads it as False
        results = solver.solve(production_lp(), warmstart=text)
        assert "warmstart" not in results.extra_info.coplug["extra"]
    else:
        with pytest.raises(ValueError):
            solver.solve(production_lp(), warmstart=text)


def test_legacy_plugins_must_be_a_list_and_the_config_is_honoured() -> None:
    solver = pyo.SolverFactory("coplug_scip")
    with pytest.raises(InputError, match="plugins must be a list"):
        solver.solve(production_lp(), plugins=object())
    m = production_lp()
    for var, value in zip(m.x.values(), (6, 0, 0), strict=True):
        var.value = value
    solver.config.warmstart = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = solver.solve(m)
    pyo.assert_optimal_termination(results)
    assert solver.config.warmstart is True


@pytest.mark.parametrize("name", NAMES)
def test_tee_into_a_stream_as_pyomos_own_interfaces_do(name: str,
                                                       capfd: pytest.CaptureFixture[str]
                                                       ) -> None:
    log = io.StringIO()
    NewFactory(name).solve(production_lp(), tee=log)
    assert len(log.getvalue()) > 100
    assert capfd.readouterr().out == ""
