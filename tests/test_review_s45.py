"""Session 45: fixes found by this session's probes and reviews, each checked to fail
with its fix undone."""
from __future__ import annotations

import json
import sys

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import setcover_relaxed

from coplug.plugins import solve


def test_the_factory_error_names_the_objective_limit() -> None:
    """An LP stopped by `objective_bound` through Pyomo's factory raised "the solve ended
    unknown" with nothing saying why; the objective limit is named now."""
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.util import NoFeasibleSolutionError, NoOptimalSolutionError

    import coplug.plugins  # noqa: F401  (registers coplug_highs)

    m = setcover_relaxed(200)
    optimum = solve(m, solver="highs").objective
    with pytest.raises(NoFeasibleSolutionError, match="objective limit"):  # legacy factory
        pyo.SolverFactory("coplug_highs").solve(
            m, solver_options={"objective_bound": 0.9 * optimum})
    with pytest.raises(NoOptimalSolutionError, match="objective limit"):
        SolverFactory("coplug_highs").solve(
            m, solver_options={"objective_bound": 0.9 * optimum})


def test_saving_a_joblib_keeps_the_json_of_the_pt_beside_it(tmp_path) -> None:
    """p.json recording p.pt's sha256 holds p.pt's tuned t and q: saving p.joblib removed
    it, so p.pt then ran with the defaults. A JSON describing the replaced file still
    goes."""
    from coplug.learned.checkpoint_io import file_sha256
    from coplug.learned.pmvb_features import FEATURE_NAMES
    from coplug.learned.pmvb_predictors import (
        PMVBPredictor,
        checkpoint_metadata,
        load_predictor,
    )

    rng = np.random.default_rng(3)
    features = rng.normal(size=(60, len(FEATURE_NAMES)))
    labels = (features[:, 0] > 0).astype(int)
    predictor = PMVBPredictor(kind="logreg", calibration="none").fit(features, labels)
    pt = predictor.save(tmp_path / "p.pt")
    meta = {"threshold": 0.7, "confidence": 0.9, "sha256": file_sha256(pt)}
    (tmp_path / "p.json").write_text(json.dumps(meta))
    joblib = predictor.save(tmp_path / "p.joblib")
    assert checkpoint_metadata(pt)["threshold"] == 0.7
    assert checkpoint_metadata(joblib) == {}  # p.pt's JSON: not the new file's, no refusal
    assert checkpoint_metadata(tmp_path / "q.joblib") == {}
    (tmp_path / "q.json").write_text(json.dumps(meta))  # q.joblib absent, q.pt is p.pt
    (tmp_path / "q.pt").write_bytes(pt.read_bytes())
    assert checkpoint_metadata(tmp_path / "q.joblib") == {}
    assert np.array_equal(load_predictor(joblib).predict_proba(features),
                          predictor.predict_proba(features))
    (tmp_path / "p.json").write_text(json.dumps({"threshold": 0.7}))  # no record: goes
    predictor.save(tmp_path / "p.joblib")
    assert not (tmp_path / "p.json").exists()


def _knapsack(n: int = 25):
    """A 0/1 knapsack on which HiGHS finds several improving solutions."""
    import random

    r = random.Random(3)
    w = [r.randint(100, 200) for _ in range(n)]
    v = [x + r.randint(0, 30) for x in w]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in range(n)) <= sum(w) // 2)
    m.o = pyo.Objective(expr=sum(v[i] * m.x[i] for i in range(n)), sense=pyo.maximize)
    return m


@pytest.mark.parametrize("tee", [False, True])
def test_a_highs_solve_leaves_the_process_streams_alone(tee, capsys) -> None:
    """Pyomo's HiGHS interface swapped sys.stdout and descriptors 1 and 2 for the whole
    process while it ran: other threads' prints vanished or raised "I/O operation on closed
    file", and a callback's prints were dropped. The streams stay; the log goes to them."""
    import os

    from coplug.plugins import OnSolution

    stdout, fd1 = sys.stdout, os.fstat(1)
    seen = []

    def report(values, objective) -> None:
        seen.append((sys.stdout is stdout, os.path.samestat(os.fstat(1), fd1)))
        print(f"found {objective:g}")

    result = solve(_knapsack(), solver="highs", tee=tee, plugins=[OnSolution(report)])
    assert result.status.value == "optimal" and seen
    assert all(same for pair in seen for same in pair)
    out = capsys.readouterr().out
    assert out.count("found ") == len(seen)
    assert ("Presolving model" in out) is tee  # HiGHS's log, through sys.stdout


def test_highs_settle_run_logs_with_tee(capsys) -> None:
    """The run that settles HiGHS's "infeasible or unbounded" logs to the same stream as
    the solve (its log went to the console HiGHS no longer writes to)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.c = pyo.Constraint(expr=m.x - m.y <= 3)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    assert solve(m, solver="highs", tee=True).status.value == "unbounded"
    assert capsys.readouterr().out.count("Solution status") == 2  # the solve's and the settle's


def test_a_fork_during_a_cached_property_does_not_wait_for_good() -> None:
    """Python 3.10-3.11's functools.cached_property holds one lock per method across all
    instances while computing: a racer forked meanwhile by another thread's solve
    (`race` beside a HiGHS solve, whose row checks use it) waited on it for good."""
    import os
    import threading
    import time

    from coplug.plugins.cached import cached_property

    inside, release = threading.Event(), threading.Event()

    class Slow:
        @cached_property
        def value(self) -> int:
            """Blocks the first instance until released."""
            if not inside.is_set():
                inside.set()
                release.wait(30)
            return 7

    thread = threading.Thread(target=lambda: Slow().value)
    thread.start()
    try:
        assert inside.wait(10)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if Slow().value == 7 else 1)
        deadline = time.monotonic() + 10
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0
    finally:
        release.set()
        thread.join()


def test_no_functools_cached_property_in_coplug() -> None:
    """Every cached property of the package is the lock-free one (see the test above)."""
    import functools
    import importlib
    import inspect
    import pkgutil

    import coplug.formulations
    import coplug.learned
    import coplug.plugins

    found, modules = [], 0
    for package in (coplug.plugins, coplug.formulations, coplug.learned):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            modules += 1
            for _, cls in inspect.getmembers(module, inspect.isclass):
                found += [f"{cls.__module__}.{cls.__name__}.{name}" for name, attr in
                          vars(cls).items() if isinstance(attr, functools.cached_property)]
    assert modules > 100 and not found


def test_the_cut_objective_checks_its_labels() -> None:
    """`mip_objective` on an objective="cut" model took one label for 8 nodes as cut 0 (so
    `objective_mismatch` passed any reported value) and a column of labels as cut 48 for
    a true 7; the ratio-cut branch refused both, as both now do."""
    from coplug.formulations import fair_clustering_mip as fcm
    from coplug.formulations import fair_graphs, fair_metrics
    from coplug.plugins.errors import InputError

    graph = fair_graphs.fair_communities(4)
    model = fcm.fair_clustering_mip(graph.adjacency, graph.groups, 2, objective="cut")
    alternating = np.arange(8) % 2
    assert fcm.mip_objective(model, alternating) == pytest.approx(
        fair_metrics.cut_weight(graph.adjacency, alternating))
    assert fcm.mip_objective(model, list(alternating)) == fcm.mip_objective(model, alternating)
    for bad in (np.array([0]), alternating.reshape(8, 1), [0, 1, 0]):
        with pytest.raises(InputError, match="labels"):
            fcm.mip_objective(model, bad)
        with pytest.raises(InputError, match="labels"):
            fcm.objective_mismatch(model, bad, reported=0.0)


def test_integers_float64_would_round_are_refused() -> None:
    """TSP distances past 2**53 were rounded with no word: both TSP solvers returned the
    tour 1 longer than the optimum, and `tour_length` a length neither tour has. An
    integer float64 holds exactly still passes."""
    from coplug.formulations import openpit, tsp
    from coplug.plugins.errors import InputError

    big = 2**53
    d = np.zeros((3, 3), dtype=np.int64)
    d[0, 1] = d[1, 2] = d[2, 0] = big + 1
    d[0, 2], d[2, 1], d[1, 0] = big + 2, big, big
    for call in (lambda: tsp.solve_tsp_lazy(d), lambda: tsp.tour_length(d, [0, 1, 2]),
                 lambda: openpit.BlockModel(np.array([[big + 1, 0]]))):
        with pytest.raises(InputError, match="rounds to 9007199254740992"):
            call()
    exact = d.copy()
    exact[exact == big + 1] = big + 2  # even: float64 holds it
    assert tsp.tour_length(exact, [0, 2, 1]) == pytest.approx(3 * big + 2, rel=1e-15)


def test_tensors_that_require_grad_are_read_as_their_values() -> None:
    """numpy refuses a tensor that requires grad ("Can't call numpy() on Tensor that
    requires grad"), which came out of these entry points naming no argument."""
    import torch

    from coplug.formulations import assignment, games, knapsack
    from coplug.learned.rowdualnet import load, min_trick
    from coplug.plugins.lap import solve_lap

    c = np.random.default_rng(0).uniform(size=(6, 6))
    grad = torch.tensor(c, requires_grad=True)
    assert solve_lap(grad).cost == pytest.approx(solve_lap(c).cost)
    assert np.array_equal(min_trick(grad, np.zeros(6)), min_trick(c, np.zeros(6)))
    assert np.array_equal(load().predict_duals(grad), load().predict_duals(c))
    assert pyo.value(solve(assignment.assignment_model(grad)).objective) == pytest.approx(
        solve_lap(c).cost)
    values = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
    assert knapsack.KnapsackInstance(values, [1, 2, 3], 3).values.tolist() == [3, 4, 5]
    assert games.cournot(2, costs=torch.tensor([1.0, 2.0], requires_grad=True)) is not None


def test_an_isolated_node_of_a_networkx_graph_is_named() -> None:
    """The error named the isolated node's position ("node 12") for a node called 'iso'."""
    import networkx as nx

    from coplug.formulations.fair_graphs import validate_fair_graph
    from coplug.plugins.errors import InputError

    graph = nx.complete_graph(["a", "b", "c", "d"])
    graph.add_node("iso")
    with pytest.raises(InputError, match="node 'iso'"):
        validate_fair_graph(graph, None)


def _one_player(utility, bounds=(0, 1e7)):
    """A one-player game with x in `bounds` and utility(x)."""
    from coplug.formulations.games import Game

    game = Game("s")
    block = game.add_player("a")
    block.x = pyo.Var(bounds=bounds, initialize=1.0)
    block.utility = pyo.Expression(expr=utility(block.x))
    return game, block


def test_small_curvature_over_a_wide_box_is_named() -> None:
    """1e-10 x^2 - 1e-4 x over [0, 1e7] is convex (best response 1e7, worth 9000) and the
    ascent stopped `converged` near 0 with no warning: the round-off floor was absolute."""
    from coplug.formulations.game_curvature import curvature_warnings
    from coplug.formulations.game_solvers import certify

    game, block = _one_player(lambda x: 1e-10 * x**2 - 1e-4 * x)
    assert any("not concave" in m for m in curvature_warnings(game))
    for extra in (lambda b: 1e3 * b.z, lambda b: 200 * b.x * b.z):  # z in [0, 1e-9]: its big
        wide, block2 = _one_player(lambda x: 1e-10 * x**2 - 1e-3 * x)  # coefficient is no
        block2.z = pyo.Var(bounds=(0, 1e-9), initialize=0.0)  # round-off scale for x^2
        block2.utility.set_value(block2.utility.expr + extra(block2))
        assert any("not concave" in m for m in curvature_warnings(wide))
    pair, first = _one_player(lambda x: 1e-10 * x**2 - 1e-4 * x)
    other = pair.add_player("b")  # another player's large term sets no round-off scale
    other.y = pyo.Var(bounds=(0, 1), initialize=0.5)
    other.utility = pyo.Expression(expr=-other.y**2)
    first.utility.set_value(1e-10 * first.x**2 - 1e-4 * first.x + 1e3 * other.y)
    assert any("player 'a' is not concave" in m for m in curvature_warnings(pair))
    block.x.set_value(0.0)
    assert certify(game).gaps["a"] == pytest.approx(9000, rel=1e-6)  # the truth it names
    block.row = pyo.Constraint(expr=1e-10 * block.x**2 >= 1)
    assert any("row" in m and "lower side" in m for m in curvature_warnings(game))
    for box in ((0, 1), (0, 1e5), (0, 1e8)):  # 5.6e-17 x^2 beside x: round-off, any box,
        for slope in (1.0, 1e-6):  # beside a small linear term too
            tiny, _ = _one_player(
                lambda x, a=slope: (0.1 * x**2 + 0.2 * x**2 - 0.3 * x**2) - a * x, box)
            assert curvature_warnings(tiny) == []
    def cancelled(x):
        """0.1 x^2 + 0.2 x^2 - 0.3 x^2: 5.6e-17 x^2 as Pyomo sums it."""
        return 0.1 * x**2 + 0.2 * x**2 - 0.3 * x**2

    for form in (lambda x: 2 * cancelled(x) - x, lambda x: x * (0.1 * x + 0.2 * x - 0.3 * x) - x,
                 lambda x: -cancelled(x) / 3 - x):  # cancelling inside a product or quotient
        inside, block3 = _one_player(form, (0, 1e7))
        block3.row = pyo.Constraint(expr=block3.x <= 5 + 2 * cancelled(block3.x))
        assert curvature_warnings(inside) == []
    revenue, block = _one_player(lambda x: 0.1 * x**2)  # x (0.5 - 0.3 x - 0.3 y) + 0.3 x^2
    block.y = pyo.Var(bounds=(0, 1), initialize=0.0)
    block.y.fix()  # another player's, as far as x's curvature goes
    block.utility.set_value(block.x * (0.5 - 0.3 * block.x - 0.3 * block.y)
                            + 0.1 * block.x**2 + 0.2 * block.x**2)
    assert curvature_warnings(revenue) == []
    mixed, block = _one_player(lambda x: -x**2)  # x in [0, 1e7] must not hide y in [0, 1]
    block.y = pyo.Var(bounds=(0, 1), initialize=0.0)
    block.utility.set_value(-block.x**2 + block.y**2)
    assert any("eigenvalue +2" in m for m in curvature_warnings(mixed))
    huge, _ = _one_player(lambda x: 1e300 * x**2, (0, 1e10))  # the scaled Hessian overflows
    assert any("not concave" in m for m in curvature_warnings(huge))


def test_the_ascent_step_doubling_to_float_max_does_not_warn() -> None:
    """Accepted steps double eta; a numpy float doubling past 1.8e308 warned of overflow."""
    import warnings

    from coplug.formulations.game_solvers import barrier_gradient_ascent
    from coplug.formulations.games import cournot

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        barrier_gradient_ascent(cournot(3, 10, 1, 1.0, 5), mu=1e-15, max_iter=1200)


def test_building_a_first_highs_beside_a_solve_does_not_deadlock() -> None:
    """`new_highs` took a lock of its own, then the solve lock (for the banner's capture);
    a solve holds the solve lock and builds its HiGHS: two threads waited for good."""
    import threading

    from coplug.plugins import highs_interface
    from coplug.plugins.serial import one_solve_at_a_time

    highs_interface._banner_kept[0] = False  # as at the process's first construction
    holding = threading.Event()
    built = []

    def solving() -> None:
        with one_solve_at_a_time():
            holding.set()
            threading.Event().wait(0.3)  # the other thread asks for its HiGHS meanwhile
            built.append(highs_interface.new_highs())

    def building() -> None:
        holding.wait(10)
        built.append(highs_interface.new_highs())

    threads = [threading.Thread(target=solving, daemon=True),
               threading.Thread(target=building, daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads) and len(built) == 2


def test_a_failing_tee_stream_does_not_stop_the_solve(monkeypatch) -> None:
    """HiGHS's log goes through a callback: a stdout whose write raised made the OSError
    come out of `solve` (Pyomo's capture had reported it and gone on)."""
    class Broken:
        def write(self, text: str) -> int:
            raise OSError("broken pipe")

        def flush(self) -> None:
            raise OSError("broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    result = solve(_knapsack(), solver="highs", tee=True)
    monkeypatch.undo()
    assert result.status.value == "optimal"


def test_a_fractional_highs_start_is_judged_in_the_tee_log(capsys) -> None:
    """HiGHS gives its verdict on a MIP start only in its log: with tee=True it was lost
    once HiGHS logged to no console."""
    m = _knapsack(8)
    for var in m.x.values():
        var.set_value(0.5)
    assert solve(m, solver="highs", tee=True, warmstart=True).status.value == "optimal"
    from coplug.plugins.highs_interface import UncapturedHighs

    verdict = ("assessUserColValues" if UncapturedHighs().version() >= (1, 16)
               else "User-supplied values")  # as HiGHS 1.14-1.15 word it, in the run's log
    assert verdict in capsys.readouterr().out
    solve(m, solver="highs", warmstart=True)
    assert capsys.readouterr().out == ""


def test_factory_tee_without_a_stdout() -> None:
    """tee=True in a process whose stdout is closed (Python's sys.stdout is None): Pyomo's
    TeeStream wrote an error block to stderr per line it could not write."""
    import os
    import subprocess
    import textwrap

    script = textwrap.dedent("""
        import pyomo.environ as pyo
        from pyomo.contrib.solver.common.factory import SolverFactory
        import coplug.plugins
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(4), domain=pyo.Binary)
        m.c = pyo.Constraint(expr=sum(m.x[i] * (i + 1) for i in range(4)) <= 5)
        m.o = pyo.Objective(expr=sum(m.x[i] * (i + 2) for i in range(4)), sense=pyo.maximize)
        results = SolverFactory("coplug_highs").solve(m, tee=True)
        assert results.incumbent_objective == 7, results.incumbent_objective
    """)
    done = subprocess.run([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True,
                          timeout=120, preexec_fn=lambda: os.close(1))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Error writing" not in done.stderr


def test_pdlp_prints_nothing_without_tee(capfd, tmp_path) -> None:
    """HiGHS's PDLP solver prints its progress to descriptor 1 itself, past HiGHS's log:
    20 lines came out with tee=False once the solve ran uncaptured."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 10))
    m.c = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2] <= 12)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    result = solve(m, solver="highs", options={"solver": "pdlp"})
    assert result.objective == pytest.approx(11, rel=1e-4)
    assert capfd.readouterr().out == ""
    from coplug.plugins import solve_file

    path = tmp_path / "lp.mps"
    m.write(str(path))
    assert solve_file(path, solver="highs", options={"solver": "pdlp"}).status.value == "optimal"
    assert capfd.readouterr().out == ""


def test_tensors_numpy_cannot_hold_are_named() -> None:
    """bfloat16 is read as float32; a sparse tensor is refused naming the argument (numpy's
    TypeError had been turned into "rows of different lengths")."""
    import torch

    from coplug.formulations.assignment import validate_costs
    from coplug.formulations.checks import numeric_array
    from coplug.plugins.errors import InputError

    dense = torch.tensor([[1.0, 2.0], [3.0, 4.5]])
    with pytest.raises(InputError, match="weights: .* on meta"):
        numeric_array(torch.empty(2, 2, device="meta"), "weights")
    assert numeric_array(dense.to(torch.bfloat16), "weights").tolist() == [[1, 2], [3, 4.5]]
    for call in (lambda: numeric_array(dense.to_sparse(), "weights"),
                 lambda: validate_costs(dense.to_sparse())):
        with pytest.raises(InputError, match="(weights|cost matrix): a torch tensor .*sparse"):
            call()


def test_an_unreadable_sibling_checkpoint_owns_no_json(tmp_path, monkeypatch) -> None:
    """Reading p.pt to see whether p.json is its JSON raised PermissionError out of loading
    (and saving) p.joblib, whose own JSON it is."""
    from coplug.learned import pmvb_predictors
    from coplug.learned.pmvb_features import FEATURE_NAMES

    rng = np.random.default_rng(3)
    features = rng.normal(size=(60, len(FEATURE_NAMES)))
    predictor = pmvb_predictors.PMVBPredictor(kind="logreg", calibration="none").fit(
        features, (features[:, 0] > 0).astype(int))
    joblib = predictor.save(tmp_path / "p.joblib")
    (tmp_path / "p.pt").write_bytes(b"other weights")
    meta = {"threshold": 0.7, "sha256": pmvb_predictors.file_sha256(joblib)}
    (tmp_path / "p.json").write_text(json.dumps(meta))
    real = pmvb_predictors.file_sha256

    def unreadable(path):
        if path.suffix == ".pt":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(pmvb_predictors, "file_sha256", unreadable)
    assert pmvb_predictors.checkpoint_metadata(joblib)["threshold"] == 0.7
    assert pmvb_predictors.load_predictor(joblib) is not None
