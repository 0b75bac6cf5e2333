"""Session 46 review fixes: each test failed before its fix, but for those a docstring calls
a guard."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from coplug.formulations.assignment import assignment_model, load_costs
from coplug.formulations.knapsack import (
    KnapsackInstance,
    knapsack_qubo_naive,
    knapsack_qubo_safe,
    random_knapsack,
)
from coplug.plugins import Status, solve_file
from coplug.plugins.errors import InputError

_UNDECLARED = ("NAME T\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1 c1 1\n y zz 1\n\nRHS\n"
               " rhs c1 4\nENDATA\n")


@pytest.mark.parametrize("shape", ["long", "short", "batch"])
def test_qubo_magnitude_names_a_wrong_point(shape: str) -> None:
    """`QUBO.magnitude` checks its point like `energy` and `gradient` (numpy's matmul
    dimension mismatch before)."""
    q = knapsack_qubo_safe(random_knapsack(5, seed=1))
    z = {"long": np.ones(q.n + 3), "short": np.ones(q.n - 1), "batch": np.ones((2, q.n))}[shape]
    with pytest.raises(InputError, match=f"length {q.n}"):
        q.magnitude(z)
    assert q.magnitude(np.ones(q.n)) > 0


@pytest.mark.parametrize("call", ["solve_file", "explain_infeasible_file"])
def test_highs_reads_an_mps_file_with_an_empty_line(tmp_path: Path, call: str) -> None:
    """HiGHS's fixed-format reader (taking over at a COLUMNS entry for an undeclared row)
    never returned from a file with an empty line; the read is now refused by name. Run in
    a child process so that a regression fails in a minute instead of hanging."""
    path = tmp_path / "typo.mps"
    path.write_text(_UNDECLARED)
    solver = ", solver='highs'" if call == "solve_file" else ""
    code = ("import sys; from coplug.plugins import InputError, solve_file, "
            "explain_infeasible_file\n"
            "try:\n"
            f"    {call}(sys.argv[1]{solver})\n"
            "except InputError as exc:\n"
            "    print('refused:', exc)\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: typo.mps" in done.stdout and "not in ROWS" in done.stdout


@pytest.mark.parametrize("packed", [False, True])
def test_empty_lines_are_read_as_before(tmp_path: Path, packed: bool) -> None:
    """A file with empty lines, which HiGHS now reads through a copy (comment lines in their
    place), gives the same optimum on both solvers, .gz too (a guard for that copy, not a
    fault found)."""
    text = ("NAME T\nROWS\n N obj\n G c1\n\nCOLUMNS\n x obj 1 c1 1\n\n y obj 2 c1 1\n"
            "RHS\n rhs c1 3\nBOUNDS\n UP bnd x 2\nENDATA\n\n")
    path = tmp_path / ("m.mps.gz" if packed else "m.mps")
    path.write_bytes(gzip.compress(text.encode()) if packed else text.encode())
    results = [solve_file(path, solver=s) for s in ("highs", "scip")]
    assert [r.status for r in results] == [Status.OPTIMAL] * 2
    assert results[0].objective == pytest.approx(4.0) == results[1].objective
    assert results[0].values == pytest.approx({"x": 2.0, "y": 1.0})


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("line", [b" rhs\x16c1 5", b" UP bnd\x1fx 2"])
def test_a_control_byte_in_a_model_is_named(tmp_path: Path, solver: str, line: bytes) -> None:
    """A control byte between two RHS fields raised max() of an empty list; in a BOUNDS line
    SCIP dropped the bound (optimum 5 for 2). One after ENDATA (a DOS end-of-file mark) is
    read by neither and stays allowed."""
    head = b"NAME T\nROWS\n N obj\n L c1\nCOLUMNS\n x obj -1 c1 1\nRHS\n rhs c1 5\n"
    path = tmp_path / "ctrl.mps"
    section = b"" if line.startswith(b" rhs") else b"BOUNDS\n"
    path.write_bytes(head + section + line + b"\nENDATA\n")
    number = 9 if not section else 10
    with pytest.raises(InputError, match=f"ctrl.mps: line {number} holds the control byte"):
        solve_file(path, solver=solver)
    path.write_bytes(head + b"ENDATA\n\x1a")
    assert solve_file(path, solver=solver).objective == pytest.approx(-5.0)


def _npy(tmp_path: Path, header: bytes) -> Path:
    """A version-1 .npy file with `header` (padded) and 16 bytes of data."""
    header = header + b" " * (63 - len(header) % 64) + b"\n"
    path = tmp_path / "c.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
                     + bytes(16))
    return path


@pytest.mark.parametrize("header", [
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616, 2), }",
    b"{'descr': ',i4', 'fortran_order': False, 'shape': (2, 2), }",
    b"{'descr': '<f8', 'fortran_order': False, 'shape': (True, 2), }",
])
def test_a_crafted_npy_header_is_named(tmp_path: Path, header: bytes) -> None:
    """OverflowError, SyntaxError and TypeError from numpy's header parse before."""
    with pytest.raises(InputError, match="not a readable .npy array"):
        load_costs(_npy(tmp_path, header))


def test_npz_archives_scipy_cannot_read_are_named(tmp_path: Path) -> None:
    """A lil archive (NotImplementedError) and a numeric format (AttributeError) before."""
    for k, fmt in enumerate([np.array("lil"), np.array(3)]):
        path = tmp_path / f"m{k}.npz"
        np.savez(path, format=fmt, shape=np.array([2, 2]))
        with pytest.raises(InputError, match="not a scipy.sparse .npz matrix"):
            load_costs(path)


@pytest.mark.parametrize("arrays", [
    {"format": np.array("dia"), "data": np.array([[1.0, 2.0]]), "offsets": np.array([2**32])},
    {"format": np.array("csr"), "data": np.array([1.0, 2.0]), "indices": np.array([0.0, 1.5]),
     "indptr": np.array([0, 1, 2])},
    {"format": np.array("coo"), "data": np.array([1.0, 2.0]), "row": np.array([0.0, 1.0]),
     "col": np.array([1, 0])},
    {"format": np.array("coo"), "data": np.array([1.0, 2.0]),
     "coords": np.array([[0.0, 1.0], [1.5, 0.0]])},
])
def test_npz_index_arrays_scipy_converts_are_refused(tmp_path: Path, arrays: dict) -> None:
    """scipy wrapped a DIA offset 2**32 to the main diagonal and cast column 1.5 to 1: the
    archive was read as another matrix with no word."""
    path = tmp_path / "m.npz"
    np.savez(path, shape=np.array([2, 2]), **arrays)
    with pytest.raises(InputError, match="holds other numbers than scipy reads"):
        load_costs(path)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dia", "bsr"])
def test_npz_files_scipy_wrote_still_load(tmp_path: Path, fmt: str) -> None:
    """What save_npz writes passes the index check, every format (a guard for the check
    above, not a fault found)."""
    dense = np.array([[1.0, 2.0], [3.0, 4.0]])
    path = tmp_path / f"m_{fmt}.npz"
    sp.save_npz(path, sp.csr_matrix(dense).asformat(fmt))
    assert np.array_equal(load_costs(path).toarray(), dense)


def test_npz_index_arrays_with_room_past_the_pointer_load(tmp_path: Path) -> None:
    """A CSR archive whose indices and data run past indptr[-1] (scipy drops the rest) is
    no converted index array: it loaded before the check and still does."""
    path = tmp_path / "room.npz"
    np.savez(path, format=np.array("csr"), shape=np.array([2, 2]),
             data=np.array([1.0, 2.0, 9.0]), indices=np.array([0, 1, 1], dtype=np.int32),
             indptr=np.array([0, 1, 2], dtype=np.int32))
    assert np.array_equal(load_costs(path).toarray(), [[1.0, 0.0], [0.0, 2.0]])


def test_orlib_lines_ended_by_a_line_separator(tmp_path: Path) -> None:
    """U+2028 ends a line for the readers but not for the OR-Library header test: the file
    was read as a 5 x 1 matrix."""
    path = tmp_path / "assign2.txt"
    path.write_text("2\u20281\u20282\u20283\u20284\n", encoding="utf-8")
    assert np.array_equal(load_costs(path), [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("build", [knapsack_qubo_safe, knapsack_qubo_naive])
def test_knapsack_qubos_refuse_integers_float64_rounds(build) -> None:
    """Values 2**53 + 1 and 2**53 gave the safe QUBO's two placements one coefficient, and
    its best objective 2**53 for an optimum 2**53 + 1; floats and even integers stay."""
    with pytest.raises(InputError, match="9007199254740993"):
        build(KnapsackInstance([2**53 + 1, 2**53], [1, 1], 1))
    assert build(KnapsackInstance([2**53 + 2, 2**53], [1, 1], 1)).n > 0
    assert build(KnapsackInstance([1e20, 2.5], [1, 1], 1)).n > 0


def test_best_objective_takes_the_qubos_own_sense() -> None:
    """`best_objective(1)` on a maximized QUBO gave the worst value found, 0 and False the
    best, "max" a TypeError: now the QUBO's own sense by default, any other refused."""
    import pyomo.environ as pyo

    from coplug.formulations.qubo_solvers import RunReport, minimize

    qubo = knapsack_qubo_safe(random_knapsack(8, seed=5, r=10))
    report = minimize(qubo, method="pgd", starts=32, seed=0)
    found = [c.objective for c in report.certificates if c.binary and c.feasible]
    assert len(set(found)) > 1  # a worst and a best to tell apart
    assert report.best_objective() == max(found) == report.best_objective(pyo.maximize)
    assert report.best_objective(-1) == max(found)
    with pytest.raises(InputError, match="maximized"):
        report.best_objective(1)
    for bad in (0, False, "max", 1.5, 2):
        with pytest.raises(InputError, match="sense must be 1"):
            report.best_objective(bad)
    by_hand = RunReport(report.points, report.energies, report.certificates, 1, 0.0, "pgd")
    assert by_hand.best_objective(-1) == max(found)  # as before: no sense recorded
    with pytest.raises(InputError, match="records no QUBO sense"):
        by_hand.best_objective()  # a default of 1 gave the worst value


def _binary_model():
    """max x0 + 2 x1 subject to x0 + x1 <= 1, binaries."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1], sense=pyo.maximize)
    m.o2 = pyo.Objective(expr=m.x[0])
    m.o2.deactivate()
    return m


@pytest.mark.parametrize("call", ["solve", "k_best", "lexicographic", "pareto_front"])
def test_a_siblings_progress_keyword_is_named(call: str) -> None:
    """`progress=True`, which solve_file takes, reached SCIP as a parameter ("cannot set
    SCIP parameter 'progress'")."""
    from coplug.plugins import k_best, lexicographic, pareto_front, solve

    m = _binary_model()
    run = {"solve": lambda: solve(m, progress=True),
           "k_best": lambda: k_best(m, progress=True),
           "lexicographic": lambda: lexicographic(m, [m.o, m.o2], progress=True),
           "pareto_front": lambda: pareto_front(m, m.o, m.o2, progress=True)}[call]
    with pytest.raises(InputError, match=rf"{call}\(\) takes no progress= argument"):
        run()


@pytest.mark.parametrize("keyword", ["plugins", "warmstart", "mip_duals"])
def test_solve_file_names_solves_own_keywords(tmp_path: Path, keyword: str) -> None:
    """solve's keywords reached the solver as parameters of solve_file ("cannot set SCIP
    parameter 'plugins'")."""
    from coplug.plugins import Progress

    path = tmp_path / "m.mps"
    _binary_model().write(str(path), io_options={"symbolic_solver_labels": True})
    value = {"plugins": [Progress()], "warmstart": True, "mip_duals": "fixed"}[keyword]
    with pytest.raises(InputError, match=rf"solve_file\(\) takes no {keyword}= argument"):
        solve_file(path, **{keyword: value})
    assert solve_file(path).objective == pytest.approx(2.0)


@pytest.mark.parametrize("name", ["logreg", "GBT", "LP"])
def test_pmvb_predictor_kind_names_get_a_hint(name: str) -> None:
    """`PMVBBranching("logreg")` said only "checkpoint logreg does not exist"."""
    from coplug.plugins.pmvb import PMVBBranching

    hint = "data-free mode is spelled 'lp'" if name == "LP" else "shipped_checkpoint"
    with pytest.raises(InputError, match=hint):
        PMVBBranching(name)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (1, 4), (4, 1)])
@pytest.mark.parametrize("seed", range(4))
def test_assignment_model_takes_sparse_and_tall_costs(shape: tuple[int, int],
                                                      seed: int) -> None:
    """`assignment_model` refused sparse costs (pairs left out: forbidden) and tall
    matrices, which solve_lap and the ranked solvers take; its optimum now equals
    solve_lap's on both forms, through the LAP path and SCIP alike."""
    from coplug.plugins import solve
    from coplug.plugins.lap import solve_lap

    rng = np.random.default_rng(seed)
    dense = rng.integers(-9, 20, size=shape).astype(float)
    keep = rng.random(shape) < 0.75
    keep[np.arange(min(shape)), np.arange(min(shape))] = True  # an assignment exists
    sparse = sp.csr_matrix((dense[keep], np.nonzero(keep)), shape=shape)
    for cost, maximize in ((dense, False), (sparse, False), (sparse, True)):
        model = assignment_model(cost, maximize=maximize)
        assert len(model.x) == (keep.sum() if sp.issparse(cost) else dense.size)
        best = solve_lap(cost, maximize=maximize).cost
        for solver in ("lap", "scip"):
            result = solve(model, solver=solver)
            assert result.status == Status.OPTIMAL
            assert result.objective == pytest.approx(best)
        chosen = [p for p in model.x if model.x[p].value > 0.5]
        assert len(chosen) == min(shape)
        assert len({i for i, _ in chosen}) == len({j for _, j in chosen}) == min(shape)


def test_assignment_model_names_a_line_with_no_pair() -> None:
    """A row that must be assigned and has no allowed pair is refused by name; a column
    of the longer side with none is left free; a Hall violation solves as infeasible."""
    from coplug.plugins import solve

    with pytest.raises(InputError, match="row 1 has no allowed pair"):
        assignment_model(sp.csr_matrix(([1.0], ([0], [0])), shape=(2, 3)))
    with pytest.raises(InputError, match="column 2 has no allowed pair"):
        assignment_model(sp.csr_matrix(([1.0, 2.0, 3.0], ([0, 1, 2], [0, 1, 0])),
                                       shape=(3, 3)))
    free = assignment_model(sp.csr_matrix(([1.0, 2.0], ([0, 1], [0, 1])), shape=(2, 3)))
    assert solve(free, solver="lap").objective == pytest.approx(3.0)
    import pickle

    copy = pickle.loads(pickle.dumps(free))  # rules that pickle: no lambdas
    assert solve(copy, solver="scip").objective == pytest.approx(3.0)
    hall = sp.csr_matrix(([1.0, 2.0, 3.0, 4.0], ([0, 1, 2, 2], [0, 0, 1, 2])), shape=(3, 3))
    for solver in ("lap", "scip", "highs"):
        assert solve(assignment_model(hall), solver=solver).status == Status.INFEASIBLE
    with pytest.raises(InputError, match="leaving it out of a scipy.sparse matrix"):
        assignment_model(np.array([[1.0, np.inf], [2.0, 3.0]]))


@pytest.mark.parametrize("call", ["solve_pmvb_prefix", "solve_pmvb_start"])
def test_pmvb_steps_name_progress_and_pass_options_as_options(call: str) -> None:
    """The PMVB steps' `progress=` is named for the call; a native option in options= reaches
    SCIP as one (solve() refused it as its own keyword, naming solve())."""
    from coplug.plugins import pmvb_prefix, pmvb_start

    run = getattr(pmvb_prefix if call.endswith("prefix") else pmvb_start, call)
    m = _binary_model()
    with pytest.raises(InputError, match=rf"{call}\(\) takes no progress= argument"):
        run(m, progress=True)
    with pytest.raises(InputError, match="SCIP parameter 'progress'"):
        run(m, options={"progress": 1})
    assert run(m, options={"limits/nodes": 100}).objective == pytest.approx(2.0)


@pytest.mark.parametrize("name", ["rowdualnet.pt", "pmvb_gisp_mlp.pt"])
def test_a_checkpoint_with_a_bad_zip_version_is_named(tmp_path: Path, name: str) -> None:
    """One byte of the zip's central directory raised zipfile's NotImplementedError ("zip
    file version 25.0") through both loaders and `coplug pmvb --predictor`."""
    import coplug.models
    from coplug.learned.pmvb_predictors import load_predictor
    from coplug.learned.rowdualnet import load

    data = bytearray((Path(coplug.models.__file__).parent / name).read_bytes())
    data[data.index(b"PK\x01\x02") + 6] = 250  # the extract version: 25.0
    path = tmp_path / name
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="is corrupt: zip file version 25.0"):
        (load if name.startswith("rowdual") else load_predictor)(path)


@pytest.mark.parametrize("text, sense", [
    ("min\n z + [ 4 x * z ]/2\nst\n c0: 4 z + 3 x <= 2\nbounds\n -6 <= x <= 6\n z <= 30\nend\n",
     "minimize"),
    ("max\n obj: x + [ x^2 ] / 2\nst\n c1: x <= 3\nbounds\n -4 <= x <= 3\nend\n", "maximize"),
    ("min\n obj: x + y + [ 2 x * y + 5 y^2 ] / 2\nst\n c1: x + y <= 3\nbounds\n -1 <= x <= 1\n"
     " -1 <= y <= 1\nend\n", "minimize"),  # its stored lower triangle alone: dominant
])
def test_highs_refuses_a_files_nonconvex_quadratic(tmp_path: Path, text: str,
                                                   sense: str) -> None:
    """HiGHS returned "optimal" 0 at a saddle point of an indefinite objective with a zero
    diagonal (SCIP: -55); solve() refused such an objective, solve_file did not."""
    from coplug.plugins import UnsupportedModelError

    path = tmp_path / "q.lp"
    path.write_text(text)
    with pytest.raises(UnsupportedModelError, match=f"cannot {sense} q.lp's non-convex"):
        solve_file(path, solver="highs")
    assert solve_file(path, solver="scip").status == Status.OPTIMAL


def test_highs_still_solves_a_files_convex_quadratic(tmp_path: Path) -> None:
    """A convex objective with off-diagonal terms (not diagonally dominant) stays HiGHS's:
    the same optimum as SCIP (a guard for the check above)."""
    path = tmp_path / "c.lp"
    path.write_text("min\n obj: - x - y + [ 2 x^2 + 3 x * y + 2 y^2 ] / 2\nst\n"
                    " c1: x + y <= 3\nend\n")
    results = [solve_file(path, solver=s) for s in ("highs", "scip")]
    assert results[0].objective == pytest.approx(results[1].objective, abs=1e-6)


@pytest.mark.parametrize("term", ["3.y", "2.x", "4._x", "3.+y", "3.-y", "3..y", "3.\u00e9",
                                  "- y + [ 3.y^2 ] / 2"])
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_number_ending_in_a_point_glued_to_a_name_is_named(tmp_path: Path, term: str,
                                                             solver: str) -> None:
    """SCIP's LP reader took `3.y` for a column `.y` (objective 0), HiGHS's for 3 y (6); so
    with a sign, a point or any other byte after the point, and inside the brackets of a
    quadratic part."""
    path = tmp_path / "p.lp"
    path.write_text(f"max\n obj: {term}\nst\n c1: y + x + _x + \u00e9 <= 2\nend\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"p.lp:2: .*a number ending in a point is glued"):
        solve_file(path, solver=solver)


@pytest.mark.parametrize("term", ["2.5y", "3.e2 y", "x1.y", "2. y"])
def test_numbers_and_names_both_readers_agree_on_still_solve(tmp_path: Path,
                                                            term: str) -> None:
    """An exponent after the point, a point inside a name, a space: read alike (a guard)."""
    path = tmp_path / "p.lp"
    path.write_text(f"max\n obj: {term}\nst\n c1: y + x1.y <= 2\nend\n")
    results = [solve_file(path, solver=s) for s in ("scip", "highs")]
    assert results[0].objective == pytest.approx(results[1].objective)


@pytest.mark.parametrize("term", ["2int", "+1Gen", "3.5bin"])
def test_a_section_word_glued_to_its_coefficient_is_named(tmp_path: Path, term: str) -> None:
    """`obj: x + 2int`: SCIP's reader ended the objective at `int` (objective 3 for 1); only
    the spaced `2 int` was refused."""
    path = tmp_path / "g.lp"
    path.write_text(f"min\n obj: x + {term}\nst\n c1: x >= 1\nend\n")
    with pytest.raises(InputError, match="named like an LP section"):
        solve_file(path, solver="scip")
    assert solve_file(path, solver="highs").objective == pytest.approx(1.0)


def test_a_nonconvex_quadratic_beside_many_columns_is_checked(tmp_path: Path) -> None:
    """The check skipped Hessians over more than 2,000 columns counting every column of the
    file: 2,001 unused columns let HiGHS's saddle point through as optimal."""
    from coplug.plugins import UnsupportedModelError

    unused = " ".join(f"+ 0 w{k}" for k in range(2001))
    path = tmp_path / "wide.lp"
    path.write_text(f"min\n obj: z {unused} + [ 4 x * z ]/2\nst\n c0: 4 z + 3 x <= 2\n"
                    "bounds\n -6 <= x <= 6\n z <= 30\nend\n")
    with pytest.raises(UnsupportedModelError, match="non-convex quadratic objective"):
        solve_file(path, solver="highs")


@pytest.mark.parametrize("bound", [1e18, -1e16, 2.0**60])
def test_scip_refuses_finite_bounds_past_its_hugeval(bound: float) -> None:
    """min -5.2 x with x <= 9 and x <= 1e18: SCIP (plain PySCIPOpt too) said 'optimal' 0;
    HiGHS, and SCIP with the bound dropped, give -46.8."""
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(min(0.0, bound), max(bound, 0.0)) if bound > 0 else (bound, None))
    m.c = pyo.Constraint(expr=m.x <= 9)
    m.o = pyo.Objective(expr=-5.2 * m.x)
    with pytest.raises(InputError, match="past SCIP's numerics/hugeval"):
        solve(m, solver="scip")
    assert solve(m, solver="highs").objective == pytest.approx(-46.8)
    m.x.setub(None if bound > 0 else m.x.ub)
    m.x.setlb(0 if bound > 0 else None)
    assert solve(m, solver="scip").objective == pytest.approx(-46.8)
    m.x.setub(1e15)  # at hugeval itself: solved
    assert solve(m, solver="scip").objective == pytest.approx(-46.8)


def _huge_bound_model(**extra: Any):
    """min -5.2 x, x <= 9, 0 <= x <= 1e18 (and `extra` components)."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1e18))
    m.c = pyo.Constraint(expr=m.x <= 9)
    m.o = pyo.Objective(expr=-5.2 * m.x)
    for name, component in extra.items():
        setattr(m, name, component)
    return m


def test_every_scip_path_refuses_a_bound_past_hugeval(tmp_path: Path) -> None:
    """lexicographic and pareto_front build SCIP themselves, and files reach SCIP's reader:
    both answered 'optimal' 0 for -46.8 after the check on solve() alone."""
    import pyomo.environ as pyo

    from coplug.plugins import lexicographic, pareto_front

    m = _huge_bound_model()
    m.o2 = pyo.Objective(expr=m.x)
    m.o2.deactivate()
    for run in (lambda: lexicographic(m, [m.o], solver="scip"),
                lambda: pareto_front(m, m.o, m.o2, solver="scip", step=1)):
        with pytest.raises(InputError, match="past SCIP's numerics/hugeval"):
            run()
    for suffix in (".lp", ".mps"):
        path = tmp_path / f"huge{suffix}"
        m.write(str(path), io_options={"symbolic_solver_labels": True})
        with pytest.raises(InputError, match=f"huge{suffix}: the upper bound 1e\\+18"):
            solve_file(path, solver="scip")
        assert solve_file(path, solver="highs").objective == pytest.approx(-46.8)


def test_bounds_scip_never_gets_are_not_refused() -> None:
    """An unused variable, a fixed one and one of a deactivated block keep their huge
    bounds from SCIP: no refusal (the first check read every variable of the model)."""
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = _huge_bound_model(unused=pyo.Var(bounds=(0, 1e18)))
    m.x.setub(None)
    m.fixed = pyo.Var(bounds=(0, 1e18))
    m.fixed.fix(3)
    m.c2 = pyo.Constraint(expr=m.x + m.fixed <= 12)
    m.b = pyo.Block()
    m.b.y = pyo.Var(bounds=(0, 1e18))
    m.b.r = pyo.Constraint(expr=m.b.y <= 1)
    m.b.deactivate()
    assert solve(m, solver="scip").objective == pytest.approx(-46.8)


@pytest.mark.parametrize("row", ["c: x + 2.>= 3", "c: x + 2.= 3"])
def test_a_number_ending_in_a_point_glued_to_a_sense_is_named(tmp_path: Path, row: str) -> None:
    """SCIP's reader made a column `.` of `2.>=` ('optimal' 0 for 1)."""
    path = tmp_path / "s.lp"
    path.write_text(f"min\n obj: x\nst\n {row}\nend\n")
    with pytest.raises(InputError, match="glued to what follows"):
        solve_file(path, solver="scip")


def _unbounded_mip():
    """max y + s, 18 y - 10 s - k <= 600, 0.6 y - k <= -5.69, s <= 9, k, y >= 0 integers:
    unbounded (y grows with k = 18 y)."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.k = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.s = pyo.Var(bounds=(None, 9))
    m.r1 = pyo.Constraint(expr=18 * m.y - 10 * m.s - m.k <= 600)
    m.c1 = pyo.Constraint(expr=-m.k + 0.6 * m.y <= -5.69)
    m.o = pyo.Objective(expr=m.y + m.s, sense=pyo.maximize)
    return m


def test_scips_linear_optimum_at_its_infinity_is_unbounded(tmp_path: Path) -> None:
    """SCIP called this unbounded MIP "optimal" 3.4e18 at k = 6.2e19 (HiGHS: unbounded); the
    rule for nonlinear models' points at SCIP's infinity now reads linear ones too."""
    from coplug.plugins import solve

    m = _unbounded_mip()
    with pytest.warns(UserWarning, match="at its infinity"):
        result = solve(m, solver="scip")
    assert result.status == Status.UNBOUNDED and result.objective is None
    assert solve(_unbounded_mip(), solver="highs").status == Status.UNBOUNDED
    path = tmp_path / "unb.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    with pytest.warns(UserWarning, match="at its infinity"):
        assert solve_file(path, solver="scip").status == Status.UNBOUNDED
