"""Session 42: error messages that named the wrong argument, position or cause."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.bbo import ProgramError, parse
from coplug.formulations.fair_metrics import balance, proportion_deviation
from coplug.formulations.game_solvers import certify
from coplug.formulations.games import cournot, example, network_flow
from coplug.plugins import InputError, Status, explain_infeasible_file, race
from coplug.plugins.files import solve_file
from coplug.plugins.lap import ranked_assignments, ranked_matchings, solve_lap


@pytest.mark.parametrize("metric", [balance, proportion_deviation])
def test_labels_and_groups_of_different_lengths_name_both(metric) -> None:
    """groups one entry short blamed the right labels, calling the node count 5."""
    with pytest.raises(InputError, match="got 6 labels and 5 groups"):
        metric(np.array([0, 1, 0, 1, 0, 1]), np.array([0, 0, 1, 1, 0]))


@pytest.mark.parametrize("solver", ["highs", None])
def test_an_lp_file_highs_cannot_parse_quotes_its_reader(tmp_path: Path, solver) -> None:
    """explain_infeasible_file guessed nonlinear rows and sent the user to Pyomo, which
    reads no LP files; the reader's own words and line come back instead."""
    path = tmp_path / "bad.lp"
    path.write_text("Minimize\n obj: x + y\nSubject To\n c1: x + y >= 1\n c2: x + z >= \nEnd\n")
    call = (lambda: solve_file(path, solver="highs")) if solver else (
        lambda: explain_infeasible_file(path))
    with pytest.raises(InputError, match=r"HiGHS cannot read bad.lp \(line 6\): expected a "
                                         r"number"):
        call()


def test_certify_with_the_lap_path_names_the_solver() -> None:
    with pytest.raises(InputError, match="not 'lap'"):
        certify(example("cournot"), solver="lap")


def test_a_demand_at_an_unknown_node_names_the_node() -> None:
    with pytest.raises(InputError, match="names node 'zz', which the network does not hold"):
        network_flow(demands=[("zz", "t", 1.0)])


@pytest.mark.parametrize("kwargs, message", [
    ({"slope": -1}, "cournot slope must be a finite number > 0, got -1"),
    ({"slope": float("nan")}, "cournot slope must be a finite number > 0, got nan"),
    ({"capacity": 0}, "cournot capacity must be a finite number > 0, got 0"),
    ({"costs": [1, -2, 1]}, r"cournot costs must be finite numbers >= 0, got -2.0 for firm 1"),
    ({"costs": [1, 1, float("inf")]}, r"got inf for firm 2"),
    ({"intercept": float("nan")}, "cournot intercept must be a finite number, got nan"),
])
def test_cournot_names_the_one_bad_argument(kwargs, message) -> None:
    """Each was "cournot needs n_firms >= 1, slope > 0, capacity > 0 and costs >= 0"."""
    with pytest.raises(InputError, match=message):
        cournot(**kwargs)


def test_a_negative_index_is_out_of_range_not_a_non_literal() -> None:
    with pytest.raises(ProgramError, match=r"x\[-1\] is out of range for dim=2"):
        parse("x[0] + x[-1]", 2)
    parse("x[0] + x[1]", 2)  # in range: read


def test_a_one_dimensional_adjacency_is_quoted_as_given() -> None:
    from coplug.formulations.fair_graphs import as_adjacency

    with pytest.raises(InputError, match=r"square 2-D matrix, got shape \(12,\)"):
        as_adjacency(np.ones(12))


@pytest.mark.parametrize("kwargs, message", [
    ({"row_cost": [0, np.nan, 0]}, r"row_cost\[1\] is nan"),
    ({"row_cost": [0, np.inf, 0], "maximize": True}, r"row_cost\[1\] is inf"),
    ({"col_cost": np.inf}, "col_cost is inf"),
])
def test_a_non_finite_unmatched_cost_is_placed(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        ranked_matchings(np.eye(3), k=2, **kwargs)


@pytest.mark.parametrize("cost", [None, "abc", 5, {"a": 1}])
def test_a_cost_that_is_no_array_is_named_by_type(cost) -> None:
    """'abc' and 5 were "must be 2-D, got shape ()"; None named solve_lap from
    ranked_assignments."""
    for call in (solve_lap, ranked_assignments):
        with pytest.raises(InputError, match=f"must be a 2-D array of numbers, got "
                                             f"{type(cost).__name__}"):
            call(cost)


def test_an_empty_race_says_empty() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match="solvers is empty"):
        race(m, solvers=[])


BASE_ROWS = (" c1: x + y + 2 z <= 4\n c2: x + 3 y - z <= 3\n c3: 2 x + y <= 5\n")


def _lp(tmp_path: Path, objective: str = " obj: 3 x + 4 y + 2 z\n", rows: str = BASE_ROWS,
        sense: str = "Maximize", name: str = "rows.lp") -> Path:
    path = tmp_path / name
    path.write_text(f"{sense}\n{objective}Subject To\n{rows}Bounds\n x <= 3\n y <= 3\n z <= 3\n"
                    "End\n")
    return path


@pytest.mark.parametrize("objective, rows, message", [
    # SCIP's reader solved each as another model; HiGHS's refuses each
    (None, " c1: x + y <= 2 z <= 4\n", "more follows a row's right-hand side"),
    (None, " c1: x + y + 2 z >= -2 <= 4\n", "more follows a row's right-hand side"),
    (None, " c1: =< 4 x + y <= 11\n", "more follows a row's right-hand side"),
    (None, " c1: x + y <= 2 2 z <= 4\n", "more follows a row's right-hand side"),
    (None, " c1: 0 y x + 2 z <= 4\n", "a term follows another without a sign"),
    (None, " c1: - 0 y + 0 w x + 2 z <= 4\n", "a term follows another without a sign"),
    (None, " c1: .0 y x + 2 z <= 4\n", "a term follows another without a sign"),
    (None, " c1: x + y + /z <= 4\n", "a name starts with '/'"),
    (" obj: 3 x + 4 y + 2 z 5\n", None, "a number after its last term and no sign"),
    (" obj: 3 x + 4 y + 2 z\n 5 \\ the constant\n", None, "a number after its last term"),
    (" obj: 3 x + 4 y + 2 z -\n", None, "ends with a lone sign"),
    (" obj: 0 y x + 2 z\n", None, "a term follows another without a sign"),
    # HiGHS's reader solved these as another model; SCIP's refuses them
    (None, " c1: x + y + 1e+ z <= 4\n", "exponent sign but no exponent digits"),
    (" obj: 3 x + 4 y + 2 z + [ x ^ 2 ]\n", None, r"not followed by /2"),
])
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_rows_one_reader_misreads_are_refused(tmp_path: Path, objective, rows, message,
                                               solver) -> None:
    rows = rows if rows is None else rows + BASE_ROWS.replace(" c1:", " c0:", 1)
    path = _lp(tmp_path, **{k: v for k, v in (("objective", objective), ("rows", rows))
                            if v is not None})
    with pytest.raises(InputError, match=message):
        solve_file(path, solver=solver)


def test_two_named_rows_on_a_line_read_as_two(tmp_path: Path) -> None:
    """SCIP's reader reads the next row's `name:` after a right-hand side as written (HiGHS's
    refuses the line), so the check lets it through."""
    path = _lp(tmp_path, rows=" c1: x + y + 2 z <= 4 c2: x + 3 y - z <= 3\n c3: 2 x + y <= 5\n")
    plain = solve_file(_lp(tmp_path, name="plain.lp"), solver="highs")
    assert solve_file(path, solver="scip").objective == pytest.approx(plain.objective)


@pytest.mark.parametrize("objective, rows", [
    (None, " c1: x + y\n + 2 z\n <=\n 4\n c2: x + 3 y - z <= 3 \\ note: 2 2 z\n"
           " c3: 2 x + y <= 5\n c4: x + y <= inf\n"),  # rows over lines, comments, inf
    (" obj: + 3 x + 4 y + 2 z + 0.5\n", None),  # a signed constant
    (" obj: 3 x + 4 y\n + 2 z\n", None),
    (" obj: 3 x + 4 y + 2 z + [ - x ^ 2 - 2 x * y - 2 y ^ 2 ] / 2\n", None),  # concave
    (" obj: 3 x + 4 y + 2 z + [ - x ^ 2 ]/2 \\ halved\n", None),
    (" obj: 3 x + 4 y + 2 z + [ - 2 x ^ 2 ] / 2.0\n", None),
    (None, " c1: x + y + 0.0e0 w + 2 z <= 4\n c2: x + 3 y - z <= 3\n c3: 2 x + y <= 5\n"),
])
def test_rows_both_readers_take_alike_still_solve(tmp_path: Path, objective, rows) -> None:
    path = _lp(tmp_path, **{k: v for k, v in (("objective", objective), ("rows", rows))
                            if v is not None})
    scip, highs = solve_file(path, solver="scip"), solve_file(path, solver="highs")
    assert scip.status is highs.status is Status.OPTIMAL
    assert scip.objective == pytest.approx(highs.objective, abs=1e-6)


def _indicator_file(tmp_path: Path, suffix: str) -> tuple[Path, float]:
    """An indicator model as SCIP's own writer writes it, and its optimum as SCIP finds it
    on the model built directly."""
    import pyscipopt

    m = pyscipopt.Model()
    m.hideOutput()
    b = m.addVar("b", vtype="B")
    x = m.addVar("x", ub=10)
    m.addConsIndicator(x <= 3, b, name="ind")
    m.setObjective(x + 2 * b, "maximize")
    path = tmp_path / f"ind{suffix}"
    m.writeProblem(str(path))
    m.optimize()
    return path, m.getObjVal()


def test_an_indicator_row_scip_writes_is_read_back(tmp_path: Path) -> None:
    """SCIP's own LP writer puts an indicator's `b = 1 -> row` on one line."""
    path, optimum = _indicator_file(tmp_path, ".lp")
    assert "->" in path.read_text()
    assert solve_file(path, solver="scip").objective == pytest.approx(optimum)


@pytest.mark.parametrize("kwargs, message", [
    ({"names": ["a", "b", "c"]}, r"one string per variable \(2\), got 3 names"),
    ({"names": "ab"}, "names must be a list of 2 strings"),
    ({"margin": -1.0}, "margin must be a finite number >= 0"),
    ({"margin": float("nan")}, "margin must be a finite number >= 0"),
])
def test_a_qubo_labels_its_variables_and_margin_sensibly(kwargs, message) -> None:
    """Each was kept: 3 names for 2 variables, a negative proven flip size."""
    from coplug.formulations.qubo import QUBO

    def build(**extra):
        return QUBO(Q=np.eye(2), c=np.zeros(2), constant=0.0, decode=lambda x: x,
                    is_feasible=lambda x: True, objective=lambda x: 0.0, **extra)

    with pytest.raises(InputError, match=message):
        build(**kwargs)
    assert build(names=["a", "b"], margin=0.5).names == ["a", "b"]


@pytest.mark.parametrize("problem, form", [("knapsack", "safe"), ("tsp", "safe"),
                                           ("tsp", "naive")])
def test_the_qubo_command_takes_the_size_limit_its_error_names(problem, form, capsys) -> None:
    """The size error said "raise it with max_nonzeros=", which `coplug qubo` had no way to
    pass: --max-nonzeros sets it (a limit of 10 refuses the QUBO; the default builds it)."""
    from coplug.plugins.cli import main

    args = ["qubo", problem, "--size", "6", "--form", form, "--starts", "2", "--max-iter", "20"]
    assert main([*args, "--max-nonzeros", "10"]) == 2
    assert "over the limit 10" in capsys.readouterr().err
    assert main([*args, "--max-nonzeros", "100000"]) == 0
    assert "QUBO with" in capsys.readouterr().out


def test_many_zero_terms_are_checked_in_linear_time(tmp_path: Path) -> None:
    """An objective of 16,000 `+0 x` terms took 44 s to check (each zero restarted a match
    over the rest of the row); it is a valid file, solved at once."""
    import time

    terms = " ".join(f"+0 x{k}" for k in range(16000))
    path = tmp_path / "zeros.lp"
    path.write_text(f"Minimize\n obj: {terms} + y\nSubject To\n c1: y >= 1\nEnd\n")
    started = time.perf_counter()
    result = solve_file(path, solver="highs")
    assert result.objective == pytest.approx(1.0)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("rows, refused", [
    (" \\ rows below [draft\n c1: x + y <= 2 z <= 4\n", True),  # an open [ in a comment
    (" c0: x <= 3 \\ was 0 w\n 0 y x <= 1\n", True),  # a comment's match ran into the row
    (" c1: x + y <= 4\n", False),
])
def test_comments_neither_hide_nor_lend_a_fault(tmp_path: Path, rows: str, refused) -> None:
    path = _lp(tmp_path, rows=rows + " c9: x + y + z <= 5\n")
    if refused:
        with pytest.raises(InputError, match="rows.lp"):
            solve_file(path, solver="scip")
    else:
        assert solve_file(path, solver="scip").status is Status.OPTIMAL


@pytest.mark.parametrize("objective", [
    " obj: - x + [ x ^ 2 ] \\ halved below\n /2\n",  # a comment between ] and /2
    " obj: - x + [ x ^ 2 ] / 2\n \\" + "-" * 5000 + "\n",  # a long comment line after it
    " obj: - x + [ x ^ 2 ] / 2\n \\ " + "see page " * 600 + "5\n",
])
def test_comments_around_an_objective_end_are_read_as_comments(tmp_path: Path,
                                                                 objective) -> None:
    """Each was refused: `/2` after a comment read as missing, a comment line past 4 kB read
    from its middle as objective text (a lone sign, a constant)."""
    path = _lp(tmp_path, objective=objective, sense="Minimize")
    for solver in ("scip", "highs"):
        assert solve_file(path, solver=solver).objective == pytest.approx(-0.5, abs=1e-6)


def test_a_ranged_row_opening_with_a_value_is_named_as_such(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="a row opens with a value and a sense"):
        solve_file(_lp(tmp_path, rows=" c1: 1 <= 3 x <= 10\n"), solver="scip")


@pytest.mark.parametrize("margin, message", [
    (10**400, "an integer of 401 digits"), (np.complex128(1 + 2j), "complex128"),
])
def test_a_qubo_margin_past_reals_is_named(margin, message) -> None:
    from coplug.formulations.qubo import QUBO

    with pytest.raises(InputError, match=message):
        QUBO(Q=np.eye(2), c=np.zeros(2), constant=0.0, decode=lambda x: x,
             is_feasible=lambda x: True, objective=lambda x: 0.0, margin=margin)


def test_names_of_other_types_and_huge_integers_are_named() -> None:
    from coplug.formulations.qubo import QUBO

    with pytest.raises(InputError, match=r"names must be strings, got 1 \(int\) at 0"):
        QUBO(Q=np.eye(2), c=np.zeros(2), constant=0.0, decode=lambda x: x,
             is_feasible=lambda x: True, objective=lambda x: 0.0, names=[1, 2])
    with pytest.raises(InputError, match="slope must be a finite number > 0, got an integer "
                                         "of 401 digits"):
        cournot(slope=10**400)
    with pytest.raises(ProgramError, match="integer literal"):
        parse("x[-0]", 2)  # x[-0] is x[0] in Python: no literal the grammar reads


def _sections_lp(tmp_path: Path, tail: str, objective: str = " obj: 2 x + 3 y\n",
                 rows: str = " c1: x + y >= 1\n", sense: str = "Minimize") -> Path:
    path = tmp_path / "sections.lp"
    path.write_text(f"{sense}\n{objective}Subject To\n{rows}{tail}End\n")
    return path


@pytest.mark.parametrize("tail", [
    "Bounds\n x <= 4\n y <= 4\nSOS\n s1: S1:: x:1 y:2 :\n",  # a stray colon
    "Bounds\n x <= 4\n y <= 4\nSOS\n s1: S1:: x:1 y:2 : 5\n",  # a priority
])
def test_an_sos_section_scip_crashed_on_is_refused(tmp_path: Path, tail: str) -> None:
    """SCIP's reader crashed the process (segmentation fault) on these."""
    with pytest.raises(InputError, match="SOS section is no run of sets"):
        solve_file(_sections_lp(tmp_path, tail), solver="scip")


def test_well_formed_sos_sets_still_solve(tmp_path: Path) -> None:
    tail = "Bounds\n x <= 4\n y <= 4\nSOS\n s1: S1:: x:1 y:2\n S2 :: x:1.5 y:-2 \\ note\n"
    result = solve_file(_sections_lp(tmp_path, tail, sense="Maximize",
                                      objective=" obj: x + y\n"), solver="scip")
    assert result.objective == pytest.approx(4.0)  # one of x, y nonzero


@pytest.mark.parametrize("tail", [
    "Semi-continuous\n x\nBounds\n 2 <= x <= 4\n",  # bounded after its declaration
    "Bounds\n 1 <= x <= 4\nSemi-continuous\n x\nBounds\n x >= 2\n",
])
def test_a_semi_continuous_column_bounded_after_its_declaration(tmp_path: Path,
                                                                  tail: str) -> None:
    """SCIP's reader applied the declaration with the bounds read so far and dropped it:
    'optimal' 4 (x = 2) where x = 0 gives 3; HiGHS's reads it as written."""
    path = _sections_lp(tmp_path, tail)
    with pytest.raises(InputError, match="given a lower bound after its Semi-continuous"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(3.0)
    for fine in ("Bounds\n 2 <= x <= 4\nSemi-continuous\n x\n",
                 "Bounds\n 2 <= x <= 4\nSemi-continuous\n x\nBounds\n x <= 3\n"):  # upper only
        plain = _sections_lp(tmp_path, fine)
        assert solve_file(plain, solver="scip").objective == pytest.approx(3.0)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_semi_continuous_column_below_zero_is_refused(tmp_path: Path, solver: str) -> None:
    path = _sections_lp(tmp_path, "Bounds\n -5 <= x <= -2\nSemi-continuous\n x\n",
                        rows=" c1: x + y >= -10\n")
    with pytest.raises(InputError, match="lower bound below 0"):
        solve_file(path, solver=solver)


@pytest.mark.parametrize("objective, tail, word", [
    (" obj: 2 x + int\n", "", "int"),  # SCIP dropped int's cost: 2 for 4
    (" obj: 2 x + 3 y\n", "Generals\n x bin y\n", "bin"),  # SCIP made y binary
])
def test_a_column_named_like_a_section_is_refused_for_scip(tmp_path: Path, objective, tail,
                                                           word) -> None:
    rows = " c1: x + y >= 1\n c2: x + int <= 3\n c3: x <= 1\n" if "int" in objective else \
        " c1: x + y >= 1\n"
    path = _sections_lp(tmp_path, tail, objective=objective, rows=rows, sense="Maximize"
                        if "int" in objective else "Minimize")
    with pytest.raises(InputError, match=f"the column '{word}' is named like an LP section"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").status is Status.OPTIMAL


@pytest.mark.parametrize("bounds, lower, upper", [
    (" x >= 2\n x = 0\n", 0.0, 0.0),  # SCIP read [2, 0]: 'infeasible'
    (" x >= 3\n x >= 0\n", 0.0, 10.0),  # SCIP kept 3
    (" x <= 3\n x <= +inf\n", 0.0, 10.0),  # SCIP kept 3
])
def test_a_later_bound_scip_skips_is_refused(tmp_path: Path, bounds, lower, upper) -> None:
    """SCIP's reader skips a later lower bound of 0 and upper bound of +inf; HiGHS's takes
    the last statement, as the format says."""
    path = _sections_lp(tmp_path, f"Bounds\n{bounds} y <= 10\n", objective=" obj: x - y\n",
                        rows=" c1: x + y <= 10\n")
    with pytest.raises(InputError, match="skips a later bound of 0 or \\+inf"):
        solve_file(path, solver="scip")
    highs = solve_file(path, solver="highs")
    assert lower <= highs.values["x"] <= upper


def test_bounds_given_twice_alike_still_solve(tmp_path: Path) -> None:
    path = _sections_lp(tmp_path, "Bounds\n x >= 1\n x <= 5\n 1 <= x <= 5\n y <= 10\n",
                        objective=" obj: x - y\n", rows=" c1: x + y <= 10\n")
    assert solve_file(path, solver="scip").objective == pytest.approx(
        solve_file(path, solver="highs").objective)


def test_a_file_scip_warns_about_at_length_is_read(tmp_path: Path) -> None:
    """SCIP's reader printed a warning per integer column with a fractional bound; past
    64 kB the captured pipe filled while SCIP held Python's lock, and solve_file hung for
    good (2,000 columns). The output now goes through a file."""
    import subprocess
    import sys

    n = 3000
    path = tmp_path / "frac_int.mps"
    path.write_text("NAME t\nROWS\n N obj\n L c\nCOLUMNS\n    M1 'MARKER' 'INTORG'\n"
                    + "".join(f"    x{j} obj -1 c 1\n" for j in range(n))
                    + "    M2 'MARKER' 'INTEND'\nRHS\n    RHS c 10\nBOUNDS\n"
                    + "".join(f" UP BND x{j} 2.5\n" for j in range(n)) + "ENDATA\n")
    code = ("import sys; from coplug.plugins.files import solve_file; "
            "r = solve_file(sys.argv[1], solver='scip', time_limit=20); print(r.objective)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert float(done.stdout.split()[-1]) == pytest.approx(-10.0)


@pytest.mark.parametrize("tail", [
    "Bounds\n x >= 1\n x >= 0\nBinaries\n x\n",  # SCIP kept x at 1
    "Bounds\n x >= 2\n x >= 0\n x <= 5\nSemi-continuous\n x\n",  # SCIP kept 2: 1.75 for 0.25
])
def test_repeated_bounds_of_binaries_and_semi_columns_are_checked(tmp_path: Path,
                                                                  tail: str) -> None:
    path = _sections_lp(tmp_path, tail, objective=" obj: x + 0.25 y\n", rows=" c1: x + y >= 1\n")
    with pytest.raises(InputError, match="skips a later bound of 0 or \\+inf"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(0.25)


@pytest.mark.parametrize("objective, tail", [
    (" obj: 2 x + user\n", ""),  # `user` opens no section without `cuts` after it
    (" obj: 2 x + 3 y\n", "Semi-continuous\n x\nBounds\n 0 <= x <= 5\n"),  # a later 0 lower
])
def test_what_scip_reads_as_written_is_not_refused(tmp_path: Path, objective, tail) -> None:
    rows = " c1: x + user >= 1\n" if "user" in objective else " c1: x + y >= 1\n"
    path = _sections_lp(tmp_path, tail, objective=objective, rows=rows)
    assert solve_file(path, solver="scip").objective == pytest.approx(
        solve_file(path, solver="highs").objective)


def test_a_long_bad_sos_set_is_refused_at_once(tmp_path: Path) -> None:
    """Weights read more than one way made the failing match take time doubling with each
    member (20 members: 67 s)."""
    import time

    members = " ".join(f"x{k}:{10 * (k + 1)}" for k in range(40))
    path = _sections_lp(tmp_path, f"SOS\n s1: S1:: {members} 5\n")
    started = time.perf_counter()
    with pytest.raises(InputError, match="SOS section is no run of sets"):
        solve_file(path, solver="scip")
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_an_indicator_slack_stays_out_of_a_files_values(tmp_path: Path, suffix: str) -> None:
    """SCIP's readers add a slack column per indicator row; it is looked for only in files
    that may hold one (an INDICATORS section, an LP `->`), and left out of the values."""
    path, optimum = _indicator_file(tmp_path, suffix)
    result = solve_file(path, solver="scip")
    assert set(result.values) == {"b", "x"}
    assert result.objective == pytest.approx(optimum)


@pytest.mark.parametrize("rhs, refused", [
    ("* note\n    RHS c1 4\n* note\n    RHS c2 1D2\n", "not a number as MPS writes one"),
    ("* note\n    RHS c1 4\n* note\n    RHS2 c2 5\n", "a second RHS set"),
    ("* note\n    RHS c1 4\n* note\n    RHS c2 5\n", None),
])
def test_comment_lines_keep_the_rhs_checks(tmp_path: Path, rhs: str, refused) -> None:
    """Comment lines are left out before the bulk check (one sent every line the slow way);
    the faults around them are still found."""
    path = tmp_path / "c.mps"
    path.write_text("NAME t\nROWS\n N obj\n L c1\n L c2\nCOLUMNS\n    x obj -1 c1 1\n"
                    f"    x c2 1\nRHS\n{rhs}ENDATA\n")
    if refused:
        with pytest.raises(InputError, match=refused):
            solve_file(path, solver="highs")
    else:
        assert solve_file(path, solver="highs").objective == pytest.approx(-4.0)


def test_a_user_cuts_head_with_a_comment_is_a_head(tmp_path: Path) -> None:
    """`User Cuts\\ note` is a head to SCIP's reader (it gives the row before it the cuts'
    flags); missed, c1 went unenforced: 'optimal' 100 at a point breaking it."""
    path = tmp_path / "cuts.lp"
    path.write_text("Maximize\n obj: x + y\nSubject To\n c1: x + y <= 10\nUser Cuts\\ valid\n"
                    " u1: x <= 50\nBounds\n x <= 50\n y <= 50\nEnd\n")
    assert solve_file(path, solver="scip").objective == pytest.approx(10.0)


def test_an_upper_bound_scip_takes_for_1_keeps_the_order_check(tmp_path: Path) -> None:
    """SCIP held a column with `UP 1.0000001` binary (within its tolerance) and reset it
    when LO followed: 'optimal' -1000 for -1."""
    path = tmp_path / "b.mps"
    path.write_text("NAME t\nROWS\n N obj\n L c\nCOLUMNS\n    M1 'MARKER' 'INTORG'\n"
                    "    x obj -1 c 1\n    M2 'MARKER' 'INTEND'\nRHS\n    RHS c 1000\nBOUNDS\n"
                    " UP BND x 1.0000001\n LO BND x 0.5\nENDATA\n")
    with pytest.raises(InputError, match="resets a bound of a column it holds binary"):
        solve_file(path, solver="scip")


def test_streams_come_back_when_ctrl_c_lands_while_they_are_put_back(monkeypatch) -> None:
    """A Ctrl-C inside the capture's flush left descriptors 1 and 2 on the temporary file
    for good; now the streams are put back and the interrupt raised after."""
    import os

    from coplug.plugins import interrupts

    before = os.readlink("/proc/self/fd/1") if os.path.exists("/proc/self/fd/1") else None
    calls = []
    real_flush = interrupts._flush_all

    def flush_interrupted() -> None:
        calls.append(1)
        if len(calls) == 2:  # the flush on the way back
            raise KeyboardInterrupt
        real_flush()

    monkeypatch.setattr(interrupts, "_flush_all", flush_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with interrupts.capture_to_file():
            os.write(1, b"inside\n")
    if before is not None:
        assert os.readlink("/proc/self/fd/1") == before
    assert len(calls) >= 3  # the flush was run again
