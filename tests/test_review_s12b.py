"""Review of the duals, LP certificate, HiGHS row checks, priorities and SCIP walker
modules (session 12b): each test pins a bug found there, against an independent truth."""

from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, Status, solve


def _suffixes(m: pyo.ConcreteModel) -> None:
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)


def _single_point_lp() -> tuple[pyo.ConcreteModel, np.ndarray, np.ndarray]:
    """An LP whose equality rows pin x = (2, 0, 0); SoPlex's own presolving solved it and
    returned all-zero row duals with reduced costs that do not match them."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, None))
    x = m.x
    a = np.array([[2, -3, 3], [-3, -3, -2], [1, 0, 1], [2, 2, -1], [-2, -3, 0], [3, -3, 1]],
                 dtype=float)
    m.c = pyo.ConstraintList()
    m.c.add(2 * x[0] - 3 * x[1] + 3 * x[2] <= 4)
    m.c.add(-3 * x[0] - 3 * x[1] - 2 * x[2] == -6)
    m.c.add(x[0] + x[2] <= 2)
    m.c.add(2 * x[0] + 2 * x[1] - x[2] >= 4)
    m.c.add(-2 * x[0] - 3 * x[1] == -4)
    m.c.add(3 * x[0] - 3 * x[1] + x[2] <= 6)
    m.o = pyo.Objective(expr=2 * x[0] - 3 * x[2], sense=pyo.maximize)
    _suffixes(m)
    return m, a, np.array([2.0, 0.0, -3.0])


def test_scip_duals_of_an_lp_soplex_presolves_away():
    m, a, c = _single_point_lp()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # duals left empty warn
        result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL and abs(result.objective - 4.0) < 1e-9
    assert result.extra["duals"]["loaded"]
    y = np.array([m.dual[m.c[i + 1]] for i in range(6)])
    rc = np.array([m.rc[m.x[j]] for j in range(3)])
    assert np.allclose(c - a.T @ y, rc, atol=1e-9)
    # maximization: a dual <= 0 prices a lower side, >= 0 an upper side; rc <= 0 at x >= 0
    lower = [None, -6, None, 4, -4, None]
    upper = [4, -6, 2, None, -4, 6]
    dual_objective = 0.0
    for i in range(6):
        side = lower[i] if y[i] < -1e-12 else upper[i] if y[i] > 1e-12 else 0.0
        assert side is not None, f"row {i} dual {y[i]} has the wrong sign"
        dual_objective += y[i] * side
    assert np.all(rc <= 1e-9)  # every bound is a lower bound of 0: rc * 0 adds nothing
    assert abs(dual_objective - 4.0) < 1e-9


def _exp_of_scaled_x(scale_as: str) -> pyo.ConcreteModel:
    """min x + exp(x / s), x in [0.1, 4], s = 1e30 a mutable Param or a fixed variable:
    the optimum is 0.1 + exp(1e-31), i.e. 1.1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 4))
    if scale_as == "param":
        m.s = pyo.Param(initialize=1e30, mutable=True)
    else:
        m.s = pyo.Var()
        m.s.fix(1e30)
    m.o = pyo.Objective(expr=m.x + pyo.exp(m.x / m.s))
    return m


@pytest.mark.parametrize("scale_as", ["param", "fixed_var"])
def test_scip_huge_param_or_fixed_value_inside_a_function(scale_as):
    # Pyomo's interface also made s a SCIP variable fixed at 1e30, which SCIP reads as
    # infinity: SCIP answered "optimal" 100000 for the true 1.1
    m = _exp_of_scaled_x(scale_as)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert abs(result.objective - 1.1) < 1e-6 and abs(m.x.value - 0.1) < 1e-6


def test_priority_on_a_variable_of_another_model_is_refused():
    # the key belongs to a second copy of the model: SCIP never sees it, and the priority
    # the user meant for this model was dropped without a word
    def knapsack() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(3), domain=pyo.Binary)
        m.c = pyo.Constraint(expr=3 * m.x[0] + 4 * m.x[1] + 5 * m.x[2] <= 7)
        m.o = pyo.Objective(expr=4 * m.x[0] + 5 * m.x[1] + 7 * m.x[2], sense=pyo.maximize)
        return m

    m, other = knapsack(), knapsack()
    m.priority = pyo.Suffix(direction=pyo.Suffix.EXPORT, datatype=pyo.Suffix.INT)
    m.priority[other.x[2]] = 10
    with pytest.raises(InputError, match=r"x\[2\].*another model"):
        solve(m, solver="scip")
