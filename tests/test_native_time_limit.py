"""A time limit given by the solver's own name covers the whole call, as `time_limit=` does:
it used to restart with every solve inside it (HiGHS's tightened-tolerance retry, lazy
rounds, multi-objective stages: 5.4 s for a 3 s limit)."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

import coplug.plugins.highs_backend as hb
from coplug.plugins import InputError, lexicographic, solve, solve_file
from coplug.plugins.stages import StagedSolver


def _model() -> pyo.ConcreteModel:
    """Four binaries, a cost and a value."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 2)
    m.cost = pyo.Objective(expr=sum((j + 1) * m.x[j] for j in range(4)))
    m.value = pyo.Objective(expr=m.x[3] - m.x[0], sense=pyo.maximize)
    m.value.deactivate()
    return m


@pytest.mark.parametrize("given", [{"time_limit": 30}, {"options": {"time_limit": 30.0}}])
def test_highs_native_limit_becomes_the_calls_limit(given, monkeypatch):
    seen = []
    real = hb.run_highs

    def spy(opt, model, **kwargs):
        seen.append((kwargs["time_limit"], "time_limit" in kwargs["params"]))
        return real(opt, model, **kwargs)

    monkeypatch.setattr(hb, "run_highs", spy)
    assert solve(_model(), solver="highs", **given).objective == pytest.approx(3.0)
    assert seen == [(30.0, False)]


def test_scip_native_limit_is_shared_by_the_stages(monkeypatch):
    limits = []
    real = StagedSolver.solve

    def spy(self, objective, rows, time_limit, warmstart):
        limits.append(time_limit)
        return real(self, objective, rows, time_limit, warmstart)

    monkeypatch.setattr(StagedSolver, "solve", spy)
    m = _model()
    lex = lexicographic(m, [m.cost, m.value], **{"limits/time": 40.0})
    assert lex.status.value == "optimal" and len(limits) == 2
    assert 0 < limits[1] <= limits[0] <= 40.0  # one deadline, counting down


def test_a_file_takes_the_native_limit_whole(tmp_path):
    path = tmp_path / "m.lp"
    _model().write(str(path))
    assert solve_file(path, solver="scip", **{"limits/time": 1e20}).objective == 3.0
    assert solve_file(path, solver="highs", time_limit=float("inf")).objective == 3.0


@pytest.mark.parametrize("solver,name", [("scip", "limits/time"), ("highs", "time_limit")])
def test_a_non_positive_native_limit_is_named(solver, name):
    with pytest.raises(InputError, match=f"'{name}' is a time limit"):
        solve(_model(), solver=solver, options={name: 0})
    with pytest.raises(InputError, match="both set a time limit"):
        solve(_model(), solver=solver, time_limit=5, options={name: 3})
