"""`solve(model, solver="lap")` on matching models (sum(x) <= 1 on both sides) and on mixed
==, <= and >= row/column families: random small models must agree with HiGHS (objective,
status, a feasible x), and what the LAP path cannot take is refused naming the family."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from coplug.plugins import Status, UnsupportedModelError, solve

ROWS, COLS = "rows_out", "cols_in"  # family names the refusals must mention


def _sum_con(terms: list, sense: str, form: int):
    """sum(terms) (sense) 1 written in one of a few equivalent forms."""
    total = sum(terms)
    if sense == "==":
        return (total == 1, -total == -1, 1 - total == 0)[form % 3]
    if sense == "<=":
        return (total <= 1, -total >= -1, 1 >= total)[form % 3]
    return (total >= 1, -total <= -1, 1 <= total)[form % 3]


def build(n: int, m: int, pairs: list[tuple[int, int]], cost: np.ndarray,
          row_senses: list[str], col_senses: list[str], maximize: bool, domain: str,
          seed: int) -> pyo.ConcreteModel:
    """x over `pairs`, one constraint per row and per column that has a pair (rows and
    columns without any are left out), objective sum c_ij x_ij."""
    forms = np.random.default_rng(seed).integers(0, 3, size=n + m).tolist()
    model = pyo.ConcreteModel()
    if domain == "binary":
        model.x = pyo.Var(pairs, domain=pyo.Binary)
    elif domain == "unit":
        model.x = pyo.Var(pairs, bounds=(0, 1))
    else:
        model.x = pyo.Var(pairs, domain=pyo.NonNegativeReals)
    by_row = {i: [p for p in pairs if p[0] == i] for i in range(n)}
    by_col = {j: [p for p in pairs if p[1] == j] for j in range(m)}

    def row_rule(b, i):
        if not by_row[i]:
            return pyo.Constraint.Skip
        return _sum_con([b.x[p] for p in by_row[i]], row_senses[i], forms[i])

    def col_rule(b, j):
        if not by_col[j]:
            return pyo.Constraint.Skip
        return _sum_con([b.x[p] for p in by_col[j]], col_senses[j], forms[n + j])

    model.add_component(ROWS, pyo.Constraint(range(n), rule=row_rule))
    model.add_component(COLS, pyo.Constraint(range(m), rule=col_rule))
    model.obj = pyo.Objective(expr=sum(float(cost[p]) * model.x[p] for p in pairs),
                              sense=pyo.maximize if maximize else pyo.minimize)
    return model


def expected(n: int, m: int, pairs: list[tuple[int, int]], row_senses: list[str],
             col_senses: list[str]) -> str:
    """'infeasible' when some component's counts make it so (x sum to >= one side's count
    and <= the other's), else 'refused' when some component is one the LAP path does not
    take (mixed senses on a side, >= on both sides, fewer >= than == / <= constraints),
    else 'solve'."""
    r = np.array([p[0] for p in pairs])
    c = np.array([p[1] for p in pairs])
    graph = coo_matrix((np.ones(len(pairs)), (r, n + c)), shape=(n + m, n + m))
    _, label = connected_components(graph, directed=False)
    outcome = "solve"
    for comp in set(label[r].tolist()):
        rows = sorted({i for i in r.tolist() if label[i] == comp})
        cols = sorted({j for j in c.tolist() if label[n + j] == comp})
        rs, cs = {row_senses[i] for i in rows}, {col_senses[j] for j in cols}
        if len(rs) > 1 or len(cs) > 1:
            outcome = "refused"
            continue
        (a,), (b,) = rs, cs
        ge, other = (len(rows), len(cols)) if a == ">=" else (len(cols), len(rows))
        if a == b == ">=":
            outcome = "refused"
        elif ">=" in (a, b) and ge > other:
            return "infeasible"
        elif ">=" in (a, b) and ge < other:
            outcome = "refused"
        elif (a == "==" and len(rows) > len(cols)) or (b == "==" and len(cols) > len(rows)):
            return "infeasible"
    return outcome


def assert_feasible(model: pyo.ConcreteModel, objective: float) -> None:
    """Integral x in [0, 1] satisfying every constraint, objective as reported."""
    for var in model.x.values():
        assert var.value is not None and abs(var.value - round(var.value)) < 1e-9
        assert -1e-9 <= var.value <= 1 + 1e-9
    for con in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        assert con.lower is None or body >= pyo.value(con.lower) - 1e-6, con.name
        assert con.upper is None or body <= pyo.value(con.upper) + 1e-6, con.name
    assert pyo.value(model.obj) == pytest.approx(objective, abs=1e-6)


def random_case(seed: int) -> tuple:
    """Shape both ways, dense / random sparse / block patterns, senses per family, per
    block or per constraint, signed integer costs, min or max, three variable domains."""
    rng = np.random.default_rng(seed)
    n, m = (int(v) for v in rng.integers(1, 6, size=2))
    cost = rng.integers(-9, 10, size=(n, m)).astype(float)
    if rng.random() < 0.3:
        cost = np.abs(cost) * (1 if rng.random() < 0.5 else -1)  # one-signed costs
    pattern = rng.choice(["dense", "sparse", "blocks"])
    group_r = rng.integers(0, 2, size=n) if pattern == "blocks" else np.zeros(n, dtype=int)
    group_c = rng.integers(0, 2, size=m) if pattern == "blocks" else np.zeros(m, dtype=int)
    density = 1.0 if pattern == "dense" else rng.uniform(0.4, 0.9)
    pairs = [(i, j) for i in range(n) for j in range(m)
             if group_r[i] == group_c[j] and rng.random() < density]
    if not pairs:
        pairs = [(0, 0)]
    senses, weights = ["==", "<=", ">="], [0.3, 0.5, 0.2]  # matchings (<= / <=) often
    how = rng.choice(["family", "family", "block", "each"])
    if how == "family":
        rs, cs = rng.choice(senses, size=2, p=weights).tolist()
        row_senses, col_senses = [rs] * n, [cs] * m
    elif how == "block":
        per_r = rng.choice(senses, size=2, p=weights).tolist()
        per_c = rng.choice(senses, size=2, p=weights).tolist()
        row_senses = [per_r[g] for g in group_r.tolist()]
        col_senses = [per_c[g] for g in group_c.tolist()]
    else:
        row_senses = rng.choice(senses, size=n, p=weights).tolist()
        col_senses = rng.choice(senses, size=m, p=weights).tolist()
    maximize = bool(rng.random() < 0.5)
    both_ge = ">=" in row_senses and ">=" in col_senses
    domain = rng.choice(["binary", "unit"] if both_ge else ["binary", "unit", "free"])
    return n, m, pairs, cost, row_senses, col_senses, maximize, str(domain)


@pytest.mark.parametrize("block", range(6))
def test_random_models_match_highs(block: int) -> None:
    counts = {"solve": 0, "infeasible": 0, "refused": 0}
    for seed in range(block * 50, block * 50 + 50):
        case = random_case(seed)
        n, m, pairs, cost, row_senses, col_senses, maximize, domain = case
        want = expected(n, m, pairs, row_senses, col_senses)
        counts[want] += 1
        model = build(*case, seed=seed)
        if want == "refused":
            with pytest.raises(UnsupportedModelError, match="the LAP path takes") as info:
                solve(model, solver="lap")
            assert f"'{ROWS}'" in str(info.value) or f"'{COLS}'" in str(info.value)
            continue
        lap = solve(model, solver="lap")
        highs = solve(build(*case, seed=seed), solver="highs")
        assert lap.status is highs.status, (seed, case, lap, highs)
        if want == "infeasible":
            assert lap.status is Status.INFEASIBLE, seed
        if lap.status is Status.OPTIMAL:
            assert lap.objective == pytest.approx(highs.objective, abs=1e-6), (seed, case)
            assert_feasible(model, lap.objective)
        else:
            assert lap.status is Status.INFEASIBLE and not lap.has_solution, seed
    assert min(counts.values()) >= 3, counts  # each outcome is exercised


def _all_le(cost: np.ndarray, maximize: bool = False,
            pairs: list[tuple[int, int]] | None = None) -> pyo.ConcreteModel:
    n, m = cost.shape
    pairs = pairs if pairs is not None else [(i, j) for i in range(n) for j in range(m)]
    return build(n, m, pairs, cost, ["<="] * n, ["<="] * m, maximize, "binary", seed=0)


def test_plain_matching_with_negative_costs_is_solved() -> None:
    """The reported model: 3x3 binaries, <= 1 on every row and column; HiGHS says -4."""
    cost = np.array([[1.0, -2.0, 3.0], [-2.0, 4.0, 0.0], [0.0, -1.0, 2.0]])
    model = _all_le(cost)
    result = solve(model, solver="lap")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(-4.0)
    assert sorted(p for p in model.x if model.x[p].value > 0.5) == [(0, 1), (1, 0)]
    assert solve(_all_le(cost), solver="highs").objective == pytest.approx(-4.0)
    maxed = _all_le(cost, maximize=True)
    assert solve(maxed, solver="lap").objective == pytest.approx(7.0)  # 3 + 4
    assert_feasible(maxed, 7.0)


@pytest.mark.parametrize(("shape", "density"), [((40, 70), 1.0), ((70, 40), 1.0),
                                                ((60, 45), 0.3), ((45, 60), 0.3)])
@pytest.mark.parametrize("maximize", [False, True])
def test_larger_matchings_equal_the_clipped_assignment(shape, density, maximize) -> None:
    """Optimum = assignment optimum on min(c, 0) (max(c, 0)) padded square with zeros,
    missing pairs priced 0 as well (they may be left unmatched but never used)."""
    rng = np.random.default_rng(shape[0] * 7 + int(density * 10) + maximize)
    cost = rng.normal(size=shape).round(3)
    mask = rng.random(shape) < density
    pairs = [tuple(p) for p in np.argwhere(mask).tolist()]
    model = _all_le(cost, maximize, pairs)
    result = solve(model, solver="lap")
    size = max(shape)
    clipped = np.zeros((size, size))
    clipped[: shape[0], : shape[1]] = np.where(
        mask, np.maximum(cost, 0) if maximize else np.minimum(cost, 0), 0)
    r, c = linear_sum_assignment(clipped, maximize=maximize)
    assert result.objective == pytest.approx(clipped[r, c].sum(), abs=1e-9)
    assert_feasible(model, result.objective)
    unused = [p for p in pairs if model.x[p].value > 0.5 and
              (cost[p] <= 0 if maximize else cost[p] >= 0)]
    assert not unused  # only pairs that beat 0 are used


def _families(n: int, m: int, row: str, col: str, maximize: bool = False,
              pattern: list[tuple[int, int]] | None = None) -> pyo.ConcreteModel:
    cost = np.random.default_rng(n * 10 + m).integers(-9, 10, size=(n, m)).astype(float)
    pairs = pattern or [(i, j) for i in range(n) for j in range(m)]
    return build(n, m, pairs, cost, [row] * n, [col] * m, maximize, "binary", seed=n + m)


@pytest.mark.parametrize(("n", "m", "row", "col"), [
    (4, 3, "==", "<="), (3, 4, "<=", "=="), (3, 2, ">=", "<="), (2, 3, "<=", ">="),
    (4, 3, ">=", "=="), (3, 4, "==", "=="),
])
def test_counts_that_cannot_fit_are_infeasible_like_highs(n, m, row, col) -> None:
    """More == 1 (or >= 1) constraints on one side than the other side can serve."""
    result = solve(_families(n, m, row, col), solver="lap")
    assert result.status is Status.INFEASIBLE and not result.has_solution
    assert "around" in result.extra["reason"]
    assert solve(_families(n, m, row, col), solver="highs").status is Status.INFEASIBLE


@pytest.mark.parametrize(("n", "m", "row", "col"), [
    (4, 4, ">=", "<="), (4, 4, "<=", ">="), (3, 5, "==", "<="), (5, 3, "<=", "=="),
])
@pytest.mark.parametrize("maximize", [False, True])
def test_exact_fits_match_highs(n, m, row, col, maximize) -> None:
    """>= 1 beside as many <= 1 holds with equality; == 1 beside more <= 1 is rectangular."""
    model = _families(n, m, row, col, maximize)
    lap = solve(model, solver="lap")
    assert lap.objective == pytest.approx(
        solve(_families(n, m, row, col, maximize), solver="highs").objective, abs=1e-9)
    assert_feasible(model, lap.objective)


@pytest.mark.parametrize(("n", "m", "row", "col", "match"), [
    (3, 3, ">=", ">=", f"of family '{ROWS}' and of family '{COLS}' around .* are all sum"),
    (2, 4, ">=", "==", f"'{ROWS}', 2\\).*need as many sum\\(x\\) == 1"),
    (4, 2, "<=", ">=", f"'{COLS}', 2\\).*need as many sum\\(x\\) == 1"),
])
def test_ge_families_that_are_not_assignments_are_refused(n, m, row, col, match) -> None:
    with pytest.raises(UnsupportedModelError, match=match) as info:
        solve(_families(n, m, row, col), solver="lap")
    assert "the LAP path takes" in str(info.value)
    assert solve(_families(n, m, row, col), solver="highs").status is Status.OPTIMAL


def test_mixed_senses_on_one_side_are_refused_naming_the_family() -> None:
    cost = np.ones((3, 3))
    pairs = [(i, j) for i in range(3) for j in range(3)]
    model = build(3, 3, pairs, cost, ["==", "<=", "=="], ["<="] * 3, False, "binary", 0)
    with pytest.raises(UnsupportedModelError,
                       match=f"family '{ROWS}' mixes senses on one side") as info:
        solve(model, solver="lap")
    said = str(info.value)  # one constraint of that side per sense, none of the other side
    assert f"'{ROWS}[1]' is sum(x) <= 1" in said and f"'{ROWS}[0]' is sum(x) == 1" in said
    assert COLS not in said


def test_two_families_on_one_side_are_named() -> None:
    """Rows split over two indexed constraints, one == and one <=: both names given."""
    model = _all_le(np.ones((3, 3)))
    getattr(model, ROWS)[0].deactivate()
    model.first = pyo.Constraint(expr=sum(model.x[0, j] for j in range(3)) == 1)
    with pytest.raises(UnsupportedModelError, match=f"families 'first', '{ROWS}'"):
        solve(model, solver="lap")


def test_infeasible_component_beats_a_refused_one() -> None:
    """Two disconnected blocks: one can never fit (3 == rows, 2 columns), the other is a
    covering block the LAP path refuses; the model is infeasible either way."""
    pairs = [(i, j) for i in range(3) for j in range(2)] + [(3, 2), (3, 3), (4, 2), (4, 3)]
    senses_r, senses_c = ["=="] * 3 + [">="] * 2, ["<="] * 2 + [">="] * 2
    model = build(5, 4, pairs, np.ones((5, 4)), senses_r, senses_c, False, "binary", 0)
    result = solve(model, solver="lap")
    assert result.status is Status.INFEASIBLE


def test_matching_beside_an_assignment_block() -> None:
    """A <= / <= block and an == / == block in one model: both solved in one LAP."""
    pairs = ([(i, j) for i in range(3) for j in range(4)]
             + [(i, j) for i in range(3, 5) for j in range(4, 6)])
    cost = np.random.default_rng(3).integers(-9, 10, size=(5, 6)).astype(float)
    rows, cols = ["<="] * 3 + ["=="] * 2, ["<="] * 4 + ["=="] * 2
    for maximize in (False, True):
        model = build(5, 6, pairs, cost, rows, cols, maximize, "unit", 1)
        lap = solve(model, solver="lap")
        highs = solve(build(5, 6, pairs, cost, rows, cols, maximize, "unit", 1), solver="highs")
        assert lap.objective == pytest.approx(highs.objective, abs=1e-9)
        assert_feasible(model, lap.objective)


def test_matching_without_objective_sets_everything_to_zero() -> None:
    model = _all_le(np.ones((2, 3)))
    model.obj.deactivate()
    result = solve(model, solver="lap")
    assert result.status is Status.OPTIMAL and result.objective is None
    assert all(var.value == 0 for var in model.x.values())
