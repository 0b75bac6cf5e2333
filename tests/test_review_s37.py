"""Session 37 review fixes, each test checked to fail with its fix undone."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import solve

# A 16-binary model on which SCIP 10, with presolving and root cuts off, restarts at the root
# after a MIP start and stops with "invalid SCIP status <0>" (found by a probe).
_C = [6, 1, 2, -1, 1, 2, 7, -6, -3, 1, -4, 3, 6, -7, -9, 9]
_A = [[4, 6, 6, 8, 0, 2, 8, 3, 3, 2, 0, 0, 8, 0, 1, 2],
      [2, 7, 2, 1, 3, 6, 4, 2, 1, 0, 4, 1, 5, 6, 3, 4],
      [0, 4, 1, 4, 0, 2, 3, 4, 0, 8, 3, 1, 1, 6, 3, 2]]
_B = [24, 21, 21]
_START = [1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0]  # feasible, objective -21
_NO_PRESOLVE = {"presolving/maxrounds": 0, "separating/maxroundsroot": 0}


def _restart_model() -> pyo.ConcreteModel:
    """The probe's model, its variables at a feasible start."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(16), domain=pyo.Binary)
    m.o = pyo.Objective(expr=sum(_C[i] * m.x[i] for i in range(16)))
    m.r = pyo.ConstraintList()
    for k in range(3):
        row = sum(_A[k][i] * m.x[i] for i in range(16))
        m.r.add(row >= _B[k] - 8)
        m.r.add(row <= _B[k])
    for i in range(16):
        m.x[i].set_value(_START[i])
    return m


def test_warm_start_with_presolving_off_reaches_the_optimum() -> None:
    """A MIP start with presolving and root cuts off solves (it raised SolverError), to the
    optimum HiGHS finds."""
    warm = solve(_restart_model(), warmstart=True, **_NO_PRESOLVE)
    reference = solve(_restart_model(), solver="highs")
    assert warm.status.value == "optimal"
    assert warm.objective == pytest.approx(reference.objective) == pytest.approx(-28)


def test_restarts_stay_the_callers_when_set() -> None:
    """Restarts are switched off only with presolving off and only where the caller left
    them unset."""
    from pyscipopt import Model

    from coplug.plugins.bridge import _no_restarts_without_presolve

    default = Model().getParam("presolving/maxrestarts")
    for params, expected in (({"presolving/maxrounds": 0}, 0),
                             ({"presolving/maxrounds": 0, "presolving/maxrestarts": 3}, 3),
                             ({"presolving/maxrounds": 2}, default)):
        scip = Model()
        for key, value in params.items():
            scip.setParam(key, value)
        _no_restarts_without_presolve(scip, params)
        assert scip.getParam("presolving/maxrestarts") == expected
