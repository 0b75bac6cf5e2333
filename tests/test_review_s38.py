"""Session 38 fixes, each test checked to fail with its fix undone."""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import assignment_model, generate, load_costs
from coplug.formulations.knapsack import KnapsackInstance, save_knapsack
from coplug.learned.pmvb_predictors import PMVBPredictor, load_predictor
from coplug.plugins import SolutionPool, solve
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError
from coplug.plugins.lap import cell_costs, ranked_assignments, solve_lap, warmstart

_LP = """\\ one variable
minimize
obj: x
subject to
c1: x >= 1
bounds
x <= 10
end
"""


def _optimum(c: np.ndarray, maximize: bool = False) -> float:
    rows, cols = linear_sum_assignment(c, maximize=maximize)
    return float(c[rows, cols].sum())


@pytest.mark.parametrize("n", [60, 300])  # the one-call small path and the kernel path
@pytest.mark.parametrize("maximize", [False, True])
def test_duals_worse_than_column_reduction_start_cold(n: int, maximize: bool) -> None:
    """Duals 10% of the range off took up to 60x the cold time; they are set aside and the
    solve is the cold one, step for step."""
    c = generate("uniform", n, seed=4)
    cold = solve_lap(c, maximize=maximize)
    noisy = cold.row_duals + np.random.default_rng(0).normal(0.0, 0.1, n)
    sol = solve_lap(c, maximize=maximize, row_duals=noisy)
    assert not sol.warm and not sol.fallback
    assert "column reduction" in sol.info["prediction"]
    assert sol.augmentations == cold.augmentations
    np.testing.assert_array_equal(sol.col_ind, cold.col_ind)
    assert sol.cost == pytest.approx(_optimum(c, maximize), rel=1e-12)


@pytest.mark.parametrize("n", [60, 300])
@pytest.mark.parametrize("name", ["uniform", "transport"])
def test_own_duals_are_matched_along_tight_edges_without_augmenting(n: int, name: str) -> None:
    """A solve's own duals left 10-20% of the rows to shortest paths along tight edges (167
    augmentations at 2000 x 2000 uniform); a maximum matching of those edges needs none."""
    c = generate(name, n, seed=2)
    cold = solve_lap(c)
    sol = solve_lap(c, row_duals=cold.row_duals)
    assert sol.warm and not sol.fallback
    assert sol.augmentations == 0
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)


@pytest.mark.parametrize("n", [100, 300])
def test_duals_are_kept_where_cold_jv_drops_its_column_reduction(n: int) -> None:
    """On low-rank costs the column minima fall in few rows and cold JV starts from zero
    duals: its column reduction bound says nothing of its work, so warm duals are kept."""
    c = generate("low_rank", n, seed=1)
    cold = solve_lap(c)
    noisy = cold.row_duals + np.random.default_rng(0).normal(0.0, 0.1 * np.ptp(c), n)
    u = noisy - noisy.mean()
    v = (c - u[:, None]).min(axis=0)
    assert warmstart.below_column_reduction(u, v, c.min(axis=0))  # the bound alone would cold
    sol = solve_lap(c, row_duals=noisy)
    assert sol.warm
    assert sol.cost == pytest.approx(_optimum(c), rel=1e-12)


def test_bound_check_reads_the_dual_objective() -> None:
    low = np.array([1.0, 2.0, 3.0])
    u, v = np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.9])
    assert warmstart.below_column_reduction(u, v, low)  # 5.9 < 6
    assert not warmstart.below_column_reduction(u, v + 0.1, low)  # 6 = 6
    with np.errstate(over="ignore"):
        assert warmstart.below_column_reduction(np.array([1e308, 1e308, 0.0]),
                                                np.array([-np.inf, 0.0, 0.0]), low)


@pytest.mark.parametrize("n", [100, 300])
def test_tied_integer_costs_set_bad_duals_aside_as_cold_jv_counts_its_reduction(n: int) -> None:
    """Integers 0..9: the column minima fall first in few rows (51 of 1000), but cold JV's
    reduction, tightened, matches nearly all and is kept; duals 1% off were kept (7x the cold
    time) and far-off ones fell back (found by a probe)."""
    rng = np.random.default_rng(1)
    c = rng.integers(0, 10, (n, n)).astype(float)
    cold = solve_lap(c)
    for spread in (0.01 * 9, 1e9):
        sol = solve_lap(c, row_duals=cold.row_duals + rng.normal(0.0, spread, n))
        assert not sol.warm and not sol.fallback and sol.augmentations == cold.augmentations
        assert sol.cost == _optimum(c)


@pytest.mark.parametrize("n", [100, 200])  # the one-call small path and the kernel path
def test_own_duals_on_near_tied_costs_pass_the_warm_certificate(n: int) -> None:
    """Costs tied to 5e-14: the tight-edge matching took edges 64 ulps off where an exactly
    tight perfect matching existed, and a solve's own duals fell back (54 of 72)."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        c = (rng.integers(0, 5, n)[:, None] + rng.integers(0, 5, n)[None]) * 1e3 \
            + rng.integers(0, 2, (n, n)) * 1e3 * 5e-14
        cold = solve_lap(c)
        sol = solve_lap(c, row_duals=cold.row_duals)
        assert sol.warm and not sol.fallback
        assert sol.cost == pytest.approx(cold.cost, rel=1e-15)


def test_tight_matching_runs_only_where_columns_are_tight_on_two_rows() -> None:
    """Noisy duals tie on almost no column: the extra pass over the costs would buy nothing."""
    c = generate("uniform", 200, seed=5)
    cold = solve_lap(c)
    for duals, expected in ((cold.row_duals, True),
                            (cold.row_duals + np.random.default_rng(1).normal(0, 1e-4, 200),
                             False)):
        u = duals - duals.mean()
        v, argmin = np.empty(200), np.empty(200, np.int64)
        record = warmstart.column_record(200)
        warmstart.checked_min_trick(c, u, v, argmin, record)
        col4row, row4col = np.full(200, -1), np.full(200, -1)
        warmstart.match_argmins(argmin, col4row, row4col)
        assert warmstart.tight_matching_pays(v, record[2], col4row, 0.01) is expected


@pytest.mark.parametrize("shape", [(5, 5), (40, 40), (30, 70)])
def test_tight_edges_match_the_reduced_costs_exact_ones_first(shape: tuple[int, int]) -> None:
    """All entries equal (every edge tight: the buffer grows past 2 (n + m)) and integer
    costs with many ties, against numpy."""
    rng = np.random.default_rng(3)
    for c in (np.full(shape, 7.0), rng.integers(0, 3, shape).astype(float)):
        u = rng.integers(0, 2, shape[0]).astype(float)
        v = np.empty(shape[1])
        warmstart.min_trick(c, u, v)
        v[0] -= 1e-15  # one round-off-tight column: listed after a row's exact ones
        indptr, indices = warmstart.tight_edges(c, u, v, warmstart.TIGHT_REL, 7.0)
        reduced = c - u[:, None] - v[None, :]
        for i in range(shape[0]):
            row = indices[indptr[i]:indptr[i + 1]]
            exact = np.flatnonzero(reduced[i] <= 0)
            near = np.flatnonzero((reduced[i] > 0) & (reduced[i] <= 1e-12))
            np.testing.assert_array_equal(row, np.concatenate([exact, near]))


def test_solution_file_may_not_be_the_model_file(tmp_path, monkeypatch, capsys) -> None:
    """`coplug solve m.lp --solution m.lp` wrote over the model, even when the solve failed."""
    model = tmp_path / "m.lp"
    model.write_text(_LP)
    monkeypatch.chdir(tmp_path)
    for spelling in ("m.lp", "./m.lp", str(model)):
        for solver in ("highs", "nonesuch"):
            assert main(["solve", "m.lp", "--solver", solver, "--solution", spelling]) == 2
            err = capsys.readouterr().err
            assert "is the model file" in err and "\n" not in err.strip()
            assert model.read_text() == _LP
    assert main(["solve", "m.lp", "--solver", "highs", "--solution", "x.sol"]) == 0
    assert (tmp_path / "x.sol").read_text().splitlines()[1] == "x 1.0"


def _damaged(path, at: int, value: int | None = None) -> bytes:
    """The file's bytes with the one at `at` flipped (or set to `value`)."""
    data = bytearray(path.read_bytes())
    data[at] = data[at] ^ 0xFF if value is None else value
    return bytes(data)


@pytest.mark.parametrize("case", ["empty npy", "empty npz", "zip npy", "broken npz", "csv npy",
                                  "header npy", "inflate npz", "header npz"])
def test_empty_truncated_or_misnamed_arrays_are_named(tmp_path, case: str) -> None:
    """Empty, truncated or damaged arrays raised EOFError, BadZipFile, zlib.error or
    tokenize.TokenError from numpy; a CSV named .npy got numpy's advice to unpickle it."""
    np.save(tmp_path / "ok.npy", np.ones((3, 3)))
    sp.save_npz(tmp_path / "ok.npz", sp.random(50, 50, density=0.5, format="csr",
                                               random_state=1), compressed=True)
    data = {"empty npy": b"", "empty npz": b"", "zip npy": b"PK\x03\x04broken",
            "broken npz": b"PK\x03\x04broken", "csv npy": b"1,2\n3,4\n",
            "header npy": _damaged(tmp_path / "ok.npy", 20, ord("(")),
            "inflate npz": _damaged(tmp_path / "ok.npz", 157),
            "header npz": _damaged(tmp_path / "ok.npz", 1806)}[case]
    path = tmp_path / f"c.{case[-3:]}"
    path.write_bytes(data)
    with pytest.raises(InputError, match=f"^{path}: not a") as caught:
        load_costs(path)
    assert "pickle" not in str(caught.value)


def test_sparse_archive_content_errors_name_the_file(tmp_path) -> None:
    path = tmp_path / "c.npz"
    sp.save_npz(path, sp.coo_matrix(([1.0, 2.0, 3.0], ([0, 0, 1], [0, 0, 1])), shape=(2, 2)),
                compressed=False)
    with pytest.raises(InputError, match=f"^{path}: .*more than once"):
        load_costs(path)


def test_tab_blank_cells_are_refused_not_shifted(tmp_path) -> None:
    """Blank cells of a tab-separated sheet vanished: a 3 x 3 with one blank per row loaded as
    [[1, 3], [5, 6], [7, 8]] and was solved."""
    path = tmp_path / "sheet.txt"
    path.write_text("1\t\t3\n\t5\t6\n7\t8\t\n")
    with pytest.raises(InputError, match="sheet.txt:1: empty cell"):
        load_costs(path)
    path.write_text("1\t2\t3\n4\t5\t6\n7 \t 8\t9\n")
    np.testing.assert_array_equal(load_costs(path), np.arange(1.0, 10.0).reshape(3, 3))


def test_checkpoints_expand_home_and_name_a_folder_in_the_way(tmp_path, monkeypatch) -> None:
    """`save("~/p.joblib")` made a folder literally named "~" in the working directory."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    rng = np.random.default_rng(0)
    predictor = PMVBPredictor(kind="logreg").fit(rng.random((40, 3)), rng.integers(0, 2, 40))
    written = predictor.save("~/p.joblib")
    assert written == tmp_path / "home" / "p.joblib" and written.is_file()
    assert not os.listdir(tmp_path / "work")
    assert isinstance(load_predictor("~/p.joblib"), PMVBPredictor)
    (tmp_path / "home" / "q.json").mkdir()
    with pytest.raises(InputError, match="q.json is a folder"):
        predictor.save("~/q.joblib")


def test_knapsack_file_write_errors_are_named(tmp_path) -> None:
    instance = KnapsackInstance(values=np.array([3, 4]), weights=np.array([2, 3]), capacity=4)
    for where in (tmp_path / "missing" / "k.txt", tmp_path):
        with pytest.raises(InputError, match="cannot write knapsack file"):
            save_knapsack(instance, where)


def test_program_file_names_may_hold_spaces(capsys) -> None:
    assert main(["bbo", "solve", "my prog.txt", "--dim", "2"]) == 2
    assert "no program file my prog.txt" in capsys.readouterr().err


def test_lap_plugin_refusal_names_highs_for_its_plugins() -> None:
    c = generate("uniform", 4, seed=0)
    model = assignment_model(c)
    with pytest.raises(InputError, match="'highs' for the plugins HiGHS runs"):
        solve(model, solver="lap", plugins=[SolutionPool(3)])
    pool = SolutionPool(3)
    result = solve(model, solver="highs", plugins=[pool])
    assert result.objective == pytest.approx(solve_lap(c).cost) and pool.solutions


def _peak_ratio(call, c: np.ndarray) -> float:
    """Peak memory traced while `call(c)` runs, as a multiple of c's bytes."""
    call(c)  # compiled and cached first
    tracemalloc.start()
    try:
        call(c)
        return tracemalloc.get_traced_memory()[1] / c.nbytes
    finally:
        tracemalloc.stop()


def test_maximize_copies_a_fortran_or_tall_matrix_once() -> None:
    """Negated, then copied again into row order: twice the input."""
    rng = np.random.default_rng(0)
    for c in (np.asfortranarray(rng.random((400, 400))), rng.random((400, 300))):
        assert _peak_ratio(lambda c: solve_lap(c, maximize=True), c) < 1.3


def test_dense_ranking_holds_one_padded_working_copy() -> None:
    """The scale's np.abs(c[np.isfinite(c)]) copies and the unpadded copy kept beside the
    padded one took 400 x 600 costs to 5.5x their size."""
    c = np.random.default_rng(0).random((400, 600))
    assert _peak_ratio(lambda c: ranked_assignments(c, k=3), c) < 3.3
    assert ranked_assignments(c, k=1).solutions[0].cost == pytest.approx(_optimum(c))


def test_finite_pattern_is_the_csr_of_the_finite_entries() -> None:
    rng = np.random.default_rng(2)
    c = rng.random((7, 9))
    c[rng.random((7, 9)) < 0.4] = np.inf
    indptr, indices, data = cell_costs.finite_pattern(c)
    expected = sp.csr_matrix(np.where(np.isfinite(c), c + 1.0, 0.0))
    np.testing.assert_array_equal(indptr, expected.indptr)
    np.testing.assert_array_equal(indices, expected.indices)
    np.testing.assert_array_equal(data + 1.0, expected.data)
    indptr, indices, data = cell_costs.finite_pattern(rng.random((3, 4)))
    assert indptr[-1] == 12 and indices.size == data.size == 0
