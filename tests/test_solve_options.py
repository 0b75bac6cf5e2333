"""Native options as a dict (`solve(..., options=...)`), including names that are also
solve()'s own keywords, such as HiGHS's `solver`."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
from scipy.optimize import linprog

from coplug.plugins import InputError, Status, solve


def packing_lp(seed: int = 0, n: int = 60, m: int = 20) -> tuple[pyo.ConcreteModel, float]:
    """A random packing LP and scipy's optimum of it."""
    rng = np.random.default_rng(seed)
    a, v = rng.uniform(1, 10, (m, n)), rng.uniform(1, 10, n)
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(n), bounds=(0, 1))
    model.c = pyo.Constraint(range(m), rule=lambda mm, i: sum(
        float(a[i, j]) * mm.x[j] for j in range(n)) <= 40)
    model.o = pyo.Objective(expr=sum(float(v[j]) * model.x[j] for j in range(n)),
                            sense=pyo.maximize)
    reference = linprog(-v, A_ub=a, b_ub=np.full(m, 40), bounds=(0, 1), method="highs")
    return model, -reference.fun


@pytest.mark.parametrize("algorithm", ["ipm", "simplex", "pdlp"])
def test_highs_solver_option_reaches_highs_and_stays_exact(algorithm: str) -> None:
    model, optimum = packing_lp()
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(model, solver="highs", options={"solver": algorithm})
    if algorithm == "pdlp" and result.status is not Status.OPTIMAL:
        pytest.skip("PDLP's first-order answer failed coplug's LP certificate")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(optimum)
    assert result.extra["duals"]["loaded"]


def test_options_reach_the_solver_and_clash_is_refused() -> None:
    model, _ = packing_lp()
    with pytest.raises(InputError, match="'solver' to 'simplx'"):
        solve(model, solver="highs", options={"solver": "simplx"})
    with pytest.raises(InputError, match=r"\['limits/nodes'\] given both"):
        solve(model, options={"limits/nodes": 5}, **{"limits/nodes": 6})
    with pytest.raises(InputError, match="options must be a dict"):
        solve(model, options=[("limits/nodes", 5)])
    with pytest.raises(InputError, match="limits/nodez"):
        solve(model, options={"limits/nodez": 5})


def test_pyomo_factory_passes_solver_options_named_like_solve_arguments() -> None:
    model, optimum = packing_lp(3)
    results = NewFactory("coplug_highs").solve(model, solver_options={"solver": "ipm"})
    assert results.incumbent_objective == pytest.approx(optimum)


def test_solve_file_takes_options_dict(tmp_path) -> None:
    from coplug.plugins.files import solve_file

    model, optimum = packing_lp(5)
    path = tmp_path / "packing.mps"
    model.write(str(path))
    result = solve_file(path, solver="highs", options={"solver": "ipm"})
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(optimum)
    with pytest.raises(InputError, match="'solver' to 'simplx'"):
        solve_file(path, solver="highs", options={"solver": "simplx"})


def test_cli_option_flags_reach_the_solver(capsys) -> None:
    import json

    from coplug.plugins.cli import main

    args = ["solve", "setcover", "--size", "150", "--json"]
    assert main([*args, "--option", "limits/nodes=1", "--option",
                 "presolving/maxrounds=0", "--option", "separating/maxroundsroot=0"]) == 0
    limited = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    full = json.loads(capsys.readouterr().out)
    assert limited["status"] == "node_limit" and limited["nodes"] == 1
    assert full["status"] == "optimal" and full["nodes"] > 1
    assert limited["bound"] <= full["objective"] <= limited["objective"]


@pytest.mark.parametrize(("text", "expected"), [
    ("limits/nodes=100", ("limits/nodes", 100)), ("mip_rel_gap=1e-3", ("mip_rel_gap", 1e-3)),
    ("solver=ipm", ("solver", "ipm")), ("lp/presolving=false", ("lp/presolving", False)),
    ("presolve=off", ("presolve", "off"))])
def test_native_option_values_are_typed(text: str, expected: tuple) -> None:
    from coplug.plugins.argtypes import native_option

    assert native_option(text) == expected


@pytest.mark.parametrize("value", [float("inf"), 1e30])
def test_scip_real_option_past_infinity_means_no_limit(value: float) -> None:
    model, optimum = packing_lp(2)
    result = solve(model, options={"limits/time": value, "limits/gap": 0.0})
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(optimum)
    with pytest.raises(InputError, match="limits/gap"):
        solve(model, options={"limits/gap": -value})  # a limit below its range stays refused


@pytest.mark.parametrize(("name", "value"), [("mip_max_nodes", 1e3), ("output_flag", 0),
                                             ("random_seed", 5.0)])
def test_highs_takes_values_of_the_meaning_it_wants(name: str, value: object, tmp_path) -> None:
    from coplug.plugins.files import solve_file

    model, optimum = packing_lp(4)
    assert solve(model, solver="highs", options={name: value}).objective == pytest.approx(
        optimum)
    path = tmp_path / "packing.mps"
    model.write(str(path))
    assert solve_file(path, solver="highs", options={name: value}).objective == pytest.approx(
        optimum)
    with pytest.raises(InputError, match="mip_max_nodes"):
        solve(model, solver="highs", options={"mip_max_nodes": 1.5})  # not a whole number


def test_highs_text_option_takes_a_number_as_its_text(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # HiGHS opens log_file "2024" where it runs
    model, _ = packing_lp(4)
    log = tmp_path / "2024"
    solve(model, solver="highs", options={"log_file": str(log)})
    assert log.exists()
    from coplug.plugins.highs_backend import highs_options

    assert highs_options({"log_file": 2024, "solver": "ipm"}) == {"log_file": "2024",
                                                                  "solver": "ipm"}
