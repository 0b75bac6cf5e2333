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


def _packing(seed: int, scale: int = 11, integer: bool = True,
             ) -> tuple[pyo.ConcreteModel, list, list[int], list[float]]:
    """max c x over 3 packing rows with fractional weights from [10**scale, 10**(scale+1)),
    x in [0, 1 or 2]: HiGHS's presolve got seeds 17, 25 and 34 wrong (129 for 158)."""
    rng = np.random.default_rng(seed)
    upper = rng.integers(1, 3, 6).tolist()
    costs = rng.integers(10, 100, 6).astype(float).tolist()
    rows = []
    for _ in range(3):
        cols = sorted(rng.choice(6, rng.integers(2, 7), replace=False).tolist())
        weights = {j: float(rng.uniform(10**scale, 10**(scale + 1))) for j in cols}
        rows.append((weights, float(np.floor(sum(weights.values()) * rng.uniform(0.3, 0.7)))))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.NonNegativeIntegers if integer else pyo.NonNegativeReals)
    for j in range(6):
        m.x[j].setub(upper[j])
    m.row = pyo.Constraint(range(3), rule=lambda m, i: sum(
        a * m.x[j] for j, a in rows[i][0].items()) <= rows[i][1])
    m.o = pyo.Objective(expr=sum(c * m.x[j] for j, c in enumerate(costs)), sense=pyo.maximize)
    return m, rows, upper, costs


def _fits(rows: list, x: tuple) -> bool:
    """Whether `x` meets every row in exact arithmetic."""
    from fractions import Fraction

    return all(sum(Fraction(a) * x[j] for j, a in weights.items()) <= Fraction(side)
               for weights, side in rows)


def _packing_optimum(rows: list, upper: list[int], costs: list[float]) -> float:
    """The optimum by enumeration, every point judged exactly."""
    import itertools

    points = itertools.product(*(range(u + 1) for u in upper))
    return max(float(np.dot(costs, x)) for x in points if _fits(rows, x))


@pytest.mark.parametrize("seed", [17, 25, 34])
def test_highs_finds_the_optimum_of_packings_with_huge_fractional_weights(seed: int) -> None:
    m, rows, upper, costs = _packing(seed)
    best = _packing_optimum(rows, upper, costs)
    result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL and result.extra["scaled_rows"] == 3
    assert result.objective == pytest.approx(best)
    assert _fits(rows, tuple(round(m.x[j].value) for j in range(6)))


def test_highs_leaves_whole_number_rows_as_written() -> None:
    """HiGHS got every all-integer row with whole weights right, and coplug judges those
    exactly, at a tightened tolerance where needed: they stay as written."""
    m, (a, b, c) = _covering(2, 9)
    result = solve(m, solver="highs")
    assert result.objective == pytest.approx(93) and "scaled_rows" not in result.extra
    assert _exactly_feasible(m, a, b)


def test_highs_reads_its_divided_rows_as_written() -> None:
    """HiGHS holds the rows divided by powers of two; the checks' view of them is the rows
    as written, coefficient for coefficient."""
    from coplug.plugins.bridge import contrib_solver
    from coplug.plugins.highs_backend import build_highs
    from coplug.plugins.highs_rows import RowView

    m, rows, _, _ = _packing(17)
    opt = contrib_solver("highs", "HiGHS", "highspy")
    build_highs(opt, m)
    view, held = RowView(opt._solver_model), opt._solver_model.getLp()
    for i, (weights, side) in enumerate(rows):
        row = opt._pyomo_con_to_solver_con_map[m.row[i]]
        written = view.matrix[row].toarray().ravel()
        assert {j: written[j] for j in np.flatnonzero(written)} == weights
        assert view.sides[1][row] == side
        factor = held.row_upper_[row] / side
        assert factor < 1e-9 and np.log2(factor) == round(np.log2(factor))


def test_highs_duals_of_divided_rows_price_the_rows_as_written() -> None:
    m, rows, upper, costs = _packing(17, integer=False)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    a = np.array([[weights.get(j, 0.0) for j in range(6)] for weights, _ in rows])
    reference = linprog(-np.array(costs), A_ub=a, b_ub=[side for _, side in rows],
                        bounds=[(0, u) for u in upper])
    result = solve(m, solver="highs")
    assert result.extra["scaled_rows"] == 3 and result.extra["duals"]["loaded"]
    assert result.objective == pytest.approx(-reference.fun, rel=1e-9)
    duals = np.array([m.dual[m.row[i]] for i in range(3)])
    assert duals == pytest.approx(-reference.ineqlin.marginals, rel=1e-6, abs=1e-15)
    assert np.abs(duals).max() > 1e-12  # some row binds: the factor is seen


def test_highs_files_get_the_same_division(tmp_path) -> None:
    m, rows, upper, costs = _packing(25)
    path = tmp_path / "pack.mps"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    result = solve_file(path, solver="highs")
    assert result.extra["scaled_rows"] == 3
    assert result.objective == pytest.approx(_packing_optimum(rows, upper, costs))


def test_highs_staged_solves_read_the_rows_as_written() -> None:
    """Each stage reads the rows anew: they must read as written in every stage."""
    from coplug.plugins import lexicographic

    m, rows, upper, costs = _packing(34)
    best = _packing_optimum(rows, upper, costs)
    m.o.deactivate()
    m.second = pyo.Objective(expr=m.x[0], sense=pyo.maximize)
    m.second.deactivate()
    found = lexicographic(m, [m.o, m.second], solver="highs")
    assert found.values[0] == pytest.approx(best)
    assert _fits(rows, tuple(round(m.x[j].value) for j in range(6)))


def _two_weights(miss: float) -> tuple[pyo.ConcreteModel, float, float, float]:
    """max x0 + x1 over binaries, 1234567890.123 x0 + 2345678901.456 x1 <= their sum - miss."""
    a0, a1 = 1234567890.123, 2345678901.456
    side = float(a0 + a1 - miss)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=a0 * m.x[0] + a1 * m.x[1] <= side)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    return m, a0, a1, side


@pytest.mark.parametrize("miss", [500.0, 3.0])
def test_highs_judges_its_divided_rows_exactly(miss: float) -> None:
    """Divided by 2**31, the row had HiGHS's absolute tolerance of 1e-6 grow to some 2,000
    as written: x = (1, 1), 500 over, came back "optimal" 2. The divided rows now join the
    exact check (and its retry at a tightened tolerance)."""
    from fractions import Fraction

    m, a0, a1, side = _two_weights(miss)
    result = solve(m, solver="highs")
    x = [round(m.x[j].value) for j in range(2)]
    assert result.extra["scaled_rows"] == 1
    assert Fraction(a0) * x[0] + Fraction(a1) * x[1] <= Fraction(side)
    assert result.status is Status.OPTIMAL and result.objective == 1.0
