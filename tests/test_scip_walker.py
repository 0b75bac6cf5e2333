"""coplug's handlers in Pyomo's Pyomo-to-SCIP walker build the same SCIP model as Pyomo's
own, sums in linear time instead of quadratic."""

from __future__ import annotations

from pathlib import Path

import pyomo.contrib.solver.solvers.scip.base as scip_base
import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.scip_walker import _sum, fix_scip_walker, pyomo_sum_handler


def _mixed_model() -> pyo.ConcreteModel:
    """Linear, quadratic and nonlinear sums with constants, mutable Params and fixed vars."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 5)
    m.x = pyo.Var(m.I, bounds=(0.5, 3))
    m.y = pyo.Var(domain=pyo.Binary)
    m.f = pyo.Var(initialize=2.0)
    m.f.fix()
    m.p = pyo.Param(initialize=1.5, mutable=True)
    m.lin = pyo.Constraint(expr=sum((i + 1) * m.x[i] for i in m.I) + 4 + m.f <= 30)
    m.quad = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in m.I) + m.p * m.y >= 3)
    m.nl = pyo.Constraint(expr=pyo.exp(m.x[0]) + pyo.log(m.x[1]) + m.x[2] * m.x[3] + 2 <= 40)
    m.rng = pyo.Constraint(expr=(-2, 2 * m.x[4] + 1 + m.x[5], 9))
    m.obj = pyo.Objective(expr=sum(m.x[i] for i in m.I) - 3 * m.y + 7)
    return m


def _written(model: pyo.Block, path: Path) -> bytes:
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    build_instance(opt, model, "SCIP")
    opt._solver_model.writeProblem(str(path), verbose=False)
    return path.read_bytes()


def test_same_scip_model_as_pyomos_sum(tmp_path: Path) -> None:
    fix_scip_walker()
    m = _mixed_model()
    with pyomo_sum_handler():
        theirs = _written(m, tmp_path / "pyomo.cip")
    assert scip_base._operator_map[scip_base.SumExpression] is _sum  # restored after
    assert _written(m, tmp_path / "coplug.cip") == theirs


def test_mixed_model_solves_to_the_same_optimum_with_both_handlers() -> None:
    fix_scip_walker()
    with pyomo_sum_handler():
        theirs = solve(_mixed_model())
    ours = solve(_mixed_model())
    assert ours.optimal and theirs.optimal
    assert ours.objective == pytest.approx(theirs.objective, abs=1e-6)


def test_a_sum_of_numbers_stays_a_number() -> None:
    assert _sum(None, [1.0, 2, 3.5], None, None) == 6.5


def test_a_long_sum_is_one_scip_expression() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(20000), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum((i % 7 + 1) * m.x[i] for i in m.x) <= 100)
    m.obj = pyo.Objective(expr=sum((i % 5 + 1) * m.x[i] for i in m.x), sense=pyo.maximize)
    assert solve(m, solver="scip").objective == solve(m, solver="highs").objective
