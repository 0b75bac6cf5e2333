"""Review of the k best matchings: `ranked_matchings` against brute force (small) and an
independent Murty over scipy's `linear_sum_assignment` (n, m up to 60); `k_best(model,
solver="lap")` against SCIP's `k_best` on Pyomo matching and mixed models; named errors
for bad input, overflowing costs among them."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from coplug.plugins import infeasibilities, k_best, solve
from coplug.plugins.errors import InputError
from coplug.plugins.lap import RankedAssignments, ranked_matchings

Pairs = tuple[tuple[int, int], ...]
FORMATS = ("csr", "csc", "coo", "lil", "dok")


def _priced(c: np.ndarray, rows: np.ndarray, cols: np.ndarray, pairs: Pairs) -> float:
    """A matching's cost: its pairs plus the line costs of every unmatched row and column."""
    matched_rows = {i for i, _ in pairs}
    matched_cols = {j for _, j in pairs}
    return (sum(c[i, j] for i, j in pairs)
            + sum(rows[i] for i in range(c.shape[0]) if i not in matched_rows)
            + sum(cols[j] for j in range(c.shape[1]) if j not in matched_cols))


def _every_matching(c: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> Iterator[Pairs]:
    """Every matching of `c` over its finite pairs (each row: a column or none)."""
    n, m = c.shape
    for choice in itertools.product(*[[*range(m), None] for _ in range(n)]):
        used = [j for j in choice if j is not None]
        pairs = tuple((i, j) for i, j in enumerate(choice) if j is not None)
        if len(used) == len(set(used)) and all(np.isfinite(c[i, j]) for i, j in pairs):
            yield pairs


def _brute_costs(c: np.ndarray, rows: np.ndarray, cols: np.ndarray, k: int,
                 maximize: bool) -> list[float]:
    """The k best matching costs by enumeration."""
    costs = [_priced(c, rows, cols, pairs) for pairs in _every_matching(c, rows, cols)]
    return sorted(costs, reverse=maximize)[:k]


def _lsa_cell(big: np.ndarray, forced: Pairs, forbidden: Pairs) -> tuple[float, np.ndarray] | None:
    """One Murty cell solved from scratch by scipy: forced pairs kept alone on their row
    and column, forbidden pairs removed; None when the cell holds no assignment."""
    cell = big.copy()
    for i, j in forbidden:
        cell[i, j] = np.inf
    for i, j in forced:
        keep = cell[i, j]
        cell[i, :] = np.inf
        cell[:, j] = np.inf
        cell[i, j] = keep
    try:
        r, q = linear_sum_assignment(cell)
    except ValueError:
        return None
    total = float(cell[r, q].sum())
    return (total, q) if np.isfinite(total) else None


def _murty_costs(c: np.ndarray, rows: np.ndarray, cols: np.ndarray, k: int,
                 maximize: bool) -> list[float]:
    """The k best matching costs by textbook Murty on [[C, diag(rows)], [diag(cols), 0]],
    partitioned over the first n rows, every cell solved cold by scipy."""
    sign = -1.0 if maximize else 1.0
    n, m = c.shape
    big = np.full((n + m, n + m), np.inf)
    big[:n, :m] = np.where(np.isfinite(c), sign * c, np.inf)
    big[np.arange(n), m + np.arange(n)] = sign * rows
    big[n + np.arange(m), np.arange(m)] = sign * cols
    big[n:, m:] = 0.0
    root = _lsa_cell(big, (), ())
    if root is None:
        return []
    count = itertools.count()
    queue = [(root[0], next(count), (), (), root[1])]
    costs: list[float] = []
    while queue and len(costs) < k:
        total, _, forced, forbidden, q = heapq.heappop(queue)
        costs.append(sign * total)
        fixed = {i for i, _ in forced}
        kept = list(forced)
        for i in (i for i in range(n) if i not in fixed):
            child = _lsa_cell(big, tuple(kept), (*forbidden, (i, int(q[i]))))
            if child is not None:
                heapq.heappush(queue, (child[0], next(count), tuple(kept),
                                       (*forbidden, (i, int(q[i]))), child[1]))
            kept.append((i, int(q[i])))
    return costs


def _check(c: np.ndarray, rows: np.ndarray, cols: np.ndarray, result: RankedAssignments,
           expected: list[float], k: int) -> None:
    """Costs equal the reference's; each solution a distinct matching over allowed pairs,
    its cost its own recomputation; the status right and no cold re-solve."""
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    assert len(result.solutions) == len(expected)
    np.testing.assert_allclose(result.costs, expected, rtol=1e-12, atol=1e-12 * scale)
    assert result.status == ("k_found" if len(expected) == k else "exhausted")
    assert result.info["fallbacks"] == 0
    seen = set()
    for s in result.solutions:
        pairs = tuple(zip(s.row_ind.tolist(), s.col_ind.tolist(), strict=True))
        assert len(set(s.row_ind.tolist())) == len(pairs) == len(set(s.col_ind.tolist()))
        assert all(np.isfinite(c[i, j]) for i, j in pairs)
        assert pairs not in seen
        seen.add(pairs)
        assert np.isclose(s.cost, _priced(c, rows, cols, pairs), rtol=1e-12, atol=1e-12 * scale)


def _values(rng: np.random.Generator, kind: int, shape: tuple[int, ...]) -> np.ndarray:
    """Costs of one kind: tied small integers, floats, integers at a power of ten from
    1e-12 to 1e12, integers over a large common offset, mixed magnitudes, all equal."""
    if kind == 0:
        return rng.integers(-3, 4, shape).astype(float)
    if kind == 1:
        return rng.normal(size=shape) * 1e3
    if kind == 2:
        return rng.integers(-30, 31, shape) * 10.0 ** int(rng.integers(-12, 13))
    if kind == 3:
        return rng.integers(0, 4, shape) + 2.0 ** 40
    if kind == 4:
        return rng.normal(size=shape) * 10.0 ** rng.uniform(-200, 200, shape)
    return np.zeros(shape)


def _case(rng: np.random.Generator, sides: tuple[int, int]) -> tuple:
    """A random instance: costs, line costs (scalars or arrays, of either sign), the
    argument as passed (dense, or sparse in some format) and its pattern as inf."""
    n, m = (int(s) for s in rng.integers(sides[0], sides[1] + 1, 2))
    kind = int(rng.integers(0, 6))
    c = _values(rng, kind, (n, m))
    rows: float | np.ndarray = _values(rng, kind, (n,))
    cols: float | np.ndarray = _values(rng, kind, (m,))
    if rng.random() < 0.3:
        rows, cols = float(rows[0]), float(cols[0])
    arg, pattern = c, c
    if rng.random() < 0.5:
        mask = rng.random((n, m)) < rng.uniform(0.0, 0.8)
        r, q = np.nonzero(mask)
        arg = sp.coo_matrix((c[r, q], (r, q)), shape=(n, m)).asformat(
            FORMATS[int(rng.integers(len(FORMATS)))])
        stored = arg.tocoo()  # lil and dok keep no explicit zeros: what they store counts
        pattern = np.full((n, m), np.inf)
        pattern[stored.row, stored.col] = stored.data
    return arg, pattern, rows, cols


def _lines(value: float | np.ndarray, size: int) -> np.ndarray:
    """A line cost argument as one value per line."""
    return np.broadcast_to(np.asarray(value, dtype=float), (size,))


@pytest.mark.parametrize("seed", range(4))
def test_small_matchings_equal_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(120):
        arg, pattern, rows, cols = _case(rng, (1, 4))
        k, maximize = int(rng.integers(1, 150)), bool(rng.integers(2))
        result = ranked_matchings(arg, k, row_cost=rows, col_cost=cols, maximize=maximize)
        n, m = pattern.shape
        expected = _brute_costs(pattern, _lines(rows, n), _lines(cols, m), k, maximize)
        _check(pattern, _lines(rows, n), _lines(cols, m), result, expected, k)


@pytest.mark.parametrize("seed", range(3))
def test_large_matchings_equal_textbook_murty(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    for _ in range(6):
        arg, pattern, rows, cols = _case(rng, (10, 60))
        k, maximize = int(rng.integers(1, 40)), bool(rng.integers(2))
        result = ranked_matchings(arg, k, row_cost=rows, col_cost=cols, maximize=maximize)
        n, m = pattern.shape
        expected = _murty_costs(pattern, _lines(rows, n), _lines(cols, m), k, maximize)
        _check(pattern, _lines(rows, n), _lines(cols, m), result, expected, k)


@pytest.mark.parametrize(
    ("cost", "row_cost", "col_cost"),
    [
        (np.arange(5.0)[None] - 2, 0.5, -1.0),  # one row
        (np.arange(5.0)[:, None] - 2, -0.5, 1.0),  # one column
        (sp.csr_matrix((4, 3)), np.arange(4.0), -np.arange(3.0)),  # no pair allowed
        (sp.csr_matrix(-1.5 * np.eye(4, 5)), 1.0, 1.0),  # a sparse diagonal
        (np.full((3, 3), 2.0), 1.0, 1.0),  # every matching ties
    ],
)
def test_degenerate_shapes_and_patterns_list_every_matching(
    cost: np.ndarray | sp.csr_matrix, row_cost: float | np.ndarray,
    col_cost: float | np.ndarray,
) -> None:
    pattern = cost
    if sp.issparse(cost):
        stored = cost.tocoo()
        pattern = np.full(cost.shape, np.inf)
        pattern[stored.row, stored.col] = stored.data
    n, m = pattern.shape
    rows, cols = _lines(row_cost, n), _lines(col_cost, m)
    every = len(list(_every_matching(pattern, rows, cols)))
    for maximize in (False, True):
        result = ranked_matchings(cost, every + 5, row_cost=row_cost, col_cost=col_cost,
                                  maximize=maximize)
        _check(pattern, rows, cols, result,
               _brute_costs(pattern, rows, cols, every + 5, maximize), every + 5)


def _block(model: pyo.ConcreteModel, name: str, pairs: list[tuple[int, int]],
           row_sense: Callable, col_sense: Callable) -> pyo.Var:
    """Binary x over `pairs`, one constraint per row and per column of the pairs."""
    x = pyo.Var(pairs, domain=pyo.Binary)
    model.add_component(name, x)
    row_ids = sorted({i for i, _ in pairs})
    col_ids = sorted({j for _, j in pairs})
    model.add_component(f"{name}_row", pyo.Constraint(row_ids, rule=lambda _, i: row_sense(
        sum(x[p] for p in pairs if p[0] == i))))
    model.add_component(f"{name}_col", pyo.Constraint(col_ids, rule=lambda _, j: col_sense(
        sum(x[p] for p in pairs if p[1] == j))))
    return x


_SENSES: dict[str, Callable] = {
    "<=": lambda e: e <= 1,
    "-": lambda e: -e >= -1,  # sum(x) <= 1 written with a negative coefficient
    "2": lambda e: 2 * e <= 2,
    "==": lambda e: e == 1,
    ">=": lambda e: e >= 1,
}
# (row sense, column sense, columns minus rows): matchings, square and rectangular
# assignments (== rows, <= columns, or <= rows beside fewer == columns)
_KINDS = [("<=", "<=", None), ("-", "-", None), ("2", "<=", None), ("==", "==", 0),
          ("==", "<=", 2), ("<=", "==", -2), (">=", "==", 0)]


def _random_model(rng: np.random.Generator) -> pyo.ConcreteModel:
    """One to three blocks of random kinds (a matching in each model), random sparse
    patterns, some variables fixed at 0 or 1, an objective that may maximize, carry a
    constant or be missing."""
    model = pyo.ConcreteModel()
    terms = []
    kinds = [_KINDS[int(rng.integers(3))]] + [
        _KINDS[int(rng.integers(len(_KINDS)))] for _ in range(int(rng.integers(0, 3)))]
    for b, (row_sense, col_sense, extra) in enumerate(kinds):
        n = int(rng.integers(1, 5))
        m = int(rng.integers(1, 5)) if extra is None else max(n + extra, 1)
        n = n if extra is None or extra >= 0 else m - extra
        allowed = rng.random((n, m)) < rng.uniform(0.4, 1.0)
        if extra is not None:  # every row of the short side can be met
            short, long_ = min(n, m), max(n, m)
            picks = rng.permutation(long_)[:short]
            allowed[(np.arange(short), picks) if n <= m else (picks, np.arange(short))] = True
        pairs = [(i, j) for i in range(n) for j in range(m) if allowed[i, j]] or [(0, 0)]
        x = _block(model, f"x{b}", pairs, _SENSES[row_sense], _SENSES[col_sense])
        terms += [(float(rng.integers(-4, 5)), x[p]) for p in pairs]
        if rng.random() < 0.3 and row_sense != ">=":
            x[pairs[int(rng.integers(len(pairs)))]].fix(int(rng.integers(2)))
    objective = int(rng.integers(4))
    if objective:
        model.obj = pyo.Objective(
            expr=sum(c * v for c, v in terms) + float(rng.integers(-5, 6)),
            sense=pyo.maximize if objective == 2 else pyo.minimize)
    return model


def _assert_lap_ranks_as_scip(model: pyo.ConcreteModel, k: int) -> None:
    """k_best by the LAP path equals SCIP's: objectives (the count alone without an
    objective), feasibility and distinctness of every solution loaded, infeasibility;
    `solve(solver="lap")`'s single optimum agrees."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    by_scip = k_best(model, k=k)
    by_lap = k_best(model, k=k, solver="lap")
    assert by_lap.proven
    scip_values = [s.objective for s in by_scip.solutions]
    lap_values = [s.objective for s in by_lap.solutions]
    assert len(lap_values) == len(scip_values)
    if objectives:
        np.testing.assert_allclose(lap_values, scip_values, rtol=1e-9, atol=1e-9)
    assert (by_lap.result.status.value == "infeasible") == (not scip_values)
    seen = set()
    for solution in by_lap.solutions:
        solution.load()
        assert infeasibilities(model) == {}
        if objectives:
            assert np.isclose(pyo.value(objectives[0]), solution.objective)
        seen.add(tuple(round(v.value) for v in model.component_data_objects(pyo.Var)))
    assert len(seen) == len(by_lap.solutions)
    if lap_values and objectives:
        single = solve(model, solver="lap")
        assert np.isclose(single.objective, lap_values[0])
        assert infeasibilities(model) == {}


@pytest.mark.parametrize("seed", range(4))
def test_k_best_with_lap_equals_scip_on_random_matching_models(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    for _ in range(25):
        model = _random_model(rng)
        if all(v.fixed for v in model.component_data_objects(pyo.Var)):
            continue  # SCIP's k_best needs a free binary
        _assert_lap_ranks_as_scip(model, int(rng.integers(1, 30)))


def _matching_model(n: int, m: int, seed: int, maximize: bool = False) -> pyo.ConcreteModel:
    """A dense n x m matching with integer costs and an objective constant."""
    rng = np.random.default_rng(seed)
    model = pyo.ConcreteModel()
    x = _block(model, "x", [(i, j) for i in range(n) for j in range(m)], _SENSES["<="],
               _SENSES["-"])
    model.obj = pyo.Objective(expr=sum(float(rng.integers(-4, 5)) * x[p] for p in x) + 2.5,
                              sense=pyo.maximize if maximize else pyo.minimize)
    return model


def test_k_best_with_lap_on_fixed_and_infeasible_matching_models() -> None:
    both = _matching_model(3, 4, 1)
    both.x[0, 0].fix(1)
    both.x[1, 2].fix(0)
    _assert_lap_ranks_as_scip(both, 40)
    clash = _matching_model(3, 4, 2, maximize=True)
    clash.x[0, 0].fix(1)
    clash.x[0, 1].fix(1)  # row 0 holds two: no solution
    _assert_lap_ranks_as_scip(clash, 5)
    assert k_best(clash, 5, solver="lap").result.status.value == "infeasible"
    squeezed = _matching_model(2, 3, 3)
    y = _block(squeezed, "y", [(i, j) for i in range(3) for j in range(2)], _SENSES["=="],
               _SENSES["<="])  # three rows must each get one of two columns
    squeezed.obj.set_value(squeezed.obj.expr + y[0, 0])
    _assert_lap_ranks_as_scip(squeezed, 5)
    assert k_best(squeezed, 5, solver="lap").result.status.value == "infeasible"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cost": np.array([[np.nan, 1.0]])}, r"cost\[0, 0\] is nan"),
        ({"cost": np.array([[1.0, np.inf]])}, r"cost\[0, 1\] is inf"),
        ({"cost": sp.csr_matrix(np.array([[np.inf, 1.0]]))}, "non-finite value inf"),
        ({"cost": np.ones((0, 3))}, "cost matrix is empty"),
        ({"cost": sp.csr_matrix((2, 0))}, "cost matrix is empty"),
        ({"cost": [1.0, 2.0]}, "must be 2-D"),
        ({"row_cost": [1.0, 2.0]}, "row_cost must be a number or 3 numbers"),
        ({"col_cost": [[1.0] * 4]}, "col_cost must be a number or 4 numbers"),
        ({"row_cost": "cheap"}, "row_cost must be a number"),
        ({"row_cost": None}, "row_cost must be a number"),
        ({"col_cost": [1.0, "a", 2.0, 3.0]}, "col_cost must be a number"),
        ({"col_cost": True}, "col_cost must be a number"),
        ({"row_cost": 1j}, "row_cost must be a number"),
        ({"row_cost": [1.0, np.nan, 0.0]}, r"row_cost\[1\] is nan"),
        ({"col_cost": -np.inf}, "col_cost is -inf"),
        ({"k": 0}, "k must be a positive integer"),
        ({"k": 2.0}, "k must be a positive integer"),
        ({"k": True}, "k must be a positive integer"),
        ({"maximize": 1}, "maximize must be True or False"),
        ({"maximize": None}, "maximize must be True or False"),
        ({"time_limit": -1.0}, "time_limit must be positive"),
    ],
)
def test_bad_input_is_named(kwargs: dict, message: str) -> None:
    kwargs = {"cost": np.ones((3, 4)), **kwargs}
    with pytest.raises(InputError, match=message):
        ranked_matchings(**kwargs)


def test_one_line_cost_for_several_lines_is_refused_not_broadcast() -> None:
    # [5.0] for three rows read as 5.0 for each: the message asks for 1 value or 3
    with pytest.raises(InputError, match="row_cost must be a number or 3 numbers"):
        ranked_matchings(np.ones((3, 4)), row_cost=[5.0])
    with pytest.raises(InputError, match="col_cost must be a number or 4 numbers"):
        ranked_matchings(np.ones((3, 4)), col_cost=np.array([5.0]))


def test_integer_line_costs_float64_would_round_are_refused() -> None:
    # as for the cost matrix: 2**53 + 1 would be ranked as 2**53
    with pytest.raises(InputError, match="rounds to"):
        ranked_matchings(np.ones((2, 2)), row_cost=np.int64(2**53 + 1))
    with pytest.raises(InputError, match="rounds to"):
        ranked_matchings(np.ones((2, 2)), col_cost=np.array([0, 2**60 + 1]))


@pytest.mark.parametrize("maximize", [False, True])
def test_costs_whose_sums_overflow_are_refused_not_dropped(maximize: bool) -> None:
    # every matching but the two perfect ones sums two line costs of 1e308: float64
    # overflows to inf, and the ranking dropped them and claimed "exhausted"
    sign = -1.0 if maximize else 1.0
    with pytest.raises(InputError, match="overflow"):
        ranked_matchings(np.ones((2, 2)), 10, row_cost=sign * 1e308, col_cost=sign * 1e308,
                         maximize=maximize)


@pytest.mark.parametrize("maximize", [False, True])
def test_costs_just_inside_float64_still_rank_every_matching(maximize: bool) -> None:
    sign = -1.0 if maximize else 1.0
    c, rows, cols = np.full((2, 2), sign * 1e306), np.full(2, sign * 2e306), np.full(2, 1e306)
    result = ranked_matchings(c, 10, row_cost=rows, col_cost=cols, maximize=maximize)
    _check(c, rows, cols, result, _brute_costs(c, rows, cols, 10, maximize), 10)
