"""`k_best`: the k best assignments, checked against brute force over every assignment of
the binaries (each completed by an LP solve) and against Pyomo's own enumeration."""

from __future__ import annotations

import contextlib
import io
import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import build_family
from coplug.plugins import InputError, Status, UnsupportedModelError, infeasibilities, solve
from coplug.plugins.best_solutions import k_best


def _mixed(seed: int, sense: int) -> pyo.ConcreteModel:
    """Six binaries and two continuous variables, with <=, >= and == rows (a random MIP
    whose best continuous part depends on the binaries)."""
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(6), domain=pyo.Binary)
    m.y = pyo.Var(range(2), bounds=(0, 3))
    w = rng.integers(1, 6, size=(2, 6))
    m.cap = pyo.Constraint(expr=sum(int(w[0, j]) * m.b[j] for j in range(6)) + m.y[0] <= 10)
    m.link = pyo.Constraint(expr=m.y[1] <= sum(m.b[j] for j in range(3)))
    m.least = pyo.Constraint(expr=sum(m.b.values()) >= 2)
    m.tie = pyo.Constraint(expr=m.y[0] - 0.5 * m.y[1] == 0.25 * m.b[5])
    c = rng.normal(size=8).round(2)
    variables = list(m.b.values()) + list(m.y.values())
    m.o = pyo.Objective(expr=sum(float(ci) * v for ci, v in zip(c, variables, strict=True)) + 7,
                        sense=sense)
    return m


def _brute_force(build, k: int) -> list[float]:
    """The k best objectives over every assignment of `m.b`, each completed by HiGHS."""
    values = []
    for point in itertools.product((0, 1), repeat=6):
        m = build()
        for j, v in enumerate(point):
            m.b[j].fix(v)
        result = solve(m, solver="highs")
        if result.status is Status.OPTIMAL:
            values.append(result.objective)
    maximize = build().o.sense == pyo.maximize
    return sorted(values, reverse=maximize)[:k]


def _check_solutions(m: pyo.ConcreteModel, found) -> None:
    """Each solution feasible, its objective true, binary assignments distinct, the first
    one loaded."""
    binaries = [v for v in m.component_data_objects(pyo.Var) if v.is_binary()]
    objective = next(m.component_data_objects(pyo.Objective, active=True))
    first = [found.solutions[0][v] for v in binaries]
    assert first == [v.value for v in binaries]
    assignments = set()
    for solution in found.solutions:
        solution.load()
        assert infeasibilities(m) == {}
        assert solution.objective == pytest.approx(pyo.value(objective), abs=1e-6)
        assignments.add(tuple(round(v.value) for v in binaries))
    assert len(assignments) == len(found.solutions)
    found.solutions[0].load()


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
@pytest.mark.parametrize("seed", range(3))
def test_the_k_best_match_brute_force_over_every_assignment(solver, sense, seed):
    k = 5
    truth = _brute_force(lambda: _mixed(seed, sense), k)
    m = _mixed(seed, sense)
    found = k_best(m, k, solver=solver)
    assert found.proven
    assert [s.objective for s in found.solutions] == pytest.approx(truth, abs=1e-6)
    _check_solutions(m, found)


@pytest.mark.parametrize("family,size", [("setcover", 40), ("indset", 25),
                                         ("mknapsack", 14), ("cauction", 20)])
def test_the_k_best_match_pyomos_enumeration(family, size):
    from pyomo.contrib.alternative_solutions import enumerate_binary_solutions

    k = 6
    with contextlib.redirect_stdout(io.StringIO()):
        truth = enumerate_binary_solutions(build_family(family, size, 3), num_solutions=k,
                                           solver="coplug_highs")
    m = build_family(family, size, 3)
    found = k_best(m, k)
    maximize = next(m.component_data_objects(pyo.Objective)).sense == pyo.maximize
    expected = sorted((s.objective_value for s in truth), reverse=maximize)
    assert found.proven and found.result.status is Status.INFEASIBLE
    assert [s.objective for s in found.solutions] == pytest.approx(expected, abs=1e-6)
    _check_solutions(m, found)


def test_ties_at_the_kth_value_are_not_all_enumerated():
    # every pair of six equal items has the same value: any 3 of the 15 are 3 best, and the
    # strict cutoff (values are whole numbers) stops the search at 3
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Binary)
    m.two = pyo.Constraint(expr=sum(m.x.values()) == 2)
    m.o = pyo.Objective(expr=4 * sum(m.x.values()) + 1, sense=pyo.maximize)
    found = k_best(m, 3)
    assert found.proven and [s.objective for s in found.solutions] == [9.0, 9.0, 9.0]
    assert found.result.plugin_stats["k_best"]["cuts_added"] <= 4
    _check_solutions(m, found)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_fewer_assignments_than_k_gives_them_all(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 2)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 4 * m.x[2])
    found = k_best(m, 10, solver=solver)
    assert found.proven and [s.objective for s in found.solutions] == [3.0, 5.0, 6.0, 7.0]


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_infeasible_model_has_no_solutions_proven(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 4)
    m.o = pyo.Objective(expr=sum(m.x.values()))
    found = k_best(m, 3, solver=solver)
    assert found.proven and found.solutions == []


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_feasibility_problem_stops_at_k_points(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(8), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 3)
    found = k_best(m, 4, solver=solver)
    assert found.proven and len(found.solutions) == 4
    points = {tuple(s[m.x[j]] for j in range(8)) for s in found.solutions}
    assert len(points) == 4 and all(sum(p) >= 3 for p in points)


def test_a_time_limit_is_not_a_proof():
    m = build_family("cauction", 60, 0)
    found = k_best(m, 50, time_limit=0.5)
    assert not found.proven
    assert found.result.status is Status.TIME_LIMIT
    if found.solutions:
        _check_solutions(m, found)


def _with(make):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.o = pyo.Objective(expr=sum(m.x.values()))
    make(m)
    return m


@pytest.mark.parametrize("make,error,fragment", [
    (lambda m: setattr(m, "z", pyo.Var(domain=pyo.Integers, bounds=(0, 5)))
     or setattr(m, "cz", pyo.Constraint(expr=m.z + m.x[0] >= 1)),
     UnsupportedModelError, "'z' is a general integer"),
    (lambda m: m.o.set_value(m.x[0] * m.x[1] + m.x[2]), UnsupportedModelError,
     "linear objective"),
    (lambda m: setattr(m, "q", pyo.Constraint(expr=m.x[0] * m.x[1] <= 0.5)),
     UnsupportedModelError, "'q' is not"),
])
def test_models_it_cannot_search_are_refused_by_name(make, error, fragment):
    with pytest.raises(error, match=fragment):
        k_best(_with(make), 3)


def test_an_lp_and_a_bad_k_are_refused():
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.y)
    with pytest.raises(UnsupportedModelError, match="binary"):
        k_best(m, 3)
    for k in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="k must be"):
            k_best(_with(lambda m: None), k)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_unbounded_model_is_refused(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.y >= m.x)
    m.o = pyo.Objective(expr=m.y + m.x, sense=pyo.maximize)
    with pytest.raises(InputError, match="unbounded"):
        k_best(m, 3, solver=solver)


def test_a_highs_time_limit_is_not_a_proof_and_raises_no_misleading_warning():
    import warnings

    m = build_family("cauction", 60, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = k_best(m, 50, solver="highs", time_limit=0.5)
    assert not found.proven
    for solution in found.solutions:
        solution.load()
        assert infeasibilities(m) == {}


def test_k_may_be_a_numpy_integer() -> None:
    model = build_family("mknapsack", 8, seed=2)
    assert len(k_best(model, k=np.int64(3)).solutions) == 3


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_model_whose_binaries_are_all_fixed_has_one_assignment(solver: str) -> None:
    # it was refused as if it had no binaries, while solver="lap" answered it
    model = pyo.ConcreteModel()
    model.x = pyo.Var([0, 1], domain=pyo.Binary)
    model.y = pyo.Var(bounds=(0, 5))
    model.c = pyo.Constraint(expr=model.x[0] + model.x[1] + model.y >= 1.5)
    model.o = pyo.Objective(expr=model.x[0] + 2 * model.x[1] + 0.5 * model.y)
    model.x[0].fix(1)
    model.x[1].fix(0)
    best = k_best(model, 5, solver=solver)
    assert best.proven and len(best.solutions) == 1
    assert best.solutions[0].objective == pytest.approx(solve(model).objective) == 1.25
    assert best.solutions[0][model.y] == pytest.approx(0.5)
    model.c.set_value(model.x[0] + model.x[1] + model.y >= 7)  # y <= 5: infeasible
    empty = k_best(model, 5, solver=solver)
    assert empty.proven and empty.solutions == []
    model.x[0].unfix()
    model.x[1].unfix()
    model.x[0].domain = pyo.Reals
    model.x[1].domain = pyo.Reals
    with pytest.raises(UnsupportedModelError, match="k_best needs binary variables"):
        k_best(model, 5, solver=solver)


def test_fixed_assignment_models_rank_alike_by_scip_and_lap() -> None:
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(2), range(2), domain=pyo.Binary)
    model.r = pyo.Constraint(range(2), rule=lambda b, i: b.x[i, 0] + b.x[i, 1] == 1)
    model.c = pyo.Constraint(range(2), rule=lambda b, j: b.x[0, j] + b.x[1, j] == 1)
    model.o = pyo.Objective(expr=3 * model.x[0, 0] + model.x[0, 1] + model.x[1, 0])
    for var, value in ((model.x[0, 0], 1), (model.x[0, 1], 0), (model.x[1, 0], 0),
                       (model.x[1, 1], 1)):
        var.fix(value)
    by_scip = k_best(model, 3)
    by_lap = k_best(model, 3, solver="lap")
    assert [s.objective for s in by_scip.solutions] == [s.objective for s in by_lap.solutions]
    assert by_scip.proven and by_lap.proven and len(by_scip.solutions) == 1
