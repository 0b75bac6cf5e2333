"""Session 35 review: behaviour found by metamorphic and estimator-convention probes."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from coplug.learned.pmvb_predictors import PMVBPredictor, TorchMLPClassifier
from coplug.plugins import pareto_front
from coplug.plugins.errors import InputError
from coplug.plugins.lap import solve_lap
from coplug.plugins.results import Status


@pytest.mark.parametrize("as_sparse", [False, True])
@pytest.mark.parametrize("k", [-8, -1, 3, 8])
def test_rectangular_duals_shifted_by_a_constant_start_alike(k: int, as_sparse: bool) -> None:
    """A rectangular warm start is the same start shifted by a constant once padded: a
    dummy dual capped at 0 doubled the augmentations of duals shifted down, and uncentred
    duals shifted up past n max|c| fell back to a cold solve (5 of 150 at 8 max|c|)."""
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 30))
        c = rng.integers(-50, 50, size=(n, n + int(rng.integers(1, 30)))).astype(float)
        if as_sparse:
            c = sp.csr_matrix(np.where(rng.random(c.shape) < 0.5, c, 0.0))
            c.data += 100.0  # every stored entry nonzero; the pattern keeps an assignment
            c = c + sp.eye(*c.shape, format="csr") * 100.0
        cold = solve_lap(c)
        own = solve_lap(c, row_duals=cold.row_duals)
        shifted = solve_lap(c, row_duals=cold.row_duals + k * abs(c).max())
        assert shifted.cost == cold.cost
        assert not shifted.fallback, seed
        assert shifted.augmentations == own.augmentations, seed


@pytest.mark.parametrize("make, bad", [
    (lambda: PMVBPredictor("logreg"), {"kind": "nope"}),
    (lambda: PMVBPredictor("logreg"), {"random_state": -1}),
    (lambda: PMVBPredictor("logreg"), {"calibration_share": 2.0}),
    (lambda: TorchMLPClassifier(epochs=5), {"epochs": 0}),
])
def test_a_refit_refused_for_its_settings_leaves_the_estimator_unfitted(make, bad) -> None:
    """A refit with a bad setting raised but kept the old model predicting beside the new
    settings (which `save` would then have recorded with it)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 4))
    y = (X[:, 0] > 0).astype(int)
    est = make().fit(X, y)
    est.set_params(**bad)
    with pytest.raises(InputError):
        est.fit(X, y)
    with pytest.raises(NotFittedError):
        est.predict_proba(X[:2])


@pytest.mark.parametrize("call", ["fit", "predict_proba"])
def test_one_dimensional_features_are_named_without_the_array(call: str) -> None:
    """numpy prints a long 1-D array over many lines; only the first was dropped, so the
    message carried some 900 of the values."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 12))
    est = PMVBPredictor("logreg").fit(X, (X[:, 0] > 0).astype(int))
    flat = rng.standard_normal(900)
    with pytest.raises(InputError) as exc:
        if call == "fit":
            PMVBPredictor("logreg").fit(flat, rng.integers(0, 2, 900))
        else:
            est.predict_proba(flat)
    assert "1D array" in str(exc.value) and "reshape" in str(exc.value)
    assert len(str(exc.value)) < 400 and "\n" not in str(exc.value)


@pytest.mark.parametrize("passes", [10**7, 2**63])
def test_row_reduction_stops_once_its_passes_stall_on_ties(passes: int) -> None:
    """Tied costs let augmenting-row-reduction passes trade rows without freeing any:
    every requested pass ran (10**7: 10**7 + 3 scans), and 2**63 never returned."""
    c = np.array([[2.0, 2, 0, 0], [2, 2, 0, 0], [2, 1, 0, 2]])
    found = solve_lap(c, arr_passes=passes)
    assert found.cost == 1.0
    assert found.info["row_reduction_scans"] <= 10


def test_row_reduction_sees_the_time_limit_between_chunks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`time_limit` was not checked while row-reduction passes ran (44.7 s against a 1 s
    limit with arr_passes=10**8 on 200 x 200 costs in 0..2)."""
    import time

    from coplug.plugins.errors import TimeLimitError
    from coplug.plugins.lap import jv, solver

    calls = []

    def slow_passes(c, v, col4row, row4col, passes, max_steps):  # never finishes early
        calls.append(passes)
        time.sleep(0.05)
        return 1, False

    monkeypatch.setattr(jv, "row_reduction_passes", slow_passes)
    c = np.random.default_rng(0).integers(0, 3, (200, 200)).astype(float)
    start = time.perf_counter()
    with pytest.raises(TimeLimitError, match="row-reduction passes"):
        solver.solve_lap(c, arr_passes=10**8, time_limit=0.3)
    assert time.perf_counter() - start < 2.0 and len(calls) < 40


def _two_objectives(integer: bool, top: int = 1) -> pyo.ConcreteModel:
    """min x and min y over x + y >= top: a front of top + 1 whole points (integer) or a
    continuous one."""
    m = pyo.ConcreteModel()
    domain = pyo.Integers if integer else pyo.Reals
    m.x = pyo.Var(bounds=(0, top), domain=domain)
    m.y = pyo.Var(bounds=(0, top), domain=domain)
    m.c = pyo.Constraint(expr=m.x + m.y >= top)
    m.f1 = pyo.Objective(expr=m.x)
    m.f2 = pyo.Objective(expr=m.y)
    m.f2.deactivate()
    return m


@pytest.mark.parametrize("step", [1e-9, 1e-300])
def test_a_front_step_below_the_solvers_tolerance_stops_with_a_warning(step: float) -> None:
    """The stage came back with the last point (within the room a solver's round-off is
    given), which was dropped and appended again forever: max_points and time_limit never
    came into play."""
    m = _two_objectives(integer=False)
    with pytest.warns(RuntimeWarning, match="step=.*below the solvers' tolerances"):
        front = pareto_front(m, m.f1, m.f2, solver="highs", step=step, max_points=5)
    assert front.status is Status.UNKNOWN and not front.complete
    assert [p.values for p in front.points] == [(0.0, 1.0)]


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_step_below_a_whole_objectives_own_is_raised_to_it(solver: str) -> None:
    """y takes whole values: better by 1e-300 means better by 1 (it spun forever before)."""
    m = _two_objectives(integer=True, top=3)
    tiny = pareto_front(m, m.f1, m.f2, solver=solver, step=1e-300)
    whole = pareto_front(m, m.f1, m.f2, solver=solver)
    assert tiny.complete and [p.values for p in tiny.points] == [p.values for p in whole.points]
    assert len(whole.points) == 4


def test_a_front_stops_at_its_time_limit_between_stages() -> None:
    """Stages past the deadline got a millisecond each and, on small models, still came
    back optimal: the front ran on to its end whatever the limit."""
    import time

    m = _two_objectives(integer=True, top=400)
    start = time.perf_counter()
    front = pareto_front(m, m.f1, m.f2, solver="highs", time_limit=0.3)
    assert front.status is Status.TIME_LIMIT and not front.complete
    assert 0 < len(front.points) < 401
    assert time.perf_counter() - start < 3.0


def test_bbo_descent_evaluates_in_bounded_batches() -> None:
    """The descent's steps were one (2 dim) x dim array: 74.5 GiB at dim 100,000."""
    from coplug.formulations.bbo import certify as cert
    from coplug.formulations.bbo import load, numpy_evaluator

    program = load("sum(x * x)", dim=3000)
    f = numpy_evaluator(program)
    largest = []

    def counted(points: np.ndarray) -> np.ndarray:
        largest.append(points.size)
        return f(points)

    start = np.full(3000, 0.75 * program.upper)
    end = cert._descend(counted, program, start)
    assert max(largest) <= cert.DESCENT_BATCH_NUMBERS + 3000
    assert f(end[None])[0] < 1e-6 * f(start[None])[0]  # it still descends to the minimum


def test_bbo_descent_is_skipped_where_no_gradient_fits_its_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from coplug.formulations.bbo import certify as cert
    from coplug.formulations.bbo import load, numpy_evaluator

    program = load("sum(x * x)", dim=50)
    monkeypatch.setattr(cert, "DESCENT_NUMBERS", 2 * 50 * 50)
    start = np.full(50, 1.0)
    assert np.array_equal(cert._descend(numpy_evaluator(program), program, start), start)
    monkeypatch.setattr(cert, "DESCENT_NUMBERS", 1 << 30)
    assert not np.array_equal(cert._descend(numpy_evaluator(program), program, start), start)


@pytest.mark.parametrize("name, value", [("generations", 2**63), ("seeds", 2**63),
                                         ("seeds", 10**18)])
def test_evolution_counts_built_up_front_have_a_maximum(name: str, value: int) -> None:
    """--generations 2**63 ended in tqdm's OverflowError, --seeds 10**18 in a list of that
    many seeds (out of memory)."""
    from coplug.formulations.bbo.evolve import EvolutionConfig

    with pytest.raises(InputError, match=f"{name} must be at most"):
        EvolutionConfig(**{name: value})


@pytest.mark.parametrize("n_dims", [2**40, 10**18])
def test_mknapsack_dims_past_memory_are_refused_by_name(n_dims: int) -> None:
    """n_dims had no memory check: numpy's MemoryError (40 TiB) or 'array is too big'."""
    from coplug.formulations.mip_families import mknapsack

    with pytest.raises(InputError, match="choose fewer n_dims"):
        mknapsack(20, n_dims=n_dims)
    assert len(mknapsack(20, n_dims=7).capacity) == 7


def test_indset_names_its_affinity_when_it_reaches_the_size() -> None:
    """A huge affinity read 'indset size must be an integer >= 10**18 + 1, got 10'."""
    from coplug.formulations.mip_families import indset

    with pytest.raises(InputError, match="above its affinity.*size 10 and affinity"):
        indset(10, affinity=10**18)


@pytest.mark.parametrize("k", [0, -1, 3.0, True, 442])
def test_diabetes_knn_refuses_a_bad_neighbour_count_by_name(k: object) -> None:
    """0, -1, 3.0 and 442 went to scikit-learn's own errors, and True was taken as 1."""
    from coplug.formulations.fair_graphs import diabetes_knn

    with pytest.raises(InputError, match="diabetes_knn n_neighbors"):
        diabetes_knn(k)


@pytest.mark.parametrize("limit", [np.float16(0.5), np.float32(0.5)])
def test_a_numpy_time_limit_becomes_a_python_float(limit: np.floating) -> None:
    """A float16 limit kept its type: perf_counter() + limit rounded to inf past 65,504 s
    of uptime (no deadline), and to nan in ranked_assignments' check."""
    from coplug.plugins.limits import checked_time_limit

    checked = checked_time_limit(limit)
    assert type(checked) is float and checked == 0.5


@pytest.mark.parametrize("key", ["limits/primal", "limits/dual", "limits/gap"])
def test_a_nan_scip_parameter_is_refused_by_name(key: str) -> None:
    """limits/primal=nan ended a knapsack solve at once with status unknown; limits/dual=nan
    was taken and ignored."""
    from coplug.formulations.mip_families import mknapsack
    from coplug.plugins import solve

    with pytest.raises(InputError, match=f"{key}.*not NaN"):
        solve(mknapsack(10), options={key: float("nan")})


def test_a_game_step_at_the_float_maximum_still_moves() -> None:
    """step=1e308 doubled to inf in the Armijo search, and halving inf left it there: 2000
    iterations at the start point."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent
    from coplug.formulations.games import Game

    game = Game("two")
    a, b = game.add_player("a"), game.add_player("b")
    a.x = pyo.Var(bounds=(0, 4), initialize=1.0)
    b.y = pyo.Var(bounds=(0, 4), initialize=1.0)
    a.utility = pyo.Expression(expr=-(a.x - 3) ** 2)
    b.utility = pyo.Expression(expr=-(b.y - 3) ** 2)
    game.model.shared = pyo.Constraint(expr=a.x + b.y <= 4)
    found = barrier_gradient_ascent(game, step=1e308, max_iter=2000)
    assert found.converged
    assert found.profile["a"][0] == pytest.approx(2.0, abs=1e-3)


def test_loading_rowdualnet_leaves_the_callers_torch_generator_alone(tmp_path) -> None:
    """Building the network before its weights were copied in drew from torch's global
    generator, so load() moved a caller's seeded stream."""
    import torch

    from coplug.learned import rowdualnet

    path = tmp_path / "r.pt"
    rowdualnet.save(rowdualnet.RowDualNet(hidden=4), path, {"run": 1})
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    rowdualnet.load(path)
    assert torch.equal(torch.rand(3), expected)


def test_train_rowdual_gives_back_torch_threads_and_generator(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """main() left torch at 1 thread, and train() reseeded the global generator."""
    import torch

    from coplug.learned import train_rowdual
    from coplug.learned.rowdualnet import N_FEATURES

    data = [(torch.ones(5, N_FEATURES), torch.ones(5))]
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    train_rowdual.train(data, epochs=1, hidden=4, seed=3)
    assert torch.equal(torch.rand(2), expected)

    threads = torch.get_num_threads()

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(train_rowdual, "fit_and_evaluate", interrupted)
    assert train_rowdual.main(["--quick", "--out", str(tmp_path / "q.pt")]) == 130
    assert torch.get_num_threads() == threads


def test_a_race_that_raises_releases_its_pipes_without_the_collector() -> None:
    """Each failed race kept 4 descriptors open until a full garbage collection."""
    import gc
    import os

    from coplug.formulations.mip_families import mknapsack
    from coplug.plugins import race

    def bad() -> pyo.ConcreteModel:
        m = mknapsack(10, seed=1)
        m.c2 = pyo.Constraint(expr=float("nan") * m.x[0] <= 1)
        return m

    gc.collect()
    gc.disable()
    try:
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(3):
            with pytest.raises(InputError):
                race(bad(), time_limit=5)
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        gc.enable()


def test_the_command_line_gives_back_its_streams_error_handling() -> None:
    """main() left stdout escaping every later print (errors='backslashreplace')."""
    import io
    import sys

    from coplug.plugins.cli import main

    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
    saved, sys.stdout = sys.stdout, out
    try:
        with pytest.raises(SystemExit):
            main(["--help"])
    finally:
        sys.stdout = saved
    assert out.errors == "strict"


def test_pgd_refuses_a_learning_rate_it_would_ignore() -> None:
    """lr 1e-300, 0.3 and 1e300 gave PGD bit-identical runs: it takes its own step."""
    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
    from coplug.formulations.qubo_solvers import minimize

    qubo = knapsack_qubo_safe(random_knapsack(6, seed=1, r=10))
    with pytest.raises(InputError, match="lr is Adam's learning rate"):
        minimize(qubo, method="pgd", lr=0.3, starts=2, max_iter=5)
    slow = minimize(qubo, method="adam", lr=1e-6, starts=2, max_iter=5, certify_points=False)
    fast = minimize(qubo, method="adam", starts=2, max_iter=5, certify_points=False)
    assert not np.array_equal(slow.points, fast.points)  # Adam does take it


def test_a_knapsack_margin_that_rounds_the_values_away_is_refused() -> None:
    """margin=1e20 left one distinct linear term: every start ended at the empty knapsack."""
    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack

    instance = random_knapsack(6, seed=1, r=10)
    with pytest.raises(InputError, match="round the item values away"):
        knapsack_qubo_safe(instance, margin=1e20)
    assert np.unique(knapsack_qubo_safe(instance, margin=1e6).c).size > 1


@pytest.mark.parametrize("lower, upper", [(0.0, 5e-324), (-1e300, 1e300), (1e15, 1e15 + 0.5)])
def test_bbo_boxes_the_solvers_cannot_work_in_are_refused(lower: float, upper: float) -> None:
    """[0, 5e-324] divided by zero inside CMA-ES, [-1e300, 1e300] made the Lipschitz
    solver's bounds nan (argmin of an empty sequence)."""
    from coplug.formulations.bbo import as_box_function, load

    with pytest.raises(InputError, match="box"):
        load("sum(x)", dim=2, lower=lower, upper=upper)
    with pytest.raises(InputError, match="box"):
        as_box_function(lambda x: float(np.sum(x)), dim=2, lower=lower, upper=upper)


@pytest.mark.parametrize("rho", [5e-324, 1e-20, 1e20, 1e300])
def test_riemannian_rho_out_of_scale_is_refused_by_name(rho: float) -> None:
    """Huge or tiny rho ended in numpy's LinAlgError or a rank-deficient polar factor that
    did not mention rho (tiny ones ran without converging)."""
    from coplug.formulations.fair_graphs import fair_sbm
    from coplug.learned.fair_spectral import FairSpectralClustering

    graph = fair_sbm(120, n_clusters=3, seed=1)
    with pytest.raises(InputError, match="rho .* out of scale"):
        FairSpectralClustering(3, graph.groups, method="riemannian", rho=rho).fit(
            graph.adjacency)


def test_fair_sbm_rates_and_shares_are_relative_at_any_scale() -> None:
    """(1e308, 5, 1.5, 1) drew no edges (its scale underflowed to 0); shares (1e308, 1e308)
    summed to inf, numpy's 'probabilities do not sum to 1'."""
    from coplug.formulations.fair_graphs import fair_sbm

    base = fair_sbm(200, n_clusters=2, seed=3, affinity=(1.0, 5e-308, 0.0, 0.0))
    huge = fair_sbm(200, n_clusters=2, seed=3, affinity=(1e308, 5.0, 0.0, 0.0))
    assert huge.adjacency.nnz == pytest.approx(base.adjacency.nnz, rel=0.2)
    shared = fair_sbm(200, n_clusters=2, seed=3, group_share=(1e308, 1e308))
    assert np.bincount(shared.groups).min() >= 60  # two groups of about half each


def test_infeasibilities_refuses_an_infinite_tolerance() -> None:
    """tol=inf passed every point."""
    from coplug.plugins.feasibility import infeasibilities

    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=5.0)
    m.c = pyo.Constraint(expr=m.x <= 1)
    assert infeasibilities(m)  # missed by 4
    with pytest.raises(InputError, match="finite number >= 0"):
        infeasibilities(m, tol=float("inf"))


def test_highs_takes_a_long_double_option() -> None:
    """np.longdouble(0.1) for mip_rel_gap was refused as out of HiGHS's range."""
    from coplug.formulations.mip_families import mknapsack
    from coplug.plugins import solve

    gap = solve(mknapsack(10), solver="highs", options={"mip_rel_gap": np.longdouble(0.1)})
    assert gap.has_solution and gap.status in (Status.OPTIMAL, Status.FEASIBLE)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_front_points_closer_than_the_round_off_room_are_kept(solver: str) -> None:
    """Points 5 and 3 apart near 1e7 (a room of 10 and 20) with step=1: the repeated-point
    stop called the front done at its first point; before it, each point was dropped as a
    round-off miss of the next and the last alone came back, called complete."""
    m = pyo.ConcreteModel()
    m.z = pyo.Var(range(4), domain=pyo.Binary)
    m.x = pyo.Var(bounds=(0, 1e9))
    m.y = pyo.Var(bounds=(0, 1e9))
    m.cx = pyo.Constraint(expr=m.x == 1e7 + 5 * sum(m.z[k] for k in range(4)))
    m.cy = pyo.Constraint(expr=m.y == 2e7 - 3 * sum(m.z[k] for k in range(4)))
    m.f1 = pyo.Objective(expr=m.x)
    m.f2 = pyo.Objective(expr=m.y)
    m.f2.deactivate()
    front = pareto_front(m, m.f1, m.f2, solver=solver, step=1.0)
    assert front.complete and front.status is Status.OPTIMAL
    assert [p.values for p in front.points] == [(1e7 + 5 * k, 2e7 - 3 * k) for k in range(5)]


def test_a_float16_time_limit_is_compared_without_an_overflow_warning() -> None:
    """Comparing np.float16(3) with 1e20 cast 1e20 to float16: a RuntimeWarning, an error
    under -W error."""
    import warnings

    from coplug.plugins.limits import checked_time_limit

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert checked_time_limit(np.float16(3)) == 3.0
        assert checked_time_limit(10**400) is None


def test_a_tiny_but_well_scaled_bbo_box_is_accepted() -> None:
    """The box floor was absolute (1e-12): [0, 1e-13] works as [0, 1] does."""
    from coplug.formulations.bbo import as_box_function, load

    assert load("sum(x)", dim=2, lower=0.0, upper=1e-13).upper == 1e-13
    as_box_function(lambda x: float(np.sum(x)), dim=2, lower=1e-15, upper=3e-15)
