"""Review s12: integral rows, MIP starts, the SCIP walker, files and the registry, probed
as a demanding Pyomo/SCIP user would."""

from __future__ import annotations

import math
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


def test_a_coefficient_beyond_the_floor_is_reported_not_optimal() -> None:
    m = _big_coefficient_row(10**10)
    with pytest.warns(UserWarning, match="'c' by 1: .* sides or coefficients this large"):
        result = solve(m)
    assert round(m.x.value) == 0  # SCIP's answer, which misses the row: not called optimal
    assert result.status is Status.UNKNOWN
    assert result.extra["violated_rows"] == {"c": 1.0}


def test_a_large_coefficient_row_in_a_file_is_judged_exactly(tmp_path: Path) -> None:
    path = tmp_path / "coef.lp"
    _big_coefficient_row(2_999_997).write(str(path), io_options={"symbolic_solver_labels": True})
    result = solve_file(path)
    assert result.optimal
    assert result.objective == solve_file(path, solver="highs").objective
