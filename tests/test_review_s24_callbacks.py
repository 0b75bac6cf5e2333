"""Review of session 24 (lazy constraints, callbacks, HiGHS's rows): each case was a wrong
answer or a wrong error before its fix, and is checked against the model with its rows
written out or against the solver's own answer."""

from __future__ import annotations

import warnings

import pyomo.environ as pyo
import pytest
from test_review_s20_model_state import _knapsack

from coplug.plugins import InputError, OnSolution, Status, solve
from coplug.plugins.lazy import LazyConstraints, linear_row


def _two_columns(big: float) -> pyo.ConcreteModel:
    """max x0 + 2 x1, x0 + x1 <= 3 and big * x1 <= big (x1 <= 1) on [0, 5]: optimum 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(0, 5))
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] <= 3)
    m.h = pyo.Constraint(expr=big * m.x[1] <= big)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1], sense=pyo.maximize)
    return m


@pytest.mark.parametrize("big", [1e15, 1e16, 1e19])
def test_highs_refusing_a_row_is_named_not_solved_without_rows(big):
    """HiGHS refuses rows with a coefficient of 1e15 or more, and answered 15 (no rows)."""
    with pytest.raises(InputError, match=r"constraint 'h': the coefficient .* of x\[1\] .* "
                                         "HiGHS's limit on matrix values"):
        solve(_two_columns(big), solver="highs")
    assert solve(_two_columns(big), solver="scip").objective == pytest.approx(4)


def test_highs_takes_a_coefficient_below_its_limit():
    assert solve(_two_columns(1e14), solver="highs").objective == pytest.approx(4)


def test_highs_lazy_rounds_refuse_such_a_lazy_row_too():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, 5))
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    lazy = LazyConstraints(lambda _s: [1e16 * m.x[2] <= 2e16])
    with pytest.raises(InputError, match="limit on matrix values"):
        solve(m, solver="highs", plugins=[lazy])


def test_a_lazy_row_at_the_solvers_infinity_is_named():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(0, 5))
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    lazy = LazyConstraints(lambda _s: [1e20 * m.x[1] <= 2e20])
    with pytest.raises(InputError, match="at or past the solvers' infinity"):
        solve(m, plugins=[lazy])


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("written", ["x + 2*y >= 3", "3 <= x + 2*y", "x + 2*y == 3"])
def test_lazy_duals_have_the_sign_of_the_row_written_in_the_model(solver, written):
    """min x + y, x + y <= 8, the lazy row x + 2y >= 3 (or == 3): its dual is +1/2, as
    m.dual gives the same row written in the model."""
    def build() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x, m.y = pyo.Var(bounds=(0, 10)), pyo.Var(bounds=(0, 10))
        m.c = pyo.Constraint(expr=m.x + m.y <= 8)
        m.o = pyo.Objective(expr=m.x + m.y)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        return m

    def row(m: pyo.ConcreteModel):
        body = m.x + 2 * m.y
        return {"x + 2*y >= 3": body >= 3, "3 <= x + 2*y": 3 <= body,
                "x + 2*y == 3": body == 3}[written]

    m = build()
    lazy = LazyConstraints(lambda s: [row(m)] if abs(s[m.x] + 2 * s[m.y] - 3) > 1e-9 else [])
    result = solve(m, solver=solver, plugins=[lazy])
    full = build()
    full.h = pyo.Constraint(expr=row(full))
    truth = solve(full, solver=solver)
    assert result.objective == pytest.approx(truth.objective) == pytest.approx(1.5)
    assert result.extra["lazy_duals"]["lazy"] == pytest.approx([full.dual[full.h]])
    assert full.dual[full.h] == pytest.approx(0.5)


def test_a_row_read_again_follows_its_param():
    """A separator that hands back one row object whose side is a mutable Param it lowers:
    the row is judged at the Param's value now (it was cached at the first value: 10, past
    the row x0 + x1 <= 3 the separator returned)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Integers, bounds=(0, 5))
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    m.p = pyo.Param(mutable=True, initialize=100)
    row, calls = m.x[0] + m.x[1] <= m.p, []

    def separate(_s):
        calls.append(1)
        if len(calls) >= 2:
            m.p = 3
        return [row]

    result = solve(m, plugins=[LazyConstraints(separate)])
    assert len(calls) >= 2 and result.objective == pytest.approx(3)
    assert pyo.value(m.x[0] + m.x[1]) <= 3 + 1e-9


def test_a_row_read_again_follows_a_fixed_variable():
    m = pyo.ConcreteModel()
    m.x, m.z = pyo.Var(bounds=(0, 5)), pyo.Var(bounds=(0, 5))
    lazy = LazyConstraints(lambda _s: [])
    expr = m.x + m.z <= 4
    m.z.fix(1)
    first = lazy._read(expr)[0]
    m.z.fix(3)
    assert (first.upper, lazy._read(expr)[0].upper) == (3, 1)
    assert lazy._read(expr)[0] is lazy._read(expr)[0]  # unchanged data: read once
    m.z.fix(2)  # after the row's data was remembered
    assert lazy._read(expr)[0].upper == 2
    m.z.unfix()
    assert lazy._read(expr)[0].variables == [m.x, m.z]


def test_the_row_written_constant_first_reads_as_pyomo_reads_it():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    row = linear_row(3 <= 2 * m.x)
    assert (row.coefs, row.lower, row.upper) == ([2.0], 3.0, float("inf"))
    m.c = pyo.Constraint(expr=3 <= 2 * m.x)
    assert (m.c.lower, m.c.upper) == (3, None)


class _Stop(KeyboardInterrupt):
    """A KeyboardInterrupt raised by the user's own function."""


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_keyboard_interrupt_in_a_callback_comes_out_as_raised(solver):
    def stop(*_args):
        raise _Stop()

    with pytest.raises(_Stop):
        solve(_knapsack(), solver=solver, plugins=[OnSolution(stop)])
    if solver == "scip":
        with pytest.raises(_Stop):
            solve(_knapsack(), plugins=[LazyConstraints(stop)])


def test_highs_rounds_that_end_infeasible_leave_the_values_alone():
    """Round 1's point (x0 + x1 = 10) broke the lazy row and stayed in the variables."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Integers, bounds=(0, 5))
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] >= 4)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    lazy = LazyConstraints(lambda s: [m.x[0] + m.x[1] <= 3] if s[m.x[0]] + s[m.x[1]] > 3
                           else [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(m, solver="highs", plugins=[lazy])
    assert result.status is Status.INFEASIBLE and not result.has_solution
    assert [m.x[k].value for k in range(2)] == [None, None]
