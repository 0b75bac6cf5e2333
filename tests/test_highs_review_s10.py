"""Fixes from the tenth session's review of the HiGHS backend: a slightly non-convex quadratic
objective over wide ranges is refused (HiGHS called it "optimal" far off), round-off negatives
on convex ones are still accepted, and a convex QP with a fixed integer variable solves."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, UnsupportedModelError, solve


def _nearly_nonconvex(y_bounds: tuple[float | None, float | None],
                      sense=pyo.minimize) -> pyo.ConcreteModel:
    """x**2 - 1e-10*y**2 (Hessian eigenvalues 2 and -2e-10), negated for maximize."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 1))
    m.y = pyo.Var(bounds=y_bounds)
    sign = 1 if sense == pyo.minimize else -1
    m.o = pyo.Objective(expr=sign * (m.x**2 - 1e-10 * m.y**2), sense=sense)
    return m


@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
def test_small_negative_curvature_over_a_wide_range_is_refused(sense) -> None:
    m = _nearly_nonconvex((-1e6, 1e6), sense)
    with pytest.raises(UnsupportedModelError, match="non-convex"):
        solve(m, solver="highs")
    scip = solve(m, solver="scip")
    assert scip.status is Status.OPTIMAL
    assert abs(scip.objective) == pytest.approx(100.0, rel=1e-6)


def test_small_negative_curvature_along_an_unbounded_variable_is_refused() -> None:
    with pytest.raises(UnsupportedModelError, match="non-convex"):
        solve(_nearly_nonconvex((None, 5.0)), solver="highs")


def test_small_negative_curvature_over_a_narrow_range_matches_scip() -> None:
    results = {s: solve(_nearly_nonconvex((-1, 1)), solver=s) for s in ("highs", "scip")}
    assert results["highs"].status is Status.OPTIMAL
    assert results["highs"].objective == pytest.approx(results["scip"].objective, abs=1e-8)


@pytest.mark.parametrize("bounds", [(-10, 10), (None, None)])
def test_psd_singular_expanded_square_is_accepted(bounds) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=bounds)
    m.y = pyo.Var(bounds=bounds)
    m.c = pyo.Constraint(expr=m.x - m.y >= 3)
    m.o = pyo.Objective(expr=m.x**2 + 2 * m.x * m.y + m.y**2 + 0.1 * m.x + 1)
    highs = solve(m, solver="highs")
    assert highs.status is Status.OPTIMAL
    if bounds[0] is not None:
        assert highs.objective == pytest.approx(solve(m, solver="scip").objective, abs=1e-6)


def _least_squares(bound: float | None, seed: int) -> tuple[pyo.ConcreteModel, float]:
    """sum((A x - b)**2) for a rank-deficient A built in float, and its minimum by numpy."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(12, 3)) @ rng.normal(size=(3, 6)) * 7.3
    b = rng.normal(size=12)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), bounds=(None if bound is None else -bound, bound))
    m.o = pyo.Objective(expr=sum(
        (sum(float(a[i, j]) * m.x[j] for j in range(6)) - float(b[i])) ** 2 for i in range(12)))
    solution = np.linalg.lstsq(a, b, rcond=None)[0]
    return m, float(np.sum((a @ solution - b) ** 2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gram_matrix_objectives_with_round_off_are_accepted(seed: int) -> None:
    m, minimum = _least_squares(None, seed)
    highs = solve(m, solver="highs")
    assert highs.status is Status.OPTIMAL
    assert highs.objective == pytest.approx(minimum, abs=1e-6)
    m, _ = _least_squares(1e3, seed)
    results = {s: solve(m, solver=s) for s in ("highs", "scip")}
    assert results["highs"].objective == pytest.approx(results["scip"].objective, abs=1e-5)


def _qp_with_fixed(domain, value: float) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.y = pyo.Var(domain=domain)
    m.y.fix(value)
    m.c = pyo.Constraint(expr=m.x + m.y >= 1.5)
    m.o = pyo.Objective(expr=(m.x - 1) ** 2 + 3 * m.y)
    return m


@pytest.mark.parametrize(("domain", "value"), [(pyo.Binary, 1), (pyo.Binary, 0),
                                                (pyo.Integers, 2)])
def test_convex_qp_with_a_fixed_integer_variable_matches_scip(domain, value: float) -> None:
    highs = solve(_qp_with_fixed(domain, value), solver="highs")
    scip = solve(_qp_with_fixed(domain, value), solver="scip")
    assert highs.status is scip.status is Status.OPTIMAL
    assert highs.objective == pytest.approx(scip.objective, abs=1e-6)


def test_qp_with_an_unfixed_integer_is_still_refused_as_miqp() -> None:
    m = _qp_with_fixed(pyo.Binary, 1)
    m.z = pyo.Var(domain=pyo.Binary)
    m.o.expr = m.o.expr + m.z
    with pytest.raises(UnsupportedModelError, match="MIQP"):
        solve(m, solver="highs")


def test_a_fixed_integer_off_integral_stays_infeasible_as_on_scip() -> None:
    def build() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 2))
        m.y = pyo.Var(domain=pyo.Integers)
        m.y.set_value(0.5, skip_validation=True)
        m.y.fixed = True
        m.c = pyo.Constraint(expr=m.x + m.y >= 1)
        m.o = pyo.Objective(expr=m.x + m.y)
        return m

    assert solve(build(), solver="highs").status is solve(build()).status is Status.INFEASIBLE
