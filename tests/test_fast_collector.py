"""The fast component collector gives what Pyomo's gives, in the same order, and SCIP models
built with it are the same byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyomo.contrib.observer.model_observer as model_observer
import pyomo.environ as pyo
import pytest

from coplug.formulations import registry
from coplug.plugins import Status, solve
from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.fast_collector import _PYOMO_COLLECT, collect_components
from coplug.plugins.scip_walker import fix_scip_walker


def _zoo() -> pyo.ConcreteModel:
    """A model whose rows and objective cover the shapes the collector meets."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(0, 5))
    m.y = pyo.Var(domain=pyo.Binary)
    m.p = pyo.Param(initialize=2.0, mutable=True)
    m.lo = pyo.Param(initialize=-1.0, mutable=True)
    m.e = pyo.Expression(expr=m.x[0] + 3 * m.x[1])
    m.z = pyo.Var(bounds=(0, m.p))
    m.f = pyo.Var(initialize=1.5)
    m.f.fix()
    m.c = pyo.ConstraintList()
    m.c.add(m.x[2] + 2 * m.x[1] - m.x[0] <= 4)
    m.c.add(sum(float(c) * m.x[i] for i, c in enumerate(np.arange(1.0, 5.0))) >= 1)
    m.c.add(m.x[3] == m.x[0] + m.y)
    m.c.add(pyo.inequality(-2, m.x[1] + m.x[2] + 1, 7))
    m.c.add(pyo.inequality(m.lo, m.x[1] - m.x[3], m.p))
    m.c.add(m.p * m.x[0] + m.x[1] <= 3)
    m.c.add(m.e + m.x[2] <= 6)
    m.c.add(m.x[0] * m.x[1] + m.x[3] ** 2 <= 9)
    m.c.add(m.f * m.x[2] + m.x[0] + m.x[0] <= 8)
    m.c.add(m.y <= 1)
    m.c.add(m.x[2] + m.x[1] + 1 + m.lo <= 10)
    m.c.add(m.z + np.float64(2.5) * m.x[3] <= 11)
    m.o = pyo.Objective(expr=m.x[3] + 2 * m.x[0] - m.y + m.z, sense=pyo.maximize)
    return m


def _as_lists(found):
    return [[id(c) for c in part] for part in found]


def test_every_row_and_the_objective_collect_as_pyomo_does():
    m = _zoo()
    exprs = [c.expr for c in m.c.values()] + [m.o.expr, m.p]  # m.p: z's upper bound
    for expr in exprs:
        assert _as_lists(collect_components(expr)) == _as_lists(_PYOMO_COLLECT(expr)), expr


def test_the_linear_shortcut_takes_plain_rows_and_leaves_the_rest_to_the_walk():
    m = _zoo()
    rows = list(m.c.values())
    fast = collect_components(rows[0].expr)[1]
    assert [v.name for v in fast] == ["x[2]", "x[1]", "x[0]"]
    named, variables, params, _ = collect_components(rows[6].expr)  # through m.e
    assert list(named) == [m.e] and not params
    assert list(collect_components(rows[5].expr)[2]) == [m.p]
    assert list(collect_components(rows[4].expr)[2]) == [m.lo, m.p]


def _written(model: pyo.Block, path: Path) -> bytes:
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    build_instance(opt, model, "SCIP")
    opt._solver_model.writeProblem(str(path), verbose=False)
    return path.read_bytes()


@pytest.mark.parametrize("name,size", [("knapsack", 40), ("tsp", 6), ("openpit", 60),
                                       ("assignment", 8), ("fair_clustering", 8)])
def test_scip_models_are_the_same_byte_for_byte(tmp_path, monkeypatch, name, size):
    fix_scip_walker()
    model = registry.build(name, size, seed=0)
    monkeypatch.setattr(model_observer, "collect_components_from_expr", _PYOMO_COLLECT)
    slow = _written(model, tmp_path / "pyomo.cip")
    monkeypatch.setattr(model_observer, "collect_components_from_expr", collect_components)
    assert _written(model, tmp_path / "fast.cip") == slow


def test_solve_installs_it_and_the_zoo_solves_as_with_pyomos_collector(monkeypatch):
    result = solve(_zoo(), solver="scip")
    assert model_observer.collect_components_from_expr is collect_components
    monkeypatch.setattr(model_observer, "collect_components_from_expr",
                        lambda expr: _PYOMO_COLLECT(expr))  # not Pyomo's own: kept
    reference = solve(_zoo(), solver="scip")
    assert model_observer.collect_components_from_expr is not collect_components
    assert result.status is reference.status is Status.OPTIMAL
    assert result.objective == pytest.approx(reference.objective, rel=1e-9)
