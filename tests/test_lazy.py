"""Lazy constraints (`coplug.plugins.lazy`): every answer is checked against the same model
with its rows given up front, solved by HiGHS."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.tsp import solve_tsp_lazy, subtour_separator, tour_length, tsp_mip
from coplug.plugins import InputError, Status, solve
from coplug.plugins.lazy import LazyConstraints, SolutionView, linear_row


def _distances(n: int, seed: int) -> np.ndarray:
    points = np.random.default_rng(seed).random((n, 2))
    return np.linalg.norm(points[:, None] - points[None], axis=2)


def _is_tour(tour: list[int], n: int) -> bool:
    return sorted(tour) == list(range(n))


@pytest.mark.parametrize("fractional", [False, True])
@pytest.mark.parametrize("n,seed", [(6, 0), (9, 1), (12, 2), (12, 3)])
def test_subtour_cuts_give_the_mtz_optimum(n, seed, fractional):
    d = _distances(n, seed)
    m = tsp_mip(d, subtour="none")
    lazy = LazyConstraints(subtour_separator(m), fractional=fractional)
    result = solve(m, plugins=[lazy])
    truth = solve(tsp_mip(d, subtour="mtz"), solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, abs=1e-6)
    succ = {i: j for (i, j) in m.A if m.x[i, j].value > 0.5}
    city, seen = 0, []
    for _ in range(n):
        seen.append(city)
        city = succ[city]
    assert city == 0 and _is_tour(seen, n)  # one cycle through every city
    assert lazy.statistics()["cuts_added"] == len(lazy.cuts) > 0


def test_solve_tsp_lazy_one_scip_solve_matches_highs_rounds():
    d = _distances(15, 7)
    tour_scip, tour_highs = solve_tsp_lazy(d), solve_tsp_lazy(d, solver="highs")
    assert _is_tour(tour_scip, 15) and _is_tour(tour_highs, 15)
    assert tour_length(d, tour_scip) == pytest.approx(tour_length(d, tour_highs), abs=1e-9)


def solved_with_rows_up_front(m: pyo.ConcreteModel, hidden: list) -> Any:
    """The truth: `m` with the hidden rows added as ordinary constraints, solved by HiGHS."""
    m.full = pyo.ConstraintList()
    for make in hidden:
        m.full.add(make())
    return solve(m, solver="highs")


def _random_case(seed: int):
    """A small mixed binary/integer/continuous model and hidden rows over its variables."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 10))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.k = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 3))
    c = rng.integers(-9, 10, n)
    m.obj = pyo.Objective(expr=sum(int(c[i]) * m.x[i] for i in range(n)) - 2 * m.k + m.y)
    w = rng.integers(1, 8, n)
    m.budget = pyo.Constraint(expr=sum(int(w[i]) * m.x[i] for i in range(n)) + m.k
                              <= int(w.sum()) // 2)
    hidden = []
    for _ in range(int(rng.integers(1, 6))):
        a = rng.integers(-3, 4, n)
        kind = rng.integers(0, 3)
        body = sum(int(a[i]) * m.x[i] for i in range(n)) + int(rng.integers(-1, 2)) * m.k
        rhs = int(rng.integers(-2, 4))
        if kind == 0:
            hidden.append(lambda body=body, rhs=rhs: body <= rhs)
        elif kind == 1:
            hidden.append(lambda body=body, rhs=rhs: body + m.y >= rhs)
        else:
            hidden.append(lambda body=body, rhs=rhs: pyo.inequality(rhs - 2, body, rhs + 1))
    return m, hidden


@pytest.mark.parametrize("seed", range(24))
def test_random_lazy_rows_give_the_optimum_of_the_full_model(seed):
    m, hidden = _random_case(seed)
    lazy = LazyConstraints(lambda _s: [make() for make in hidden], fractional=bool(seed % 2))
    result = solve(m, plugins=[lazy])
    truth = solved_with_rows_up_front(m, hidden)
    assert result.status is truth.status
    if truth.status is Status.OPTIMAL:
        assert result.objective == pytest.approx(truth.objective, abs=1e-6)
        assert lazy.statistics()["cuts_added"] <= len(hidden) * lazy.statistics()["calls"]


def _trap_dual_fixing():
    """Nothing but a lazy row keeps x at 0 from being optimal: dual fixing would fix it."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.obj = pyo.Objective(expr=m.x[0] + 2 * m.x[1])
    return m, [lambda: m.x[0] + m.x[1] >= 1]


def _trap_components():
    """Two independent blocks that only the lazy row links (SCIP would solve each alone)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.a = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
    m.b = pyo.Constraint(expr=m.x[2] + m.x[3] <= 1)
    m.obj = pyo.Objective(expr=-(3 * m.x[0] + 2 * m.x[1] + 3 * m.x[2] + 2 * m.x[3]))
    return m, [lambda: m.x[0] + m.x[2] <= 1]


def _trap_symmetric():
    """Interchangeable variables; the lazy row wants the last one (symmetry handling and
    dual reductions would keep only the first)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Binary)
    m.one = pyo.Constraint(expr=sum(m.x.values()) == 1)
    m.obj = pyo.Objective(expr=sum(m.x.values()))
    return m, [lambda: m.x[5] >= 1]


@pytest.mark.parametrize("trap", [_trap_dual_fixing, _trap_components, _trap_symmetric])
def test_scip_reductions_that_assume_all_rows_are_known_stay_off(trap):
    m, hidden = trap()
    result = solve(m, plugins=[LazyConstraints(lambda _s: [make() for make in hidden])])
    truth = solved_with_rows_up_front(m, hidden)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective)


def test_separate_sees_only_integral_solutions_that_meet_the_model_rows():
    m, hidden = _random_case(3)
    variables = [*m.x.values(), m.k, m.y]
    seen = []

    def separate(solution):
        seen.append([solution[v] for v in variables])
        return [make() for make in hidden]

    solve(m, plugins=[LazyConstraints(separate)])
    assert seen
    for values in seen:
        assert all(abs(v - round(v)) <= 1e-6 for v in values[:-1])
        assert -1e-6 <= values[-1] <= 3 + 1e-6
        for var, value in zip(variables, values, strict=True):
            var.set_value(value, skip_validation=True)
        assert pyo.value(m.budget.body) <= pyo.value(m.budget.upper) + 1e-6


def test_an_error_in_separate_comes_out_of_solve(capfd):
    m, _ = _trap_dual_fixing()

    def separate(_solution):
        raise ValueError("my separation bug")

    with pytest.raises(ValueError, match="my separation bug"):
        solve(m, plugins=[LazyConstraints(separate)])
    assert "ERROR" not in capfd.readouterr().err  # no SCIP error trail


BAD_ROWS = [
    (lambda m, o: [3.0], "relational expression"),
    (lambda m, o: [m.x[0] * m.x[1] <= 1], "not linear"),
    (lambda m, o: [m.x[0] < 1], "strict"),
    (lambda m, o: [o.z + m.x[0] <= 1], "not in the solved model"),
    (lambda m, o: [pyo.inequality(m.x[1], m.x[0], 1)], "must be a number"),
]


@pytest.mark.parametrize("make,fragment", BAD_ROWS)
def test_bad_rows_are_named(make, fragment):
    m, _ = _trap_dual_fixing()
    other = pyo.ConcreteModel()
    other.z = pyo.Var(domain=pyo.Binary)
    with pytest.raises(InputError, match=fragment):
        solve(m, plugins=[LazyConstraints(lambda _s: make(m, other))])


def test_reading_a_variable_outside_the_model_or_a_whole_indexed_var_is_named():
    m, _ = _trap_dual_fixing()
    other = pyo.ConcreteModel()
    other.z = pyo.Var()
    with pytest.raises(InputError, match="not in the solved model"):
        solve(m, plugins=[LazyConstraints(lambda s: [m.x[0] >= s[other.z]])])
    with pytest.raises(InputError, match="one variable at a time"):
        solve(m, plugins=[LazyConstraints(lambda s: [m.x[0] >= s[m.x]])])


def test_a_fixed_variable_reads_as_its_value():
    m, _ = _trap_components()
    m.x[1].fix(1)
    seen = []
    solve(m, plugins=[LazyConstraints(lambda s: seen.append(s[m.x[1]]) or [])])
    assert seen and set(seen) == {1.0}


@pytest.mark.parametrize("kwargs,fragment", [
    ({"separate": 3}, "needs a function"),
    ({"separate": lambda s: [], "fractional": 1}, "True or False"),
    ({"separate": lambda s: [], "name": "two words"}, "identifier"),
])
def test_constructor_checks_its_arguments(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        LazyConstraints(**kwargs)


def test_two_lazy_families_need_two_names():
    m, _ = _trap_components()
    a = LazyConstraints(lambda _s: [m.x[0] + m.x[2] <= 1])
    b = LazyConstraints(lambda _s: [m.x[1] + m.x[2] <= 0], name="second")
    result = solve(m, plugins=[a, b])
    assert result.objective == pytest.approx(-5) and set(result.plugin_stats) == {"lazy",
                                                                                   "second"}
    with pytest.raises(InputError, match="a name of its own"):
        solve(m, plugins=[a, LazyConstraints(lambda _s: [])])


def test_a_start_that_violates_a_lazy_row_is_refused_by_name():
    m, hidden = _trap_components()
    for v in m.x.values():
        v.value = 0
    m.x[0].value = m.x[2].value = 1
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = solve(m, plugins=[LazyConstraints(lambda _s: [hidden[0]()])], warmstart=True)
    assert result.extra["warmstart"]["accepted"] is False
    reason = result.extra["warmstart"]["reason"]
    assert "the lazy row x[0] + x[2]  <=  1 of 'lazy'" in reason, reason  # the row itself
    assert result.objective == pytest.approx(-5)


def test_through_pyomo_solver_factory():
    d = _distances(8, 4)
    m = tsp_mip(d, subtour="none")
    results = pyo.SolverFactory("coplug_scip").solve(
        m, plugins=[LazyConstraints(subtour_separator(m))])
    truth = solve(tsp_mip(d), solver="highs")
    assert pyo.value(m.length) == pytest.approx(truth.objective)
    assert str(results.solver.termination_condition) == "optimal"


def test_linear_row_reads_sides_and_constants():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2))
    m.p = pyo.Param(initialize=2.0, mutable=True)
    row = linear_row(2 * m.x[0] + 1 >= m.x[1] + m.p)  # x[1] - 2 x[0] <= -1
    assert row.lower == -float("inf") and row.upper == pytest.approx(-1.0)
    named = dict(zip([v.name for v in row.variables], row.coefs, strict=True))
    assert named == {"x[1]": 1.0, "x[0]": -2.0}
    ranged = linear_row(pyo.inequality(-1, m.x[0] + 3, m.p))
    assert (ranged.lower, ranged.upper) == (-4.0, -1.0)
    equal = linear_row(m.x[0] == m.x[1])
    assert (equal.lower, equal.upper) == (0.0, 0.0)


def test_subtour_separator_cuts_a_fractional_point_whose_support_is_connected():
    # two triangles joined by arcs of 0.25: one connected support graph, but only 0.25 of
    # flow leaves {0, 1, 2}, so its row (sum inside <= 2) is violated (2.75)
    m = tsp_mip(_distances(6, 0), subtour="none")
    point = {(0, 1): 1.0, (1, 2): 1.0, (2, 0): 0.75, (2, 3): 0.25,
             (3, 4): 1.0, (4, 5): 1.0, (5, 3): 0.75, (5, 0): 0.25}
    values = {id(m.x[a]): point.get(a, 0.0) for a in m.A}
    view = _ValuesView(values)
    rows = subtour_separator(m)(view)
    assert len(rows) == 1
    row = linear_row(rows[0])
    activity = sum(c * view(v) for v, c in zip(row.variables, row.coefs, strict=True))
    assert activity == pytest.approx(2.75) and row.upper == 2
    tour = {(0, 1): 1.0, (1, 2): 1.0, (2, 3): 1.0, (3, 4): 1.0, (4, 5): 1.0, (5, 0): 1.0}
    values.update({id(m.x[a]): tour.get(a, 0.0) for a in m.A})
    assert subtour_separator(m)(view) == []


class _ValuesView:
    def __init__(self, values: dict[int, float]) -> None:
        self.values = values

    def __getitem__(self, var: object) -> float:
        return self.values[id(var)]

    __call__ = __getitem__


def test_a_row_handed_back_again_is_read_once_and_a_new_one_afresh(monkeypatch):
    # k_best hands back the same no-good and cutoff objects to thousands of heuristic
    # solutions; reading each again took half of its time in lazy.py
    import coplug.plugins.lazy as lazy_module

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    kept = m.x[0] + m.x[1] <= 1
    reads = []
    real = lazy_module.linear_row
    monkeypatch.setattr(lazy_module, "linear_row", lambda expr: reads.append(expr) or real(expr))
    lazy = LazyConstraints(lambda solution: [kept, m.x[1] + m.x[2] <= 1])
    ones = {id(v): v for v in m.x.values()}
    view = SolutionView(ones, lambda var: 1.0)
    for _ in range(5):
        lazy.violated_at(view, lambda a, b: a <= b + 1e-9)
    assert sum(expr is kept for expr in reads) == 2  # at its first and second meeting only
    assert len(reads) == 7  # the row built anew at each call is read each time


def test_a_solution_view_asks_the_solver_once_per_variable() -> None:
    """A row's activity reads the values `separate` read already: each comes from the solver
    once per view (a k_best callback read 8,000 values twice)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3))
    reads: list[int] = []
    values = {10: 1.5, 11: -2.0, 12: 4.0}
    view = SolutionView({id(m.x[i]): 10 + i for i in range(3)},
                        lambda handle: (reads.append(handle), values[handle])[1])
    assert [view[m.x[i]] for i in (0, 1, 0, 2, 1)] == [1.5, -2.0, 1.5, 4.0, -2.0]
    assert reads == [10, 11, 12]
    lazy = LazyConstraints(lambda sol: [sol[m.x[0]] * m.x[0] + m.x[1] >= 0, m.x[2] <= 3])
    violated = lazy.violated_at(view, lambda a, b: a <= b + 1e-9)
    assert [str(row.expr) for row in violated] == ["x[2]  <=  3"]
    assert reads == [10, 11, 12]
