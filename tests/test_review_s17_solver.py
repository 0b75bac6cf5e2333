"""Review of the sparse `solve_lap` paths, the `.npz` loader and `coplug lap` on sparse
files: a feasible pattern is never called infeasible (float64 overflow in the Dijkstra's
distances falls back to a cold solve or is named as overflow), no private exception or
scipy traceback escapes, and a saved matrix loads with exactly its stored pairs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from bench_loader import bench
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import load_costs
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError
from coplug.plugins.lap.solver import solve_lap

TOP = np.finfo(np.float64).max


def _scipy_cost(matrix: sp.spmatrix, maximize: bool = False) -> float:
    """scipy's optimum on a dense copy with the missing pairs forbidden (+-inf)."""
    coo = matrix.tocoo()
    dense = np.full(matrix.shape, -np.inf if maximize else np.inf)
    dense[coo.row, coo.col] = coo.data
    rows, cols = linear_sum_assignment(dense, maximize=maximize)
    return float(dense[rows, cols].sum())


@pytest.mark.parametrize("row_duals", [[TOP, 0.0], [0.0, -TOP], [TOP, -TOP]])
def test_out_of_scale_warm_duals_on_a_feasible_pattern_fall_back_cold(row_duals) -> None:
    """Duals near the float maximum overflow the Dijkstra's distances; the docstring promises
    an exact answer whatever the duals (it said 'sparse pattern is infeasible')."""
    c = sp.csr_matrix(np.array([[-3.0, 2.0], [2.0, 2.0]]) * 1e303)
    sol = solve_lap(c, row_duals=row_duals)
    assert sol.cost == pytest.approx(_scipy_cost(c)) and sol.fallback


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 2)])
@pytest.mark.parametrize("row_duals", [None, [0.0, 0.0]])
def test_overflowing_costs_on_a_feasible_pattern_are_named_as_overflow(shape, row_duals) -> None:
    """[[M, -], [-M, M]] with M = 1e308 has one assignment, worth 2e308 (inf): an overflow,
    not an infeasible pattern; nor may the private _Unassignable escape the cold re-solve."""
    big = 1e308
    coo = sp.coo_matrix((np.array([big, -big, big]), ([0, 1, 1], [0, 0, 1])), shape=(2, 2))
    c = sp.csr_matrix(coo if shape[0] <= shape[1] else coo.T)
    c.resize(shape)
    duals = None if row_duals is None or shape[0] > shape[1] else row_duals
    with pytest.raises(InputError, match="overflow float64"):
        solve_lap(c, row_duals=duals)


def test_npz_loads_every_stored_pair_as_solve_lap_reads_the_matrix(tmp_path) -> None:
    """A DIA matrix's stored zeros are allowed pairs (as `solve_lap(dia)` reads them) and a
    COO's repeated pair is refused, not summed (`sp.csr_matrix` did both silently)."""
    dia = sp.dia_matrix((np.array([[0.0, 5.0], [7.0, 0.0]]), [0, 1]), shape=(2, 2))
    sp.save_npz(tmp_path / "dia.npz", dia)
    assert solve_lap(load_costs(tmp_path / "dia.npz")).cost == solve_lap(dia).cost == 5.0
    coo = sp.coo_matrix((np.array([1.0, 2.0, 3.0]), ([0, 0, 1], [0, 0, 1])), shape=(2, 2))
    sp.save_npz(tmp_path / "dup.npz", coo)
    with pytest.raises(InputError, match=r"stores \(0, 0\) more than once"):
        load_costs(tmp_path / "dup.npz")


def test_npy_content_under_an_npz_name_is_a_one_line_error(tmp_path, capsys) -> None:
    """sp.load_npz on a plain .npy file raised TypeError (a traceback from the CLI)."""
    path = tmp_path / "costs.npz"
    with open(path, "wb") as handle:
        np.save(handle, np.eye(3))
    assert main(["lap", str(path)]) == 2
    assert "not a scipy.sparse .npz matrix" in capsys.readouterr().err


def test_check_with_maximize_on_a_sparse_file_compares_with_scipy(tmp_path, capsys) -> None:
    """`--check --maximize` filled the missing pairs with +inf, which scipy's maximize
    refuses ('matrix contains invalid numeric entries', a traceback)."""
    c = sp.csr_matrix(np.array([[4.0, 0.0, 2.0], [0.0, 3.0, 0.0], [1.0, 0.0, 5.0]]))
    path = tmp_path / "c.npz"
    sp.save_npz(path, c)
    assert main(["lap", str(path), "--check", "--maximize", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"matches_scipy": true' in out and '"cost": 12.0' in out
    assert _scipy_cost(c, maximize=True) == 12.0


def test_lap_sparse_benchmark_refuses_a_negative_seed_as_a_usage_error(capsys) -> None:
    """`--seed -1` reached `gated`, whose InputError ended the benchmark in a traceback."""
    with pytest.raises(SystemExit) as exc:
        bench("lap_sparse").parse_args(["--seed", "-1"])
    assert exc.value.code == 2 and "--seed" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_unmatched_cost_is_named_by_its_flag(tmp_path, capsys, value: str) -> None:
    """The error named ranked_matchings' `row_cost` and advised `ranked_assignments`, which a
    command-line user never sees; the flag and its alternative (leave it out) are named."""
    path = tmp_path / "c.npz"
    sp.save_npz(path, sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]])))
    assert main(["lap", str(path), "--k", "2", f"--unmatched-cost={value}"]) == 2
    err = capsys.readouterr().err
    assert "--unmatched-cost must be finite" in err and "row_cost" not in err
