"""Twelfth-session shell probe of the `coplug` command line: --json keeps stdout to the JSON
object (solver logs and SCIP's Ctrl-C notice are C writes to descriptor 1), Ctrl-C during
`coplug pmvb` stops the command, `coplug bbo` refuses unreadable program files in one line,
`coplug qubo --file` names a directory as such."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyomo.environ as pyo
import pytest

from coplug.plugins.cli import main
from coplug.plugins.results import Result, Status


def _small_mip(path: Path) -> Path:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeIntegers, bounds=(0, 10))
    m.y = pyo.Var(within=pyo.Binary)
    m.c = pyo.Constraint(expr=2 * m.x + 3 * m.y <= 7.5)
    m.o = pyo.Objective(expr=3 * m.x + 2 * m.y, sense=pyo.maximize)
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    return path


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_json_with_tee_keeps_the_solver_log_off_stdout(tmp_path, capfd, solver):
    """`coplug solve F --tee --json | jq` failed: the solver log went to stdout before the
    JSON; it now goes to stderr."""
    mps = _small_mip(tmp_path / "m.mps")
    assert main(["solve", str(mps), "--solver", solver, "--tee", "--json"]) == 0
    out, err = capfd.readouterr()
    data = json.loads(out)
    assert data["status"] == "optimal" and data["objective"] == pytest.approx(9.0)
    assert err.strip()  # the log is still shown


def test_json_stdout_holds_only_json_when_the_solver_writes_to_fd1(capfd, monkeypatch):
    """SCIP prints "pressed CTRL-C 1 times" on descriptor 1 when Ctrl-C stops it, so an
    interrupted `coplug solve ... --json` printed a line that is not JSON before the object."""
    import coplug.plugins.bridge as bridge

    def chatty_solve(model, **kwargs):
        os.write(1, b"pressed CTRL-C 1 times (5 times for forcing termination)\n")
        return Result(status=Status.INTERRUPTED, solver="scip", objective=1.0, bound=0.0,
                      has_solution=True)

    monkeypatch.setattr(bridge, "solve", chatty_solve)
    assert main(["solve", "knapsack", "--size", "5", "--json"]) == 130
    out, err = capfd.readouterr()
    assert json.loads(out)["status"] == "interrupted"
    assert "pressed CTRL-C" in err


def _interrupted(**kwargs) -> Result:
    return Result(status=Status.INTERRUPTED, solver="scip", objective=5.0, bound=9.0,
                  has_solution=True, **kwargs)


def test_pmvb_ctrl_c_in_the_default_solve_stops_the_command(capsys, monkeypatch):
    """Ctrl-C during `coplug pmvb`'s default SCIP solve went on to the PMVB solve, printed
    'same optimum: False' and exited 0; it now skips the PMVB solve and exits 130."""
    import coplug.plugins.bridge as bridge
    import coplug.plugins.pmvb_cli as pmvb_cli

    calls = []
    monkeypatch.setattr(bridge, "solve", lambda model, **kw: _interrupted())
    monkeypatch.setattr(pmvb_cli, "solve_with_pmvb", lambda *a, **kw: calls.append(a))
    assert main(["pmvb", "mknapsack", "--size", "10"]) == 130
    out, err = capsys.readouterr()
    assert calls == []
    assert "interrupted" in out and "not run" in out and "same optimum" not in out
    assert "coplug: interrupted" in err


def test_pmvb_ctrl_c_in_the_pmvb_solve_exits_130(capsys, monkeypatch):
    import coplug.plugins.bridge as bridge
    import coplug.plugins.pmvb_cli as pmvb_cli

    optimal = Result(status=Status.OPTIMAL, solver="scip", objective=9.0, bound=9.0,
                     has_solution=True)
    monkeypatch.setattr(bridge, "solve", lambda model, **kw: optimal)
    monkeypatch.setattr(pmvb_cli, "solve_with_pmvb", lambda *a, **kw: _interrupted())
    assert main(["pmvb", "mknapsack", "--size", "10"]) == 130
    out, _ = capsys.readouterr()
    assert out.count("interrupted") == 1 and "same optimum" not in out


def _bbo_error(args: list[str], capsys) -> str:
    assert main(["bbo", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("coplug: error: ") and "\n" not in err
    return err


def test_bbo_binary_program_file_is_a_one_line_error(tmp_path, capsys):
    """A binary program file (text or .json) raised UnicodeDecodeError with a traceback."""
    for name in ("prog.txt", "prog.json"):
        (tmp_path / name).write_bytes(b"\x00\x99\xff\xfe" * 20)
        assert "not UTF-8 text" in _bbo_error(["solve", str(tmp_path / name), "--dim", "2"]
                                              if name.endswith("txt")
                                              else ["solve", str(tmp_path / name)], capsys)
    err = _bbo_error(["evolve", "--target-program", str(tmp_path / "prog.json"),
                      "--run-dir", str(tmp_path / "run")], capsys)
    assert "not UTF-8 text" in err


def test_bbo_long_inline_program_is_not_stat_as_a_file_name(capsys):
    """Program text of 256..4095 characters without a '/' reached os.stat as a file name:
    OSError 'File name too long' with a traceback."""
    text = " + ".join(["x[0]**2"] * 60)
    assert main(["bbo", "export", text, "--dim", "2", "--format", "json"]) == 0
    assert '"coplug-bbo-program"' in capsys.readouterr().out


def test_bbo_directory_or_missing_program_file_says_so(tmp_path, capsys, monkeypatch):
    """A directory was read as program text ('unsafe: Attribute is not allowed') or, named
    .json, called missing; a missing prog.txt was 'a text program needs --dim'."""
    (tmp_path / "d.json").mkdir()
    (tmp_path / "d.txt").mkdir()
    assert "is a directory" in _bbo_error(["solve", str(tmp_path / "d.json")], capsys)
    assert "is a directory" in _bbo_error(["solve", str(tmp_path / "d.txt"), "--dim", "2"],
                                          capsys)
    monkeypatch.chdir(tmp_path)
    assert "no program file prog.txt" in _bbo_error(["solve", "prog.txt"], capsys)
    assert "empty program" in _bbo_error(["solve", "", "--dim", "2"], capsys)


def test_bbo_evolve_target_program_dim_names_the_evolution_dim(tmp_path, capsys):
    """A dim-3 .json target with the default --dim 2 said 'drop --dim', a flag never given
    (and dropping it changes nothing); the message now names both dims."""
    out = tmp_path / "t.json"
    assert main(["bbo", "export", "bbob:1", "--dim", "3", "--output", str(out)]) == 0
    capsys.readouterr()
    err = _bbo_error(["evolve", "--target-program", str(out), "--run-dir",
                      str(tmp_path / "run")], capsys)
    assert "dim 3" in err and "--dim 2" in err and "drop --dim" not in err


@pytest.mark.parametrize("args", [
    ["solve", "a" * 300],
    ["lap", "a" * 300 + ".npy"],
    ["qubo", "knapsack", "--file", "a" * 300],
    ["pmvb", "mknapsack", "--predictor", "a" * 300 + ".joblib"],
])
def test_a_path_the_system_refuses_is_a_one_line_error(args, capsys):
    """A 300-character file name (os.stat: File name too long) ended every command in a
    traceback; main() now prints the OSError in one line and exits 2."""
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("coplug: error: ") and "File name too long" in err
    assert "\n" not in err


@pytest.mark.parametrize("problem", ["knapsack", "tsp"])
def test_qubo_file_that_is_a_directory_is_named_so(problem, tmp_path, capsys):
    """`coplug qubo knapsack --file DIR` said 'knapsack file not found: DIR'."""
    assert main(["qubo", problem, "--file", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("with_solution", [True, False])
def test_fairsc_mip_ctrl_c_exits_130(with_solution, capsys, monkeypatch):
    """Ctrl-C during `coplug fairsc --mip`'s HiGHS solve printed the partition found so far
    ('interrupted: best found ...') and exited 0; it now exits 130."""
    import dataclasses

    import coplug.plugins as plugins

    real_solve = plugins.solve

    def interrupted_solve(model, **kwargs):
        if not with_solution:
            return Result(status=Status.INTERRUPTED, solver="highs", bound=1.0)
        return dataclasses.replace(real_solve(model, **kwargs), status=Status.INTERRUPTED)

    monkeypatch.setattr(plugins, "solve", interrupted_solve)
    assert main(["fairsc", "--n", "12", "--clusters", "2", "--mip"]) == 130
    out, err = capsys.readouterr()
    assert "exact MIP" in out and "interrupted" in out
    assert "coplug: interrupted" in err


def test_bbo_solve_ctrl_c_exits_130(capsys, monkeypatch):
    """Ctrl-C during `coplug bbo solve`'s SCIP run printed 'status interrupted' and exited
    0; it now exits 130 as `coplug solve` does."""
    from types import SimpleNamespace

    import coplug.formulations.bbo.certify as certify_module

    cert = SimpleNamespace(result=Result(status=Status.INTERRUPTED, solver="scip"), x=None,
                           certified=False)
    monkeypatch.setattr(certify_module, "certify", lambda *a, **kw: cert)
    assert main(["bbo", "solve", "bbob:1"]) == 130
    assert "interrupted" in capsys.readouterr().out
