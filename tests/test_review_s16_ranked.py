"""Review of ranked_assignments (Murty) and k_best(solver="lap"): costs equal brute force
(small) and an independent cold Murty over scipy's linear_sum_assignment (N up to 150) across
ties, offsets, magnitudes, dtypes, orientations, maximize and every sparse format; limits
and Ctrl-C give a prefix of the ranking; bad input is named; Pyomo models agree with SCIP."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from coplug.plugins import infeasibilities, k_best
from coplug.plugins.errors import InputError, TimeLimitError
from coplug.plugins.lap import RankedAssignments, cell_costs, ranked, ranked_assignments

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SPARSE_FORMATS = ("csr", "csc", "coo", "lil", "dok", "bsr", "csr_array", "coo_array",
                  "csc_array", "lil_array")


def _values(rng: np.random.Generator, shape: tuple[int, int], kind: str) -> np.ndarray:
    """Costs of one hard family: ties, negatives, mixed magnitudes, shared offsets, dtypes."""
    families: dict[str, Callable[[], np.ndarray]] = {
        "ties": lambda: rng.integers(-2, 3, shape).astype(float),
        "binary": lambda: rng.integers(0, 2, shape).astype(float),
        "negative": lambda: -rng.random(shape) * 100,
        "magnitudes": lambda: (np.sign(rng.standard_normal(shape))
                               * 10 ** rng.uniform(-9, 12, shape)),
        "int_2_40": lambda: rng.integers(0, 50, shape) + 2.0**40,
        "int_2_52": lambda: rng.integers(0, 50, shape) + 2.0**52,
        "int_2_52_wide": lambda: rng.integers(0, 2**33, shape) + 2.0**52,
        "float_1e9": lambda: rng.random(shape) + 1e9,
        "negative_offset": lambda: rng.integers(0, 20, shape) - 2.0**45,
        "float32": lambda: (rng.random(shape) * 10).astype(np.float32),
        "int64": lambda: rng.integers(-5, 6, shape),
        "int64_2_50": lambda: rng.integers(0, 9, shape) + 2**50,
        "bimodal": lambda: np.where(rng.random(shape) < 0.5, rng.integers(0, 3, shape) * 1e-12,
                                    1e6 + rng.integers(0, 3, shape)),
    }
    return families[kind]()


KINDS = ("ties", "binary", "negative", "magnitudes", "int_2_40", "int_2_52", "int_2_52_wide",
         "float_1e9", "negative_offset", "float32", "int64", "int64_2_50", "bimodal")


def _as_format(values: np.ndarray, mask: np.ndarray, fmt: str) -> sp.spmatrix | sp.sparray:
    """The allowed (masked) entries stored in scipy format `fmt` (BSR in 1x1 blocks, as
    larger blocks store their zeros as allowed pairs)."""
    rows, cols = np.nonzero(mask)
    coo = sp.coo_matrix((values[rows, cols], (rows, cols)), shape=values.shape)
    if fmt == "bsr":
        return coo.tobsr(blocksize=(1, 1))
    if fmt.endswith("_array"):
        return getattr(sp, fmt)(coo)
    return coo.asformat(fmt)


def _brute_costs(c: np.ndarray) -> list[float]:
    """Every assignment's cost of min-form `c` (inf = forbidden), ascending."""
    short = c if c.shape[0] <= c.shape[1] else c.T
    n, m = short.shape
    costs = (sum(short[i, j] for i, j in enumerate(cols))
             for cols in itertools.permutations(range(m), n))
    return sorted(x for x in costs if np.isfinite(x))


def _cold(c: np.ndarray) -> tuple[float, np.ndarray] | None:
    """Optimal cost and columns of `c` (inf = forbidden) by scipy, None when infeasible."""
    try:
        rows, cols = linear_sum_assignment(c)
    except ValueError:
        return None
    total = c[rows, cols].sum()
    return (total, cols) if np.isfinite(total) else None


def _murty_costs(c: np.ndarray, k: int) -> list[float]:
    """The k best costs of min-form `c` (inf = forbidden) by textbook Murty: every cell a
    full matrix with its forbidden pairs set to inf and forced rows reduced to their pair,
    solved from scratch by scipy."""
    c = c if c.shape[0] <= c.shape[1] else c.T
    first = _cold(c)
    if first is None:
        return []
    counter = itertools.count()
    queue = [(first[0], next(counter), c, first[1])]
    costs: list[float] = []
    while queue and len(costs) < k:
        cost, _, cell, cols = heapq.heappop(queue)
        costs.append(cost)
        cell = cell.copy()
        for i in range(c.shape[0]):
            if np.isfinite(cell[i]).sum() == 1 and np.isfinite(cell[:, cols[i]]).sum() == 1:
                continue  # forced already
            child = cell.copy()
            child[i, cols[i]] = np.inf
            solved = _cold(child)
            if solved is not None:
                heapq.heappush(queue, (solved[0], next(counter), child, solved[1]))
            kept = cell[i, cols[i]]
            cell[i, :] = np.inf
            cell[:, cols[i]] = np.inf
            cell[i, cols[i]] = kept
    return costs


def _check(result: RankedAssignments, allowed: np.ndarray, expected: list[float], k: int,
           exhausted: bool) -> None:
    """Costs equal the reference's (caller's sense); each solution distinct, feasible, rows
    sorted, priced as the sum of its entries; no cold re-solve."""
    assert result.info["fallbacks"] == 0
    assert len(result.solutions) == len(expected)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(result.costs, expected, rtol=1e-9, atol=1e-9 * scale)
    assert result.status == ("exhausted" if exhausted else "k_found")
    short = min(allowed.shape)
    seen = set()
    for s in result.solutions:
        assert np.all(np.diff(s.row_ind) > 0) and len(s.row_ind) == short
        assert len(set(s.col_ind.tolist())) == short
        entries = allowed[s.row_ind, s.col_ind]
        assert np.all(np.isfinite(entries))
        assert np.isclose(s.cost, entries.sum(), rtol=1e-12, atol=1e-12 * scale)
        key = (tuple(s.row_ind.tolist()), tuple(s.col_ind.tolist()))
        assert key not in seen
        seen.add(key)


def _case(rng: np.random.Generator, shape: tuple[int, int], fmt: str | None,
          density: float = 0.6) -> tuple[object, np.ndarray]:
    """(cost as passed, its entries in float64 with forbidden pairs inf)."""
    values = _values(rng, shape, KINDS[rng.integers(len(KINDS))])
    if fmt is None:
        return values, values.astype(np.float64)
    mask = rng.random(shape) < density
    short = min(shape)
    perm = rng.permutation(max(shape))[:short]
    if shape[0] <= shape[1]:
        mask[np.arange(short), perm] = True
    else:
        mask[perm, np.arange(short)] = True
    return _as_format(values, mask, fmt), np.where(mask, values.astype(np.float64), np.inf)


def _min_form(allowed: np.ndarray, maximize: bool) -> np.ndarray:
    """The min-cost matrix of the caller's costs (forbidden pairs stay inf)."""
    return np.where(np.isfinite(allowed), -allowed if maximize else allowed, np.inf)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.tuples(st.integers(1, 6), st.integers(1, 6)),
       st.sampled_from([None, None, *SPARSE_FORMATS]), st.booleans(),
       st.sampled_from([1, 2, 5, 30, 1000]))
def test_small_rankings_equal_brute_force(seed: int, shape: tuple[int, int], fmt: str | None,
                                          maximize: bool, k: int) -> None:
    rng = np.random.default_rng(seed)
    cost, allowed = _case(rng, shape, fmt)
    every = _brute_costs(_min_form(allowed, maximize))
    expected = [-x if maximize else x for x in every[:k]]
    result = ranked_assignments(cost, k, maximize=maximize)
    _check(result, allowed, expected, k, exhausted=len(every) < k)


@pytest.mark.parametrize("seed", range(6))
def test_sparse_maximize_ranks_only_the_allowed_pairs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    fmt = SPARSE_FORMATS[seed % len(SPARSE_FORMATS)]
    cost, allowed = _case(rng, (5, 4 + seed % 3), fmt, density=0.5)
    every = _brute_costs(_min_form(allowed, True))
    result = ranked_assignments(cost, 200, maximize=True)
    _check(result, allowed, [-x for x in every[:200]], 200, exhausted=len(every) < 200)


def test_dia_patterns_equal_brute_force() -> None:
    rng = np.random.default_rng(7)
    for shape in [(4, 4), (3, 6), (6, 3), (5, 5)]:
        offsets = [-1, 0, 2]
        dia = sp.dia_matrix((rng.integers(-3, 4, (3, shape[1])).astype(float), offsets),
                            shape=shape)
        allowed = np.full(shape, np.inf)  # every in-bounds position of the diagonals
        for d, offset in enumerate(offsets):
            cols = np.arange(max(offset, 0), min(shape[1], shape[0] + offset))
            allowed[cols - offset, cols] = dia.data[d, cols]
        for maximize in (False, True):
            every = _brute_costs(_min_form(allowed, maximize))
            if not every:
                with pytest.raises(InputError, match="infeasible"):
                    ranked_assignments(dia, 5, maximize=maximize)
                continue
            expected = [-x if maximize else x for x in every[:50]]
            _check(ranked_assignments(dia, 50, maximize=maximize), allowed, expected, 50,
                   exhausted=len(every) < 50)


def test_seven_by_seven_exhaustion_enumerates_every_assignment_once() -> None:
    rng = np.random.default_rng(3)
    c = rng.integers(-1, 2, (7, 7)) * 1e-7 + 2.0**45
    result = ranked_assignments(c, 6000)
    _check(result, c, _brute_costs(c), 6000, exhausted=True)
    assert len(result.solutions) == 5040


@pytest.mark.parametrize("seed", range(8))
def test_larger_rankings_equal_cold_murty(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 61))
    m = n if seed % 3 == 0 else int(rng.integers(20, 61))
    fmt = (None, "csr", "coo_array", "csc")[seed % 4]
    cost, allowed = _case(rng, (n, m), fmt, density=float(rng.uniform(0.05, 0.4)))
    maximize = seed % 2 == 1
    k = 25
    expected = [-x if maximize else x for x in _murty_costs(_min_form(allowed, maximize), k)]
    _check(ranked_assignments(cost, k, maximize=maximize), allowed, expected, k,
           exhausted=len(expected) < k)


@pytest.mark.parametrize("shape", [(150, 150), (3, 40), (40, 3), (1, 30), (30, 1)])
def test_extreme_shapes_equal_cold_murty(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    c = rng.integers(0, 4, shape).astype(float)
    k = 5 if shape[0] == 150 else 60
    _check(ranked_assignments(c, k), c, _murty_costs(c, k), k, exhausted=min(shape) == 1)


def test_time_limit_still_returns_the_root_once_it_is_solved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = np.random.default_rng(0).random((8, 8))
    best = ranked_assignments(c, 1).costs
    real = ranked._root
    clock = [0.0]
    monkeypatch.setattr(ranked.time, "perf_counter", lambda: clock[0])

    def slow_root(*args: object) -> object:
        cell = real(*args)
        clock[0] += 10.0  # the root's solve alone used up the time limit
        return cell

    monkeypatch.setattr(ranked, "_root", slow_root)
    result = ranked_assignments(c, 5, time_limit=1.0)
    assert result.status == "time_limit" and result.costs == best


def test_the_root_solve_is_held_to_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    given_limits = []
    real = cell_costs.solve_lap

    def spy(*args: object, **kwargs: object) -> object:
        given_limits.append(kwargs.get("time_limit"))
        return real(*args, **kwargs)

    monkeypatch.setattr(cell_costs, "solve_lap", spy)
    ranked_assignments(np.random.default_rng(1).random((6, 9)), 3, time_limit=50.0)
    assert given_limits and all(t is not None and 0 < t <= 50.0 for t in given_limits)


@pytest.mark.parametrize("raised", [TimeLimitError("slow"), KeyboardInterrupt()])
def test_a_root_cut_short_gives_no_solutions_and_says_why(
    monkeypatch: pytest.MonkeyPatch, raised: BaseException,
) -> None:
    def stopped(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(cell_costs, "solve_lap", stopped)
    result = ranked_assignments(np.ones((3, 3)), 4, time_limit=10.0)
    want = "interrupted" if isinstance(raised, KeyboardInterrupt) else "time_limit"
    assert result.status == want and result.solutions == [] and not result.complete


@pytest.mark.parametrize("target", ["_solve_child", "_children", "_certified_or_resolved",
                                    "_forbidden_csr", "_assigned_cost"])
def test_ctrl_c_anywhere_in_the_ranking_returns_a_prefix(
    monkeypatch: pytest.MonkeyPatch, target: str,
) -> None:
    rng = np.random.default_rng(len(target))
    for _ in range(4):
        c = rng.integers(0, 4, (int(rng.integers(3, 12)), int(rng.integers(3, 12))))
        full = ranked_assignments(c, 80).costs
        real = getattr(ranked, target)
        stop = int(rng.integers(1, 30))
        counter = itertools.count(1)

        def interrupted(*args: object, real: Callable = real, stop: int = stop,
                        calls: itertools.count = counter) -> object:
            if next(calls) == stop:
                raise KeyboardInterrupt
            return real(*args)

        monkeypatch.setattr(ranked, target, interrupted)
        result = ranked_assignments(c, 80)
        monkeypatch.setattr(ranked, target, real)
        assert result.status in ("interrupted", "k_found", "exhausted")
        np.testing.assert_allclose(result.costs, full[: len(result.costs)])
        assert result.status == "interrupted" or result.costs == full


@pytest.mark.parametrize("limit", [1e-6, 1e-3, 2e-2])
def test_a_real_time_limit_returns_a_prefix(limit: float) -> None:
    c = np.random.default_rng(2).random((60, 60))
    full = ranked_assignments(c, 300).costs
    result = ranked_assignments(c, 300, time_limit=limit)
    np.testing.assert_allclose(result.costs, full[: len(result.costs)])
    assert result.status in ("time_limit", "k_found")


@pytest.mark.parametrize(
    ("cost", "kwargs", "message"),
    [
        (np.array([[1.0, -np.inf], [0.0, 1.0]]), {}, r"cost\[0, 1\] is -inf"),
        (np.ones((2, 2), dtype=bool), {}, "numeric, got dtype bool"),
        (np.ones((2, 2), dtype=complex), {}, "must be real"),
        (np.array([[1, "a"], [2, 3]], dtype=object), {}, "numeric, got dtype object"),
        (np.ones((2, 2, 2)), {}, "must be 2-D"),
        (np.float64(3.0), {}, "must be a 2-D array of numbers, got float64"),
        ([[1.0, 2.0], [3.0]], {}, "not numeric"),
        (np.ones((3, 0)), {}, "empty"),
        (sp.csr_matrix((0, 3)), {}, "empty"),
        (None, {}, "must be a 2-D array of numbers, got NoneType"),
        (np.ones((2, 2)), {"k": -1}, "k must be a positive integer"),
        (np.ones((2, 2)), {"k": 2.0}, "k must be a positive integer"),
        (np.ones((2, 2)), {"k": False}, "k must be a positive integer"),
        (np.ones((2, 2)), {"k": "3"}, "k must be a positive integer"),
        (np.ones((2, 2)), {"maximize": 1}, "maximize must be True or False"),
        (np.ones((2, 2)), {"maximize": None}, "maximize must be True or False"),
        (np.ones((2, 2)), {"time_limit": float("nan")}, "time_limit must be positive"),
        (sp.csr_matrix(np.array([[1.0, 1, 0], [1, 1, 0], [1, 1, 0]])), {}, "infeasible"),
        (sp.csr_matrix(np.array([[1.0, 0], [1, 0], [1, 0]])), {}, "column 1 has no allowed"),
        (sp.csr_matrix(([np.nan, 1.0], ([0, 1], [0, 1])), shape=(2, 2)), {}, "non-finite"),
        (sp.csr_matrix(np.eye(2, dtype=bool)), {}, "numeric, got dtype bool"),
        (sp.coo_matrix(([1.0, 2, 3], ([0, 0, 1], [0, 0, 1])), shape=(2, 2)), {}, "more than once"),
        (np.ma.masked_array(np.ones((2, 2)), mask=[[1, 0], [0, 0]]), {}, "masked"),
        (np.array([[2**63 - 1, 0], [0, 2**63 - 4]]), {}, "rounds to"),
        (np.full((2, 2), 1e308), {}, "overflow"),
    ],
)
def test_bad_input_is_named(cost: object, kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        ranked_assignments(cost, **kwargs)


def _model(cost: np.ndarray, rng: np.random.Generator, variant: str) -> pyo.ConcreteModel:
    """An assignment model over `cost` written in one of several ways (rows may be
    `-sum == -1`, `1 - sum == 0`, `>= 1`; missing and fixed pairs; objective with a
    constant, maximized, or none; inside a sub-block)."""
    n, m = cost.shape
    model = pyo.ConcreteModel()
    block = model
    if variant == "sub_block":
        model.inner = pyo.Block()
        block = model.inner
    allowed = np.ones((n, m), bool)
    if variant in ("missing", "fixed", "missing_max"):
        allowed = rng.random((n, m)) < 0.6
        allowed[np.arange(n), rng.permutation(m)[:n]] = True
    pairs = [(i, j) for i in range(n) for j in range(m) if allowed[i, j]]
    block.x = pyo.Var(pairs, domain=pyo.Binary)
    x = block.x

    def row(i: int) -> object:
        return sum(x[i, j] for j in range(m) if allowed[i, j])

    def col(j: int) -> object:
        return sum(x[i, j] for i in range(n) if allowed[i, j])

    rows = {"negated": lambda i: -row(i) == -1, "one_minus": lambda i: 1 - row(i) == 0,
            "ge_rows": lambda i: row(i) >= 1}.get(variant, lambda i: row(i) == 1)
    block.rows = pyo.Constraint(range(n), rule=lambda b, i: rows(i))
    square = n == m
    block.cols = pyo.Constraint(range(m), rule=lambda b, j: (
        (col(j) == 1 if square else col(j) <= 1) if allowed[:, j].any()
        else pyo.Constraint.Skip))
    sense = pyo.maximize if variant in ("maximize", "missing_max", "sub_block") else pyo.minimize
    terms = sum(float(cost[p]) * x[p] for p in pairs)
    if variant == "constant":
        block.obj = pyo.Objective(expr=7.5 + terms, sense=pyo.maximize)
    elif variant != "no_objective":
        block.obj = pyo.Objective(expr=terms, sense=sense)
    if variant == "fixed":
        first = next(j for j in range(m) if allowed[0, j])
        x[0, first].fix(1)
        for p in pairs:
            if p[0] != 0 and p[1] != first and rng.random() < 0.2:
                x[p].fix(0)
    return model


VARIANTS = ("plain", "negated", "one_minus", "ge_rows", "missing", "missing_max", "fixed",
            "maximize", "constant", "no_objective", "sub_block")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", range(2))
def test_k_best_lap_equals_scip_on_models_written_many_ways(variant: str, seed: int) -> None:
    rng = np.random.default_rng(seed * 100 + VARIANTS.index(variant))
    n = int(rng.integers(3, 5))
    m = n if variant == "ge_rows" or seed == 0 else n + 1
    cost = rng.integers(-3, 4, (n, m)).astype(float)
    model = _model(cost, rng, variant)
    by_scip = k_best(model, k=30)
    by_lap = k_best(model, k=30, solver="lap")
    assert by_lap.proven and len(by_lap.solutions) == len(by_scip.solutions)
    if variant != "no_objective":
        np.testing.assert_allclose([s.objective for s in by_lap.solutions],
                                   [s.objective for s in by_scip.solutions], atol=1e-9)
    seen = set()
    for solution in by_lap.solutions:
        solution.load()
        assert infeasibilities(model) == {}
        seen.add(tuple(round(v.value) for v in model.component_data_objects(pyo.Var)))
    assert len(seen) == len(by_lap.solutions)


def test_k_best_lap_counts_the_models_detection_against_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from coplug.plugins.lap import ranked_model

    model = _model(np.arange(16.0).reshape(4, 4), np.random.default_rng(0), "plain")
    clock = [0.0]

    def ticking() -> float:
        clock[0] += 1e-3
        return clock[0]

    monkeypatch.setattr(ranked_model.time, "perf_counter", ticking)
    real = ranked_model.detect_assignment

    def slow_detection(*args: object, **kwargs: object) -> object:
        clock[0] += 3.0  # reading the model alone outlasts the 2 s limit
        return real(*args, **kwargs)

    monkeypatch.setattr(ranked_model, "detect_assignment", slow_detection)
    outcome = k_best(model, k=5, solver="lap", time_limit=2.0)
    assert outcome.result.status.value == "time_limit" and not outcome.proven
