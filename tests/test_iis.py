"""explain_infeasible: the subsystem it returns is checked here by scipy's MILP on the
models' own data: infeasible, and feasible without any one of its members."""

from __future__ import annotations

import os
import signal
from types import SimpleNamespace

import highspy
import numpy as np
import pyomo.environ as pyo
import pyscipopt
import pytest
import scipy.sparse as sp
from pyomo.core.expr.visitor import replace_expressions
from scipy.optimize import Bounds, LinearConstraint, milp

from coplug.plugins import InputError, Status, iis, solve
from coplug.plugins.iis import explain_infeasible
from coplug.plugins.iis_farkas import _column_activity, _dual_ray


def random_system(seed: int) -> tuple[pyo.ConcreteModel, dict]:
    """A random feasible system of rows over bounded integer and continuous variables, made
    infeasible by a few rows that contradict its known point."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(4, 9)), int(rng.integers(4, 10))
    integer = rng.random(n) < 0.5
    lb, ub = -rng.integers(0, 4, n).astype(float), rng.integers(1, 5, n).astype(float)
    point = np.where(integer, rng.integers(lb, ub + 1), rng.uniform(lb, ub))
    a = rng.integers(-3, 4, (m, n)).astype(float)
    rhs = a @ point + rng.uniform(0, 2, m)  # rows a x <= rhs hold at the point
    mode, k = seed % 4, int(rng.integers(n))
    if mode == 0:  # rows no point of the box meets
        bad = rng.choice(m, size=int(rng.integers(1, 3)), replace=False)
        rhs[bad] = np.minimum(rhs[bad], _row_min(a[bad], lb, ub) - rng.uniform(0.5, 2, len(bad)))
    elif mode == 1:  # two rows contradicting each other
        a = np.vstack([a, np.eye(n)[k], -np.eye(n)[k]])
        rhs = np.r_[rhs, lb[k] + 0.5, -(lb[k] + 1.5)]
    elif mode == 2:  # a cycle x0 < x1 < x2 < x0 (no bound needed)
        cycle = np.zeros((3, n))
        for r, (i, j) in enumerate(((0, 1), (1, 2), (2, 0))):
            cycle[r, i], cycle[r, j] = 1, -1
        a, rhs = np.vstack([a, cycle]), np.r_[rhs, -1, -1, -1]
    else:  # 2 x_k = 1 over an integer x_k, written as two rows
        integer[k] = True
        a = np.vstack([a, 2 * np.eye(n)[k], -2 * np.eye(n)[k]])
        rhs = np.r_[rhs, 1, -1]
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(n), domain=lambda mm, j: pyo.Integers if integer[j] else pyo.Reals,
                      bounds=lambda mm, j: (lb[j], ub[j]))
    model.row = pyo.Constraint(range(len(rhs)), rule=lambda mm, i: sum(
        a[i, j] * mm.x[j] for j in range(n) if a[i, j]) <= rhs[i]
        if a[i].any() else pyo.Constraint.Skip)
    model.o = pyo.Objective(expr=sum(model.x[j] for j in range(n)))
    return model, {"a": a, "rhs": rhs, "lb": lb, "ub": ub, "integer": integer}


def _row_min(a: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """The least each row a x can be over the box."""
    return np.minimum(a * lb, a * ub).sum(axis=1)


def scipy_feasible(data: dict, rows: list[int], bounds: list[tuple[int, str]]) -> bool:
    """Whether the rows and bounds given (all other bounds dropped) admit a point."""
    n = len(data["lb"])
    lb, ub = np.full(n, -np.inf), np.full(n, np.inf)
    for j, side in bounds:
        (lb if side == "lower" else ub)[j] = (data["lb"] if side == "lower" else data["ub"])[j]
    constraints = ([LinearConstraint(data["a"][rows], -np.inf, data["rhs"][rows])]
                   if rows else [])
    result = milp(np.zeros(n), constraints=constraints, integrality=data["integer"],
                  bounds=Bounds(lb, ub))
    if result.status == 4:  # scipy's HiGHS failed ("Solve error"): PySCIPOpt decides
        return _scip_feasible(data, rows, lb, ub)
    assert result.status in (0, 2), result.message  # 0 solved, 2 infeasible
    return result.status == 0


def _scip_feasible(data: dict, rows: list[int], lb: np.ndarray, ub: np.ndarray) -> bool:
    """The same question put to SCIP through PySCIPOpt directly (not through coplug)."""
    scip = pyscipopt.Model()
    scip.hideOutput()
    x = [scip.addVar(lb=lb[j] if np.isfinite(lb[j]) else None,
                     ub=ub[j] if np.isfinite(ub[j]) else None,
                     vtype="I" if data["integer"][j] else "C") for j in range(len(lb))]
    for i in rows:
        scip.addCons(pyscipopt.quicksum(float(c) * x[j] for j, c in enumerate(data["a"][i]) if c)
                     <= float(data["rhs"][i]))
    scip.optimize()
    assert scip.getStatus() in ("optimal", "infeasible"), scip.getStatus()
    return scip.getStatus() == "optimal"


@pytest.mark.parametrize("seed", range(12))
def test_subsystem_is_infeasible_and_irreducible_by_scipy(seed: int) -> None:
    model, data = random_system(seed)
    found = explain_infeasible(model)
    rows = [con.index() for con in found.constraints]
    bounds = [(var.index(), side) for var, side in found.bounds]
    assert found.irreducible and all(con.parent_component() is model.row
                                     for con in found.constraints)
    assert not scipy_feasible(data, rows, bounds)
    for k in range(len(rows)):
        assert scipy_feasible(data, rows[:k] + rows[k + 1:], bounds), f"row {rows[k]} unneeded"
    for k in range(len(bounds)):
        assert scipy_feasible(data, rows, bounds[:k] + bounds[k + 1:]), f"{bounds[k]} unneeded"


def test_the_model_is_left_as_it_was() -> None:
    model, _ = random_system(3)
    before = [(v.lb, v.ub, v.domain, v.value) for v in model.x.values()]
    active = [c.active for c in model.row.values()]
    explain_infeasible(model)
    assert [(v.lb, v.ub, v.domain, v.value) for v in model.x.values()] == before
    assert [c.active for c in model.row.values()] == active and model.o.active


def test_feasible_model_and_bad_arguments_are_named() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x <= 2)
    with pytest.raises(InputError, match="feasible"):
        explain_infeasible(m)
    with pytest.raises(InputError, match="check_limit"):
        explain_infeasible(m, check_limit=-1)


def test_integrality_conflict_survives_scips_bound_removal() -> None:
    m = pyo.ConcreteModel()
    m.k = pyo.Var(domain=pyo.Integers, bounds=(0, 3))
    m.y = pyo.Var(bounds=(0, 1))
    m.odd = pyo.Constraint(expr=2 * m.k == 3)
    m.loose = pyo.Constraint(expr=m.y <= 5)
    found = explain_infeasible(m)
    assert found.constraints == [m.odd] and found.bounds == [] and found.irreducible
    assert "odd: 2*k  ==  3" in str(found)


def test_binary_bounds_and_nonlinear_rows() -> None:
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(3), domain=pyo.Binary)
    m.pick = pyo.Constraint(expr=m.b[0] + m.b[1] >= 2)
    m.ban = pyo.Constraint(expr=m.b[1] + m.b[2] <= 0)
    m.x = pyo.Var(bounds=(-5, 5))
    m.y = pyo.Var(bounds=(-5, 5))
    m.disk = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 1)
    m.far = pyo.Constraint(expr=m.x + m.y >= 2)
    found = explain_infeasible(m)
    assert found.checked_by in ("highs", "scip") and found.irreducible
    names = {c.name for c in found.constraints}
    assert names in ({"pick", "ban"}, {"disk", "far"})
    if names == {"pick", "ban"}:  # a binary's 0..1 is its domain, not a listed bound
        assert found.bounds == []
    m.pick.deactivate()
    found = explain_infeasible(m)
    assert {c.name for c in found.constraints} == {"disk", "far"} and found.bounds == []
    assert found.checked_by == "scip"  # HiGHS takes no quadratic rows


def test_check_limit_zero_skips_the_deletion_filter() -> None:
    model, _ = random_system(5)
    found = explain_infeasible(model, check_limit=0)
    assert found.irreducible is None and len(found) >= 1
    assert "too large" in str(found)


def test_a_block_using_outer_variables_is_refused_by_name() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.inner = pyo.Block()
    m.inner.y = pyo.Var(bounds=(0, 1))
    m.inner.c = pyo.Constraint(expr=m.inner.y >= 2)
    found = explain_infeasible(m.inner)
    assert found.constraints == [m.inner.c] and found.bounds == [(m.inner.y, "upper")]
    m.inner.d = pyo.Constraint(expr=m.x + m.inner.y >= 5)
    with pytest.raises(InputError, match="'x', a variable outside the block 'inner'"):
        explain_infeasible(m.inner)
    assert m.x.bounds == (0, 1)


def test_ctrl_c_in_a_solve_stops_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    from coplug.plugins import iis
    from coplug.plugins.results import Result, Status

    def interrupted(*args, **kwargs) -> Result:  # solve() reports Ctrl-C as a status
        return Result(status=Status.INTERRUPTED, solver="scip")

    monkeypatch.setattr(iis, "solve", interrupted)
    model, _ = random_system(1)
    with pytest.raises(KeyboardInterrupt):
        explain_infeasible(model)


def test_a_kept_bounds_subsystem_past_check_limit_is_shrunk_not_thrown_away(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SCIP's kept-bounds IIS of a 12-row chain of integers lists 13 lower bounds too (25
    members, past check_limit=15): chunks of them are dropped, and SCIP's slow bound removal
    is not run. Steps of 0.5 to 6.5 leave the LP relaxation feasible (no Farkas ray)."""
    m = _chain_model(pyo.NonNegativeIntegers, step=0.5, top=6.5)
    passes = []
    scip_iis = iis._scip_iis
    monkeypatch.setattr(iis, "_scip_iis", lambda model, remove_bounds, time_limit: (
        passes.append(remove_bounds), scip_iis(model, remove_bounds, time_limit))[1])
    found = explain_infeasible(m, check_limit=15)
    assert passes == [False]
    assert found.irreducible is True  # 7 whole steps from z[5] >= 0 already pass 6.5
    assert [c.name for c in found.constraints] == [f"chain[{k}]" for k in range(5, 12)] + ["top"]
    assert found.bounds == [(m.z[5], "lower")]


@pytest.mark.parametrize("domain", [pyo.NonNegativeReals, pyo.NonNegativeIntegers])
def test_a_conflict_in_the_lp_relaxation_comes_from_highs_farkas_certificate(
        monkeypatch: pytest.MonkeyPatch, domain: object) -> None:
    """An LP, or a MIP whose LP relaxation is infeasible already: SCIP's IIS is not asked."""
    def no_scip(*args: object) -> None:
        raise AssertionError("SCIP's IIS finder was called")

    monkeypatch.setattr(iis, "_scip_iis", no_scip)
    m = _chain_model(domain)
    found = explain_infeasible(m, check_limit=15)
    assert found.irreducible is True and found.checked_by == "highs"
    assert [c.name for c in found.constraints] == [f"chain[{k}]" for k in range(12)] + ["top"]
    assert found.bounds == [(m.z[0], "lower")]


def _chain_model(domain: object, step: float = 1.0, top: float = 11.5) -> pyo.ConcreteModel:
    """200 feasible ballast rows and z[k+1] >= z[k] + step (k < 12), z[12] <= top, z >= 0."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 199)
    m.x = pyo.Var(m.I, bounds=(0, 10))
    m.ballast = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.x[(i + 1) % 200] <= 12)
    m.z = pyo.Var(range(13), domain=domain)
    m.chain = pyo.Constraint(range(12), rule=lambda m, k: m.z[k + 1] >= m.z[k] + step)
    m.top = pyo.Constraint(expr=m.z[12] <= top)
    return m


@pytest.mark.parametrize("by_rows", [False, True])
def test_column_activity_of_a_ray_reads_either_matrix_layout(by_rows: bool) -> None:
    a = sp.random(7, 5, density=0.4, random_state=3).toarray()
    a[:, 2] = 0  # an empty column
    stored = sp.csr_matrix(a) if by_rows else sp.csc_matrix(a)
    fmt = highspy.MatrixFormat.kRowwise if by_rows else highspy.MatrixFormat.kColwise
    matrix = SimpleNamespace(format_=fmt, start_=stored.indptr, index_=stored.indices,
                             value_=stored.data)
    highs = SimpleNamespace(getLp=lambda: SimpleNamespace(a_matrix_=matrix, num_col_=5))
    ray = np.random.default_rng(0).normal(size=7)
    assert np.allclose(_column_activity(highs, ray), a.T @ ray, rtol=1e-14, atol=1e-14)


def test_a_fixed_integer_keeps_an_lp_on_the_farkas_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_scip(*args: object) -> None:
        raise AssertionError("SCIP's IIS finder was called")

    monkeypatch.setattr(iis, "_scip_iis", no_scip)
    m = _chain_model(pyo.NonNegativeReals)
    m.k = pyo.Var(domain=pyo.Integers)
    m.k.fix(2)
    m.top.set_value(m.z[12] <= 9.5 + m.k)
    found = explain_infeasible(m, check_limit=15)
    assert found.irreducible is True
    assert [c.name for c in found.constraints] == [f"chain[{k}]" for k in range(12)] + ["top"]
    assert found.bounds == [(m.z[0], "lower")]


def test_ctrl_c_during_the_farkas_solve_cancels_highs_and_stops() -> None:
    """Ctrl-C while HiGHS looks for the certificate reaches HiGHS (cancelSolve, which its
    interrupt callbacks check) and stops explain_infeasible, not after the whole LP solve."""
    cancelled: list[bool] = []

    class PressedDuringRun:
        HandleUserInterrupt = False

        def setOptionValue(self, name: str, value: object) -> None:
            pass

        def cancelSolve(self) -> None:
            cancelled.append(self.HandleUserInterrupt)

        def run(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        _dual_ray(PressedDuringRun(), None)
    assert cancelled == [True]


def _undecidable_once_bounds_drop() -> pyo.ConcreteModel:
    """Infeasible at once for both solvers; with some bounds dropped the subsystem left has
    free integers that neither decides in its check time (a probe's seed 841)."""
    m = pyo.ConcreteModel()
    dom = [pyo.Integers, pyo.Reals, pyo.Reals, pyo.Integers, pyo.Integers, pyo.Integers]
    ub = [4, 2, 3, None, None, None]
    m.x = pyo.Var(range(6), domain=lambda _m, j: dom[j], bounds=lambda _m, j: (0, ub[j]))
    x = m.x
    m.r0 = pyo.Constraint(expr=5 * x[0] - 2 * x[1] + 3 * x[2] + x[3] - 3 * x[4] + 2 * x[5] == 12)
    m.r1 = pyo.Constraint(expr=pyo.inequality(-4, 3 * x[0] - 3 * x[2] + 3 * x[5], 2))
    m.r2 = pyo.Constraint(expr=-3 * x[0] + 3 * x[1] - 3 * x[2] + 5 * x[3] == 0)
    m.r3 = pyo.Constraint(expr=pyo.inequality(1, -2 * x[0] + 2 * x[1] - 2 * x[2] + x[3] - x[4],
                                              2))
    m.r4 = pyo.Constraint(expr=-x[0] + 5 * x[2] + x[3] >= 3)
    m.r5 = pyo.Constraint(expr=pyo.inequality(6, 3 * x[1] + 3 * x[2] - 4 * x[3], 8))
    m.r6 = pyo.Constraint(expr=2 * x[0] + 2 * x[1] + 3 * x[2] + 5 * x[4] - 4 * x[5] == -1)
    return m


def test_an_undecided_check_keeps_its_member(monkeypatch) -> None:
    """It raised "no solver decided the subsystem"; the member now stays, and the answer
    says it may not be irreducible. The checks run at 1 s here (10 s by default)."""
    monkeypatch.setattr(iis, "_CHECK_SECONDS", 1.0)
    m = _undecidable_once_bounds_drop()
    found = explain_infeasible(m)
    assert found.irreducible is False and any("stayed undecided" in n for n in found.notes)
    assert "some members' checks stayed undecided" in str(found)
    sub = pyo.ConcreteModel()  # the answer is infeasible: its rows alone, integrality kept
    sub.x = pyo.Var(range(6), domain=lambda _s, j: pyo.Integers if m.x[j].is_integer()
                    else pyo.Reals)
    assert found.bounds == []
    swap = {id(m.x[j]): sub.x[j] for j in range(6)}
    sub.rows = pyo.ConstraintList()
    for con in found.constraints:
        sub.rows.add(pyo.inequality(con.lower, replace_expressions(con.body, swap), con.upper))
    assert solve(sub, solver="highs", time_limit=60).status is Status.INFEASIBLE
