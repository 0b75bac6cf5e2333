"""Plugin probe (session 12): coplug's SCIP plugins on a user's own Pyomo models, checked
against SCIP without plugins and against enumeration."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import build_family
from coplug.plugins import InputError, solve
from coplug.plugins.pmvb_start import solve_pmvb_start
from coplug.plugins.results import Status


def _tiny_knapsack() -> pyo.ConcreteModel:
    """Solved at the root: step 1 of start mode answers alone, step 2 never runs."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=3 * m.x[0] + 4 * m.x[1] + 5 * m.x[2] + 6 * m.x[3] <= 10)
    m.value = pyo.Objective(expr=4 * m.x[0] + 5 * m.x[1] + 7 * m.x[2] + 8 * m.x[3],
                            sense=pyo.maximize)
    return m


def test_start_mode_keeps_a_whole_float_node_limit() -> None:
    # solve() takes limits/nodes=2.0 (a whole number); start mode ran step 1 for its default
    # 50 nodes then, 52 nodes in all against the user's 2
    model = build_family("mknapsack", 40, 3)
    plain = solve(model, **{"limits/nodes": 2.0})
    result = solve_pmvb_start(model, "lp", **{"limits/nodes": 2.0})
    assert plain.status is Status.NODE_LIMIT and result.status is Status.NODE_LIMIT
    assert result.extra["pmvb_start"]["likely_nodes"] <= 2


def test_start_mode_keeps_a_node_limit_of_zero() -> None:
    # limits/nodes=0 stops SCIP before the root; step 1 still searched one node and came
    # back with a solution SCIP without PMVB does not have under that limit
    model = build_family("mknapsack", 40, 3)
    plain = solve(model, **{"limits/nodes": 0})
    result = solve_pmvb_start(model, "lp", **{"limits/nodes": 0})
    assert result.status is plain.status is Status.NODE_LIMIT
    assert result.nodes == plain.nodes == 0


@pytest.mark.parametrize("bad", [True, -5, 2.5, "10"])
def test_start_mode_refuses_a_bad_node_limit_even_when_step_one_answers(bad: object) -> None:
    # step 1 overrides limits/nodes, so a bad value was never seen by SCIP when step 1
    # solved the model alone: solve() refuses it, start mode answered 'optimal'
    model = _tiny_knapsack()
    with pytest.raises(InputError, match="limits/nodes"):
        solve(model, **{"limits/nodes": bad})
    with pytest.raises(InputError, match="limits/nodes"):
        solve_pmvb_start(model, "lp", **{"limits/nodes": bad})


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter: a plugin reading freed SCIP memory segfaults it."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60, check=False)


def test_lap_heuristic_survives_the_second_solve_of_an_integral_row_check() -> None:
    # An infeasible verdict on a model with an all-integer row of side >= 1e5 is solved again
    # from scratch (freeTransform, optimize) with the plugins still included; the heuristic
    # kept the first run's transformed variables and read them after SCIP freed them
    # (segmentation fault). The subset sum is odd against even weights: no solution.
    result = _run_isolated("""
        import numpy as np
        import pyomo.environ as pyo
        from coplug.formulations.tsp import tsp_mip
        from coplug.plugins import solve
        from coplug.plugins.lap.heuristic import LapHeuristic

        rng = np.random.default_rng(0)
        p = rng.random((10, 2))
        m = tsp_mip(np.round(100 * np.linalg.norm(p[:, None] - p[None], axis=2)))
        rng = np.random.default_rng(0)
        w = [int(v) for v in rng.integers(100000, 200000, 8) * 2]
        m.z = pyo.Var(range(8), domain=pyo.Binary)
        m.odd = pyo.Constraint(expr=sum(w[i] * m.z[i] for i in range(8)) == sum(w) // 2 + 1)
        heuristic = LapHeuristic(max_calls=10**6)
        r = solve(m, plugins=[heuristic], **{"presolving/maxrounds": 0})
        assert "first_solve" in r.extra, r.extra
        assert heuristic.statistics()["calls"] > 0
        print(r.status.value)
    """)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.strip() == "infeasible"


_PMVB_TWICE = """
    from coplug.formulations.mip_families import build_family
    from coplug.plugins.bridge import build_instance, contrib_solver
    from coplug.plugins.pmvb import PMVBBranching
    from coplug.plugins.varmap import VarMap

    model = build_family("mknapsack", 22, 0)
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    build_instance(opt, model, "SCIP")
    scip = opt._solver_model
    scip.hideOutput()
    rule = PMVBBranching("lp", 0.6, 0.3)
    rule.only_likely = {only}
    scip.setParam("estimation/restarts/restartlimit", 0)
    rule.attach(scip, VarMap(opt._pyomo_var_to_solver_var_map))
    scip.optimize()
    first = scip.getObjVal()
    assert rule.statistics()["root_branched"]
    scip.freeTransform()  # what coplug's second solves do (integral rows, inf-or-unbounded)
    if not {only}:  # all items out: the second root LP is integral, PMVB never branches
        for var in scip.getVars():
            scip.chgVarUb(var, 0.0)
    scip.optimize()
    stats = rule.statistics()
    print(first, scip.getObjVal(), stats["root_branched"], stats["likely_held"],
          rule.root_planes is not None)
"""


def test_pmvb_prefix_step_one_branches_again_in_a_second_solve() -> None:
    # prefix and start mode's step 1 (only the likely child) skipped every root after the
    # first, so a second solve of the same SCIP model (freeTransform, optimize: the integral
    # row check) searched the whole model, and statistics() then read the first run's
    # freed variables (segmentation fault)
    result = _run_isolated(_PMVB_TWICE.format(only=True))
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    first, second, branched, held, planes = result.stdout.split()
    assert float(first) == float(second)
    assert branched == "True" and held in ("True", "False") and planes == "True"


def test_pmvb_statistics_after_a_second_solve_without_root_branching() -> None:
    # the root hyperplanes of the first solve were still reported (root_branched True) and
    # checked against the second solve's solution through freed variables
    result = _run_isolated(_PMVB_TWICE.format(only=False))
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    first, second, branched, held, planes = result.stdout.split()
    assert float(second) == 0.0 < float(first)
    assert (branched, held, planes) == ("False", "None", "False")


@pytest.mark.parametrize("runner", ["prefix", "start"])
def test_multi_step_modes_name_a_solver_other_than_scip(runner: str) -> None:
    # solver="highs" reached solve() with PMVB's own plugin: 'HiGHS takes no plugins;
    # plugins run inside SCIP', about plugins the caller never passed
    from coplug.plugins.pmvb_prefix import solve_pmvb_prefix

    run = solve_pmvb_prefix if runner == "prefix" else solve_pmvb_start
    with pytest.raises(InputError, match=r"runs SCIP.*solver='highs'"):
        run(_tiny_knapsack(), "lp", solver="highs")
    assert run(_tiny_knapsack(), "lp", solver="scip").objective == 13
