"""A demanding user's review of `solve(..., solver="lap")`'s m.dual/m.rc and of
`explain_infeasible_file`: each case checked against an independent truth (LP duality from
the model's own data, scipy's MILP)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import Bounds, milp
from test_iis import random_system, scipy_feasible
from test_iis_file import _index
from test_lap_duals import check_lp_duality

from coplug.plugins import InputError, SolverError, iis_file, solve
from coplug.plugins.iis_file import explain_infeasible_file

Side = Callable[[object], object]


def lap_model(cost: np.ndarray, row: Side | list[Side], col: Side | list[Side],
              maximize: bool = False) -> pyo.ConcreteModel:
    """x[i,j] in [0, 1] over the pairs whose cost is not NaN, row(sum_j x) and col(sum_i x)
    as given (one side for all, or one per index), with m.dual and m.rc declared (the
    shape `check_lp_duality` reads)."""
    n, m = cost.shape
    rows = row if isinstance(row, list) else [row] * n
    cols = col if isinstance(col, list) else [col] * m
    pairs = [(i, j) for i in range(n) for j in range(m) if not np.isnan(cost[i, j])]
    model = pyo.ConcreteModel()
    model.x = pyo.Var(pairs, bounds=(0, 1))
    model.row = pyo.Constraint(range(n), rule=lambda mm, i: rows[i](
        sum(mm.x[p] for p in pairs if p[0] == i)))
    model.col = pyo.Constraint(range(m), rule=lambda mm, j: cols[j](
        sum(mm.x[p] for p in pairs if p[1] == j)))
    model.o = pyo.Objective(expr=sum(float(cost[p]) * model.x[p] for p in pairs),
                            sense=pyo.maximize if maximize else pyo.minimize)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    model.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return model


def block_diagonal(*blocks: np.ndarray) -> np.ndarray:
    """The blocks' costs on the diagonal, NaN (no pair) elsewhere."""
    out = np.full((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), np.nan)
    r = c = 0
    for block in blocks:
        out[r:r + block.shape[0], c:c + block.shape[1]] = block
        r, c = r + block.shape[0], c + block.shape[1]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_negated_at_most_one_with_slack_keeps_jv_duals(seed: int) -> None:
    """`-sum(x) >= -1` is `sum(x) <= 1` (Pyomo keeps only its lower side): a row of a
    matching written so that stays unmatched has slack, dual 0, and JV's shifted duals
    certify without an LP solve (they were refused for every such row, 8 of 10 seeds)."""
    cost = np.random.default_rng(seed).uniform(-10, 10, (4, 2))
    model = lap_model(cost, lambda e: -e >= -1, lambda e: e <= 1)
    result = solve(model, solver="lap")
    assert result.extra["duals"]["loaded"] and "duals_from" not in result.extra
    check_lp_duality(model)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("maximize", [False, True])
def test_each_component_gets_its_own_shift(seed: int, maximize: bool) -> None:
    """A block-diagonal model's components share no pair, so each may shift JV's duals by
    its own constant: a wide block (its unused column has slack, dual 0: one exact shift)
    beside a square `>=`/`<=` block (signs that exact shift misses) keeps JV's duals
    (one shift for the whole model sent it to SoPlex)."""
    rng = np.random.default_rng(seed)
    cost = block_diagonal(rng.uniform(1, 10, (1, 2)), rng.uniform(1, 10, (3, 3)))
    eq, le, ge = (lambda e: e == 1), (lambda e: e <= 1), (lambda e: e >= 1)
    model = lap_model(cost, [eq, ge, ge, ge], le, maximize)
    result = solve(model, solver="lap")
    assert result.extra["duals"]["loaded"] and "duals_from" not in result.extra
    check_lp_duality(model)


FILLED = [  # (shape, row side, column side, fixed pairs, maximize)
    ((4, 4), "==", "==", [(0, 0)], False),
    ((4, 4), "==", "==", [(0, 0), (1, 1)], True),
    ((3, 4), "==", "<=", [(0, 2)], False),
    ((4, 3), "<=", "==", [(1, 0)], True),
    ((4, 4), "-<=", "==", [(0, 0)], False),
    ((4, 4), "<=", "<=", [(0, 0)], False),
]


@pytest.mark.parametrize(("shape", "rows", "cols", "fixed", "maximize"), FILLED)
def test_rows_fixed_variables_fill_keep_jv_duals(shape: tuple[int, int], rows: str, cols: str,
                                                 fixed: list[tuple[int, int]],
                                                 maximize: bool) -> None:
    """A row a fixed x = 1 fills forces its other x to 0: its dual only has to keep their
    reduced costs signed, so JV's duals extend to it (SoPlex's re-solve took 251 s at
    1000 x 1000 where the solve itself took 8 s)."""
    sides = {"==": lambda e: e == 1, "<=": lambda e: e <= 1, "-<=": lambda e: -2 * e >= -2}
    cost = np.random.default_rng(len(fixed)).uniform(-10, 10, shape)
    model = lap_model(cost, sides[rows], sides[cols], maximize)
    for pair in fixed:
        model.x[pair].fix(1)
    result = solve(model, solver="lap")
    assert result.extra["duals"]["loaded"] and "duals_from" not in result.extra
    check_lp_duality(model)


INTEGER_GAP = """Minimize
 obj: x + y
Subject To
 a: x + y >= 1
Bounds
 0 <= x <= 10
 0.2 <= k <= 0.8
General
 k
End
"""
NO_ROWS_CROSSED = """NAME crossed
ROWS
 N obj
COLUMNS
    x obj 1
BOUNDS
 LO bnd x 3
 UP bnd x 2
ENDATA
"""


def test_integer_column_no_integer_meets_is_the_answer(tmp_path: Path) -> None:
    """Integer k in [0.2, 0.8] (in no row) makes the file infeasible; SCIP rounds its
    bounds on reading and proposes nothing, and the whole-model filter left k out, so the
    answer was row a with x's and y's bounds, a system scipy finds feasible."""
    path = tmp_path / "gap.lp"
    path.write_text(INTEGER_GAP)
    found = explain_infeasible_file(path)
    assert found.rows == [] and found.irreducible
    assert found.bounds == [("k", "lower", 0.2), ("k", "upper", 0.8)]
    assert not milp(np.zeros(1), integrality=np.ones(1), bounds=Bounds(0.2, 0.8)).success


def test_crossed_bounds_need_no_scip_reading(tmp_path: Path) -> None:
    """An MPS file without rows SCIP refuses to read ('syntax error') but HiGHS reads: its
    column's crossed bounds are the answer on their own."""
    path = tmp_path / "crossed.mps"
    path.write_text(NO_ROWS_CROSSED)
    found = explain_infeasible_file(path)
    assert found.rows == [] and found.bounds == [("x", "lower", 3.0), ("x", "upper", 2.0)]


def test_duplicate_row_names_are_refused(tmp_path: Path) -> None:
    """Two rows named a (x >= 10 and x + y >= 0) beside b: x <= 5: checks switched only one
    of them, and the answer was row b alone, which x = 0 satisfies."""
    path = tmp_path / "dup.lp"
    path.write_text("Minimize\n obj: x + y\nSubject To\n a: x >= 10\n a: x + y >= 0\n"
                    " b: x <= 5\nEnd\n")
    with pytest.raises(InputError, match="row name 'a' .* 2 rows"):
        explain_infeasible_file(path)


def test_a_feasible_whole_model_is_an_error_not_an_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the whole model, as the filter sees it, is feasible, no subsystem is checked:
    an error, not a feasible set called irreducible."""
    path = tmp_path / "short.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n a: x >= 10\n b: x <= 5\nEnd\n")
    monkeypatch.setattr(iis_file, "_scip_iis", lambda *args: [])
    monkeypatch.setattr(iis_file._Highs, "farkas_members", lambda self, time_limit: None)
    monkeypatch.setattr(iis_file._Highs, "all_members", lambda self: [])
    with pytest.raises(SolverError, match="feasible"):
        explain_infeasible_file(path)


@pytest.mark.parametrize("time_limit", [-1, float("nan"), "10", True])
def test_bad_time_limits_are_input_errors(time_limit: object, tmp_path: Path) -> None:
    """As for explain_infeasible: SCIP's own ValueError ('the value is invalid for the given
    parameter') reached the caller, and inf was refused the same way."""
    path = tmp_path / "short.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n a: x >= 10\n b: x <= 5\nEnd\n")
    with pytest.raises(InputError, match="time_limit"):
        explain_infeasible_file(path, time_limit=time_limit)


def test_an_infinite_time_limit_is_no_limit(tmp_path: Path) -> None:
    """inf (or 1e20 and more) means no limit, as everywhere else in coplug."""
    path = tmp_path / "short.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n a: x >= 10\n b: x <= 5\nEnd\n")
    assert explain_infeasible_file(path, time_limit=float("inf")).rows == ["a", "b"]


def test_integer_columns_kept_in_zero_one_are_named(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An integer column bounded 0..1 is read as a binary, its 0..1 kept as its domain and
    never listed: random_system(26)'s answer (SCIP's IIS proposing; HiGHS's certificate
    finds another) is infeasible only with x(6) <= 1, which it did not mention (scipy finds
    the rows and listed bounds feasible). The answer names such columns of its rows, and
    with their 0..1 it is infeasible."""
    monkeypatch.setattr(iis_file._Highs, "farkas_members", lambda self, time_limit: None)
    model, data = random_system(26)
    path = tmp_path / "system.lp"
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    found = explain_infeasible_file(path)
    kept = [name for note in found.notes if "0..1" in note for name in re.findall(
        r"x\(\d+\)", note)]
    assert kept == ["x(6)"] and "x(6)" in str(found)
    rows = [_index(name) for name in found.rows]
    bounds = [(_index(col), side) for col, side, _ in found.bounds]
    assert scipy_feasible(data, rows, bounds)
    assert not scipy_feasible(data, rows, bounds + [(6, "lower"), (6, "upper")])
