"""Review s13: Pyomo idioms through coplug's solver factories, native options and
explain_infeasible, each checked against Pyomo's own interfaces or scipy's MILP."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
from pyomo.contrib.solver.common.results import TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs
from pyomo.repn.standard_repn import generate_standard_repn
from scipy.optimize import Bounds, LinearConstraint, milp
from test_iis_file import free_integer_system
from test_pyomo_factory import production_lp

import coplug.plugins  # noqa: F401  (registers coplug_scip, coplug_highs, coplug_lap)
from coplug.formulations.mip_families import setcover
from coplug.plugins import InputError, solve
from coplug.plugins.iis import InfeasibleSubsystem, explain_infeasible

NAMES = ["coplug_scip", "coplug_highs"]


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


# ---- explain_infeasible -----------------------------------------------------------------


_BOX = 1e4  # unbounded sides for scipy (its HiGHS failed on a free integer system); the
# small systems here have points well inside it where they have any


def _scipy_feasible(cons: list, bounds: list) -> bool:
    """Whether the linear rows `cons` and the (variable, side) `bounds` admit a point, by
    scipy's MILP on the rows' own data: every other bound dropped, integrality kept, a
    binary's domain 0..1 kept."""
    index: dict[int, int] = {}
    variables: list = []
    rows = []
    for con in cons:
        repn = generate_standard_repn(con.body, compute_values=True)
        assert repn.is_linear(), con.name
        coefs = {}
        for var, coef in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            coefs[index.setdefault(id(var), len(index))] = float(coef)
            variables += [var] if len(variables) < len(index) else []
        lower = -np.inf if con.lower is None else pyo.value(con.lower) - repn.constant
        upper = np.inf if con.upper is None else pyo.value(con.upper) - repn.constant
        rows.append((coefs, lower, upper))
    for var, _ in bounds:
        if id(var) not in index:
            index[id(var)] = len(index)
            variables.append(var)
    n = len(variables)
    if n == 0:
        return all(lower <= 1e-9 and upper >= -1e-9 for _, lower, upper in rows)
    lb = np.array([0.0 if v.is_binary() else -_BOX for v in variables])
    ub = np.array([1.0 if v.is_binary() else _BOX for v in variables])
    for var, side in bounds:
        j = index[id(var)]
        lb[j], ub[j] = (max(lb[j], var.lb), ub[j]) if side == "lower" else (lb[j],
                                                                             min(ub[j], var.ub))
    if np.any(lb > ub):
        return False
    a = np.zeros((len(rows), n))
    for i, (coefs, _, _) in enumerate(rows):
        for j, coef in coefs.items():
            a[i, j] = coef
    constraints = ([LinearConstraint(a, [r[1] for r in rows], [r[2] for r in rows])]
                   if rows else [])
    result = milp(np.zeros(n), constraints=constraints, bounds=Bounds(lb, ub),
                  integrality=[1 if v.is_integer() else 0 for v in variables])
    assert result.status in (0, 2), result.message
    return result.status == 0


def _assert_irreducible_by_scipy(found: InfeasibleSubsystem) -> None:
    """The subsystem is infeasible and feasible without any one of its members."""
    cons, bounds = list(found.constraints), list(found.bounds)
    assert found.irreducible and not _scipy_feasible(cons, bounds), str(found)
    for k in range(len(cons)):
        assert _scipy_feasible(cons[:k] + cons[k + 1:], bounds), f"{cons[k].name} unneeded"
    for k in range(len(bounds)):
        assert _scipy_feasible(cons, bounds[:k] + bounds[k + 1:]), f"{bounds[k]} unneeded"


def test_a_binary_switched_off_by_its_bound_is_named() -> None:
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(3), domain=pyo.Binary)
    m.b[1].setub(0)  # the usual way to switch a binary off
    m.pick = pyo.Constraint(expr=m.b[1] >= 1)
    m.spare = pyo.Constraint(expr=m.b[0] + m.b[2] <= 2)
    found = explain_infeasible(m)
    assert found.constraints == [m.pick] and found.bounds == [(m.b[1], "upper")]
    _assert_irreducible_by_scipy(found)


@pytest.mark.parametrize("case", ["crossed", "integer window", "binary window", "objective"])
def test_bounds_no_point_meets_are_the_subsystem(case: str) -> None:
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 1))
    m.x = pyo.Var(bounds=(3, 1))
    if case == "integer window":
        m.x.domain, m.x.bounds = pyo.Integers, (0.2, 0.8)
    elif case == "binary window":
        m.x.domain, m.x.bounds = pyo.Binary, (0.2, 0.8)
    m.c = pyo.Constraint(expr=m.y + (0 if case == "objective" else m.x) <= 10)
    m.o = pyo.Objective(expr=m.x + m.y)
    assert solve(m.clone()).status.value == "infeasible"
    found = explain_infeasible(m)
    assert found.constraints == [] and found.bounds == [(m.x, "lower"), (m.x, "upper")]
    _assert_irreducible_by_scipy(found)


def test_a_conflict_scip_presolves_away_still_gets_its_subsystem() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers)
    m.y = pyo.Var(domain=pyo.Integers)
    m.z = pyo.Var(bounds=(0, 1))
    m.parity = pyo.Constraint(expr=2 * m.x + 2 * m.y == 1)  # no bound: SCIP's IIS was empty
    m.loose = pyo.Constraint(expr=m.x + m.z <= 5)
    found = explain_infeasible(m)
    assert found.constraints == [m.parity] and found.bounds == []
    _assert_irreducible_by_scipy(found)


def test_internal_solves_raise_no_suffix_warnings() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(0, 10))
    m.k = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.supply = pyo.Constraint(expr=m.x[0] + m.x[1] <= 4)
    m.demand = pyo.Constraint(expr=m.x[0] + m.x[1] + m.k >= 9)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.slack = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.priority = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.priority[m.k] = 5
    m.dual[m.supply] = 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = explain_infeasible(m)
    assert {c.name for c in found.constraints} == {"supply", "demand"}
    assert dict(m.dual.items()) == {m.supply: 1.5} and m.priority[m.k] == 5


def _mixed_system(seed: int) -> pyo.ConcreteModel:
    """Random rows (<=, ==, ranged) over variables of mixed domains, some binaries bounded
    tighter than 0..1, some bounds crossed."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    domains = [pyo.Reals, pyo.Integers, pyo.Binary, pyo.NonNegativeReals,
               pyo.NonNegativeIntegers, pyo.PositiveIntegers]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n))
    for var in m.x.values():
        var.domain = domains[rng.integers(len(domains))]
        low, high = ((0, 2), (0, 2)) if var.is_binary() else ((-3, 2), (0, 4))
        if rng.random() < 0.6:
            var.setlb(int(rng.integers(*low)))
        if rng.random() < 0.6:
            var.setub(int(rng.integers(*high)))
    m.c = pyo.ConstraintList()
    for _ in range(int(rng.integers(3, 7))):
        a = rng.integers(-3, 4, n)
        if not a.any():
            continue
        body = sum(int(a[j]) * m.x[j] for j in range(n) if a[j])
        side = float(rng.integers(-4, 6)) + (0.5 if rng.random() < 0.3 else 0.0)
        kind = rng.integers(3)
        m.c.add(body <= side if kind == 0 else body == side if kind == 1 else
                pyo.inequality(side - float(rng.integers(0, 3)), body, side))
    return m


def test_mixed_domain_systems_get_subsystems_scipy_confirms() -> None:
    checked = 0
    for seed in range(60):
        m = _mixed_system(seed)
        if solve(m.clone()).status.value != "infeasible":
            continue
        _assert_irreducible_by_scipy(explain_infeasible(m))
        checked += 1
    assert checked >= 40


def test_the_whole_model_fallback_is_cut_down_in_chunks_past_check_limit() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers)
    m.y = pyo.Var(domain=pyo.Integers)
    m.z = pyo.Var(range(30), bounds=(0, 1))
    m.loose = pyo.Constraint(range(30), rule=lambda mm, i: mm.x + mm.z[i] <= 100 + i)
    m.parity = pyo.Constraint(expr=2 * m.x + 2 * m.y == 1)
    found = explain_infeasible(m, check_limit=3)
    assert found.constraints == [m.parity] and found.bounds == [] and found.irreducible
    assert any("whole model" in note for note in found.notes)


# ---- native options (bridge.py, not this review's file: proposed fix in the report) -----


@pytest.mark.parametrize("solver, name", [("highs", "time_limit"), ("scip", "limits/time")])
def test_a_time_limit_given_twice_under_two_names_is_refused(solver: str, name: str,
                                                              tmp_path) -> None:
    with pytest.raises(InputError, match=f"'{name}'=100.0 both set a time limit"):
        solve(production_lp(), solver=solver, time_limit=0.3, options={name: 100.0})
    from coplug.plugins import solve_file

    path = tmp_path / "lp.mps"
    production_lp().write(str(path))
    with pytest.raises(InputError, match="both set a time limit"):
        solve_file(path, solver=solver, time_limit=0.3, options={name: 100.0})
    assert solve(production_lp(), solver=solver, options={name: 100.0}).status.value == "optimal"


@pytest.mark.filterwarnings("ignore:warm start not used")
def test_legacy_per_call_arguments_do_not_stay_for_the_next_call() -> None:
    solver = pyo.SolverFactory("coplug_scip")
    solver.options["limits/nodes"] = 1000  # set on the solver: stays
    solver.solve(production_lp(), timelimit=7, options={"limits/gap": 0.5}, warmstart=True)
    assert solver.config.time_limit is None and not solver.config.warmstart
    assert solver.options.value() == {"limits/nodes": 1000}
    pyo.assert_optimal_termination(solver.solve(production_lp()))


def test_a_model_scips_bound_removal_looped_on_is_answered() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6))
    for var, domain, bounds in zip(m.x.values(), (
            pyo.PositiveIntegers, pyo.NonNegativeReals, pyo.Integers, pyo.Binary, pyo.Integers,
            pyo.NonNegativeReals), ((1, 3), (0, None), (-1, 0), (1, 1), (None, None), (0, 3)),
            strict=True):
        var.domain, var.bounds = domain, bounds
    x = m.x
    m.c2 = pyo.Constraint(expr=x[0] - 2 * x[1] + 2 * x[2] + 3 * x[3] - x[4] + 3 * x[5] == 4.5)
    m.c3 = pyo.Constraint(expr=-3 * x[0] + 2 * x[1] + 3 * x[2] + 3 * x[3] + x[4] + 3 * x[5]
                          == -4)
    m.c6 = pyo.Constraint(expr=x[0] + x[1] - x[2] + 2 * x[4] - 2 * x[5] == -4)
    found = explain_infeasible(m)  # SCIP 10's iis/removebounds ran for ever here
    _assert_irreducible_by_scipy(found)


def test_a_check_solve_highs_cannot_decide_goes_to_scip(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    import coplug.plugins.iis as iis

    monkeypatch.setattr(iis, "_CHECK_SECONDS", 1.0)
    m = free_integer_system()
    found = explain_infeasible(m)  # HiGHS ran for ever on one of the deletion filter's solves
    _assert_irreducible_by_scipy(found)
