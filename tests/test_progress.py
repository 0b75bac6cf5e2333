"""The live progress line: it shows the solve's figures, leaves the search alone (same
optimum and node count as without it), and `coplug solve` shows it on a terminal only."""

from __future__ import annotations

import io
import math

import pytest

from coplug.formulations.mip_families import build_family
from coplug.plugins import InputError, solve
from coplug.plugins.cli import main
from coplug.plugins.progress import Progress


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_progress_line_shows_the_solve_and_changes_nothing(solver: str) -> None:
    stream = io.StringIO()
    progress = Progress(every=0.0, file=stream)
    shown = solve(build_family("gisp", 40, seed=2), solver=solver, plugins=[progress])
    plain = solve(build_family("gisp", 40, seed=2), solver=solver)
    assert shown.optimal and plain.optimal
    assert shown.objective == pytest.approx(plain.objective, rel=1e-9)
    assert shown.nodes == plain.nodes  # the same search, not just the same answer
    stats = shown.plugin_stats["progress"]
    assert stats["redraws"] >= 1 and stats["nodes"] <= shown.nodes
    assert stats["incumbent"] is None or stats["incumbent"] <= shown.objective + 1e-6
    text = stream.getvalue()
    assert f"{solver}, " in text and ", incumbent " in text
    assert text.endswith("\r")  # the line is taken away once the solve is over


def test_progress_figures_agree_with_the_bound_and_gap() -> None:
    progress = Progress(every=0.0, file=io.StringIO())
    progress._open("scip")
    progress.show(1.5, 12, 100.0, 110.0)
    assert progress.statistics()["gap"] == pytest.approx(0.1)
    progress.show(1.6, 13, 1e20, 110.0)  # SCIP's infinity: no incumbent yet
    stats = progress.statistics()
    assert stats["incumbent"] is None and math.isinf(stats["gap"]) and stats["redraws"] == 2
    progress.close()


@pytest.mark.parametrize("every", [-1.0, math.nan, math.inf, True, "1", 10**400])
def test_progress_refuses_a_bad_interval(every) -> None:
    with pytest.raises(InputError, match="every"):
        Progress(every=every)


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_coplug_solve_shows_progress_on_a_terminal_only(monkeypatch, capsys) -> None:
    assert main(["solve", "gisp", "--size", "40"]) == 0
    assert ", incumbent " not in capsys.readouterr().err  # not a terminal: no line
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["solve", "gisp", "--size", "40"]) == 0
    assert "scip, " in terminal.getvalue()
    assert "plugin" not in capsys.readouterr().out  # the line is not reported as a plugin


def test_progress_redraws_at_most_every_interval() -> None:
    progress = Progress(every=3600.0, file=io.StringIO())
    progress._open("highs")
    for nodes in range(5):
        progress.show(0.1 * nodes, nodes, 10.0, 12.0)
    assert progress.statistics()["redraws"] == 1
    progress.close()


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_file_solve_with_a_progress_line(solver: str, tmp_path, monkeypatch) -> None:
    from coplug.plugins.files import solve_file

    path = tmp_path / "gisp.mps"
    build_family("gisp", 40, seed=2).write(str(path))
    plain = solve_file(path, solver=solver)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    shown = solve_file(path, solver=solver, progress=True)
    assert shown.optimal and plain.optimal
    assert shown.objective == pytest.approx(plain.objective, rel=1e-9)
    assert shown.nodes == plain.nodes
    assert f"{solver}, " in terminal.getvalue() and terminal.getvalue().endswith("\r")


def test_file_solve_refuses_a_progress_that_is_not_a_flag(tmp_path) -> None:
    from coplug.plugins.files import solve_file

    path = tmp_path / "gisp.mps"
    build_family("gisp", 10, seed=2).write(str(path))
    with pytest.raises(InputError, match="progress"):
        solve_file(path, progress="yes")


_TO_STDERR = """
from coplug.formulations.mip_families import build_family
from coplug.plugins import solve
from coplug.plugins.progress import Progress
result = solve(build_family("gisp", 40, seed=2), solver=SOLVER, plugins=[Progress(every=0.0)])
print(result.status.value)
"""


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_the_line_reaches_stderr_while_pyomo_captures_the_solver_log(solver: str,
                                                                      tmp_path) -> None:
    """Pyomo's interfaces point descriptor 2 into a pipe while the solver runs: the line,
    written to sys.stderr, vanished there and `coplug solve` showed nothing on a terminal."""
    import subprocess
    import sys

    err = tmp_path / "stderr.txt"
    with err.open("w") as stream:
        done = subprocess.run([sys.executable, "-c", _TO_STDERR.replace("SOLVER", repr(solver))],
                              stdout=subprocess.PIPE, stderr=stream, text=True, timeout=120)
    assert done.stdout.strip() == "optimal"
    assert f"{solver}, " in err.read_text() and ", incumbent " in err.read_text()
