"""Session 37 review fixes, each test checked to fail with its fix undone."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from test_review_s36 import _two_player_game

from coplug.plugins import solve
from coplug.plugins.errors import InputError
from coplug.plugins.lap import solve_lap

# A 16-binary model on which SCIP 10, with presolving and root cuts off, restarts at the root
# after a MIP start and stops with "invalid SCIP status <0>" (found by a probe).
_C = [6, 1, 2, -1, 1, 2, 7, -6, -3, 1, -4, 3, 6, -7, -9, 9]
_A = [[4, 6, 6, 8, 0, 2, 8, 3, 3, 2, 0, 0, 8, 0, 1, 2],
      [2, 7, 2, 1, 3, 6, 4, 2, 1, 0, 4, 1, 5, 6, 3, 4],
      [0, 4, 1, 4, 0, 2, 3, 4, 0, 8, 3, 1, 1, 6, 3, 2]]
_B = [24, 21, 21]
_START = [1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0]  # feasible, objective -21
_NO_PRESOLVE = {"presolving/maxrounds": 0, "separating/maxroundsroot": 0}


def _restart_model() -> pyo.ConcreteModel:
    """The probe's model, its variables at a feasible start."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(16), domain=pyo.Binary)
    m.o = pyo.Objective(expr=sum(_C[i] * m.x[i] for i in range(16)))
    m.r = pyo.ConstraintList()
    for k in range(3):
        row = sum(_A[k][i] * m.x[i] for i in range(16))
        m.r.add(row >= _B[k] - 8)
        m.r.add(row <= _B[k])
    for i in range(16):
        m.x[i].set_value(_START[i])
    return m


def test_warm_start_with_presolving_off_reaches_the_optimum() -> None:
    """A MIP start with presolving and root cuts off solves (it raised SolverError), to the
    optimum HiGHS finds."""
    warm = solve(_restart_model(), warmstart=True, **_NO_PRESOLVE)
    reference = solve(_restart_model(), solver="highs")
    assert warm.status.value == "optimal"
    assert warm.objective == pytest.approx(reference.objective) == pytest.approx(-28)


def test_restarts_stay_the_callers_when_set() -> None:
    """Restarts are switched off only with presolving off and only where the caller left
    them unset."""
    from pyscipopt import Model

    from coplug.plugins.bridge import _no_restarts_without_presolve

    default = Model().getParam("presolving/maxrestarts")
    for params, expected in (({"presolving/maxrounds": 0}, 0),
                             ({"presolving/maxrounds": 0, "presolving/maxrestarts": 3}, 3),
                             ({"presolving/maxrounds": 2}, default)):
        scip = Model()
        for key, value in params.items():
            scip.setParam(key, value)
        _no_restarts_without_presolve(scip, params)
        assert scip.getParam("presolving/maxrestarts") == expected


def _tiny_kernel(folder, name: str = "tiny_kernel"):
    """A fresh dispatcher of a one-line kernel whose source (and so cache) lies in `folder`."""
    import importlib.util

    path = folder / f"{name}.py"
    if not path.exists():
        path.write_text("def plus(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from coplug.plugins.lap.cache_dir import kernel

    return kernel(module.plus)


@pytest.mark.parametrize("damage", ["truncated index", "empty index", "garbled data"])
def test_an_unreadable_kernel_cache_file_is_compiled_afresh(tmp_path, monkeypatch, damage):
    """A truncated or garbled cache file made every call raise UnpicklingError/EOFError until
    someone deleted it; the kernel now compiles, answers and rewrites its cache."""
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    assert _tiny_kernel(tmp_path)(1) == 2
    index = next((tmp_path / "cache").rglob("*.nbi"))
    data = next((tmp_path / "cache").rglob("*.nbc"))
    if damage == "truncated index":
        index.write_bytes(index.read_bytes()[:10])
    elif damage == "empty index":
        index.write_bytes(b"")
    else:
        data.write_bytes(b"\x00not a pickle" * 10)
    assert _tiny_kernel(tmp_path)(41) == 42
    assert _tiny_kernel(tmp_path)(1) == 2  # and the rewritten cache reads back


def _no_temp_env(monkeypatch) -> None:
    """Take away the environment's temporary-folder choices."""
    for key in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(key, raising=False)


def test_kernel_cache_never_lands_in_the_working_directory(tmp_path, monkeypatch):
    """With no writable temporary folder Python falls back to the working directory; the
    kernels were then cached in the user's project folder. Now they go uncached."""
    import tempfile

    from coplug.plugins.lap import cache_dir

    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    _no_temp_env(monkeypatch)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(project))
    with pytest.raises(OSError, match="working directory"):
        cache_dir.private_temp_folder()
    assert list(project.iterdir()) == []
    monkeypatch.setenv("TMPDIR", str(project))  # the user's own choice stands
    assert cache_dir.private_temp_folder().startswith(str(project))


def test_a_shared_kernel_folder_is_passed_over_for_one_reused_across_runs(tmp_path,
                                                                          monkeypatch):
    """A `coplug-numba-<uid>` folder open to others made every run create (and leave) a new
    random folder; the next private name is taken instead, the same on every run."""
    import os
    import tempfile

    from coplug.plugins.lap import cache_dir

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    shared = tmp_path / f"coplug-numba-{cache_dir._user()}"
    shared.mkdir()
    os.chmod(shared, 0o777)
    first = cache_dir.private_temp_folder()
    assert first != str(shared) and cache_dir._private(first)
    assert cache_dir.private_temp_folder() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([shared.name,
                                                                 os.path.basename(first)])
    for k in range(1, cache_dir.PRIVATE_FOLDERS):  # every name taken: no cache, no new folder
        path = tmp_path / f"{shared.name}-{k}"
        path.mkdir(exist_ok=True)
        os.chmod(path, 0o777)
    with pytest.raises(OSError, match="no private"):
        cache_dir.private_temp_folder()
    assert len(list(tmp_path.iterdir())) == cache_dir.PRIVATE_FOLDERS


@pytest.mark.parametrize("argv", [
    ["qubo", "knapsack", "--size", "8", "--starts", "16"],
    ["lap", "--generator", "uniform", "--n", "50", "--k", "5"],
    ["bbo", "evolve", "--targets", "1", "--generations", "1", "--population", "4"],
])
def test_commands_draw_no_progress_bar_into_a_file(argv, tmp_path, monkeypatch, capfd):
    """`coplug qubo`, `lap --k` and `bbo evolve` drew tqdm's carriage-return redraws into a
    redirected stderr; like `coplug solve` they draw only on a terminal."""
    from coplug.plugins.cli import main

    monkeypatch.chdir(tmp_path)
    extra = ["--run-dir", str(tmp_path / "run")] if argv[0] == "bbo" else []
    assert main(argv + extra) == 0
    assert "\r" not in capfd.readouterr().err


def test_qubo_command_draws_its_bar_on_a_terminal(monkeypatch, capfd):
    """The terminal case still draws (stderr stands in for a terminal here)."""
    from coplug.formulations import qubo_cli
    from coplug.plugins.cli import main

    monkeypatch.setattr(qubo_cli, "on_terminal", lambda: True)
    assert main(["qubo", "knapsack", "--size", "8", "--starts", "16"]) == 0
    assert "\r" in capfd.readouterr().err


def test_evolve_is_quiet_unless_asked(capfd):
    """`evolve(config)` drew a progress bar by default, unlike the library's other calls."""
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    config = EvolutionConfig(dim=2, population=4, generations=1, seed=1)
    evolve(config)
    assert capfd.readouterr().err == ""
    evolve(config, progress=True)
    assert "evolve" in capfd.readouterr().err


def test_a_closed_pipe_under_tee_on_highs_exits_quietly():
    """`coplug solve ... --solver highs --tee | head -0` printed Pyomo's RuntimeError wrapping
    the BrokenPipeError (exit 1); it exits 141 with nothing on stderr, as on SCIP."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "coplug.plugins.cli", "solve", "knapsack", "--size", "30",
         "--solver", "highs", "--tee"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""


def test_closed_pipe_is_told_from_other_runtime_errors(monkeypatch, capfd):
    """Only a closed pipe exits 141: a SolverError (a RuntimeError too) stays an error line
    and exit 2, another RuntimeError comes out as itself."""
    from coplug.plugins import cli
    from coplug.plugins.errors import SolverError

    for exc, code in ((RuntimeError("BrokenPipeError: [Errno 32] Broken pipe"), 141),
                      (SolverError("SCIP stopped"), 2)):
        def failing(args, exc=exc):
            raise exc
        monkeypatch.setattr(cli, "_cmd_solve", failing)
        assert cli.main(["solve", "knapsack"]) == code
    monkeypatch.setattr(cli, "_cmd_solve", lambda args: (_ for _ in ()).throw(
        RuntimeError("something else")))
    with pytest.raises(RuntimeError, match="something else"):
        cli.main(["solve", "knapsack"])


def test_estimator_warnings_point_at_the_caller_through_fit_predict():
    """FairSpectralClustering's warning pointed into scikit-learn's base.py when called
    through `fit_predict` (the README's way); it names the caller's line."""
    import warnings

    from coplug.formulations.fair_graphs import fair_sbm
    from coplug.learned.fair_spectral import FairSpectralClustering

    data = fair_sbm(300, n_clusters=3, seed=1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        FairSpectralClustering(3, data.groups, method="riemannian",
                               max_iter=2).fit_predict(data.adjacency)
    assert seen and {w.filename for w in seen} == {__file__}


@pytest.mark.parametrize("generator", ["uniform", "geometric", "low_rank", "transport"])
@pytest.mark.parametrize("shape", [1.25, 2.0])
def test_rectangular_warm_start_from_own_duals_costs_no_more_than_cold(generator, shape):
    """Padded to a square with zero-cost rows, a wide solve's own duals tied the dummies on
    every column at 0: 55-109 augmentations of O(m^2) where the cold solve needed none
    (25-85x its time). In the rectangular frame they start at the optimum: no more
    augmentations than cold (none on uniform and tracking costs), far fewer on low-rank
    and transport costs, and the answer and its duals are scipy's optimum."""
    from scipy.optimize import linear_sum_assignment

    from coplug.formulations.assignment import generate

    n = 300
    c = generate(generator, n, seed=2, m=int(shape * n))
    cold = solve_lap(c)
    warm = solve_lap(c, row_duals=cold.row_duals)
    rows, cols = linear_sum_assignment(c)
    assert warm.cost == pytest.approx(c[rows, cols].sum(), rel=1e-12)
    assert warm.warm and not warm.fallback
    assert warm.augmentations <= max(cold.augmentations // 4, 0)
    reduced = c - warm.row_duals[:, None] - warm.col_duals[None, :]
    assert reduced.min() >= -1e-9 and abs(reduced[warm.row_ind, warm.col_ind]).max() <= 1e-9
    spare = np.setdiff1d(np.arange(c.shape[1]), warm.col_ind)
    assert not warm.col_duals[spare].any()


def test_rectangular_warm_starts_from_far_duals_stay_near_cold_work():
    """Duals 1% of the cost range off took 748 augmentations and a fallback where the cold
    solve took none (2.3 s against 6 ms at 1000 x 2000); now the start is released to
    the cold frame's invariant and takes at most a few of the cold solve's augmentations."""
    rng = np.random.default_rng(3)
    c = rng.random((400, 800))
    cold = solve_lap(c)
    for duals in (cold.row_duals + rng.normal(0, 0.01, 400), np.zeros(400),
                  cold.row_duals + 8 * c.max()):
        warm = solve_lap(c, row_duals=duals)
        assert warm.cost == pytest.approx(cold.cost, rel=1e-12) and not warm.fallback
        assert warm.augmentations <= cold.augmentations + 5


def test_rectangular_warm_duals_of_1e15_return_feasible_duals():
    """Shifting duals near 1e15 and their Min-Trick columns by the same constant rounded
    them apart: the returned column duals broke u_i + v_j <= c_ij by 0.06 (maximized
    normal costs of size 1e3, one dual 1e200). The shifted row duals are priced afresh."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.integers(5, 25))
        c = rng.normal(size=(n, n + int(rng.integers(1, 15)))) * 10.0 ** rng.integers(-3, 5)
        maximize = bool(rng.integers(0, 2))
        found = solve_lap(c, maximize=maximize,
                          row_duals=rng.choice([1e15, -1e15, 1e200, 0.0], n))
        reduced = c - found.row_duals[:, None] - found.col_duals[None, :]
        reduced = -reduced if maximize else reduced
        tol = 1e-9 * abs(c).max()
        assert reduced.min() >= -tol, reduced.min()
        assert abs(reduced[found.row_ind, found.col_ind]).max() <= tol


def _brute_k_best(c: np.ndarray, k: int, maximize: bool) -> list[float]:
    """The k best assignment costs of a wide matrix by enumeration."""
    import itertools

    n, m = c.shape
    costs = [c[np.arange(n), list(cols)].sum() for cols in itertools.permutations(range(m), n)]
    return sorted(costs, reverse=maximize)[:k]


def test_wide_rankings_keep_only_the_columns_the_k_best_need():
    """A wide frame was ranked on an m x m copy (50 x 16000: 18.7 s, 6 GB); each row's
    n + k - 1 cheapest columns suffice. The costs stay the brute-force k best, with ties,
    maximize, forbidden pairs and transposed input, and the pruned columns are never used."""
    import scipy.sparse as sp

    from coplug.plugins.lap.ranked import _best_columns, ranked_assignments

    rng = np.random.default_rng(5)
    pruned = 0
    for trial in range(150):
        n, k = int(rng.integers(1, 4)), int(rng.integers(1, 7))
        m = n + int(rng.integers(1, 9))
        c = rng.integers(0, 4, (n, m)).astype(float) if trial % 2 else rng.random((n, m))
        maximize = trial % 3 == 0
        pruned += _best_columns(-c if maximize else c, k)[1] is not None
        given = c.T if trial % 4 == 0 else c
        found = ranked_assignments(given, k, maximize=maximize)
        assert found.costs == pytest.approx(_brute_k_best(c, k, maximize))
        for s in found.solutions:
            assert given[s.row_ind, s.col_ind].sum() == pytest.approx(s.cost)
    assert pruned > 50
    c = rng.random((3, 40))
    mask = rng.random(c.shape) < 0.95  # dense enough to take the dense path, some pairs out
    found = ranked_assignments(sp.csr_matrix(np.where(mask, c, 0.0)), 4)
    assert found.costs == pytest.approx(_brute_k_best(np.where(mask, c, np.inf), 4, False))


def test_wide_ranking_is_no_longer_quadratic_in_its_width(monkeypatch):
    """50 x 8000 took 3.9 s (17x the 50 x 2000 frame) on an 8000 x 8000 copy; the copy is
    now at most 50 x 59 columns wide whatever m."""
    from coplug.plugins.lap import ranked

    shapes = []
    padded = ranked._padded
    monkeypatch.setattr(ranked, "_padded", lambda c: shapes.append(c.shape) or padded(c))
    c = np.random.default_rng(1).random((50, 8000))
    found = ranked.ranked_assignments(c, 10)
    assert found.status == "k_found" and shapes and shapes[0][1] <= 50 * 59


def _knapsack_two_objectives() -> pyo.ConcreteModel:
    """A 4-item knapsack with a second (deactivated) objective, the item count."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=3 * m.x[0] + 4 * m.x[1] + 5 * m.x[2] + 6 * m.x[3] <= 10)
    m.value = pyo.Objective(expr=4 * m.x[0] + 5 * m.x[1] + 7 * m.x[2] + 8 * m.x[3],
                            sense=pyo.maximize)
    m.n = pyo.Objective(expr=sum(m.x.values()))
    m.n.deactivate()
    return m


@pytest.mark.parametrize("options", [{"solver": "simplex"}, {"time_limit": 5}])
def test_wrappers_pass_options_named_like_solve_arguments_to_the_solver(options):
    """k_best, lexicographic and pareto_front raised "got multiple values for keyword
    argument 'solver'" on HiGHS's own `solver` option (and k_best on `time_limit`); the
    README says options= takes such names, as solve() does."""
    from coplug.plugins import k_best, lexicographic, pareto_front

    best = solve(_knapsack_two_objectives(), solver="highs", options=options).objective
    assert best == pytest.approx(solve(_knapsack_two_objectives()).objective)
    found = k_best(_knapsack_two_objectives(), k=2, solver="highs", options=options)
    assert found.proven and found.solutions[0].objective == pytest.approx(best)
    m = _knapsack_two_objectives()
    assert lexicographic(m, [m.value], solver="highs", options=options).status.value == "optimal"
    m = _knapsack_two_objectives()
    front = pareto_front(m, m.value, m.n, solver="highs", options=options)
    assert front.points[0].values[0] == pytest.approx(best)


def test_pmvb_steps_take_limits_and_solver_names_as_solve_does(monkeypatch):
    """solve_pmvb_prefix/start gave every step a native `limits/time` in full (4 s for 2),
    raised OverflowError after step 1 on time_limit=10**400 and refused solver='SCIP'."""
    from coplug.plugins.pmvb import steps_options
    from coplug.plugins.pmvb_prefix import solve_pmvb_prefix
    from coplug.plugins.pmvb_start import solve_pmvb_start

    assert steps_options("f", None, {"limits/time": 2.0, "limits/nodes": 5}) == (
        2.0, {"limits/nodes": 5})
    assert steps_options("f", None, {"options": {"limits/time": 3}}) == (3.0, {})
    assert steps_options("f", 10**400, {"solver": "SCIP"}) == (None, {})
    with pytest.raises(InputError, match="runs SCIP"):
        steps_options("f", None, {"solver": "highs"})
    with pytest.raises(InputError, match="both set a time limit"):
        steps_options("f", 1.0, {"limits/time": 2.0})
    best = solve(_restart_model()).objective
    for call in (solve_pmvb_prefix, solve_pmvb_start):
        result = call(_restart_model(), "lp", solver="SCIP", time_limit=10**400)
        assert result.objective == pytest.approx(best)


def test_public_flags_refuse_non_booleans(tmp_path):
    """evolve's progress/overwrite, barrier_gradient_ascent's keep_iterates and mip_labels'
    check took any truthy object: overwrite="no" rewrote an earlier run's files."""
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve
    from coplug.formulations.fair_clustering_mip import mip_labels
    from coplug.formulations.game_solvers import barrier_gradient_ascent
    from coplug.plugins.errors import InputError

    config = EvolutionConfig(dim=2, population=4, generations=1, seed=1)
    for kwargs in ({"progress": "no"}, {"overwrite": "no", "run_dir": tmp_path}):
        with pytest.raises(InputError, match="must be True or False"):
            evolve(config, **kwargs)
    with pytest.raises(InputError, match="keep_iterates must be True or False"):
        barrier_gradient_ascent(_two_player_game(start=1.0), keep_iterates="no")
    with pytest.raises(InputError, match="check must be True or False"):
        mip_labels(pyo.ConcreteModel(), check="no")


def test_counts_and_seeds_take_numpy_integers_and_refuse_bools():
    """as_box_function refused dim=np.int64(2) as if it were missing; EvolutionConfig took
    seed=True and 2**63, which every other seed refuses."""
    from coplug.formulations.bbo import as_box_function
    from coplug.formulations.bbo.evolve import EvolutionConfig

    assert as_box_function(lambda x: (x ** 2).sum(axis=-1), dim=np.int64(2)).dim == 2
    for seed in (True, 2**63, -1):
        with pytest.raises(InputError, match="seed"):
            EvolutionConfig(seed=seed)


def test_results_holding_arrays_compare_by_value():
    """QUBO, RunReport, AscentResult and a game Certificate raised "truth value of an array
    is ambiguous" on ==; they compare field by field as LapSolution does, a QUBO by its data
    (two builds hold distinct closures), and a Result whose extra holds an array too."""
    import copy

    from coplug.formulations.game_solvers import barrier_gradient_ascent, certify
    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
    from coplug.formulations.qubo_solvers import minimize
    from coplug.plugins.results import Result, Status

    instance = random_knapsack(6, seed=0, r=5)
    qubo = knapsack_qubo_safe(instance)
    assert qubo == knapsack_qubo_safe(instance) and qubo != knapsack_qubo_safe(
        random_knapsack(6, seed=1, r=5))
    report = minimize(qubo, starts=4, max_iter=20)
    game = _two_player_game(start=1.0)
    ascent = barrier_gradient_ascent(game, mu=1e-3, max_iter=200)
    for value in (report, ascent, certify(game)):
        assert value == copy.deepcopy(value)
    result = Result(Status.OPTIMAL, 1.0, extra={"x": np.arange(3.0)})
    assert result == copy.deepcopy(result)


def test_large_results_print_a_summary():
    """repr of 100 ranked assignments of 300 rows ran to 340,000 characters, of 2000 QUBO
    starts to 236,000, of one 300-row LAP solution to 13,000."""
    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
    from coplug.formulations.qubo_solvers import minimize
    from coplug.plugins.lap import ranked_assignments

    c = np.random.default_rng(0).random((300, 300))
    ranking = ranked_assignments(c, 100)
    assert len(repr(ranking)) < 1000 and "100 solutions" in repr(ranking)
    solution = solve_lap(c)
    text = repr(solution)
    assert len(text) < 1000 and "\n" not in text and f"cost={solution.cost!r}" in text
    report = minimize(knapsack_qubo_safe(random_knapsack(6, seed=0, r=5)), starts=2000,
                      max_iter=5, certify_points=False)
    assert len(repr(report)) < 1000 and "starts=2000" in repr(report)


def test_tsp_solver_names_are_case_blind_and_lap_is_refused(monkeypatch):
    """solve_tsp_lazy(solver='SCIP') took the round-by-round path; solver='lap' failed in
    round 2 with "variable 'x[0,7]' is in 3 constraints"."""
    from coplug.formulations import tsp

    dist = tsp.random_euclidean(7, seed=1).dist
    best = tsp.tour_length(dist, tsp.solve_tsp_lazy(dist))
    monkeypatch.setattr(tsp, "solve_tsp_rounds", lambda *a: pytest.fail("took the rounds"))
    assert tsp.tour_length(dist, tsp.solve_tsp_lazy(dist, solver="SCIP")) == pytest.approx(best)
    monkeypatch.undo()
    with pytest.raises(InputError, match="needs a MIP solver"):
        tsp.solve_tsp_lazy(dist, solver="lap")


def test_maximized_wide_transport_duals_passed_back_need_no_fallback():
    """The negative columns' matching took round-off-tight pairs where exact ones existed;
    their round-off summed past the warm certificate (a fallback and 283 augmentations
    where the cold solve took 281). Exact pairs come first: one augmentation."""
    from coplug.formulations.assignment import generate

    c = generate("transport", 300, seed=1, m=375)
    cold = solve_lap(c, maximize=True)
    warm = solve_lap(c, maximize=True, row_duals=cold.row_duals)
    assert warm.cost == cold.cost and not warm.fallback
    assert warm.augmentations < cold.augmentations // 10


def test_qubos_pickle_with_their_decoders():
    """Every packaged QUBO failed to pickle ("Can't pickle local object
    'knapsack_qubo_safe.<locals>.decode'"), so none could go to a process pool; the
    decoders are module functions now and decode, test and price alike after the trip."""
    import pickle

    from coplug.formulations.knapsack import (
        KnapsackInstance,
        knapsack_qubo_naive,
        knapsack_qubo_safe,
        random_knapsack,
    )
    from coplug.formulations.openpit import (
        openpit_qubo_naive,
        openpit_qubo_safe,
        random_block_model,
    )
    from coplug.formulations.tsp import random_euclidean, tsp_qubo_naive, tsp_qubo_safe

    knapsack, pit = random_knapsack(6, seed=0), random_block_model(30)
    dist = random_euclidean(5, seed=0).dist
    empty = KnapsackInstance(values=np.array([3, 4]), weights=np.array([5, 6]), capacity=0)
    qubos = [knapsack_qubo_safe(knapsack), knapsack_qubo_naive(knapsack),
             knapsack_qubo_safe(empty), openpit_qubo_safe(pit), openpit_qubo_naive(pit),
             tsp_qubo_safe(dist), tsp_qubo_naive(dist)]
    rng = np.random.default_rng(0)
    for qubo in qubos:
        again = pickle.loads(pickle.dumps(qubo))
        assert again == qubo
        for _ in range(5):
            z = np.round(rng.random(qubo.n))
            x, y = qubo.decode(z), again.decode(z)
            assert (x is None and y is None) or np.array_equal(x, y)
            if x is not None:
                assert qubo.is_feasible(x) == again.is_feasible(y)
                if qubo.is_feasible(x):
                    assert qubo.objective(x) == again.objective(y)


def test_a_native_time_limit_past_the_float_range_means_no_limit():
    """`limits/time` (or HiGHS's `time_limit`) of 10**400 raised a bare OverflowError in
    float(); time_limit=10**400 already meant no limit."""
    from coplug.plugins import k_best

    best = solve(_restart_model()).objective
    assert solve(_restart_model(), **{"limits/time": 10**400}).objective == best
    assert solve(_restart_model(), solver="highs",
                 options={"time_limit": 10**400}).objective == pytest.approx(best)
    assert k_best(_restart_model(), k=1, **{"limits/time": 10**400}).solutions[0].objective \
        == pytest.approx(best)


def test_maximized_warm_answers_are_certified_at_the_size_of_their_costs():
    """The strict certificate sized each pair's round-off by |c_ij - u_i| + |v_j|; where a
    maximized cost and its dual nearly cancel (about -93 each) that understated the round
    -off of c_ij - u_i, and optimal warm answers were refused: 10 and 17 of 20 wide rank-1
    frames fell back from own and zero duals. Each answer is still scipy's optimum."""
    from scipy.optimize import linear_sum_assignment

    fallbacks = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        c = np.outer(rng.random(20), np.random.default_rng(seed + 99).random(2000)) * 100
        rows, cols = linear_sum_assignment(c, maximize=True)
        cold = solve_lap(c, maximize=True)
        for duals in (cold.row_duals, np.zeros(20)):
            warm = solve_lap(c, maximize=True, row_duals=duals)
            assert warm.cost == pytest.approx(c[rows, cols].sum(), rel=1e-12)
            fallbacks += warm.fallback
    assert fallbacks == 0
