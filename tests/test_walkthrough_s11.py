"""Fixes from a README walkthrough: what a user tries right after each example must give a
one-line answer, the status SCIP would give, and no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import mknapsack, setcover
from coplug.plugins import solve
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError
from coplug.plugins.files import solve_file
from coplug.plugins.results import Status


def test_a_param_without_value_is_one_line_not_a_pyomo_log(capfd) -> None:
    m = pyo.ConcreteModel()
    m.p = pyo.Param(mutable=True)
    m.x = pyo.Var(bounds=(0, 1))
    m.cc = pyo.Constraint(expr=m.p * m.x <= 1)
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match=r"constraint 'cc': cannot evaluate its data \(Error "
                                         r"evaluating Param value \(p\): The Param value is "
                                         r"currently set to an invalid value\)"):
        solve(m)
    m.p.set_value(0)
    m.cc.set_value(m.x / m.p <= 1)
    with pytest.raises(InputError, match=r"\(division by zero\)"):
        solve(m)
    assert "ERROR" not in capfd.readouterr().err


def test_an_infinite_lower_bound_says_at_or_beyond() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1e20, None))
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match=r"lower bound is 1e\+20, at or beyond 1e\+20"):
        solve(m)


def test_a_highs_node_limit_is_node_limit_as_in_scip(tmp_path: Path) -> None:
    model = mknapsack(30, seed=0)  # not closed at the root by either solver
    assert solve(model, **{"limits/nodes": 1}).status is Status.NODE_LIMIT
    assert solve(model, solver="highs", mip_max_nodes=1).status is Status.NODE_LIMIT
    assert solve(model, solver="highs", mip_max_leaves=1).status is Status.NODE_LIMIT
    assert solve(model, solver="highs", mip_max_improving_sols=1).status is Status.FEASIBLE
    path = tmp_path / "mk.mps"
    model.write(str(path))
    assert solve_file(path, solver="highs", mip_max_nodes=1).status is Status.NODE_LIMIT
    assert solve_file(path, solver="highs", mip_max_improving_sols=1).status is Status.FEASIBLE


def test_cli_warnings_are_one_line(tmp_path: Path, capsys) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    capacity = 10**11
    m.cap = pyo.Constraint(expr=(capacity // 2 + 1) * m.x[0] + (capacity // 2) * m.x[1]
                           <= capacity)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    path = tmp_path / "trap.lp"
    m.write(str(path))
    assert main(["solve", str(path)]) == 0
    captured = capsys.readouterr()
    assert "status     unknown" in captured.out
    assert captured.err.startswith("coplug: warning: SCIP's solution violates 1 all-integer")
    assert "UserWarning" not in captured.err and "cli.py" not in captured.err


def test_cli_into_a_closed_pipe_stops_quietly() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "coplug.plugins.cli", "solve", "--list"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader went away, as `| head -0` does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141
    assert b"Traceback" not in err and b"BrokenPipeError" not in err


class _BadStats:
    """A plugin whose statistics() raises after the solve."""

    name = "bad"

    def attach(self, scip_model: object, var_map: object) -> None:
        """Nothing to include."""

    def statistics(self) -> dict:
        raise ValueError("stat boom")


def test_a_failing_plugin_statistics_keeps_the_result() -> None:
    with pytest.warns(UserWarning, match=r"plugin 'bad': statistics\(\) failed"):
        result = solve(setcover(30, seed=1), plugins=[_BadStats()])
    assert result.optimal
    assert result.plugin_stats["bad"] == {"error": "ValueError: stat boom"}
    assert result.objective == pytest.approx(solve(setcover(30, seed=1), solver="highs").objective)
