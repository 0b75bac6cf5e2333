"""SCIP on all-integer rows with huge fractional coefficients (session 23 differential
fuzz): such rows are judged exactly too, and the tightened retry runs without the linear
constraints' presolve. Every verdict is checked against brute force in exact arithmetic."""

from __future__ import annotations

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve


def _half_integer_model(scale: int) -> pyo.ConcreteModel:
    """249008245 x - 249008244.5 y == -2 has no solution with x binary, y in [-1, 1]."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Integers, bounds=(-1, 1))
    m.c = pyo.Constraint(expr=scale * (249008245 * m.x - 249008244.5 * m.y) == -2 * scale)
    m.o = pyo.Objective(expr=-2 * m.x - 7 * m.y + 4, sense=pyo.maximize)
    return m


@pytest.mark.parametrize("scale", [1, 2])
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_half_integer_row_with_no_solution_is_infeasible(scale, solver):
    """SCIP said optimal 4.00000002 at x = y = 0, missing the side -2 by all of it (its
    integers 1e-9 off whole numbers); doubled, the row was checked and came out right."""
    assert solve(_half_integer_model(scale), solver=solver).status is Status.INFEASIBLE


def _random_case(seed: int) -> tuple[pyo.ConcreteModel, float | None]:
    """2-3 small integer boxes under 1-2 rows with coefficients near 1e8-3e9, some k + 0.5;
    the brute-force optimum in exact arithmetic (None: no point)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 4))
    lo = rng.integers(-3, 1, n)
    hi = lo + rng.integers(1, 5, n)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Integers,
                  bounds=lambda _m, i: (int(lo[i]), int(hi[i])))
    base, rows = float(rng.integers(1e8, 3e9)), []
    for _ in range(int(rng.integers(1, 3))):
        a = [(base + float(rng.integers(-3, 4)) + (0.5 if rng.random() < 0.3 else 0.0))
             * (1 if rng.random() < 0.5 else -1) for _ in range(n)]
        kind = str(rng.choice(["le", "ge", "eq", "range"]))
        side = float(rng.integers(-5, 6)) + (0.5 if rng.random() < 0.3 else 0.0)
        rows.append((a, kind, side))
    m.c = pyo.ConstraintList()
    for a, kind, side in rows:
        body = sum(a[i] * m.x[i] for i in range(n))
        m.c.add({"le": body <= side, "ge": body >= side, "eq": body == side,
                 "range": pyo.inequality(side, body, side + 2)}[kind])
    c = rng.integers(-9, 10, n)
    m.o = pyo.Objective(expr=sum(int(c[i]) * m.x[i] for i in range(n)))
    best = None
    for point in itertools.product(*[range(int(lo[i]), int(hi[i]) + 1) for i in range(n)]):
        if all(_meets(a, kind, side, point) for a, kind, side in rows):
            value = sum(int(c[i]) * point[i] for i in range(n))
            best = value if best is None else min(best, value)
    return m, best


def _meets(a: list[float], kind: str, side: float, point: tuple[int, ...]) -> bool:
    """Whether the row holds at `point`, in exact arithmetic."""
    activity, s = sum(Fraction(ai) * p for ai, p in zip(a, point, strict=True)), Fraction(side)
    return {"le": activity <= s, "ge": activity >= s, "eq": activity == s,
            "range": s <= activity <= s + 2}[kind]


@pytest.mark.parametrize("seed", range(20))
def test_huge_fractional_rows_never_give_a_wrong_verdict(seed):
    """Before: 72 wrong verdicts in 300 such models (5 in these 20); now 0, with 21 honest
    'unknown's (a row still missed after the retry, flagged with a warning)."""
    m, best = _random_case(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the flagged 'unknown's warn
        result = solve(m)
    if result.status is Status.OPTIMAL:
        assert best is not None and result.objective == pytest.approx(best, abs=1e-6)
    elif result.status is Status.INFEASIBLE:
        assert best is None
    else:
        assert result.status is Status.UNKNOWN and result.extra["violated_rows"]


@pytest.mark.parametrize("extra_row", [False, True])
def test_the_retry_runs_without_the_linear_presolve(extra_row):
    """At feastol 1e-9 SCIP's linear presolve made this 'optimal' 22 (the optimum is 1), and
    with a harmless row more 'infeasible'."""
    m = pyo.ConcreteModel()
    m.x0 = pyo.Var(domain=pyo.Integers, bounds=(-3, 1))
    m.x1 = pyo.Var(domain=pyo.Integers, bounds=(-3, 2))
    m.x2 = pyo.Var(domain=pyo.Integers, bounds=(0, 5))
    m.c = pyo.Constraint(expr=pyo.inequality(
        5.5, 2452169629 * m.x0 + 2452169633 * m.x2 - 2452169631, 7.5))
    if extra_row:
        m.d = pyo.Constraint(expr=m.x1 + m.x0 <= 10)
    m.o = pyo.Objective(expr=-3 * m.x0 - 7 * m.x1 + 8 * m.x2 - 4)
    result = solve(m)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(1.0)
    assert result.extra["feastol"] == 1e-9  # the retry decided it


def test_decimal_coefficients_are_not_taken_for_misses():
    """0.1 and 0.2 are not exact in binary: the exact check allows their round-off."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, 3))
    m.c = pyo.Constraint(expr=0.1 * m.x[0] + 0.2 * m.x[1] + 1e6 * m.x[2] == 0.3 + 1e6)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1] - m.x[2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(1.0)


def test_a_large_decimal_coefficient_keeps_its_round_off():
    """987654321.3 is 4.8e-8 off in binary: 1000 of it miss the decimal side 987654321300
    by 4.8e-5, which an exact check at 1e-6 called a violated row ('unknown')."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 2000))
    m.y = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=987654321.3 * m.x + m.y == 987654321300)
    m.o = pyo.Objective(expr=m.x + m.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m)
    assert result.status is Status.OPTIMAL and round(m.x.value) == 1000


def test_a_half_integer_row_met_exactly_is_not_called_missed():
    """x = y = 1 meets 249008245 x - 249008244.5 y == 0.5 exactly: judged at the floats'
    exact values, not truncated ones."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Integers, bounds=(-1, 1))
    m.c = pyo.Constraint(expr=249008245 * m.x - 249008244.5 * m.y == 0.5)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(2.0)


def test_a_partial_start_of_a_nonlinear_objective_logs_no_pyomo_error(caplog):
    """Pyomo logged 'ERROR: evaluating object as numeric value' for the variable without a
    value (twice) before the start went on as partial."""
    import logging

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 2)
    m.o = pyo.Objective(expr=(m.x[0] - 1.3) ** 2 + (m.x[1] + 0.7) ** 2 + m.x[2] ** 2 + 4)
    m.x[0].value, m.x[2].value = 2, 0
    with caplog.at_level(logging.WARNING):
        result = solve(m, warmstart=True)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(4.98)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
