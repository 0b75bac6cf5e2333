"""Review s12: integral rows, MIP starts, the SCIP walker, files and the registry, probed
as a demanding Pyomo/SCIP user would."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

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
