"""Session 36 review: behaviour found by probes of unusual array-likes and of exceptions
raised by the user's own code."""

from __future__ import annotations

import os
import warnings

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.assignment import assignment_model
from coplug.formulations.bbo import load, numpy_evaluator, torch_evaluator
from coplug.formulations.fair_metrics import ratio_cut
from coplug.formulations.knapsack import KnapsackInstance
from coplug.formulations.tsp import TSPInstance, tour_length
from coplug.plugins import LazyConstraints, solve
from coplug.plugins.errors import InputError
from coplug.plugins.lap import ranked_matchings, solve_lap
from coplug.plugins.pmvb import PMVBBranching

MASKED = np.ma.masked_array([[1.0, 100.0], [100.0, 1.0]], mask=[[1, 0], [0, 1]])


@pytest.mark.parametrize("call", [
    lambda: solve_lap(MASKED),
    lambda: assignment_model(MASKED),
    lambda: ranked_matchings(np.full((2, 2), 10.0), k=1, col_cost=0.0,
                             row_cost=np.ma.masked_array([0.0, 100.0], mask=[1, 0])),
    lambda: ratio_cut(MASKED, [0, 1]),
    lambda: TSPInstance(MASKED),
    lambda: KnapsackInstance([1.0, 1.0], np.ma.masked_array([5, 1], mask=[1, 0]), 1),
    lambda: tour_length(MASKED, [0, 1]),
    lambda: numpy_evaluator(load("sum(x ** 2)", dim=2))(MASKED),
])
def test_masked_arrays_are_refused_by_name(call) -> None:
    """np.asarray drops a mask: the masked-out entries counted as data (an assignment model
    solved at the two masked-out costs of 1, a ratio cut over a masked edge)."""
    with pytest.raises(InputError, match="masked arrays are not supported"):
        call()


def test_tour_length_sums_in_float64() -> None:
    """float16 distances of 60,000 summed to inf in their own dtype."""
    dist = np.full((4, 4), 60000.0, dtype=np.float16)
    assert tour_length(dist, [0, 1, 2, 3]) == 240000.0


@pytest.mark.parametrize("dist", [np.full((3, 3), 1 + 5j), np.full((3, 3), "1"),
                                  np.ones((3, 3), dtype="m8[s]")])
def test_tour_length_refuses_what_is_no_distance(dist: np.ndarray) -> None:
    """A complex matrix was cut to its real part; strings and timedeltas failed in numpy."""
    with pytest.raises(InputError, match="distance matrix must be numeric"):
        tour_length(dist, [0, 1, 2])


def test_assignment_model_refuses_timedelta_costs_by_name() -> None:
    """validate_costs let timedelta64 through as a number and the model failed on float()."""
    with pytest.raises(InputError, match="costs must be real numbers, got dtype timedelta64"):
        assignment_model(np.ones((2, 2), dtype="m8[s]"))


def test_bbo_evaluators_refuse_complex_points() -> None:
    """Casting to float dropped the imaginary part (25 at (3 + 1j, 4))."""
    import torch

    program = load("sum(x ** 2)", dim=2)
    points = np.array([[3 + 1j, 4]])
    for evaluate in (numpy_evaluator(program), torch_evaluator(program)):
        with pytest.raises(InputError, match="points must be numeric, got .*complex"):
            evaluate(points)
    with pytest.raises(InputError, match="points must be numeric, got .*complex"):
        torch_evaluator(program)(torch.as_tensor(points))
    assert torch_evaluator(program)(torch.tensor([[3.0, 4.0]])).item() == 25.0
    assert numpy_evaluator(program)(np.array([[3, 4]], dtype=np.int8))[0] == 25.0


def _knapsack() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=3 * m.x[0] + 4 * m.x[1] + 5 * m.x[2] + 6 * m.x[3] <= 10)
    m.value = pyo.Objective(expr=4 * m.x[0] + 5 * m.x[1] + 7 * m.x[2] + 8 * m.x[3],
                            sense=pyo.maximize)
    return m


def _ours(record: list[warnings.WarningMessage]) -> list[str]:
    """The files the recorded warnings name (this test file when they point at the caller)."""
    assert record, "no warning"
    return sorted({os.path.abspath(w.filename) for w in record})


class _BrokenStatistics(LazyConstraints):
    def statistics(self) -> dict:
        raise ValueError("boom")


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_failing_statistics_keeps_the_lazy_solve_and_warns_at_the_caller(solver: str) -> None:
    """HiGHS's lazy rounds called statistics() bare: its ValueError lost the solve's result
    (SCIP kept it, with a warning that named coplug's base.py)."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = solve(_knapsack(), solver=solver, plugins=[_BrokenStatistics(lambda s: [])])
    assert result.objective == pytest.approx(solve(_knapsack(), solver="highs").objective)
    assert result.plugin_stats["lazy"] == {"error": "ValueError: boom"}
    assert _ours(record) == [os.path.abspath(__file__)]


def test_warnings_through_pyomos_solver_factories_point_at_the_callers_line() -> None:
    """Through SolverFactory the first frame outside coplug was Pyomo's own wrapper, and the
    duals' fixed stacklevel named coplug's pyomo_factory.py."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    def with_dual() -> pyo.ConcreteModel:
        m = _knapsack()
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        return m

    tiny = pyo.ConcreteModel()
    tiny.x = pyo.Var(bounds=(0, 1))
    tiny.o = pyo.Objective(expr=1e-9 * tiny.x)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pyo.SolverFactory("coplug_scip").solve(with_dual())
        SolverFactory("coplug_highs").solve(with_dual())
        pyo.SolverFactory("coplug_scip").solve(tiny, warmstart=True)
    assert len(record) >= 4  # two duals left empty, a tiny objective, an unused start
    assert _ours(record) == [os.path.abspath(__file__)]


def test_lazy_round_and_fair_spectral_warnings_point_at_the_caller() -> None:
    """lazy_rounds' and R-FairSC's fixed stacklevels were a frame short (bridge.py, fit)."""
    from coplug.formulations.mip_families import mknapsack
    from coplug.learned.fair_spectral import FairSpectralClustering

    m = mknapsack(30, seed=1)
    xs = list(m.component_data_objects(pyo.Var))

    def at_most_two(solution):
        return [sum(xs[:10]) <= 2] if sum(solution[v] for v in xs[:10]) > 2.5 else []

    graph = nx.stochastic_block_model([20, 20, 20], [[0.5, 0.05, 0.05], [0.05, 0.5, 0.05],
                                                     [0.05, 0.05, 0.5]], seed=1)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        solve(m, solver="highs", plugins=[LazyConstraints(at_most_two)],
              mip_max_improving_sols=1)
        FairSpectralClustering(3, [i % 2 for i in range(60)], method="riemannian",
                               max_iter=2).fit(graph)
    assert {str(w.message)[:17] for w in record} == {"lazy constraints:", "R-FairSC's ADMM d"}
    assert _ours(record) == [os.path.abspath(__file__)]


class _BrokenPredictor:
    def __init__(self, error: BaseException) -> None:
        self.error, self.calls = error, 0

    def predict_variables(self, scip, variables):
        self.calls += 1
        raise self.error


def test_a_failing_pmvb_predictor_warns_once_at_the_caller() -> None:
    """It warned at every branching call, each naming coplug's pmvb.py."""
    from coplug.formulations.mip_families import mknapsack

    predictor = _BrokenPredictor(RuntimeError("predictor broke"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = solve(mknapsack(40, seed=3), plugins=[PMVBBranching(predictor, depth=50)])
    truth = solve(mknapsack(40, seed=3), solver="highs")
    assert result.objective == pytest.approx(truth.objective)
    assert predictor.calls > 1 and len(record) == 1
    assert _ours(record) == [os.path.abspath(__file__)]
    assert result.plugin_stats["pmvb"]["error"] == "RuntimeError: predictor broke"


def test_a_keyboard_interrupt_from_a_pmvb_predictor_comes_out_as_itself() -> None:
    """Raised inside SCIP's callback it became SolverError("SCIP: unspecified error!");
    the other plugins that run user code re-raise it once SCIP has stopped."""
    from coplug.formulations.mip_families import mknapsack

    m = mknapsack(30, seed=1)
    rule = PMVBBranching(_BrokenPredictor(KeyboardInterrupt("user stop")))
    with pytest.raises(KeyboardInterrupt, match="user stop"):
        solve(m, plugins=[rule])
    again = solve(m, plugins=[PMVBBranching("lp")])
    assert again.objective == pytest.approx(solve(m, solver="highs").objective)


def _sensor(fail_at: int):
    """A vectorized function whose `fail_at`-th call raises the caller's own error."""
    calls = []

    def f(X):
        calls.append(np.shape(X))
        if len(calls) == fail_at:
            raise ValueError("sensor failed")
        return (np.asarray(X) ** 2).sum(axis=-1)

    return f


@pytest.mark.parametrize("solver", ["nelder_mead", "de"])
def test_a_box_functions_own_error_comes_out_as_itself(solver: str) -> None:
    """A failed batch was retried row by row: an error on the third call vanished (the run
    returned a best value), and scipy's differential evolution replaced it with a
    RuntimeError about map-like callables."""
    from coplug.formulations.bbo.features import as_box_function
    from coplug.formulations.bbo.portfolio import run_solver

    with pytest.raises(ValueError, match="sensor failed"):
        run_solver(solver, as_box_function(_sensor(3), dim=2), 60, seed=0)


def test_a_vectorized_functions_error_is_not_replaced_by_a_row_by_row_retry() -> None:
    from coplug.formulations.bbo.features import as_box_function

    def vectorized(X):
        if (X[:, 0] > 4.0).any():
            raise ValueError("x0 past 4")
        return (X ** 2).sum(axis=1)

    with pytest.raises(ValueError, match="x0 past 4"):  # was IndexError from X[:, 0] on a row
        as_box_function(vectorized, dim=2)(np.array([[4.5, 0.0], [0.0, 0.0]]))


@pytest.mark.parametrize("func, match", [
    (lambda x: [1.0, 2.0], "returned 2 values for one point"),
    (lambda x: object(), "returned object for a batch of 3 points"),
    (lambda x: 1j, "returned complex"),
])
def test_a_box_functions_wrong_return_is_named(func, match: str) -> None:
    """Two values per point or objects failed deep inside numpy; complex lost its imaginary
    part."""
    from coplug.formulations.bbo.features import as_box_function

    with pytest.raises(InputError, match=match):
        as_box_function(func, dim=2)(np.zeros((3, 2)))


def test_point_and_batch_functions_both_evaluate_every_batch() -> None:
    """A function of one point that a 1-point first batch let pass as vectorized (np.sum
    of the whole batch) is called point by point on the next, larger batch."""
    from coplug.formulations.bbo.features import as_box_function

    X = np.arange(8.0).reshape(4, 2)
    want = (X ** 2).sum(axis=1)
    for func in (lambda x: np.sum(x ** 2), lambda x: x[0] ** 2 + x[1] ** 2,
                 lambda X: (X ** 2).sum(axis=-1), lambda x: np.sum(x ** 2, axis=-1).item()):
        f = as_box_function(func, dim=2)
        assert f(X[:1]) == pytest.approx(want[:1])
        assert f(X) == pytest.approx(want)


def test_evolve_refuses_a_proposers_program_over_another_box() -> None:
    """A user's proposer had a 3-D program join a 2-D run (and top its front); None failed
    inside the run."""
    from collections import Counter

    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    config = EvolutionConfig(dim=2, targets=(1,), population=4, generations=1, budget=20,
                             seeds=4, sample=40)

    class Fixed:
        name, stats = "fixed", Counter()

        def __init__(self, programs):
            self.programs = programs

        def propose(self, parents, n, rng, context):
            return self.programs

    for programs, match in [
        ([load("sum(x ** 2) + x[2]", dim=3)], r"\[-5.0, 5.0\]\^3; this run evolves .*\^2"),
        ([load("sum(x ** 2)", dim=2, lower=-100.0, upper=100.0)], r"\[-100.0, 100.0\]\^2"),
        (None, "must return a list of Programs, got NoneType"),
        (["sum(x ** 2)"], "needs a Program"),
    ]:
        with pytest.raises(InputError, match=match):
            evolve(config, proposer=Fixed(programs), progress=False)
    run = evolve(config, proposer=Fixed([load("sum(x ** 2) + x[1]", dim=2)]), progress=False)
    assert "sum(x ** 2.0) + x[1]\n" in {c.text for c in run.candidates}


def test_on_solution_failing_after_the_fact_leaves_the_model_as_it_was() -> None:
    """HiGHS hands the loaded solution on once more after the solve; a callback raising
    there left the new values loaded. Values are put back, and the duals left empty as a
    failure during the solve leaves them (no stale duals)."""
    from coplug.plugins import OnSolution

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x + m.y <= 5)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.x.value = m.y.value = 0
    m.dual[m.c] = 123.0
    with pytest.raises(ZeroDivisionError):
        solve(m, solver="highs", plugins=[OnSolution(lambda s, o: 1 / 0)])
    assert (m.x.value, m.y.value, dict(m.dual.items())) == (0, 0, {})
    result = solve(m, solver="highs", plugins=[OnSolution(lambda s, o: None)])
    assert result.objective == pytest.approx(8.0) and m.dual[m.c] == pytest.approx(1.0)


def _two_player_game(player: str = "a", row: str = "shared", start: float = 2.0) -> object:
    """Players `player` and b, each maximizing -(own - 3)**2 on [0, 4], with the shared row
    `row`: own + other's <= 4 (equilibrium (2, 2)); both start at `start`."""
    from coplug.formulations.games import Game

    game = Game("two")
    a, b = game.add_player(player), game.add_player("b")
    a.x = pyo.Var(bounds=(0, 4), initialize=start)
    b.y = pyo.Var(bounds=(0, 4), initialize=start)
    a.utility = pyo.Expression(expr=-(a.x - 3) ** 2)
    b.utility = pyo.Expression(expr=-(b.y - 3) ** 2)
    game.model.add_component(row, pyo.Constraint(expr=a.x + b.y <= 4))
    return game


def test_game_callbacks_get_a_copy_of_the_iterate() -> None:
    """The callback was handed the live iterate: one written to drove the ascent past the
    shared row (min slack -2, the infeasible profile written into the game)."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent

    game = _two_player_game(start=1.0)  # strictly feasible: the barrier method needs it
    seen = []

    def meddle(iteration, x, level):
        seen.append(x)
        x[:] = 3.0

    run = barrier_gradient_ascent(game, mu=1e-4, callback=meddle, max_iter=200)
    assert run.min_slack > 0 and pyo.value(game.model.shared.body) <= 4
    assert len({id(x) for x in seen}) == len(seen) > 1


def test_an_unknown_players_message_names_a_few_players() -> None:
    """It listed every player (and each lookup scanned them all: quadratic in the count)."""
    from coplug.formulations.games import Game

    game = Game("many")
    for i in range(2000):
        game.add_player(f"p{i}")
    assert game.players[:3] == ["p0", "p1", "p2"] and len(game.players) == 2000
    with pytest.raises(InputError, match=r"p9, \.\.\. \(2000 players\)$") as error:
        game.block("nobody")
    assert len(str(error.value)) < 200


def _random_pattern(n: int, per_row: int, seed: int):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    rows = np.r_[np.repeat(np.arange(n), per_row), np.arange(n)]
    cols = np.r_[rng.integers(0, n, n * per_row), np.arange(n)]
    keys, first = np.unique(rows * n + cols, return_index=True)
    costs = rng.integers(1, 1000, rows.size).astype(float)[first]
    return sp.csr_matrix((costs, (keys // n, keys % n)), shape=(n, n))


def test_sparse_cold_solves_reduce_rows_as_lapmod_does() -> None:
    """The sparse cold start was row minima alone, leaving a third of the rows of a random
    pattern to long shortest paths (4-5x lap.lapmod's time): JV's column reduction and an
    augmenting-row-reduction pass leave them a few percent."""
    from scipy.optimize import linear_sum_assignment

    c = _random_pattern(3000, 6, seed=2)
    reduced = solve_lap(c)
    plain = solve_lap(c, arr_passes=0)
    assert reduced.cost == plain.cost
    assert reduced.augmentations * 3 < plain.augmentations
    assert reduced.info["row_reduction_scans"] > 0 == plain.info["row_reduction_scans"]
    dense = np.where(c.toarray() > 0, c.toarray(), 1e9)
    rows, cols = linear_sum_assignment(dense)
    assert reduced.cost == dense[rows, cols].sum()


@pytest.mark.parametrize("seed", range(40))
def test_sparse_row_reduction_is_exact_on_small_patterns(seed: int) -> None:
    """Ties, one-entry rows and patterns with no assignment, against scipy's dense solver."""
    import scipy.sparse as sp
    from scipy.optimize import linear_sum_assignment

    from coplug.plugins.lap.sparse import InfeasiblePatternError

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    allowed = rng.random((n, n)) < rng.uniform(0.1, 0.6)
    costs = rng.integers(-3, 4, (n, n)).astype(float)
    c = sp.csr_matrix((costs[allowed], np.nonzero(allowed)), shape=(n, n))
    dense = np.where(allowed, costs, 1e6)
    rows, cols = linear_sum_assignment(dense)
    for passes in (None, 1, 3):
        if not allowed[rows, cols].all():
            with pytest.raises(InfeasiblePatternError):
                solve_lap(c, arr_passes=passes)
            continue
        solution = solve_lap(c, arr_passes=passes)
        assert solution.cost == pytest.approx(dense[rows, cols].sum())
        u, v = solution.row_duals, solution.col_duals
        i, j = np.nonzero(allowed)
        assert (costs[i, j] - u[i] - v[j] >= -1e-9).all()


def _boom(solution, objective):
    raise RuntimeError("user callback failed")


def _ignore(solution, objective) -> None:
    return None


def test_used_plugins_copy_and_pickle_after_a_failed_solve() -> None:
    """A solve that raised left LapHeuristic's SCIP variable blocks and SolutionPool's SCIP
    reader in place (no copy, no pickle); OnSolution kept rows of SCIP variables even after
    a good solve of a model with a large all-integer row."""
    import copy
    import pickle

    from coplug.formulations.tsp import tsp_mip
    from coplug.plugins import OnSolution, SolutionPool
    from coplug.plugins.lap.heuristic import LapHeuristic

    points = np.random.default_rng(0).random((9, 2))
    tsp = tsp_mip(np.linalg.norm(points[:, None] - points[None], axis=2))
    heuristic, pool = LapHeuristic(), SolutionPool(3)
    with pytest.raises(RuntimeError, match="user callback failed"):
        solve(tsp, plugins=[heuristic, OnSolution(_boom)])
    with pytest.raises(RuntimeError, match="user callback failed"):
        solve(_knapsack(), plugins=[pool, OnSolution(_boom)])  # no lambda rules to pickle
    big = pyo.ConcreteModel()
    big.x = pyo.Var(range(2), domain=pyo.NonNegativeIntegers, bounds=(0, 3))
    big.c = pyo.Constraint(expr=1000000 * big.x[0] + 1000001 * big.x[1] <= 2000000)
    big.o = pyo.Objective(expr=big.x[0] + 2 * big.x[1], sense=pyo.maximize)
    logger = OnSolution(_ignore)
    assert solve(big, plugins=[logger]).objective == pytest.approx(2.0)
    for plugin in (heuristic, pool, logger):
        pickle.loads(pickle.dumps(plugin))
        copy.deepcopy(plugin)
    again = solve(tsp, plugins=[heuristic])
    assert again.objective == pytest.approx(solve(tsp, solver="highs").objective)


def test_r_fairsc_takes_heavy_and_light_weights_alike() -> None:
    """The polar factor's rank test compared a squared singular value with a fourth power:
    weights of 1e4 and more (traffic counts) were refused as rank-deficient."""
    from coplug.learned.fair_spectral import FairSpectralClustering, polar

    basis = np.linalg.qr(np.random.default_rng(0).normal(size=(6, 2)))[0]
    for scale in (1e-200, 1.0, 1e7, 1e200):
        assert polar(scale * basis) == pytest.approx(basis)
    with pytest.raises(InputError, match="rank-deficient"):
        polar(np.outer(np.arange(1.0, 7.0), [1.0, 1.0]))
    graph = nx.stochastic_block_model([15, 15], [[0.6, 0.05], [0.05, 0.6]], seed=3)
    groups = [i % 2 for i in range(30)]
    labels = {}
    for weight in (1.0, 1e4, 1e6):
        nx.set_edge_attributes(graph, weight, "weight")
        labels[weight] = FairSpectralClustering(2, groups, method="riemannian",
                                                laplacian="unnormalized").fit_predict(graph)
    assert all((labels[w] == labels[1.0]).all() or (labels[w] != labels[1.0]).all()
               for w in labels)


def test_edge_weights_past_the_float_range_are_named() -> None:
    """10**400 raised OverflowError; 1e308 on every edge gave a NaN ratio cut and one
    cluster for two."""
    graph = nx.Graph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)])
    graph.edges[0, 1]["weight"] = 10**400
    with pytest.raises(InputError, match=r"edge \(0, 1\) has weight 1000.*real numbers"):
        ratio_cut(graph, [0, 0, 0, 1, 1, 1])
    nx.set_edge_attributes(graph, 1e308, "weight")
    with pytest.raises(InputError, match="add up past the float range"):
        ratio_cut(graph, [0, 0, 0, 1, 1, 1])
    nx.set_edge_attributes(graph, 1e200, "weight")
    assert ratio_cut(graph, [0, 0, 0, 1, 1, 1]) == pytest.approx(2e200 / 3)


def test_network_flow_takes_any_hashable_labels() -> None:
    """Labels "s" and 1 failed to sort (raw TypeError), and links ("a_b", "c") and ("a",
    "b_c") both named their row cap_a_b_c (Pyomo refused the second)."""
    from coplug.formulations.games import network_flow

    mixed = nx.Graph()
    mixed.add_edge("s", 1, capacity=4.0)
    mixed.add_edge(1, "t", capacity=4.0)
    game = network_flow(mixed, demands=[("s", "t", 2.0)], paths_per_player=1)
    assert set(game.block("source0").cap) == {("s", 1), (1, "t")}  # as the path runs
    clash = nx.Graph()
    for u, v in [("s", "a_b"), ("a_b", "c"), ("c", "t"), ("s", "a"), ("a", "b_c"),
                 ("b_c", "t")]:
        clash.add_edge(u, v, capacity=5.0)
    game = network_flow(clash, demands=[("s", "t", 2.0)], paths_per_player=2)
    assert len(game.block("source0").cap) == 6


LP_TEXT = """\\\\* small MIP *\\\\
min
o: +0.3 x + 3 y - z + 7 w
s.t.
c1: + x + y + z + w <= 4.1
c2: + x - 0.1 y >= -2
bounds
 -3 <= x <= 7
 -3 <= y <= 7
 -3 <= z <= 7
 -0.001 <= w <= 0.3
general
 x
 y
end
"""


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_lp_file_cut_short_is_refused(tmp_path, solver: str) -> None:
    """SCIP's reader solved what it had read of a file cut inside its bounds and called it
    optimal (its later bounds and integers lost); HiGHS refused it."""
    from coplug.plugins import solve_file

    whole = tmp_path / "whole.lp"
    whole.write_text(LP_TEXT.replace("end\n", "End \\ the last line\n"))
    assert solve_file(whole, solver=solver).status.value == "optimal"
    lines = LP_TEXT.splitlines(keepends=True)
    for cut in (3, 9, len(lines) - 1):
        path = tmp_path / f"cut{cut}.lp"
        path.write_text("".join(lines[:cut]))
        with pytest.raises(InputError, match="has no End line"):
            solve_file(path, solver=solver)


def test_bbo_cli_reads_back_a_json_program_whatever_the_suffix_case(tmp_path) -> None:
    """`export -o P.JSON` wrote the JSON form, which reading back took for program text."""
    from coplug.formulations.bbo.cli import read_program
    from coplug.formulations.bbo.export import write_program

    program = load("sum(x ** 2) + x[0]", dim=2)
    path = tmp_path / "P.JSON"
    write_program(program, path)
    again = read_program(str(path), None)
    assert again.dim == 2 and again.body == program.body


def test_tsplib_keywords_given_twice_are_refused(tmp_path) -> None:
    """The last one won: EDGE_WEIGHT_TYPE EUC_2D then MAX_2D measured in MAX_2D."""
    from coplug.formulations.tsp import load_tsplib

    path = tmp_path / "twice.tsp"
    path.write_text("NAME : t\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                    "EDGE_WEIGHT_TYPE : MAX_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 4\n3 6 0\nEOF\n")
    with pytest.raises(InputError, match="a second EDGE_WEIGHT_TYPE"):
        load_tsplib(path)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_a_rowdualnet_loads_in_the_dtype_it_was_saved_in(tmp_path, dtype: str) -> None:
    """float16 and bfloat16 weights came back as float32, their duals 6e-4 off."""
    import torch

    from coplug.learned import rowdualnet

    net = rowdualnet.load().to(getattr(torch, dtype))
    path = tmp_path / "net.pt"
    rowdualnet.save(net, path, {})
    again = rowdualnet.load(path)
    c = np.random.default_rng(0).random((40, 40))
    assert next(again.parameters()).dtype == getattr(torch, dtype)
    assert np.array_equal(again.predict_duals(c), net.predict_duals(c))


def test_a_failed_cli_solve_leaves_no_earlier_solution_behind(tmp_path, capsys) -> None:
    """A solve that raised before its answer kept the previous run's values in --solution."""
    from coplug.plugins.cli import main

    good, bad, out = tmp_path / "good.lp", tmp_path / "bad.lp", tmp_path / "x.sol"
    good.write_text(LP_TEXT)
    bad.write_text(LP_TEXT.replace("end\n", ""))
    assert main(["solve", str(good), "--solution", str(out)]) == 0
    assert out.read_text().startswith("# status optimal") and "\nx " in out.read_text()
    assert main(["solve", str(bad), "--solution", str(out)]) == 2
    assert out.read_text() == "# error, no solution: InputError\n"
    assert "has no End line" in capsys.readouterr().err


@pytest.mark.parametrize("maximize", [False, True])
def test_warm_duals_far_out_of_scale_still_come_back_tight(maximize: bool) -> None:
    """Row duals of 1e20 on costs of 7 lost a column dual to cancellation (0 for 7): the
    cost and the certificate, which prices columns afresh, were right, the returned column
    duals were not. Such a start now falls back to a cold solve."""
    import scipy.sparse as sp

    allowed = np.array([[1, 1, 1, 0, 1, 1, 0], [1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 0],
                        [0, 1, 1, 1, 1, 0, 1], [0, 1, 1, 1, 1, 1, 0], [0, 1, 1, 0, 0, 1, 0],
                        [1, 1, 1, 1, 1, 1, 1]], bool)
    costs = np.where(allowed, -7.0 if maximize else 7.0, 0.0)
    start = np.array([1e20, 1e20, 1e20, 0, 1e20, 1e20, 0]) * (-1 if maximize else 1)
    solution = solve_lap(sp.csr_matrix(costs), row_duals=start, maximize=maximize)
    assert solution.cost == (-49.0 if maximize else 49.0)
    u, v = solution.row_duals, solution.col_duals
    assert u.sum() + v.sum() == pytest.approx(solution.cost)
    tight = costs[solution.row_ind, solution.col_ind] - u[solution.row_ind] - v[solution.col_ind]
    assert np.abs(tight).max() < 1e-9
    i, j = np.nonzero(allowed)
    reduced = costs[i, j] - u[i] - v[j]
    assert (reduced <= 1e-9).all() if maximize else (reduced >= -1e-9).all()


def test_a_failure_during_the_solve_leaves_no_stale_duals_with_or_without_on_solution() -> None:
    """With an OnSolution plugin present, a failure during the solve put back the duals of
    an earlier solve; without it m.dual ended empty."""
    from coplug.plugins import OnSolution, UserHeuristic

    def broken(lp_solution):
        raise ValueError("heuristic broke")

    for extra in ([], [OnSolution(_ignore)]):
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 4), domain=pyo.Integers)
        m.y = pyo.Var(bounds=(0, 3))
        m.c = pyo.Constraint(expr=m.x + m.y <= 5.5)
        m.obj = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.maximize)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.dual[m.c] = 123.0  # an earlier solve's
        with pytest.raises(ValueError, match="heuristic broke"):
            solve(m, plugins=[UserHeuristic(broken), *extra])
        assert dict(m.dual.items()) == {}


def test_tsplib_files_may_give_several_comments(tmp_path) -> None:
    """The national instances (wi29, dj38, ...) have two COMMENT lines; the repeated-keyword
    check refused them."""
    from coplug.formulations.tsp import load_tsplib

    path = tmp_path / "two.tsp"
    path.write_text("NAME : t\nCOMMENT : one\nCOMMENT : two\nTYPE : TSP\nDIMENSION : 3\n"
                    "EDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 4\n3 6 0\nEOF\n")
    assert load_tsplib(path).n == 3


def test_network_flow_rows_follow_the_path_where_labels_do_not_sort() -> None:
    """A frozenset's own order named the row: (1, (5,)) for a path from (5,) to 1, and with
    string labels it changed with the hash seed."""
    from coplug.formulations.games import network_flow

    graph = nx.Graph()
    graph.add_edge((5,), 1, capacity=4.0)
    graph.add_edge(1, 2.5, capacity=4.0)
    game = network_flow(graph, demands=[((5,), 2.5, 2.0)], paths_per_player=1)
    assert set(game.block("source0").cap) == {((5,), 1), (1, 2.5)}


def test_augmentations_stop_once_their_work_budget_is_spent() -> None:
    """Chunks counted in augmentations overshot a time limit: late augmentations cost far
    more than early ones, and a 0.05 s limit returned a solution after 1.4 s."""
    from coplug.plugins.errors import TimeLimitError
    from coplug.plugins.lap import jv, sparse

    c = _random_pattern(20000, 10, seed=0)
    with pytest.raises(TimeLimitError, match="time limit reached after"):
        solve_lap(c, arr_passes=0, time_limit=0.05)
    small = _random_pattern(300, 4, seed=1)
    n = small.shape[0]
    indptr, indices = small.indptr.astype(np.int64), small.indices.astype(np.int64)
    u, v = np.zeros(n), np.zeros(n)
    col4row, row4col = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    sparse.sparse_tighten_and_match(indptr, indices, small.data, u, v, col4row, row4col)
    free = int((col4row < 0).sum())
    budget = np.full(1, 1, np.int64)
    augs, row = sparse.sparse_augment(indptr, indices, small.data, n, u, v, col4row, row4col,
                                      0, n + 1, budget)
    assert augs == 1 < free and budget[0] <= 0 and row < n
    dense = np.random.default_rng(2).random((50, 50))
    u, v = dense.min(axis=1), np.zeros(50)
    col4row, row4col = np.full(50, -1, np.int64), np.full(50, -1, np.int64)
    assert jv.shortest_augmenting_paths(dense, u, v, col4row, row4col, 0, 51,
                                        np.full(1, 1, np.int64))[0] == 1


@pytest.mark.parametrize(("player", "row"), [("a", "shared"), ("a", "best_response"),
                                             ("best_response", "shared")])
def test_certify_keeps_components_named_like_its_objective(player: str, row: str) -> None:
    """certify added `best_response` to a clone of the model: a row (or player) of that name
    was replaced, and the equilibrium (2, 2) was certified with gaps of 1."""
    from coplug.formulations.game_solvers import certify

    gaps = certify(_two_player_game(player, row)).gaps
    assert max(gaps.values()) < 1e-6


def test_a_variable_pinned_by_its_bounds_is_named_not_the_start() -> None:
    """lower == upper gave "infeasible start: ... has slack 0", although no start is
    strictly feasible then."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent

    game = _two_player_game("a", "shared")
    game.block("a").z = pyo.Var(bounds=(2, 2), initialize=2.0)
    with pytest.raises(InputError, match=r"a\.z has lower bound 2 and upper bound 2: .*fix it"):
        barrier_gradient_ascent(game, start={"a": [1.0, 2.0], "b": [1.0]})


def test_minimize_counts_the_last_steps_points_and_the_unfinished_ones() -> None:
    """The step of the last iteration was never tested: at max_iter 7, 14 starts ended at
    certified strict binary minimizers and `converged` said 0; nothing counted the rest."""
    from coplug.formulations.qubo_solvers import minimize
    from coplug.formulations.tsp import random_euclidean, tsp_qubo_safe

    qubo = tsp_qubo_safe(random_euclidean(8, seed=0).dist)
    for max_iter in (7, 13):
        report = minimize(qubo, method="pgd", starts=50, seed=0, max_iter=max_iter)
        strict = sum(c.ok and c.strict for c in report.certificates)
        stats = report.stats
        assert stats["converged"] == strict > 0
        assert stats["converged"] + stats["stalled"] + stats["unfinished"] == 50


def test_masked_qubo_data_and_warm_duals_are_refused() -> None:
    """QUBO(c=masked) used the masked-out 1e6 (energy 1e6 at [0, 1]); masked warm duals
    were taken at their masked-out values."""
    import scipy.sparse as sp

    from coplug.formulations.qubo import QUBO

    with pytest.raises(InputError, match="QUBO c: masked arrays are not supported"):
        QUBO(Q=sp.csr_matrix((2, 2)), c=np.ma.masked_array([1.0, 1e6], mask=[0, 1]),
             constant=0.0, decode=lambda z: z, is_feasible=lambda x: True,
             objective=lambda x: 0.0)
    with pytest.raises(InputError, match="row_duals: masked arrays are not supported"):
        solve_lap(np.ones((2, 2)), row_duals=np.ma.masked_array([0.0, 5.0], mask=[0, 1]))


@pytest.mark.parametrize("value", ["1.5", ["2", "3", "4"], np.array(["2", "3", "4"],
                                                                   dtype=object)])
def test_a_box_function_returning_text_is_refused(value) -> None:
    """Strings were read as numbers ("1.5" gave 1.5 at every point)."""
    from coplug.formulations.bbo.features import as_box_function

    with pytest.raises(InputError, match="it must return real numbers"):
        as_box_function(lambda X: value, dim=2)(np.zeros((3, 2)))


def test_a_start_stalling_on_the_last_step_counts_as_stalled() -> None:
    """The last step's points were tested for strict vertices only: a start stationary at a
    zero slope there counted "unfinished" at max_iter 2 and "stalled" at 3."""
    import scipy.sparse as sp

    from coplug.formulations.qubo import QUBO
    from coplug.formulations.qubo_solvers import minimize

    qubo = QUBO(Q=sp.csr_matrix([[1.0]]), c=np.zeros(1), constant=0.0, decode=lambda z: z,
                is_feasible=lambda s: True, objective=lambda s: 0.0)
    stats = [minimize(qubo, method="pgd", starts=4, seed=0, max_iter=k, kicks=0).stats
             for k in (2, 3)]
    assert stats[0] == stats[1] and stats[0]["stalled"] == 4


def test_a_game_variable_with_crossed_bounds_is_named() -> None:
    from coplug.formulations.game_solvers import barrier_gradient_ascent

    game = _two_player_game("a", "shared")
    game.block("a").z = pyo.Var(bounds=(3, 2), initialize=2.0)
    with pytest.raises(InputError, match=r"a\.z has lower bound 3 above its upper bound 2"):
        barrier_gradient_ascent(game, start={"a": [1.0, 2.0], "b": [1.0]})


@pytest.mark.parametrize("value", [np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]),
                                   np.array(["2026-01-01"] * 3, dtype="M8[D]"),
                                   [10**400] * 3])
def test_a_box_function_returning_no_plain_numbers_is_named(value) -> None:
    """A mask was dropped, dates read as day counts, and 10**400 raised a bare OverflowError."""
    from coplug.formulations.bbo.features import as_box_function

    with pytest.raises(InputError, match="masked arrays|it must return real numbers"):
        as_box_function(lambda X: value, dim=2)(np.zeros((3, 2)))


def test_a_box_function_returning_a_tensor_in_a_graph_is_named() -> None:
    """A torch tensor that requires grad raised torch's bare RuntimeError."""
    import torch

    from coplug.formulations.bbo.features import as_box_function

    weight = torch.ones(2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(InputError, match="it must return real numbers"):
        as_box_function(lambda X: torch.as_tensor(X) @ weight, dim=2)(np.zeros((3, 2)))
