"""Review s12: integral rows, MIP starts, the SCIP walker, files and the registry, probed
as a demanding Pyomo/SCIP user would."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.errors import InputError
from coplug.plugins.files import solve_file
from coplug.plugins.results import Status


@pytest.mark.parametrize("text", ["", "\\ only a comment\n", "Minimize\n obj:\nEnd\n"])
def test_a_file_without_variables_is_refused_by_both_solvers(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.lp"
    path.write_text(text)
    for solver in ("scip", "highs"):  # HiGHS answered 'unknown' without a word
        with pytest.raises(InputError, match="defines no variables"):
            solve_file(path, solver=solver)


@pytest.mark.parametrize("sense, bound", [("Maximize", math.inf), ("Minimize", -math.inf)])
def test_an_unbounded_file_has_an_infinite_bound_in_both_solvers(tmp_path: Path, sense: str,
                                                                 bound: float) -> None:
    path = tmp_path / "unbounded.lp"
    sign = "" if sense == "Maximize" else "-"
    path.write_text(f"{sense}\n obj: {sign}x\nSubject To\n c1: x >= 3\nEnd\n")
    for solver in ("scip", "highs"):  # HiGHS's bound was None, SCIP's and solve()'s +-inf
        result = solve_file(path, solver=solver)
        assert result.status is Status.UNBOUNDED
        assert result.bound == bound


@pytest.mark.parametrize("solver", [None, 3, ["scip"]])
def test_solve_file_names_a_solver_that_is_not_a_name(tmp_path: Path, solver: object) -> None:
    path = tmp_path / "m.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n c1: x >= 1\nEnd\n")
    with pytest.raises(InputError, match="solver must be 'scip' or 'highs'"):
        solve_file(path, solver=solver)  # was AttributeError: ... has no attribute 'lower'


def test_solve_file_names_a_path_that_is_not_a_path() -> None:
    with pytest.raises(InputError, match="path must be the name of an .mps or .lp file"):
        solve_file(None)  # was Path's TypeError


@pytest.mark.parametrize("inf_ok", [False, True])
def test_check_positive_refuses_an_int_past_floats_range(inf_ok: bool) -> None:
    from coplug.formulations.checks import check_positive

    with pytest.raises(InputError, match="scale must be a"):
        check_positive(10**400, "scale", inf_ok=inf_ok)  # was OverflowError from math.isnan
    assert check_positive(10**300, "scale") == 1e300


def _big_coefficient_row(coef: int, sense: str = "max") -> pyo.ConcreteModel:
    """`coef * x <= -1` with x in {-1, 0}: only x = -1 meets it. SCIP's presolve derives
    x <= -1/coef, which its feasibility tolerance rounds up to 0 once coef passes 1e6."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(-1, 0))
    m.c = pyo.Constraint(expr=coef * m.x <= -1)
    m.o = pyo.Objective(expr=3 * m.x, sense=pyo.maximize if sense == "max" else pyo.minimize)
    return m


@pytest.mark.parametrize("coef", [2_999_997, 10**7, 10**8])
def test_a_large_coefficient_on_a_small_side_is_judged_exactly(coef: int) -> None:
    m = _big_coefficient_row(coef)
    result = solve(m)  # SCIP alone: 'optimal' at x = 0, which misses the row by 1
    assert coef * round(m.x.value) <= -1
    highs = solve(_big_coefficient_row(coef), solver="highs")
    assert result.optimal and result.objective == highs.objective
    assert result.extra["feastol"] <= 0.1 / coef


def test_a_coefficient_beyond_the_floor_is_solved_by_the_retry_without_linear_presolve(
) -> None:
    """At 1e10 even feastol 1e-9 let SCIP's presolve round x <= -1e-10 to 0: this came back
    'unknown' (x = 0 misses the row by 1) until the retry ran without the linear presolve."""
    m = _big_coefficient_row(10**10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(m)
    assert result.status is Status.OPTIMAL and round(m.x.value) == -1
    assert result.extra["runs"] == 2 and result.extra["first_solve"]["objective"] == 0.0


def test_a_large_coefficient_row_in_a_file_is_judged_exactly(tmp_path: Path) -> None:
    path = tmp_path / "coef.lp"
    _big_coefficient_row(2_999_997).write(str(path), io_options={"symbolic_solver_labels": True})
    result = solve_file(path)
    assert result.optimal
    assert result.objective == solve_file(path, solver="highs").objective


def _borderline_integral() -> pyo.ConcreteModel:
    """SCIP's optimum puts x[3] at 0.999999, which its integrality tolerance takes as 1; the
    row at x[3] = 1 is missed by 2."""
    m = pyo.ConcreteModel()
    bounds = {0: (-2, -1), 1: (-1, 2), 2: (0, 3), 3: (-1, 1)}
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=bounds)
    m.row = pyo.Constraint(expr=3000002 * m.x[0] - 1000002 * m.x[1] + 999999 * m.x[2]
                           + 2000000 * m.x[3] == -4000009)
    m.o = pyo.Objective(expr=5 * m.x[0] + m.x[1] + 2 * m.x[2] - 3 * m.x[3])
    return m


def test_a_value_just_past_the_integrality_tolerance_is_judged_rounded() -> None:
    m = _borderline_integral()
    points = itertools.product(*(range(int(v.lb), int(v.ub) + 1) for v in m.x.values()))
    exact = min(5 * a + b + 2 * c - 3 * d for a, b, c, d in points
                if 3000002 * a - 1000002 * b + 999999 * c + 2000000 * d == -4000009)
    result = solve(m)  # was 'optimal' -9.999997 with x[3] = 0.999999
    assert result.optimal and result.objective == pytest.approx(exact, abs=1e-6)
    assert all(v.value == round(v.value) for v in m.x.values())
    assert pyo.value(m.row.body) == -4000009
    assert solve(_borderline_integral(), solver="highs").objective == pytest.approx(exact)


def _presolved_away() -> pyo.ConcreteModel:
    """A row SCIP's presolve at its default tolerance calls infeasible; it has whole-number
    solutions."""
    m = pyo.ConcreteModel()
    bounds = {0: (-2, 0), 1: (-2, 1), 2: (0, 2), 3: (-2, 1)}
    m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=bounds)
    m.row = pyo.Constraint(expr=15000000 * m.x[0] - 5000001 * m.x[1] + 4999999 * m.x[2]
                           - 4999998 * m.x[3] == 14999995)
    m.o = pyo.Objective(expr=-3 * m.x[0] + 5 * m.x[1] - m.x[2] - m.x[3])
    return m


@pytest.mark.parametrize("divided", [True, False])
def test_an_infeasible_verdict_is_checked_at_the_tightened_tolerance(divided: bool,
                                                                     monkeypatch) -> None:
    """SCIP's first solve called this model infeasible; with the row divided
    (`row_scaling`) it finds a point 1 off instead, which the exact check refutes too."""
    from coplug.plugins import row_scaling

    if not divided:  # the rows as written: SCIP's presolve says "infeasible"
        monkeypatch.setattr(row_scaling, "SCALE_COEF", float("inf"))
    m = _presolved_away()
    points = itertools.product(*(range(int(v.lb), int(v.ub) + 1) for v in m.x.values()))
    exact = min(-3 * a + 5 * b - c - d for a, b, c, d in points
                if 15000000 * a - 5000001 * b + 4999999 * c - 4999998 * d == 14999995)
    result = solve(m)  # was 'infeasible'
    assert result.optimal and result.objective == pytest.approx(exact)
    assert pyo.value(m.row.body) == 14999995
    assert "first_solve" in result.extra
    if not divided:
        assert result.extra["first_solve"]["objective"] is None
    assert solve(_presolved_away(), solver="highs").objective == pytest.approx(exact)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_truly_infeasible_model_stays_infeasible_after_the_check(solver: str) -> None:
    m = _presolved_away()
    m.row.set_value(15000000 * m.x[0] - 5000001 * m.x[1] + 4999999 * m.x[2]
                    - 4999998 * m.x[3] == 14999994.5)  # a whole-number activity cannot
    assert solve(m, solver=solver).status is Status.INFEASIBLE
