"""Checks added by the thirty-fourth session's review: each pins a defect it found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import build_family
from coplug.plugins import (
    InputError,
    LazyConstraints,
    OnSolution,
    SolutionPool,
    infeasibilities,
    solve,
)
from coplug.plugins.lap.heuristic import LapHeuristic
from coplug.plugins.user_heuristic import UserHeuristic


def _knapsack() -> pyo.ConcreteModel:
    return build_family("mknapsack", 10, 3)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_one_plugin_listed_twice_is_refused(solver: str) -> None:
    """HiGHS ran it twice (the pool's finish emptied what the first had kept)."""
    pool = SolutionPool(3)
    with pytest.raises(InputError, match="same SolutionPool plugin is listed twice"):
        solve(_knapsack(), solver=solver, plugins=[pool, pool])


def test_two_pools_of_one_name_are_refused_by_highs() -> None:
    """HiGHS kept one pool's statistics of the two (they are kept by name)."""
    with pytest.raises(InputError, match="two SolutionPool plugins .* share the name"):
        solve(_knapsack(), solver="highs", plugins=[SolutionPool(3), SolutionPool(4)])


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_plugins_of_two_kinds_may_not_share_a_name(solver: str) -> None:
    """SCIP solved with both and reported one plugin's statistics under the shared name."""
    plugins = [SolutionPool(3, name="stats"), OnSolution(lambda sol, obj: None, name="stats")]
    with pytest.raises(InputError, match="SolutionPool and OnSolution plugins of one solve "
                                         "share the name 'stats'"):
        solve(_knapsack(), solver=solver, plugins=plugins)
    lazy = LazyConstraints(lambda sol: [], name="stats")
    with pytest.raises(InputError, match="share the name 'stats'"):
        solve(_knapsack(), plugins=[lazy, OnSolution(lambda sol, obj: None, name="stats")])


def test_a_user_heuristic_named_as_the_lap_heuristic_is_named_up_front() -> None:
    """SCIP refused the include mid-solve, and the message asked for one LapHeuristic."""
    heuristic = UserHeuristic(lambda sol: None, name="lap_heuristic")
    with pytest.raises(InputError, match="UserHeuristic and LapHeuristic plugins"):
        solve(_knapsack(), plugins=[heuristic, LapHeuristic()])


def test_distinct_names_still_keep_each_plugins_statistics() -> None:
    model = _knapsack()
    result = solve(model, solver="highs", plugins=[SolutionPool(3, name="a"),
                                                   SolutionPool(4, name="b")])
    assert set(result.plugin_stats) >= {"a", "b"}
    assert result.plugin_stats["a"]["kept"] <= 3 and result.plugin_stats["b"]["kept"] <= 4


@pytest.mark.parametrize("kind", [np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("generator", ["geometric", "transport", "gated"])
def test_assignment_generators_read_small_numpy_sizes_as_ints(kind: type, generator: str) -> None:
    """A uint8 n wrapped in (n + m) // 4 (another road graph) and made noise / sqrt(n) a
    float16 (costs off by 1e-5)."""
    from coplug.formulations import assignment

    make = getattr(assignment, generator)
    plain, small = make(200, seed=7), make(kind(200), seed=7)
    plain = plain.toarray() if hasattr(plain, "toarray") else plain
    small = small.toarray() if hasattr(small, "toarray") else small
    assert np.array_equal(plain, small)
    if generator == "transport":
        assert np.array_equal(assignment.transport(100, seed=7, m=200),
                              assignment.transport(100, seed=7, m=kind(200)))


def test_knapsack_instance_keeps_its_own_values() -> None:
    """A float64 values array was kept by reference: NaN written later got past the checks."""
    from coplug.formulations.knapsack import KnapsackInstance

    values = np.array([4.0, 5.0, 6.0, 7.0])
    instance = KnapsackInstance(values, np.array([1, 2, 3, 4]), 5)
    values[2], values[3] = np.nan, -8.0
    assert np.array_equal(instance.values, [4.0, 5.0, 6.0, 7.0])


def _one_var(domain: Any = pyo.Reals, value: float = 0.0, **kw: Any) -> pyo.ConcreteModel:
    model = pyo.ConcreteModel()
    model.x = pyo.Var(domain=domain, initialize=value, **kw)
    return model


def test_infeasibilities_tolerance_is_relative_to_the_side() -> None:
    """x >= 1e6 at 1e6 - 0.5 lies within 1e-6 * |side|: no miss (the README's rule)."""
    model = _one_var(value=1e6 - 0.5)
    model.c = pyo.Constraint(expr=model.x >= 1e6)
    assert infeasibilities(model) == {}
    model.x.value = 1e6 - 2.0
    assert infeasibilities(model) == {"c": pytest.approx(2.0)}


def test_infeasibilities_judges_integrality_apart_from_tol() -> None:
    model = _one_var(pyo.Integers, 2.05)
    assert infeasibilities(model, tol=0.1) == {"x": pytest.approx(0.05)}


def _sos1(values: list[float]) -> pyo.ConcreteModel:
    model = pyo.ConcreteModel()
    model.I = pyo.RangeSet(0, len(values) - 1)
    model.x = pyo.Var(model.I, initialize=dict(enumerate(values)))
    model.s = pyo.SOSConstraint(var=model.x, sos=1)
    return model


def test_infeasibilities_reads_sos_members_near_zero_and_the_last_window() -> None:
    assert infeasibilities(_sos1([1.0, 9e-7, 9e-7, 9e-7, 9e-7])) == {}
    assert infeasibilities(_sos1([0.0, 0.0, 1.0])) == {}
    assert infeasibilities(_sos1([0.0, 1.0, 1.0])) == {"s": pytest.approx(1.0)}


def test_infeasibilities_measures_a_stepped_domain_to_its_nearest_member() -> None:
    assert infeasibilities(_one_var(pyo.RangeSet(0, 10, 2), 4 + 1e-7)) == {}
    split = pyo.RangeSet(0, 10, 0) | pyo.RangeSet(21, 31, 2)  # [0, 10] and 21, 23, ..., 31
    assert infeasibilities(_one_var(split, 18.0)) == {"x": pytest.approx(3.0)}  # 21, not 17


def test_min_trick_is_exact_and_steps_below_a_rounded_minimum() -> None:
    from coplug.learned.rowdualnet import min_trick

    assert min_trick(np.array([[1.0, 2.0], [3.0, 0.5]]), np.zeros(2)).tolist() == [1.0, 0.5]
    c, u = np.array([[0.5436249914654229]]), np.array([-12.654214710460526])
    assert (u[:, None] + (c - u[:, None]).min(axis=0) > c).any()  # the raw minimum overshoots
    assert (u[:, None] + min_trick(c, u)[None, :] <= c).all()


class _Bound:
    """A stand-in for a SCIP variable's local bounds, as `_Cardinality.implies` reads them."""

    def __init__(self, key: int) -> None:
        self.key = key

    def ptr(self) -> int:
        return self.key

    def getLbLocal(self) -> float:  # noqa: N802 (PySCIPOpt's name)
        return 0.0

    def getUbLocal(self) -> float:  # noqa: N802
        return 1.0


def test_pmvb_upper_hyperplane_implies_only_looser_ones() -> None:
    """sum(abcd) <= 3 does not decide sum(ab) <= 1 (a deeper PMVB node dropped it)."""
    from coplug.plugins.pmvb import _Cardinality

    a, b, c, d = (_Bound(k) for k in range(4))
    assert not _Cardinality((a, b, c, d), "<=", 3).implies(_Cardinality((a, b), "<=", 1))
    assert _Cardinality((a, b, c, d), "<=", 1).implies(_Cardinality((a, b), "<=", 3))


def test_rectangular_certificate_caps_spare_column_duals() -> None:
    """Row 0 assigned to the cost-5 column of [[5, 1]]: the bound must stay 1."""
    from coplug.plugins.lap import certify

    primal, bound, *_ = certify.dense_gap(np.array([[5.0, 1.0]]), np.array([0]), np.array([1.0]))
    assert (primal, bound) == (5.0, 1.0)


class _Marker:
    """A pickle that writes a file when it is loaded: what a hostile checkpoint would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


@pytest.mark.parametrize("suffix", [".joblib", ".pt"])
def test_pmvb_checkpoint_is_checked_against_its_sidecar_before_unpickling(
        tmp_path: Any, suffix: str) -> None:
    """load_predictor unpickled the file first, then named its type; the sidecar's sha256
    would have refused it."""
    import shutil

    import joblib
    import torch

    from coplug.learned.pmvb_predictors import load_predictor
    from coplug.models import __file__ as models_init
    from coplug.plugins.pmvb import PMVBBranching

    marker = tmp_path / "ran"
    evil = tmp_path / f"evil{suffix}"
    if suffix == ".pt":
        torch.save(_Marker(str(marker)), evil)
    else:
        joblib.dump(_Marker(str(marker)), evil)
    shipped = Path(models_init).parent / "pmvb_mknapsack_logreg.json"
    shutil.copy(shipped, evil.with_suffix(".json"))
    for load in (load_predictor, PMVBBranching):
        with pytest.raises(InputError, match="is not the file evil.json describes"):
            load(evil)
        assert not marker.exists()


def _sidecar(tmp_path: Any, text: str) -> Any:
    """A fitted logreg checkpoint under tmp_path with `text` as its JSON sidecar."""
    import shutil

    from coplug.models import __file__ as models_init

    path = tmp_path / "p.joblib"
    shutil.copy(Path(models_init).parent / "pmvb_mknapsack_logreg.joblib", path)
    path.with_suffix(".json").write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text", ['{"threshold": 1' + "0" * 400 + "}",
                                  '{"confidence": 1' + "0" * 400 + "}"])
def test_pmvb_sidecar_numbers_past_float_range_are_named(tmp_path: Any, text: str) -> None:
    from coplug.plugins.pmvb import PMVBBranching

    with pytest.raises(InputError, match="p.json: PMVB (threshold|confidence)"):
        PMVBBranching(_sidecar(tmp_path, text))


def test_pmvb_threshold_past_float_range_is_named() -> None:
    from coplug.plugins.pmvb import PMVBBranching

    with pytest.raises(InputError, match="threshold t must lie in"):
        PMVBBranching("lp", threshold=10**400)
    with pytest.raises(InputError, match="confidence q must lie in"):
        PMVBBranching("lp", confidence=-(10**400))


def test_pmvb_sidecar_feature_version_past_float_range_warns(tmp_path: Any) -> None:
    from coplug.learned.pmvb_predictors import load_predictor

    text = '{"features": [], "feature_version": 1' + "0" * 400 + "}"
    with pytest.warns(UserWarning, match="root features of version 10{400}, this"):
        load_predictor(_sidecar(tmp_path, text))


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "1" * 5000])
def test_unreadable_sidecars_are_named(tmp_path: Any, text: str) -> None:
    """Deep nesting and overlong integers came out as RecursionError and ValueError."""
    from coplug.learned.pmvb_predictors import load_predictor
    from coplug.learned.rowdualnet import load as load_rowdualnet

    with pytest.raises(InputError, match="p.json is unreadable"):
        load_predictor(_sidecar(tmp_path, text))
    import shutil

    from coplug.models import __file__ as models_init

    net = tmp_path / "net.pt"
    shutil.copy(Path(models_init).parent / "rowdualnet.pt", net)
    net.with_suffix(".json").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="net.json is unreadable"):
        load_rowdualnet(net)


def test_npy_header_declaring_more_than_the_file_holds_is_refused_unallocated(
        tmp_path: Any) -> None:
    """A 144-byte file declaring 100000 x 100000 float64 asked numpy for 74.5 GiB."""
    from coplug.formulations.assignment import load_costs

    path = tmp_path / "lies.npy"
    with open(path, "wb") as out:
        np.lib.format.write_array_header_1_0(
            out, {"descr": "<f8", "fortran_order": False, "shape": (100_000, 100_000)})
        out.write(b"\0" * 16)
    with pytest.raises(InputError, match="lies.npy: not a readable .npy array"):
        load_costs(path)
    np.save(tmp_path / "ok.npy", np.asfortranarray([[1.0, 2.0], [3.0, 4.0]]))
    loaded = load_costs(tmp_path / "ok.npy")
    assert type(loaded) is np.ndarray and loaded.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_a_gz_file_unpacking_past_the_memory_budget_is_refused(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1 MB .mps.gz packing a 1 GiB comment took 2.2 GB before any check."""
    import gzip

    from coplug.formulations import checks
    from coplug.plugins import solve_file

    mps = (b"NAME t\nROWS\n N obj\n G c\nCOLUMNS\n x obj 1 c 1\nRHS\n RHS c 1\n"
           b"BOUNDS\n UP BND x 4\nENDATA\n")
    path = tmp_path / "bomb.mps.gz"
    path.write_bytes(gzip.compress(b"* " + b"x" * (40 << 20) + b"\n" + mps))
    monkeypatch.setattr(checks, "available_memory", lambda: 32 << 20)
    with pytest.raises(InputError, match=r"bomb.mps.gz unpacks to more than 0.0\d GiB, over "
                                         r"half the 0.03 GiB of memory available"):
        solve_file(path)
    small = tmp_path / "small.mps.gz"
    small.write_bytes(gzip.compress(mps))
    assert solve_file(small).objective == pytest.approx(1.0)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_solve_that_raises_closes_progress(solver: str) -> None:
    """Progress kept its line and a duplicate of stderr's descriptor open after a solve that
    raised, until a full garbage collection (the kept traceback held them)."""
    import gc
    import os

    from coplug.plugins import Progress

    def boom(solution: Any, objective: float) -> None:
        raise RuntimeError("stop")

    progress, opened = Progress(), len(os.listdir("/proc/self/fd"))
    gc.disable()
    try:
        for _ in range(5):
            with pytest.raises(RuntimeError, match="stop"):
                solve(_knapsack(), solver=solver, plugins=[OnSolution(boom), Progress()])
        with pytest.raises(RuntimeError, match="stop"):
            solve(_knapsack(), solver=solver, plugins=[OnSolution(boom), progress])
        assert len(os.listdir("/proc/self/fd")) <= opened
    finally:
        gc.enable()
    assert progress._bar is None and progress._own is None


def test_a_kept_pmvb_rule_does_not_keep_scip_models_alive() -> None:
    """PMVBBranching held each solve's SCIP model strongly (about 5 MB a model)."""
    import gc

    import pyscipopt

    from coplug.plugins.pmvb import PMVBBranching

    def alive() -> int:
        gc.collect()
        # type(), not isinstance(): a dead weakref.proxy (a plugin's .model) raises there
        return sum(type(o) is pyscipopt.Model for o in gc.get_objects())

    before = alive()
    rules = [PMVBBranching("lp") for _ in range(3)]
    results = [solve(build_family("mknapsack", 15, seed), plugins=[rule])
               for seed, rule in enumerate(rules)]
    assert alive() <= before
    for rule, result in zip(rules, results, strict=True):
        assert rule.statistics()["likely_held"] == result.plugin_stats["pmvb"]["likely_held"]
    assert any(result.plugin_stats["pmvb"]["likely_held"] is not None for result in results)


def test_a_pmvb_rule_that_branched_copies_and_solves_again() -> None:
    """Its SCIP variables (root hyperplanes, deeper nodes' record) failed to copy."""
    import copy

    from coplug.plugins.pmvb import PMVBBranching

    rule = PMVBBranching("lp", depth=3)
    solve(build_family("mknapsack", 15, 0), plugins=[rule])
    assert rule.statistics()["root_branched"]
    twin = copy.deepcopy(rule)
    assert twin.statistics()["likely_held"] == rule.statistics()["likely_held"]
    model = build_family("mknapsack", 15, 0)
    assert solve(model, plugins=[twin]).objective == pytest.approx(solve(model).objective)


def test_bbo_proof_over_a_wide_box_stays_small() -> None:
    """A 36-character program at dim 30,000 took 5.7 GB (2,048 boxes of the interval proof)
    and 34 s at dim 10,000; the proof now splits fewer boxes where they are wide."""
    import tracemalloc

    from coplug.formulations.bbo import ProgramError, load

    tracemalloc.start()
    try:
        with pytest.raises(ProgramError, match="cannot be shown to keep inside"):
            load("sum(1.0 / (x * x - x * x + 20.0))", 20_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**30


def test_bbo_program_whose_lines_do_not_fit_is_rejected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every vector line is kept at each sample point: 28,000 lines fit the text limit."""
    import coplug.formulations.bbo.validate as validate
    from coplug.formulations.bbo import ProgramError, load

    text = "".join(f"a{i} = x + {i}.0\n" for i in range(100)) + "sum(a0)\n"
    assert load(text, 1000).dim == 1000
    monkeypatch.setattr(validate, "available_memory", lambda: 100 << 20)
    with pytest.raises(ProgramError, match=r"its 100 lines \(100 vectors of 1000\) need about "
                                           r"0.2 GiB at 257 sample points"):
        load(text, 1000)


def _benders_pair(keys: list[Any]) -> tuple[pyo.ConcreteModel, Any]:
    """A 2-facility master (open costs 8, 60) and a shortage subproblem (10 per unit of
    demands 1, 5) whose copies are indexed by `keys`: optimum 58 at y = [1, 0]."""
    from coplug.plugins.benders import BendersCuts, Subproblem

    master = pyo.ConcreteModel()
    master.y = pyo.Var(range(2), domain=pyo.Binary)
    master.theta = pyo.Var(bounds=(0, None))
    master.o = pyo.Objective(expr=8 * master.y[0] + 60 * master.y[1] + master.theta)
    sub = pyo.ConcreteModel()
    sub.C = pyo.Set(initialize=keys)
    sub.c = pyo.Var(sub.C, bounds=(0, 1))
    sub.s = pyo.Var(sub.C, bounds=(0, None))
    demand = dict(zip(keys, [1.0, 5.0], strict=True))
    sub.short = pyo.Constraint(sub.C, rule=lambda s, k: s.s[k] >= demand[k] * (1 - s.c[k]))
    sub.o = pyo.Objective(expr=10 * sum(sub.s.values()))
    links = [(master.y[i], sub.c[k]) for i, k in enumerate(keys)]
    return master, BendersCuts([Subproblem(sub, links, master.theta)])


@pytest.mark.parametrize("keys", [[" a", "a"], ["x", "x "], [None, "None"], [" q", "r"]])
def test_benders_finds_each_copy_by_its_index_not_its_name(keys: list[Any]) -> None:
    """Copies were found again by name: x[' a'] read back as x['a'] and x[None] as
    x['None'], both link rows landed on one copy, and 50 or 10 came back 'optimal'."""
    master, cuts = _benders_pair(keys)
    result = solve(master, plugins=[LazyConstraints(cuts)])
    assert result.objective == pytest.approx(58.0)
    assert [master.y[i].value for i in range(2)] == pytest.approx([1.0, 0.0])


def _none_and_text_none() -> pyo.ConcreteModel:
    model = pyo.ConcreteModel()
    model.I = pyo.Set(initialize=[None, "None", 1])
    model.x = pyo.Var(model.I, domain=pyo.Binary)
    return model


def test_pmvb_refuses_a_name_shared_by_two_variables() -> None:
    """{"x[None]": 0.99} went to x['None'] silently (both print as x[None])."""
    from coplug.plugins.pmvb import PMVBBranching

    model = _none_and_text_none()
    model.cap = pyo.Constraint(expr=3 * model.x[None] + 4 * model.x["None"] + model.x[1] <= 5)
    model.o = pyo.Objective(expr=sum(model.x.values()), sense=pyo.maximize)
    with pytest.raises(InputError, match=r"'x\[None\]', the name of 2 variables"):
        solve(model, plugins=[PMVBBranching({"x[None]": 0.99, "x[1]": 0.2})])
    result = solve(model, plugins=[PMVBBranching({"x[1]": 0.2})])
    assert result.objective == pytest.approx(2.0)


def test_infeasibilities_keeps_the_larger_miss_of_two_alike_names() -> None:
    """d[None] (z >= 50) and d['None'] (z >= 1) at z = 0: the second's miss replaced the
    first's."""
    model = _none_and_text_none()
    model.z = pyo.Var(initialize=0.0)
    model.d = pyo.Constraint(model.I, rule=lambda m, i: m.z >= {None: 50, "None": 1, 1: 0}[i])
    assert infeasibilities(model) == {"d[None]": pytest.approx(50.0)}


def test_a_row_named_like_highs_own_row_names_is_said_so(tmp_path: Any) -> None:
    """An LP file with a row named HiGHS_R1 and unnamed rows: the message spoke only of a
    row's entries split apart, which the file does not have."""
    from coplug.plugins import solve_file

    path = tmp_path / "named.lp"
    path.write_text("Minimize\n obj: x + y + z\nSubject To\n HiGHS_R1: z >= 1\n x + y >= 10\n"
                    " x + y <= 4\nBounds\n x <= 20\n y <= 20\n z <= 5\nEnd\n", encoding="utf-8")
    with pytest.raises(InputError, match="a row named like HiGHS's names for unnamed rows"):
        solve_file(path, solver="highs")
    assert solve_file(path, solver="scip").status.value == "infeasible"


@pytest.mark.usefixtures("duals_reach_the_certificate")
def test_warm_duals_far_past_the_costs_fall_back_to_an_exact_cold_solve() -> None:
    """Duals 2e16 on costs 1e15 + 2..8 erased the costs' low digits: 4 above the optimum
    came back certified (the guard allowed duals up to 16 n max|c|)."""
    from scipy.optimize import linear_sum_assignment

    from coplug.plugins.lap import solve_lap

    c = np.array([[1e15 + 2, 4.0, 4.0], [1e15 + 7, 8.0, 4.0], [1e15 + 2, 8.0, 5.0]])
    rows, cols = linear_sum_assignment(c)
    found = solve_lap(c, row_duals=np.array([-3.73664e15, 2.280556e16, -6.9594e14]))
    assert int(c[found.row_ind, found.col_ind].sum()) == int(c[rows, cols].sum())
    assert found.warm and found.fallback


def test_lap_certificate_kernels_refuse_what_they_cannot_price() -> None:
    """What surviving mutants showed unpinned: a column assigned twice, a spare column's
    positive dual, an edge just off tight kept, duals that swamp the costs, the strict cap."""
    import scipy.sparse as sp

    from coplug.plugins.lap import certify, warmstart

    primal, bound, *_ = certify.dense_gap(np.array([[0.0, 5.0], [0.0, 5.0]]), np.array([0, 0]),
                                          np.zeros(2))
    assert (primal, bound) == (np.inf, -np.inf)
    s = sp.csr_matrix(np.array([[1.0, 5.0], [1.0, 5.0]]))
    primal, bound, *_ = certify.sparse_gap(s.indptr.astype(np.int64),
                                           s.indices.astype(np.int64), s.data, 2,
                                           np.array([0, 0]), np.zeros(2))
    assert (primal, bound) == (np.inf, -np.inf)
    primal, bound, _, reduced, size = certify.dense_gap(np.array([[5.0, 0.0, 0.0]]),
                                                        np.array([0]), np.zeros(1))
    assert (primal, bound, reduced) == (5.0, 0.0, 5.0)
    assert not certify.certified(primal, bound, 5.0, 1, strict=True, reduced=reduced,
                                 reduced_size=size)
    c = np.array([[1e3, 1e3 + 1e-5], [1e3 + 1e-5, 1e3]])
    (_, _, col4row, _), _, _ = warmstart.warm_state(c, np.zeros(2), np.array([1, 0]))
    assert col4row.tolist() == [0, 1]
    for strict in (False, True):
        assert not certify.certified(0.0, 0.0, 1.0, 1, dual_magnitude=1e12, strict=strict)
    assert certify.certified(1e-10, 0.0, 1.0, 1)
    assert not certify.certified(1e-10, 0.0, 1.0, 1, strict=True)


def _ranged_row_model() -> pyo.ConcreteModel:
    """Integers near 5e6 at the optimum (51,653,690.9; HiGHS and scipy agree)."""
    bounds = {0: (None, 3), 1: (0, 3), 2: (None, 3), 3: (-5, 1), 4: (0, None), 5: (None, None)}
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), within=pyo.Integers, bounds=lambda m, j: bounds[j])
    x = m.x
    m.c1 = pyo.Constraint(expr=-4 * x[2] - 3393 * x[4] >= -16657)
    m.c2 = pyo.Constraint(expr=pyo.inequality(
        0, 9892 * x[2] - 8575 * x[4] - 5365.8 * x[5] - 4 * x[0] - 2 * x[3], 8))
    m.c3 = pyo.Constraint(expr=-5924 * x[0] - 4618.5 * x[4] == 19396)
    m.obj = pyo.Objective(expr=-9448 * x[0] + 9298.7 * x[1] - 6905.1 * x[3] + 3 * x[4]
                          - 5 * x[5] + 49)
    return m


def test_scip_optimum_at_large_integer_values_is_checked_row_by_row() -> None:
    """SCIP's presolve left c2 at 24.4 (sides 0..8) and called 51,651,275.9 optimal: the
    rows over integers the run put past STEP / feastol are judged exactly, and a run
    without presolve finds the optimum."""
    model = _ranged_row_model()
    result = solve(model)
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(51653690.9, abs=1e-6)
    assert infeasibilities(model) == {}
    assert result.objective == pytest.approx(solve(_ranged_row_model(), solver="highs").objective)


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_scip_unbounded_integer_models_stay_unbounded(scale: float) -> None:
    """Their points lie far out on a ray, where float64 misses rows: judging those rows
    exactly called truly unbounded models unknown after three runs."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), within=pyo.Integers, bounds=(0, None))
    m.c = pyo.Constraint(expr=3 * m.x[0] - 7 * m.x[1] + 5 * scale * m.x[2] == 4)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    result = solve(m)
    assert result.status.value == "unbounded" and "runs" not in result.extra


def test_highs_qp_duals_fall_back_to_the_gradient_lp() -> None:
    """HiGHS's QP dual 2.9e-7 on c1 left x[0] (no upper bound) a reduced cost of -1.2e-6:
    an infinite gap, and m.dual / m.rc stayed empty for a true optimum."""
    bounds = {0: (0, None), 1: (-4.5, 4.25), 2: (-8, None), 3: (3.5, 15.25), 4: (2, 4),
              5: (0, None)}
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), bounds=lambda m, j: bounds[j])
    x = m.x
    m.c1 = pyo.Constraint(expr=3 * x[1] + 4 * x[0] - 4 * x[2] + 2 * x[5] + 3 * x[3] == 12)
    m.c2 = pyo.Constraint(expr=x[2] >= 8)
    m.c3 = pyo.Constraint(expr=5 * x[1] - x[3] <= 0)
    m.c4 = pyo.Constraint(expr=3 * x[5] - 2 * x[2] + 5 * x[3] <= 19)
    m.obj = pyo.Objective(expr=3 * x[2] - 4 * x[3] - 4 * x[4]
                          - 0.5 * (-3 * x[5] - 2 * x[2] - 4) ** 2, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(m, solver="highs")
    assert result.objective == pytest.approx(-198.0)
    assert result.extra["duals"]["loaded"]
    assert m.dual[m.c2] == pytest.approx(-37.0)
    assert all(m.dual[c] == pytest.approx(0.0, abs=1e-9) for c in (m.c1, m.c3, m.c4))


def test_ranked_assignments_queue_no_child_that_holds_no_assignment() -> None:
    """A diagonal pattern holds one assignment: its children (bound inf) are not searched."""
    import scipy.sparse as sp

    from coplug.plugins.lap.ranked import ranked_assignments

    found = ranked_assignments(sp.diags(np.arange(1.0, 41.0)).tocsr(), k=5)
    assert found.status == "exhausted" and found.costs == [820.0]
    assert found.info["queued_cells"] == found.info["solved_cells"] == 1


def test_cell_and_rectangular_certificates_price_what_they_must() -> None:
    """A forbidden pair in a cell's assignment, the non-strict tolerance, an unused
    column's negative dual: unpinned until mutants showed it."""
    from coplug.plugins.lap import certify, murty

    ok = np.ones(2, np.bool_)
    forbidden_first = (np.array([0, 1, 1]), np.array([0]))  # pair (0, 0)
    assert murty.cell_gap(np.array([[1.0, 2.0], [3.0, 1.0]]), np.zeros(2), np.array([0, 1]),
                          ok, ok, *forbidden_first) == np.inf
    assert certify.tolerance(1.0, 1) == 1e-9
    assert not certify.certified(1e-7, 0.0, 1.0, 1)
    primal, bound, _, reduced, _ = certify.dense_gap(np.array([[1.0, 0.0]]), np.array([0]),
                                                     np.array([1.0]))
    assert primal - bound == 1.0 and reduced == 1.0


class _Counter:
    """A user's plugin with no `name` of its own (plugin_stats key it by its class)."""

    def __init__(self) -> None:
        self.calls = 0

    def attach(self, scip_model: Any, var_map: Any) -> None:
        self.calls += 1


def test_unnamed_user_plugins_may_repeat_but_not_one_object() -> None:
    """Two instances of a plugin class without a name were refused by the name check."""
    first, second = _Counter(), _Counter()
    assert solve(_knapsack(), plugins=[first, second]).status.value == "optimal"
    assert first.calls == second.calls == 1
    with pytest.raises(InputError, match="same _Counter plugin is listed twice"):
        solve(_knapsack(), plugins=[first, first])


class _Closing(_Counter):
    """A user's plugin whose own close() ends its log: not coplug's to call on a failure."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def solve_failed(self) -> None:
        raise OSError("cleanup failed")


def test_a_failed_solve_calls_solve_failed_only_and_keeps_its_own_error() -> None:
    from coplug.plugins import Progress

    def boom(solution: Any, objective: float) -> None:
        raise RuntimeError("the real error")

    user, progress = _Closing(), Progress()
    with pytest.raises(RuntimeError, match="the real error"):
        solve(_knapsack(), plugins=[user, OnSolution(boom), progress])
    assert not user.closed and progress._bar is None and progress._own is None


def test_bbo_guard_over_two_variables_keeps_its_boxes_at_high_dim() -> None:
    """Its proof needs 2,695 boxes; the box limit by dim alone rejected it past dim 1,557."""
    from coplug.formulations.bbo import load

    text = "1.0 / (x[0] * x[0] - 2.0 * x[0] * x[1] + x[1] * x[1] + 1.0)"
    assert load(text, 4000).dim == 4000


def test_scip_large_value_rows_are_read_from_the_model_after_presolve() -> None:
    """Presolve solved the model and left no integer variable and no row in the transformed
    problem: the check found nothing to judge."""
    import pyscipopt

    from coplug.plugins.integral_rows import large_value_rows

    scip = pyscipopt.Model()
    scip.hideOutput()
    x = scip.addVar("x", vtype="I", lb=0, ub=1e7)
    y = scip.addVar("y", vtype="I", lb=0, ub=1e7)
    scip.addCons(x - 2 * y == 1, name="c")
    scip.addCons(x + y <= 15000000, name="d")
    scip.setObjective(x + y, "maximize")
    scip.optimize()
    assert sorted(row.name for row in large_value_rows(scip, 1e-6)) == ["c", "d"]


def test_npz_declaring_more_than_memory_is_named(tmp_path: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import scipy.sparse as sp

    from coplug.formulations.assignment import load_costs

    path = tmp_path / "big.npz"
    sp.save_npz(path, sp.csr_matrix(np.eye(3)))

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise MemoryError("Unable to allocate 74.5 GiB")

    monkeypatch.setattr(sp, "load_npz", refuse)
    with pytest.raises(InputError, match="big.npz: its arrays declare more data than fits"):
        load_costs(path)
