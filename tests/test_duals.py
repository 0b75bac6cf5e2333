"""LP duals and reduced costs in m.dual / m.rc: checked here as an optimality certificate
(signs, c - A'y, strong duality) written independently of coplug.plugins.duals, against
scipy's linprog objective and against finite differences of the optimum."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import linprog

from coplug.plugins import Status, solve
from coplug.plugins.duals import _certified_reduced_costs, dual_request

SOLVERS = ("scip", "highs")


def _random_lp(seed: int) -> tuple[pyo.ConcreteModel, dict]:
    """A feasible LP with <=, >=, == and ranged rows, body constants and boxed variables
    around a random point; also returned as arrays for scipy."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 7)), int(rng.integers(1, 7))
    a = rng.integers(-4, 5, size=(m, n)).astype(float)
    a[~a.any(axis=1), 0] = 1.0  # every row has a variable
    x0 = rng.uniform(-2, 2, size=n)
    lb = np.where(rng.random(n) < 0.7, np.floor(x0) - rng.integers(0, 3, n), -np.inf)
    ub = np.where(rng.random(n) < 0.7, np.ceil(x0) + rng.integers(0, 3, n), np.inf)
    lb[rng.random(n) < 0.2] = -10.0  # keep the LP bounded: every variable in some box
    lb = np.where(np.isinf(lb) & np.isinf(ub), -10.0, lb)
    ub = np.where(np.isinf(ub), 10.0, ub)
    kinds = rng.choice(["le", "ge", "eq", "range"], size=m)
    const = rng.integers(-3, 4, size=m).astype(float)
    act = a @ x0
    lo = np.floor(act) - rng.integers(0, 2, m)
    hi = np.ceil(act) + rng.integers(0, 2, m)
    c = rng.integers(-5, 6, size=n).astype(float)
    maximize = bool(rng.random() < 0.5)
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(n), bounds=lambda _, j: (None if math.isinf(lb[j]) else lb[j],
                                                     None if math.isinf(ub[j]) else ub[j]))
    model.rows = pyo.ConstraintList()
    for i in range(m):
        body = sum(a[i, j] * model.x[j] for j in range(n) if a[i, j]) + const[i]
        side = {"le": (None, hi[i]), "ge": (lo[i], None), "eq": (act[i], act[i]),
                "range": (lo[i], hi[i])}[kinds[i]]
        shifted = tuple(None if s is None else s + const[i] for s in side)
        model.rows.add(pyo.inequality(shifted[0], body, shifted[1]) if kinds[i] == "range"
                       else (body == shifted[0] if kinds[i] == "eq"
                             else (body >= shifted[0] if kinds[i] == "ge"
                                   else body <= shifted[1])))
    sign = -1.0 if maximize else 1.0
    model.obj = pyo.Objective(expr=sum(c[j] * model.x[j] for j in range(n)) + 7.0,
                              sense=pyo.maximize if maximize else pyo.minimize)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    a_ub, b_ub, a_eq, b_eq = [], [], [], []
    for i in range(m):
        s = {"le": (None, hi[i]), "ge": (lo[i], None), "eq": (act[i], act[i]),
             "range": (lo[i], hi[i])}[kinds[i]]
        if kinds[i] == "eq":
            a_eq.append(a[i]), b_eq.append(act[i])
            continue
        if s[1] is not None:
            a_ub.append(a[i]), b_ub.append(s[1])
        if s[0] is not None:
            a_ub.append(-a[i]), b_ub.append(-s[0])
    ref = linprog(sign * c, A_ub=np.array(a_ub) if a_ub else None, b_ub=b_ub or None,
                  A_eq=np.array(a_eq) if a_eq else None, b_eq=b_eq or None,
                  bounds=list(zip(lb, ub, strict=True)), method="highs")
    return model, {"status": ref.status, "objective": sign * ref.fun + 7.0 if ref.success
                   else None}


def _check_certificate(model: pyo.ConcreteModel, objective: float) -> None:
    """m.dual and m.rc form a dual solution: Pyomo's signs, rc = c - A'y, and a dual
    objective equal to the primal one (strong duality)."""
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    sign = -1.0 if obj.sense == pyo.maximize else 1.0  # work in minimization form
    from pyomo.repn.standard_repn import generate_standard_repn

    repn = generate_standard_repn(obj.expr)
    cost = {id(v): c for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True)}
    variables = {id(v): v for v in model.component_data_objects(pyo.Var)}
    reduced = {vid: sign * cost.get(vid, 0.0) for vid in variables}
    dual_objective = sign * repn.constant
    tol = 1e-6
    for con in model.component_data_objects(pyo.Constraint, active=True):
        y = sign * model.dual[con]
        body = generate_standard_repn(con.body)
        for v, coef in zip(body.linear_vars, body.linear_coefs, strict=True):
            reduced[id(v)] -= y * coef
        if y > tol:
            assert con.has_lb(), f"{con.name}: dual {y} > 0 on a row without lower side"
            dual_objective += y * (pyo.value(con.lower) - body.constant)
        elif y < -tol:
            assert con.has_ub(), f"{con.name}: dual {y} < 0 on a row without upper side"
            dual_objective += y * (pyo.value(con.upper) - body.constant)
    for vid, var in variables.items():
        r = reduced[vid]
        assert sign * model.rc[var] == pytest.approx(r, abs=1e-6), var.name
        if r > tol:
            assert var.lb is not None, f"{var.name}: reduced cost {r} > 0 without lower bound"
            dual_objective += r * var.lb
        elif r < -tol:
            assert var.ub is not None, f"{var.name}: reduced cost {r} < 0 without upper bound"
            dual_objective += r * var.ub
    assert sign * dual_objective == pytest.approx(objective, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(40))
def test_random_lp_duals_certify_the_optimum(solver: str, seed: int) -> None:
    model, ref = _random_lp(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # loaded duals come without a warning
        result = solve(model, solver=solver) if ref["status"] == 0 else None
    if result is None:
        pytest.skip("scipy found this LP infeasible")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(ref["objective"], rel=1e-6, abs=1e-6)
    assert result.extra["duals"]["loaded"]
    assert len(model.dual) == len(model.rows) and len(model.rc) == len(model.x)
    _check_certificate(model, ref["objective"])


def _production_lp(capacity: float, sense: str) -> pyo.ConcreteModel:
    """A nondegenerate two-product LP whose optimum moves linearly with `capacity`."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(["a", "b"], within=pyo.NonNegativeReals)
    m.labour = pyo.Constraint(expr=2 * m.x["a"] + m.x["b"] <= capacity)
    m.wood = pyo.Constraint(expr=m.x["a"] + 3 * m.x["b"] <= 15)
    m.demand = pyo.Constraint(expr=m.x["a"] >= 1)
    profit = 3 * m.x["a"] + 4 * m.x["b"]
    m.obj = pyo.Objective(expr=profit if sense == "max" else -profit,
                          sense=pyo.maximize if sense == "max" else pyo.minimize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("sense", ["max", "min"])
def test_dual_is_the_derivative_of_the_optimum(solver: str, sense: str) -> None:
    m = _production_lp(10.0, sense)
    base = solve(m, solver=solver).objective
    dual = m.dual[m.labour]
    bumped = solve(_production_lp(10.0 + 1e-3, sense), solver=solver).objective
    assert dual == pytest.approx((bumped - base) / 1e-3, rel=1e-6)
    assert abs(dual) > 0.1  # the labour row binds


@pytest.mark.parametrize("solver", SOLVERS)
def test_mip_leaves_suffixes_empty_with_a_reason(solver: str) -> None:
    m = _production_lp(10.0, "max")
    solve(m, solver=solver)
    assert len(m.dual) == 3
    m.x["a"].domain = pyo.NonNegativeIntegers
    with pytest.warns(UserWarning, match=r"dual left empty: variable 'x\[a\]' is integer"):
        result = solve(m, solver=solver)
    assert len(m.dual) == 0  # the LP's duals of the earlier solve are gone
    assert result.extra["duals"] == {"loaded": False,
                                     "reason": "variable 'x[a]' is integer (a MIP has no "
                                               "LP duals; with solver='scip' or 'highs', "
                                               "mip_duals='fixed' gives those of its fixed "
                                               "LP)"}


@pytest.mark.parametrize("solver", SOLVERS)
def test_infeasible_lp_leaves_suffixes_empty(solver: str) -> None:
    m = _production_lp(10.0, "max")
    m.demand.set_value(m.x["a"] >= 100)
    with pytest.warns(UserWarning, match="ended infeasible, not optimal"):
        result = solve(m, solver=solver)
    assert result.status is Status.INFEASIBLE and len(m.dual) == 0


def test_nonlinear_model_leaves_suffixes_empty() -> None:
    m = _production_lp(10.0, "max")
    m.curve = pyo.Constraint(expr=m.x["a"] ** 2 <= 30)
    with pytest.warns(UserWarning, match="constraint 'curve' is nonlinear"):
        solve(m, solver="scip")
    assert len(m.dual) == 0


def test_wrong_duals_fail_the_certificate() -> None:
    m = _production_lp(10.0, "max")
    solve(m, solver="highs")
    request = dual_request(m)
    good = [0.0] * 3
    for k, (con, _, _, _) in enumerate(request.lp.rows):
        good[k] = {"labour": 1.0, "wood": 1.0, "demand": 0.0}[con.name]
    request.row_duals = good
    assert _certified_reduced_costs(request) is not None  # (1, 1, 0): the true duals
    for k, bad in ((0, 1.5), (1, -1.0), (2, -0.5)):  # wrong value, wrong sign, slack row
        request.row_duals = list(good)
        request.row_duals[k] = bad
        request.reason = ""
        assert _certified_reduced_costs(request) is None, (k, bad)
        assert request.reason
    request.row_duals = [*good[:2], 0.5]  # a wrong sign on the slack row: dropped, certified
    assert _certified_reduced_costs(request) is not None and request.row_duals[2] == 0.0


def test_other_import_suffixes_still_warn() -> None:
    m = _production_lp(10.0, "max")
    m.slack = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with pytest.warns(UserWarning, match="fills no import Suffix slack"):
        solve(m, solver="highs")
    assert len(m.dual) == 3 and len(m.slack) == 0


def test_lap_names_the_suffixes_it_leaves_empty() -> None:
    from coplug.formulations.assignment import assignment_model

    m = assignment_model(np.array([[4.0, 1.0], [2.0, 3.0]]))
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.slack = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with pytest.warns(UserWarning) as record:
        assert solve(m, solver="lap").objective == pytest.approx(3.0)
    messages = [str(w.message) for w in record]
    assert any("fills no import Suffix slack (only dual and rc" in m_ for m_ in messages)
    assert any("a MIP has no LP duals" in m_ for m_ in messages)  # binary x: a MIP
    assert len(m.slack) == 0 and len(m.dual) == 0


@pytest.mark.parametrize("solver", SOLVERS)
def test_param_and_fixed_coefficients_keep_the_lp_linear(solver: str) -> None:
    """`p * x` with a mutable Param and `price * q` with `price` fixed: SCIP built both as
    bilinear rows (fixed SCIP variables for p and price) and could give no duals for them."""
    m = _production_lp(10.0, "max")
    m.p = pyo.Param(initialize=2.0, mutable=True)
    m.price = pyo.Var(initialize=1.0)
    m.price.fix()
    m.labour.set_value(m.p * m.x["a"] + m.price * m.x["b"] <= 10)
    first = solve(m, solver=solver)
    assert first.extra["duals"]["loaded"] and m.dual[m.labour] == pytest.approx(1.0)
    m.p.set_value(4.0)  # the next solve takes the new value
    m.price.fix(0.5)
    again = solve(m, solver=solver)
    ref = _production_lp(10.0, "max")
    ref.labour.set_value(4 * ref.x["a"] + 0.5 * ref.x["b"] <= 10)
    assert again.objective == pytest.approx(solve(ref, solver="highs").objective, rel=1e-9)
    assert again.extra["duals"]["loaded"]
    assert m.dual[m.labour] == pytest.approx(ref.dual[ref.labour], rel=1e-6)


def _portfolio(target: float) -> pyo.ConcreteModel:
    """Minimum variance for a target return: a convex QP whose return row binds."""
    cov = np.array([[0.10, 0.02, 0.01], [0.02, 0.08, 0.03], [0.01, 0.03, 0.12]])
    mu = [0.05, 0.09, 0.12]
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(3), within=pyo.NonNegativeReals)
    m.budget = pyo.Constraint(expr=sum(m.w[i] for i in range(3)) == 1)
    m.ret = pyo.Constraint(expr=sum(mu[i] * m.w[i] for i in range(3)) >= target)
    m.risk = pyo.Objective(expr=sum(cov[i, j] * m.w[i] * m.w[j]
                                    for i in range(3) for j in range(3)))
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def test_highs_gives_a_convex_qp_its_duals() -> None:
    m = _portfolio(0.10)
    base = solve(m, solver="highs").objective
    assert m.dual[m.ret] > 0  # a higher target costs variance
    step = 1e-5
    bumped = solve(_portfolio(0.10 + step), solver="highs").objective
    assert m.dual[m.ret] == pytest.approx((bumped - base) / step, rel=1e-3)
    cov = np.array([[0.10, 0.02, 0.01], [0.02, 0.08, 0.03], [0.01, 0.03, 0.12]])
    w = np.array([m.w[i].value for i in range(3)])
    gradient = 2 * cov @ w
    mu = np.array([0.05, 0.09, 0.12])
    rc = gradient - m.dual[m.budget] - m.dual[m.ret] * mu  # stationarity, in the test's terms
    for i in range(3):
        assert m.rc[m.w[i]] == pytest.approx(rc[i], abs=1e-7)
        assert rc[i] >= -1e-7 and (w[i] <= 1e-7 or abs(rc[i]) <= 1e-7)


def test_scip_names_a_quadratic_objective_as_the_reason() -> None:
    with pytest.warns(UserWarning, match="the objective is nonlinear"):
        solve(_portfolio(0.10), solver="scip")


def test_an_lp_scip_cannot_solve_without_presolve_is_solved_with_it() -> None:
    """Wide coefficients: SCIP's LP solver failed ('error in LP solver') on this LP once
    presolving was off for the duals; the solve falls back and says why m.dual is empty."""
    from coplug.plugins.duals import NO_PRESOLVE_FAILED

    def build() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 1e4))
        m.y = pyo.Var(bounds=(0, 1e9))
        m.a = pyo.Constraint(expr=33375.86300996653 * m.y <= 12534673305798.383)
        m.b = pyo.Constraint(expr=-0.0005526810449370317 * m.x - 7468.21077671996 * m.y
                             >= -2483398453844.3867)
        m.o = pyo.Objective(expr=-247.43065784987476 * m.x + 0.07772740630473099 * m.y,
                            sense=pyo.maximize)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        return m

    reference = solve(build(), solver="highs").objective
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(build(), solver="scip")
    assert result.objective == pytest.approx(reference, rel=1e-9)
    assert result.extra["duals"]["loaded"] or result.extra["duals"]["reason"] == NO_PRESOLVE_FAILED


def _wide_lp(duals: bool) -> pyo.ConcreteModel:
    """Coefficients from 5e-7 to 5e6: HiGHS called x = 2008 optimal (-222.88) with a
    wrong-signed 4e-9 dual on the row whose side is 1e10; the optimum is -161.91."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1e4))
    m.y = pyo.Var(bounds=(0, 100))
    m.a = pyo.Constraint(expr=-0.01749664250147233 * m.x + 275.7623853443179 * m.y
                         >= 18994.892466777288)
    m.b = pyo.Constraint(expr=-330.2533687238532 * m.x - 79924.30258355543 * m.y
                         <= -6362059.957825674)
    m.c = pyo.Constraint(expr=5043660.79075755 * m.x + 4.7116043929792467e-07 * m.y
                         >= 10127062030.834934)
    m.o = pyo.Objective(expr=0.006885784986761265 * m.x - 3.3196847291689875 * m.y,
                        sense=pyo.maximize)
    if duals:
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def _wide_lp_optimum() -> float:
    """The exact optimum: the best vertex of the box and the three rows (Fractions)."""
    from fractions import Fraction as F
    from itertools import combinations

    rows = [((F(-0.01749664250147233), F(275.7623853443179)), F(18994.892466777288), 1),
            ((F(-330.2533687238532), F(-79924.30258355543)), F(-6362059.957825674), -1),
            ((F(5043660.79075755), F(4.7116043929792467e-07)), F(10127062030.834934), 1)]
    lines = rows + [((F(1), F(0)), F(0), 1), ((F(1), F(0)), F(10000), -1),
                    ((F(0), F(1)), F(0), 1), ((F(0), F(1)), F(100), -1)]
    best = None
    for (a, r1, _), (b, r2, _) in combinations(lines, 2):
        det = a[0] * b[1] - a[1] * b[0]
        if det == 0:
            continue
        x, y = (r1 * b[1] - a[1] * r2) / det, (a[0] * r2 - r1 * b[0]) / det
        if all((c[0] * x + c[1] * y - rhs) * sense >= 0 for c, rhs, sense in lines):
            value = F(0.006885784986761265) * x - F(3.3196847291689875) * y
            best = value if best is None else max(best, value)
    return float(best)


@pytest.mark.parametrize("duals", [False, True])
def test_highs_lp_answers_are_certified_by_their_duals(duals: bool, tmp_path) -> None:
    from coplug.plugins.files import solve_file

    truth = _wide_lp_optimum()
    result = solve(m := _wide_lp(duals), solver="highs")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(truth, rel=1e-9)
    assert "lp_retry" in result.extra  # HiGHS's first answer did not certify
    if duals:
        assert result.extra["duals"]["loaded"] and m.dual[m.a] < 0
    _wide_lp(False).write(str(tmp_path / "wide.lp"), io_options={"symbolic_solver_labels": True})
    assert solve_file(tmp_path / "wide.lp", solver="highs").objective == pytest.approx(truth,
                                                                                   rel=1e-9)


def test_an_uncertified_lp_answer_is_feasible_not_optimal() -> None:
    with pytest.warns(UserWarning, match="duals leave a duality gap of"):
        result = solve(_wide_lp(False), solver="highs", dual_feasibility_tolerance=1e-7)
    assert result.status is Status.FEASIBLE and result.bound is None
    assert result.objective < _wide_lp_optimum()


def test_scip_duals_when_its_final_lp_is_stale() -> None:
    """A degenerate LP SCIP closes at the root with its LP no longer solved afterwards:
    getDualSolVal gave 1e99, so the duals come from one more solve by its LP solver alone."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], bounds=(0, 10))
    rows = [(-4.0, -3.0), (-4.0, 0.0), (-4.0, 4.0), (-4.0, 5.0)]
    m.rows = pyo.Constraint(range(4), rule=lambda m, i: rows[i][0] * m.x[0] + rows[i][1] * m.x[1]
                            >= 0)
    m.obj = pyo.Objective(expr=-m.x[0] + 3 * m.x[1], sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(0.0, abs=1e-9)
    assert result.extra["duals"]["loaded"]
    _check_certificate(m, 0.0)
