"""explain_infeasible_file and `coplug solve FILE --explain`: the subsystem named by rows and
columns of an .mps/.lp file, checked here by scipy's MILP on the data the file was written
from (infeasible, and feasible without any one member)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyomo.environ as pyo
import pytest
from test_iis import random_system, scipy_feasible

from coplug.plugins import InputError, iis_file
from coplug.plugins.iis_file import explain_infeasible_file

LP_TEXT = """Minimize
 obj: x + y + z
Subject To
 a: x + y >= 30
 b: y <= 5
 c: z + w <= 100
 d: 2 k = 3
Bounds
 0 <= x <= 10
 0 <= y
 -5 <= w <= 5
 0 <= k <= 3
General
 k
End
"""


def _index(name: str) -> int:
    """The index Pyomo's symbolic label carries: 'c_u_row(3)_' -> 3, 'x(2)' -> 2."""
    return int(re.search(r"\((\d+)\)", name).group(1))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_file_subsystem_is_infeasible_and_irreducible_by_scipy(seed: int, suffix: str,
                                                                tmp_path: Path) -> None:
    model, data = random_system(seed)
    path = tmp_path / f"system{suffix}"
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    found = explain_infeasible_file(path)
    rows = [_index(name) for name in found.rows]
    bounds = [(_index(col), side) for col, side, _ in found.bounds]
    assert found.irreducible and not scipy_feasible(data, rows, bounds)
    for k in range(len(rows)):
        assert scipy_feasible(data, rows[:k] + rows[k + 1:], bounds)
    for k in range(len(bounds)):
        assert scipy_feasible(data, rows, bounds[:k] + bounds[k + 1:])


def test_integrality_conflict_and_unneeded_bounds_dropped(tmp_path: Path) -> None:
    path = tmp_path / "odd.lp"
    path.write_text(LP_TEXT.replace("a: x + y >= 30", "a: x + y >= 3"))  # only d conflicts
    found = explain_infeasible_file(path)
    assert found.rows == ["d"] and found.bounds == [] and found.irreducible and not found.notes
    path.write_text(LP_TEXT.replace(" d: 2 k = 3\n", ""))
    found = explain_infeasible_file(path)
    assert found.rows == ["a", "b"] and found.bounds == [("x", "upper", 10.0)]
    assert "row a" in str(found) and "bound x <= 10" in str(found)


def test_a_wrong_proposal_falls_back_to_filtering_the_whole_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, data = random_system(6)
    path = tmp_path / "system.mps"
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    monkeypatch.setattr(iis_file, "_scip_iis", lambda *args: [])  # a feasible "subsystem"
    monkeypatch.setattr(iis_file._Highs, "farkas_members", lambda self, time_limit: None)
    found = explain_infeasible_file(path)
    assert "the whole model was filtered" in found.notes[0] and found.irreducible
    rows = [_index(name) for name in found.rows]
    bounds = [(_index(col), side) for col, side, _ in found.bounds]
    assert not scipy_feasible(data, rows, bounds)
    assert all(scipy_feasible(data, rows[:k] + rows[k + 1:], bounds) for k in range(len(rows)))


def free_integer_system() -> pyo.ConcreteModel:
    """Three equality rows over integers whose bounds the filter drops: HiGHS's branch and
    bound did not settle one of the subsystems (SCIP does at once)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4))
    for var, domain, bounds in zip(m.x.values(), (
            pyo.NonNegativeIntegers, pyo.Reals, pyo.NonNegativeReals, pyo.Integers),
            ((0, 0), (None, 0), (0, 2), (1, None)), strict=True):
        var.domain, var.bounds = domain, bounds
    x = m.x
    m.c1 = pyo.Constraint(expr=-2 * x[0] + 2 * x[1] + 2 * x[3] == -1)
    m.c2 = pyo.Constraint(expr=-3 * x[0] + 2 * x[1] + 2 * x[2] + x[3] == 0.5)
    m.c3 = pyo.Constraint(expr=3 * x[0] - x[1] + 3 * x[2] + 2 * x[3] == 4.5)
    return m


def test_an_undecided_highs_check_goes_to_scip(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from coplug.plugins import iis

    monkeypatch.setattr(iis_file, "_CHECK_SECONDS", 1.0)
    monkeypatch.setattr(iis, "_CHECK_SECONDS", 1.0)
    model = free_integer_system()
    path = tmp_path / "free.lp"
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    found = explain_infeasible_file(path)
    expected = iis.explain_infeasible(model)  # the Pyomo path, checked against scipy elsewhere
    assert found.irreducible and not found.notes
    assert found.rows == [f"c_e_{con.name}_" for con in expected.constraints]
    assert len(found.bounds) == len(expected.bounds)


def test_feasible_and_missing_files_are_named(tmp_path: Path) -> None:
    path = tmp_path / "fine.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n a: x >= 1\nEnd\n")
    with pytest.raises(InputError, match="fine.lp is feasible"):
        explain_infeasible_file(path)
    with pytest.raises(InputError, match="no such file"):
        explain_infeasible_file(tmp_path / "nothere.mps")
    with pytest.raises(InputError, match="check_limit"):
        explain_infeasible_file(path, check_limit=True)


def test_cli_explain_prints_the_subsystem(tmp_path: Path, capsys) -> None:
    from coplug.plugins.cli import main

    path = tmp_path / "short.lp"
    path.write_text(LP_TEXT.replace(" d: 2 k = 3\n", ""))
    assert main(["solve", str(path), "--explain", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "infeasible"
    assert report["extra"]["iis"]["rows"] == ["a", "b"] and report["extra"]["iis"]["irreducible"]
    assert main(["solve", str(path), "--explain", "--solver", "highs"]) == 0
    assert "bound x <= 10" in capsys.readouterr().out
    assert main(["solve", "knapsack", "--size", "8", "--explain"]) == 0
    assert "nothing to explain, the solve ended optimal" in capsys.readouterr().err


def test_cli_keeps_the_solve_when_the_explanation_fails(tmp_path: Path, capsys) -> None:
    from coplug.plugins.cli import main

    path = tmp_path / "disk.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n a: [ x^2 + y^2 ] <= 1\n b: x + y >= 3\n"
                    "End\n")
    assert main(["solve", str(path), "--explain", "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "infeasible"
    assert "HiGHS cannot read disk.lp" in report["extra"]["iis"]["error"]


def test_cli_ctrl_c_during_the_explanation_prints_the_result_and_exits_130(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from coplug.plugins.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(iis_file, "explain_infeasible_file", interrupted)
    path = tmp_path / "short.lp"
    path.write_text(LP_TEXT.replace(" d: 2 k = 3\n", ""))
    assert main(["solve", str(path), "--explain", "--json"]) == 130
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "infeasible" and "interrupted" in report["extra"]["iis"]["error"]


@pytest.mark.parametrize(("irreducible", "words"), [
    (True, "feasible without any one of them"), (False, "checks stayed undecided"),
    (None, "too large to check")])
def test_the_text_says_how_far_the_subsystem_was_checked(irreducible, words: str) -> None:
    found = iis_file.FileInfeasibleSubsystem(["a"], [], irreducible)
    assert words in str(found)


def test_cli_hints_at_explain_for_an_infeasible_file(tmp_path: Path, capsys) -> None:
    from coplug.plugins.cli import main

    path = tmp_path / "short.lp"
    path.write_text(LP_TEXT.replace(" d: 2 k = 3\n", ""))
    assert main(["solve", str(path)]) == 0
    out = capsys.readouterr()
    assert "infeasible" in out.out and "hint: --explain" in out.err
    assert main(["solve", "knapsack", "--size", "8"]) == 0
    assert "hint" not in capsys.readouterr().err


@pytest.mark.parametrize("proposer", ["farkas", "scip"])
def test_a_file_lp_conflict_is_found_and_made_irreducible(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proposer: str) -> None:
    """A 31-row chain in 400 feasible rows. HiGHS's certificate proposes it exactly (SCIP's
    IIS is not asked); SCIP's proposal carries the 31 lower bounds of its columns too (62
    members, past check_limit), which halving chunks drop before the deletion filter."""
    def not_asked(*args: object) -> None:
        raise AssertionError(f"{proposer} was not to be asked")

    if proposer == "farkas":
        monkeypatch.setattr(iis_file, "_scip_iis", not_asked)
    else:
        monkeypatch.setattr(iis_file._Highs, "farkas_members", lambda self, time_limit: None)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 199)
    m.x = pyo.Var(m.I, bounds=(0, 10))
    m.ballast = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.x[(i + 1) % 200] <= 12)
    m.z = pyo.Var(range(31), bounds=(0, None))
    m.chain = pyo.Constraint(range(30), rule=lambda m, k: m.z[k + 1] >= m.z[k] + 1)
    m.top = pyo.Constraint(expr=m.z[30] <= 29.5)
    m.o = pyo.Objective(expr=m.x[0])
    path = tmp_path / "chain.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    found = explain_infeasible_file(path)
    assert found.irreducible
    assert found.rows == [f"c_u_chain({k})_" for k in range(30)] + ["c_u_top_"]
    assert found.bounds == [("z(0)", "lower", 0.0)]


@pytest.mark.parametrize("kind,column", [("SC", "semicontinuous"), ("SI", "semi-integer")])
def test_semicontinuous_columns_are_refused_by_name(tmp_path: Path, kind: str,
                                                    column: str) -> None:
    """x in {0} or [5.2, 5.8] was named as a conflict in a feasible file (its bounds read
    as the whole domain); both solvers solve the file at x = 5.8."""
    from coplug.plugins import solve_file

    path = tmp_path / "semi.mps"
    path.write_text("NAME semi\nROWS\n N obj\n L r\nCOLUMNS\n x obj -1 r 1\n y obj 1 r 1\n"
                    f"RHS\n rhs r 10\nBOUNDS\n {kind} bnd x 5.8\n LO bnd x 5.2\nENDATA\n")
    if kind == "SC":
        assert solve_file(path, solver="highs").objective == pytest.approx(-5.8)
    with pytest.raises(InputError, match=f"column 'x' is {column}"):
        explain_infeasible_file(path)
