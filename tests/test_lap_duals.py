"""`m.dual` / `m.rc` from solve(..., solver="lap"): the JV duals mapped onto the model's
constraints, checked here by LP duality computed from the model's own data (dual
feasibility of every reduced cost, complementary slackness, equal objectives)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import solve

TOL = 1e-7


def assignment_lp(n: int, m: int, seed: int, maximize: bool, rows: str, cols: str,
                  coef: float = 1.0, density: float = 1.0) -> pyo.ConcreteModel:
    """x[i,j] in [0, 1] over the allowed pairs, coef * sum(x) (rows/cols sense) coef."""
    rng = np.random.default_rng(seed)
    low = -10 if "<=" in (rows + cols) else 0  # a matching only pays with some c < 0 (c > 0)
    cost = rng.uniform(low, 10, (n, m)) * (-1 if maximize and low else 1)
    allowed = rng.random((n, m)) < density
    allowed[np.arange(min(n, m)), np.arange(min(n, m))] = True  # keeps it feasible
    pairs = [(i, j) for i in range(n) for j in range(m) if allowed[i, j]]
    model = pyo.ConcreteModel()
    model.x = pyo.Var(pairs, bounds=(0, 1))
    sense = {"==": lambda e: e == coef, "<=": lambda e: e <= coef, ">=": lambda e: e >= coef}
    model.row = pyo.Constraint(range(n), rule=lambda mm, i: sense[rows](
        coef * sum(mm.x[i, j] for j in range(m) if allowed[i, j])))
    model.col = pyo.Constraint(range(m), rule=lambda mm, j: sense[cols](
        coef * sum(mm.x[i, j] for i in range(n) if allowed[i, j])))
    model.o = pyo.Objective(expr=sum(float(cost[p]) * model.x[p] for p in pairs),
                            sense=pyo.maximize if maximize else pyo.minimize)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return model


def check_lp_duality(model: pyo.ConcreteModel) -> None:
    """The loaded duals and reduced costs certify the loaded x (minimization form)."""
    sign = -1.0 if model.o.sense == pyo.maximize else 1.0
    dual_objective = 0.0
    for con in model.component_data_objects(pyo.Constraint, active=True):
        y, side = sign * model.dual[con], pyo.value(con.upper if con.upper is not None
                                                    else con.lower)
        if con.upper is not None and con.lower is None:
            assert y <= TOL
        if con.lower is not None and con.upper is None:
            assert y >= -TOL
        if abs(pyo.value(con.body) - side) > TOL:
            assert abs(y) <= TOL  # slack rows have no price
        dual_objective += y * (side - _constant(con.body))  # fixed variables are constants
    for (i, j), var in model.x.items():
        if var.fixed:
            continue
        used = sum(_coefficient(con.body, var) * sign * model.dual[con]
                   for con in (model.row[i], model.col[j]))
        rc = sign * _coefficient(model.o.expr, var) - used
        assert rc == pytest.approx(sign * model.rc[var], abs=1e-6)
        if var.value < 1 - TOL:
            assert rc >= -1e-6  # at its lower bound: no negative reduced cost
        if var.value > TOL:
            assert rc <= 1e-6  # at its upper bound: no positive one
        dual_objective += min(rc, 0.0) * 1.0  # the price of the upper bound x <= 1
    dual_objective += sign * _constant(model.o.expr)
    assert dual_objective == pytest.approx(sign * pyo.value(model.o.expr), abs=1e-6)


def _constant(expr) -> float:
    """The constant part of a linear expression (fixed variables included)."""
    from pyomo.repn import generate_standard_repn

    return float(generate_standard_repn(expr).constant)


def _coefficient(expr, var) -> float:
    """The coefficient of `var` in a linear expression."""
    from pyomo.repn import generate_standard_repn

    repn = generate_standard_repn(expr)
    return sum(float(c) for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True)
               if v is var)


CASES = [(6, 6, "==", "=="), (4, 7, "==", "<="), (7, 4, "<=", "=="), (6, 6, ">=", "<="),
         (5, 5, "<=", "<="), (4, 6, "<=", "<=")]


@pytest.mark.parametrize(("n", "m", "rows", "cols"), CASES)
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_jv_duals_certify_the_assignment(n: int, m: int, rows: str, cols: str, maximize: bool,
                                         seed: int) -> None:
    model = assignment_lp(n, m, seed, maximize, rows, cols, density=1.0 if seed else 0.6)
    result = solve(model, solver="lap")
    assert result.extra["duals"]["loaded"] and "duals_from" not in result.extra  # JV's own
    check_lp_duality(model)


def test_scaled_rows_divide_the_dual() -> None:
    plain, scaled = (assignment_lp(5, 5, 1, False, "==", "==", coef=c) for c in (1.0, 2.0))
    solve(plain, solver="lap")
    solve(scaled, solver="lap")
    check_lp_duality(scaled)
    lhs = [2 * scaled.dual[scaled.row[i]] + 2 * scaled.dual[scaled.col[i]] for i in range(5)]
    rhs = [plain.dual[plain.row[i]] + plain.dual[plain.col[i]] for i in range(5)]
    assert lhs == pytest.approx(rhs)


def test_fixed_variables_fall_back_to_a_certified_lp_solve() -> None:
    model = assignment_lp(5, 5, 2, False, "==", "==")
    model.x[0, 0].fix(1.0)  # row 0 and column 0 are filled: their other x are forced to 0
    result = solve(model, solver="lap")
    assert result.extra["duals"]["loaded"]
    check_lp_duality(model)


def test_binary_assignment_gets_no_duals_like_any_mip() -> None:
    model = assignment_lp(4, 4, 0, False, "==", "==")
    for var in model.x.values():
        var.domain = pyo.Binary
    with pytest.warns(UserWarning, match="integer"):
        solve(model, solver="lap")
    assert len(model.dual) == 0 and len(model.rc) == 0


def test_a_refused_model_keeps_no_stale_duals() -> None:
    from coplug.plugins import UnsupportedModelError

    model = assignment_lp(4, 4, 0, False, "==", "==")
    solve(model, solver="highs")
    assert len(model.dual) == 8  # duals from the HiGHS solve
    model.extra = pyo.Constraint(expr=model.x[0, 0] + 2 * model.x[1, 1] <= 1)
    with pytest.raises(UnsupportedModelError):
        solve(model, solver="lap")
    assert len(model.dual) == 0 and len(model.rc) == 0
