"""OnSolution with HiGHS around coplug's own re-runs of HiGHS: the settle run of an
"infeasible or unbounded" verdict (zero objective) and the solve again at a tighter
tolerance of a model with a large all-integer row. Truths: the Pyomo objective evaluated
at the values the callback got, the row checked in exact integers, enumeration."""

from __future__ import annotations

import itertools

import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve
from coplug.plugins.on_solution import OnSolution

COEFS = [15000000, 10000000, -4999999, -5000001]
SIDE = 45000000
BOXES = [(1, 3), (-1, 0), (-1, 1), (-2, -1)]
COST = [5, -2, -1, 1]


def _large_row_model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=lambda _, i: BOXES[i])
    m.row = pyo.Constraint(expr=sum(c * m.x[i] for i, c in enumerate(COEFS)) == SIDE)
    m.o = pyo.Objective(expr=sum(c * m.x[i] for i, c in enumerate(COST)))
    return m


def _meets_row_exactly(point: list[float]) -> bool:
    if any(abs(v - round(v)) > 1e-6 for v in point):
        return False
    return sum(c * round(v) for c, v in zip(COEFS, point, strict=True)) == SIDE


def _enumerated_optimum() -> int:
    return min(sum(c * v for c, v in zip(COST, p, strict=True))
               for p in itertools.product(*(range(lo, hi + 1) for lo, hi in BOXES))
               if sum(c * v for c, v in zip(COEFS, p, strict=True)) == SIDE)


def test_unbounded_mip_callback_objectives_are_the_models() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.c = pyo.Constraint(expr=m.x - m.y <= 3)
    m.c2 = pyo.Constraint(expr=2 * m.x + 3 * m.y >= 1.5)
    m.o = pyo.Objective(expr=m.x + m.y + 5, sense=pyo.maximize)
    seen = []
    result = solve(m, solver="highs",
                   plugins=[OnSolution(lambda s, obj: seen.append((obj, s[m.x], s[m.y])))])
    assert result.status is Status.UNBOUNDED
    for objective, x, y in seen:  # the settle run's zero objective handed on 5 for x+y+5 = 6
        assert objective == pytest.approx(x + y + 5)


def test_callback_sees_only_points_that_meet_the_large_row() -> None:
    m = _large_row_model()
    seen = []
    result = solve(m, solver="highs", plugins=[OnSolution(
        lambda s, obj: seen.append((obj, [s[m.x[i]] for i in range(4)])))])
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(_enumerated_optimum())
    assert seen
    for objective, point in seen:
        assert _meets_row_exactly(point), point
        assert objective == pytest.approx(sum(c * v for c, v in zip(COST, point, strict=True)))


def test_a_stop_before_the_tightened_solve_keeps_a_solution() -> None:
    m = _large_row_model()
    seen = []

    def stop(solution, objective):
        seen.append([solution[m.x[i]] for i in range(4)])
        return True

    result = solve(m, solver="highs", plugins=[OnSolution(stop)])
    assert result.status is Status.INTERRUPTED
    assert result.has_solution  # the solve again interrupted itself at once: no solution
    loaded = [m.x[i].value for i in range(4)]
    assert _meets_row_exactly(loaded)
    assert loaded == pytest.approx(seen[-1])
    assert all(_meets_row_exactly(point) for point in seen)
