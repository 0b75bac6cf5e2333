"""`solve(model, solver="lap")`: assignment-structured Pyomo models solved by JV match SCIP;
other models are refused with a reason; infeasible patterns come back as a status."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.assignment import assignment_model, generate
from coplug.formulations.knapsack import knapsack_mip, random_knapsack
from coplug.plugins import InputError, Status, UnsupportedModelError, solve


def _one_per(model: pyo.ConcreteModel, pairs: list, n: int) -> None:
    """Row constraints `out` and column constraints `inn` over the allowed pairs."""
    rows = {i: [p for p in pairs if p[0] == i] for i in range(n)}
    cols = {j: [p for p in pairs if p[1] == j] for j in range(n)}
    model.out = pyo.Constraint(range(n), rule=lambda m, i: sum(m.x[p] for p in rows[i]) == 1)
    model.inn = pyo.Constraint(range(n), rule=lambda m, j: sum(m.x[p] for p in cols[j]) == 1)


def _assignment_of(model: pyo.ConcreteModel) -> list[tuple[int, int]]:
    return sorted(k for k in model.x if model.x[k].value > 0.5)


@pytest.mark.parametrize(
    ("shape", "maximize", "seed"),
    [((6, 6), False, 0), ((6, 6), True, 1), ((4, 7), False, 2), ((5, 8), True, 3)],
)
def test_lap_matches_scip(shape: tuple[int, int], maximize: bool, seed: int) -> None:
    cost = np.random.default_rng(seed).integers(-9, 10, size=shape).astype(float)
    model = assignment_model(cost, maximize=maximize)
    lap = solve(model, solver="lap")
    pairs = _assignment_of(model)
    scip = solve(model, solver="scip")
    assert lap.status is Status.OPTIMAL and lap.has_solution
    assert 0 < lap.extra["lap_s"] <= lap.time
    assert lap.objective == pytest.approx(scip.objective, abs=1e-9)
    assert len(pairs) == shape[0] and len({j for _, j in pairs}) == shape[0]
    assert sum(cost[i, j] for i, j in pairs) == pytest.approx(lap.objective)


def test_sparse_continuous_model_with_offset_matches_highs() -> None:
    n = 6
    rng = np.random.default_rng(5)
    pairs = [(i, j) for i in range(n) for j in range(n) if (i + 2 * j) % 4 != 1]
    model = pyo.ConcreteModel()
    model.x = pyo.Var(pairs, bounds=(0, None))
    _one_per(model, pairs, n)
    model.obj = pyo.Objective(expr=sum(float(rng.integers(1, 20)) * model.x[p] for p in pairs) + 7)
    lap = solve(model, solver="lap")
    assert lap.extra["pairs"] == len(pairs)
    assert lap.objective == pytest.approx(solve(model, solver="highs").objective)


@pytest.mark.usefixtures("predict_any_size")
@pytest.mark.parametrize(("name", "n", "used"), [("low_rank", 100, True), ("geometric", 40, False)])
def test_warm_option_uses_rowdualnet_where_it_helps_and_stays_exact(name: str, n: int,
                                                                   used: bool) -> None:
    """Low-rank costs leave most rows free after column reduction (at 100 rows cold JV drops
    it; at 40 it keeps it, and duals bounding the optimum below it are set aside), tracking
    costs few."""
    model = assignment_model(generate(name, n, seed=8))
    warm = solve(model, solver="lap", warm=True)
    assert warm.extra["warm"] is used
    assert warm.extra["prediction"] == "used" if used else warm.extra["prediction"].startswith(
        "skipped")
    assert warm.objective == pytest.approx(solve(model, solver="scip").objective, rel=1e-9)


def test_infeasible_pattern_is_a_status() -> None:
    model = pyo.ConcreteModel()
    pairs = [(0, 0), (1, 0), (2, 1), (2, 2)]
    model.x = pyo.Var(pairs, domain=pyo.Binary)
    _one_per(model, pairs, 3)
    model.o = pyo.Objective(expr=sum(model.x[p] for p in pairs))
    result = solve(model, solver="lap")
    assert result.status is Status.INFEASIBLE and not result.has_solution
    assert solve(model, solver="scip").status is Status.INFEASIBLE


def _tsp_mtz(n: int) -> pyo.ConcreteModel:
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(arcs, domain=pyo.Binary)
    m.u = pyo.Var(range(1, n), bounds=(1, n - 1))
    _one_per(m, arcs, n)
    m.mtz = pyo.Constraint(
        [(i, j) for i, j in arcs if i and j],
        rule=lambda m, i, j: m.u[i] - m.u[j] + (n - 1) * m.x[i, j] <= n - 2,
    )
    m.obj = pyo.Objective(expr=sum((i + 2 * j) % 5 * m.x[i, j] for i, j in arcs))
    return m


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (knapsack_mip(random_knapsack(5, seed=0)), "coefficients"),
        (_tsp_mtz(5), "coefficients"),
    ],
)
def test_non_assignment_models_are_refused(model, message: str) -> None:
    with pytest.raises(UnsupportedModelError, match=message):
        solve(model, solver="lap")


def test_lap_takes_no_plugins_or_unknown_options() -> None:
    model = assignment_model(np.eye(3))
    with pytest.raises(InputError, match="no plugins"):
        solve(model, solver="lap", plugins=[object()])
    with pytest.raises(InputError, match="unknown lap option"):
        solve(model, solver="lap", gap=0.1)


def test_tsp_assignment_relaxation_goes_through_lap() -> None:
    tsp = pytest.importorskip("coplug.formulations.tsp")
    p = np.random.default_rng(4).random((9, 2))
    dist = np.round(100 * np.linalg.norm(p[:, None] - p[None], axis=2))
    model = tsp.tsp_mip(dist, subtour="none")
    lap = solve(model, solver="lap")
    assert lap.extra["pairs"] == 9 * 8
    assert lap.objective == pytest.approx(solve(model, solver="scip").objective)


def test_time_limit_is_a_status_without_solution() -> None:
    model = assignment_model(generate("uniform", 300, seed=0))
    result = solve(model, solver="lap", time_limit=1e-9)
    assert result.status is Status.TIME_LIMIT and not result.has_solution
    assert solve(model, solver="lap", time_limit=60).status is Status.OPTIMAL


@pytest.mark.parametrize("maximize", [False, True])
def test_two_variables_for_one_pair_keep_the_better_and_match_highs(maximize: bool) -> None:
    """A second variable for pair (0, 0) and a missing pair: exact, and the loaded x
    satisfies every constraint."""
    pairs = [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (2, 0)]
    model = pyo.ConcreteModel()
    model.x = pyo.Var(pairs, domain=pyo.Binary)
    model.y = pyo.Var(domain=pyo.Binary)
    model.out = pyo.Constraint(range(3), rule=lambda m, i: sum(
        m.x[p] for p in pairs if p[0] == i) + (m.y if i == 0 else 0) == 1)
    model.inn = pyo.Constraint(range(3), rule=lambda m, j: sum(
        m.x[p] for p in pairs if p[1] == j) + (m.y if j == 0 else 0) == 1)
    cost = {p: float(k + 1) for k, p in enumerate(pairs)}
    model.obj = pyo.Objective(expr=sum(cost[p] * model.x[p] for p in pairs) + 10 * model.y,
                              sense=pyo.maximize if maximize else pyo.minimize)
    lap = solve(model, solver="lap")
    assert lap.extra["pairs"] == len(pairs)
    assert pyo.value(model.obj) == pytest.approx(lap.objective)
    for con in model.component_data_objects(pyo.Constraint):
        assert pyo.value(con.body) == pytest.approx(1.0)
    assert lap.objective == pytest.approx(solve(model, solver="highs").objective)


def test_rectangular_model_with_column_family_declared_first_is_solved() -> None:
    cost = np.array([[1.0, 5.0, 2.0], [2.0, 1.0, 4.0]])
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(2), range(3), domain=pyo.Binary)
    model.inn = pyo.Constraint(range(3), rule=lambda m, j: sum(m.x[i, j] for i in range(2)) <= 1)
    model.out = pyo.Constraint(range(2), rule=lambda m, i: sum(m.x[i, j] for j in range(3)) == 1)
    model.obj = pyo.Objective(expr=sum(cost[i, j] * model.x[i, j]
                                       for i in range(2) for j in range(3)))
    lap = solve(model, solver="lap")
    assert lap.status is Status.OPTIMAL
    assert lap.objective == pytest.approx(solve(model, solver="highs").objective)


def test_a_covering_row_fixed_variables_already_meet_is_named() -> None:
    from coplug.plugins import UnsupportedModelError

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), range(3), bounds=(0, 1))
    m.r = pyo.Constraint(range(3), rule=lambda mm, i: sum(mm.x[i, j] for j in range(3)) >= 1)
    m.c = pyo.Constraint(range(3), rule=lambda mm, j: sum(mm.x[i, j] for i in range(3)) == 1)
    m.o = pyo.Objective(expr=sum(m.x.values()))
    m.x[0, 0].fix(1)
    with pytest.raises(UnsupportedModelError, match=r"'r\[0\]' is already met by its fixed "
                                                    r"variables .*x\[0,0\]=1"):
        solve(m, solver="lap")
    assert solve(m, solver="highs").objective == pytest.approx(3)  # what the message advises


def test_an_infeasible_pattern_is_named_by_a_row_constraint_left_out() -> None:
    from coplug.plugins import k_best

    pairs = [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)]  # rows 0 and 1 both need column 0
    model = pyo.ConcreteModel()
    model.x = pyo.Var(pairs, domain=pyo.Binary)
    model.x_row = pyo.Constraint(range(3), rule=lambda b, i: sum(
        b.x[p] for p in pairs if p[0] == i) == 1)
    model.x_col = pyo.Constraint(range(3), rule=lambda b, j: sum(
        b.x[p] for p in pairs if p[1] == j) == 1)
    model.obj = pyo.Objective(expr=sum(model.x[p] for p in pairs))
    assert solve(model, solver="scip").status.value == "infeasible"  # SCIP agrees
    for result in (solve(model, solver="lap"), k_best(model, k=3, solver="lap").result):
        assert result.status.value == "infeasible"
        reason = result.extra["reason"]
        assert "at most 2 of the 3 row constraints can be met at once" in reason
        assert "constraint 'x_row[0]'" in reason or "constraint 'x_row[1]'" in reason
