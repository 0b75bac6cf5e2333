"""Review fixes on the LAP path: exact Pyomo detection, sparse input rules, CLI check,
generator arguments and model messages, each checked against scipy or HiGHS."""

from __future__ import annotations

import json
import re

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import assignment_model, generate
from coplug.plugins import InputError, Status, UnsupportedModelError, solve
from coplug.plugins.lap import solve_lap

C3 = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])


def _row0(coefs: tuple, rhs: float) -> pyo.ConcreteModel:
    """The 3x3 assignment model with row[0] replaced by sum_j coefs[j] x[0,j] == rhs."""
    model = assignment_model(C3)
    model.row[0].set_value(sum(a * model.x[0, j] for j, a in enumerate(coefs)) == rhs)
    return model


@pytest.mark.parametrize(
    ("coefs", "rhs"), [((1.0, 1.000009, 1.0), 1.0), ((1e-9, 5e-9, 1e-9), 1e-9)]
)
def test_nearly_equal_row_coefficients_are_refused(coefs: tuple, rhs: float) -> None:
    """x01 = 1 violates the row, so LAP (which would pick it, cost 5) must refuse; HiGHS on
    the row scaled to rhs 1 (its tolerances ignore a 4e-9 violation) avoids it (cost 6)."""
    with pytest.raises(UnsupportedModelError, match=r"row\[0\].*x\[0,1\]"):
        solve(_row0(coefs, rhs), solver="lap")
    scaled = _row0(tuple(a / rhs for a in coefs), 1.0)
    assert solve(scaled, solver="highs").objective == pytest.approx(6.0)


def test_scaled_row_with_equal_coefficients_is_still_an_assignment() -> None:
    model = _row0((1e-9, 1e-9, 1e-9), 1e-9)
    lap = solve(model, solver="lap")
    assert lap.status is Status.OPTIMAL
    assert lap.objective == pytest.approx(solve(model, solver="highs").objective)


def _scipy_cost(dense: np.ndarray, allowed: np.ndarray) -> float:
    """scipy's optimum over the allowed pairs (forbidden ones set to inf)."""
    masked = np.where(allowed, dense, np.inf)
    r, k = linear_sum_assignment(masked)
    return float(masked[r, k].sum())


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        (np.array([[1 + 5j, 2], [2, 1 + 5j]]), "must be real"),
        (np.array([[True, True], [True, False]]), "dtype bool"),
    ],
)
def test_sparse_dtypes_follow_the_dense_rules(cost: np.ndarray, message: str) -> None:
    with pytest.raises(InputError, match=message):
        solve_lap(cost)
    with pytest.raises(InputError, match=message):
        solve_lap(sp.csr_matrix(cost))


def test_sparse_integer_costs_match_scipy() -> None:
    cost = np.array([[1, 2, 9], [3, 1, 4], [5, 6, 2]], dtype=np.int8)
    assert solve_lap(sp.csc_matrix(cost)).cost == _scipy_cost(cost.astype(float), cost != 0)


_DUP = ([1.0, 2.0, 10.0, 10.0, 1.0], [0, 0, 1, 0, 1], [0, 3, 5])  # (0, 0) stored twice


@pytest.mark.parametrize(
    "make",
    [
        lambda: sp.coo_matrix((_DUP[0], ([0, 0, 0, 1, 1], _DUP[1])), shape=(2, 2)),
        lambda: sp.coo_array((_DUP[0], ([0, 0, 0, 1, 1], _DUP[1])), shape=(2, 2)),
        lambda: sp.csr_matrix(_DUP, shape=(2, 2)),
        lambda: sp.csc_matrix(_DUP, shape=(2, 2)),
        lambda: sp.bsr_matrix((np.reshape(_DUP[0], (-1, 1, 1)), *_DUP[1:]), shape=(2, 2)),
    ],
    ids=["coo_matrix", "coo_array", "csr", "csc", "bsr"],
)
def test_duplicate_entries_are_rejected_in_every_format(make) -> None:
    """COO used to sum them silently (1 + 2 at (0, 0)); CSR and CSC rejected them."""
    cost = make()
    assert cost.nnz == 5
    with pytest.raises(InputError, match=r"\(0, 0\) more than once"):
        solve_lap(cost)


def test_coo_without_duplicates_keeps_explicit_zeros_and_matches_scipy() -> None:
    rows, cols, data = [1, 0, 1, 2, 2], [0, 1, 1, 2, 0], [3.0, 0.0, 1.0, 4.0, 0.0]
    dense = np.zeros((3, 3))
    dense[rows, cols] = data
    allowed = np.zeros((3, 3), dtype=bool)
    allowed[rows, cols] = True
    cost = sp.coo_matrix((data, (rows, cols)), shape=(3, 3))
    assert solve_lap(cost).cost == _scipy_cost(dense, allowed) == 7.0


@pytest.mark.parametrize("cls", [sp.dia_matrix, sp.dia_array])
def test_dia_stored_zeros_are_allowed_pairs(cls) -> None:
    """Every in-bounds diagonal position is stored (scipy's nnz counts it), zeros included."""
    data = np.array([[0.0, 7.0, 2.0, 9.0], [4.0, 0.0, 6.0, 8.0]])
    cost = cls((data, [0, 1]), shape=(3, 4))
    allowed = np.eye(3, 4, dtype=bool) | np.eye(3, 4, k=1, dtype=bool)
    dense = np.zeros((3, 4))
    dense[allowed] = [0.0, 0.0, 7.0, 6.0, 2.0, 8.0]
    assert cost.nnz == allowed.sum() == 6
    assert solve_lap(cost).cost == _scipy_cost(dense, allowed) == 9.0
    single = cls(sp.coo_matrix(([0.0, 5.0], ([0, 1], [0, 1])), shape=(2, 2)))
    assert solve_lap(single).cost == 5.0


def test_one_dimensional_sparse_array_is_refused() -> None:
    with pytest.raises(InputError, match="must be 2-D"):
        solve_lap(sp.coo_array(([1.0, 2.0], ([0, 1],)), shape=(3,)))


@pytest.mark.parametrize(
    ("cost", "maximize"),
    [
        (np.random.default_rng(0).random((200, 200), dtype=np.float32) * 100, False),
        (np.full((30, 30), 6e4, dtype=np.float16) + np.eye(30, dtype=np.float16) * 32, True),
        (np.array([[1, 2**62], [2**62, 1]], dtype=np.int64), True),
    ],
    ids=["float32", "float16", "int64"],
)
def test_cli_check_sums_in_float64(tmp_path, capsys, cost: np.ndarray, maximize: bool) -> None:
    """Input-dtype sums gave false mismatches (float32), inf (float16), overflow (int64)."""
    from coplug.plugins.cli import main

    np.save(tmp_path / "c.npy", cost)
    argv = ["lap", str(tmp_path / "c.npy"), "--check", "--json"] + ["--maximize"] * maximize
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    c64 = cost.astype(np.float64)
    r, k = linear_sum_assignment(c64, maximize=maximize)
    assert report["scipy_cost"] == float(c64[r, k].sum())
    assert report["cost"] == pytest.approx(report["scipy_cost"], rel=1e-12)
    assert report["matches_scipy"] is True


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("uniform", {"seed": -1}, r"seed must be a non-negative integer below 2\*\*63, got -1"),
        ("transport", {"seed": 1.5}, "seed must be a non-negative integer"),
        ("low_rank", {"rank": 0}, "rank must be an integer >= 1, got 0"),
        ("low_rank", {"rank": -1}, "rank must be an integer >= 1"),
        ("low_rank", {"noise": float("nan")}, r"noise must be a number in \[0, 1e\+100\]"),
        ("geometric", {"noise": -1},
         r"noise must be a number in \[0, 1e\+100\] for float64 costs, got -1"),
        ("geometric", {"noise": 1e160}, "noise must be a number in .* got 1e"),
        ("low_rank", {"noise": 1e308}, "noise must be a number in .* got 1e"),
        ("geometric", {"noise": 1e100, "dtype": np.float32},
         r"noise must be a number in \[0, 1e\+30\] for float32 costs"),
        ("uniform", {"dtype": np.float16}, "dtype must be float32 or float64, got float16"),
        ("geometric", {"dtype": np.int64}, "dtype must be float32 or float64, got int64"),
        ("transport", {"nodes": -3}, "nodes must be an integer >= 1"),
        ("uniform", {"n": 0}, "n must be an integer >= 1"),
    ],
)
def test_generator_arguments_are_checked_up_front(name: str, kwargs: dict, message: str) -> None:
    """These used to raise raw numpy errors or, for rank=0, return an all-NaN matrix."""
    args = {"n": 5, **kwargs}
    with pytest.raises(InputError, match=message):
        generate(name, args.pop("n"), **args)


def test_cli_negative_seed_is_a_usage_error(capsys) -> None:
    from coplug.plugins.cli import main

    assert main(["lap", "--generator", "uniform", "--n", "3", "--seed", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "coplug: error: seed must be a non-negative integer below 2**63, got -1"


def test_objective_only_variable_is_named() -> None:
    model = assignment_model(C3)
    model.y = pyo.Var(bounds=(0, 5))
    model.cost.expr = model.cost.expr + model.y
    with pytest.raises(UnsupportedModelError, match="objective variable 'y' appears in no"):
        solve(model, solver="lap")


_FIXINGS = {
    "one": {(0, 0): 1},
    "zero": {(1, 1): 0, (2, 3): 0},
    "mixed": {(0, 2): 1, (3, 1): 1, (1, 1): 0, (4, 0): 0},
    "row_all_but_one_zero": {(2, 0): 0, (2, 1): 0, (2, 2): 0, (2, 3): 0},
    "all": {(i, (i + 1) % 5): 1 for i in range(5)},
}


@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("shape", [(5, 5), (4, 6)])
@pytest.mark.parametrize("fixing", list(_FIXINGS))
def test_fixed_variables_force_or_forbid_pairs_like_highs(
    fixing: str, shape: tuple[int, int], maximize: bool
) -> None:
    """Fixed variables are constants to any solver: 1 forces the pair, 0 forbids it."""
    cost = np.random.default_rng(7).integers(0, 20, size=shape).astype(float)
    fixed = {k: v for k, v in _FIXINGS[fixing].items() if k[0] < shape[0] and k[1] < shape[1]}
    objectives = {}
    for solver in ("lap", "highs"):
        model = assignment_model(cost, maximize=maximize)
        for key, value in fixed.items():
            model.x[key].fix(value)
        result = solve(model, solver=solver)
        assert result.status is Status.OPTIMAL
        chosen = [k for k in model.x if model.x[k].value > 0.5]
        assert sorted(i for i, _ in chosen) == list(range(shape[0]))
        assert len({j for _, j in chosen}) == shape[0]
        assert all((k in chosen) == (v == 1) for k, v in fixed.items())
        assert sum(cost[k] for k in chosen) == pytest.approx(result.objective)
        objectives[solver] = result.objective
    assert objectives["lap"] == pytest.approx(objectives["highs"], abs=1e-9)


@pytest.mark.parametrize(
    ("fixed", "reason"),
    [
        ({(0, 0): 1, (0, 1): 1}, r"row\[0\].*x\[0,0\]=1, x\[0,1\]=1"),
        ({(0, 0): 0, (0, 1): 0, (0, 2): 0}, r"row\[0\]' is violated by its fixed variables"),
        ({(0, 0): 1, (1, 1): 0, (1, 2): 0}, r"row\[1\]' cannot be met"),
    ],
)
def test_conflicting_fixings_are_infeasible_like_highs(fixed: dict, reason: str) -> None:
    results = {}
    for solver in ("lap", "highs"):
        model = assignment_model(C3)
        for key, value in fixed.items():
            model.x[key].fix(value)
        results[solver] = solve(model, solver=solver)
        assert results[solver].status is Status.INFEASIBLE and not results[solver].has_solution
    assert re.search(reason, results["lap"].extra["reason"])


def test_variable_fixed_off_zero_and_one_is_refused_by_name() -> None:
    model = assignment_model(C3)
    model.x[0, 0].domain = pyo.NonNegativeReals
    model.x[0, 0].fix(0.5)
    with pytest.raises(UnsupportedModelError, match=r"row\[0\].*constants: x\[0,0\]=0.5"):
        solve(model, solver="lap")
