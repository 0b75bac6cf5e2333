"""HiGHS answers 'infeasible or unbounded' for unbounded MIPs; solve() settles it with a
zero-objective run, and the verdict must match SCIP's."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve


def _ray(integral: bool) -> pyo.ConcreteModel:
    """max x + y over 2x - 3y <= 1: unbounded along x = y."""
    m = pyo.ConcreteModel()
    domain = pyo.Integers if integral else pyo.Reals
    m.x = pyo.Var(domain=domain)
    m.y = pyo.Var(domain=domain)
    m.c = pyo.Constraint(expr=2 * m.x - 3 * m.y <= 1)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m


def _parity(unbounded_lp: bool) -> pyo.ConcreteModel:
    """2y - 2z == 1 has no integer point; with a free ray in x the relaxation is unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.Integers, bounds=(-5, 5))
    m.z = pyo.Var(domain=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=2 * m.y - 2 * m.z == 1)
    m.o = pyo.Objective(expr=-m.x if unbounded_lp else m.x)
    return m


def _one_integer() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.o = pyo.Objective(expr=-m.x)
    return m


CASES = {
    "mip ray": (lambda: _ray(True), Status.UNBOUNDED),
    "lp ray": (lambda: _ray(False), Status.UNBOUNDED),
    "one integer": (_one_integer, Status.UNBOUNDED),
    "parity, relaxation unbounded": (lambda: _parity(True), Status.INFEASIBLE),
    "parity": (lambda: _parity(False), Status.INFEASIBLE),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_highs_gives_the_verdict_scip_gives(case: str) -> None:
    build, expected = CASES[case]
    assert solve(build(), solver="scip").status is expected  # the reference
    result = solve(build(), solver="highs")
    assert result.status is expected
    assert result.objective is None and not result.has_solution


def test_the_settling_run_leaves_a_later_solve_its_objective() -> None:
    m = _ray(True)
    assert solve(m, solver="highs").status is Status.UNBOUNDED
    m.c2 = pyo.Constraint(expr=m.x + m.y <= 7)  # now bounded: x + y = 7 is reachable
    assert solve(m, solver="highs").objective == pytest.approx(7.0)


def test_plugin_statistics_describe_the_run_that_decided_the_status() -> None:
    class Probe:
        name = "probe"

        def attach(self, scip, var_map) -> None:
            self.scip = scip

        def statistics(self) -> dict:
            return {"objective_terms": len(self.scip.getObjective().terms)}

    result = solve(_parity(True), solver="scip", plugins=[Probe()])
    assert result.status is Status.INFEASIBLE
    assert result.plugin_stats["probe"] == {"objective_terms": 0}  # the zero-objective run
