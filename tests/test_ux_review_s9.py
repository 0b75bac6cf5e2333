"""Fixes from the ninth session's new-user review: an unbuilt AbstractModel, flags the CLI
used to ignore, checks that ran only after the work, and messages that named too little."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.fair_graphs import load_graph
from coplug.formulations.mip_families import gisp
from coplug.plugins import InputError, Result, Status, infeasibilities, solve
from coplug.plugins import cli as cli_module
from coplug.plugins.files import solve_file
from coplug.plugins.lap import solve_lap


def _coplug(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coplug.plugins.cli", *args],
                          capture_output=True, text=True, timeout=300)


def test_an_unbuilt_abstract_model_is_refused() -> None:
    m = pyo.AbstractModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.o = pyo.Objective(rule=lambda m: sum(m.x[i] for i in m.I), sense=pyo.maximize)
    with pytest.raises(InputError, match="create_instance"):
        solve(m)
    assert solve(m.create_instance()).objective == pytest.approx(3.0)


def test_solve_file_refuses_formulation_flags(tmp_path: Path) -> None:
    path = tmp_path / "m.lp"
    gisp(20, seed=0).write(str(path), io_options={"symbolic_solver_labels": True})
    out = _coplug("solve", str(path), "--size", "99")
    assert out.returncode == 2 and "--size applies to formulation names" in out.stderr
    assert _coplug("solve", str(path)).returncode == 0


def test_solve_tee_shows_the_solver_log() -> None:
    out = _coplug("solve", "knapsack", "--size", "12", "--tee")
    assert out.returncode == 0
    assert "SCIP Status" in out.stdout and "status     optimal" in out.stdout


def test_an_interrupted_cli_solve_exits_130(monkeypatch, capsys) -> None:
    import coplug.plugins.bridge as bridge

    monkeypatch.setattr(bridge, "solve", lambda *a, **k: Result(Status.INTERRUPTED, "scip"))
    assert cli_module.main(["solve", "knapsack", "--size", "5"]) == 130
    assert "interrupted" in capsys.readouterr().out


def test_lap_file_refuses_generator_flags(tmp_path: Path) -> None:
    path = tmp_path / "c.npy"
    np.save(path, np.random.default_rng(0).random((5, 5)))
    out = _coplug("lap", str(path), "--n", "50")
    assert out.returncode == 2 and "apply to --generator" in out.stderr
    assert _coplug("lap", str(path)).returncode == 0


def test_fairsc_mip_size_is_checked_before_the_clustering_runs() -> None:
    out = _coplug("fairsc", "--n", "200", "--mip")
    assert out.returncode == 2 and "--mip is for tiny graphs" in out.stderr
    assert out.stdout == ""


def test_unknown_graph_and_predictor_messages_name_the_choices() -> None:
    with pytest.raises(InputError, match="--graph sbm"):
        load_graph("foo")
    out = _coplug("pmvb", "mknapsack", "--size", "10", "--predictor", "xgb")
    assert out.returncode == 2 and "neither lp, logreg, gbt, mlp" in out.stderr


def test_solve_lap_on_a_pyomo_model_points_to_solve() -> None:
    m = pyo.ConcreteModel()
    with pytest.raises(InputError, match="solver='lap'"):
        solve_lap(m)
    with pytest.raises(InputError, match="cost matrix"):
        solve_lap(None)


def test_highs_file_stopped_by_a_loose_gap_is_feasible(tmp_path: Path) -> None:
    path = tmp_path / "g.lp"
    m = gisp(60, seed=1)
    _, symbols = m.write(str(path))
    loose = solve_file(path, solver="highs", mip_rel_gap=0.5)
    if loose.gap is not None and loose.gap > 1e-4:
        assert loose.status is Status.FEASIBLE
    for name, var in m.solutions.symbol_map[symbols].bySymbol.items():
        if isinstance(var, pyo.Var._ComponentDataClass):  # the file's point meets the rows
            var.set_value(loose.values[name])
    assert infeasibilities(m) == {}
    exact = solve_file(path, solver="highs")
    assert exact.status is Status.OPTIMAL
