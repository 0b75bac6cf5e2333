"""The fast read of linear terms: it agrees with Pyomo's standard representation on every
expression, takes Pyomo's own lists only when they are final, and the array-based LAP
detection built on it still matches HiGHS on messy assignment models."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.formulations.assignment import assignment_model
from coplug.plugins import Status, solve
from coplug.plugins.linear_terms import final_linear_terms, linear_terms


def _as_dict(variables, coefs) -> dict[int, float]:
    """Coefficient per variable identity, zeros dropped."""
    out: dict[int, float] = {}
    for var, coef in zip(variables, coefs, strict=True):
        out[id(var)] = out.get(id(var), 0.0) + float(coef)
    return {k: v for k, v in out.items() if v != 0}


def _model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6))
    m.p = pyo.Param(initialize=2.5, mutable=True)
    m.x[5].fix(4.0)
    return m


def _expressions(m: pyo.ConcreteModel) -> dict[str, object]:
    return {
        "plain sum": sum(m.x[i] for i in range(4)),
        "weighted with constant": 3 + sum((i - 1.5) * m.x[i] for i in range(4)),
        "fixed variable": sum(m.x[i] for i in range(3)) + 2 * m.x[5],
        "mutable coefficient": m.p * m.x[0] + m.x[1],
        "repeated variable": m.x[0] + m.x[1] + 2 * m.x[0],
        "parameter constant": m.x[0] + m.x[1] + m.p,
        "cancelling terms": m.x[0] + m.x[1] - m.x[0],
        "one variable": m.x[2],
        "nested sum": 2 * (m.x[0] + m.x[1]) - m.x[3],
    }


@pytest.mark.parametrize("name", list(_expressions(_model())))
def test_linear_terms_match_the_standard_representation(name: str) -> None:
    m = _model()
    expr = _expressions(m)[name]
    terms = linear_terms(expr)
    repn = generate_standard_repn(expr, compute_values=True, quadratic=False)
    assert terms is not None
    assert terms.constant == pytest.approx(float(repn.constant))
    assert _as_dict(terms.variables, terms.coefs) == pytest.approx(
        _as_dict(repn.linear_vars, repn.linear_coefs))
    assert len({id(v) for v in terms.variables}) == len(terms.variables)
    assert not any(v.fixed for v in terms.variables)


@pytest.mark.parametrize(("name", "fast"), [
    ("plain sum", True), ("weighted with constant", True), ("fixed variable", False),
    ("mutable coefficient", False), ("repeated variable", False),
    ("parameter constant", False),
])
def test_pyomo_lists_are_taken_only_when_final(name: str, fast: bool) -> None:
    m = _model()
    expr = _expressions(m)[name]
    assert (final_linear_terms(expr) is not None) is fast


def test_nonlinear_expressions_have_no_linear_terms() -> None:
    m = _model()
    assert linear_terms(m.x[0] * m.x[1] + m.x[2]) is None
    assert linear_terms(pyo.exp(m.x[0])) is None


def _messy_assignment(n: int, seed: int, maximize: bool) -> pyo.ConcreteModel:
    """A sparse n x n assignment with a second variable on some pairs, variables bounded at
    0, rows written with mutable coefficients or fixed variables, and an objective constant."""
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(n) for j in range(n)
             if i == j or j == (i + 1) % n or rng.random() < 0.4]
    extra = [pairs[k] for k in rng.choice(len(pairs), size=n // 2, replace=False)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(pairs)), domain=pyo.Binary)
    m.y = pyo.Var(range(len(extra)), domain=pyo.Binary)
    m.z = pyo.Var(domain=pyo.Binary)
    m.z.fix(0)
    m.one = pyo.Param(initialize=1.0, mutable=True)
    for k in rng.choice(len(pairs), size=n // 3, replace=False):
        if pairs[k][0] != pairs[k][1]:
            m.x[int(k)].setub(0)
    terms: dict[tuple[str, int], list] = {}
    for k, (i, j) in enumerate(pairs):
        terms.setdefault(("row", i), []).append(m.x[k])
        terms.setdefault(("col", j), []).append(m.x[k])
    for k, (i, j) in enumerate(extra):
        terms.setdefault(("row", i), []).append(m.y[k])
        terms.setdefault(("col", j), []).append(m.y[k])

    def rule(_m, side: str, i: int):
        body = sum(terms[side, i])
        if i % 3 == 1:
            return m.one * body == m.one  # mutable coefficients: read by the standard repn
        if i % 3 == 2:
            return body + m.z == 1  # a fixed variable in the row
        return body == 1

    m.con = pyo.Constraint([("row", i) for i in range(n)] + [("col", j) for j in range(n)],
                           rule=rule)
    cost = rng.integers(-20, 20, size=len(pairs) + len(extra)).astype(float)
    m.obj = pyo.Objective(
        expr=sum(cost[k] * m.x[k] for k in range(len(pairs)))
        + sum(cost[len(pairs) + k] * m.y[k] for k in range(len(extra))) + 3.5,
        sense=pyo.maximize if maximize else pyo.minimize)
    return m


@pytest.mark.parametrize(("seed", "maximize"), [(0, False), (1, True), (2, False), (3, True)])
def test_messy_assignment_models_match_highs(seed: bool, maximize: bool) -> None:
    m = _messy_assignment(14, seed, maximize)
    lap = solve(m, solver="lap")
    highs = solve(_messy_assignment(14, seed, maximize), solver="highs")
    assert lap.status is highs.status
    if highs.status is Status.OPTIMAL:
        assert lap.objective == pytest.approx(highs.objective)
        assert pyo.value(m.obj) == pytest.approx(lap.objective)
        for con in m.component_data_objects(pyo.Constraint, active=True):
            assert pyo.value(con.body) == pytest.approx(pyo.value(con.upper))
        assert all(m.x[k].value == 0 for k in m.x if m.x[k].ub == 0)


def test_dense_model_reads_every_pair() -> None:
    cost = np.random.default_rng(4).random((30, 30))
    model = assignment_model(cost)
    lap = solve(model, solver="lap")
    assert lap.extra["pairs"] == 900
    assert lap.objective == pytest.approx(solve(model, solver="highs").objective)


@pytest.mark.parametrize("zero", [0.0, np.float64(0.0)])
def test_zero_coefficients_are_dropped_like_the_standard_repn(zero) -> None:
    """Pyomo keeps a numpy or Param 0.0 * x in its lists; those terms are not terms."""
    m = _model()
    m.q = pyo.Param(initialize=0.0)
    for expr in (np.float64(zero) * m.x[0] + m.x[1], m.q * m.x[0] + 2 * m.x[1]):
        terms = linear_terms(expr)
        assert [v.name for v in terms.variables] == ["x[1]"]


def test_assignment_rows_written_with_a_zero_one_mask_go_through_lap() -> None:
    cost = np.random.default_rng(0).integers(1, 9, (4, 4)).astype(float)
    mask = np.ones((4, 4))
    mask[0, 1] = mask[2, 3] = 0.0
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), range(4), domain=pyo.Binary)
    m.obj = pyo.Objective(expr=sum(np.where(mask, cost, 0.0)[i, j] * m.x[i, j]
                                   for i in range(4) for j in range(4)))
    m.r = pyo.Constraint(range(4), rule=lambda m, i: sum(mask[i, j] * m.x[i, j]
                                                         for j in range(4)) == 1)
    m.c = pyo.Constraint(range(4), rule=lambda m, j: sum(mask[i, j] * m.x[i, j]
                                                         for i in range(4)) == 1)
    lap = solve(m, solver="lap")
    assert lap.status is Status.OPTIMAL
    assert lap.objective == pytest.approx(solve(m, solver="highs").objective)
