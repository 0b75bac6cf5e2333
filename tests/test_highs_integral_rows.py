"""HiGHS's absolute mip_feasibility_tolerance on all-integer rows with coefficients near
1e7: a value 2e-7 off a whole number misses such a row by 1, and HiGHS called a wrong point
optimal. Every optimum here is checked against enumeration of the integer box."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve


def _model(coefs: list[int], side: int, boxes: list[tuple[int, int]], cost: list[int],
           sense: str = "==") -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(coefs)), domain=pyo.Integers, bounds=lambda _, i: boxes[i])
    body = sum(c * m.x[i] for i, c in enumerate(coefs))
    m.row = pyo.Constraint(expr=body == side if sense == "==" else body <= side)
    m.o = pyo.Objective(expr=sum(c * m.x[i] for i, c in enumerate(cost)))
    return m


def _enumerate(coefs, side, boxes, cost, sense="==") -> float | None:
    """The exact optimum over the box, None when no point meets the row."""
    best = None
    for point in itertools.product(*(range(lo, hi + 1) for lo, hi in boxes)):
        activity = sum(c * v for c, v in zip(coefs, point, strict=True))
        if activity == side if sense == "==" else activity <= side:
            value = sum(c * v for c, v in zip(cost, point, strict=True))
            best = value if best is None else min(best, value)
    return best


def test_the_reported_equality_gets_its_true_optimum() -> None:
    args = ([15000000, 10000000, -4999999, -5000001], 45000000,
            [(1, 3), (-1, 0), (-1, 1), (-2, -1)], [5, -2, -1, 1])
    m = _model(*args)
    result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(_enumerate(*args)) == 17
    assert result.extra["first_solve"]["objective"] < 17  # HiGHS's own answer was wrong
    x = [round(m.x[i].value) for i in range(4)]
    assert sum(c * v for c, v in zip(args[0], x, strict=True)) == args[1]


@pytest.mark.parametrize("seed", range(25))
def test_random_large_rows_match_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 4
    base = int(rng.choice([5_000_000, 10_000_000, 15_000_000]))
    coefs = [int(base * rng.integers(-3, 4) + rng.integers(-2, 3)) or 1 for _ in range(n)]
    boxes = []
    for _ in range(n):
        lo = int(rng.integers(-2, 2))
        boxes.append((lo, lo + int(rng.integers(1, 3))))
    point = [int(rng.integers(lo, hi + 1)) for lo, hi in boxes]
    sense = "==" if rng.random() < 0.6 else "<="
    side = sum(c * v for c, v in zip(coefs, point, strict=True)) - (0 if sense == "==" else 1)
    cost = [int(rng.integers(-5, 6)) for _ in range(n)]
    truth = _enumerate(coefs, side, boxes, cost, sense)
    result = solve(_model(coefs, side, boxes, cost, sense), solver="highs")
    if truth is None:
        assert result.status is Status.INFEASIBLE
    else:
        assert result.status is Status.OPTIMAL and result.objective == pytest.approx(truth)


def test_a_callers_tolerance_is_kept_and_a_miss_reported() -> None:
    args = ([15000000, 10000000, -4999999, -5000001], 45000000,
            [(1, 3), (-1, 0), (-1, 1), (-2, -1)], [5, -2, -1, 1])
    expected = r"HiGHS's solution violates 1 constraint\(s\) with integer variables, 'row'"
    with pytest.warns(UserWarning, match=expected):
        result = solve(_model(*args), solver="highs", mip_feasibility_tolerance=1e-6)
    assert result.status is Status.UNKNOWN and result.extra["violated_rows"] == {"row": 1.0}


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_files_get_the_same_checks(tmp_path, solver: str) -> None:
    """An .lp file: the large equality solved to its true optimum, and an unbounded MIP
    called unbounded (HiGHS and SCIP said 'infeasible or unbounded' on some)."""
    from coplug.plugins.files import solve_file

    args = ([15000000, 10000000, -4999999, -5000001], 45000000,
            [(1, 3), (-1, 0), (-1, 1), (-2, -1)], [5, -2, -1, 1])
    path = tmp_path / "row.lp"
    _model(*args).write(str(path), io_options={"symbolic_solver_labels": True})
    assert solve_file(path, solver=solver).objective == pytest.approx(_enumerate(*args))
    ray = pyo.ConcreteModel()
    ray.x = pyo.Var(domain=pyo.Integers)
    ray.y = pyo.Var(domain=pyo.Integers)
    ray.c = pyo.Constraint(expr=2 * ray.x - 3 * ray.y <= 1)
    ray.o = pyo.Objective(expr=ray.x + ray.y, sense=pyo.maximize)
    ray.write(str(tmp_path / "ray.lp"))
    result = solve_file(tmp_path / "ray.lp", solver=solver)
    assert result.status is Status.UNBOUNDED and result.bound == float("inf")


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_a_file_with_no_integer_point_and_an_unbounded_relaxation_is_infeasible(
        tmp_path, solver: str) -> None:
    from coplug.plugins.files import solve_file

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.Integers, bounds=(-5, 5))
    m.z = pyo.Var(domain=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=2 * m.y - 2 * m.z == 1)  # no integer point
    m.o = pyo.Objective(expr=-m.x)  # the relaxation is unbounded
    m.write(str(tmp_path / "parity.lp"))
    assert solve_file(tmp_path / "parity.lp", solver=solver).status is Status.INFEASIBLE
