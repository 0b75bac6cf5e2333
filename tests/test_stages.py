"""Multi-objective stages on a model built once (`coplug.plugins.stages`): the same fronts
and lexicographic optima as a fresh build per stage, one build per run, nothing carried
from one stage to the next, and the cases that must take the plain path."""

from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

import coplug.plugins.bridge as bridge
import coplug.plugins.multiobjective as mo
import coplug.plugins.stages as stages
from coplug.plugins import (
    InputError,
    LazyConstraints,
    Status,
    UnsupportedModelError,
    infeasibilities,
)
from coplug.plugins.multiobjective import lexicographic, pareto_front
from coplug.plugins.stages import open_stages

SOLVERS = ["scip", "highs"]


def _model(seed: int) -> pyo.ConcreteModel:
    """Six integers in [0, 3] and two continuous variables under random rows; a cost with
    a constant and a mutable Param (minimized) and a value with a fixed variable
    (maximized), both inactive."""
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Integers, bounds=(0, 3))
    m.y = pyo.Var(range(2), bounds=(0, 2))
    m.f = pyo.Var(initialize=2.0)
    m.f.fix()
    m.p = pyo.Param(initialize=float(rng.integers(1, 4)), mutable=True)
    w = rng.integers(1, 6, size=(3, 6))
    m.rows = pyo.Constraint(range(3), rule=lambda m, i: sum(
        int(w[i, j]) * m.x[j] for j in range(6)) + m.y[i % 2] <= int(w[i].sum()))
    m.least = pyo.Constraint(expr=sum(m.x.values()) + m.y[0] >= 3)
    cost, value = rng.integers(0, 7, 6), rng.integers(0, 7, 6)
    m.cost = pyo.Objective(expr=sum(int(cost[j]) * m.x[j] for j in range(6))
                           + m.p * m.x[0] + 2 * m.y[1] + 5)
    m.value = pyo.Objective(expr=sum(int(value[j]) * m.x[j] for j in range(6))
                            + m.f * m.x[5] + m.y[0], sense=pyo.maximize)
    m.cost.deactivate()
    m.value.deactivate()
    return m


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stage through solve(), a fresh build each."""
    monkeypatch.setattr(mo, "open_stages", lambda *args: None)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(3))
def test_a_front_built_once_is_the_front_built_per_stage(solver, seed, monkeypatch):
    m = _model(seed)
    staged = pareto_front(m, m.cost, m.value, solver=solver, step=1.0)
    loaded = [pyo.value(v) for v in m.x.values()]
    with monkeypatch.context() as patch:
        _plain(patch)
        plain = pareto_front(m, m.cost, m.value, solver=solver, step=1.0)
    assert staged.complete and plain.complete and len(staged.points) >= 2
    got = np.array([p.values for p in staged.points])
    assert got.shape == (len(plain.points), 2)
    assert np.allclose(got, [p.values for p in plain.points], atol=1e-6)
    for point in staged.points:  # each stored point reaches the values it claims
        point.solution.load()
        assert (pyo.value(m.cost.expr), pyo.value(m.value.expr)) == pytest.approx(
            point.values, abs=1e-6)
        assert infeasibilities(m) == {}
    staged.points[-1].solution.load()
    assert [pyo.value(v) for v in m.x.values()] == pytest.approx(loaded)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(3))
def test_lexicographic_built_once_matches_per_stage(solver, seed, monkeypatch):
    m = _model(seed)
    staged = lexicographic(m, [m.value, m.cost], solver=solver)
    with monkeypatch.context() as patch:
        _plain(patch)
        plain = lexicographic(m, [m.value, m.cost], solver=solver)
    assert staged.status is Status.OPTIMAL and plain.status is Status.OPTIMAL
    assert staged.values == pytest.approx(plain.values, abs=1e-6)
    assert [r.objective for r in staged.results] == pytest.approx(
        [r.objective for r in plain.results], abs=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_front_builds_the_model_once(solver, monkeypatch):
    builds = []
    real = bridge.build_instance

    def counted(opt, model, *args, **kwargs):
        builds.append(model)
        return real(opt, model, *args, **kwargs)

    for module in (bridge, __import__("coplug.plugins.highs_backend", fromlist=["x"])):
        monkeypatch.setattr(module, "build_instance", counted)
    m = _model(0)
    front = pareto_front(m, m.cost, m.value, solver=solver, step=1.0)
    assert len(front.points) >= 2 and len(builds) == 1


def _stager(m: pyo.ConcreteModel, solver: str, **params):
    """An open StagedSolver over (cost, value) with `cost` active, or None."""
    chain = [m.cost, m.value]

    def activate(objective):
        for o in chain:
            o.deactivate()
        objective.activate()

    return open_stages(m, solver, chain, activate, params)


@pytest.mark.parametrize("solver", SOLVERS)
def test_extra_rows_are_replaced_and_limits_do_not_carry_over(solver):
    m = _model(1)
    stager = _stager(m, solver)
    assert stager is not None
    m.extra = pyo.ConstraintList()
    m.extra.add(m.x[0] >= 2)
    first = stager.solve(m.cost, list(m.extra.values()), time_limit=30.0, warmstart=False)
    assert first.status is Status.OPTIMAL and pyo.value(m.x[0]) >= 2 - 1e-6
    m.extra.clear()
    m.extra.add(m.x[0] <= 0)
    with warnings.catch_warnings():  # the last point breaks the new row: the start is refused
        warnings.simplefilter("ignore")
        second = stager.solve(m.cost, list(m.extra.values()), time_limit=None,
                              warmstart=True)
    assert second.status is Status.OPTIMAL and pyo.value(m.x[0]) <= 1e-6
    fresh = bridge.solve(m, solver=solver)  # the same model, rows and objective, rebuilt
    assert second.objective == pytest.approx(fresh.objective, abs=1e-6)
    backend = stager._backend
    backend.reset()  # what the next stage starts from: no point of the last one
    if solver == "scip":
        assert backend.built.scip.getNSols() == 0
    else:
        assert not backend.highs.getSolution().value_valid
    if solver == "scip":
        assert backend.built.scip.getParam("limits/time") >= 1e20
        assert len(backend.built.scip.getConss(transformed=False)) == len(list(
            m.component_data_objects(pyo.Constraint, active=True)))
    else:
        assert backend.highs.getOptionValue("time_limit")[1] == float("inf")
        assert backend.highs.getNumRow() == backend.base_rows + 1


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_plain_path_where_a_build_once_would_differ(solver):
    m = _model(2)
    assert _stager(m, "lap") is None
    assert _stager(m, solver, plugins=[LazyConstraints(lambda view: [])]) is None
    assert _stager(m, solver, mip_duals="fixed") is None
    for wrong in (None, 0, ""):  # solve() says plugins must be a list
        assert _stager(m, solver, plugins=wrong) is None
        with pytest.raises(InputError, match="plugins must be a list"):
            lexicographic(m, [m.cost, m.value], solver=solver, plugins=wrong)
    assert _stager(m, solver, plugins=[]) is not None
    assert _stager(m, solver, time_limit=3) is None  # solve() names the clash itself
    m.z = pyo.Var(bounds=(0, 1))  # in no row: the build has no column for it
    m.w = pyo.Param(initialize=0.0, mutable=True)
    m.value.expr = m.value.expr + m.w * m.z  # even at weight 0: the value reads z
    assert _stager(m, solver) is None
    front = pareto_front(m, m.cost, m.value, solver=solver, step=1.0)
    assert front.complete and m.z.value is not None
    m.value.expr = m.value.expr + m.x[1] * m.x[2]
    assert _stager(m, solver) is None


def test_a_model_without_free_variables_takes_the_plain_highs_path():
    m = _model(0)
    for v in m.component_data_objects(pyo.Var):
        v.fix(0)
    m.least.deactivate()
    assert _stager(m, "highs") is None
    assert lexicographic(m, [m.cost, m.value], solver="highs").values == [5.0, 0.0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_bad_data_in_a_later_objective_is_named_before_any_stage(solver, monkeypatch):
    import coplug.plugins.highs_backend as hb

    ran = []
    for module, name in ((bridge, "run_scip"), (stages, "run_scip"), (hb, "run_highs")):
        monkeypatch.setattr(module, name, lambda *args, **kwargs: ran.append(args))
    m = _model(0)
    m.p = float("nan")
    with pytest.raises(InputError, match="cost"):
        pareto_front(m, m.value, m.cost, solver=solver, step=1.0)
    assert ran == []


def test_warnings_name_the_callers_line():
    m = _model(0)
    m.ignored = pyo.Suffix(direction=pyo.Suffix.IMPORT)  # solve fills no such Suffix
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lexicographic(m, [m.cost, m.value])
    mine = [w for w in caught if "ignored" in str(w.message)]
    assert mine and all(w.filename == __file__ for w in mine)
    m.value.expr = 1e-9 * m.value.expr  # below the solvers' tolerances: said at the caller
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pareto_front(m, m.cost, m.value, step=1e-9, max_points=1)
    tiny = [w for w in caught if "largest coefficient" in str(w.message)]
    assert tiny and all(w.filename == __file__ for w in tiny)


def test_a_nonlinear_row_is_named_for_highs_as_solve_names_it():
    m = _model(0)
    m.bilinear = pyo.Constraint(expr=m.x[0] * m.y[0] <= 3)
    with pytest.raises(UnsupportedModelError, match="nonlinear constraint 'bilinear'"):
        lexicographic(m, [m.cost, m.value], solver="highs")


@pytest.mark.parametrize("staged", [True, False])
def test_a_gap_given_in_options_is_taken_for_highs(staged, monkeypatch):
    if not staged:
        _plain(monkeypatch)
    m = _model(0)
    lex = lexicographic(m, [m.cost, m.value], solver="highs", options={"mip_rel_gap": 0.0})
    assert lex.status is Status.OPTIMAL
