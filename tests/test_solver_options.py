"""Solver options as a user gives them. HiGHS on a model file behaves as on a model (a
`log_file` gets the log, a failed run is a SolverError rather than a quiet 'unknown'); an
infinite HiGHS tolerance is refused by name (HiGHS took it and called a bounded knapsack
unbounded); refused options say what they take; SCIP's integer limits name -1."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, SolverError, Status, solve, solve_file


def _knapsack() -> pyo.ConcreteModel:
    """Four items, capacity 1000; the best value is 13."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=300 * m.x[0] + 400 * m.x[1] + 500 * m.x[2] + 600 * m.x[3]
                           <= 1000)
    m.value = pyo.Objective(expr=4 * m.x[0] + 5 * m.x[1] + 7 * m.x[2] + 8 * m.x[3],
                            sense=pyo.maximize)
    return m


@pytest.fixture
def mps(tmp_path):
    path = tmp_path / "knapsack.mps"
    _knapsack().write(str(path))
    return path


def test_a_log_file_gets_the_log_and_the_console_stays_quiet(mps, tmp_path, capfd):
    log = tmp_path / "highs.log"
    result = solve_file(mps, solver="highs", options={"log_file": str(log),
                                                      "output_flag": True})
    assert result.objective == pytest.approx(13.0)
    assert log.stat().st_size > 0 and "HiGHS" in log.read_text()
    assert "Coefficient ranges" not in capfd.readouterr().out


def test_a_run_highs_refuses_is_a_solver_error(mps):
    with pytest.raises(SolverError, match="stopped with an error"):
        solve_file(mps, solver="highs", options={"large_matrix_value": 100.0})


@pytest.mark.parametrize("name", ["mip_feasibility_tolerance", "dual_feasibility_tolerance",
                                  "primal_feasibility_tolerance"])
def test_an_infinite_tolerance_is_refused_by_name(mps, name):
    for call in (lambda: solve(_knapsack(), solver="highs", options={name: math.inf}),
                 lambda: solve_file(mps, solver="highs", options={name: math.inf})):
        with pytest.raises(InputError, match=f"'{name}' is inf"):
            call()
    assert solve(_knapsack(), solver="highs", options={name: 1e-5}).status is Status.OPTIMAL


@pytest.mark.parametrize("options,message", [
    ({"Threads": 1}, "unknown HiGHS option 'Threads'; did you mean 'threads'"),
    ({"presolve": False}, "'presolve' to False: it takes text (default 'choose')"),
    ({"mip_rel_gap": -0.1}, "'mip_rel_gap' to -0.1: it takes a number (default 0.0001)"),
])
def test_a_refused_option_says_what_it_takes(options, message):
    with pytest.raises(InputError, match=re.escape(message)):
        solve(_knapsack(), solver="highs", options=options)


def test_numpy_scalars_are_taken_as_numbers():
    result = solve(_knapsack(), solver="highs",
                   options={"mip_rel_gap": np.float32(0.0), "mip_max_nodes": np.int64(100)})
    assert result.objective == pytest.approx(13.0)


@pytest.mark.parametrize("value,message", [
    (float("inf"), "takes an integer (-1 for no limit), got inf"),
    (1e20, "takes an integer of smaller size, got 1e+20"),
])
def test_an_unbounded_scip_integer_limit_is_named_with_its_no_limit_value(value, message):
    with pytest.raises(InputError, match=re.escape(message)):
        solve(_knapsack(), options={"limits/nodes": value})
    assert solve(_knapsack(), options={"limits/nodes": -1}).objective == pytest.approx(13.0)


def test_scip_longint_parameters_take_values_past_2_31_and_int_ones_do_not():
    """limits/nodes is a SCIP longint (up to 2**63); display/freq a C int."""
    result = solve(_knapsack(), options={"limits/nodes": 3_000_000_000})
    assert result.objective == pytest.approx(13.0)
    with pytest.raises(InputError,
                       match=re.escape("'display/freq' takes an integer of smaller size")):
        solve(_knapsack(), options={"display/freq": 3_000_000_000})


def test_integers_a_loose_highs_tolerance_left_fractional_make_the_status_unknown():
    # at mip_feasibility_tolerance 0.05 HiGHS took a binary at 0.0417 and an objective past
    # the true optimum (8689.76) as optimal
    from coplug.formulations.mip_families import mknapsack

    with pytest.warns(UserWarning, match="integer variable"):
        loose = solve(mknapsack(20, seed=1), solver="highs",
                      options={"mip_feasibility_tolerance": 0.05})
    assert loose.status is Status.UNKNOWN and loose.extra["fractional_integers"]
    exact = solve(mknapsack(20, seed=1), solver="scip")
    assert loose.objective > exact.objective + 1  # what the relaxed problem reached
    tight = solve(mknapsack(20, seed=1), solver="highs",
                  options={"mip_feasibility_tolerance": 1e-3})
    assert tight.status is Status.OPTIMAL and tight.objective == pytest.approx(exact.objective)


def test_the_fractional_check_reads_each_solvers_own_tolerance():
    from coplug.plugins import Result
    from coplug.plugins.integral_rows import flag_fractional, pyomo_integers

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, initialize=2.0004)
    m.y = pyo.Var(initialize=0.5)  # continuous: any value
    for params, flagged in (({"numerics/feastol": 1e-3}, True), ({}, False),
                            ({"numerics/feastol": 1e-6}, False)):
        result = Result(Status.OPTIMAL, "scip", objective=1.0, has_solution=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            flag_fractional(result, pyomo_integers([m.x, m.y]), "SCIP", "numerics/feastol", params)
        assert (result.status is Status.UNKNOWN) is flagged and bool(caught) is flagged
        if flagged:
            assert result.extra["fractional_integers"] == {"x": pytest.approx(4e-4)}


def test_scip_points_get_the_fractional_check_too(monkeypatch):
    # SCIP's integrality check uses numerics/feastol (up to 1e-3): an integer it leaves
    # that far off under a loosened feastol is flagged as HiGHS's are
    import coplug.plugins.bridge as bridge

    real = bridge._load_scip_solution

    def off_by_a_hair(scip, var_map):
        real(scip, var_map)
        for var in var_map:
            var.set_value(var.value + 4e-4, skip_validation=True)

    monkeypatch.setattr(bridge, "_load_scip_solution", off_by_a_hair)
    with pytest.warns(UserWarning, match="within the numerics/feastol given"):
        loose = solve(_knapsack(), options={"numerics/feastol": 1e-3})
    assert loose.status is Status.UNKNOWN and len(loose.extra["fractional_integers"]) == 4
    with warnings.catch_warnings():  # the shifted point's objective is no longer SCIP's
        warnings.simplefilter("ignore")
        default = solve(_knapsack())
    assert "fractional_integers" not in default.extra  # the default feastol: not judged


def test_an_out_of_range_scip_option_is_one_line_with_scips_reason(capfd):
    """SCIP's four C error lines reached stderr before coplug's own."""
    with pytest.raises(InputError, match=re.escape(
            "cannot set SCIP parameter 'limits/nodes' to -5: Invalid value <-5> for longint "
            "parameter <limits/nodes>. Must be in range [-1,")):
        solve(_knapsack(), options={"limits/nodes": -5})
    assert "paramset.c" not in "".join(capfd.readouterr())
