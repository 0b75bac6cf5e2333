"""Files SCIP's and HiGHS's readers take other than as written are refused by name
(coplug.plugins.file_reading), and the same files written plainly still solve."""

from __future__ import annotations

from pathlib import Path

import pytest

from coplug.plugins import InputError, Status
from coplug.plugins.files import solve_file
from coplug.plugins.iis_file import explain_infeasible_file

MPS_AS_LP = """NAME          RNG
ROWS
 N  obj
 G  g1
COLUMNS
    x         obj       1.0        g1        1.0
    y         obj       2.0        g1        1.0
RHS
    RHS       g1        8.0
BOUNDS
 FR BND       x
ENDATA
"""

FREE_ROW_RHS = """NAME T
ROWS
 N  obj
 G  c1
 N  free1
COLUMNS
    x         obj       1.0        c1        1.0
    x         free1     5.0
RHS
    RHS       c1        2.0        {free}
ENDATA
"""

INLINE_MAX = """NAME T
OBJSENSE {sense}
ROWS
 N  obj
 L  c1
COLUMNS
    x         obj       1.0        c1        1.0
RHS
    RHS       c1        4.0        obj       -2
BOUNDS
 UP BND       x         10
ENDATA
"""

DUPLICATE = """NAME DUP
ROWS
 N  obj
 L  c1
COLUMNS
    x         obj       1.0        c1        1.0
    x         c1        {again}
    x         obj       -3.0
RHS
    RHS       c1        6.0
BOUNDS
 UP BND       x         100
ENDATA
"""

SPLIT = """NAME SPLIT
ROWS
 N  obj
 L  c1
COLUMNS
    x         obj       -1.0        c1        1.0
    y         obj       -0.1        c1        1.0
    {again}         obj       -1.0        c1        1.0
RHS
    RHS       c1        {rhs}
BOUNDS
 UP BND       x         1
ENDATA
"""

LONG_NAME = """NAME LONG
ROWS
 N  obj
 L  c1
COLUMNS
    {name}  obj  -1.0  c1  1.0
RHS
    RHS       c1        5.0
BOUNDS
 UP BND       {name}    9
ENDATA
"""

NEGATIVE_UP = """NAME BND
ROWS
 N  obj
 L  c1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    a         obj       1.0        c1        1.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       c1        100.0
BOUNDS
{lo} UP BND       a         -3
ENDATA
"""

CONSTANT = """NAME C
ROWS
 N  obj
 L  c1
COLUMNS
    x         obj       1.0        c1        1.0
RHS
    RHS       c1        4.0        obj       {constant}
BOUNDS
 UP BND       x         10
ENDATA
"""


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_mps_file_named_lp_is_refused(tmp_path: Path, solver: str) -> None:
    """SCIP's LP reader called this 'optimal' 0 over variables named FR, BND and ENDATA."""
    with pytest.raises(InputError, match="m.lp has MPS sections.*name it .mps"):
        solve_file(_file(tmp_path, "m.lp", MPS_AS_LP), solver=solver)
    assert solve_file(_file(tmp_path, "m.mps", MPS_AS_LP), solver=solver).objective == \
        pytest.approx(8)


def test_a_right_hand_side_on_a_free_row_is_refused_for_highs(tmp_path: Path) -> None:
    """HiGHS made RHS 7 on free row 'free1' an objective constant: 'optimal' -5 for x = 2."""
    path = _file(tmp_path, "free.mps", FREE_ROW_RHS.format(free="free1     7"))
    with pytest.raises(InputError, match="free row 'free1'.*objective's constant"):
        solve_file(path, solver="highs")
    assert solve_file(path, solver="scip").objective == pytest.approx(2)
    plain = _file(tmp_path, "plain.mps", FREE_ROW_RHS.format(free=""))
    assert solve_file(plain, solver="highs").objective == pytest.approx(2)


@pytest.mark.parametrize("sense", ["MAXIMIZE", "MAX", "\n    MAX"])
def test_an_objective_sense_each_solver_reads_as_written(tmp_path: Path, sense: str) -> None:
    """HiGHS read 'OBJSENSE MAXIMIZE' on one line as minimize (2 for the true 6): refused;
    the forms it reads solve, and SCIP reads all three."""
    path = _file(tmp_path, "max.mps", INLINE_MAX.format(sense=sense))
    assert solve_file(path, solver="scip").objective == pytest.approx(6)
    if sense == "MAXIMIZE":
        with pytest.raises(InputError, match="says maximize but HiGHS's reader read minimize"):
            solve_file(path, solver="highs")
    else:
        assert solve_file(path, solver="highs").objective == pytest.approx(6)


def test_scip_refuses_an_lp_sense_it_does_not_know(tmp_path: Path) -> None:
    """SCIP read 'Maximise' as minimizing 0 (an 'optimal' 0 for the true 6)."""
    text = "{sense}\n obj: x + 2\nSubject To\n c1: x <= 4\nBounds\n x <= 10\nEnd\n"
    path = _file(tmp_path, "maximise.lp", text.format(sense="Maximise"))
    with pytest.raises(InputError, match="'Maximise', which SCIP's LP reader does not take"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(6)
    plain = _file(tmp_path, "maximize.lp", "\\ a comment\n" + text.format(sense="Maximize"))
    assert solve_file(plain, solver="scip").objective == pytest.approx(6)


def test_highs_refuses_what_its_reader_ignored(tmp_path: Path) -> None:
    """A repeated entry (HiGHS keeps the first, SCIP the last) and a constant on a row's
    left (HiGHS read `x - 4 <= 0` as `x <= 0`) are named."""
    with pytest.raises(InputError, match='Column "x" has duplicate nonzero 2 in row "c1"'):
        solve_file(_file(tmp_path, "dup.mps", DUPLICATE.format(again="2.0")), solver="highs")
    text = "Maximize\n obj: x\nSubject To\n c1: x {constant} <= {rhs}\nBounds\n x <= 10\nEnd\n"
    with pytest.raises(InputError, match=r"constant on the left of a row \('c1: x - 4 <= 0'\)"):
        solve_file(_file(tmp_path, "c.lp", text.format(constant="- 4", rhs=0)), solver="highs")
    plain = _file(tmp_path, "plain.lp", text.format(constant="", rhs=4))
    assert solve_file(plain, solver="highs").objective == pytest.approx(4)


@pytest.mark.parametrize("entry", ["solve", "explain"])
def test_columns_sharing_a_name_are_refused_for_highs(tmp_path: Path, entry: str) -> None:
    """HiGHS made split column 'x' two columns and dropped every name: values came back
    as c0, c1, c2 and `explain_infeasible_file` raised IndexError."""
    path = _file(tmp_path, "split.mps", SPLIT.format(again="x", rhs="-1.0"))
    with pytest.raises(InputError, match="two columns share a name"):
        if entry == "solve":
            solve_file(path, solver="highs")
        else:
            explain_infeasible_file(path)
    plain = _file(tmp_path, "plain.mps", SPLIT.format(again="z", rhs="6.0"))
    assert set(solve_file(plain, solver="highs").values) == {"x", "y", "z"}


def test_scip_refuses_names_past_255_characters(tmp_path: Path) -> None:
    """SCIP cut a 300-character name at 255 and made the bound's full name a second
    column: 'optimal' -10 for the true -5."""
    path = _file(tmp_path, "long.mps", LONG_NAME.format(name="v" * 300))
    with pytest.raises(InputError, match="more than 255 bytes"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(-5)
    fits = _file(tmp_path, "fits.mps", LONG_NAME.format(name="v" * 255))
    assert solve_file(fits, solver="scip").objective == pytest.approx(-5)


def test_scip_names_an_integer_column_it_read_with_crossed_bounds(tmp_path: Path) -> None:
    """A negative UP alone makes an integer column binary [0, -3] to SCIP's reader, whose
    solve then raised "SCIP: error in input data!" from deep inside; the readers part on
    its lower bound, so both solvers refuse it."""
    path = _file(tmp_path, "bnd.mps", NEGATIVE_UP.format(lo=""))
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match=r"a +-3' is negative and the column has no lower"):
            solve_file(path, solver=solver)
    with_lower = _file(tmp_path, "lo.mps", NEGATIVE_UP.format(lo=" LO BND       a         -5\n"))
    result = solve_file(with_lower, solver="scip")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(-5)


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("constant", ["1e30", "-1e20"])
def test_an_objective_constant_at_infinity_is_refused(tmp_path: Path, solver: str,
                                                      constant: str) -> None:
    """SCIP called a boxed model unbounded, HiGHS 'optimal' -1e30."""
    path = _file(tmp_path, "c.mps", CONSTANT.format(constant=constant))
    with pytest.raises(InputError, match="objective's constant.*infinite"):
        solve_file(path, solver=solver)
    finite = _file(tmp_path, "f.mps", CONSTANT.format(constant="-1e10"))
    assert solve_file(finite, solver=solver).objective == pytest.approx(1e10)


def test_scip_reads_pyomo_quadratic_lp_files(tmp_path: Path) -> None:
    """Pyomo writes `+2 x ^ 2`; SCIP's LP reader refused it ("sign after value without
    variable") and read only `x^2`, so `solve_file` read a copy without the spaces."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], bounds=(-5, 5))
    m.o = pyo.Objective(expr=(m.x[0] - 1) ** 2 + (m.x[1] - 2) ** 2 + 3)
    path = tmp_path / "q.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    assert " ^ 2" in path.read_text()
    for solver in ("scip", "highs"):
        assert solve_file(path, solver=solver).objective == pytest.approx(3, abs=1e-5)
    assert " ^ 2" in path.read_text()  # the file itself is left as written


# Files the first version of these checks refused or misread (a review of them):
TERMS = "+".join(f"x{i}" for i in range(80))
PLAIN = {
    "compact.lp": (f"Maximize\n obj: {TERMS}\nSubject To\n c1: {TERMS}<=10\nBounds\n"
                   + "".join(f" x{i} <= 1\n" for i in range(80)) + "End\n", 10),
    "comment.lp": ("\\ generated from /" + "a" * 300 + "\nMaximize\n obj: x + y\nSubject To\n"
                   " c1: x + 2 y <= 4\n c2: 3 x + y <= 6\nEnd\n", 2.8),
    "comment.mps": ("* from /" + "a" * 300 + "\nNAME t\nROWS\n N obj\n L c1\nCOLUMNS\n"
                    " x obj -1 c1 1\nRHS\n rhs c1 4\nBOUNDS\n UP bnd x 10\nENDATA\n", -4),
    "probname.mps": ("NAME /" + "a" * 300 + "\nROWS\n N obj\n L c1\nCOLUMNS\n x obj -1 c1 1\n"
                     "RHS\n rhs c1 4\nBOUNDS\n UP bnd x 10\nENDATA\n", -4),
    "generals.lp": ("Maximize\n obj: ROWS + COLUMNS\nSubject To\n c1: ROWS + 2 COLUMNS <= 4\n"
                    "Bounds\n ROWS <= 3\n COLUMNS <= 3\nGenerals\nROWS\nCOLUMNS\nEnd\n", 3),
    "twice.lp": ("Maximize\n obj: x\nSubject To\n c1: 10000000 x + 10000000 x <= 30000000\n"
                 "Bounds\n x <= 10\nEnd\n", 1.5),
}


@pytest.mark.parametrize("name", sorted(PLAIN))
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_plain_files_solve_as_written(tmp_path: Path, name: str, solver: str) -> None:
    """Long comments, problem names and operator-joined terms are no long names; variables
    named ROWS and COLUMNS do not make an LP file MPS; a variable listed twice in a row
    divided by `row_scaling` keeps both terms (SCIP said 3 for the true 1.5)."""
    text, optimum = PLAIN[name]
    assert solve_file(_file(tmp_path, name, text), solver=solver).objective == \
        pytest.approx(optimum)


def test_crossed_bounds_of_the_files_own_are_infeasible(tmp_path: Path) -> None:
    """Only SCIP's own binary [0, negative UP] reading is refused, not a file's LO 5, UP -3."""
    text = ("NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n    x  obj  1  c1  1\n    y  obj  1  c1  1\n"
            "RHS\n    RHS  c1  4\nBOUNDS\n LO bnd x 5\n UP bnd x -3\nENDATA\n")
    for solver in ("scip", "highs"):
        assert solve_file(_file(tmp_path, "c.mps", text), solver=solver).status is \
            Status.INFEASIBLE


def test_a_corrupt_gz_is_named(tmp_path: Path) -> None:
    import gzip

    packed = bytearray(gzip.compress(CONSTANT.format(constant="0").encode() * 50))
    packed[40:60] = b"\xff" * 20
    path = tmp_path / "bad.mps.gz"
    path.write_bytes(bytes(packed))
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match="bad.mps.gz"):
            solve_file(path, solver=solver)


@pytest.mark.parametrize("name, text", [
    ("freerhs.mps", "NAME t\nROWS\n N obj\n N aux\n G c1\n L c2\nCOLUMNS\n    x  obj  1  c1  1\n"
     "    x  aux  1  c2  1\nRHS\n    RHS  c1  4  c2  2\n    RHS  aux 7\nENDATA\n"),
    ("sense.mps", "NAME t\nOBJSENSE MAXIMIZE\nROWS\n N obj\n G c1\n L c2\nCOLUMNS\n"
     "    x  obj  1  c1  1\n    x  c2  1\nRHS\n    RHS  c1  4  c2  2\nENDATA\n"),
])
def test_an_iis_ignores_how_the_objective_was_read(tmp_path: Path, name: str,
                                                   text: str) -> None:
    """The objective's misreadings are refused for a solve, not for an IIS of the rows."""
    found = explain_infeasible_file(_file(tmp_path, name, text))
    assert set(found.rows) == {"c1", "c2"}


def _bounds_file(kind: str, lines: str) -> str:
    """max a over a column `kind` (int or cont) with the BOUNDS `lines`."""
    marker = "    MARKER                 'MARKER'                 '{}'\n"
    column = "    a         obj       1.0        c1        1.0\n"
    if kind == "int":
        column = marker.format("INTORG") + column + marker.format("INTEND")
    return ("NAME BND\nOBJSENSE\n    MAX\nROWS\n N  obj\n L  c1\nCOLUMNS\n" + column
            + "RHS\n    RHS       c1        100.0\nBOUNDS\n" + lines + "ENDATA\n")


@pytest.mark.parametrize("up, lo", [("UP", "LO"), ("UI", "LI")])
def test_scip_names_a_negative_upper_bound_it_dropped(tmp_path: Path, up: str, lo: str) -> None:
    """SCIP read an integer column's `UP -3` then `LO -5` as [-5, inf] and called `max a`
    unbounded; HiGHS reads [-5, -3]. `UI -3` alone was SCIP's "error in input data"."""
    path = _file(tmp_path, "up.mps", _bounds_file("int", f" {up} BND a -3\n {lo} BND a -5\n"))
    with pytest.raises(InputError, match=r"column 'a' with the upper bound inf where its "
                       r"BOUNDS lines give it -3 in order"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(-3)
    alone = _file(tmp_path, "alone.mps", _bounds_file("int", f" {up} BND a -3\n"))
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match=r"BND a -3' is negative and the column has no "):
            solve_file(alone, solver=solver)
    kept = _file(tmp_path, "kept.mps", _bounds_file("int", f" {lo} BND a -5\n {up} BND a -3\n"))
    assert solve_file(kept, solver="scip").objective == pytest.approx(-3)
    raised = _file(tmp_path, "raised.mps", _bounds_file("int", f" {up} BND a -3\n {up} BND a 4\n"))
    assert solve_file(raised, solver="scip").objective == pytest.approx(4)  # HiGHS refuses it
    continuous = _file(tmp_path, "c.mps", _bounds_file("cont", " UP BND a -3\n LO BND a -5\n"))
    assert solve_file(continuous, solver="scip").objective == pytest.approx(-3)


@pytest.mark.parametrize("lines", [" FR BND a\n LO BND a -10\n", " LO BND a -10\n LO BND a -5\n"])
def test_highs_refuses_a_bound_given_twice(tmp_path: Path, lines: str) -> None:
    """HiGHS keeps a column's first lower bound and ignores the next (SCIP applies them in
    order): 'optimal' -100 against SCIP's -10 for FR then LO -10 under min a, a >= -100."""
    text = _bounds_file("cont", lines).replace("OBJSENSE\n    MAX\n", "").replace(
        " L  c1", " G  c1").replace("c1        100.0", "c1        -100.0")
    path = _file(tmp_path, "dup.mps", text)
    with pytest.raises(InputError, match="duplicate lower bound definition"):
        solve_file(path, solver="highs")
    assert solve_file(path, solver="scip").objective == pytest.approx(float(lines.split()[-1]))


def test_scip_refuses_a_bounds_line_without_a_set_name(tmp_path: Path) -> None:
    """` LO x -5` (no bound-set name): SCIP took x for the name and made columns '-5' and
    '-3', leaving x binary: 'optimal' 0 for min x over x in [-5, -3]. HiGHS reads it."""
    text = _bounds_file("int", " LO           x                   -5\n"
                               " UP           x                   -3\n").replace(
        "OBJSENSE\n    MAX\n", "").replace(" a ", " x ")
    path = _file(tmp_path, "blank.mps", text)
    with pytest.raises(InputError, match="has no bound-set name"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(-5)
    named = _file(tmp_path, "named.mps", text.replace(" LO      ", " LO BND  ").replace(
        " UP      ", " UP BND  "))
    assert solve_file(named, solver="scip").objective == pytest.approx(-5)


@pytest.mark.parametrize("line", [" MI           x", " BV           x", " UP x 2 $ note",
                                  " UP           x                   2 $ note", " UP x .5",
                                  " LO           x                   -5", " UP x 1e1"])
def test_scip_reads_bounds_lines_without_a_set_name_as_highs_does(tmp_path: Path,
                                                                   line: str) -> None:
    """` MI x`, ` BV x`, ` UP x 2 $ note`: SCIP reads these as written, and they were
    refused (a fixed-format file from the probe); only a value SCIP takes for a column
    (` LO x -5`, ` UP x 1e1`) is refused, and the file then solves with HiGHS."""
    text = ("NAME T\nROWS\n N  obj\n G  c1\nCOLUMNS\n    x  obj  -1  c1  1\n"
            "RHS\n    RHS  c1  -20\nBOUNDS\n" + line + "\nENDATA\n")
    path = _file(tmp_path, "unnamed.mps", text)
    highs = solve_file(path, solver="highs")
    if line.split()[-1] in ("-5", "1e1"):
        with pytest.raises(InputError, match="took its value for a column"):
            solve_file(path, solver="scip")
        return
    scip = solve_file(path, solver="scip")
    assert (scip.status, scip.objective) == (highs.status, highs.objective)


def test_a_column_named_like_a_bound_type_is_no_unnamed_bound(tmp_path: Path) -> None:
    """`    UP UP 2` in QUADOBJ (a column named UP) was taken for an unnamed bound line."""
    text = ("NAME t\nROWS\n N obj\n G c1\nCOLUMNS\n    UP obj -4 c1 1\n    y obj 1 c1 1\n"
            "RHS\n    RHS c1 1\nBOUNDS\n UP BND UP 10\n UP BND y 10\nQUADOBJ\n    UP UP 2\n"
            "ENDATA\n")
    assert solve_file(_file(tmp_path, "q.mps", text), solver="scip").objective == \
        pytest.approx(-4.0, abs=1e-5)
