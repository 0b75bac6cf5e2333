"""Native options as a dict (`solve(..., options=...)`), including names that are also
solve()'s own keywords, such as HiGHS's `solver`."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
from scipy.optimize import linprog

from coplug.plugins import InputError, Status, solve


def packing_lp(seed: int = 0, n: int = 60, m: int = 20) -> tuple[pyo.ConcreteModel, float]:
    """A random packing LP and scipy's optimum of it."""
    rng = np.random.default_rng(seed)
    a, v = rng.uniform(1, 10, (m, n)), rng.uniform(1, 10, n)
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(n), bounds=(0, 1))
    model.c = pyo.Constraint(range(m), rule=lambda mm, i: sum(
        float(a[i, j]) * mm.x[j] for j in range(n)) <= 40)
    model.o = pyo.Objective(expr=sum(float(v[j]) * model.x[j] for j in range(n)),
                            sense=pyo.maximize)
    reference = linprog(-v, A_ub=a, b_ub=np.full(m, 40), bounds=(0, 1), method="highs")
    return model, -reference.fun


@pytest.mark.parametrize("algorithm", ["ipm", "simplex", "pdlp"])
def test_highs_solver_option_reaches_highs_and_stays_exact(algorithm: str) -> None:
    model, optimum = packing_lp()
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(model, solver="highs", options={"solver": algorithm})
    if algorithm == "pdlp" and result.status is not Status.OPTIMAL:
        pytest.skip("PDLP's first-order answer failed coplug's LP certificate")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(optimum)
    assert result.extra["duals"]["loaded"]


def test_options_reach_the_solver_and_clash_is_refused() -> None:
    model, _ = packing_lp()
    with pytest.raises(InputError, match="'solver' to 'simplx'"):
        solve(model, solver="highs", options={"solver": "simplx"})
    with pytest.raises(InputError, match=r"\['limits/nodes'\] given both"):
        solve(model, options={"limits/nodes": 5}, **{"limits/nodes": 6})
    with pytest.raises(InputError, match="options must be a dict"):
        solve(model, options=[("limits/nodes", 5)])
    with pytest.raises(InputError, match="limits/nodez"):
        solve(model, options={"limits/nodez": 5})


def test_pyomo_factory_passes_solver_options_named_like_solve_arguments() -> None:
    model, optimum = packing_lp(3)
    results = NewFactory("coplug_highs").solve(model, solver_options={"solver": "ipm"})
    assert results.incumbent_objective == pytest.approx(optimum)
