"""PMVB branching: Hoeffding hyperplanes, exact partition into children, same optimum."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.common.collections import ComponentMap

from coplug.formulations.mip_families import build_family
from coplug.plugins import InputError, solve
from coplug.plugins.pmvb import PMVBBranching, hoeffding_hyperplanes
from coplug.plugins.pmvb_prefix import solve_pmvb_prefix

SMALL = {"mknapsack": 22, "setcover": 60, "gisp": 25, "indset": 120, "cauction": 30, "fcnf": 12}


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a))


def _branching_instance(start: int = 0) -> tuple[pyo.ConcreteModel, int]:
    """A small knapsack on which SCIP has to branch at the root."""
    for seed in range(start, start + 20):
        model = build_family("mknapsack", 22, seed)
        if solve(model).nodes > 1:
            return model, seed
    raise AssertionError("no branching knapsack instance found")


def test_hoeffding_right_hand_sides_follow_the_formula(rng: np.random.Generator) -> None:
    p = rng.random(200)
    t, q = 0.8, 0.95
    planes = hoeffding_hyperplanes(p, t, q)
    upper, lower = np.flatnonzero(p >= t), np.flatnonzero(p <= 1 - t)
    log_term = math.log(1 / (1 - q))
    assert planes.upper == tuple(upper) and planes.lower == tuple(lower)
    assert planes.rhs_upper == math.ceil(p[upper].sum() - math.sqrt(len(upper) * log_term / 2))
    assert planes.rhs_lower == math.floor(p[lower].sum() + math.sqrt(len(lower) * log_term / 2))


@pytest.mark.parametrize(("t", "q"), [(0.9, 0.99), (0.6, 0.8), (0.95, 0.9)])
def test_probabilities_themselves_lie_in_the_likely_child(t: float, q: float,
                                                          rng: np.random.Generator) -> None:
    # Why "lp" mode cannot move the root bound: once the Hoeffding slack is >= 1 the
    # vector p (the root LP optimum in "lp" mode) satisfies both likely-child hyperplanes.
    for _ in range(50):
        p = rng.beta(0.3, 0.3, size=int(rng.integers(10, 300)))
        planes = hoeffding_hyperplanes(p, t, q)
        slack = math.log(1 / (1 - q)) / 2
        if planes.upper and len(planes.upper) * slack >= 1:
            assert p[list(planes.upper)].sum() >= planes.rhs_upper
        if planes.lower and len(planes.lower) * slack >= 1:
            assert p[list(planes.lower)].sum() <= planes.rhs_lower


def test_hoeffding_drops_trivial_hyperplanes() -> None:
    planes = hoeffding_hyperplanes(np.array([0.95, 0.05, 0.5]), 0.9, 0.99)
    assert planes.empty  # one variable each side: both bounds are implied by 0 <= x <= 1


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [({"threshold": 0.4}, "threshold"), ({"confidence": 1.0}, "confidence"),
     ({"mode": "fast"}, "mode"), ({"depth": -1}, "depth")],
)
def test_bad_parameters_are_named(kwargs: dict, word: str) -> None:
    with pytest.raises(InputError, match=word):
        PMVBBranching("lp", **kwargs)


def test_bad_probabilities_and_prefix_via_solve_are_rejected() -> None:
    model = build_family("mknapsack", 10, 0)
    with pytest.raises(InputError, match="not in"):
        solve(model, plugins=[PMVBBranching(ComponentMap([(model.x[0], 1.5)]))])
    with pytest.raises(InputError, match="not the name of a variable"):
        solve(model, plugins=[PMVBBranching({"nope[1]": 0.5})])
    for bare in (np.zeros(3), [0.5] * 3):
        with pytest.raises(InputError, match="not a bare sequence"):
            PMVBBranching(bare)
    with pytest.raises(InputError, match="solve_pmvb_prefix"):
        solve(model, plugins=[PMVBBranching("lp", mode="prefix")])
    with pytest.raises(InputError, match="does not exist"):
        PMVBBranching("no/such/checkpoint.joblib")
    for key, hint in ((3, ""), (model.x, " \\(an indexed variable: key each"),
                      (build_family("mknapsack", 10, 1).x[0], " \\(a variable of another")):
        with pytest.raises(InputError, match=f"not a variable of the model solved{hint}"):
            solve(model, plugins=[PMVBBranching(ComponentMap([(key, 0.9)]))])


def test_two_pmvb_rules_in_one_solve_are_named() -> None:
    model = build_family("mknapsack", 10, 0)
    with pytest.raises(InputError, match="one PMVBBranching per solve"):
        solve(model, plugins=[PMVBBranching("lp"), PMVBBranching("lp")])


def test_corrupt_checkpoint_is_named(tmp_path) -> None:
    for name in ("bad.joblib", "bad.pt"):
        (tmp_path / name).write_text("hello")
        with pytest.raises(InputError, match="unreadable or corrupt"):
            PMVBBranching(tmp_path / name)
    with pytest.raises(InputError, match="not a checkpoint file"):
        PMVBBranching(tmp_path)


def test_rule_creates_children_that_partition_the_region() -> None:
    model, _ = _branching_instance()
    rule = PMVBBranching("lp", threshold=0.7, confidence=0.9)
    result = solve(model, plugins=[rule])
    stats = result.plugin_stats["pmvb"]
    assert result.optimal and stats["calls"] >= 1 and stats["root_branched"]
    children = rule.children
    assert len(children) == 1 + (stats["rhs_upper"] is not None) + (stats["rhs_lower"] is not None)
    likely = children[0]
    sets = {frozenset(c["coefs"]) for child in children for c in child}
    assert all(v == 1.0 for child in children for c in child for v in c["coefs"].values())
    assert len(sets) == (stats["rhs_upper"] is not None) + (stats["rhs_lower"] is not None)
    upper = next((c for c in likely if c["rhs"] >= 1e19), None)
    lower = next((c for c in likely if c["lhs"] <= -1e19), None)
    assert (upper is None or upper["lhs"] == stats["rhs_upper"]) and len(upper["coefs"]) == stats[
        "n_upper"]
    assert lower is None or lower["rhs"] == stats["rhs_lower"]
    # Every (sum_U x, sum_L x) pair lies in exactly one child: the partition is exact.
    u_set = frozenset(upper["coefs"]) if upper else frozenset()
    l_set = frozenset(lower["coefs"]) if lower else frozenset()
    for s_u, s_l in itertools.product(range(len(u_set) + 1), range(len(l_set) + 1)):
        inside = 0
        for child in children:
            ok = True
            for c in child:
                value = s_u if frozenset(c["coefs"]) == u_set else s_l
                ok &= c["lhs"] - 1e-9 <= value <= c["rhs"] + 1e-9
            inside += ok
        assert inside == 1, (s_u, s_l)


@pytest.mark.parametrize("family", sorted(SMALL))
def test_same_optimum_with_and_without_pmvb(family: str) -> None:
    for seed in range(3):
        model = build_family(family, SMALL[family], seed)
        reference = solve(model)
        assert reference.optimal
        for t, q in ((0.9, 0.99), (0.6, 0.2)):  # (0.6, 0.2): tight, often wrong hyperplanes
            result = solve(model, plugins=[PMVBBranching("lp", t, q)])
            assert result.optimal and _same(result.objective, reference.objective), (seed, t, q)


def test_wrong_predictor_keeps_the_optimum() -> None:
    for start in (0, 30):
        model, _ = _branching_instance(start)
        reference = solve(model)
        optimum = ComponentMap((v, round(v.value)) for v in model.x.values())
        wrong = ComponentMap((v, 1.0 - x) for v, x in optimum.items())  # confidently wrong
        rule = PMVBBranching(wrong, threshold=0.9, confidence=0.5)
        result = solve(model, plugins=[rule])
        stats = result.plugin_stats["pmvb"]
        assert stats["root_branched"] and stats["likely_held"] is False
        assert result.optimal and _same(result.objective, reference.objective)
        assert _same(pyo.value(model.value), reference.objective)  # the loaded point
        assert all(pyo.value(c.body) <= c.upper + 1e-6 for c in model.capacity.values())


def test_deeper_branching_and_prefix_mode_stay_exact() -> None:
    for family in ("mknapsack", "gisp", "setcover"):
        model = build_family(family, SMALL[family], 1)
        reference = solve(model)
        deep = solve(model, plugins=[PMVBBranching("lp", 0.7, 0.9, depth=3)])
        assert deep.optimal and _same(deep.objective, reference.objective)
        prefix = solve_pmvb_prefix(model, "lp", 0.7, 0.5)
        assert prefix.optimal and _same(prefix.objective, reference.objective)
        objective = next(model.component_data_objects(pyo.Objective, active=True))
        assert _same(pyo.value(objective), reference.objective)  # the loaded point


def test_pmvb_objective_matches_highs() -> None:
    model, _ = _branching_instance()
    highs = solve(model, solver="highs")
    result = solve(model, plugins=[PMVBBranching("lp", 0.8, 0.9)])
    assert highs.optimal and result.optimal and _same(result.objective, highs.objective)


class _FailingPredictor:
    kind = "failing"

    def predict_variables(self, scip: object, variables: list) -> np.ndarray:
        raise RuntimeError("model file corrupt")


def test_failing_predictor_falls_back_to_scip() -> None:
    model, _ = _branching_instance()
    reference = solve(model)
    with pytest.warns(RuntimeWarning, match="corrupt"):
        result = solve(model, plugins=[PMVBBranching(_FailingPredictor())])
    stats = result.plugin_stats["pmvb"]
    assert "corrupt" in stats["error"] and not stats["root_branched"]
    assert result.optimal and _same(result.objective, reference.objective)


class _ShapedPredictor:
    kind = "shaped"

    def __init__(self, shape: object) -> None:
        self.shape = shape

    def predict_variables(self, scip: object, variables: list) -> np.ndarray | None:
        if self.shape is None:
            return None
        n = len(variables)
        return np.full({"short": (3,), "long": (n + 2,), "2d": (n, 1)}[self.shape], 0.95)


@pytest.mark.parametrize("shape", ["short", "long", "2d", None])
def test_wrong_shaped_prediction_falls_back_with_a_warning(shape: object) -> None:
    """A short prediction used to be applied to the first few variables silently; a long,
    2-D or missing one aborted SCIP."""
    model, _ = _branching_instance()
    reference = solve(model)
    with pytest.warns(RuntimeWarning, match="shape"):
        result = solve(model, plugins=[PMVBBranching(_ShapedPredictor(shape))])
    assert not result.plugin_stats["pmvb"]["root_branched"]
    assert result.optimal and _same(result.objective, reference.objective)


def test_binaries_scip_creates_in_presolve_are_not_candidates() -> None:
    """An integer in [2, 3] becomes a SCIP binary with no Pyomo variable; prefix mode used to
    fail with a KeyError on it."""
    model = build_family("mknapsack", 30, 1)
    model.z = pyo.Var(domain=pyo.Integers, bounds=(2, 3))
    first = model.capacity[0]
    first.set_value(first.body + 100 * model.z <= first.upper + 250)
    model.value.expr = model.value.expr + 7.5 * model.z
    reference = solve(model)
    rule = PMVBBranching("lp", 0.7, 0.5)
    branched = solve(model, plugins=[rule])
    assert rule.root_planes is None or all(v is not None for v in rule.root_planes[0]
                                           + rule.root_planes[1])
    prefix = solve_pmvb_prefix(model, "lp", 0.7, 0.5)
    assert _same(branched.objective, reference.objective)
    assert _same(prefix.objective, reference.objective)


def test_cli_pmvb_with_depth_reports_the_same_optimum(capsys: pytest.CaptureFixture) -> None:
    from coplug.plugins.cli import main

    assert main(["pmvb", "mknapsack", "--size", "22", "--seed", "1", "--depth", "3",
                 "--threshold", "0.7", "--confidence", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "depth=3" in out and "same optimum: True" in out
    assert main(["pmvb", "mknapsack", "--size", "22", "--mode", "prefix", "--depth", "2"]) == 2
    assert "root only" in capsys.readouterr().err


def test_prefix_under_a_node_limit_reports_a_valid_bound() -> None:
    """Every region searched but not closed: the weakest region bound still brackets the
    optimum (it was None)."""
    model = build_family("mknapsack", 45, 1)  # maximizes
    optimum = solve(model).objective
    result = solve_pmvb_prefix(model, "lp", 0.7, 0.5, **{"limits/nodes": 2})
    assert result.status.value == "node_limit" and result.bound is not None
    assert result.objective <= optimum + 1e-6 <= result.bound + 2e-6
