"""ranked_assignments (Murty): the k best costs equal brute force and SCIP's k_best on random,
tied, negative, rectangular, sparse and maximized matrices; solutions are distinct and
feasible; a failed certificate re-solves cold and stays exact; limits return a prefix."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coplug.formulations.assignment import assignment_model, generate
from coplug.plugins import infeasibilities, k_best
from coplug.plugins.errors import InputError, UnsupportedModelError
from coplug.plugins.lap import RankedAssignments, ranked, ranked_assignments, ranked_matchings

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _matrices(max_side: int = 5):
    """Small matrices: narrow integer ranges (many ties, negatives) and wide floats."""
    shapes = st.tuples(st.integers(1, max_side), st.integers(1, max_side))
    ints = shapes.flatmap(lambda s: arrays(np.int64, s, elements=st.integers(-3, 3)))
    floats = shapes.flatmap(
        lambda s: arrays(np.float64, s, elements=st.floats(-1e3, 1e3, allow_nan=False)))
    return st.one_of(ints.map(lambda a: a.astype(np.float64)), floats)


def _all_assignments(c: np.ndarray) -> list[tuple[float, tuple[tuple[int, int], ...]]]:
    """Every assignment of the short side of `c` (inf entries forbidden), with its cost."""
    n, m = c.shape
    out = []
    if n <= m:
        for cols in itertools.permutations(range(m), n):
            pairs = tuple(zip(range(n), cols, strict=True))
            out.append((sum(c[i, j] for i, j in pairs), pairs))
    else:
        for rows in itertools.permutations(range(n), m):
            pairs = tuple(sorted(zip(rows, range(m), strict=True)))
            out.append((sum(c[i, j] for i, j in pairs), pairs))
    return [(cost, pairs) for cost, pairs in out if np.isfinite(cost)]


def _check(c: np.ndarray, result: RankedAssignments, k: int, maximize: bool,
           fallbacks: bool = False) -> None:
    """Costs equal brute force's k best; each solution distinct, feasible and priced right;
    every cell certified as solved warm (no cold re-solve) unless `fallbacks`."""
    assert fallbacks or result.info["fallbacks"] == 0
    every = _all_assignments(c)
    expected = sorted((cost for cost, _ in every), reverse=maximize)[:k]
    assert len(result.solutions) == len(expected)
    np.testing.assert_allclose(result.costs, expected, rtol=1e-9, atol=1e-9)
    assert result.status == ("k_found" if len(every) >= k else "exhausted")
    assert result.complete
    valid = {pairs for _, pairs in every}
    seen = set()
    for s in result.solutions:
        pairs = tuple(zip(s.row_ind.tolist(), s.col_ind.tolist(), strict=True))
        assert pairs in valid and pairs not in seen
        seen.add(pairs)
        assert np.isclose(s.cost, sum(c[i, j] for i, j in pairs), rtol=1e-12, atol=1e-9)


@SETTINGS
@given(_matrices(), st.integers(1, 130), st.booleans())
def test_k_best_costs_equal_brute_force(c: np.ndarray, k: int, maximize: bool) -> None:
    _check(c, ranked_assignments(c, k, maximize=maximize), k, maximize)


@SETTINGS
@given(_matrices(), st.data())
def test_sparse_patterns_equal_brute_force(c: np.ndarray, data: st.DataObject) -> None:
    mask = data.draw(arrays(np.bool_, c.shape))
    rows, cols = np.nonzero(mask)
    csr = sp.csr_matrix((c[rows, cols], (rows, cols)), shape=c.shape)
    forbidden = np.where(mask, c, np.inf)
    if not _all_assignments(forbidden):
        with pytest.raises(InputError, match="infeasible"):
            ranked_assignments(csr, 5)
        return
    _check(forbidden, ranked_assignments(csr, 40), 40, False)


def test_every_assignment_is_enumerated_once_when_k_exceeds_them() -> None:
    c = generate("uniform", 5, seed=3)
    result = ranked_assignments(c, 1000)
    assert result.status == "exhausted" and len(result.solutions) == 120
    assert len({tuple(s.col_ind) for s in result.solutions}) == 120


@pytest.mark.parametrize("generator", ["uniform", "geometric", "low_rank", "transport"])
def test_costs_equal_scip_k_best_on_the_pyomo_model(generator: str) -> None:
    c = np.round(generate(generator, 7, seed=11) * 4)  # rounded: ties across the ranking
    expected = [s.objective for s in k_best(assignment_model(c), k=25).solutions]
    np.testing.assert_allclose(ranked_assignments(c, 25).costs, expected, atol=1e-9)


def test_a_failed_certificate_resolves_the_cell_cold_and_stays_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = np.round(generate("uniform", 6, seed=5) * 5)
    calls = []
    real = ranked.murty.cell_gap

    def failing(*args):
        calls.append(1)
        return real(*args) + (1.0 if len(calls) % 2 else 0.0)

    monkeypatch.setattr(ranked.murty, "cell_gap", failing)
    result = ranked_assignments(c, 60)
    assert result.info["fallbacks"] > 10
    _check(c, result, 60, False, fallbacks=True)


def test_rectangular_results_are_in_the_callers_orientation() -> None:
    c = generate("uniform", 3, m=6, seed=2).T  # 6 x 3: every column gets a row
    for s in ranked_assignments(c, 20).solutions:
        assert np.all(np.diff(s.row_ind) > 0) and sorted(s.col_ind.tolist()) == [0, 1, 2]
        assert np.isclose(c[s.row_ind, s.col_ind].sum(), s.cost)


def test_time_limit_returns_a_prefix_of_the_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    c = generate("uniform", 30, seed=1)
    full = ranked_assignments(c, 40)
    clock = iter(np.arange(0.0, 1e6, 0.01))
    monkeypatch.setattr(ranked.time, "perf_counter", lambda: float(next(clock)))
    limited = ranked_assignments(c, 40, time_limit=0.5)
    assert limited.status == "time_limit" and not limited.complete
    assert 0 < len(limited.solutions) < 40
    np.testing.assert_allclose(limited.costs, full.costs[: len(limited.solutions)])


def test_ctrl_c_returns_the_solutions_found_so_far(monkeypatch: pytest.MonkeyPatch) -> None:
    c = generate("geometric", 20, seed=4)
    full = ranked_assignments(c, 30)
    real = ranked._solve_child
    calls = []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == full.info["solved_cells"] // 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(ranked, "_solve_child", interrupted)
    result = ranked_assignments(c, 30)
    assert result.status == "interrupted" and 0 < len(result.solutions) < 30
    np.testing.assert_allclose(result.costs, full.costs[: len(result.solutions)])


@pytest.mark.parametrize(
    ("cost", "kwargs", "message"),
    [
        (np.ones((3, 3)), {"k": 0}, "k must be a positive integer"),
        (np.ones((3, 3)), {"k": 2.5}, "k must be a positive integer"),
        (np.ones((3, 3)), {"k": True}, "k must be a positive integer"),
        (np.ones((3, 3)), {"maximize": "yes"}, "maximize must be True or False"),
        (np.ones((3, 3)), {"time_limit": -1}, "time_limit must be positive"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), {}, r"cost\[0, 1\] is nan"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), {}, "scipy.sparse matrix to forbid pairs"),
        (np.ones((0, 3)), {}, "empty"),
        (np.ones(3), {}, "must be 2-D"),
        (sp.csr_matrix((2, 2)), {}, "infeasible"),
    ],
)
def test_bad_input_is_named(cost, kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        ranked_assignments(cost, **kwargs)


def test_costs_sharing_a_huge_offset_keep_their_ranking() -> None:
    for seed in range(5):
        small = np.random.default_rng(seed).integers(0, 1000, size=(6, 6)).astype(np.float64)
        result = ranked_assignments(small + 2.0**50, 60)
        expected = ranked_assignments(small, 60)
        assert result.info["fallbacks"] == 0
        np.testing.assert_array_equal(np.array(result.costs) - 6 * 2.0**50, expected.costs)
        _check(small, expected, 60, False)


def _assignment(cost: np.ndarray, col_sense: str = "==", maximize: bool = False,
                allowed: np.ndarray | None = None) -> pyo.ConcreteModel:
    """x[i, j] over the allowed pairs, each row == 1, each column `col_sense` 1."""
    n, m = cost.shape
    allowed = np.ones(cost.shape, bool) if allowed is None else allowed
    model = pyo.ConcreteModel()
    model.P = pyo.Set(initialize=[(i, j) for i in range(n) for j in range(m) if allowed[i, j]])
    model.x = pyo.Var(model.P, domain=pyo.Binary)
    model.row = pyo.Constraint(range(n), rule=lambda b, i: sum(
        b.x[i, j] for j in range(m) if allowed[i, j]) == 1)
    col = {"==": lambda e: e == 1, "<=": lambda e: e <= 1}[col_sense]
    model.col = pyo.Constraint(range(m), rule=lambda b, j: col(sum(
        b.x[i, j] for i in range(n) if allowed[i, j])))
    model.obj = pyo.Objective(expr=sum(cost[p] * model.x[p] for p in model.P),
                              sense=pyo.maximize if maximize else pyo.minimize)
    return model


@pytest.mark.parametrize(
    ("shape", "col_sense", "maximize", "density", "fix"),
    [((6, 6), "==", False, 1.0, False), ((4, 6), "<=", True, 1.0, False),
     ((6, 6), "==", False, 0.6, False), ((6, 6), "==", True, 1.0, True)],
)
def test_k_best_with_lap_equals_scip_on_pyomo_models(
    shape: tuple[int, int], col_sense: str, maximize: bool, density: float, fix: bool,
) -> None:
    rng = np.random.default_rng(sum(shape))
    cost = rng.integers(0, 6, size=shape).astype(float)
    allowed = rng.random(shape) < density
    allowed[np.arange(shape[0]), np.arange(shape[0])] = True  # feasible
    model = _assignment(cost, col_sense, maximize, allowed)
    if fix:
        model.x[0, 0].fix(1)
    by_scip = [s.objective for s in k_best(model, k=40).solutions]
    ranked_ = k_best(model, k=40, solver="lap")
    assert ranked_.proven and ranked_.result.status.value == "optimal"
    np.testing.assert_allclose([s.objective for s in ranked_.solutions], by_scip)
    seen = set()
    for solution in ranked_.solutions:
        solution.load()
        assert infeasibilities(model) == {}
        assert np.isclose(pyo.value(model.obj), solution.objective)
        seen.add(tuple(round(model.x[p].value) for p in model.P))
    assert len(seen) == len(ranked_.solutions)
    ranked_.solutions[0].load()


@pytest.mark.parametrize("maximize", [False, True])
def test_k_best_with_lap_ranks_matchings_and_mixed_models_as_scip_does(maximize: bool) -> None:
    rng = np.random.default_rng(4)
    model = pyo.ConcreteModel()
    # a sparse 4 x 5 matching block (<= 1 both sides) beside a 3 x 3 assignment block
    match_pairs = [(i, j) for i in range(4) for j in range(5) if rng.random() < 0.6]
    model.y = pyo.Var(match_pairs, domain=pyo.Binary)
    model.x = pyo.Var(range(3), range(3), domain=pyo.Binary)
    model.y_row = pyo.Constraint(range(4), rule=lambda b, i: sum(
        b.y[p] for p in match_pairs if p[0] == i) <= 1)
    model.y_col = pyo.Constraint(range(5), rule=lambda b, j: sum(
        b.y[p] for p in match_pairs if p[1] == j) <= 1)
    model.x_row = pyo.Constraint(range(3), rule=lambda b, i: sum(b.x[i, :]) == 1)
    model.x_col = pyo.Constraint(range(3), rule=lambda b, j: sum(b.x[:, j]) == 1)
    model.obj = pyo.Objective(
        expr=sum(float(rng.integers(-4, 5)) * model.y[p] for p in match_pairs)
        + sum(float(rng.integers(0, 6)) * model.x[i, j] for i in range(3) for j in range(3)),
        sense=pyo.maximize if maximize else pyo.minimize)
    by_scip = [s.objective for s in k_best(model, k=40).solutions]
    ranked_ = k_best(model, k=40, solver="lap")
    assert ranked_.proven
    np.testing.assert_allclose([s.objective for s in ranked_.solutions], by_scip)
    seen = set()
    for solution in ranked_.solutions:
        solution.load()
        assert infeasibilities(model) == {}
        seen.add(tuple(round(v.value) for v in model.component_data_objects(pyo.Var)))
    assert len(seen) == len(ranked_.solutions)


def test_k_best_with_lap_names_what_it_cannot_rank() -> None:
    cost = np.arange(9.0).reshape(3, 3)
    parallel = _assignment(cost)
    parallel.y = pyo.Var(domain=pyo.Binary)
    parallel.row[0].set_value(sum(parallel.x[0, j] for j in range(3)) + parallel.y == 1)
    parallel.col[0].set_value(sum(parallel.x[i, 0] for i in range(3)) + parallel.y == 1)
    with pytest.raises(UnsupportedModelError, match="share a pair"):
        k_best(parallel, k=3, solver="lap")
    with pytest.raises(InputError, match="no solver options"):
        k_best(_assignment(cost), k=3, solver="lap", presolve=False)
    infeasible = _assignment(cost)
    for j in range(3):
        infeasible.x[0, j].fix(0)
    outcome = k_best(infeasible, k=3, solver="lap")
    assert outcome.solutions == [] and outcome.proven
    assert outcome.result.status.value == "infeasible"


def test_stopping_child_searches_at_the_queues_next_value_keeps_the_ranking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = generate("uniform", 60, seed=9)
    capped = ranked_assignments(c, 80)
    monkeypatch.setattr(ranked, "_cap", lambda *args: np.inf)
    uncapped = ranked_assignments(c, 80)
    assert capped.info["capped"] > 0 and uncapped.info["capped"] == 0
    np.testing.assert_allclose(capped.costs, uncapped.costs, rtol=1e-12)


def test_ties_do_not_restart_a_childs_search_forever(monkeypatch: pytest.MonkeyPatch) -> None:
    # low-rank costs tie: a path length of 8.9e-16 vanished into a cost near 362, so the
    # stopped child came back under the same bound and was searched again without end
    real, calls = ranked._solve_child, []

    def counted(*args):
        calls.append(1)
        assert len(calls) < 50_000, "child searches restart without end"
        return real(*args)

    monkeypatch.setattr(ranked, "_solve_child", counted)
    result = ranked_assignments(generate("low_rank", 100, seed=0), 100)
    assert result.status == "k_found" and result.info["fallbacks"] == 0


def test_costs_whose_sums_overflow_are_refused_not_dropped() -> None:
    # the assignments through 1e308 sum to inf; they were dropped and 'exhausted' claimed
    with pytest.raises(InputError, match="overflow float64"):
        ranked_assignments(np.array([[1.0, 1e308], [1e308, 1.0]]), 5)


@pytest.mark.parametrize("maximize", [False, True])
def test_reported_costs_are_in_order_even_where_round_off_ties_them(maximize: bool) -> None:
    # decimal costs: the ranking's working sums (offset, sign, padding) and the reported
    # ones round differently, and ties came back as -1.9000000000000001 before -1.9
    rng = np.random.default_rng(0)
    for _ in range(60):
        c = rng.integers(-30, 30, size=(4, 5)) / 10.0
        costs = ranked_assignments(c, 60, maximize=maximize).costs
        assert costs == sorted(costs, reverse=maximize)
        costs = ranked_matchings(c, 60, row_cost=0.1, col_cost=-0.2, maximize=maximize).costs
        assert costs == sorted(costs, reverse=maximize)


def test_an_infeasible_block_beside_a_matching_is_named_in_the_models_terms() -> None:
    model = pyo.ConcreteModel()
    model.y = pyo.Var(range(2), range(2), domain=pyo.Binary)
    model.y_row = pyo.Constraint(range(2), rule=lambda b, i: sum(b.y[i, :]) <= 1)
    model.y_col = pyo.Constraint(range(2), rule=lambda b, j: sum(b.y[:, j]) <= 1)
    pairs = [(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)]  # rows 0 and 1 both need column 0
    model.x = pyo.Var(pairs, domain=pyo.Binary)
    model.x_row = pyo.Constraint(range(3), rule=lambda b, i: sum(
        b.x[p] for p in pairs if p[0] == i) == 1)
    model.x_col = pyo.Constraint(range(3), rule=lambda b, j: sum(
        b.x[p] for p in pairs if p[1] == j) == 1)
    model.obj = pyo.Objective(expr=sum(model.y[p] for p in model.y)
                              + sum(model.x[p] for p in pairs))
    assert k_best(model, k=3).result.status.value == "infeasible"  # SCIP agrees
    outcome = k_best(model, k=3, solver="lap")
    assert outcome.solutions == [] and outcome.proven
    assert outcome.result.status.value == "infeasible"
    assert "3 rows and 3 columns must each be matched" in outcome.result.extra["reason"]


def test_k_best_with_lap_refuses_a_continuous_assignment_model():
    """x = 0.5 everywhere is a solution of the LP at objective 3 that no ranking of
    assignments holds: it ranked [2, 4] and called that complete."""
    import pyomo.environ as pyo

    from coplug.plugins import UnsupportedModelError, k_best, solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), range(2), bounds=(0, 1))
    m.r = pyo.Constraint(range(2), rule=lambda m, i: sum(m.x[i, j] for j in range(2)) == 1)
    m.c = pyo.Constraint(range(2), rule=lambda m, j: sum(m.x[i, j] for i in range(2)) == 1)
    m.o = pyo.Objective(expr=m.x[0, 0] + 2 * m.x[0, 1] + 2 * m.x[1, 0] + m.x[1, 1])
    for solver in ("lap", "scip"):
        with pytest.raises(UnsupportedModelError, match="k_best needs binary variables"):
            k_best(m, 3, solver=solver)
    for var in m.x.values():
        var.domain = pyo.Binary
    best = k_best(m, 3, solver="lap")
    assert [s.objective for s in best.solutions] == [2.0, 4.0] and best.proven
    assert solve(m).objective == pytest.approx(2.0)
