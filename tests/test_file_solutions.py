"""Solutions of model files (`solve_file`): `result.values` by variable name, feasible and
optimal for the model the file came from, and the checks a Pyomo solve gets."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import Status, solve, solve_file
from coplug.plugins.cli import main

SOLVERS = ("scip", "highs")


def _random_mip(seed: int) -> pyo.ConcreteModel:
    """Integers, binaries and continuous variables under random packing rows."""
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(6), domain=pyo.Binary)
    m.i = pyo.Var(range(3), domain=pyo.NonNegativeIntegers, bounds=(0, 4))
    m.y = pyo.Var(range(3), bounds=(0, 2.5))
    terms = [*m.b.values(), *m.i.values(), *m.y.values()]
    m.rows = pyo.ConstraintList()
    for _ in range(5):
        m.rows.add(sum(float(rng.integers(1, 6)) * v for v in terms) <= float(rng.integers(9, 20)))
    m.value = pyo.Objective(expr=sum(float(rng.integers(1, 9)) * v for v in terms),
                            sense=pyo.maximize)
    return m


def _load(m: pyo.ConcreteModel, values: dict[str, float]) -> None:
    """Put a file's values into the Pyomo model it was written from (symbolic names)."""
    names = {v.name.replace("[", "(").replace("]", ")"): v
             for v in m.component_data_objects(pyo.Var)}
    assert set(values) == set(names)
    for name, value in values.items():
        names[name].set_value(value, skip_validation=True)


@pytest.mark.parametrize("suffix", ["lp", "mps"])
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(3))
def test_file_values_are_feasible_and_optimal_for_the_model(tmp_path, solver, seed, suffix):
    m = _random_mip(seed)
    path = tmp_path / f"model.{suffix}"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    read = solve_file(path, solver=solver)
    assert read.status is Status.OPTIMAL and read.values is not None
    _load(m, read.values)
    for con in m.rows.values():
        assert pyo.value(con.body) <= pyo.value(con.upper) + 1e-6
    for var in [*m.b.values(), *m.i.values()]:
        assert var.value == round(var.value)  # whole numbers, as a Pyomo solve loads them
        assert var.lb <= var.value <= var.ub
    assert pyo.value(m.value) == pytest.approx(read.objective, abs=1e-6)
    assert read.objective == pytest.approx(solve(_random_mip(seed), solver="scip").objective)
    assert all(np.copysign(1.0, v) > 0 for v in read.values.values() if v == 0)  # no -0.0


@pytest.mark.parametrize("solver", SOLVERS)
def test_no_solution_no_values(tmp_path, solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    path = tmp_path / "infeasible.lp"
    m.write(str(path))
    result = solve_file(path, solver=solver)
    assert result.status is Status.INFEASIBLE and result.values is None
    assert "values" not in result.to_dict()


@pytest.mark.parametrize(("solver", "option", "value"), [
    ("highs", "mip_feasibility_tolerance", 0.05),
])
def test_a_loose_tolerance_that_left_integers_fractional_is_flagged_in_files_too(
        tmp_path, solver, option, value):
    """As `solve` flags it (tests/test_solver_options.py): HiGHS at 0.05 took a binary at
    0.0417 and called an objective past the optimum optimal."""
    path = tmp_path / "mknapsack.mps"
    mknapsack(20, seed=1).write(str(path))
    with pytest.warns(UserWarning, match="integer variable"):
        loose = solve_file(path, solver=solver, options={option: value})
    assert loose.status is Status.UNKNOWN and loose.extra["fractional_integers"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert solve_file(path, solver=solver).status is Status.OPTIMAL


def test_the_cli_writes_the_solution(tmp_path, capsys):
    m = _random_mip(1)
    path, out = tmp_path / "model.mps", tmp_path / "solution.txt"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    assert main(["solve", str(path), "--solution", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "values" not in printed  # the values go to the file
    lines = out.read_text().splitlines()
    assert lines[0] == f"# status optimal, objective {printed['objective']!r}"
    _load(m, {name: float(value) for name, value in (line.split() for line in lines[1:])})
    assert pyo.value(m.value) == pytest.approx(printed["objective"])


def test_the_cli_writes_a_formulations_solution_and_refuses_a_missing_folder(tmp_path):
    out = tmp_path / "knapsack.txt"
    assert main(["solve", "knapsack", "--size", "8", "--solution", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("# status optimal") and len(lines) == 9
    assert {line.split()[1] for line in lines[1:]} <= {"0.0", "1.0"}
    done = subprocess.run([sys.executable, "-m", "coplug.plugins.cli", "solve", "knapsack",
                           "--solution", str(tmp_path / "no" / "x.txt")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "--solution: no folder" in done.stderr
    assert "status" not in done.stdout  # refused before solving


def test_no_solution_overwrites_an_earlier_file_and_bad_paths_are_refused_first(tmp_path,
                                                                                  capsys):
    path, out = tmp_path / "infeasible.lp", tmp_path / "old.sol"
    path.write_text("Minimize\n obj: x\nSubject To\n c1: x + y >= 5\n c2: x + y <= 3\nEnd\n")
    out.write_text("x 1.0\n")  # an earlier run's values
    assert main(["solve", str(path), "--solution", str(out)]) == 0
    assert out.read_text() == "# status infeasible, no solution\n"
    capsys.readouterr()
    for bad in (str(tmp_path), ""):
        assert main(["solve", str(path), "--solution", bad]) == 2
        streams = capsys.readouterr()
        assert "is not a file name" in streams.err and "status" not in streams.out
