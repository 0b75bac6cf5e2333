"""Session 41 review: what SCIP's MPS reader drops without a word, and the other findings
of this session's probes."""

from __future__ import annotations

from pathlib import Path

import pytest

from coplug.plugins.errors import InputError
from coplug.plugins.files import solve_file

_BASE = """NAME T
ROWS
 N obj
{rows}COLUMNS
 x obj -1 c1 1
{column} y obj -1 c1 1
RHS
 rhs c1 4{rhs}
{ranges}BOUNDS
 UP BND x 10
 UP BND y 10
ENDATA
"""


def _mps(tmp_path: Path, rows: str = " L c1\n", column: str = "", rhs: str = "",
         ranges: str = "") -> Path:
    path = tmp_path / "m.mps"
    path.write_text(_BASE.format(rows=rows, column=column, rhs=rhs, ranges=ranges))
    return path


@pytest.mark.parametrize("where, section", [
    ({"column": " x c2 1\n"}, "COLUMNS"),
    ({"rhs": " c2 1"}, "RHS"),
    ({"ranges": "RANGES\n rng c2 3\n"}, "RANGES"),
])
def test_scip_refuses_an_entry_for_a_row_rows_does_not_declare(tmp_path, where, section):
    """SCIP's reader dropped the entry and called the rest 'optimal' -4; HiGHS refuses the
    same file, and so does SCIP's path now, naming the row and the section."""
    path = _mps(tmp_path, **where)
    with pytest.raises(InputError, match=f"row 'c2' in the {section} section is not declared"):
        solve_file(path, solver="scip")
    with pytest.raises(InputError, match="not (in|defined)"):
        solve_file(path, solver="highs")


def test_highs_misreading_a_free_format_file_as_fixed_format_is_refused(tmp_path, capfd):
    """An undeclared row on a three-field COLUMNS line sent HiGHS's reader to its fixed-format
    parser, which made columns 'bj -1 c1' and '2 1' and printed raw memory; the warnings
    after those bytes were lost to the console capture, and the file 'solved' to 0 (-4)."""
    path = _mps(tmp_path, column=" x c2 1\n")
    with pytest.raises(InputError, match="fixed-format parser.* ignored 1 RHS entries"):
        solve_file(path, solver="highs")
    assert "un-decoded" not in capfd.readouterr().err


def test_scip_still_drops_entries_for_a_second_free_row_as_mps_says(tmp_path):
    """A free row past the objective is no constraint: its entries are ignored by both
    readers, and both agree on the optimum of the rest."""
    path = _mps(tmp_path, rows=" N obj2\n L c1\n", column=" x obj2 5\n")
    scip, highs = solve_file(path, solver="scip"), solve_file(path, solver="highs")
    assert scip.status.value == highs.status.value == "optimal"
    assert scip.objective == pytest.approx(highs.objective) == pytest.approx(-4.0)


def test_declared_rows_read_as_before_and_tee_shows_the_readers_lines(tmp_path, capfd):
    path = _mps(tmp_path, rows=" L c1\n L c2\n", column=" x c2 1\n", rhs=" c2 1")
    quiet = solve_file(path, solver="scip")
    assert quiet.objective == pytest.approx(highs := solve_file(path, solver="highs").objective)
    assert highs == pytest.approx(-4.0)  # x <= 1 by c2, y <= 3 by c1
    capfd.readouterr()
    solve_file(path, solver="scip", tee=True)
    assert "original problem has 2 variables" in capfd.readouterr().out


@pytest.mark.parametrize("rows, column, line", [
    (" L c1\n E\n", "", 5),  # SCIP's reader crashed the process (segmentation fault)
    (" L c1 x\n", "", 4),  # SCIP read a row 'c1_x' and dropped c1's entries
    (" L c1\n", " y obj c1 1\n", 7),  # SCIP read another entry; HiGHS switched format
    (" L c1\n", " y obj -1 c1 1 $ note\n y c1 1 1 $ four\n", 8),  # `$` comments read apart
])
def test_rows_and_columns_lines_of_odd_fields_are_refused_before_reading(
        tmp_path, rows, column, line):
    path = _mps(tmp_path, rows=rows, column=column)
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match=f"m.mps:{line}: the (ROWS|COLUMNS) line"):
            solve_file(path, solver=solver)


def test_comment_lines_keep_their_fields_out_of_the_count(tmp_path):
    path = _mps(tmp_path, rows=" L c1\n* a comment of six words here\n",
                column="* x obj c1\n x c1 0\n")
    scip, highs = solve_file(path, solver="scip"), solve_file(path, solver="highs")
    assert scip.objective == pytest.approx(highs.objective) == pytest.approx(-4.0)


def _assignment(cost, row_rule, col_rule=None, domain=None):
    import pyomo.environ as pyo

    n = len(cost)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), range(n), domain=domain or pyo.Binary)
    m.cost = pyo.Objective(expr=sum(float(cost[i][j]) * m.x[i, j]
                                    for i in range(n) for j in range(n)))
    m.row = pyo.Constraint(range(n), rule=lambda m, i: row_rule(
        sum(m.x[i, j] for j in range(n))))
    m.col = pyo.Constraint(range(n), rule=lambda m, j: (col_rule or (lambda s: s == 1))(
        sum(m.x[i, j] for i in range(n))))
    return m


_COST = [[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]]


@pytest.mark.parametrize("row_rule", [
    lambda s: 1e12 * s == 1e12 + 500,  # no whole sum meets it: HiGHS says infeasible
    lambda s: 1e12 * s <= 1e12 - 500,  # forces every sum to 0
    lambda s: 2 * s == 2 + 4e-9,
    lambda s: 1e-12 * s == 1e-12 * (1 + 1e-6),  # the sum itself 1e-6 off 1
])
def test_lap_path_refuses_a_scaled_side_off_by_more_than_rounding(row_rule):
    """The side was divided by the coefficient before the 1e-9 test: at 1e12 a side off by
    500 passed as 1, and the LAP path called a point missing every row by 500 optimal."""
    from coplug.plugins import solve
    from coplug.plugins.errors import UnsupportedModelError

    with pytest.raises(UnsupportedModelError, match="not of the form"):
        solve(_assignment(_COST, row_rule), solver="lap")


@pytest.mark.parametrize("row_rule, reference", [
    (lambda s: 1e12 * s == 1e12, "highs"),
    (lambda s: -3e13 * s == -3e13, "highs"),
    (lambda s: 1e-12 * s == 1e-12, None),  # HiGHS and SCIP drop such coefficients
    (lambda s: (1, s, float("inf")), "highs"),  # `>= 1`, "no bound" above as elsewhere
    (lambda s: (1, s, 1e25), "highs"),
])
def test_lap_path_reads_scaled_rows_and_infinite_sides(row_rule, reference):
    from scipy.optimize import linear_sum_assignment

    from coplug.plugins import solve

    rows, cols = linear_sum_assignment(_COST)
    optimum = sum(_COST[i][j] for i, j in zip(rows, cols, strict=True))
    lap = solve(_assignment(_COST, row_rule, lambda s: s <= 1), solver="lap")
    assert lap.status.value == "optimal" and lap.objective == pytest.approx(optimum)
    if reference is not None:
        other = solve(_assignment(_COST, row_rule, lambda s: s <= 1), solver=reference)
        assert other.objective == pytest.approx(lap.objective)


@pytest.mark.parametrize("rows", [
    "    L c1\n",  # SCIP joined type and name into one fixed-format field: a crash
    "\t\t\t\tL c1\n",
    "        L  c1\n",
    "    N obj2\n    L c1\n",
])
def test_scip_reads_rows_indented_four_blanks_or_more_as_highs_does(tmp_path, rows):
    path = _mps(tmp_path, rows=rows)
    scip, highs = solve_file(path, solver="scip"), solve_file(path, solver="highs")
    assert scip.objective == pytest.approx(highs.objective) == pytest.approx(-4.0)
    assert path.read_text().count(rows.splitlines()[-1]) == 1  # the caller's file is kept


@pytest.mark.parametrize("kind", ["1e30", "GG", "Lx"])
def test_a_row_type_of_more_than_one_letter_is_refused(tmp_path, kind):
    """SCIP's reader read the first letter ('GG' as G) or, for ' 1e30 c1', crashed."""
    path = _mps(tmp_path, rows=f" {kind} c1\n")
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match=f"m.mps:4: the row type '{kind}' is no N, E, L"):
            solve_file(path, solver=solver)


_LP = """\\ a model
Maximize
 obj: x + 2 y - 3 z + 0.5 w
Subject To
 c1: x + y + z <= 10
 c2: x - y >= -2
 c3: - 2 x + 3 z = 4
Bounds
 0 <= x <= 4
 y <= 3
 -1 <= z <= 5
 -2 <= w <= 2
General
 y
End
"""


@pytest.mark.parametrize("old, new, line", [
    (" c2: x - y >= -2", " c2: x - y >= -2 end", 6),  # SCIP: 'unbounded' for 2
    ("Subject To", "Subject To End", 4),
    (" c3: - 2 x", " c3: end - 2 x", 7),  # HiGHS read a column 'end': 14
    ("General", "General End", 13),
])
def test_an_lp_file_with_more_model_after_a_word_end_is_refused(tmp_path, old, new, line):
    path = tmp_path / "m.lp"
    path.write_text(_LP.replace(old, new, 1))
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match=f"m.lp:{line}: the word End ends the model"):
            solve_file(path, solver=solver)


@pytest.mark.parametrize("old, new", [
    (" c3:", " end:"),  # a row named end
    (" c3: - 2 x", " c3: x_end + end2 - 2 x"),  # columns whose names hold end
    ("Bounds", "\\\\ the end of the rows\nBounds"),
    ("End\n", "End\n\\\\ after the end\n\n"),
])
def test_end_in_names_comments_and_after_the_last_line_reads_as_before(tmp_path, old, new):
    path = tmp_path / "m.lp"
    path.write_text(_LP.replace(old, new, 1))
    scip, highs = solve_file(path, solver="scip"), solve_file(path, solver="highs")
    assert scip.status.value == highs.status.value == "optimal"
    assert scip.objective == pytest.approx(highs.objective)


def _varied_model():
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(0, 1))
    m.y = pyo.Var(range(3))
    m.p = pyo.Param(mutable=True, initialize=2.0)
    m.y[2].fix(1.5)
    m.e = pyo.Expression(expr=m.y[0] * m.y[1] + m.x[3])
    m.lin = pyo.Constraint(expr=sum(m.x[i] for i in range(3)) == 1)
    m.mono = pyo.Constraint(expr=m.p * m.x[0] + 3 * m.y[2] - m.x[1] <= 4)
    m.both = pyo.Constraint(expr=m.x[2] + 1 <= m.y[1])
    m.rng = pyo.Constraint(expr=(0, m.x[0] + m.y[0] ** 2, 5))
    m.named = pyo.Constraint(expr=m.e + m.x[1] >= -3)
    m.off = pyo.Constraint(expr=m.y[0] + m.x[3] <= 9)
    m.off.deactivate()
    m.b = pyo.Block()
    m.b.z = pyo.Var()
    m.b.c = pyo.Constraint(expr=m.b.z + m.x[2] * m.p + pyo.exp(m.y[1]) >= 0)
    m.o = pyo.Objective(expr=sum(m.x.values()) + m.e + 7)
    return m


def test_used_variables_are_pyomos_in_pyomos_order_read_faster():
    import pyomo.environ as pyo
    from pyomo.util.vars_from_expressions import get_vars_from_components

    from coplug.plugins.outer_variables import used_variables

    m = _varied_model()
    for block in (m, m.b):
        expected = list(get_vars_from_components(block, (pyo.Constraint, pyo.Objective),
                                                 active=True, include_fixed=True,
                                                 descend_into=True))
        assert [v.name for v in used_variables(block)] == [v.name for v in expected]


def test_the_factory_loader_gives_the_values_of_the_variables_the_solve_saw():
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.factory import SolverFactory

    import coplug.plugins  # noqa: F401  (registers the factories)

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 4))
    m.w = pyo.Var(bounds=(0, 1))  # in a deactivated row only
    m.y = pyo.Var(bounds=(0, 2))
    m.y.fix(1.5)
    m.p = pyo.Param(mutable=True, initialize=2.0)
    m.e = pyo.Expression(expr=m.x[2] - m.y)
    m.lin = pyo.Constraint(expr=m.p * m.x[0] + m.x[1] + 3 * m.y <= 8)
    m.named = pyo.Constraint(expr=m.e >= 0)
    m.off = pyo.Constraint(expr=m.w >= 1)
    m.off.deactivate()
    m.b = pyo.Block()
    m.b.z = pyo.Var(bounds=(0, 5))
    m.b.c = pyo.Constraint(expr=m.b.z <= m.x[0] + 1)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + m.e + m.b.z, sense=pyo.maximize)
    results = SolverFactory("coplug_highs").solve(m)
    primals = results.solution_loader.get_vars()
    assert sorted(v.name for v in primals) == ["b.z", "x[0]", "x[1]", "x[2]", "y"]
    assert all(primals[v] == pytest.approx(v.value) for v in primals)
    assert results.incumbent_objective == pytest.approx(pyo.value(m.o))


def test_an_untransformed_piecewise_linear_function_names_the_transformations():
    import pyomo.environ as pyo
    from pyomo.contrib.piecewise import PiecewiseLinearFunction

    from coplug.plugins import solve
    from coplug.plugins.errors import UnsupportedModelError

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.f = PiecewiseLinearFunction(points=[0, 2, 4], function=lambda x: (x - 2) ** 2)
    m.y = pyo.Var()
    m.link = pyo.Constraint(expr=m.y >= m.f(m.x))
    m.o = pyo.Objective(expr=m.y)
    with pytest.raises(UnsupportedModelError, match="contrib.piecewise.incremental"):
        solve(m, solver="highs")
    pyo.TransformationFactory("contrib.piecewise.incremental").apply_to(m)
    assert solve(m, solver="highs").objective == pytest.approx(0.0)


@pytest.mark.parametrize("sense", ["minimise", "Minimize:", "Minimize.", "maximise"])
def test_scip_refuses_an_lp_sense_word_its_reader_does_not_know(tmp_path, sense):
    """SCIP's reader dropped the objective: 'optimal' 0 at x = 100000 for min x."""
    path = tmp_path / "m.lp"
    path.write_text(f"{sense}\n obj: x\nSubject To\n c1: x >= 2\nBounds\n x <= 100000\nEnd\n")
    with pytest.raises(InputError, match="which SCIP's LP reader does not take for an obj"):
        solve_file(path, solver="scip")


@pytest.mark.parametrize("sense, best", [("MINIMUM", 2.0), ("min", 2.0), ("Maximum", 1e5)])
def test_scip_reads_the_lp_sense_words_it_knows(tmp_path, sense, best):
    path = tmp_path / "m.lp"
    path.write_text(f"{sense}\n obj: x\nSubject To\n c1: x >= 2\nBounds\n x <= 100000\nEnd\n")
    assert solve_file(path, solver="scip").objective == pytest.approx(best)


_BOUNDED = "Minimize\n obj: - x - y\nSubject To\n c1: x + y <= 10\nBounds\n{bounds}\nEnd\n"


@pytest.mark.parametrize("bounds", [
    " x <= 1,5\n y <= 2",  # SCIP read x <= 1 and a column ',5'
    " x <= 1d2\n y <= 2",
    " x <= 4\n y <= 2\nGenerales\n x",  # a column 'Generales': x stayed continuous
    " FREE x <= 3\n y <= 2",
    " x <= 3 rhs\n y <= 2",
])
def test_scip_refuses_lp_bounds_with_stray_words(tmp_path, bounds):
    path = tmp_path / "m.lp"
    path.write_text(_BOUNDED.format(bounds=bounds))
    with pytest.raises(InputError, match="the Bounds entry near .* is no bound"):
        solve_file(path, solver="scip")


@pytest.mark.parametrize("bounds", [
    " 0 <= x <= 4\n y <= 2",
    " -inf <= x <= 4\n y >= -5\n y <= +2.5e0",
    " x free\n -1e30 <= x\n x <= 4\n y = 2",
    " x >= -Infinity\n 4 >= x\n 2 >= y >= -1 \\ a comment\n",
    " x <= 4\n y <= 1e30\n y <= 2",
])
def test_plain_lp_bounds_read_alike(tmp_path, bounds):
    path = tmp_path / "m.lp"
    path.write_text(_BOUNDED.format(bounds=bounds))
    scip, highs = solve_file(path, solver="scip"), solve_file(path, solver="highs")
    assert scip.status.value == highs.status.value == "optimal"
    assert scip.objective == pytest.approx(highs.objective)


def test_scip_reads_bound_statements_sharing_a_line_and_a_spaced_sign(tmp_path):
    path = tmp_path / "m.lp"
    path.write_text(_BOUNDED.format(bounds=" -inf <= x <= 4 y >= - 5\n y <= +2.5e0"))
    assert solve_file(path, solver="scip").objective == pytest.approx(-6.5)


@pytest.mark.parametrize("text", [
    "Minimize\n obj: x\nSubject To\n c1: x + y >= 1\nBounds\n x >= 1e25\nEnd\n",
    "Minimize\n obj: x\nSubject To\n c1: x >= 1e25\nEnd\n",  # SCIP: 'infeasible'
    "Maximize\n obj: x\nSubject To\n c1: x <= 5\nBounds\n -1e21 <= x <= -1e21\nEnd\n",
])
def test_scip_refuses_a_bound_or_side_past_infinity_that_no_point_meets(tmp_path, text):
    path = tmp_path / "m.lp"
    path.write_text(text)
    with pytest.raises(InputError, match="lies at or past 1e20, where no point meets it"):
        solve_file(path, solver="scip")


@pytest.mark.parametrize("big", [1e16, 1e19])
def test_scip_objective_wrong_at_an_exact_integer_point_is_caught(big):
    """SCIP called a 2 x 2 assignment 'optimal' 2 (or 0) at the exact 0/1 point worth 3:
    its own sum lost the small costs beside ones of 1e16; an allowance of 1e-6 of every
    integer's coefficient (2e10) had hidden it though no value was rounded."""
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], [0, 1], domain=pyo.Binary)
    m.r = pyo.Constraint([0, 1], rule=lambda m, i: m.x[i, 0] + m.x[i, 1] == 1)
    m.c = pyo.Constraint([0, 1], rule=lambda m, j: m.x[0, j] + m.x[1, j] == 1)
    m.o = pyo.Objective(expr=big * m.x[0, 0] + m.x[0, 1] + 2 * m.x[1, 0] + big * m.x[1, 1])
    with pytest.warns(UserWarning, match="is not the objective at its point"):
        result = solve(m, solver="scip")
    assert result.objective == pytest.approx(pyo.value(m.o)) == pytest.approx(3.0)
    assert result.status.value == "feasible"


_B = 2**62


def _big_assignment(rows_side=None, bound=None):
    import pyomo.environ as pyo

    cost = [[_B + 1, _B], [_B, _B + 2]]  # best: off the diagonal, 3 below the diagonal
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], [0, 1], domain=pyo.Binary)
    m.r = pyo.Constraint([0, 1], rule=lambda m, i: m.x[i, 0] + m.x[i, 1] == 1)
    m.c = pyo.Constraint([0, 1], rule=lambda m, j: m.x[0, j] + m.x[1, j] == 1)
    m.o = pyo.Objective(expr=sum(cost[i][j] * m.x[i, j] for i in range(2) for j in range(2)))
    return m


@pytest.mark.parametrize("solver", ["lap", "scip", "highs"])
def test_integers_float64_cannot_hold_are_refused_in_pyomo_data(solver):
    """solve_lap refused them as an int64 array; in a Pyomo objective they were rounded and
    the diagonal assignment, 3 above the optimum, came back 'optimal'."""
    import pyomo.environ as pyo

    from coplug.plugins import solve

    with pytest.raises(InputError, match=r"objective 'o': the number 461168601842738790[56] "
                                          "is an integer that float64"):
        solve(_big_assignment(), solver=solver)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(2**60 + 1, 2**60 + 3))  # x came back 2**60
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match="variable 'x': its lower bound 1152921504606846977"):
        solve(m, solver=solver if solver != "lap" else "highs")
    m.x.setlb(None)
    m.big = pyo.Param(initialize=2**60 + 1, mutable=True)
    m.low = pyo.Constraint(expr=m.x >= m.big)
    with pytest.raises(InputError, match="constraint 'low': its lower side 1152921504606846977"):
        solve(m, solver=solver if solver != "lap" else "highs")


def test_integers_float64_holds_past_two_to_the_53_are_kept():
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2**60))
    m.c = pyo.Constraint(expr=m.x <= 2**55)  # exact in float64
    m.o = pyo.Objective(expr=2**54 * m.x, sense=pyo.maximize)
    assert solve(m, solver="highs").objective == pytest.approx(2.0**109)


@pytest.mark.parametrize("bounds, side", [((2**60 + 1, None), "lower"),
                                          ((None, -(2**60) - 1), "upper"),
                                          ((0, 2**60 + 1), "upper")])
def test_a_bound_float64_cannot_hold_is_refused_alone(bounds, side):
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=bounds)
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match=f"variable 'x': its {side} bound"):
        solve(m, solver="scip")


def test_an_expression_nested_past_the_recursion_limit_is_named():
    """Pyomo's reader raised a bare RecursionError from deep inside."""
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 10))
    m.z = pyo.Var(bounds=(0, 10))
    e = m.y
    for _ in range(5000):
        e = (e * 1.0001 - m.z * 1e-4) / 1.00001
    m.c = pyo.Constraint(expr=e <= 2)
    m.o = pyo.Objective(expr=m.y + m.z, sense=pyo.maximize)
    with pytest.raises(InputError, match="constraint 'c': its expression is nested too deep"):
        solve(m, solver="highs")


def _mps_bounds(lines: str, integer: bool = False, sense: str = "MAX") -> str:
    column = (" M1 'MARKER' 'INTORG'\n x obj 1 c1 1\n M2 'MARKER' 'INTEND'\n" if integer
              else " x obj 1 c1 1\n")
    return (f"NAME B\nOBJSENSE\n    {sense}\nROWS\n N obj\n L c1\nCOLUMNS\n{column}"
            f"RHS\n rhs c1 1000\nBOUNDS\n{lines}ENDATA\n")


@pytest.mark.parametrize("lines, integer", [
    (" UP BND x 0\n LO BND x 0\n", True),  # SCIP reset the upper bound: 'optimal' 1000
    (" BV BND x\n LO BND x -4\n", False),  # SCIP read [-4, inf]
    (" UP BND x 0\n MI BND x\n", True),
])
def test_scip_refuses_bounds_it_reset_when_a_lower_bound_followed(tmp_path, lines, integer):
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(lines, integer))
    with pytest.raises(InputError, match="SCIP read column 'x' with the upper bound inf where "
                                         "its BOUNDS lines give it"):
        solve_file(path, solver="scip")


@pytest.mark.parametrize("lines, integer, best", [
    (" UP BND x 7\n LO BND x 2\n", True, 7.0),
    (" LO BND x 2\n UP BND x 7\n", False, 7.0),
    (" UP BND x 3\n LO BND x -1\n", False, 3.0),
    (" MI BND x\n UP BND x 9\n", False, 9.0),
])
def test_bounds_in_any_order_that_scip_keeps_still_solve(tmp_path, lines, integer, best):
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(lines, integer))
    assert solve_file(path, solver="scip").objective == pytest.approx(best)
    assert solve_file(path, solver="highs").objective == pytest.approx(best)


@pytest.mark.parametrize("lines", [" FX BND x -inf\n", " LO BND x Infinity\n",
                                   " LO BND x inf\n"])
def test_scip_refuses_an_infinite_bound_spelled_as_a_word(tmp_path, lines):
    """'optimal' -1e20 for FX -inf: only numbers past 1e20 had been looked for."""
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(lines, sense="MIN"))
    with pytest.raises(InputError, match="lies at or past 1e20, where no point meets it"):
        solve_file(path, solver="scip")


def test_a_negative_upper_bound_alone_is_refused_for_both_solvers(tmp_path):
    """CPLEX reads x <= -2 with no lower bound as (-inf, -2]; SCIP and HiGHS as [0, -2],
    'infeasible'."""
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(" UP BND x -2\n"))
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match="is negative and the column has no lower bound"):
            solve_file(path, solver=solver)
    path.write_text(_mps_bounds(" MI BND x\n UP BND x -2\n"))
    assert solve_file(path, solver="scip").objective == pytest.approx(-2.0)


def test_ranges_before_rhs_and_data_before_rows_are_refused(tmp_path):
    path = tmp_path / "r.mps"
    text = _mps_bounds(" UP BND x 5\n")
    path.write_text(text.replace("RHS\n rhs c1 1000\n", "RANGES\n rng c1 2\nRHS\n rhs c1 4\n"))
    for solver in ("scip", "highs"):  # HiGHS applied the range to a side of 0
        with pytest.raises(InputError, match="RANGES comes before RHS"):
            solve_file(path, solver=solver)
    path.write_text(text.replace("ROWS\n", " UP BND x 1\nROWS\n"))
    for solver in ("scip", "highs"):  # HiGHS ignored the line
        with pytest.raises(InputError, match="stands before ROWS outside any section"):
            solve_file(path, solver=solver)


@pytest.mark.parametrize("lines, best", [(" UP BND x 1e30\n LO BND x -1\n", 1000.0),
                                         (" UP BND x 3\n LO BND x -1e30\n", 3.0)])
def test_bounds_past_1e20_read_as_no_bound_in_the_order_check(tmp_path, lines, best):
    """The order check compared SCIP's infinity with the file's 1e30 and refused the file."""
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(lines, integer=True))
    assert solve_file(path, solver="scip").objective == pytest.approx(best)
    assert solve_file(path, solver="highs").objective == pytest.approx(best)


@pytest.mark.parametrize("text", [
    "Minimize\n obj: x\nSubject To\n c1: x + y >= 1\nBounds\n x >= +inf\nEnd\n",
    "Minimize\n obj: x\nSubject To\n c1: x + y >= 1\n c2: x >= +Infinity\nEnd\n",
    "Minimize\n obj: x\nSubject To\n c1: x + y >= 1\nBounds\n inf <= x\nEnd\n",
    "Minimize\n obj: x\nSubject To\n c1: x >= 99999999999999999999\nEnd\n",
    "Minimize\n obj: x\nSubject To\n c1: x >= 10e19\nEnd\n",
])
def test_scip_refuses_lp_infinities_no_point_meets_however_spelled(tmp_path, text):
    path = tmp_path / "m.lp"
    path.write_text(text)
    with pytest.raises(InputError, match="lies at or past 1e20, where no point meets it"):
        solve_file(path, solver="scip")


def test_lp_infinities_that_are_no_bound_still_read(tmp_path):
    path = tmp_path / "m.lp"
    path.write_text("Maximize\n obj: x + y\nSubject To\n c1: x + y <= 4\nBounds\n"
                    " -inf <= x <= +inf\n y <= 3\n x >= -Infinity\nEnd\n")
    assert solve_file(path, solver="scip").objective == pytest.approx(4.0)


def test_a_negative_upper_bound_alone_without_a_set_name_is_refused_too(tmp_path):
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(" UP x -1\n"))
    with pytest.raises(InputError, match="'UP x -1' is negative and the column has no lower"):
        solve_file(path, solver="highs")


def test_a_fixed_variable_float64_cannot_hold_is_refused():
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2**61))
    m.y = pyo.Var()
    m.y.fix(2**60 + 1)
    m.c = pyo.Constraint(expr=m.x + m.y >= 2**60 + 256)  # both solvers: 256 for 255
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match="constraint 'c': the number"):
        solve(m, solver="highs")


def test_a_crlf_file_whose_last_line_ends_in_a_carriage_return_alone_reads(tmp_path):
    """Its last line was taken for a bare carriage return (classic Mac OS) and refused."""
    path = tmp_path / "m.mps"
    path.write_bytes(_mps_bounds(" UP BND x 7\n").rstrip("\n").replace("\n", "\r\n").encode()
                     + b"\r")
    for solver in ("scip", "highs"):
        assert solve_file(path, solver=solver).objective == pytest.approx(7.0)


def test_trailing_comments_on_rows_and_columns_lines_read_as_scip_reads_them(tmp_path):
    """HiGHS's own test file comment.mps (optimum -4): its ` G  R1 *Comment` ROWS line was
    refused as three fields, though SCIP reads the file right."""
    path = tmp_path / "comment.mps"
    path.write_text(
        "NAME          Comment\nROWS\n N  COST $Comment\n G  R0\n G  R1 *Comment\n"
        " G  R2 $Comment\nCOLUMNS\n    C0        R0            1.0        COST       -1.0 $c\n"
        "    C0        R1           -1.0 $c\n    C0        R2           -1.0 $c\n"
        "    C1        R0            1.0        COST       -2.0 *c\n"
        "    C1        R1           -1.0 *c\n    C1        R2           -1.0 *c\nRHS\n"
        "    DEMANDS   R0            1.0        R1         -2.0 $c\n"
        "    DEMANDS   R2           -2.0 $c\nRANGES\n    test      R0        1  $c\nBOUNDS\n"
        " UP SERVINGS  C0            1.0 $c\nENDATA\n")
    assert solve_file(path, solver="scip").objective == pytest.approx(-4.0)
    path.write_text(path.read_text().replace(" G  R1 *Comment", " G  R1 x9"))
    with pytest.raises(InputError, match="the ROWS line 'G  R1 x9' is no `type name`"):
        solve_file(path, solver="scip")


@pytest.mark.parametrize("lines", [
    " UP BND x 00\n LO BND x -5\n",  # spellings a bound below 2 had to match to be checked
    " UP BND x 10e-1\n LO BND x -5\n",
    " UP BND x 0 $ note\n LO BND x -5\n",
    " FX BND x 1\n LO BND x -5\n",
    " UP x 0\n LO x 5\n",  # no bound-set name: its column had been read as '0'
])
def test_scip_bound_resets_are_caught_however_the_bound_is_written(tmp_path, lines):
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(lines, integer=True))
    with pytest.raises(InputError, match="SCIP read column 'x' with the upper bound inf"):
        solve_file(path, solver="scip")


def test_a_bounds_line_with_a_trailing_star_comment_reads_as_both_readers_read_it(tmp_path):
    """Both readers take ` UP BND x 5 * note` as x <= 5; it was refused as "the bound of
    'BND' is 'x'"."""
    path = tmp_path / "b.mps"
    path.write_text(_mps_bounds(" UP BND x 5 * note\n"))
    for solver in ("scip", "highs"):
        assert solve_file(path, solver=solver).objective == pytest.approx(5.0)


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_a_file_scip_wrote_from_a_quadratic_objective_reads_back(tmp_path, suffix):
    """SCIP writes a quadratic objective as a column `qmatrixvar` and its row; that name was
    refused as the one its reader gives its own epigraph column, though the file has no
    quadratic objective left for the reader to add one."""
    from pyscipopt import Model

    source = tmp_path / "qp.mps"  # min x^2 + 2 y^2 - 3 x, x + y >= 1, y integer
    source.write_text("NAME QP\nROWS\n N obj\n G c1\nCOLUMNS\n x obj -3 c1 1\n"
                      " M1 'MARKER' 'INTORG'\n y c1 1\n M2 'MARKER' 'INTEND'\nRHS\n rhs c1 1\n"
                      "BOUNDS\n LO BND x -5\n UP BND x 5\n LO BND y -5\n UP BND y 5\n"
                      "QUADOBJ\n x x 2\n y y 4\nENDATA\n")
    best = solve_file(source, solver="scip").objective
    m = Model()
    m.hideOutput()
    m.readProblem(str(source))
    written = tmp_path / f"written{suffix}"
    m.writeProblem(str(written))
    assert b"qmatrixvar" in written.read_bytes() or b"quadobjvar" in written.read_bytes()
    assert solve_file(written, solver="scip").objective == pytest.approx(best, abs=1e-6)
