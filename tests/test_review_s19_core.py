"""Review of `coplug.plugins.solve`'s core and the `coplug` command line (nineteenth
session): bad input is refused by name, answers are checked against the solvers."""

from __future__ import annotations

import math

import pyomo.environ as pyo
import pytest

from coplug.plugins import solve
from coplug.plugins.errors import InputError


def _lp() -> pyo.ConcreteModel:
    """max x0 + x1 over x0 + 2 x1 <= 4, 3 x0 + x1 <= 6, x >= 0 (optimum 2.8)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] <= 4)
    m.d = pyo.Constraint(expr=3 * m.x[0] + m.x[1] <= 6)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    return m


@pytest.mark.parametrize("name", ["primal_feasibility_tolerance", "dual_feasibility_tolerance",
                                  "small_matrix_value", "mip_feasibility_tolerance"])
def test_highs_option_nan_is_refused_by_name(name: str) -> None:
    # HiGHS's range checks let NaN through: primal_feasibility_tolerance=nan called this
    # LP optimal at 4.0 (the optimum is 2.8), small_matrix_value=nan a knapsack infeasible
    with pytest.raises(InputError, match=f"{name}.*nan"):
        solve(_lp(), solver="highs", **{name: math.nan})


_MPS = """NAME          TEST
ROWS
 N  obj
 L  c1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    x         obj       {cx}           c1        {ax}
    y         obj       -1.0           c1        3.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       c1        {rhs}
BOUNDS
 UP BND       x         {ux}
 UP BND       y         3
ENDATA
"""


def _mps(tmp_path, **changed: str):
    """max x + y over 2 x + 3 y <= 7, 0 <= x, y <= 3 integer (optimum -3 as a minimum),
    with the entries in `changed` replaced (cx, ax, rhs, ux)."""
    data = {"cx": "-1.0", "ax": "2.0", "rhs": "7.0", "ux": "3", **changed}
    path = tmp_path / "model.mps"
    path.write_text(_MPS.format(**data))
    return path


def test_file_solves_as_reference(tmp_path) -> None:
    from coplug.plugins import solve_file

    for solver in ("scip", "highs"):
        assert solve_file(_mps(tmp_path), solver=solver).objective == pytest.approx(-3.0)


# SCIP looped past its time limit on the NaN objective coefficient, called the NaN side
# optimal at -6 (the row dropped) and raised a bare "SCIP: error in input data!" for the
# NaN bound; HiGHS called the NaN coefficient optimal at -3 and the NaN cost optimal at nan.
@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize(("entry", "named"), [("cx", "objective.*'x'"),
                                              ("ax", "'c1'.*'x'"),
                                              ("ux", "bound.*'x'")])
def test_file_with_nan_is_refused_by_name(tmp_path, solver: str, entry: str,
                                          named: str) -> None:
    from coplug.plugins import solve_file

    path = _mps(tmp_path, **{entry: "nan"})
    pattern = f"model.mps.*{named}.*nan"
    with pytest.raises(InputError, match=pattern):
        solve_file(path, solver=solver, time_limit=5)


def test_scip_file_with_nan_side_is_refused(tmp_path) -> None:
    from coplug.plugins import solve_file

    with pytest.raises(InputError, match="model.mps.*'c1'.*nan"):
        solve_file(_mps(tmp_path, rhs="nan"), solver="scip", time_limit=5)


def test_lp_file_with_nan_coefficient_is_refused(tmp_path) -> None:
    from coplug.plugins import solve_file

    path = tmp_path / "model.lp"
    path.write_text("Minimize\n obj: x + y\nSubject To\n c1: nan x + 2 y >= 1\nBounds\n"
                    " 0 <= x <= 3\n 0 <= y <= 3\nEnd\n")
    with pytest.raises(InputError, match="model.lp.*'c1'.*'x'.*nan"):
        solve_file(path, solver="scip", time_limit=5)


def test_explain_infeasible_file_with_nan_is_refused(tmp_path) -> None:
    from coplug.plugins import explain_infeasible_file

    with pytest.raises(InputError, match="model.mps.*'c1'.*'x'.*nan"):
        explain_infeasible_file(_mps(tmp_path, ax="nan"), time_limit=5)


def _point(value: float, domain=pyo.Integers, bounds=(None, None)) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=domain, bounds=bounds)
    m.x.set_value(value, skip_validation=True)
    return m


@pytest.mark.parametrize("value", [math.inf, -math.inf])
@pytest.mark.parametrize("domain", [pyo.Integers, pyo.Reals])
def test_infeasibilities_of_an_infinite_value(value: float, domain) -> None:
    from coplug.plugins import infeasibilities

    # an integer at inf raised OverflowError from round(); a free real at inf passed
    assert infeasibilities(_point(value, domain)) == {"x": math.inf}


def test_infeasibilities_of_a_nan_side() -> None:
    from coplug.plugins import infeasibilities

    m = _point(2.0, pyo.Reals)
    m.p = pyo.Param(initialize=math.nan, mutable=True, within=pyo.Any)
    m.c = pyo.Constraint(expr=m.x <= m.p)
    assert infeasibilities(m) == {"c": math.inf}  # was {}: NaN compares false


def test_infeasibilities_takes_a_numpy_tolerance_and_refuses_a_non_model() -> None:
    import numpy as np

    from coplug.plugins import infeasibilities

    m = _point(2.0, pyo.Reals)
    m.c = pyo.Constraint(expr=m.x <= 1)
    assert infeasibilities(m, tol=np.float64(0.5)) == {"c": pytest.approx(1.0)}
    assert infeasibilities(m, tol=np.float32(2.0)) == {}
    with pytest.raises(InputError, match="Pyomo model.*None"):
        infeasibilities(None)


def test_infeasibilities_names_a_value_that_is_no_number() -> None:
    from coplug.plugins import infeasibilities

    with pytest.raises(InputError, match="'x'.*'abc'"):
        infeasibilities(_point("abc", pyo.Reals))


@pytest.mark.parametrize("model", [None, 3, "model.mps"])
def test_explain_infeasible_refuses_what_is_no_model(model) -> None:
    from coplug.plugins import explain_infeasible

    with pytest.raises(InputError, match="Pyomo model"):  # was AttributeError on None
        explain_infeasible(model)


def test_highs_iteration_limit_reads_alike_from_a_file_and_a_model(tmp_path) -> None:
    from coplug.plugins import solve_file

    path = tmp_path / "model.lp"
    path.write_text("Maximize\n obj: x0 + x1\nSubject To\n c: x0 + 2 x1 <= 4\n"
                    " d: 3 x0 + x1 <= 6\nEnd\n")
    model = solve(_lp(), solver="highs", simplex_iteration_limit=1)
    read = solve_file(path, solver="highs", simplex_iteration_limit=1)
    # the file's stop was 'unknown' (no HiGHS status name matched), the model's node_limit
    assert read.status is model.status
    assert read.has_solution == model.has_solution


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_binary_with_empty_bounds_makes_the_model_infeasible(solver: str) -> None:
    """SCIP refused a binary with bounds (1, -1) with a bare "error in input data"."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, 1))
    m.x.setlb(1)
    m.x.setub(-1)
    m.o = pyo.Objective(expr=m.x + m.y)
    assert solve(m, solver=solver).status.name == "INFEASIBLE"
    m.x.setub(1)
    result = solve(m, solver=solver)
    assert result.status.name == "OPTIMAL" and result.objective == pytest.approx(1.0)


@pytest.mark.parametrize("spelling", ["NaN", "NAN", "-nan"])
def test_scip_file_with_nan_in_any_case_is_refused(tmp_path, spelling: str) -> None:
    from coplug.plugins import solve_file

    with pytest.raises(InputError, match="model.mps.*'c1'.*'x'.*nan"):
        solve_file(_mps(tmp_path, ax=spelling), solver="scip", time_limit=5)


def test_files_spelling_no_nan_skip_the_row_walk(tmp_path) -> None:
    from coplug.plugins.files import _spells_no_nan

    clean = _mps(tmp_path)
    assert _spells_no_nan(clean.read_bytes())
    named = clean.read_text().replace("c1", "finance")  # 'nan' inside a name: walked, to
    assert not _spells_no_nan(named.encode())  # be safe
