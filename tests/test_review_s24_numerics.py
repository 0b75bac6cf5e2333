"""Review of session 24 (numbers the solvers read otherwise than written): coefficients the
solvers drop as zeros, reduced costs at large scale, objective coefficients HiGHS reads as
infinite in a file. Each answer is checked against the model's own arithmetic."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pyomo.environ as pyo
import pytest
from scipy.optimize import linprog

from coplug.plugins import InputError, SolverError, Status, solve
from coplug.plugins.files import solve_file


def _dropped(upper: float | None) -> pyo.ConcreteModel:
    """max x, 1e-10 x + y <= 1, x <= 1e11: the first row allows x up to 1e10 only."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(bounds=(0, upper)), pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=1e-10 * m.x + m.y <= 1)
    m.d = pyo.Constraint(expr=m.x <= 1e11)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("upper", [1e12, None])
def test_a_term_the_solvers_drop_is_named_where_it_matters(solver, upper):
    with pytest.warns(UserWarning, match=r"constraint 'c': the coefficient 1e-10 of x is at or "
                                         r"below the solvers' zero"):
        result = solve(_dropped(upper), solver=solver)
    assert result.objective > 1e10 * (1 + 1e-6)  # what the warning is about: the row's 1e10


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_dropped_term_that_cannot_move_its_row_is_left_alone(solver):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(_dropped(100.0), solver=solver)  # 1e-10 * 100 = 1e-8 at most
    assert result.objective == pytest.approx(100.0)


def _scaled(shift: float) -> pyo.ConcreteModel:
    """min (1e9 + 500) x + 1e9 z, 1e9 x + 1e9 z >= 1e9, x >= shift, z >= 0."""
    m = pyo.ConcreteModel()
    m.x, m.z = pyo.Var(bounds=(shift, None)), pyo.Var(bounds=(0, None))
    m.row = pyo.Constraint(expr=1e9 * m.x + 1e9 * m.z >= 1e9)
    m.o = pyo.Objective(expr=(1e9 + 500) * m.x + 1e9 * m.z)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_reduced_cost_at_a_large_scale_is_kept(solver):
    """x's reduced cost is 500: raising its bound to 1 costs exactly that (it was loaded as
    0, a relative round-off allowance of 1e-6 of 2e9)."""
    m = _scaled(0.0)
    result = solve(m, solver=solver)
    shifted = solve(_scaled(1.0), solver=solver)
    reference = linprog([1e9 + 500, 1e9], A_ub=[[-1e9, -1e9]], b_ub=[-1e9],
                        bounds=[(0, None)] * 2, method="highs")
    assert m.rc[m.x] == pytest.approx(shifted.objective - result.objective, rel=1e-6)
    assert m.rc[m.x] == pytest.approx(reference.lower.marginals[0], rel=1e-6)
    assert m.dual[m.row] == pytest.approx(1.0) and m.rc[m.z] == pytest.approx(0.0, abs=1e-6)


def test_highs_reading_an_objective_coefficient_as_infinite_is_refused(tmp_path: Path):
    """x in [0, 3] with cost -1e25 came back "optimal" with objective -inf."""
    path = tmp_path / "huge_cost.mps"
    path.write_text("NAME huge\nROWS\n N obj\n L c\nCOLUMNS\n x obj -1e25 c 1\n y obj -1 c 1\n"
                    "RHS\n rhs c 5\nBOUNDS\n UP bnd x 3\n UP bnd y 3\nENDATA\n")
    with pytest.raises(InputError, match=r"huge_cost.mps: the objective coefficient of 'x' is "
                                         r"-inf as HiGHS reads it"):
        solve_file(path, solver="highs")


def test_terms_that_cancel_leave_no_warning():
    """0.3 y + 0.6 y + 0.1 y - y leaves -1.1e-16 y: float noise, not a dropped term."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, None))
    m.z = pyo.Var(bounds=(0, None))
    m.bal = pyo.Constraint(expr=0.3 * m.y + 0.6 * m.y + 0.1 * m.y - m.y + m.z <= 5)
    m.link = pyo.Constraint(expr=m.z == 0.1 * m.y)
    m.o = pyo.Objective(expr=-m.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert solve(m, solver="highs").objective == pytest.approx(-50.0)


def _random_lp(seed: int) -> pyo.ConcreteModel:
    """A small LP with costs near 1e10 (a review's generator)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 7)), int(rng.integers(1, 6))
    a = np.round(rng.normal(size=(k, n)), 1) * (rng.random((k, n)) < 0.7)
    c = np.round(rng.normal(size=n) * 10, 1) * 1e9
    kinds = rng.choice(["box", "fixed", "free", "lo", "up"], size=n, p=[.45, .1, .1, .2, .15])
    bounds = {"box": (-3, 4), "fixed": (1.5, 1.5), "free": (None, None), "lo": (0, None),
              "up": (None, 2)}
    sides = rng.choice(["le", "ge", "eq", "rng"], size=k)
    b = np.round(rng.normal(size=k) * 3, 1)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), bounds=lambda _m, j: bounds[kinds[j]])

    def row(m, i):
        body = sum(a[i, j] * m.x[j] for j in range(n) if a[i, j])
        if isinstance(body, (int, float)):
            return pyo.Constraint.Skip
        return {"le": body <= b[i], "ge": body >= b[i], "eq": body == b[i],
                "rng": pyo.inequality(b[i] - 1, body, b[i] + 1)}[sides[i]]

    m.r = pyo.Constraint(range(k), rule=row)
    m.o = pyo.Objective(expr=sum(c[j] * m.x[j] for j in range(n)))
    return m


@pytest.mark.parametrize("seed", [28, 39, 72, 159])
def test_highs_stuck_on_huge_costs_solves_again_scaled(seed):
    """HiGHS's dual simplex gave up ("excessive dual values", status 'Not Set'; seed 28:
    'Postsolve error') and solve() raised; solved again at a power-of-two objective scale it
    agrees with SCIP."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        highs = solve(_random_lp(seed), solver="highs")
        scip = solve(_random_lp(seed), solver="scip")
    costs = [abs(c) for c in _random_lp(seed).o.expr.linear_coefs]
    scale = highs.extra["user_objective_scale"]
    assert 1e6 / 2 < max(costs) * 2.0**scale <= 1e6  # the largest cost scaled to about 1e6
    assert highs.status is scip.status
    if scip.objective is not None:
        assert highs.objective == pytest.approx(scip.objective, rel=1e-9)


@pytest.mark.parametrize("sense,build,truth", [
    (pyo.minimize, lambda m: m.x ** 2 - 2e7 * m.x, -1e14),
    (pyo.maximize, lambda m: -m.x ** 2 + 2e7 * m.x, 1e14),
    (pyo.minimize, lambda m: (m.x - 1e8) ** 2 + (m.y + 3e7) ** 2 + 5, 5.0),
])
def test_highs_calling_a_strictly_convex_qp_unbounded_is_an_error(sense, build, truth):
    """Such a model is bounded (SCIP: -1e14, 1e14, 5); HiGHS said unbounded."""
    def model() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x, m.y = pyo.Var(), pyo.Var()
        m.o = pyo.Objective(expr=build(m), sense=sense)
        return m


    with pytest.raises(SolverError, match="no direction its rows and bounds allow"):
        solve(model(), solver="highs")
    with warnings.catch_warnings():  # SCIP may value its point loosely: the point's value
        warnings.simplefilter("ignore")
        assert solve(model(), solver="scip").objective == pytest.approx(truth, rel=1e-9)


def test_a_singular_convex_qp_stays_unbounded_on_highs():
    """(x - y)**2 + x is unbounded along x = y -> -inf: HiGHS is right there."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.o = pyo.Objective(expr=(m.x - m.y) ** 2 + m.x)
    assert solve(m, solver="highs").status is Status.UNBOUNDED


def test_a_dropped_objective_coefficient_is_named_and_the_point_valued():
    """min y - x / 1e9 s.t. exp(x / 1e9) <= y: true optimum 1. SCIP drops the 1e-9 and said
    "optimal" 0 at a point where the objective is 16.2."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.c = pyo.Constraint(expr=pyo.exp(m.x / 1e9) <= m.y)
    m.o = pyo.Objective(expr=m.y - m.x / 1e9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = solve(m, solver="scip")
    said = " ".join(str(w.message) for w in caught)
    assert "objective 'o': the coefficient -1e-09 of x" in said
    assert result.status is not Status.OPTIMAL
    assert result.objective == pytest.approx(pyo.value(m.o), rel=1e-12)  # the point's own


def test_scips_objective_below_its_points_value_is_not_optimal():
    """(x - 1e9)**2 + (y + 2e9)**2 + 5: SCIP said -1e-8 "optimal", its point gives 5.07."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.o = pyo.Objective(expr=(m.x - 1e9) ** 2 + (m.y + 2e9) ** 2 + 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(m, solver="scip")
    assert result.objective == pytest.approx(pyo.value(m.o), rel=1e-12)
    assert result.objective >= 5 - 1e-9  # no point is below the minimum
    assert result.status is Status.OPTIMAL or "scip_objective" in result.extra


def test_a_nonlinear_objective_with_a_small_linear_term_is_no_tiny_objective():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1e-6, 1e9))
    m.o = pyo.Objective(expr=-pyo.log(m.x) + m.x / 1e7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m, solver="scip")
    assert result.objective == pytest.approx(1 - pyo.log(1e7), rel=1e-6)  # x = 1e7


def test_integers_made_whole_do_not_count_as_an_objective_gap(monkeypatch):
    """SCIP's integers may sit 1e-7 off a whole number, which coplug loads as whole: with
    coefficients of 1e6 that moves the objective by 0.1 each, no sign of a wrong objective."""
    import coplug.plugins.bridge as bridge

    real = bridge._load_scip_solution

    def a_hair_off(scip, var_map):
        real(scip, var_map)
        for var in var_map:
            var.set_value(var.value + (5e-7 if var.index() % 2 == 0 else -5e-7),
                          skip_validation=True)

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=(0, 3))
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 5)
    m.same = pyo.Constraint(expr=m.x[0] == m.x[1])
    m.o = pyo.Objective(expr=1e6 * m.x[0] - 1e6 * m.x[1] + 3 * m.x[2] + m.x[3],
                        sense=pyo.maximize)
    monkeypatch.setattr(bridge, "_load_scip_solution", a_hair_off)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(11)
    assert abs(pyo.value(m.o) - 11) > 0.9  # the loaded point: a whole 1.0 away


def test_a_shifted_quadratic_optimum_near_zero_stays_optimal():
    """sum a_i (x_i - c_i)**2 - C with C its optimum: float noise of 1e-5 on terms of 5e4
    was taken for a wrong objective (the result went 'feasible', its bound above it)."""
    a, c = [293, 237, 255, 171], [-5.2, 5.3, 8.1, -14.4]
    best = min(a[1] * (x1 - c[1]) ** 2 + a[2] * (x2 - c[2]) ** 2
               + a[3] * (max(c[3], x1 + x2 - 1.3) - c[3]) ** 2
               for x1 in range(-50, 51) for x2 in range(-50, 51))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(-50, 50))
    m.x[1].domain = m.x[2].domain = pyo.Integers
    m.con = pyo.Constraint(expr=3 * m.x[1] + 3 * m.x[2] - 3 * m.x[3] <= 3.9)
    m.o = pyo.Objective(expr=sum(a[i] * (m.x[i] - c[i]) ** 2 for i in range(4)) - best)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m, solver="scip")
    assert result.status is Status.OPTIMAL and abs(result.objective) < 1e-4


def test_a_bound_the_point_passes_becomes_unknown():
    """min y - 1e-10 x, x + y >= 1, x up to 1e12: optimum -100. SCIP, the 1e-10 dropped,
    bounded it by 0, above the point's -100."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(bounds=(0, 1e12)), pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    m.o = pyo.Objective(expr=m.y - 1e-10 * m.x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(m, solver="scip")
    assert result.objective == pytest.approx(-100.0)
    assert result.bound <= result.objective and result.status is Status.FEASIBLE


def test_race_gives_the_winners_warnings():
    """The racers' warnings stayed in their processes: the race named no dropped term."""
    from coplug.plugins import race

    with pytest.warns(UserWarning, match=r"constraint 'c': the coefficient 1e-10 of x"):
        result = race(_dropped(1e12))
    assert result.extra["race"]["winner"] in ("scip", "highs")


def test_files_get_highs_guards_too(tmp_path: Path):
    """solve_file with HiGHS: a strictly convex QP called unbounded is an error, and an LP
    with costs near 1e10 that HiGHS gave up on is solved again scaled, as in solve()."""
    from coplug.plugins.files import solve_file

    qp = tmp_path / "qp.mps"
    qp.write_text("NAME qp\nROWS\n N  o\nCOLUMNS\n    x o -20000000\nRHS\nBOUNDS\n FR BOUND x\n"
                  "QUADOBJ\n    x x 2\nENDATA\n")
    with pytest.raises(SolverError, match="no direction its rows and bounds allow"):
        solve_file(qp, solver="highs")
    lp = tmp_path / "lp28.mps"
    _random_lp(28).write(str(lp))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = solve_file(lp, solver="highs")
        truth = solve(_random_lp(28), solver="scip")
    assert "user_objective_scale" in found.extra
    assert found.objective == pytest.approx(truth.objective, rel=1e-9)


def test_highs_qp_optimum_is_certified_by_its_kkt_conditions():
    """min (0.01 x - y)**2 + 0.01 x goes to -inf along y = 0.01 x; HiGHS called -999.9
    optimal. Its duals do not make the gradient there a combination of the rows, and the
    ray (100, 1) shows the model unbounded."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.o = pyo.Objective(expr=(0.01 * m.x - m.y) ** 2 + 0.01 * m.x)
    with pytest.warns(UserWarning, match="without bound"):
        result = solve(m, solver="highs")
    assert result.status is Status.UNBOUNDED and result.bound == -math.inf
    assert not result.has_solution and result.objective is None


@pytest.mark.parametrize("seed", range(6))
def test_convex_qps_keep_their_certified_optimum(seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    a = rng.normal(size=(n, n))
    h, c = a @ a.T, rng.normal(size=n) * 10
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), bounds=(-5, 5))
    m.r = pyo.Constraint(expr=sum(m.x.values()) <= 1)
    m.o = pyo.Objective(expr=0.5 * sum(h[i, j] * m.x[i] * m.x[j] for i in range(n)
                                       for j in range(n)) + sum(c[i] * m.x[i] for i in range(n)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(solve(m, solver="scip").objective, rel=1e-6,
                                             abs=1e-6)


def test_pool_entries_carry_the_models_objective_where_scip_drops_a_term():
    """min y - x/1e9 s.t. exp(x/1e9) <= y: SCIP values points without the 1e-9 term, and
    the pool held 9e-8 for a point whose objective is 16."""
    from coplug.plugins import SolutionPool

    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.c = pyo.Constraint(expr=pyo.exp(m.x / 1e9) <= m.y)
    m.o = pyo.Objective(expr=m.y - m.x / 1e9)
    pool = SolutionPool(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solve(m, solver="scip", plugins=[pool])
    assert len(pool.solutions) >= 2
    for found in pool.solutions:
        at = found[m.y] - found[m.x] / 1e9
        assert found.objective == pytest.approx(at, rel=1e-9, abs=1e-9)
