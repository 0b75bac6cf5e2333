"""PMVB regressions from review session 9: prefix mode on models without objective and
under Ctrl-C, depth > 0 without re-adding implied hyperplanes, the lower set at its
boundary, checkpoint metadata and blank predictors in the CLI, train_pmvb's seed range and
skip reasons, and the argument checks of the MIP family builders."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations import mip_families
from coplug.formulations.mip_families import build_family, mknapsack
from coplug.learned import train_pmvb
from coplug.learned.pmvb_predictors import shipped_checkpoint
from coplug.plugins import InputError, Status, solve
from coplug.plugins.cli import main
from coplug.plugins.pmvb import PMVBBranching, hoeffding_hyperplanes
from coplug.plugins.pmvb_cli import resolve_predictor
from coplug.plugins.pmvb_prefix import solve_pmvb_prefix

# mknapsack(12, seed=1) with a static prediction: before the fix, depth 1000 gave 3043 nodes
STATIC = {f"x[{i}]": 0.95 for i in range(6)} | {f"x[{i}]": 0.05 for i in range(6, 12)}


def _optimal_packings_only(optimum: float) -> pyo.ConcreteModel:
    """mknapsack(20, seed=3) without objective, restricted to its optimal packings."""
    m = mknapsack(20, seed=3)
    m.target = pyo.Constraint(expr=m.value.expr >= optimum - 1e-6)
    m.value.deactivate()
    return m


def _feasible(model: pyo.ConcreteModel) -> bool:
    """Whether the loaded point meets every active constraint (to 1e-6)."""
    for con in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        if con.has_lb() and body < pyo.value(con.lower) - 1e-6:
            return False
        if con.has_ub() and body > pyo.value(con.upper) + 1e-6:
            return False
    return True


@pytest.fixture(scope="module")
def knapsack_optimum() -> tuple[float, list[str]]:
    """Plain SCIP's optimum of mknapsack(20, seed=3) and the items it packs."""
    model = mknapsack(20, seed=3)
    result = solve(model)
    assert result.status is Status.OPTIMAL
    return result.objective, [v.name for v in model.x.values() if round(v.value) == 1]


def test_prefix_solves_a_model_without_objective(knapsack_optimum: tuple) -> None:
    optimum, _ = knapsack_optimum
    plain = solve(_optimal_packings_only(optimum))
    model = _optimal_packings_only(optimum)
    prefix = solve_pmvb_prefix(model, "lp", 0.6, 0.3)
    assert plain.status is Status.OPTIMAL and plain.has_solution
    assert prefix.status is Status.OPTIMAL and prefix.has_solution
    assert prefix.extra["pmvb_prefix"]["steps"] == 1  # any solution is optimal: stop there
    assert _feasible(model)
    assert pyo.value(model.value.expr) == pytest.approx(optimum, rel=1e-9)


def test_prefix_without_objective_finds_the_solution_outside_the_likely_region(
    knapsack_optimum: tuple,
) -> None:
    optimum, packed = knapsack_optimum
    model = _optimal_packings_only(optimum)
    wrong = {name: 0.0 for name in packed}  # the likely region holds no optimal packing
    prefix = solve_pmvb_prefix(model, wrong, 0.9, 0.3)
    assert prefix.extra["pmvb_prefix"]["step_status"][0] == "infeasible"
    assert prefix.status is Status.OPTIMAL and prefix.has_solution
    assert _feasible(model)
    assert pyo.value(model.value.expr) == pytest.approx(optimum, rel=1e-9)


@pytest.mark.parametrize("predictor", ["lp", "static", "logreg"])
def test_deep_pmvb_does_not_rebuild_implied_hyperplanes(predictor: str) -> None:
    probs: Any = {"lp": "lp", "static": STATIC,
                  "logreg": shipped_checkpoint("mknapsack", "logreg")}[predictor]
    plain = solve(mknapsack(12, seed=1))
    results = []
    for depth in (10, 1000):
        rule = PMVBBranching(probs, 0.9, 0.5, depth=depth)
        results.append(solve(mknapsack(12, seed=1), plugins=[rule], time_limit=30,
                             **{"limits/nodes": 20000}))
    for result in results:
        assert result.status is Status.OPTIMAL
        assert result.objective == pytest.approx(plain.objective, rel=1e-9)
        assert result.nodes <= 10 * max(plain.nodes, 10)  # was 3043 nodes against 11
        assert result.plugin_stats["pmvb"]["branchings"] <= 30
    assert results[0].nodes == results[1].nodes  # depth 10 already reaches every leaf


def test_deep_pmvb_with_unbounded_depth_closes_the_instance() -> None:
    plain = solve(mknapsack(12, seed=1))
    result = solve(mknapsack(12, seed=1), time_limit=20,
                   plugins=[PMVBBranching(STATIC, 0.9, 0.5, depth=10**6)])
    assert result.status is Status.OPTIMAL  # was time_limit after 16000 nodes
    assert result.objective == pytest.approx(plain.objective, rel=1e-9)


class _Interrupting:
    """A predictor that presses Ctrl-C: SCIP's status becomes userinterrupt."""

    def predict_variables(self, scip: Any, variables: list[Any]) -> np.ndarray:
        scip.interruptSolve()
        return np.array([0.95 if i % 2 else 0.05 for i in range(len(variables))])


def test_prefix_stops_at_an_interrupted_step() -> None:
    plain = solve(mknapsack(40, seed=3))
    model = mknapsack(40, seed=3)
    result = solve_pmvb_prefix(model, _Interrupting(), 0.9, 0.5)
    assert result.status is Status.INTERRUPTED
    assert result.extra["pmvb_prefix"]["step_status"] == ["interrupted"]
    assert result.bound is not None and result.bound >= plain.objective - 1e-6  # maximize
    if result.has_solution:
        assert result.objective <= plain.objective + 1e-6
        assert pyo.value(model.value.expr) == pytest.approx(result.objective, rel=1e-9)


@pytest.fixture
def tampered(tmp_path: Path) -> dict[str, Path]:
    """Copies of a shipped checkpoint whose JSON is an array, or tunes t to 2.0."""
    source = shipped_checkpoint("mknapsack", "logreg")
    meta = json.loads(source.with_suffix(".json").read_text())
    paths = {}
    for name, text in (("list", "[1, 2]"), ("badt", json.dumps({**meta, "threshold": 2.0}))):
        paths[name] = shutil.copy(source, tmp_path / f"{name}.joblib")
        (tmp_path / f"{name}.json").write_text(text)
    return {k: Path(v) for k, v in paths.items()}


@pytest.mark.parametrize(("name", "message"), [("list", "must be a JSON object"),
                                               ("badt", "threshold t must lie in")])
def test_cli_names_the_checkpoint_json_with_bad_metadata(
    tampered: dict[str, Path], name: str, message: str, capsys: pytest.CaptureFixture,
) -> None:
    path = tampered[name]
    with pytest.raises(InputError, match=message) as api:
        PMVBBranching(path)
    assert main(["pmvb", "mknapsack", "--size", "12", "--predictor", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path.with_suffix(".json")) in err and message in err
    assert str(path.with_suffix(".json")) in str(api.value)


def test_cli_warns_when_the_checkpoint_was_trained_on_another_family(
    capsys: pytest.CaptureFixture,
) -> None:
    path = str(shipped_checkpoint("mknapsack", "gbt"))
    _, meta = resolve_predictor(path, "setcover")
    err = capsys.readouterr().err
    assert meta["family"] == "mknapsack"
    assert len(err.strip().splitlines()) == 1
    assert "warning" in err and "'mknapsack'" in err and "'setcover'" in err
    resolve_predictor(path, "mknapsack")
    resolve_predictor("gbt", "mknapsack")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("blank", ["", "   "])
def test_cli_refuses_a_blank_predictor(blank: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(InputError, match="predictor is an empty string"):
        resolve_predictor(blank, "mknapsack")
    assert main(["pmvb", "mknapsack", "--size", "12", "--predictor", blank]) == 2
    err = capsys.readouterr().err
    assert "predictor is an empty string" in err and "directory" not in err


@pytest.mark.parametrize(("seed", "n_train", "n_val"), [
    (4294967296, 200, 50), (9223372036854775806, 200, 50), (2**32 - 2, 2, 1), (-1, 2, 1),
])
def test_train_pmvb_refuses_seeds_past_the_random_state_range(
    seed: int, n_train: int, n_val: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    def no_work(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("train_pmvb started work before refusing --seed")

    monkeypatch.setattr(train_pmvb, "fit_family", no_work)
    argv = ["--family", "mknapsack", "--seed", str(seed), "--n-train", str(n_train),
            "--n-val", str(n_val), "--out-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as exit_info:
        train_pmvb.main(argv)
    assert exit_info.value.code == 2
    assert f"--seed {seed}" in capsys.readouterr().err


def test_train_pmvb_takes_the_last_seed_in_range(tmp_path: Path) -> None:
    args = train_pmvb.parse_args(["--family", "mknapsack", "--seed", str(2**32 - 3),
                                  "--n-train", "2", "--n-val", "1", "--out-dir", str(tmp_path)])
    assert args.seed + args.n_train + args.n_val == 2**32


def test_train_pmvb_names_instances_not_solved_to_optimality() -> None:
    with pytest.raises(InputError) as err:
        train_pmvb.fit_family("mknapsack", 2, 1, 12, 0, ["logreg"], "isotonic",
                              time_limit=1e-9, progress=False)
    message = str(err.value)
    assert "3 not solved to optimality" in message and "--time-limit" in message
    assert "needed branching" not in message and "presolve" not in message


def test_train_pmvb_names_instances_solved_in_presolve() -> None:
    with pytest.raises(InputError) as err:
        train_pmvb.fit_family("mknapsack", 2, 1, 2, 0, ["logreg"], "isotonic",
                              time_limit=30.0, progress=False)
    message = str(err.value)
    assert "3 solved before any optimal root LP" in message and "--size" in message
    assert "optimality" not in message


def test_lower_set_mirrors_the_upper_set_at_the_threshold() -> None:
    for t in train_pmvb.T_GRID:
        p = np.array([t] * 20 + [round(1.0 - t, 12)] * 20)
        planes = hoeffding_hyperplanes(p, t, 0.5)
        mirrored = hoeffding_hyperplanes(1.0 - p, t, 0.5)
        assert len(planes.upper) == len(planes.lower) == 20, t  # 1 - 0.9 is 0.0999...98
        assert set(planes.upper) == set(mirrored.lower)
        assert set(planes.lower) == set(mirrored.upper)


@pytest.mark.parametrize("family", sorted(mip_families.FAMILIES))
@pytest.mark.parametrize("size", [30.5, "30", None, math.nan, True])
def test_family_builders_refuse_non_integer_sizes(family: str, size: Any) -> None:
    with pytest.raises(InputError, match=f"{family} size must be an integer"):
        mip_families.FAMILIES[family](size, 0)
    with pytest.raises(InputError, match=f"{family} size must be an integer"):
        build_family(family, size, 0)  # no longer truncated to 30


@pytest.mark.parametrize(("family", "kwargs", "name"), [
    ("mknapsack", {"n_dims": 0}, "n_dims"), ("mknapsack", {"n_dims": -1}, "n_dims"),
    ("mknapsack", {"n_dims": 2.5}, "n_dims"), ("setcover", {"density": math.nan}, "density"),
    ("setcover", {"density": 1.5}, "density"), ("gisp", {"p": 1.5}, "probability p"),
    ("gisp", {"alpha": -1}, "alpha"), ("fcnf", {"p": 2.0}, "probability p"),
    ("fcnf", {"p": "0.2"}, "probability p"), ("indset", {"affinity": 0}, "affinity"),
    ("indset", {"affinity": -2}, "affinity"), ("indset", {"affinity": 1.5}, "affinity"),
])
def test_family_builders_name_bad_keyword_arguments(family: str, kwargs: dict,
                                                    name: str) -> None:
    with pytest.raises(InputError, match=f"^{family} .*{name} must be"):
        mip_families.FAMILIES[family](12, 0, **kwargs)


def test_family_builders_still_take_numpy_integers_and_edge_values() -> None:
    plain = solve(mknapsack(12, seed=1))
    same = solve(build_family("mknapsack", np.int64(12), np.int64(1)))
    assert same.objective == pytest.approx(plain.objective, rel=1e-12)
    one_dim = solve(mknapsack(12, seed=1, n_dims=1))
    assert one_dim.status is Status.OPTIMAL
    assert solve(mip_families.gisp(8, 0, p=1.0, alpha=0.0)).status is Status.OPTIMAL
