"""Session 44's review fixes: a user heuristic at a node whose LP has no solution, and
callbacks during the run that settles SCIP's 'infeasible or unbounded'."""

from __future__ import annotations

import logging
import math
import struct

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import setcover_relaxed

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import OnSolution, UserHeuristic, solve
from coplug.plugins.errors import InputError


def test_user_heuristic_at_infeasible_nodes_keeps_a_bounded_model_bounded() -> None:
    """mknapsack(30, seed=2) restarts and meets infeasible node LPs, where SCIP's LP values
    are SCIP_INVALID: an all-zero proposal started from them ended "unbounded"."""
    plain = solve(mknapsack(30, seed=2))
    m = mknapsack(30, seed=2)
    seen: list[float] = []

    def zeros(lp):
        seen.extend(lp[v] for v in m.x.values())
        return [(v, 0) for v in m.x.values()]

    result = solve(m, plugins=[UserHeuristic(zeros)])
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(plain.objective, rel=1e-9)
    assert seen and all(math.isfinite(value) and -1e-6 <= value <= 1 + 1e-6 for value in seen)
    rows = list(m.component_data_objects(pyo.Constraint, active=True))
    assert all(pyo.value(row.body) <= pyo.value(row.upper) + 1e-6 for row in rows)


def _ray_model() -> pyo.ConcreteModel:
    """max x0 + x1 + x2 + 2 over integers x >= 0 with x0 + x1 - 2 x2 == 1: SCIP's presolve
    answers 'infeasible or unbounded', which `solve` settles by a zero-objective run."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] - 2 * m.x[2] == 1)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1] + m.x[2] + 2, sense=pyo.maximize)
    return m


def test_on_solution_gets_no_point_of_the_settling_run() -> None:
    """The settling run's points have objective 0, not the model's: none is handed on."""
    m = _ray_model()
    calls: list[tuple[float, float]] = []

    def record(solution, objective):
        calls.append((objective, sum(solution[m.x[i]] for i in range(3)) + 2))

    result = solve(m, plugins=[OnSolution(record)])
    assert result.status.value == "unbounded"
    assert all(objective == pytest.approx(at_point) for objective, at_point in calls)


def _flip_inside_largest_entry(path) -> None:
    """Overwrite 8 bytes in the middle of the largest member of the zip archive at `path`
    (a torch .pt's weights), leaving the archive's structure intact."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        info = max(archive.infolist(), key=lambda item: item.compress_size)
    data = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                      info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len + info.compress_size // 2
    data[start:start + 8] = bytes(b ^ 0x5A for b in data[start:start + 8])
    path.write_bytes(bytes(data))


@pytest.fixture
def fitted_features():
    from coplug.learned.pmvb_features import FEATURE_NAMES

    rng = np.random.default_rng(3)
    features = rng.normal(size=(60, len(FEATURE_NAMES)))
    return features, (features[:, 0] + 0.3 * features[:, 1] > 0).astype(int)


@pytest.mark.parametrize("kind", ["gbt", "logreg", "mlp"])
def test_a_saved_pmvb_checkpoint_corrupted_on_disk_is_refused(kind, fitted_features, tmp_path):
    """`save` records the file's sha256 beside it (p.joblib.sha256): a corrupted .joblib
    loaded and crashed the interpreter in predict_proba, or predicted other
    probabilities."""
    from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor

    features, labels = fitted_features
    predictor = PMVBPredictor(kind=kind, calibration="none").fit(features, labels)
    path = predictor.save(tmp_path / ("p.pt" if kind == "mlp" else "p.joblib"))
    assert np.array_equal(load_predictor(path).predict_proba(features),
                          predictor.predict_proba(features))
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 8] = bytes(b ^ 0x5A for b in data[middle:middle + 8])
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="sha256"):
        load_predictor(path)


def test_a_pt_checkpoint_without_its_json_is_checked_by_its_crc(fitted_features, tmp_path):
    """A .pt copied without its sha256 record: a flipped weight fails the archive's CRC (torch.load
    does not check it and loaded another model)."""
    from coplug.learned import rowdualnet
    from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor

    features, labels = fitted_features
    path = PMVBPredictor(kind="mlp", calibration="none").fit(features, labels).save(
        tmp_path / "p.pt")
    (tmp_path / "p.pt.sha256").unlink()
    _flip_inside_largest_entry(path)
    with pytest.raises(InputError, match="CRC"):
        load_predictor(path)
    weights = tmp_path / "rdn.pt"
    rowdualnet.save(rowdualnet.RowDualNet(hidden=8), weights, {})
    weights.with_suffix(".json").unlink()
    _flip_inside_largest_entry(weights)
    with pytest.raises(InputError, match="CRC"):
        rowdualnet.load(weights)


@pytest.mark.parametrize(("scale", "offset"), [(1e-200, 0.0), (1e-160, 0.0), (1.0, 1e9),
                                               (1.0, -1e9)])
def test_row_features_are_scale_and_shift_free(scale: float, offset: float) -> None:
    """RowDualNet's features of s c + b are c's: the std feature underflowed for costs below
    about 1e-160 and lost its digits to cancellation for c + 1e9."""
    from coplug.learned.rowdualnet import load, row_features

    c = np.random.default_rng(0).random((120, 90)) * 100
    moved = c * scale + offset
    base, _, _ = row_features(c)
    features, _, _ = row_features(moved)
    assert np.abs(features - base).max() < 1e-3
    net = load()
    assert np.allclose((net.predict_duals(moved) - offset) / scale, net.predict_duals(c),
                       rtol=1e-6, atol=1e-5)


def test_a_refused_refit_leaves_fair_spectral_clustering_unfitted() -> None:
    """A refit refused inside the embedding kept the old graph's labels_ and embedding_
    beside an emptied admm_info_, and passed check_is_fitted."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from coplug.formulations.fair_graphs import fair_sbm
    from coplug.learned.fair_spectral import FairSpectralClustering

    old, new = fair_sbm(120, n_clusters=3, seed=1), fair_sbm(90, n_clusters=3, seed=2)
    estimator = FairSpectralClustering(3, old.groups).fit(old.adjacency)
    assert estimator.labels_.shape == (120,)
    with pytest.raises(InputError):
        estimator.set_params(groups=new.groups, rho=1e-30).fit(new.adjacency)
    with pytest.raises(NotFittedError):
        check_is_fitted(estimator)
    assert estimator.set_params(rho=None).fit(new.adjacency).labels_.shape == (90,)


def test_training_scripts_name_themselves_as_run() -> None:
    """Their usage lines show the command a user types (train_rowdual showed its file name)."""
    from coplug.learned import train_pmvb, train_rowdual

    for module in (train_rowdual, train_pmvb):
        usage = module.build_parser().format_usage()
        assert usage.startswith(f"usage: python -m {module.__name__} ")


def _result(status):
    from coplug.plugins.results import Result

    return Result(status=status, solver="scip")


def test_an_unbounded_verdict_on_a_bounded_objective_is_a_solver_error() -> None:
    """An objective bounded over its variables' bounds cannot be unbounded: SCIP's such
    verdict (a heuristic's invalid objective, 1e99, taken as its best) is raised."""
    from coplug.plugins.errors import SolverError
    from coplug.plugins.results import Status
    from coplug.plugins.unbounded_check import check_unbounded_verdict

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(-4, 2))
    m.o = pyo.Objective(expr=3 * m.x[0] - m.x[1] + m.y ** 2 + 7, sense=pyo.maximize)
    with pytest.raises(SolverError, match="at most 26"):
        check_unbounded_verdict(m, _result(Status.UNBOUNDED), "scip")
    optimal = _result(Status.OPTIMAL)
    assert check_unbounded_verdict(m, optimal, "scip") is optimal
    m.y.setub(None)  # now y ** 2 grows without bound
    unbounded = _result(Status.UNBOUNDED)
    assert check_unbounded_verdict(m, unbounded, "scip") is unbounded
    m.y.setub(1e25)  # past the solvers' infinity: no evidence
    assert check_unbounded_verdict(m, unbounded, "highs") is unbounded
    m.o.sense = pyo.minimize  # bounded below at 6 even with y free
    m.y.setub(None)
    with pytest.raises(SolverError, match="HiGHS .* at least 6"):
        check_unbounded_verdict(m, unbounded, "highs")
    m.y.setub(1e20)  # infinite to the solvers, but on the side that does not matter
    with pytest.raises(SolverError, match="at least 6"):
        check_unbounded_verdict(m, unbounded, "highs")
    assert m.y.ub == 1e20  # put back


def test_real_unbounded_models_stay_unbounded() -> None:
    m = _ray_model()
    assert solve(m).status.value == "unbounded"
    assert solve(_ray_model(), solver="highs").status.value == "unbounded"


def test_highs_objective_bound_on_an_lp_is_a_status(tmp_path) -> None:
    """objective_bound stops HiGHS's dual simplex once its objective passes the bound:
    `solve` raised SolverError ("stopped with no answer"), `solve_file` said unknown with
    no `stopped_at`."""
    from coplug.plugins import solve_file
    from coplug.plugins.results import OBJECTIVE_LIMIT

    m = setcover_relaxed(200)
    optimum = solve(m, solver="highs").objective
    result = solve(m, solver="highs", objective_bound=0.9 * optimum)
    assert result.status.value == "unknown" and not result.has_solution
    assert result.extra["stopped_at"] == OBJECTIVE_LIMIT
    path = tmp_path / "lp.mps"
    m.write(str(path))
    from_file = solve_file(path, solver="highs", objective_bound=0.9 * optimum)
    assert from_file.status.value == "unknown"
    assert from_file.extra["stopped_at"] == OBJECTIVE_LIMIT
    target = solve_file(path, solver="highs", objective_bound=1.1 * optimum)
    assert target.status.value == "optimal" and "stopped_at" not in target.extra


def test_a_highs_limit_stop_with_a_closed_gap_is_optimal() -> None:
    """HiGHS proves setcover(200)'s optimum by node 3 and stops there at mip_max_nodes=3
    as a "solution limit": it was node_limit (result.optimal False) where SCIP, stopping
    with its gap closed, says optimal."""
    from coplug.formulations.mip_families import setcover

    m = setcover(200, seed=0)
    optimum = solve(m, solver="scip").objective
    for limit in ({"mip_max_nodes": 3}, {"mip_max_leaves": 2}):
        result = solve(m, solver="highs", **limit)
        assert result.status.value == "optimal"
        assert result.objective == pytest.approx(optimum) == result.bound


def test_a_highs_stall_node_limit_is_a_node_limit() -> None:
    """HiGHS's mip_max_stall_nodes, like SCIP's limits/stallnodes, is a node limit."""
    m = mknapsack(70, seed=0)
    result = solve(m, solver="highs", mip_max_stall_nodes=20)
    assert result.status.value == "node_limit" and result.gap > 1e-4


def test_lap_infeasible_reasons_name_the_real_cause() -> None:
    """A row `== q` with q = 0 (no variable fixed) was blamed on fixed variables, and a
    constraint with no variables at all was 'violated by its fixed variables'."""
    m = pyo.ConcreteModel()
    m.q = pyo.Param(initialize=0, mutable=True)
    m.x = pyo.Var(range(2), range(2), domain=pyo.Binary)
    m.r = pyo.Constraint(range(2), rule=lambda m, i: m.x[i, 0] + m.x[i, 1] == m.q)
    m.c = pyo.Constraint(range(2), rule=lambda m, j: m.x[0, j] + m.x[1, j] == 1)
    m.o = pyo.Objective(expr=sum(m.x.values()))
    result = solve(m, solver="lap")
    assert result.status.value == "infeasible" == solve(m, solver="highs").status.value
    assert "forced to 0 by 'r[0]', 'r[1]'" in result.extra["reason"]
    m.q = 1
    m.bad = pyo.Constraint(rule=lambda m: pyo.Constraint.Infeasible)
    result = solve(m, solver="lap")
    assert result.status.value == "infeasible"
    assert "'bad' has no variables" in result.extra["reason"]


def test_a_bound_at_the_solvers_infinity_leaves_unbounded_models_unbounded() -> None:
    """x >= -1e20 is no bound to SCIP or HiGHS: min 1e-5 x + y is unbounded to both, where
    interval arithmetic puts the objective at -1e15 or above (the first check raised)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1e20, None))
    m.y = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x + m.y <= 5)
    m.o = pyo.Objective(expr=1e-5 * m.x + m.y)
    for solver in ("scip", "highs"):
        assert solve(m, solver=solver).status.value == "unbounded"
    m.x.setlb(None)  # the same bound from the variable's domain
    m.x.domain = pyo.RangeSet(-1e21, 1e30, 0)
    for solver in ("scip", "highs"):
        assert solve(m, solver=solver).status.value == "unbounded"


def test_a_highs_solution_limit_keeps_the_callers_zero_gap() -> None:
    """With mip_rel_gap=0 a solution-limit stop 13 above the optimum was called optimal:
    the closed-gap test used HiGHS's default gaps, which 1e7 in the objective loosens."""
    rng = np.random.default_rng(1)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(60), domain=pyo.Binary)
    m.cov = pyo.ConstraintList()
    for _ in range(8):
        w = rng.integers(10, 100, size=60)
        m.cov.add(sum(int(w[i]) * m.x[i] for i in range(60)) >= int(w.sum()) // 3)
    c = rng.integers(10, 100, size=60)
    m.o = pyo.Objective(expr=1e7 + sum(int(c[i]) * m.x[i] for i in range(60)))
    exact = {"mip_rel_gap": 0, "mip_abs_gap": 0}
    optimum = solve(m, solver="highs", **exact).objective
    result = solve(m, solver="highs", mip_max_improving_sols=1, mip_heuristic_effort=0.0,
                   **exact)
    assert result.objective >= optimum - 1e-6 and result.objective - result.bound > 1.0
    assert result.status.value == "feasible"  # a gap of more than 1 is not the caller's 0
    assert solve(m, solver="highs", mip_max_improving_sols=1,
                 mip_heuristic_effort=0.0).status.value == "optimal"  # default gaps: closed


def test_highs_objective_bound_on_a_mip_is_refused(tmp_path) -> None:
    """HiGHS takes objective_bound on a MIP as a cutoff: at half the optimum it called a
    worse point optimal, and a feasible maximization infeasible."""
    from coplug.plugins import solve_file

    m = mknapsack(20, seed=0)
    with pytest.raises(InputError, match="objective_bound .* integer variables"):
        solve(m, solver="highs", objective_bound=1.0)
    path = tmp_path / "mip.mps"
    m.write(str(path))
    with pytest.raises(InputError, match="objective_bound .* integer variables"):
        solve_file(path, solver="highs", objective_bound=1.0)
    assert solve(m, solver="highs", objective_bound=math.inf).status.value == "optimal"
    with pytest.raises(InputError, match="objective_bound"):  # cuts off every point
        solve(m, solver="highs", objective_bound=-math.inf)


def test_two_checkpoints_of_one_stem_both_load(fitted_features, tmp_path) -> None:
    """Each file keeps its own sha256 record (a shared p.json refused p.pt once p.joblib
    was saved beside it)."""
    from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor

    features, labels = fitted_features
    predictor = PMVBPredictor(kind="logreg", calibration="none").fit(features, labels)
    predictor.save(tmp_path / "p.pt")
    predictor.save(tmp_path / "p.joblib")
    for name in ("p.pt", "p.joblib"):
        assert np.array_equal(load_predictor(tmp_path / name).predict_proba(features),
                              predictor.predict_proba(features))


def test_no_api_key_is_none() -> None:
    from coplug.formulations.bbo.llm_proposer import LLMConfig

    assert LLMConfig(base_url="http://127.0.0.1:1/v1", model="m", api_key=None).api_key == ""


def test_prefix_bound_falls_back_to_the_root_bound_per_region() -> None:
    """A prefix step whose epigraph misjudged its point reports no bound (inf when
    maximizing): the combined bound was inf where PMVB's root bound (valid for every
    region) is finite."""
    from coplug.plugins.pmvb_prefix import _prefix_bound
    from coplug.plugins.results import Result, Status

    steps = [Result(status=Status.FEASIBLE, solver="scip", bound=math.inf),
             Result(status=Status.OPTIMAL, solver="scip", bound=550.0)]
    assert _prefix_bound(steps, 2, 550.0, True, 559.0) == 559.0
    steps[0].bound = None
    assert _prefix_bound(steps, 2, 550.0, True, 559.0) == 559.0
    steps[0].bound = 555.0  # a region's own tighter bound stands
    assert _prefix_bound(steps, 2, 550.0, True, 559.0) == 555.0
    steps[0].bound = math.inf  # a root bound the incumbent refutes is no bound
    assert _prefix_bound(steps, 2, 560.0, True, 559.0) == math.inf
    infeasible = [Result(status=Status.INFEASIBLE, solver="scip")] * 2
    assert _prefix_bound(infeasible, 2, None, True, 24.5) is None  # no point: no bound
    minimizing = [Result(status=Status.FEASIBLE, solver="scip", bound=-math.inf)]
    assert _prefix_bound(minimizing, 2, 10.0, False, 4.0) == 4.0
    assert _prefix_bound(minimizing, 1, 10.0, False, None) == -math.inf


def test_ctrl_c_while_building_rewrites_the_solution_file(tmp_path, monkeypatch, capfd) -> None:
    """A Ctrl-C before the solve (building the model) left --solution holding an earlier
    run's values, and Pyomo's "Constructing component ... failed" lines on stdout."""
    from coplug.formulations import registry
    from coplug.plugins.cli import main

    path = tmp_path / "sol.txt"
    assert main(["solve", "knapsack", "--size", "8", "--solution", str(path)]) == 0
    assert "optimal" in path.read_text()
    capfd.readouterr()

    def interrupted_build(indexed):
        def build(*args, **kwargs):
            m = pyo.ConcreteModel()

            def rule(m, *index):
                raise KeyboardInterrupt

            m.c = pyo.Constraint(rule=rule) if indexed is None else indexed(rule)
            return m

        return build

    # a scalar constraint logs "Constructing component ... failed", an indexed Param
    # "Rule failed for Param ..."
    for indexed in (None, lambda rule: pyo.Param([1, 2], initialize=rule)):
        monkeypatch.setattr(registry, "build", interrupted_build(indexed))
        records: list[logging.LogRecord] = []
        collector = logging.Handler()
        collector.emit = records.append
        logging.getLogger("pyomo").addHandler(collector)
        try:
            code = main(["solve", "knapsack", "--size", "8", "--solution", str(path), "--json"])
        finally:
            logging.getLogger("pyomo").removeHandler(collector)
        assert code == 130 and path.read_text().startswith("# interrupted, no solution")
        out, err = capfd.readouterr()
        assert out == "" and err.strip() == "coplug: interrupted"
        assert not records


def test_training_bars_stay_off_a_pipe(capsys) -> None:
    """train_rowdual drew tqdm's carriage-return redraws into redirected stderr."""
    from coplug.learned.train_rowdual import make_dataset

    assert len(make_dataset(["uniform"], [8], 2, seed=0)) == 2
    assert "\r" not in capsys.readouterr().err


def test_a_ctrl_c_while_plotting_leaves_the_run_unfinished(tmp_path, monkeypatch) -> None:
    """history.json said finished before the plot was drawn: a Ctrl-C between left a
    finished run without its plot."""
    import json

    from coplug.formulations.bbo import evolve as evolution

    def interrupted_plot(result, path):
        path.write_bytes(b"half a png")
        raise KeyboardInterrupt

    monkeypatch.setattr(evolution, "plot_front", interrupted_plot)
    config = evolution.EvolutionConfig(dim=2, targets=(1,), population=3, generations=1,
                                       budget=30, seeds=3, seed=0)
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        evolution.evolve(config, run_dir=run)
    assert json.loads((run / "history.json").read_text())["finished"] is False
    assert {p.name for p in run.iterdir()} & {"pareto_front.png", ".pareto_front.tmp.png"} == set()

