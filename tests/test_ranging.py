"""LP ranging (`coplug.plugins.ranging`) checked by perturbation: each coefficient, side
or bound is moved inside its range and just beyond it, and the LP is solved again by
`coplug.plugins.solve` (HiGHS or SCIP) as the independent truth. Inside, the point (for a
cost) or the objective's linear change along the dual (for a side or bound) must hold;
beyond a finite end it must not. The random LPs have generic (continuous random) data, so
they are nondegenerate and their ranging is unique."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import (
    InputError,
    SolverError,
    Status,
    TimeLimitError,
    UnsupportedModelError,
    solve,
)
from coplug.plugins.ranging import Range, Sensitivity, sensitivity

# Relative tolerance of the re-solves' objectives and points (the solvers' own are 1e-7).
TOL = 1e-6
# Seeds of random LPs with an optimum (the others are infeasible or unbounded), with the
# solver that checks each.
CASES = [(0, "highs"), (1, "scip"), (2, "scip"), (3, "highs"), (4, "highs"), (7, "highs")]


@dataclass
class Case:
    """A random LP with its costs, sides and bounds as things the tests can move."""

    model: pyo.ConcreteModel
    maximize: bool
    lower: dict[int, Any]  # row -> the Param of its lower side (as written)
    upper: dict[int, Any]  # row -> the Param of its upper side (an equality's only side)


def _random_lp(seed: int) -> Case:
    """An LP around a random point: <=, >=, == and ranged rows with body constants, boxed,
    half-bounded and free variables, random real data (so nondegenerate), either sense."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 6)), int(rng.integers(3, 6))
    a = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.8)
    a[~a.any(axis=1), 0] = 1.5
    x0 = rng.uniform(-2, 2, size=n)
    act = a @ x0
    const = rng.normal(size=m) * 3
    kinds = ["eq"] + list(rng.choice(["le", "ge", "range"], size=m - 1))
    maximize = bool(seed % 2)
    model = pyo.ConcreteModel()
    model.c = pyo.Param(range(n), mutable=True, initialize=lambda _, j: rng.normal() * 3)
    model.lo = pyo.Param(range(m), mutable=True,
                         initialize=lambda _, i: act[i] + const[i] - rng.uniform(0.1, 2))
    model.hi = pyo.Param(range(m), mutable=True,
                         initialize=lambda _, i: act[i] + const[i] + rng.uniform(0.1, 2))
    model.hi[0] = float(act[0] + const[0])

    def bounds(_: Any, j: int) -> tuple[float | None, float | None]:
        kind = ["box", "lower", "upper", "free"][j % 4]
        lb = x0[j] - rng.uniform(0.5, 3) if kind in ("box", "lower") else None
        ub = x0[j] + rng.uniform(0.5, 3) if kind in ("box", "upper") else None
        return lb, ub

    model.x = pyo.Var(range(n), bounds=bounds)
    lower, upper = {}, {}

    def row(mod: pyo.ConcreteModel, i: int) -> Any:
        body = sum(float(a[i, j]) * mod.x[j] for j in range(n) if a[i, j]) + float(const[i])
        if kinds[i] in ("ge", "range"):
            lower[i] = mod.lo[i]
        if kinds[i] in ("le", "range", "eq"):
            upper[i] = mod.hi[i]
        return {"eq": lambda: body == mod.hi[i], "le": lambda: body <= mod.hi[i],
                "ge": lambda: body >= mod.lo[i],
                "range": lambda: pyo.inequality(mod.lo[i], body, mod.hi[i])}[kinds[i]]()

    model.rows = pyo.Constraint(range(m), rule=row)
    model.obj = pyo.Objective(expr=sum(model.c[j] * model.x[j] for j in range(n)) + 3.5,
                              sense=pyo.maximize if maximize else pyo.minimize)
    return Case(model, maximize, lower, upper)


@dataclass
class Answer:
    """An independent re-solve: status, objective, point and Pyomo's duals."""

    status: Status
    objective: float | None
    x: np.ndarray
    dual: dict[int, float]
    rc: dict[int, float]


def _solve(case: Case, solver: str) -> Answer:
    """Solve the case's LP as it now stands with `coplug.plugins.solve`, duals included."""
    model = case.model
    model.del_component("dual")
    model.del_component("rc")
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "dual left empty" on an infeasible re-solve
        result = solve(model, solver=solver)
    x = np.array([model.x[j].value if model.x[j].value is not None else np.nan
                  for j in model.x])
    return Answer(result.status, result.objective, x,
                  {i: model.dual.get(model.rows[i], math.nan) for i in model.rows},
                  {j: model.rc.get(model.x[j], math.nan) for j in model.x})


@contextmanager
def _moved(setter: Callable[[float], None], now: float, to: float) -> Iterator[None]:
    """Set a coefficient, side or bound to `to` for the block, back to `now` after it."""
    setter(to)
    try:
        yield
    finally:
        setter(now)


def _inside(r: Range, now: float) -> list[float]:
    """Points strictly inside `r`: 0.99 of the way to each finite end, far out past `now`
    toward an infinite one."""
    far = 50.0 * (1.0 + abs(now))
    return [now + 0.99 * (r.low - now) if math.isfinite(r.low) else now - far,
            now + 0.99 * (r.high - now) if math.isfinite(r.high) else now + far]


def _beyond(r: Range, now: float) -> list[tuple[float, float]]:
    """(end, a point a little beyond it) for each finite end of `r`."""
    step = 0.1 * max(1.0, r.high - r.low if math.isfinite(r.high - r.low) else 1.0)
    ends = [(r.low, r.low - step)] if math.isfinite(r.low) else []
    return ends + ([(r.high, r.high + step)] if math.isfinite(r.high) else [])


def _close(a: float, b: float) -> bool:
    """Equal to the re-solves' tolerance."""
    return abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def _worse(case: Case, value: float, than: float) -> bool:
    """Whether objective `value` is clearly worse than `than` in the case's sense."""
    margin = TOL * max(1.0, abs(than))
    return value < than - margin if case.maximize else value > than + margin


def _better(case: Case, value: float, than: float) -> bool:
    """Whether objective `value` is clearly better than `than` in the case's sense."""
    margin = TOL * max(1.0, abs(than))
    return value > than + margin if case.maximize else value < than - margin


@pytest.fixture(params=CASES, ids=[f"seed{s}-{solver}" for s, solver in CASES])
def ranged(request: pytest.FixtureRequest) -> tuple[Case, str, Sensitivity, Answer]:
    """A random LP, its checking solver, its ranging and the solver's own optimum."""
    seed, solver = request.param
    case = _random_lp(seed)
    truth = _solve(case, solver)
    assert truth.status is Status.OPTIMAL
    return case, solver, sensitivity(case.model), truth


def test_random_cases_cover_every_kind() -> None:
    """The cases hold both senses, every row kind, active and inactive rows and bounds."""
    sides, senses, free, ranged = set(), set(), False, False
    for seed, _ in CASES:
        case = _random_lp(seed)
        found = sensitivity(case.model)
        senses.add(case.maximize)
        sides |= {(which, found.dual[con] != 0) for con, which in found.side.items()
                  if con.ctype is pyo.Constraint}
        sides |= {(f"bound {which}", found.reduced_cost[var] != 0)
                  for var, which in found.side.items() if var.ctype is pyo.Var}
        free |= any(v.lb is None and v.ub is None for v in case.model.x.values())
        ranged |= any(con.has_lb() and con.has_ub() and not con.equality
                      for con in case.model.rows.values())
    assert senses == {True, False} and free and ranged
    assert sides >= {("both", True), ("upper", True), ("upper", False), ("lower", True),
                     ("lower", False), ("bound upper", True), ("bound lower", True),
                     ("bound upper", False), ("bound lower", False)}


def test_objective_and_point_match_the_solver(ranged: Any) -> None:
    """`sensitivity` loads the same optimum the independent solve found."""
    case, _, found, truth = ranged
    sensitivity(case.model)  # _solve loaded the solver's point: load ours again
    x = np.array([case.model.x[j].value for j in case.model.x])
    assert _close(found.objective, truth.objective)
    assert np.allclose(x, truth.x, rtol=TOL, atol=TOL)
    assert _close(pyo.value(case.model.obj), found.objective)
    for i, con in case.model.rows.items():
        assert _close(found.dual[con], truth.dual[i])
    for j, var in case.model.x.items():
        assert _close(found.reduced_cost[var], truth.rc[j])


def test_cost_ranges_by_perturbation(ranged: Any) -> None:
    """Inside a cost's range the point stays optimal (objective = new c.x); at an end the
    optimum is the range's objective there; beyond a finite end the old point loses (to a
    better point, or to a ray of an LP now unbounded)."""
    case, solver, found, truth = ranged
    model = case.model
    for j, var in model.x.items():
        r, now = found.cost[var], pyo.value(model.c[j])
        assert r.low < now < r.high  # generic data: no zero-width range
        setter = model.c[j].set_value
        for to in _inside(r, now):
            with _moved(setter, now, to):
                again = _solve(case, solver)
            assert again.status is Status.OPTIMAL
            assert np.allclose(again.x, truth.x, rtol=TOL, atol=TOL), (var.name, to)
            assert _close(again.objective, truth.objective + (to - now) * truth.x[j])
        for end, past in _beyond(r, now):
            with _moved(setter, now, end):
                at_end = _solve(case, solver)
            expected = r.objective_low if end == r.low else r.objective_high
            assert _close(at_end.objective, expected), (var.name, end)
            with _moved(setter, now, past):
                again = _solve(case, solver)
            old = truth.objective + (past - now) * truth.x[j]
            assert again.status is Status.UNBOUNDED or (
                again.status is Status.OPTIMAL and _better(case, again.objective, old)), (
                var.name, past)


def _side_setter(case: Case, i: int, which: str) -> tuple[Callable[[float], None], float]:
    """The setter and value of row i's side `which` (an equality's one Param)."""
    param = case.lower[i] if which == "lower" else case.upper[i]
    return param.set_value, pyo.value(param)


def test_rhs_ranges_by_perturbation(ranged: Any) -> None:
    """Inside a side's range the optimum moves by dual * change; at an end it is the
    range's objective there; beyond a finite end it is worse than that line, or gone."""
    case, solver, found, truth = ranged
    for i, con in case.model.rows.items():
        r, which = found.rhs[con], found.side[con]
        setter, now = _side_setter(case, i, which)
        assert r.low <= now <= r.high and r.low < r.high
        for to in _inside(r, now):
            with _moved(setter, now, to):
                again = _solve(case, solver)
            assert again.status is Status.OPTIMAL, (con.name, which, to)
            assert _close(again.objective, truth.objective + truth.dual[i] * (to - now)), (
                con.name, which, to)
        for end, past in _beyond(r, now):
            with _moved(setter, now, end):
                at_end = _solve(case, solver)
            expected = r.objective_low if end == r.low else r.objective_high
            assert _close(at_end.objective, expected), (con.name, which, end)
            with _moved(setter, now, past):
                again = _solve(case, solver)
            line = truth.objective + truth.dual[i] * (past - now)
            assert again.status is Status.INFEASIBLE or _worse(case, again.objective, line), (
                con.name, which, past)


def _bound_setter(var: Any, which: str) -> tuple[Callable[[float], None], float]:
    """The setter and value of a variable's bound `which`."""
    if which == "lower":
        return var.setlb, var.lb
    if which == "upper":
        return var.setub, var.ub
    return (lambda value: (var.setlb(value), var.setub(value))), var.lb


def test_bound_ranges_by_perturbation(ranged: Any) -> None:
    """As for sides, with the reduced cost as the slope; free variables have no entry."""
    case, solver, found, truth = ranged
    for j, var in case.model.x.items():
        if var.lb is None and var.ub is None:
            assert var not in found.bound and var not in found.side
            continue
        r, which = found.bound[var], found.side[var]
        setter, now = _bound_setter(var, which)
        assert r.low <= now <= r.high and r.low < r.high
        for to in _inside(r, now):
            with _moved(setter, now, to):
                again = _solve(case, solver)
            assert again.status is Status.OPTIMAL, (var.name, which, to)
            assert _close(again.objective, truth.objective + truth.rc[j] * (to - now)), (
                var.name, which, to)
        for end, past in _beyond(r, now):
            with _moved(setter, now, end):
                at_end = _solve(case, solver)
            expected = r.objective_low if end == r.low else r.objective_high
            assert _close(at_end.objective, expected), (var.name, which, end)
            with _moved(setter, now, past):
                again = _solve(case, solver)
            line = truth.objective + truth.rc[j] * (past - now)
            assert again.status is Status.INFEASIBLE or _worse(case, again.objective, line), (
                var.name, which, past)


def _wyndor(sense: Any = pyo.maximize) -> pyo.ConcreteModel:
    """Hillier and Lieberman's Wyndor Glass LP, with a body constant on the first row."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.plant1 = pyo.Constraint(expr=m.x + 1 <= 5)
    m.plant2 = pyo.Constraint(expr=2 * m.y <= 12)
    m.plant3 = pyo.Constraint(expr=3 * m.x + 2 * m.y <= 18)
    sign = 1 if sense == pyo.maximize else -1
    m.profit = pyo.Objective(expr=sign * (3 * m.x + 5 * m.y) + 10, sense=sense)
    return m


def test_wyndor_textbook_ranges() -> None:
    """The textbook's ranging (x = 2, y = 6, profit 36): c_x in [0, 7.5], c_y in [2, inf),
    b2 in [6, 18], b3 in [12, 24], plant 1 slack (its side in [3, inf) with x + 1)."""
    m = _wyndor()
    found = sensitivity(m)
    assert (m.x.value, m.y.value, found.objective) == pytest.approx((2, 6, 46))
    assert found.cost[m.x] == Range(0.0, 7.5, 40.0, 55.0)
    assert found.cost[m.y] == Range(2.0, math.inf, 28.0, math.inf)
    assert found.rhs[m.plant1] == Range(3.0, math.inf, 46.0, 46.0)
    assert found.rhs[m.plant2] == Range(6.0, 18.0, 37.0, 55.0)
    assert found.rhs[m.plant3] == Range(12.0, 24.0, 40.0, 52.0)
    assert [found.side[c] for c in (m.plant1, m.plant2, m.plant3)] == ["upper"] * 3
    assert [found.dual[c] for c in (m.plant1, m.plant2, m.plant3)] == [0.0, 1.5, 1.0]
    assert found.bound[m.x] == Range(-math.inf, 2.0, 46.0, 46.0)  # basic: lower bound free


def test_minimizing_the_negation_mirrors_the_ranges() -> None:
    """min -(3x + 5y) + 10 has the cost ranges of max 3x + 5y + 10 negated and swapped, the
    same side ranges, and the duals negated."""
    maxi, mini = _wyndor(), _wyndor(pyo.minimize)
    high, low = sensitivity(maxi), sensitivity(mini)
    assert low.objective == pytest.approx(-26.0)  # -36 + 10
    for a, b in ((maxi.x, mini.x), (maxi.y, mini.y)):
        assert (low.cost[b].low, low.cost[b].high) == (-high.cost[a].high, -high.cost[a].low)
    for a, b in ((maxi.plant2, mini.plant2), (maxi.plant3, mini.plant3)):
        assert (low.rhs[b].low, low.rhs[b].high) == (high.rhs[a].low, high.rhs[a].high)
        assert low.dual[b] == -high.dual[a]


def test_ranged_row_active_side_stops_at_the_other_side() -> None:
    """A ranged row active at its lower side is ranged by that side, up to its upper one;
    an equality row moves both sides together."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var(bounds=(0, 3))
    m.band = pyo.Constraint(expr=pyo.inequality(1, m.x + m.y, 1.5))
    m.tilt = pyo.Constraint(expr=m.x - m.y <= 0.5)
    m.cost = pyo.Objective(expr=m.x + 2 * m.y)
    found = sensitivity(m)
    assert found.side[m.band] == "lower"
    assert found.rhs[m.band] == Range(0.5, 1.5, 0.5, 2.0)
    m.band.set_value(m.x + m.y == 1)
    found = sensitivity(m)
    assert found.side[m.band] == "both"
    assert found.rhs[m.band] == Range(0.5, 5.5, 0.5, 8.0)


def test_active_bound_is_ranged() -> None:
    """A variable at its upper bound: that bound's range, priced by the reduced cost."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.row = pyo.Constraint(expr=m.x + 2 * m.y <= 4)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    found = sensitivity(m)
    assert (m.x.value, m.y.value) == pytest.approx((1, 1.5))
    assert found.side[m.x] == "upper" and found.reduced_cost[m.x] == pytest.approx(0.5)
    assert found.bound[m.x] == Range(0.0, 4.0, 2.0, 4.0)


def test_fixed_by_bounds_moves_both_bounds() -> None:
    """A variable with lb == ub is ranged by both bounds together ("both"), checked against
    re-solves inside and beyond its range."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, 2))
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.row = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y)
    found = sensitivity(m)
    assert found.side[m.x] == "both" and found.reduced_cost[m.x] == pytest.approx(-1.0)
    assert found.bound[m.x] == Range(-math.inf, 3.0, math.inf, 3.0)
    for value, objective in ((0.5, 5.5), (2.9, 3.1), (3.5, 3.5)):  # 3.5: beyond, not 2.5
        m.x.setlb(value)
        m.x.setub(value)
        assert solve(m, solver="highs").objective == pytest.approx(objective)


def test_lp_without_rows_is_ranged() -> None:
    """HiGHS solves an LP without rows (or nonzeros) without its simplex, and would not
    range it: a free row stands in."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.obj = pyo.Objective(expr=m.x + 4, sense=pyo.maximize)
    found = sensitivity(m)
    assert (found.objective, m.x.value, found.side[m.x]) == (5.0, 1.0, "upper")
    assert found.cost[m.x] == Range(0.0, math.inf, 4.0, math.inf)
    assert found.bound[m.x] == Range(0.0, math.inf, 4.0, math.inf)
    assert len(found.rhs) == 0


def test_readme_example() -> None:
    """The example handed on for the README runs as written."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.hours = pyo.Constraint(expr=3 * m.x + 2 * m.y <= 18)
    m.glass = pyo.Constraint(expr=2 * m.y + 1 <= 13)  # its side as written: 13
    m.profit = pyo.Objective(expr=3 * m.x + 5 * m.y, sense=pyo.maximize)
    s = sensitivity(m)  # HiGHS; the optimum x = 2, y = 6 is loaded
    assert (s.objective, m.x.value, m.y.value) == (36.0, 2.0, 6.0)
    assert (s.cost[m.x], s.rhs[m.glass], s.side[m.glass], s.dual[m.glass]) == (
        Range(0.0, 7.5, 30.0, 45.0), Range(1.0, 19.0, 18.0, 45.0), "upper", 1.5)


def test_loads_the_solution_and_leaves_other_variables_stale() -> None:
    """The optimum lands in the variables; one outside the model's rows is left stale."""
    m = _wyndor()
    m.unused = pyo.Var(initialize=7.0)
    solve(m, solver="highs")
    expected = (m.x.value, m.y.value)
    m.x.set_value(0.0)
    m.y.set_value(0.0)
    sensitivity(m)
    assert (m.x.value, m.y.value) == pytest.approx(expected)
    assert not m.x.stale and m.unused.stale and m.unused.value == 7.0


def _lp() -> pyo.ConcreteModel:
    """A small feasible, bounded LP the error tests break."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 4))
    m.row = pyo.Constraint(expr=m.x + m.y <= 5)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.maximize)
    return m


def test_integer_variable_is_named() -> None:
    m = _lp()
    m.count = pyo.Var(within=pyo.Integers, bounds=(0, 3))
    m.link = pyo.Constraint(expr=m.x <= m.count)
    with pytest.raises(UnsupportedModelError, match=r"linear programs: variable 'count' is "
                                                    r"integer"):
        sensitivity(m)


def test_nonlinear_constraint_and_objective_are_named() -> None:
    m = _lp()
    m.curve = pyo.Constraint(expr=m.x * m.y <= 3)
    with pytest.raises(UnsupportedModelError, match="constraint 'curve' is nonlinear"):
        sensitivity(m)
    m = _lp()
    m.obj.set_value(m.x * m.y)
    with pytest.raises(UnsupportedModelError, match="objective is nonlinear"):
        sensitivity(m)


def test_objective_count() -> None:
    m = _lp()
    m.obj.deactivate()
    with pytest.raises(InputError, match="no active objective"):
        sensitivity(m)
    m = _lp()
    m.other = pyo.Objective(expr=m.x)
    with pytest.raises(UnsupportedModelError, match="2 active objectives"):
        sensitivity(m)


def test_infeasible_and_unbounded() -> None:
    m = _lp()
    m.far = pyo.Constraint(expr=m.x + m.y >= 9)
    with pytest.raises(InputError, match="LP is infeasible"):
        sensitivity(m)
    m = _lp()
    m.x.setub(None)
    m.row.deactivate()
    with pytest.raises(InputError, match="LP is unbounded"):
        sensitivity(m)


def test_time_limit_reached() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, size=(60, 60))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(60), within=pyo.NonNegativeReals)
    m.rows = pyo.Constraint(range(60), rule=lambda m, i: sum(
        float(a[i, j]) * m.x[j] for j in range(60)) <= 1)
    m.obj = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    with pytest.raises(TimeLimitError, match="time limit of 1e-09 s reached"):
        sensitivity(m, time_limit=1e-9)
    assert sensitivity(m, time_limit=60).objective > 0


@pytest.mark.parametrize("bad", [-1, 0, "10", True, math.nan])
def test_bad_time_limit(bad: Any) -> None:
    with pytest.raises(InputError, match="time_limit must be"):
        sensitivity(_lp(), time_limit=bad)


def test_not_a_model() -> None:
    with pytest.raises(InputError, match="needs a Pyomo model"):
        sensitivity("model.lp")


def test_uncertified_optimum_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Duals that do not prove HiGHS's point optimal (here: all zero) give no ranging."""
    import coplug.plugins.ranging as module

    real = module.certify

    def zero_duals(*args: Any) -> Any:
        return real(*args[:-1], np.zeros_like(args[-1]))

    monkeypatch.setattr(module, "certify", zero_duals)
    with pytest.raises(SolverError, match=r"not certified: .* most of it at variable"):
        sensitivity(_wyndor())


def test_range_missing_the_value_is_refused() -> None:
    """A HiGHS range that does not hold the current value is an error, never returned."""
    from coplug.plugins.ranging import _check_ends

    _check_ends(1.0, 2.0, 2.0 + 1e-9, "cost of 'x'")
    with pytest.raises(SolverError, match=r"cost of 'x' at \[1.0, 2.0\], which misses"):
        _check_ends(1.0, 2.0, 2.5, "cost of 'x'")


def test_infeasible_or_unbounded_is_settled() -> None:
    """HiGHS's presolve may answer "infeasible or unbounded": a zero objective settles it."""
    import highspy

    from coplug.plugins.duals import min_form, read_lp
    from coplug.plugins.ranging import _build, _settle

    unbounded = _lp()
    unbounded.row.deactivate()
    unbounded.x.setub(None)
    infeasible = _lp()
    infeasible.far = pyo.Constraint(expr=infeasible.x + infeasible.y >= 9)
    for model, status in ((unbounded, highspy.HighsModelStatus.kUnbounded),
                          (infeasible, highspy.HighsModelStatus.kInfeasible)):
        form = min_form(read_lp(model)[0])
        assert _settle(_build(form, None), len(form.costs)) == status


def test_ctrl_c_stops_highs_and_raises_keyboard_interrupt():
    # the bare `run` finished a 96 s LP before the interrupt was seen
    import os
    import signal
    import threading
    import time

    import highspy
    import scipy.sparse as sp

    import coplug.plugins.ranging as ranging_module

    n, m = 6000, 3000
    rng = np.random.default_rng(0)
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("solver", "simplex")
    h.addVars(n, np.zeros(n), np.full(n, 10.0))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -rng.random(n))
    a = sp.random(m, n, density=0.01, random_state=1, format="csr")
    h.addRows(m, np.full(m, -np.inf), np.full(m, 50.0), a.nnz,
              a.indptr[:-1].astype(np.int32), a.indices.astype(np.int32), a.data)
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="interrupted"):
            ranging_module._run(h)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, saved)
    assert time.perf_counter() - start < 10
