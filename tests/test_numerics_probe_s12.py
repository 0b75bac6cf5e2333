"""Numerics probe (session 12): `solve(model, solver="scip"|"highs")` on small models whose
exact answer is computed here in rational arithmetic (LP vertices enumerated with Fraction,
MIPs by enumerating their integer box), under the numerical stresses coplug handles: large
all-integer rows, decimal equality rows, degenerate vertices (duals certified by strong
duality), nearly parallel rows, big-M links up to M = 1e9 (SCIP), objectives just above and
below the solvers' absolute tolerances, and bounded-but-long LPs.

Patterns the probe found answered wrongly are deliberately not tested here (see the probe's
report): HiGHS's big-M trickle flow at M >= 1e7, HiGHS (and rarely SCIP) LPs with rows whose
coefficients span 1e-7..1e7, SCIP's relative tolerance on mixed integer/continuous rows, and
LPs whose optimum lies beyond about 1e10.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.results import Status

SOLVERS = ["scip", "highs"]

# --- exact reference -----------------------------------------------------------------------
# A model spec: vars [(lb, ub, integer)], rows [(coefs, lo, hi)], obj coefs, maximize, and
# "decimal": read every number as the decimal it prints as (0.1 is 1/10), the model the user
# meant when writing 0.1 + 0.2 style data.


def _num(spec: dict):
    if spec.get("decimal"):
        return lambda v: Fraction(repr(float(v)))
    return Fraction


def _halfspaces(spec: dict, fixed: dict[int, int]) -> tuple[list, list[int]]:
    """a @ x <= b over the variables not in `fixed`."""
    q = _num(spec)
    free = [j for j in range(len(spec["vars"])) if j not in fixed]
    spaces = []
    for coefs, lo, hi in spec["rows"]:
        a = [q(coefs[j]) for j in free]
        const = sum((q(coefs[j]) * fixed[j] for j in fixed), Fraction(0))
        if hi is not None:
            spaces.append((a, q(hi) - const))
        if lo is not None:
            spaces.append(([-v for v in a], const - q(lo)))
    for k, j in enumerate(free):
        lb, ub, _ = spec["vars"][j]
        unit = [Fraction(int(i == k)) for i in range(len(free))]
        if ub is not None:
            spaces.append((unit, q(ub)))
        if lb is not None:
            spaces.append(([-v for v in unit], -q(lb)))
    return spaces, free


def _solve_square(a: list, b: list) -> list | None:
    n = len(a)
    rows = [list(a[i]) + [b[i]] for i in range(n)]
    for c in range(n):
        p = next((r for r in range(c, n) if rows[r][c] != 0), None)
        if p is None:
            return None
        rows[c], rows[p] = rows[p], rows[c]
        for r in range(n):
            if r != c and rows[r][c] != 0:
                f = rows[r][c] / rows[c][c]
                rows[r] = [x - f * y for x, y in zip(rows[r], rows[c], strict=True)]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def exact_lp(spec: dict, fixed: dict[int, int] | None = None) -> Fraction | None:
    """The optimum over a pointed polyhedron (every variable bounded below), None when empty."""
    fixed = fixed or {}
    q = _num(spec)
    spaces, free = _halfspaces(spec, fixed)
    sign = -1 if spec["maximize"] else 1
    const = sum((q(spec["obj"][j]) * v for j, v in fixed.items()), Fraction(0))
    best = None
    for combo in itertools.combinations(spaces, len(free)):
        x = _solve_square([a for a, _ in combo], [b for _, b in combo])
        if x is None or any(sum(ai * xi for ai, xi in zip(a, x, strict=True)) > b
                            for a, b in spaces):
            continue
        value = const + sum(q(spec["obj"][j]) * x[k] for k, j in enumerate(free))
        if best is None or sign * value < sign * best:
            best = value
    return best


def exact(spec: dict) -> Fraction | None:
    """The exact optimum of an LP or a MIP (integer box enumerated)."""
    ints = [j for j, v in enumerate(spec["vars"]) if v[2]]
    if not ints:
        return exact_lp(spec)
    sign = -1 if spec["maximize"] else 1
    boxes = [range(math.ceil(spec["vars"][j][0]), math.floor(spec["vars"][j][1]) + 1)
             for j in ints]
    best = None
    for values in itertools.product(*boxes):
        value = exact_lp(spec, dict(zip(ints, values, strict=True)))
        if value is not None and (best is None or sign * value < sign * best):
            best = value
    return best


def build(spec: dict, duals: bool = False) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(spec["vars"])))
    for j, (lb, ub, integer) in enumerate(spec["vars"]):
        m.x[j].domain = pyo.Integers if integer else pyo.Reals
        m.x[j].setlb(lb)
        m.x[j].setub(ub)
    m.c = pyo.ConstraintList()
    for coefs, lo, hi in spec["rows"]:
        body = sum(float(a) * m.x[j] for j, a in enumerate(coefs) if a != 0)
        if lo is not None and lo == hi:
            m.c.add(body == hi)
        elif lo is not None and hi is not None:
            m.c.add(pyo.inequality(lo, body, hi))
        else:
            m.c.add(body <= hi if hi is not None else body >= lo)
    m.o = pyo.Objective(expr=sum(float(a) * m.x[j] for j, a in enumerate(spec["obj"])),
                        sense=pyo.maximize if spec["maximize"] else pyo.minimize)
    if duals:
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def exactly_feasible(spec: dict, m: pyo.ConcreteModel, tol: float) -> bool:
    """The loaded point meets every row and bound within `tol` (exact arithmetic)."""
    q = _num(spec)
    x = [Fraction(m.x[j].value) for j in range(len(spec["vars"]))]
    for coefs, lo, hi in spec["rows"]:
        act = sum((q(a) * v for a, v in zip(coefs, x, strict=True)), Fraction(0))
        if (hi is not None and act - q(hi) > tol) or (lo is not None and q(lo) - act > tol):
            return False
    for v, (lb, ub, integer) in zip(x, spec["vars"], strict=True):
        if (ub is not None and v > q(ub) + tol) or (lb is not None and v < q(lb) - tol):
            return False
        if integer and v.denominator != 1:
            return False
    return True


def assert_matches(spec: dict, solver: str, rel: float = 1e-7, duals: bool = False):
    """Solve with `solver`, check status, objective, loaded point and objective at the point
    against the exact optimum; returns the model and result."""
    expected = exact(spec)
    assert expected is not None
    m = build(spec, duals)
    result = solve(m, solver=solver)
    assert result.status is Status.OPTIMAL
    scale = max(1.0, abs(float(expected)))
    assert abs(result.objective - float(expected)) <= rel * scale, (result.objective, expected)
    assert exactly_feasible(spec, m, 1e-6 * scale)
    assert abs(pyo.value(m.o) - float(expected)) <= rel * scale
    return m, result


# --- generators (seeded; the probe ran several hundred seeds of each) ----------------------


def lp_degenerate(rng: np.random.Generator) -> dict:
    """n + 1 .. n + 3 rows all tight at one integral point."""
    n = int(rng.integers(2, 4))
    x0 = [float(rng.integers(0, 5)) for _ in range(n)]
    rows = []
    for _ in range(rng.integers(n + 1, n + 4)):
        a = [float(rng.integers(-5, 6)) for _ in range(n)]
        if not any(a):
            continue
        act = sum(p * q for p, q in zip(a, x0, strict=True))
        rows.append((a, None, act) if rng.random() < .6 else (a, act, None))
    return {"vars": [(0.0, 10.0, False)] * n, "rows": rows,
            "obj": [float(rng.integers(-5, 6)) for _ in range(n)],
            "maximize": bool(rng.random() < .5)}


def lp_parallel(rng: np.random.Generator) -> dict:
    """Two rows parallel to within 1e-10 .. 1e-4, sides 1e-3 apart."""
    n = int(rng.integers(2, 4))
    eps = float(10 ** rng.uniform(-10, -4))
    a = [float(rng.integers(1, 10)) for _ in range(n)]
    b = [ai * (1 + eps * rng.normal()) for ai in a]
    x0 = [rng.uniform(0, 10) for _ in range(n)]
    act_a = sum(p * q for p, q in zip(a, x0, strict=True))
    act_b = sum(p * q for p, q in zip(b, x0, strict=True))
    rows = [(a, None, act_a + rng.uniform(0, 1e-3)), (b, act_b - rng.uniform(0, 1e-3), None)]
    return {"vars": [(0.0, 100.0, False)] * n, "rows": rows,
            "obj": [float(rng.integers(-5, 6)) or 1.0 for _ in range(n)],
            "maximize": bool(rng.random() < .5)}


def decimal_rows(rng: np.random.Generator) -> dict:
    """Equality rows with 0.1, 0.3, 2.675, 1.005 ... and a side that is the decimal sum."""
    n = int(rng.integers(2, 4))
    dec = [0.1, 0.2, 0.3, 0.7, 1.1, 0.01, 0.03, 2.675, 1.005]
    rows = []
    x0 = [int(rng.integers(0, 10)) for _ in range(n)]
    for _ in range(rng.integers(1, 3)):
        a = [float(rng.choice(dec) * rng.choice([-1, 1])) for _ in range(n)]
        side = float(sum(Fraction(repr(p)) * q for p, q in zip(a, x0, strict=True)))
        rows.append((a, side, side))
    rows.append(([1.0] * n, None, float(sum(x0)) + float(rng.choice([0, 0.3, 2]))))
    return {"vars": [(0.0, 10.0, bool(rng.random() < .5)) for _ in range(n)], "rows": rows,
            "obj": [float(rng.choice(dec) * rng.choice([-1, 1])) for _ in range(n)],
            "maximize": bool(rng.random() < .5), "decimal": True}


def large_integer_rows(rng: np.random.Generator) -> dict:
    """All-integer rows with whole coefficients up to 2e7 over the box [-3, 3]^n."""
    n = int(rng.integers(2, 5))
    x0 = [int(rng.integers(-3, 4)) for _ in range(n)]
    rows = []
    for _ in range(rng.integers(1, 3)):
        a = [float(int(10 ** rng.uniform(0, np.log10(2e7)) * rng.choice([-1, 1])))
             for _ in range(n)]
        act = sum(p * q for p, q in zip(a, x0, strict=True))
        s = float(rng.integers(0, 8))
        rows.append({"le": (a, None, act + s), "ge": (a, act - s, None), "eq": (a, act, act),
                     "rng": (a, act - s, act + s)}[str(rng.choice(["le", "ge", "eq", "rng"]))])
    return {"vars": [(-3.0, 3.0, True)] * n, "rows": rows,
            "obj": [float(rng.integers(-5, 6)) for _ in range(n)],
            "maximize": bool(rng.random() < .5)}


def small_objective(rng: np.random.Generator, low: float, high: float) -> dict:
    """Two rows over [0, 10]^n, objective coefficients of size 10**uniform(low, high)."""
    n = int(rng.integers(2, 4))
    a = [[float(rng.integers(1, 10)) for _ in range(n)] for _ in range(2)]
    x0 = [rng.uniform(0, 10) for _ in range(n)]
    acts = [sum(p * q for p, q in zip(row, x0, strict=True)) for row in a]
    rows = [(a[0], None, acts[0] + rng.uniform(0, 1)), (a[1], acts[1] - rng.uniform(0, 1), None)]
    scale = float(10 ** rng.uniform(low, high))
    return {"vars": [(0.0, 10.0, bool(rng.random() < .5))] * n, "rows": rows,
            "obj": [scale * float(rng.integers(-9, 10)) for _ in range(n)],
            "maximize": bool(rng.random() < .5)}


def fixed_charge(big_m: float, demand: float, unit: float, charge: float,
                 alternative: float) -> dict:
    """min unit*x + charge*y + alternative*z: x <= M*y, x + z >= demand, y binary."""
    return {"vars": [(0.0, big_m, False), (0.0, 1.0, True), (0.0, 1e3, False)],
            "rows": [([1.0, -big_m, 0.0], None, 0.0), ([1.0, 0.0, 1.0], demand, None)],
            "obj": [unit, charge, alternative], "maximize": False}


# --- tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("solver", SOLVERS)
def test_degenerate_lps_duals_certify_the_exact_optimum(solver: str) -> None:
    # every loaded dual/rc pair must be sign-feasible and reach the exact optimum (strong
    # duality): sum y_i * side_i + sum rc_j * bound_j, the side each sign points at
    for seed in range(12):
        spec = lp_degenerate(np.random.default_rng(seed))
        expected = exact(spec)
        if expected is None:
            continue
        m, result = assert_matches(spec, solver, duals=True)
        assert result.extra["duals"]["loaded"]
        value = Fraction(0)
        up = spec["maximize"]  # a positive dual prices the upper side of a maximization
        for con, (_, lo, hi) in zip(m.c.values(), spec["rows"], strict=True):
            y = m.dual[con]
            if abs(y) > 1e-9:
                side = (hi if (y > 0) == up else lo)
                assert side is not None, (seed, con.name, y)
                value += Fraction(y) * Fraction(side)
        for j, (lb, ub, _) in enumerate(spec["vars"]):
            r = m.rc[m.x[j]]
            if abs(r) > 1e-9:
                value += Fraction(r) * Fraction(ub if (r > 0) == up else lb)
        assert abs(float(value - expected)) <= 1e-7 * max(1.0, abs(float(expected))), seed


@pytest.mark.parametrize("solver", SOLVERS)
def test_nearly_parallel_rows_agree_with_the_exact_lp(solver: str) -> None:
    for seed in range(10):
        assert_matches(lp_parallel(np.random.default_rng(seed)), solver, rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_decimal_equality_rows_are_solved_as_the_decimals_mean(solver: str) -> None:
    # 2.675*x0 + 1.1*x2 == 8.175 has the whole-number point (1, 5) only in decimal
    # arithmetic; the solvers' tolerance finds it, so the answer is the decimal model's
    for seed in range(12):
        spec = decimal_rows(np.random.default_rng(seed))
        if exact(spec) is not None:
            assert_matches(spec, solver, rel=1e-7)


@pytest.mark.parametrize("solver", SOLVERS)
def test_large_all_integer_rows_are_exactly_optimal(solver: str) -> None:
    # whole coefficients up to 2e7: the integral-row check (integral_rows.py) re-solves
    # where the first answer missed a row; the final answer is the exact optimum
    for seed in range(10):
        spec = large_integer_rows(np.random.default_rng(seed))
        m, _ = assert_matches(spec, solver, rel=1e-9)
        assert exactly_feasible(spec, m, 0)


def test_large_integer_row_past_1e8_is_unknown_with_a_clear_warning() -> None:
    # sides past 1e8 with bounds 1e9: SCIP's tolerance floor cannot judge the row; coplug
    # must not call the rounded point optimal, and must say so by name
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-1e9, 1e9))
    m.row = pyo.Constraint(expr=-7 * m.x[0] - 4 * m.x[1] - 2 * m.x[2] == -3348853276)
    m.o = pyo.Objective(expr=m.x[0] - 3 * m.x[1] + 2 * m.x[2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = solve(m, solver="scip")
    activity = sum(c * round(m.x[j].value) for j, c in enumerate([-7, -4, -2]))
    if result.status is Status.OPTIMAL:
        assert activity == -3348853276
    else:
        assert result.status is Status.UNKNOWN
        assert "row" in result.extra["violated_rows"]
        text = " ".join(str(w.message) for w in caught)
        assert "violates" in text and "'row'" in text and "rescale" in text


@pytest.mark.parametrize("solver", SOLVERS)
def test_objective_just_above_the_tolerances_is_exact_and_silent(solver: str) -> None:
    for seed in range(8):
        spec = small_objective(np.random.default_rng(seed), -5.9, -4)
        expected = exact(spec)
        if expected is None:
            continue
        m = build(spec)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no tiny-objective warning at 1e-6 .. 1e-4
            result = solve(m, solver=solver)
        assert result.status is Status.OPTIMAL
        assert abs(result.objective - float(expected)) <= 1e-4 * abs(float(expected)) + 1e-12


@pytest.mark.parametrize("solver", SOLVERS)
def test_objective_below_the_tolerances_warns(solver: str) -> None:
    spec = small_objective(np.random.default_rng(3), -9, -8)
    with pytest.warns(UserWarning, match="below the solvers' absolute tolerances"):
        result = solve(build(spec), solver=solver)
    assert result.status is Status.OPTIMAL


@pytest.mark.parametrize("big_m", [1e5, 1e6, 1e7, 1e8, 1e9])
def test_scip_pays_the_fixed_charge_at_any_big_m(big_m: float) -> None:
    # x <= M*y with y = 5e-7 "integral" would carry 50 units for free at M = 1e8
    for demand, unit, charge, alternative in [(50.0, 1.0, 100.0, 10.0),
                                              (100.0, 1.7, 705.7, 32.4),
                                              (0.5, 0.3, 20.0, 60.0)]:
        spec = fixed_charge(big_m, demand, unit, charge, alternative)
        m, _ = assert_matches(spec, "scip", rel=1e-9)
        assert m.x[0].value <= big_m * m.x[1].value


@pytest.mark.parametrize("big_m", [1e5, 1e6])
def test_highs_pays_the_fixed_charge_at_moderate_big_m(big_m: float) -> None:
    spec = fixed_charge(big_m, 50.0, 1.0, 100.0, 10.0)
    m, _ = assert_matches(spec, "highs", rel=1e-9)
    assert m.x[0].value <= big_m * m.x[1].value


@pytest.mark.parametrize("solver", SOLVERS)
def test_long_wedge_is_bounded_and_an_opening_one_unbounded(solver: str) -> None:
    # y <= a x + b1 and y >= a (1 + eps) x - b2 over x, y >= 0 with no upper bounds: for
    # eps >= 1e-6 the wedge closes at x ~ 1/eps (optimum up to ~1e7); for eps < 0 it opens
    for eps, expect_bounded in [(1e-3, True), (1e-5, True), (1e-6, True), (-1e-6, False)]:
        a, b1, b2 = 1.5, 3.0, 2.0
        spec = {"vars": [(0.0, None, False), (0.0, None, False)],
                "rows": [([-a, 1.0], None, b1), ([a * (1 + eps), -1.0], None, b2)],
                "obj": [1.0, 1.0], "maximize": True}
        result = solve(build(spec), solver=solver)
        if expect_bounded:
            expected = float(exact_lp(spec))
            assert result.status is Status.OPTIMAL, eps
            assert abs(result.objective - expected) <= 1e-6 * expected, (eps, expected)
        else:
            assert result.status is Status.UNBOUNDED, eps
