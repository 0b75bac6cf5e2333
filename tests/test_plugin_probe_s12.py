"""Plugin probe (session 12): coplug's SCIP plugins on a user's own Pyomo models, checked
against SCIP without plugins and against enumeration."""

from __future__ import annotations

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
