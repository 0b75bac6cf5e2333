"""Session 32 review: arguments of the formulations, learned models and LAP helpers that
were taken silently, failed deep inside a library, or ran out of memory, each refused by
name; and the faster `fair_communities`, checked against the loop it replaced."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from coplug.plugins.errors import InputError

HUGE = 10**12


@pytest.fixture(scope="module")
def program():
    from coplug.formulations.bbo import load

    return load("z = x - [1.0, -2.0]\nsum(z ** 2) + sin(3 * x[0])", dim=2)


@pytest.mark.parametrize("tolerance", ["gap_tol", "value_tol"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, True, None])
def test_bbo_certify_refuses_tolerances_that_switch_its_checks_off(program, tolerance, value):
    from coplug.formulations.bbo.certify import certify

    with pytest.raises(InputError, match=tolerance):
        certify(program, time_limit=5, samples=16, **{tolerance: value})


def test_bbo_certify_refuses_a_start_that_is_no_flag_and_samples_past_memory(program):
    from coplug.formulations.bbo.certify import certify

    with pytest.raises(InputError, match="start must be True or False"):
        certify(program, time_limit=5, samples=16, start=np.array([1, 0]))
    with pytest.raises(InputError, match="memory"):
        certify(program, time_limit=5, samples=HUGE)


@pytest.mark.parametrize("kwargs", [{"alpha": float("nan")}, {"alpha": 5.0}, {"alpha": 1.0},
                                    {"alpha": -1},
                                    {"alpha": True}, {"resolution": 0.0},
                                    {"resolution": float("nan")}])
def test_differentiation_refuses_levels_and_resolutions_that_change_the_score(program,
                                                                                kwargs):
    from coplug.formulations.bbo import as_box_function, differentiation, run_portfolio

    result = run_portfolio(as_box_function(program), budget=20, seeds=range(2),
                           solvers=("random", "lipschitz"))
    assert differentiation(result, alpha=0.5).pairs == 1
    with pytest.raises(InputError, match=next(iter(kwargs))):
        differentiation(result, **kwargs)


@pytest.mark.parametrize("max_abs", [float("nan"), None, 0])
def test_bbo_load_refuses_a_max_abs_that_is_no_bound(max_abs):
    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.grammar import ProgramError

    with pytest.raises(ProgramError):
        load("1e15 + x[0]", dim=1)
    with pytest.raises(InputError, match="max_abs"):
        load("1e15 + x[0]", dim=1, max_abs=max_abs)
    assert load("1e15 + x[0]", dim=1, max_abs=float("inf")).dim == 1


@pytest.mark.parametrize("seed", [-1, "abc", 0.5, True])
def test_bbo_seeds_are_refused_by_name(program, seed):
    from coplug.formulations.bbo import as_box_function, normalized_features, run_portfolio

    with pytest.raises(InputError, match="seed"):
        normalized_features(program, seed=seed)
    with pytest.raises(InputError, match="seed"):
        run_portfolio(as_box_function(program), budget=20, seeds=(seed, 2),
                      solvers=("random",))


def test_run_portfolio_refuses_solver_lists_that_are_no_names(program):
    from coplug.formulations.bbo import as_box_function, run_portfolio

    fn = as_box_function(program)
    with pytest.raises(InputError, match="solver must be one of"):
        run_portfolio(fn, budget=20, seeds=range(2), solvers=np.array([True, False]))
    with pytest.raises(InputError, match="seeds must be a sequence"):
        run_portfolio(fn, budget=20, seeds="abc")
    with pytest.raises(InputError, match="name must be a string"):
        as_box_function(program, name=np.array([1, 2]))


def test_random_search_in_batches_draws_the_points_one_batch_would(program, monkeypatch):
    from coplug.formulations.bbo import as_box_function, portfolio

    fn = as_box_function(program)
    whole = portfolio.run_solver("random", fn, 500, seed=3)
    monkeypatch.setattr(portfolio, "RANDOM_BATCH", 7)
    assert portfolio.run_solver("random", fn, 500, seed=3) == whole


@pytest.mark.parametrize("call", [
    lambda: __import__("coplug.formulations.assignment", fromlist=["x"]).low_rank(5, rank=HUGE),
    lambda: __import__("coplug.formulations.assignment", fromlist=["x"]).gated(HUGE),
    lambda: __import__("coplug.formulations.assignment", fromlist=["x"]).transport(
        5, nodes=10**6),
    lambda: __import__("coplug.formulations.games", fromlist=["x"]).cournot(n_firms=HUGE),
    lambda: __import__("coplug.formulations.fair_graphs", fromlist=["x"]).fair_communities(
        10**6),
], ids=["low_rank", "gated", "transport", "cournot", "fair_communities"])
def test_sizes_past_memory_are_refused_before_any_work(call):
    with pytest.raises(InputError, match="memory"):
        call()


def test_features_and_bbob_refuse_sizes_past_their_limits(program):
    from coplug.formulations.bbo import bbob_problem, normalized_features

    with pytest.raises(InputError, match="memory"):
        normalized_features(program, n=HUGE)
    for dim in (10**6, HUGE):
        with pytest.raises(InputError, match=r"dim in \[2, 100000\]"):
            bbob_problem(1, dim=dim)


def test_is_tour_of_a_huge_n_is_false_without_building_the_city_list():
    from coplug.formulations.tsp import is_tour

    assert is_tour([0, 1], HUGE) is False
    assert is_tour(np.array([1, 0, 2]), 3) is True


@pytest.mark.parametrize("coords", [np.zeros((2, 3, 4)), [[0, 0, 0], [0, 0, 100.0]], 3.0, [],
                                    np.array([[True, False]]), [[0.0, np.nan]]])
@pytest.mark.parametrize("distance", ["euc_2d", "geo", "att", "man_2d"])
def test_tsplib_distances_refuse_coordinates_that_are_no_xy_pairs(coords, distance):
    from coplug.formulations import tsp

    with pytest.raises(InputError, match="TSP node"):
        getattr(tsp, distance)(coords)


def test_tsplib_distance_of_a_three_four_five_triangle():
    import torch

    from coplug.formulations.tsp import euc_2d

    np.testing.assert_array_equal(euc_2d(torch.tensor([[0.0, 0.0], [3.0, 4.0]])),
                                  [[0.0, 5.0], [5.0, 0.0]])


def test_booleans_are_no_capacities_probabilities_or_costs():
    from coplug.formulations.fair_graphs import fair_communities
    from coplug.formulations.games import cournot
    from coplug.formulations.knapsack import KnapsackInstance

    with pytest.raises(InputError, match="capacity"):
        KnapsackInstance([1, 2], [1, 1], True)
    with pytest.raises(InputError, match="capacity"):
        KnapsackInstance([1, 2], [1, 1], [[1, [2]], [3]])
    assert KnapsackInstance([1, 2], [1, 1], 1).capacity == 1
    with pytest.raises(InputError, match="p_in"):
        fair_communities(6, p_in=True)
    with pytest.raises(InputError, match="costs"):
        cournot(costs=True)
    with pytest.raises(InputError, match="costs"):
        cournot(n_firms=2, costs=[True, False])


def _communities_by_loop(size: int, p_in: float, seed: int) -> np.ndarray:
    """The adjacency `fair_communities` built pair by pair before it drew a row at a time."""
    rng = np.random.default_rng(seed)
    a = np.zeros((2 * size, 2 * size))
    for block in (range(size), range(size, 2 * size)):
        for i in block:
            for j in block:
                if i < j and (j == i + 1 or rng.random() < p_in):
                    a[i, j] = a[j, i] = 1.0
    for i, j in ((0, size), (size // 2, size + size // 2)):
        a[i, j] = a[j, i] = 1.0
    return a


@pytest.mark.parametrize("size,p_in,seed", [(2, 0.8, 5), (6, 0.8, 5), (10, 0.3, 0),
                                            (30, 1.0, 9), (12, 0.0, 2)])
def test_fair_communities_draws_the_graph_the_pairwise_loop_drew(size, p_in, seed):
    from coplug.formulations.fair_graphs import fair_communities

    graph = fair_communities(size, p_in=p_in, seed=seed)
    assert sp.isspmatrix_csr(graph.adjacency) and graph.adjacency.has_sorted_indices
    np.testing.assert_array_equal(graph.adjacency.toarray(),
                                  _communities_by_loop(size, p_in, seed))


def test_assignment_model_names_a_sparse_matrix_and_flags_are_checked():
    from coplug.formulations.assignment import (
        generate,
        load_costs,
        validate_costs,
    )

    with pytest.raises(InputError, match="scipy sparse 3x3"):
        validate_costs(sp.csr_matrix(np.arange(1.0, 10.0).reshape(3, 3)))
    with pytest.raises(InputError, match="square must be True or False"):
        validate_costs(np.eye(2), square=np.array([True, False]))
    with pytest.raises(InputError, match="square must be True or False"):
        load_costs("missing.npy", square="no")
    with pytest.raises(InputError, match="unknown generator"):
        generate([], 3)


def test_qubo_minimize_refuses_threads_methods_and_flags_that_are_wrong():
    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
    from coplug.formulations.qubo_solvers import certify, minimize

    qubo = knapsack_qubo_safe(random_knapsack(5, r=5))
    with pytest.raises(InputError, match="threads"):
        minimize(qubo, starts=2, max_iter=5, threads=HUGE)
    with pytest.raises(InputError, match="method must be one of"):
        minimize(qubo, starts=2, max_iter=5, method=np.array(["pgd", "adam"]))
    for flag in ("progress", "certify_points"):
        with pytest.raises(InputError, match=f"{flag} must be True or False"):
            minimize(qubo, starts=2, max_iter=5, **{flag: np.array([1, 0])})
    with pytest.raises(InputError, match="scale"):
        certify(qubo, np.zeros(qubo.n), scale=[[1, [2]], [3]])


@pytest.mark.parametrize("call,name", [
    (lambda: __import__("coplug.formulations.knapsack", fromlist=["x"]).random_knapsack(
        5, kind=np.array(["a", "b"])), "knapsack kind"),
    (lambda: __import__("coplug.formulations.tsp", fromlist=["x"]).tsp_mip(
        np.ones((3, 3)), subtour=["mtz"]), "subtour elimination"),
    (lambda: __import__("coplug.formulations.openpit", fromlist=["x"]).random_block_model(
        20, dims=np.array([2, 3])), "dims"),
    (lambda: __import__("coplug.formulations.openpit", fromlist=["x"]).random_block_model(
        20, pattern=np.array(["slope"])), "pattern"),
    (lambda: __import__("coplug.formulations.openpit", fromlist=["x"]).BlockModel(
        np.ones((2, 3)), pattern=np.array(["a", "b"])), "pattern"),
    (lambda: __import__("coplug.learned.pmvb_predictors", fromlist=["x"]).PMVBPredictor(
        kind=np.array(["gbt"])).fit(np.ones((4, 3)), [0, 1, 0, 1]), "PMVB predictor kind"),
    (lambda: __import__("coplug.learned.fair_spectral", fromlist=["x"]).FairSpectralClustering(
        method=["riemannian"]).fit(np.ones((4, 4)) - np.eye(4)), "method"),
], ids=["knapsack", "tsp_mip", "dims", "pattern", "block_pattern", "pmvb_kind", "fsc_method"])
def test_options_given_as_arrays_or_lists_are_refused_by_name(call, name):
    with pytest.raises(InputError, match=name):
        call()


def test_game_certify_refuses_an_infinite_tolerance_and_an_array_solver():
    from coplug.formulations.game_solvers import certify
    from coplug.formulations.games import cournot

    game = cournot()
    with pytest.raises(InputError, match="feasibility_tol must be a finite number"):
        certify(game, feasibility_tol=float("inf"))
    with pytest.raises(InputError, match="solver must be a name"):
        certify(game, solver=np.array([True]))


def test_ranked_assignments_refuse_a_progress_that_is_no_flag():
    from coplug.plugins.lap import ranked_assignments, ranked_matchings

    with pytest.raises(InputError, match="progress must be True or False"):
        ranked_assignments(np.eye(3), k=2, progress=np.array([1, 0]))
    with pytest.raises(InputError, match="progress must be True or False"):
        ranked_matchings(np.eye(3), k=2, progress="no")


def test_rowdualnet_load_names_a_path_that_is_no_path():
    from coplug.learned.rowdualnet import load

    with pytest.raises(InputError, match="checkpoint path must be a str"):
        load(3)


def test_numba_cache_folder_is_private_and_refuses_a_folder_open_to_others(tmp_path,
                                                                            monkeypatch):
    import os
    import tempfile

    from coplug.plugins.lap import cache_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    own = tmp_path / f"coplug-numba-{os.getuid()}"
    assert cache_dir.private_temp_folder() == str(own)
    assert own.stat().st_mode & 0o777 == 0o700
    own.chmod(0o777)  # as a folder another user could have planted kernels in
    other = cache_dir.private_temp_folder()
    assert other != str(own) and os.stat(other).st_mode & 0o777 == 0o700
    own.rmdir()
    own.symlink_to(tmp_path)  # a link is no folder of ours either
    assert cache_dir.private_temp_folder() != str(own)


def test_numba_cache_off_where_no_folder_is_writable(monkeypatch):
    import tempfile

    from numba.core import config

    from coplug.plugins.lap import cache_dir

    def no_temp() -> str:
        raise FileNotFoundError("No usable temporary directory found")

    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)
    monkeypatch.setattr(cache_dir, "_cacheable", lambda: False)
    monkeypatch.setattr(tempfile, "gettempdir", no_temp)
    assert cache_dir.numba_cache() is False
    monkeypatch.undo()
    assert cache_dir.numba_cache() is True


def test_hessian_eigenvalues_by_blocks_are_the_whole_matrix_eigenvalues():
    from coplug.plugins.highs_backend import _eigenvalues

    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        labels = rng.integers(0, 5, size=n)
        a = rng.normal(size=(n, n))
        a = (a + a.T) * (labels[:, None] == labels[None, :])  # blocks, rows interleaved
        np.testing.assert_allclose(_eigenvalues(a), np.linalg.eigvalsh(a), atol=1e-10)


def _grouped_qp(n: int, bad_group: int | None):
    """min sum over groups of 5 of (sum x)^2 on [0, 1]^n, one group's square negated."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), bounds=(0, 1))
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in range(n)) >= 2)
    groups = [sum(m.x[5 * k + t] for t in range(5)) - 1 for k in range(n // 5)]
    m.o = pyo.Objective(expr=sum((-1 if k == bad_group else 1) * g**2
                                 for k, g in enumerate(groups)))
    return m


def test_highs_refuses_a_grouped_objective_with_one_concave_group_and_solves_the_convex():
    from coplug.plugins import solve
    from coplug.plugins.errors import UnsupportedModelError

    with pytest.raises(UnsupportedModelError, match="non-convex"):
        solve(_grouped_qp(40, bad_group=3), solver="highs")
    highs = solve(_grouped_qp(40, None), solver="highs")
    scip = solve(_grouped_qp(40, None), solver="scip")
    assert highs.status.value == "optimal" and scip.status.value == "optimal"
    assert highs.objective == pytest.approx(scip.objective, abs=1e-6)


def test_the_objective_handed_to_highs_is_the_same_function():
    import pyomo.environ as pyo
    from pyomo.repn.standard_repn import generate_standard_repn

    from coplug.plugins.highs_backend import _flat_quadratic

    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=2.5, mutable=True)
    m.x = pyo.Var(range(4))
    expr = m.p * ((m.x[0] - m.x[1]) ** 2 + m.x[2] * m.x[3]) - 3 * m.x[1] + 7
    flat = _flat_quadratic(generate_standard_repn(expr, compute_values=True, quadratic=True))
    rng = np.random.default_rng(0)
    for _ in range(10):
        for i, v in enumerate(rng.normal(size=4)):
            m.x[i].value = float(v)
        assert pyo.value(flat) == pytest.approx(pyo.value(expr), rel=1e-12, abs=1e-12)


def _copied_checkpoint(tmp_path, family: str, kind: str, json_of: tuple[str, str] | None = None):
    """A shipped checkpoint copied into tmp_path with the JSON of `json_of` (its own by
    default)."""
    import shutil

    from coplug.learned.pmvb_predictors import shipped_checkpoint

    source = shipped_checkpoint(family, kind)
    target = tmp_path / source.name
    shutil.copy(source, target)
    shutil.copy(shipped_checkpoint(*(json_of or (family, kind))).with_suffix(".json"),
                target.with_suffix(".json"))
    return target


def test_every_shipped_pmvb_json_records_its_checkpoints_sha256():
    import json

    from coplug.formulations.mip_families import FAMILIES
    from coplug.learned.checkpoint_io import file_sha256
    from coplug.learned.pmvb_predictors import KINDS, checkpoint_metadata, shipped_checkpoint

    for family in FAMILIES:
        for kind in KINDS:
            path = shipped_checkpoint(family, kind)
            meta = json.loads(path.with_suffix(".json").read_text())
            assert meta["sha256"] == file_sha256(path)
            assert checkpoint_metadata(path)["kind"] == kind


def test_a_pmvb_json_of_other_weights_is_refused(tmp_path):
    from coplug.learned.pmvb_predictors import checkpoint_metadata, load_predictor
    from coplug.plugins.pmvb import PMVBBranching

    path = _copied_checkpoint(tmp_path, "gisp", "logreg", json_of=("cauction", "logreg"))
    with pytest.raises(InputError, match="is not the file"):
        checkpoint_metadata(path)
    with pytest.raises(InputError, match="is not the file"):
        PMVBBranching(path)
    with pytest.raises(InputError, match="is not the file"):
        load_predictor(path)


def test_a_pmvb_json_without_sha256_naming_another_kind_is_refused(tmp_path):
    import json

    from coplug.learned.pmvb_predictors import load_predictor

    path = _copied_checkpoint(tmp_path, "gisp", "logreg", json_of=("gisp", "gbt"))
    sidecar = path.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    del meta["sha256"]  # as train_pmvb wrote it before recording hashes
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(InputError, match="describes a kind 'gbt' predictor"):
        load_predictor(path)
    meta["kind"] = "logreg"
    sidecar.write_text(json.dumps(meta))
    assert load_predictor(path).kind == "logreg"


def test_saving_over_a_trained_checkpoint_removes_the_json_that_described_it(tmp_path):
    from coplug.learned.pmvb_features import FEATURE_NAMES
    from coplug.learned.pmvb_predictors import (
        PMVBPredictor,
        checkpoint_metadata,
        load_predictor,
    )
    from coplug.plugins.pmvb import DEFAULT_T_Q, PMVBBranching

    path = _copied_checkpoint(tmp_path, "gisp", "logreg")
    assert checkpoint_metadata(path)["family"] == "gisp"
    assert (PMVBBranching(path).threshold, PMVBBranching(path).confidence) != DEFAULT_T_Q
    features = np.random.default_rng(0).normal(size=(40, len(FEATURE_NAMES)))
    fresh = PMVBPredictor(kind="gbt", calibration="none")
    fresh.fit(features, (features[:, 0] > 0).astype(int))
    fresh.save(path)
    assert not path.with_suffix(".json").exists() and checkpoint_metadata(path) == {}
    assert load_predictor(path).kind == "gbt"
    rule = PMVBBranching(path)
    assert (rule.threshold, rule.confidence) == DEFAULT_T_Q


def _chain(k: int, extra: int):
    """x_{i+1} >= x_i + 1 over k links with x_0 >= 9.5 and x <= 10: every link is needed;
    `extra` rows that play no part."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(k + 1), bounds=(0, 10))
    m.c = pyo.ConstraintList()
    for i in range(k):
        m.c.add(m.x[i + 1] >= m.x[i] + 1)
    m.c.add(m.x[0] >= 9.5)
    m.y = pyo.Var(range(extra), bounds=(0, 1))
    m.d = pyo.ConstraintList()
    for j in range(extra):
        m.d.add(m.y[j] <= 1)
    return m


def test_a_subsystem_past_check_limit_filtered_one_by_one_is_irreducible():
    import pyomo.environ as pyo

    from coplug.plugins import explain_infeasible, solve

    m = _chain(80, 50)
    found = explain_infeasible(m)
    assert len(found.constraints) == 81 > 60 and found.irreducible is True
    members = {id(c) for c in found.constraints}
    for con in m.component_data_objects(pyo.Constraint):
        if id(con) not in members:
            con.deactivate()
    listed = {(id(var), side) for var, side in found.bounds}
    for var in m.component_data_objects(pyo.Var):  # the subsystem keeps its listed bounds
        var.setlb(var.lb if (id(var), "lower") in listed else None)
        var.setub(var.ub if (id(var), "upper") in listed else None)
    assert solve(m, solver="highs").status.value == "infeasible"
    for con in found.constraints[::16]:  # each member is needed
        con.deactivate()
        assert solve(m, solver="highs").status.value == "optimal"
        con.activate()


def test_a_lazy_row_with_a_number_side_reads_as_the_row_minus_its_side():
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    from coplug.plugins.lazy import linear_row
    from coplug.plugins.linear_terms import linear_terms

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6))
    rng = np.random.default_rng(2)
    for _ in range(30):
        coefs = rng.integers(-3, 4, size=6).astype(float).tolist()
        body = LinearExpression(constant=float(rng.integers(-2, 3)), linear_coefs=coefs,
                                linear_vars=list(m.x.values()))
        side = float(rng.normal())
        for expr, lower, upper in ((body <= side, -np.inf, 0.0), (body == side, 0.0, 0.0)):
            row = linear_row(expr)
            terms = linear_terms(body - side)
            assert row.lower == (lower - terms.constant if lower > -np.inf else -np.inf)
            assert row.upper == pytest.approx(upper - terms.constant, abs=1e-12)
            assert {id(v): c for v, c in zip(row.variables, row.coefs, strict=True)} == {
                id(v): c for v, c in zip(terms.variables, terms.coefs, strict=True)}


def test_solution_view_reads_many_values_as_one_at_a_time():
    import pyomo.environ as pyo

    from coplug.plugins.lazy import SolutionView

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5))
    m.f = pyo.Var(initialize=7.0)
    m.f.fix()
    m.missing = pyo.Var()
    reads = []
    view = SolutionView({id(m.x[i]): i for i in range(5)},
                        lambda handle: reads.append(handle) or 10.0 * handle)
    assert view[m.x[3]] == 30.0
    wanted = [m.x[3], m.x[0], m.f, m.x[4]]
    assert view.values_of(wanted) == [view[v] for v in wanted] == [30.0, 0.0, 7.0, 40.0]
    assert reads == [3, 0, 4]  # each handle read once
    with pytest.raises(InputError, match="not in the solved model"):
        view.values_of([m.x[1], m.missing])


def test_a_subsystem_check_holds_only_its_rows_variables_named_expressions_params_and_fixed():
    import pyomo.environ as pyo

    from coplug.plugins import explain_infeasible
    from coplug.plugins.iis import _Subsystem

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.z = pyo.Var(initialize=1.0)
    m.z.fix()
    m.p = pyo.Param(initialize=2.0, mutable=True)
    m.e = pyo.Expression(expr=m.x + m.y)
    m.w = pyo.Var(range(50), bounds=(0, 5))
    m.free = pyo.Constraint(range(50), rule=lambda m, i: m.w[i] <= 4)
    m.c = pyo.Constraint(expr=m.e >= m.p + m.z)  # x + y >= 3 with x, y <= 1
    found = explain_infeasible(m)
    assert [c.name for c in found.constraints] == ["c"]
    assert sorted((v.name, side) for v, side in found.bounds) == [("x", "upper"), ("y", "upper")]
    assert found.irreducible is True
    check = _Subsystem(m, [m.c], [(m.x, "upper")])
    assert len(check.work.x) == 3  # x, y and the fixed z: none of the 50 w
    assert check.originals() == ([m.c], [(m.x, "upper")])
    assert check.infeasible()[1] is False  # y's bound is not in it
    m.p = 1.5  # the Param read at its value now: x + y >= 2.5, the same conflict
    again = explain_infeasible(m)
    assert [c.name for c in again.constraints] == ["c"] and again.irreducible is True
    m.p = 1.0  # x + y >= 2 holds at x = y = 1
    with pytest.raises(InputError, match="feasible"):
        explain_infeasible(m)


@pytest.mark.parametrize("content", ["null", "5", '["kind"]', '"kind"'])
def test_a_pmvb_json_that_is_no_object_loads_and_is_named_where_t_and_q_are_read(tmp_path,
                                                                                content):
    from coplug.learned.pmvb_predictors import load_predictor
    from coplug.plugins.pmvb import PMVBBranching

    path = _copied_checkpoint(tmp_path, "gisp", "logreg")
    path.with_suffix(".json").write_text(content)
    assert load_predictor(path).kind == "logreg"
    with pytest.raises(InputError, match="must be a JSON object"):
        PMVBBranching(path)


def test_an_undecided_check_before_the_one_by_one_pass_leaves_the_answer_irreducible(
        monkeypatch):
    from coplug.plugins import explain_infeasible, iis

    verdict, calls = iis._Subsystem._verdict, []

    def first_chunk_undecided(self, *seconds):
        calls.append(len(self.members))
        if len(calls) == 2:  # a check of shrink's first, largest chunks
            return "", None, ["forced undecided"]
        return verdict(self, *seconds)

    monkeypatch.setattr(iis._Subsystem, "_verdict", first_chunk_undecided)
    found = explain_infeasible(_chain(100, 10))
    assert len(found.constraints) == 101 and found.irreducible is True
    assert not any("undecided" in note for note in found.notes)


def test_numba_cache_folder_on_a_platform_without_posix_owners_is_reused(tmp_path,
                                                                         monkeypatch):
    import os
    import tempfile

    from coplug.plugins.lap import cache_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / "coplug-numba-user"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)  # as Windows reports every folder
    monkeypatch.delattr(os, "getuid")
    assert cache_dir.private_temp_folder() == str(folder)


def test_cma_es_in_a_portfolio_leaves_the_global_numpy_stream_as_it_was(program):
    from coplug.formulations.bbo import as_box_function, run_portfolio

    np.random.seed(0)
    expected = np.random.rand(3)
    np.random.seed(0)
    result = run_portfolio(as_box_function(program), budget=40, seeds=[1], solvers=["cmaes"])
    assert np.isfinite(result.best_value)
    np.testing.assert_array_equal(np.random.rand(3), expected)


def _interrupt_chain() -> SystemError:
    """numba's SystemError around a Ctrl-C, as a press while a cached kernel loads gave."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            raise SystemError("<function _numba_unpickle> returned a result with an "
                              "exception set") from inner
    except SystemError as outer:
        return outer


def test_interrupt_kept_turns_wrapped_ctrl_c_back_into_keyboard_interrupt():
    from coplug.plugins.interrupts import interrupt_kept

    for wrapped in (RuntimeError("KeyboardInterrupt: (4: <pyomo.common.tee.TeeStream>)"),
                    _interrupt_chain()):
        with pytest.raises(KeyboardInterrupt):
            with interrupt_kept():
                raise wrapped
    for other in (RuntimeError("HiGHS: model error"), SystemError("no interrupt here")):
        with pytest.raises(type(other)):
            with interrupt_kept():
                raise other


def test_a_ctrl_c_while_highs_builds_a_model_is_a_keyboard_interrupt():
    import pyomo.environ as pyo

    from coplug.plugins.bridge import build_instance

    class Building:
        def set_instance(self, model):
            raise RuntimeError("KeyboardInterrupt: (4: <pyomo.common.tee.TeeStream>)")

    with pytest.raises(KeyboardInterrupt):
        build_instance(Building(), pyo.ConcreteModel(), "HiGHS")


def test_explain_infeasible_stops_on_a_ctrl_c_a_check_absorbed(monkeypatch):
    import signal

    from coplug.plugins import explain_infeasible, iis
    from coplug.plugins.interrupts import sigint_cancels

    real = iis.solve

    def solve_then_press(*args, **kwargs):
        result = real(*args, **kwargs)
        with sigint_cancels(lambda: None):  # as HiGHS's solve absorbs a press
            signal.raise_signal(signal.SIGINT)
        return result

    monkeypatch.setattr(iis, "solve", solve_then_press)
    with pytest.raises(KeyboardInterrupt):
        explain_infeasible(_chain(5, 3))


def test_solve_lap_keeps_a_ctrl_c_numba_wrapped_a_keyboard_interrupt(monkeypatch):
    from coplug.plugins.lap import solve_lap, solver

    def interrupted(*args, **kwargs):
        raise _interrupt_chain()

    monkeypatch.setattr(solver, "_solve_min", interrupted)
    with pytest.raises(KeyboardInterrupt):
        solve_lap(np.eye(3))


def test_highs_is_not_handed_a_mip_row_that_crashed_its_process():
    import subprocess
    import sys

    script = (
        "from coplug.formulations.knapsack import KnapsackInstance, knapsack_mip\n"
        "from coplug.plugins import solve\n"
        "from coplug.plugins.errors import UnsupportedModelError\n"
        "inst = KnapsackInstance(values=[531, 358, 673, 571, 255, 322, 719], weights=[\n"
        "    127019301004482, 244297668038816, 205070864495145, 162048375111791,\n"
        "    197167071766357, 277897566869800, 286808703191249], capacity=750154775238820)\n"
        "try:\n"
        "    solve(knapsack_mip(inst), solver='highs')\n"
        "except UnsupportedModelError as exc:\n"
        "    print('refused:', exc)\n"
        "print('scip', solve(knapsack_mip(inst), solver='scip').objective)\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-500:]  # -11: HiGHS's segmentation fault
    assert "refused: constraint 'capacity' has a coefficient of 1.27e+14" in run.stdout
    assert "scip 2133.0" in run.stdout  # brute force's optimum


def test_highs_still_takes_mip_rows_below_that_size_and_lps_above_it():
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack
    from coplug.plugins import solve

    small = random_knapsack(7, seed=3)
    scaled = type(small)(values=small.values, weights=small.weights * 10**11,
                         capacity=small.capacity * 10**11)
    assert max(scaled.weights) < 1e14
    highs, scip = solve(knapsack_mip(scaled), solver="highs"), solve(knapsack_mip(small))
    assert highs.status.value == "optimal" and highs.objective == pytest.approx(scip.objective)


def test_a_stop_at_the_callers_gap_is_optimal_for_pyomo_with_highs_too():
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    from coplug.formulations.mip_families import build_family

    results = NewFactory("coplug_highs").solve(build_family("setcover", 250, 3), rel_gap=10.0)
    out = results.extra_info.coplug
    assert out["bound"] <= out["objective"] <= 11 * out["bound"]
    assert results.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    assert results.solution_status is SolutionStatus.optimal


@pytest.mark.parametrize("solver,option", [("scip", {"limits/primal": 1e6}),
                                           ("highs", {"objective_target": 1e6})])
def test_a_stop_at_the_callers_objective_limit_is_named(solver, option):
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
    from pyomo.contrib.solver.common.results import TerminationCondition

    from coplug.formulations.mip_families import build_family
    from coplug.plugins import solve

    plain = solve(build_family("setcover", 250, 3), solver=solver)
    assert plain.status.value == "optimal" and "stopped_at" not in plain.extra
    stopped = solve(build_family("setcover", 250, 3), solver=solver, **option)
    assert stopped.status.value == "feasible" and stopped.has_solution
    assert stopped.extra["stopped_at"] == "objective_limit"
    assert stopped.objective >= plain.objective - 1e-9  # a point, not proven optimal
    results = NewFactory(f"coplug_{solver}").solve(
        build_family("setcover", 250, 3), solver_options=option,
        raise_exception_on_nonoptimal_result=False)
    assert results.termination_condition is TerminationCondition.objectiveLimit
    legacy = pyo.SolverFactory(f"coplug_{solver}").solve(
        build_family("setcover", 250, 3), options=option, load_solutions=False)
    assert str(legacy.solver.termination_condition) == "minFunctionValue"


_TINY_EVOLUTION = {"dim": 2, "targets": (1, 15), "population": 4, "budget": 24, "seeds": 3,
                   "sample": 60}


def test_an_interrupt_while_programs_are_written_leaves_each_program_once(tmp_path,
                                                                          monkeypatch):
    import json

    from coplug.formulations.bbo import evolve as evolution

    dumps, calls = json.dumps, []

    class Dumps:
        def __getattr__(self, name):
            return getattr(json, name)

        def dumps(self, obj, *args, **kwargs):
            if isinstance(obj, dict) and obj.get("generation") == 2:
                calls.append(1)
                if len(calls) == 3:  # mid-way through generation 2's rows
                    raise KeyboardInterrupt
            return dumps(obj, *args, **kwargs)

    monkeypatch.setattr(evolution, "json", Dumps())
    config = evolution.EvolutionConfig(**_TINY_EVOLUTION, generations=3, seed=1)
    with pytest.raises(KeyboardInterrupt):
        evolution.evolve(config, run_dir=tmp_path / "run", progress=False)
    ids = [json.loads(line)["id"] for line in
           (tmp_path / "run" / "programs.jsonl").read_text().splitlines()]
    assert ids == list(range(len(ids))) and len(ids) >= 8


def test_an_interrupted_generation_leaves_no_counts_or_hypervolume_behind(tmp_path):
    import json

    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve
    from coplug.formulations.bbo.proposers import SymbolicProposer

    class CutShort(SymbolicProposer):
        """Proposes as the offline proposer, and is interrupted in its third round."""

        rounds = 0

        def propose(self, parents, n, rng, context=None):
            children = super().propose(parents, n, rng, context)
            CutShort.rounds += 1
            if CutShort.rounds == 3:
                raise KeyboardInterrupt
            return children

    config = EvolutionConfig(**_TINY_EVOLUTION, generations=4, seed=1)
    with pytest.raises(KeyboardInterrupt):
        evolve(config, CutShort(2), run_dir=tmp_path / "cut", progress=False)
    clean = EvolutionConfig(**_TINY_EVOLUTION, generations=2, seed=1)
    evolve(clean, SymbolicProposer(2), run_dir=tmp_path / "clean", progress=False)
    cut, whole = (json.loads((tmp_path / name / "history.json").read_text())
                  for name in ("cut", "clean"))
    assert cut["generations_done"] == whole["generations_done"] == 2
    assert cut["rejections"] == whole["rejections"]
    assert cut["hypervolume"] == whole["hypervolume"]
    assert ((tmp_path / "cut" / "programs.jsonl").read_text()
            == (tmp_path / "clean" / "programs.jsonl").read_text())


def test_evolution_targets_with_one_name_are_refused(tmp_path, capsys):
    from coplug.formulations.bbo.evolve import EvolutionConfig, target_features
    from coplug.plugins.cli import main

    config = EvolutionConfig(**_TINY_EVOLUTION, generations=1, seed=1)
    with pytest.raises(InputError, match="named like a BBOB target"):
        target_features(config, {"f1_sphere": lambda x: float(np.sum(x ** 2))})
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        assert main(["bbo", "export", f"sum(x ** 2) + {len(folder)}", "--dim", "2",
                     "--format", "json", "-o", str(tmp_path / folder / "t.json")]) == 0
    capsys.readouterr()
    code = main(["bbo", "evolve", "--targets", "1", "--target-program",
                 str(tmp_path / "a" / "t.json"), "--target-program",
                 str(tmp_path / "b" / "t.json"), "--population", "2", "--generations", "1",
                 "--quiet", "--run-dir", str(tmp_path / "run")])
    assert code == 2 and "another target is named 't'" in capsys.readouterr().err


def test_an_evolution_interrupted_before_its_first_generation_says_nothing_was_saved(
        tmp_path, monkeypatch, capsys):
    from coplug.formulations.bbo import evolve as evolution
    from coplug.plugins.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evolution, "evolve", interrupted)
    argv = ["bbo", "evolve", "--targets", "1", "--population", "2", "--generations", "1",
            "--quiet", "--run-dir", str(tmp_path / "run")]
    try:
        assert main(argv) == 130
    except KeyboardInterrupt:
        pass
    assert "nothing was saved" in capsys.readouterr().err
