"""Rows with huge coefficients are divided by a power of two before SCIP solves them
(coplug.plugins.row_scaling): SoPlex got their LPs wrong, and SCIP's "optimal" with them."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from coplug.plugins import Status, solve
from coplug.plugins.files import solve_file
from coplug.plugins.row_scaling import MIN_COEF, SCALE_COEF, row_scale

N, ROWS = 30, 6


def _covering(seed: int, scale: int, integer: bool = True) -> tuple[pyo.ConcreteModel, tuple]:
    """min c x, A x >= 0.31 * A 1, x in [0, 3]: A from [10**scale, 10**(scale + 1))."""
    rng = np.random.default_rng(seed)
    a = rng.integers(10**scale, 10**(scale + 1), (ROWS, N))
    b = (a.sum(1) * 0.31).astype(np.int64)
    c = rng.integers(1, 100, N)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(N), domain=pyo.Integers if integer else pyo.Reals, bounds=(0, 3))
    m.row = pyo.Constraint(range(ROWS), rule=lambda m, i: sum(
        int(a[i, j]) * m.x[j] for j in range(N)) >= int(b[i]))
    m.o = pyo.Objective(expr=sum(int(c[j]) * m.x[j] for j in range(N)))
    return m, (a, b, c)


def _exactly_feasible(m: pyo.ConcreteModel, a: np.ndarray, b: np.ndarray) -> bool:
    x = [round(m.x[j].value) for j in range(N)]
    return all(sum(int(a[i, j]) * x[j] for j in range(N)) >= int(b[i]) for i in range(ROWS))


@pytest.mark.parametrize("seed, scale", [(2, 9), (3, 8), (3, 9), (5, 9), (11, 10)])
def test_scip_finds_the_optimum_of_covering_models_with_huge_weights(seed: int,
                                                                     scale: int) -> None:
    """SCIP called 105 optimal for seed 2 at 1e9, where a point costing 93 meets every row
    exactly; the optimum is held to scipy's milp (HiGHS) and the point checked exactly."""
    m, (a, b, c) = _covering(seed, scale)
    found = milp(c, constraints=LinearConstraint(a.astype(float), b.astype(float), np.inf),
                 integrality=np.ones(N), bounds=Bounds(0, 3))
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL and result.extra["scaled_rows"] == ROWS
    assert result.objective == pytest.approx(found.fun)
    assert _exactly_feasible(m, a, b)


def test_the_lp_of_huge_rows_and_its_duals() -> None:
    """SoPlex gave 148 for this LP's 90.34 (and 'error in LP solver' for seed 0); its
    duals, read from the divided rows, are multiplied back and certified."""
    m, (a, b, c) = _covering(2, 9, integer=False)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    reference = linprog(c, A_ub=-a.astype(float), b_ub=-b.astype(float), bounds=[(0, 3)] * N)
    result = solve(m, solver="scip")
    assert result.objective == pytest.approx(reference.fun, rel=1e-9)
    assert result.extra["duals"]["loaded"]
    duals = np.array([m.dual[m.row[i]] for i in range(ROWS)])
    assert (duals >= -1e-12).all()  # >= rows of a minimization price at 0 or above
    assert duals == pytest.approx(-reference.ineqlin.marginals, rel=1e-6, abs=1e-15)



@pytest.mark.parametrize("seed", [0, 1, 3])
def test_lps_of_huge_rows_solve_to_their_optimum(seed: int) -> None:
    """Seeds 0 and 3 stopped with "SCIP: error in LP solver!", seed 1 was 'optimal' 153.9
    for the true 136.44."""
    m, (a, b, c) = _covering(seed, 9, integer=False)
    reference = linprog(c, A_ub=-a.astype(float), b_ub=-b.astype(float), bounds=[(0, 3)] * N)
    result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(reference.fun, rel=1e-9)


def test_files_get_the_same_division(tmp_path) -> None:
    m, (a, b, c) = _covering(2, 9)
    path = tmp_path / "cover.mps"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    result = solve_file(path, solver="scip")
    assert result.objective == pytest.approx(93) and result.extra["scaled_rows"] == ROWS


def test_row_scale_keeps_sides_and_coefficients_in_reach() -> None:
    """A power of two, the coefficients near 1; never a side below 1 (SCIP's
    relative test would turn absolute: x <= 1e9 y with y = 0 would let x reach 1e3) nor a
    coefficient below MIN_COEF."""
    factor = row_scale([3e9, 5e9], 2e10, None)
    assert factor == 2.0**-31 and 1 <= 3e9 * factor < 2  # the smallest one to [1, 2)
    assert row_scale([1.0, -1e9], None, 0.0) == 1.0  # a big-M row with a side of 0
    assert row_scale([1e9, 2e9], 0.5, 1e12) == 1.0  # a side under 2 leaves no room
    assert row_scale([SCALE_COEF / 2, 3.0], 1e9, None) == 1.0  # nothing huge
    assert row_scale([1.0, 1e9], 1e12, None) == 1.0  # a small coefficient leaves no room:
    # divided, 2 and 1 beside 1e11 became 0.004 and 0.002, and SCIP missed an equality by 24
    mixed = row_scale([10.0, 1e9], 1e12, None)
    assert mixed == 2.0**-3 and 10.0 * mixed >= MIN_COEF
    assert row_scale([4e9], 3.0, None) == 0.5  # the side 3 allows one halving


def test_staged_solves_keep_the_exact_row_check() -> None:
    """Stage 1 divided the row for good, so stage 2 read it as small: lexicographic said
    [1, 2] with x = 2 breaking `2000001 x <= 4000001` by 1 (the optimum is [1, 1])."""
    from coplug.plugins import lexicographic

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 10))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(0, 1))
    m.row = pyo.Constraint(expr=2000001 * m.x <= 4000001)
    m.first = pyo.Objective(expr=m.y, sense=pyo.maximize)
    m.second = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.first.deactivate()
    m.second.deactivate()
    found = lexicographic(m, [m.first, m.second], solver="scip")
    assert found.values == pytest.approx([1, 1]) and pyo.value(m.x) == 1


def test_long_rows_are_left_alone() -> None:
    """SCIP finds each term by a linear search: dividing a 100,000-term row took 6.5 s."""
    from coplug.plugins.row_scaling import MAX_TERMS

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(MAX_TERMS + 1), bounds=(0, 1))
    m.row = pyo.Constraint(expr=1e7 * m.x[0] + sum(m.x[j] for j in range(1, MAX_TERMS + 1))
                           <= 2e7)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    result = solve(m, solver="scip")
    assert result.objective == pytest.approx(MAX_TERMS + 1)
    assert "scaled_rows" not in result.extra
