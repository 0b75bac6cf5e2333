"""Lazy constraints with HiGHS (`coplug.plugins.lazy_rounds`): solved again with the
violated rows added, checked against the model with its rows given up front."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from test_lazy import _random_case, solved_with_rows_up_front

from coplug.formulations.facility import (
    benders_models,
    extensive_model,
    random_facility_instance,
)
from coplug.formulations.tsp import subtour_separator, tsp_mip
from coplug.plugins import (
    InputError,
    LazyConstraints,
    OnSolution,
    SolverError,
    Status,
    lazy_rounds,
    solve,
)
from coplug.plugins.benders import BendersCuts
from coplug.plugins.results import Result


def _names(model: pyo.Block) -> list[str]:
    return sorted(c.name for c in model.component_objects(descend_into=True))


def test_tsp_subtours_in_rounds_give_the_mtz_optimum_and_leave_the_model_as_it_was():
    points = np.random.default_rng(2).random((12, 2))
    d = np.linalg.norm(points[:, None] - points[None], axis=2)
    m = tsp_mip(d, subtour="none")
    before = _names(m)
    lazy = LazyConstraints(subtour_separator(m))
    result = solve(m, solver="highs", plugins=[lazy])
    assert result.status is Status.OPTIMAL and result.extra["lazy_rounds"] >= 2
    assert result.objective == pytest.approx(solve(tsp_mip(d), solver="highs").objective)
    assert _names(m) == before and len(lazy.cuts) == lazy.statistics()["cuts_added"] > 0
    assert result.plugin_stats["lazy"]["cuts_added"] == len(lazy.cuts)


@pytest.mark.parametrize("seed", range(12))
def test_random_lazy_rows_in_rounds_give_the_optimum_of_the_full_model(seed):
    m, hidden = _random_case(seed)
    result = solve(m, solver="highs",
                   plugins=[LazyConstraints(lambda _s: [make() for make in hidden])])
    truth = solved_with_rows_up_front(m, hidden)
    assert result.status is truth.status
    if truth.status is Status.OPTIMAL:
        assert result.objective == pytest.approx(truth.objective, abs=1e-6)


def test_benders_with_a_highs_master_is_the_classic_loop():
    inst = random_facility_instance(4, 8, 3, seed=3)
    master, subs = benders_models(inst)
    result = solve(master, solver="highs", plugins=[LazyConstraints(BendersCuts(subs))])
    truth = solve(extensive_model(inst), solver="highs")
    assert result.objective == pytest.approx(truth.objective, rel=1e-6)


def test_a_stopped_round_whose_point_violates_a_lazy_row_reports_no_solution():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.x.value = 8.0  # what a round stopped by its time limit left loaded
    lazy = LazyConstraints(lambda _s: [m.x <= 5])

    def stopped(_left):
        return Result(Status.TIME_LIMIT, "highs", objective=8.0, bound=10.0, has_solution=True)

    with pytest.warns(UserWarning, match="violates 1 lazy rows; no solution"):
        result = lazy_rounds.solve_in_rounds(m, [lazy], stopped, time_limit=1.0)
    assert not result.has_solution and result.objective is None


def test_a_separate_that_never_stops_adding_rows_is_named(monkeypatch):
    monkeypatch.setattr(lazy_rounds, "MAX_ROUNDS", 3)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    lazy = LazyConstraints(lambda s: [m.x <= s[m.x] - 1])  # always one more
    with pytest.raises(SolverError, match="after 3 rounds"):
        solve(m, solver="highs", plugins=[lazy])


def test_other_plugins_still_need_scip():
    m, _ = _random_case(0)
    with pytest.raises(InputError, match="solved in rounds, with no other plugins"):
        solve(m, solver="highs", plugins=[LazyConstraints(lambda _s: []),
                                          OnSolution(lambda s, o: None)])


def test_rounds_without_a_solution_leave_the_values_as_they_were():
    # a round stopped (here after HiGHS's first improving point) at a point that breaks a
    # lazy row: no solution is reported, and that point is not left in the variables
    from coplug.formulations.mip_families import mknapsack

    m = mknapsack(30, seed=1)
    xs = list(m.component_data_objects(pyo.Var))
    for var in xs:
        var.set_value(0)

    def at_most_two(solution):
        return [sum(xs[:10]) <= 2] if sum(solution[v] for v in xs[:10]) > 2.5 else []

    with pytest.warns(UserWarning, match="no solution is reported"):
        result = solve(m, solver="highs", plugins=[LazyConstraints(at_most_two)],
                       mip_max_improving_sols=1)
    assert not result.has_solution
    assert [var.value for var in xs] == [0] * len(xs)


def test_the_warm_start_report_is_the_callers_in_every_round():
    """Later rounds started from the last round's point (which breaks a lazy row) and
    reported 4 values given where the caller gave none."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.o = pyo.Objective(expr=5 * m.x[0] + 4 * m.x[1] + 2 * m.x[2] + m.x[3], sense=pyo.maximize)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 3)

    def separate(s):
        return [m.x[0] + m.x[1] <= 1] if s[m.x[0]] + s[m.x[1]] > 1.5 else []

    m.x[2].value = 1
    result = solve(m, solver="highs", warmstart=True, plugins=[LazyConstraints(separate)])
    assert result.extra["lazy_rounds"] == 2 and result.objective == pytest.approx(8.0)
    assert result.extra["warmstart"]["values"] == 1
