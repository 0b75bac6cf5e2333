"""The `coplug` command line, run as a user would: in a subprocess."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from coplug.formulations.knapsack import knapsack_mip, random_knapsack
from coplug.plugins import solve
from coplug.plugins.cli import COMMANDS, build_parser


def _coplug(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "coplug.plugins.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_help_lists_commands() -> None:
    out = _coplug("--help")
    assert out.returncode == 0
    for command in COMMANDS:
        assert f"    {command} " in out.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_module_registers_its_command(command: str) -> None:
    parser = build_parser(command)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = subparsers.choices[command]
    assert len(registered._actions) > 1, f"{command} has only the stub parser"


def test_demo_knapsack_section_runs() -> None:
    out = _coplug("demo", "--only", "knapsack")
    assert out.returncode == 0, out.stderr
    assert "status     optimal" in out.stdout


def test_demo_lazy_tsp_section_runs() -> None:
    out = _coplug("demo", "--only", "lazy tsp")  # as its header prints it
    assert out.returncode == 0, out.stderr
    assert "== lazy tsp ==" in out.stdout and out.stdout.count("\n== ") == 1
    assert "optimal, length" in out.stdout and "subtour rows added" in out.stdout


def test_demo_alternatives_section_runs() -> None:
    out = _coplug("demo", "--only", "alternatives")
    assert out.returncode == 0, out.stderr
    assert "proven True" in out.stdout and "SolutionPool(5)" in out.stdout
    assert "LP ranging (HiGHS): profit 36" in out.stdout
    assert "non-dominated points" in out.stdout and "(complete: True)" in out.stdout


def test_demo_benders_section_runs() -> None:
    out = _coplug("demo", "--only", "benders")
    assert out.returncode == 0, out.stderr
    assert "Benders in SCIP optimal" in out.stdout


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_solve_formulation_json_matches_library(solver: str) -> None:
    out = _coplug("solve", "knapsack", "--size", "25", "--seed", "4", "--solver", solver, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    expected = solve(knapsack_mip(random_knapsack(25, seed=4)), solver="highs").objective
    assert data["status"] == "optimal"
    assert data["objective"] == pytest.approx(expected)


def test_solve_mps_file_with_both_solvers(tmp_path: Path) -> None:
    model = knapsack_mip(random_knapsack(15, seed=9))
    path = tmp_path / "knap.mps"
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    expected = solve(model, solver="scip").objective
    for solver in ("scip", "highs"):
        out = _coplug("solve", str(path), "--solver", solver, "--json")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["status"] == "optimal"
        assert abs(data["objective"]) == pytest.approx(abs(expected))


def test_errors_are_one_line() -> None:
    out = _coplug("solve", "nosuchproblem")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "unknown formulation 'nosuchproblem'" in out.stderr
    out = _coplug("solve", "missing.mps")
    assert out.returncode == 2 and "no such file" in out.stderr


def test_lap_time_limit_is_one_line_error_and_check_matches_scipy() -> None:
    out = _coplug("lap", "--generator", "uniform", "--n", "300", "--time-limit", "1e-9")
    assert out.returncode == 2 and "time limit" in out.stderr and "Traceback" not in out.stderr
    out = _coplug("lap", "--generator", "uniform", "--n", "300", "--check", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["matches_scipy"]


def test_solve_list_names_every_formulation_and_a_missing_target_is_named() -> None:
    from coplug.formulations import registry

    listed = _coplug("solve", "--list")
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines()} == set(registry.names())
    missing = _coplug("solve")
    assert missing.returncode == 2 and "coplug solve --list" in missing.stderr


def test_file_solves_check_the_time_limit_like_solve(tmp_path: Path) -> None:
    from coplug.plugins import InputError
    from coplug.plugins.files import solve_file

    model = knapsack_mip(random_knapsack(12, seed=2))
    path = tmp_path / "knap.lp"
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    expected = solve(model).objective
    for solver in ("scip", "highs"):
        with pytest.raises(InputError, match="time_limit must be positive"):
            solve_file(path, solver=solver, time_limit=0)
        assert solve_file(path, solver=solver, time_limit=float("inf")).objective == \
            pytest.approx(expected)


def test_garbage_files_and_bad_seeds_are_one_line_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.lp"
    garbage.write_text("garbage\n")  # SCIP's LP reader took this as an empty problem
    for solver in ("scip", "highs"):
        out = _coplug("solve", str(garbage), "--solver", solver)
        assert out.returncode == 2 and "garbage.lp" in out.stderr and "Traceback" not in out.stderr
    out = _coplug("fairsc", "--graph", "sbm", "--n", "20", "--clusters", "2", "--seed", "-1")
    assert out.returncode == 2 and "--seed: must be an integer in [0, 2**32)" in out.stderr
    out = _coplug("bbo", "solve", "bbob:1", "--dim", "0")
    assert out.returncode == 2 and "dim in [2, 100000], got 0" in out.stderr


def test_cli_takes_a_formulation_name_beside_a_folder_of_that_name(tmp_path, monkeypatch,
                                                                    capsys) -> None:
    from coplug.plugins.cli import main

    (tmp_path / "knapsack").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "knapsack", "--size", "8", "--solver", "highs"]) == 0
    assert "optimal" in capsys.readouterr().out


def test_json_listing_and_lap_status(capsys) -> None:
    import json

    from coplug.formulations import registry
    from coplug.plugins.cli import main

    assert main(["solve", "--list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == registry.names()
    assert main(["lap", "--generator", "uniform", "--n", "30", "--json", "--check"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "optimal" and report["matches_scipy"] is True


def test_lap_k_ranks_the_best_assignments() -> None:
    from scipy.optimize import linear_sum_assignment

    from coplug.formulations.assignment import generate

    out = _coplug("lap", "--generator", "low_rank", "--n", "12", "--seed", "3", "--k", "15",
                  "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    c = generate("low_rank", 12, seed=3)
    rows, cols = linear_sum_assignment(c)
    assert data["status"] == "k_found" and data["found"] == 15
    assert data["costs"] == sorted(data["costs"])
    assert data["costs"][0] == pytest.approx(c[rows, cols].sum())
    refused = _coplug("lap", "--generator", "uniform", "--n", "5", "--k", "3", "--warm")
    assert refused.returncode == 2 and "--k ranks assignments" in refused.stderr


def test_lap_k_with_unmatched_cost_ranks_matchings() -> None:
    from coplug.formulations.assignment import generate
    from coplug.plugins.lap import ranked_matchings

    out = _coplug("lap", "--generator", "geometric", "--n", "9", "--seed", "2", "--k", "12",
                  "--unmatched-cost", "0.05", "--json")
    assert out.returncode == 0, out.stderr
    costs = json.loads(out.stdout)["costs"]
    expected = ranked_matchings(generate("geometric", 9, seed=2), 12, row_cost=0.05,
                                col_cost=0.05).costs
    assert costs == pytest.approx(expected)
    # dearer than leaving a track and a detection unmatched, some pairs go unmatched
    assert costs[0] < _scipy_optimum(generate("geometric", 9, seed=2))


def _scipy_optimum(c) -> float:
    """The optimal assignment's cost, by scipy."""
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(c)
    return float(c[rows, cols].sum())


def test_lap_reads_a_sparse_npz_file_solves_ranks_and_checks_it(tmp_path: Path, capsys,
                                                                  monkeypatch) -> None:
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linear_sum_assignment

    from coplug.formulations.assignment import gated
    from coplug.plugins.cli import main
    from coplug.plugins.lap import cli as lap_cli

    c = gated(400, gate=4, seed=1)
    path = tmp_path / "frame.npz"
    sp.save_npz(path, c)
    dense = np.where(c.toarray() > 0, c.toarray(), np.inf)
    rows, cols = linear_sum_assignment(dense)
    out = _coplug("lap", str(path), "--check", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["matches_scipy"] and report["cost"] == pytest.approx(dense[rows, cols].sum())
    assert main(["lap", str(path), "--k", "5", "--json"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert ranked["status"] == "k_found" and ranked["costs"][0] == pytest.approx(report["cost"])
    monkeypatch.setattr(lap_cli, "CHECK_MAX_ENTRIES", 1000)
    assert main(["lap", str(path), "--check"]) == 2
    assert "needs a dense copy of this 400x400 sparse matrix" in capsys.readouterr().err
    archive = tmp_path / "plain.npz"
    np.savez(archive, a=np.eye(3))
    out = _coplug("lap", str(archive))
    assert out.returncode == 2 and "not a scipy.sparse .npz matrix" in out.stderr
    assert "Traceback" not in out.stderr


def test_lap_gated_generator_is_sparse_and_ranked() -> None:
    from coplug.formulations.assignment import gated
    from coplug.plugins.lap import solve_lap

    out = _coplug("lap", "--generator", "gated", "--n", "500", "--seed", "4", "--k", "3",
                  "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "k_found" and data["shape"] == [500, 500]
    assert data["costs"][0] == pytest.approx(solve_lap(gated(500, seed=4)).cost)
    assert data["costs"] == sorted(data["costs"])


def test_an_unknown_lap_generator_lists_every_one_the_command_takes(capsys) -> None:
    """The list left out `gated`, which the command takes."""
    from coplug.plugins.cli import main

    assert main(["lap", "--generator", "gatd", "--n", "5"]) == 2
    assert capsys.readouterr().err.strip().endswith("transport, gated")
    assert main(["lap", "--generator", "gated", "--n", "20"]) == 0
