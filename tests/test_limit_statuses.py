"""Each limit a caller sets comes back as its own status, from a model and from a file."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition

import coplug.plugins  # noqa: F401  (registers coplug_scip, coplug_highs)
from coplug.plugins import Status, solve, solve_file


def _packing(binary: bool) -> pyo.ConcreteModel:
    """max sum c x over 40 random packing rows, 60 variables: more than a few simplex
    iterations and more than half a megabyte of SCIP."""
    rng = np.random.default_rng(0)
    a = rng.random((40, 60))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(60), domain=pyo.Binary if binary else pyo.UnitInterval)
    m.rows = pyo.Constraint(range(40), rule=lambda _m, i: sum(
        float(a[i, j]) * m.x[j] for j in range(60)) <= 5)
    m.value = pyo.Objective(expr=sum((1 + j % 7) * m.x[j] for j in range(60)),
                            sense=pyo.maximize)
    return m


def test_a_highs_iteration_limit_is_iteration_limit(tmp_path) -> None:
    """It read `node_limit` (Pyomo calls both stops iterationLimit)."""
    m = _packing(binary=False)
    assert solve(m, solver="highs", simplex_iteration_limit=2).status is Status.ITERATION_LIMIT
    path = tmp_path / "packing.lp"
    m.write(str(path))
    read = solve_file(path, solver="highs", simplex_iteration_limit=2)
    assert read.status is Status.ITERATION_LIMIT
    assert solve(m, solver="highs").status is Status.OPTIMAL  # the limit is what stopped it


def test_a_scip_memory_limit_is_memory_limit(tmp_path) -> None:
    """It read `unknown`, with no word of why."""
    m = _packing(binary=True)
    result = solve(m, solver="scip", **{"limits/memory": 0.5})
    assert result.status is Status.MEMORY_LIMIT
    path = tmp_path / "packing.lp"
    m.write(str(path))
    assert solve_file(path, solver="scip", **{"limits/memory": 0.5}).status \
        is Status.MEMORY_LIMIT


@pytest.mark.parametrize(("name", "options", "condition"), [
    ("coplug_highs", {"simplex_iteration_limit": 2}, TerminationCondition.iterationLimit),
    ("coplug_scip", {"limits/memory": 0.5}, TerminationCondition.unknown),
])
def test_the_pyomo_factories_map_them(name: str, options: dict,
                                      condition: TerminationCondition) -> None:
    """Pyomo calls both HiGHS stops iterationLimit and has no memory limit (`unknown`)."""
    m = _packing(binary=name == "coplug_scip")
    results = SolverFactory(name).solve(m, solver_options=options, load_solutions=False,
                                        raise_exception_on_nonoptimal_result=False)
    assert results.termination_condition is condition
