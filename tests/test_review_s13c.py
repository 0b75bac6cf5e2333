"""A demanding user's review of `solve(m, mip_duals="fixed")`: each case against an independent
truth (Pyomo's own HiGHS on a copy with the integers fixed and continuous, scipy's linprog on
the fixed LP, finite differences of its optimum) and the warnings exactly as a user sees them."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.solvers.highs import Highs
from scipy.optimize import linprog

from coplug.plugins import Status, solve

SOLVERS = ["scip", "highs"]


def declare(m: pyo.ConcreteModel, *names: str) -> pyo.ConcreteModel:
    """Declare the import Suffixes `names` (default dual and rc) on `m`."""
    for name in names or ("dual", "rc"):
        m.add_component(name, pyo.Suffix(direction=pyo.Suffix.IMPORT))
    return m


def ranged_max(rhs: float = 3.5) -> pyo.ConcreteModel:
    """Maximize over an equality and a ranged row with a general integer that ends negative."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(-5, 5))
    m.eq = pyo.Constraint(expr=m.x + 2 * m.y == rhs)
    m.rng = pyo.Constraint(expr=pyo.inequality(-4, m.x - m.y, 7.3))
    m.o = pyo.Objective(expr=3 * m.x + m.y, sense=pyo.maximize)
    return declare(m)


def bilinear(rhs: float = 5.0) -> pyo.ConcreteModel:
    """A MINLP whose only nonlinear row, x * y <= rhs, is linear (and binding) once the integer
    y is fixed: its fixed model is an LP."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(1, 5))
    m.prod = pyo.Constraint(expr=m.x * m.y <= rhs)
    m.cap = pyo.Constraint(expr=m.x + m.y <= 6.5)
    m.o = pyo.Objective(expr=3 * m.x + m.y, sense=pyo.maximize)
    return declare(m)


def fixed_copy_duals(m: pyo.ConcreteModel) -> dict[str, float]:
    """Pyomo's own HiGHS on a copy with the integers continuous and fixed at the loaded values."""
    copy = m.clone()
    for var in copy.component_data_objects(pyo.Var):
        if var.is_integer():
            value = round(var.value)
            var.domain = pyo.Reals
            var.fix(value)
    Highs().solve(copy)
    return {con.name: copy.dual[con] for con in copy.component_data_objects(pyo.Constraint)}


def solved(build: Callable[[], pyo.ConcreteModel], solver: str
           ) -> tuple[pyo.ConcreteModel, object, list[warnings.WarningMessage]]:
    """The model, the result and every warning of one fixed-duals solve."""
    m = build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = solve(m, solver=solver, mip_duals="fixed")
    return m, result, caught


def messages(caught: list[warnings.WarningMessage]) -> list[str]:
    """The warnings' texts."""
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("solver", SOLVERS)
def test_maximize_equality_ranged_negative_integer_match_linprog_and_differences(
        solver: str) -> None:
    """The fixed LP (y = -1): max 3x s.t. x = 3.5 - 2y, -4 <= x - y <= 7.3; linprog's
    marginals and a finite difference of the optimum in the equality's side agree."""
    m, result, caught = solved(ranged_max, solver)
    assert result.status is Status.OPTIMAL and result.extra["duals"]["loaded"], messages(caught)
    assert m.y.value == -1 and not m.y.fixed and not caught
    lp = linprog([-3.0], A_eq=[[1.0]], b_eq=[3.5 + 2], A_ub=[[1.0], [-1.0]],
                 b_ub=[7.3 - 1, 4 - 1], bounds=[(0, 10)])
    assert m.dual[m.eq] == pytest.approx(-lp.eqlin.marginals[0], abs=1e-7)  # max: sign flips
    h = 1e-3
    ahead = solve(ranged_max(3.5 + h), solver=solver, mip_duals="fixed")
    assert m.dual[m.eq] == pytest.approx((ahead.objective - result.objective) / h, abs=1e-6)
    assert m.dual[m.rng] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("solver", SOLVERS)
def test_user_fixed_and_objective_only_integers(solver: str) -> None:
    """An integer the user fixed stays fixed at its value; one only in the objective is fixed
    for the LP and put back unfixed; the duals are those of Pyomo's HiGHS on the fixed copy."""
    def build() -> pyo.ConcreteModel:
        m = ranged_max()
        m.z = pyo.Var(domain=pyo.Integers, bounds=(0, 4))
        m.z.fix(2)
        m.w = pyo.Var(domain=pyo.Binary)
        m.zrow = pyo.Constraint(expr=m.x + m.z <= 9)
        m.o.expr = m.o.expr - 2 * m.w
        return m

    m, result, caught = solved(build, solver)
    assert result.extra["duals"]["loaded"] and not caught
    assert m.z.fixed and m.z.value == 2 and not m.w.fixed and m.w.value == 0
    reference = fixed_copy_duals(m)
    assert {c.name: pytest.approx(d, abs=1e-7) for c, d in m.dual.items()} == reference


@pytest.mark.parametrize("solver", SOLVERS)
def test_only_integer_variables(solver: str) -> None:
    """A model of integers only: the fixed LP has no free variable, its rows' duals are 0."""
    def build() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 9))
        m.z = pyo.Var(domain=pyo.Binary)
        m.c = pyo.Constraint(expr=m.y + 3 * m.z <= 7.5)
        m.o = pyo.Objective(expr=m.y + 2 * m.z, sense=pyo.maximize)
        return declare(m)

    m, result, caught = solved(build, solver)
    assert result.objective == 7 and result.extra["duals"]["loaded"] and not caught
    assert m.dual[m.c] == 0 and len(m.rc) == 0 and not m.y.fixed


def test_minlp_whose_fixed_model_is_linear_loads_duals_without_a_warning() -> None:
    """x * y <= 5 with y fixed at 1 is x <= 5, binding: its dual is 3 (Pyomo's HiGHS on the
    fixed copy, and a finite difference). The MIP solve's own 'constraint is nonlinear' said
    'dual, rc left empty' about duals that the fixed LP then loaded."""
    m, result, caught = solved(bilinear, "scip")
    assert result.extra["duals"]["loaded"] and (m.x.value, m.y.value) == (5, 1)
    reference = fixed_copy_duals(m)
    assert m.dual[m.prod] == pytest.approx(reference["prod"], abs=1e-7)
    h = 1e-3
    ahead = solve(bilinear(5 + h), solver="scip", mip_duals="fixed")
    assert m.dual[m.prod] == pytest.approx((ahead.objective - result.objective) / h, abs=1e-6)
    assert messages(caught) == []


def test_minlp_whose_fixed_model_stays_nonlinear_warns_once_about_the_fixed_lp() -> None:
    """x**2 <= 40 keeps the fixed model nonlinear: one warning, naming the fixed LP, from the
    user's line (the same text came twice, the second from inside coplug)."""
    def build() -> pyo.ConcreteModel:
        m = ranged_max()
        m.sq = pyo.Constraint(expr=m.x ** 2 <= 40)
        return m

    m, result, caught = solved(build, "scip")
    assert result.status is Status.OPTIMAL and len(m.dual) == 0
    assert messages(caught) == ["dual, rc left empty: the fixed LP: constraint 'sq' is nonlinear"]
    assert caught[0].filename == __file__
    assert result.extra["duals"]["reason"] == "the fixed LP: constraint 'sq' is nonlinear"


def test_fixed_lp_infeasible_after_rounding_is_named_as_the_fixed_lp() -> None:
    """y == 2.0000004 is met by the integer y within HiGHS's tolerance; fixed at 2 the LP is
    infeasible (so it is for Pyomo's HiGHS). The warning said 'the solve ended infeasible' on a
    solve that returns optimal, from a line inside coplug."""
    def build() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 10))
        m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 5))
        m.pin = pyo.Constraint(expr=m.y == 2.0000004)
        m.c = pyo.Constraint(expr=m.x + m.y >= 3)
        m.o = pyo.Objective(expr=m.x + m.y)
        return declare(m)

    m, result, caught = solved(build, "highs")
    assert result.status is Status.OPTIMAL and m.y.value == 2 and len(m.dual) == 0
    reason = "the fixed LP: the solve ended infeasible, not optimal"
    assert messages(caught) == [f"dual, rc left empty: {reason}"]
    assert caught[0].filename == __file__ and result.extra["duals"]["reason"] == reason
    assert result.extra["fixed_lp"]["status"] == "infeasible"


@pytest.mark.parametrize("solver", SOLVERS)
def test_refusal_names_only_the_declared_suffix(solver: str) -> None:
    """With only m.rc declared, an infeasible MIP's warning names rc (it said 'dual, rc')."""
    def build() -> pyo.ConcreteModel:
        m = ranged_max()
        m.del_component(m.dual)
        m.cut = pyo.Constraint(expr=m.y >= 4)
        return m

    m, result, caught = solved(build, solver)
    assert result.status is Status.INFEASIBLE and len(m.rc) == 0
    assert messages(caught) == ["rc left empty: the MIP solve ended infeasible, not optimal"]


def test_model_warnings_come_once() -> None:
    """An import Suffix solve() leaves empty is named once, as without mip_duals."""
    def build() -> pyo.ConcreteModel:
        m = ranged_max()
        m.slack = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        return m

    _, result, caught = solved(build, "highs")
    assert result.extra["duals"]["loaded"]
    assert messages(caught) == ["solve() fills no import Suffix slack (only dual and rc on the "
                                "solved block itself, for LPs)"]


def test_the_mip_point_is_put_back_over_another_lp_optimum() -> None:
    """Where the fixed LP's solver loads another optimal point, the MIP's values come back."""
    from coplug.plugins.mip_duals import load_fixed_duals
    from coplug.plugins.results import Result

    m = ranged_max()
    mip = solve(m, solver="highs", mip_duals="fixed")

    def elsewhere() -> Result:  # the LP's answer, its x moved off the MIP's value
        lp = solve(m, solver="highs")
        m.x.set_value(0.25)
        return lp

    load_fixed_duals(m, mip, elsewhere)
    assert (m.x.value, m.y.value) == (5.5, -1) and not m.y.fixed and mip.extra["duals"]["loaded"]
