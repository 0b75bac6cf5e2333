"""Review of HiGHS's lazy rounds (`coplug.plugins.lazy_rounds`) and OnSolution's objective
value for a nonlinear objective; truths from scipy's HiGHS (`milp`) with the lazy rows given
up front, or the Pyomo objective evaluated at the point passed."""

from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.common.collections import ComponentMap
from scipy.optimize import Bounds, LinearConstraint, milp

from coplug.plugins import InputError, LazyConstraints, OnSolution, Status, solve


def _names(model: pyo.Block) -> list[str]:
    return sorted(c.name for c in model.component_objects(descend_into=True))


def _truth(c, a, lower, upper, lb, ub, integral):
    """min c.x, lower <= a x <= upper, lb <= x <= ub by scipy's HiGHS: its Status and
    objective. Its MIP answer 'unbounded or infeasible' is settled by a zero objective: a
    feasible point means unbounded (rational data: the relaxation's ray serves the MIP)."""

    def run(cost):
        return milp(np.array(cost, float),
                    constraints=LinearConstraint(np.array(a, float), lower, upper),
                    integrality=np.array(integral), bounds=Bounds(lb, ub))

    res = run(c)
    if res.status == 4:
        return (Status.UNBOUNDED if run([0] * len(c)).status == 0 else Status.INFEASIBLE,
                None)
    return {0: Status.OPTIMAL, 2: Status.INFEASIBLE, 3: Status.UNBOUNDED}[res.status], res.fun


def _unbounded_model(integral: bool):
    """min -x - y, x >= 0 (no upper bound), 0 <= y <= 1, x + y >= 1: unbounded as it is."""
    m = pyo.ConcreteModel()
    m.cap = pyo.Param(mutable=True, initialize=float("inf"))
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers if integral else pyo.NonNegativeReals,
                  bounds=(0, m.cap))
    m.y = pyo.Var(bounds=(0, 1))
    m.z = pyo.Var()  # free, in the objective with a zero-sum: boxed and given back
    m.obj = pyo.Objective(expr=-m.x - m.y + m.z - m.z)
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    return m


# (lazy rows as (coefs on x, y), lower, upper), for the truth and for `separate`
_CASES = {
    "bounds it": [((1, 0), -np.inf, 10)],
    "bounds it, ranged": [((1, 1), 2.5, 3.5)],
    "bounds it, equality": [((1, 0), 3, 3)],
    "makes it infeasible": [((1, 1), -np.inf, 0.5)],
    "leaves it unbounded": [((0, 1), -np.inf, 0.5)],
}


@pytest.mark.parametrize("integral", [False, True])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_lazy_row_that_decides_an_unbounded_model_is_found(case, integral):
    rows = _CASES[case]
    expected, fun = _truth([-1, -1], [[1, 1]] + [r[0] for r in rows],
                         [1] + [r[1] for r in rows], [np.inf] + [r[2] for r in rows],
                         [0, 0], [np.inf, 1], [int(integral), 0])
    m = _unbounded_model(integral)
    before = _names(m)

    def separate(_solution):
        return [pyo.inequality(lo if lo > -np.inf else None, a * m.x + b * m.y,
                               hi if hi < np.inf else None) for (a, b), lo, hi in rows]

    result = solve(m, solver="highs", plugins=[LazyConstraints(separate)])
    assert result.status is expected  # was UNBOUNDED in every case
    if expected is Status.OPTIMAL:
        assert result.objective == pytest.approx(fun, abs=1e-6)
        for (a, b), lo, hi in rows:
            assert lo - 1e-6 <= a * m.x.value + b * m.y.value <= hi + 1e-6
    # the model comes back as it was: its components and its variables' own bounds
    assert _names(m) == before
    assert m.x.upper is m.cap and m.x.lb == 0 and m.z.lower is None and m.z.upper is None


def test_a_separate_raising_in_a_later_round_leaves_no_dual_of_a_removed_row():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(0, 4))
    m.obj = pyo.Objective(expr=-(3 * m.x[0] + 2 * m.x[1]))
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    calls = []

    def separate(_solution):
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("separate failed")
        return [m.x[0] + m.x[1] <= 5]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="separate failed"):
            solve(m, solver="highs", plugins=[LazyConstraints(separate)])
    # was one entry, the dual of the temporary row the model no longer holds
    assert len(m.dual) == 0 and [c.name for c in m.component_objects(pyo.Constraint)] == []


def test_two_lazy_constraints_sharing_a_name_are_refused_as_scip_refuses_them():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(0, 3))
    m.obj = pyo.Objective(expr=-m.x[0] - m.x[1])
    plugins = [LazyConstraints(lambda _s: [m.x[0] <= 1]),
               LazyConstraints(lambda _s: [m.x[1] <= 2])]
    with pytest.raises(InputError):
        solve(m, plugins=plugins)
    # was a solve whose plugin_stats kept one of the two, in silence
    with pytest.raises(InputError, match="name of its own"):
        solve(m, solver="highs", plugins=plugins)
    plugins[1].name = "second"
    result = solve(m, solver="highs", plugins=plugins)
    assert result.objective == pytest.approx(-3) and set(result.plugin_stats) == {"lazy",
                                                                                    "second"}


def _block_model():
    """m.b solved alone; the parent's own objective `m.obj` is active too."""
    m = pyo.ConcreteModel()
    m.z = pyo.Var(bounds=(0, 3), domain=pyo.Integers)
    m.w = pyo.Var(bounds=(0, 3))
    m.obj = pyo.Objective(expr=m.z ** 2 + 100)
    m.b = pyo.Block()
    m.b.y = pyo.Var(range(2), bounds=(-2, 3), domain=pyo.Integers)
    m.b.obj = pyo.Objective(expr=(m.z - 1.4) ** 2 + (m.b.y[0] - 2.2) ** 2
                            + m.b.y[0] * m.b.y[1] + 3, sense=pyo.minimize)
    m.b.c = pyo.Constraint(expr=m.z + m.b.y[0] + m.b.y[1] >= 1)
    return m


@pytest.mark.parametrize("parent_uses_block_variables", [True, False])
def test_on_solution_passes_the_solved_blocks_objective_not_the_parents(
        parent_uses_block_variables):
    m = _block_model()
    if not parent_uses_block_variables:
        m.obj.expr = m.w ** 2  # not in m.b's solve: was an InputError out of the callback
    variables = [m.z, m.b.y[0], m.b.y[1]]
    seen = []

    def callback(solution, objective):
        seen.append((ComponentMap((v, solution[v]) for v in variables), objective))

    solve(m.b, plugins=[OnSolution(callback)])
    assert seen
    for point, objective in seen:
        z, y0, y1 = (point[v] for v in variables)
        truth = (z - 1.4) ** 2 + (y0 - 2.2) ** 2 + y0 * y1 + 3
        assert objective == pytest.approx(truth, abs=1e-6)  # was m.obj's z**2 + 100
