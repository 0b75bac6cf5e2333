"""Duals of models solved with lazy constraints (`coplug.plugins.lazy_duals`), checked as an
optimality certificate of the model with *every* lazy row: stationarity, signs and
complementary slackness, with the rows never added priced at zero."""

from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.repn.standard_repn import generate_standard_repn

from coplug.plugins import LazyConstraints, Status, solve
from coplug.plugins.lazy_duals import load_lazy_duals
from coplug.plugins.results import Result

TOL = 1e-6
SOLVERS = ("scip", "highs")


def _random_lp(seed: int, integers: bool = False) -> tuple[pyo.ConcreteModel, list]:
    """A bounded LP (or MIP) with two rows of its own and a pool of six `<=` rows met at
    x = 0, given lazily: (model, pool of (coefficients, rhs))."""
    rng = np.random.default_rng(seed)
    n = 5
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), bounds=lambda _m, j: (0, float(rng.integers(3, 8))))
    if integers:
        for j in (0, 1):
            m.x[j].domain = pyo.Integers
    a = rng.integers(0, 4, size=(2, n))
    m.rows = pyo.Constraint(range(2), rule=lambda _m, i: sum(
        int(a[i, j]) * m.x[j] for j in range(n)) <= float(rng.integers(8, 15)))
    c = rng.integers(1, 6, size=n)
    sense = pyo.maximize if seed % 2 else pyo.minimize
    sign = 1 if sense == pyo.maximize else -1  # min -c'x: pushes x up into the lazy rows
    m.obj = pyo.Objective(expr=sign * sum(int(c[j]) * m.x[j] for j in range(n)), sense=sense)
    pool = [(rng.integers(0, 4, size=n), float(rng.integers(3, 12))) for _ in range(6)]
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m, pool


def _separator(m: pyo.ConcreteModel, pool: list) -> LazyConstraints:
    """Every pool row each time: the plugin adds only those a solution violates."""
    return LazyConstraints(lambda _s: [
        sum(int(a[j]) * m.x[j] for j in range(len(a))) <= b for a, b in pool])


def _check_certificate(m: pyo.ConcreteModel, pool: list, pool_duals: list[float],
                       fixed: set[int] = frozenset()) -> None:
    """(m.dual + pool_duals, m.rc) certify the loaded x optimal for the LP of the model with
    every pool row (variables in `fixed` held at their values)."""
    n = len(m.x)
    x = np.array([m.x[j].value for j in range(n)])
    maximize = m.obj.sense == pyo.maximize
    costs = _coefficients(m, m.obj.expr)
    rows = [(_coefficients(m, m.rows[i].body), pyo.value(m.rows[i].upper), m.dual[m.rows[i]])
            for i in m.rows]
    rows += [(np.asarray(a, dtype=float), b, y) for (a, b), y in zip(pool, pool_duals,
                                                                        strict=True)]
    gradient = costs.copy()
    for a, b, y in rows:
        assert a @ x <= b + TOL  # primal feasible
        direction = 1 if maximize else -1  # the sign a binding <= row's dual takes
        assert y * direction >= -TOL, "dual of a <= row has the wrong sign"
        if abs(y) > TOL:
            assert a @ x == pytest.approx(b, abs=1e-6), "a priced row is not binding"
        gradient -= y * a
    for j in range(n):
        if j in fixed:
            continue
        rc = m.rc[m.x[j]]
        assert gradient[j] == pytest.approx(rc, abs=1e-6)  # c = A'y + rc
        toward_upper = rc > TOL if maximize else rc < -TOL
        toward_lower = rc < -TOL if maximize else rc > TOL
        if toward_upper:
            assert x[j] == pytest.approx(m.x[j].ub, abs=1e-6)
        if toward_lower:
            assert x[j] == pytest.approx(m.x[j].lb, abs=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(8))
def test_lp_duals_certify_the_model_with_all_its_lazy_rows(solver: str, seed: int) -> None:
    m, pool = _random_lp(seed)
    lazy = _separator(m, pool)
    result = solve(m, solver=solver, plugins=[lazy])
    assert result.status is Status.OPTIMAL and result.extra["duals"]["loaded"]
    added = [(np.asarray(a), b) for a, b in pool if any(
        _same_row(cut, m, a, b) for cut in lazy.cuts)]
    pool_duals = _pool_duals(m, pool, lazy, result.extra["lazy_duals"]["lazy"])
    _check_certificate(m, pool, pool_duals)
    assert len(result.extra["lazy_duals"]["lazy"]) == len(lazy.cuts) >= len(added)
    upfront = _with_rows_up_front(pool, seed)
    assert solve(upfront, solver=solver).objective == pytest.approx(result.objective)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(4))
def test_fixed_mip_duals_take_the_lazy_rows(solver: str, seed: int) -> None:
    m, pool = _random_lp(seed, integers=True)
    lazy = _separator(m, pool)
    result = solve(m, solver=solver, plugins=[lazy], mip_duals="fixed")
    assert result.status is Status.OPTIMAL and result.extra["duals"]["loaded"]
    assert "integer variable fixed" in result.extra["duals"]["of"]
    assert all(float(m.x[j].value).is_integer() for j in (0, 1))
    _check_certificate(m, pool, _pool_duals(m, pool, lazy, result.extra["lazy_duals"]["lazy"]),
                       fixed={0, 1})


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_model_is_left_as_it_was(solver: str) -> None:
    m, pool = _random_lp(3)
    before = sorted(c.name for c in m.component_objects(descend_into=True))
    result = solve(m, solver=solver, plugins=[_separator(m, pool)])
    assert sorted(c.name for c in m.component_objects(descend_into=True)) == before
    assert sorted(c.name for c in m.dual) == sorted(c.name for c in m.rows.values())
    assert sorted(v.name for v in m.rc) == sorted(v.name for v in m.x.values())
    assert result.extra["duals"]["of"] == "the LP with the rows the lazy constraints added"


def test_only_rc_declared_gives_reduced_costs_and_no_lazy_duals() -> None:
    m, pool = _random_lp(5)
    m.del_component(m.dual)
    result = solve(m, solver="highs", plugins=[_separator(m, pool)])
    assert len(m.rc) == len(m.x) and "lazy_duals" not in result.extra


def test_rows_that_were_never_added_but_bind_refuse_the_duals() -> None:
    """The check that keeps them honest: an LP whose optimum the added rows alone do not
    hold (here: none recorded) loads no duals, with a warning naming both optima."""
    m, pool = _random_lp(2)
    lazy = _separator(m, pool)
    result = solve(m, plugins=[lazy])
    assert lazy.cuts, "the case needs a binding lazy row"
    lazy.cuts, lazy.added_rows = [], []

    def resolve() -> Result:
        return solve(m)

    with pytest.warns(UserWarning, match=r"the optimum of the LP with the lazy rows, .* is "
                                         r"not the LP's"):
        load_lazy_duals(m, result, [lazy], resolve)
    assert not result.extra["duals"]["loaded"] and len(m.dual) == 0 and len(m.rc) == 0


def _coefficients(m: pyo.ConcreteModel, expr: object) -> np.ndarray:
    """The linear coefficients of `expr` by the index of m.x."""
    out = np.zeros(len(m.x))
    repn = generate_standard_repn(expr)
    for var, coef in zip(repn.linear_vars, repn.linear_coefs, strict=True):
        out[var.index()] += coef
    return out


def _same_row(cut: object, m: pyo.ConcreteModel, a: np.ndarray, b: float) -> bool:
    """Whether the cut expression is the pool row (a, b)."""
    return str(cut) == str(sum(int(a[j]) * m.x[j] for j in range(len(a))) <= b)


def _pool_duals(m: pyo.ConcreteModel, pool: list, lazy: LazyConstraints,
                cut_duals: list[float]) -> list[float]:
    """Each pool row's dual: summed over the cuts that are that row, 0 for one never added."""
    return [sum(y for cut, y in zip(lazy.cuts, cut_duals, strict=True)
                if _same_row(cut, m, np.asarray(a), b)) for a, b in pool]


def _with_rows_up_front(pool: list, seed: int) -> pyo.ConcreteModel:
    """The same model with the pool as ordinary rows."""
    m, _ = _random_lp(seed)
    m.pool = pyo.Constraint(range(len(pool)), rule=lambda _m, i: sum(
        int(pool[i][0][j]) * m.x[j] for j in range(len(m.x))) <= pool[i][1])
    return m


@pytest.mark.parametrize("solver", SOLVERS)
def test_rows_keep_the_numbers_they_were_added_with(solver: str) -> None:
    """A separator that keeps its bound in a mutable Param changed the rows already added:
    HiGHS's rounds answered 8 with x0 = 4 past the row x0 <= 3 (the optimum is 7)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), bounds=(0, 10))
    m.r = pyo.Param(mutable=True, initialize=0)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)

    def separate(s):
        for j, cap in ((0, 3), (1, 4)):
            if s[m.x[j]] > cap + 1e-6:
                m.r = cap
                return [m.x[j] <= m.r]
        return []

    result = solve(m, solver=solver, plugins=[LazyConstraints(separate)])
    assert result.objective == pytest.approx(7.0) and m.x[0].value == pytest.approx(3.0)
    assert result.extra["duals"]["loaded"] and result.extra["lazy_duals"]["lazy"] == [1.0, 1.0]


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_mip_without_mip_duals_warns_once_with_the_way_to_get_them(solver: str) -> None:
    """SCIP said the lazy rows were the reason; HiGHS's rounds warned once per round."""
    m, pool = _random_lp(1, integers=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = solve(m, solver=solver, plugins=[_separator(m, pool)])
    messages = [str(w.message) for w in caught]
    assert messages == ["dual, rc left empty: the model has integer variables (a MIP has no "
                        "LP duals); mip_duals='fixed' gives those of its fixed LP with the "
                        "lazy rows"]
    assert not result.extra["duals"]["loaded"]
