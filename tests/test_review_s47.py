"""Session 47 review fixes: each test failed before its fix, but for those a docstring calls
a guard."""

from __future__ import annotations

import re

import pyomo.environ as pyo
import pytest
from pyomo.dae import ContinuousSet, DerivativeVar
from pyomo.gdp import Disjunction
from pyomo.mpec import Complementarity, complements

from coplug.plugins import UnsupportedModelError, infeasibilities, solve


def _disjunction() -> pyo.ConcreteModel:
    """x = 5 against x <= 2 or x >= 8: meets neither side."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10), initialize=5)
    m.d = Disjunction(expr=[[m.x <= 2], [m.x >= 8]])
    return m


def _logical() -> pyo.ConcreteModel:
    """Y1 and Y2 at True, False: the conjunction fails."""
    m = pyo.ConcreteModel()
    m.Y = pyo.BooleanVar([1, 2])
    m.lc = pyo.LogicalConstraint(expr=m.Y[1].land(m.Y[2]))
    m.Y[1].value, m.Y[2].value = True, False
    return m


def _complementarity() -> pyo.ConcreteModel:
    """x = y = 1 against x >= 0 complementing y >= 0: x * y must be 0."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 5), initialize=1)
    m.y = pyo.Var(bounds=(0, 5), initialize=1)
    m.cc = Complementarity(expr=complements(m.x >= 0, m.y >= 0))
    return m


@pytest.mark.parametrize("build, name", [(_disjunction, "'d' (Disjunction)"),
                                         (_logical, "'lc' (LogicalConstraint)"),
                                         (_complementarity, "'cc' (Complementarity)")])
def test_infeasibilities_refuses_what_it_cannot_check(build, name: str) -> None:
    """A point that breaks a raw disjunction, logical constraint or complementarity was
    called feasible ({}): such components are refused by name, as `solve` does."""
    with pytest.raises(UnsupportedModelError, match=re.escape(name) + r" is not checked by "
                                                    r"infeasibilities\(\).*first"):
        infeasibilities(build())


def test_infeasibilities_checks_a_transformed_disjunction() -> None:
    """After gdp.bigm the disjunction is rows and binaries: the point is judged (guard)."""
    m = _disjunction()
    pyo.TransformationFactory("gdp.bigm").apply_to(m)
    m.d.disjuncts[0].binary_indicator_var.value = 1
    m.d.disjuncts[1].binary_indicator_var.value = 0
    assert infeasibilities(m)
    m.x.value = 1
    assert not infeasibilities(m)


def _ode() -> pyo.ConcreteModel:
    """max x(1) with dx/dt = 1, x(0) = 0 on [0, 1]: x(1) = 1 once discretized."""
    m = pyo.ConcreteModel()
    m.t = ContinuousSet(bounds=(0, 1))
    m.x = pyo.Var(m.t, bounds=(0, 10))
    m.dx = DerivativeVar(m.x, wrt=m.t)
    m.ode = pyo.Constraint(m.t, rule=lambda m, t: m.dx[t] == 1 if t > 0 else pyo.Constraint.Skip)
    m.init = pyo.Constraint(expr=m.x[0] == 0)
    m.o = pyo.Objective(expr=m.x[1], sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_an_undiscretized_derivative_is_refused(solver: str) -> None:
    """Both solvers read a raw DerivativeVar as a free variable and called x(1) = 10
    optimal: it is refused, naming the dae transformations; discretized it solves to 1."""
    with pytest.raises(UnsupportedModelError, match=r"'dx' \(DerivativeVar, not discretized\)"
                                                    r".*dae\.finite_difference"):
        solve(_ode(), solver=solver)
    with pytest.raises(UnsupportedModelError, match="'dx'"):
        infeasibilities(_ode())
    m = _ode()
    pyo.TransformationFactory("dae.finite_difference").apply_to(m, nfe=4)
    assert solve(m, solver=solver).objective == pytest.approx(1.0)
    assert not infeasibilities(m)


def _three_binaries(infeasible: bool) -> pyo.ConcreteModel:
    """max x0 + x1 + x2 over binaries, at most 2 of them (at least 3 too: infeasible)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 2)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    if infeasible:
        m.bad = pyo.Constraint(expr=sum(m.x.values()) >= 3)
    return m


@pytest.mark.parametrize("factory", ["legacy", "new"])
@pytest.mark.parametrize("infeasible", [True, False])
def test_factory_leaves_values_it_did_not_load_stale(factory: str, infeasible: bool) -> None:
    """The factories put an earlier point back fresh (stale False) after an infeasible
    solve or with load_solutions=False, where Pyomo's own solvers mark it stale: an old
    point read as this solve's."""
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
    m = _three_binaries(infeasible)
    for var in m.x.values():
        var.set_value(0)
    assert not any(var.stale for var in m.x.values())
    if factory == "legacy":
        pyo.SolverFactory("coplug_highs").solve(m, load_solutions=False)
    else:
        NewFactory("coplug_highs").solve(m, load_solutions=False,
                                         raise_exception_on_nonoptimal_result=False)
    assert [var.value for var in m.x.values()] == [0, 0, 0]
    assert all(var.stale for var in m.x.values())


def test_a_failed_callback_leaves_the_put_back_point_stale() -> None:
    """An OnSolution callback that raises puts the earlier values back: stale ones stay
    stale (they had come back fresh)."""
    from coplug.plugins import OnSolution

    def boom(*_: object) -> None:
        raise RuntimeError("boom")

    m = _three_binaries(True)
    solve(m)
    assert all(var.stale for var in m.x.values())
    m.bad.deactivate()
    with pytest.raises(RuntimeError, match="boom"):
        solve(m, plugins=[OnSolution(boom)])
    assert all(var.stale for var in m.x.values())


_PLAIN_LP = "Minimize\n obj: x + y\nSubject To\n c1: x + y >= 3\nEnd\n"


def test_a_temporary_folder_not_in_utf8_is_named(tmp_path, monkeypatch) -> None:
    """TMPDIR in Latin-1: HiGHS's read log path raised highspy's TypeError; now the
    folder is named with what to do."""
    import os
    import tempfile

    from coplug.plugins import solve_file
    from coplug.plugins.errors import InputError

    folder = os.fsencode(tmp_path) + b"/x\xe9"
    os.mkdir(folder)
    model = tmp_path / "plain.lp"
    model.write_text(_PLAIN_LP)
    monkeypatch.setattr(tempfile, "tempdir", os.fsdecode(folder))
    with pytest.raises(InputError, match="temporary folder .* is not UTF-8.*TMPDIR"):
        solve_file(model, solver="highs")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert solve_file(model, solver="highs").objective == pytest.approx(3.0)


def test_highs_reads_files_with_a_non_ascii_temporary_folder_in_an_ascii_locale(
        tmp_path) -> None:
    """Under LC_ALL=C (no UTF-8 mode) a TMPDIR such as 'tmp ö' reached highspy as a
    name with surrogates (TypeError): every HiGHS file solve failed."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "tmp ö"
    folder.mkdir()
    model = tmp_path / "plain.lp"
    model.write_text(_PLAIN_LP)
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "TMPDIR": str(folder)}
    code = ("import sys; from coplug.plugins import solve_file; "
            "print(solve_file(sys.argv[1], solver='highs').objective)")
    out = subprocess.run([sys.executable, "-c", code, str(model)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.split()[-1]) == pytest.approx(3.0)


def test_the_solution_file_is_replaced_whole(tmp_path, monkeypatch) -> None:
    """--solution wrote in place (truncate, then write): two runs ending at once left one
    run's header over the other's values, and a failing write left half a file. It goes
    through a rename now: a write that fails leaves the earlier file and no stray one."""
    import errno
    from pathlib import Path

    from coplug.plugins.cli import _write_lines
    from coplug.plugins.errors import InputError

    out = tmp_path / "x.sol"
    _write_lines(str(out), ["# status optimal, objective 1.0", "x 1.0"])
    real = Path.write_text

    def half_then_full(self: Path, text: str, **kwargs: object) -> int:
        real(self, text[: len(text) // 2], **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full)
    with pytest.raises(InputError, match=r"--solution: cannot write .*No space left"):
        _write_lines(str(out), ["# status optimal, objective 2.0", "y 1.0"])
    assert out.read_text() == "# status optimal, objective 1.0\nx 1.0\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.sol"]


def test_the_solution_goes_through_links_and_to_stdout_in_place(tmp_path) -> None:
    """A link keeps being a link (its target is written), and `--solution /dev/stdout`
    with output sent to a file writes into that output (a rename had replaced the file, or
    as root /dev/stdout itself)."""
    import os
    import subprocess
    import sys

    from coplug.plugins.cli import _write_lines

    real, link = tmp_path / "real.sol", tmp_path / "link.sol"
    real.write_text("old\n")
    link.symlink_to(real)
    _write_lines(str(link), ["# status optimal, objective 3.0"])
    assert link.is_symlink() and real.read_text() == "# status optimal, objective 3.0\n"
    out = tmp_path / "out.txt"
    with open(out, "w") as sink:
        done = subprocess.run([sys.executable, "-m", "coplug.plugins.cli", "solve", "knapsack",
                               "--size", "6", "--solution", "/dev/stdout"], stdout=sink,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("# status optimal") and "\nstatus     optimal\n" in text
    assert os.path.islink("/dev/stdout")


def test_two_runs_on_one_run_directory_do_not_mix(tmp_path) -> None:
    """Two evolve runs started on one new directory both passed its check, both reported
    it, and its front mixed their files: the second is refused while the first holds it,
    and after it, finding the first's files; with overwrite it replaces them whole."""
    import json

    from coplug.formulations.bbo.evolve import EvolutionConfig, RunWriter, evolve
    from coplug.plugins.errors import InputError

    tiny = dict(population=4, generations=2, budget=20, seeds=3)
    first, second = EvolutionConfig(**tiny, seed=1, targets=(1,)), EvolutionConfig(
        **tiny, seed=2, targets=(3,))
    run_dir = tmp_path / "runs" / "x"
    a, b = RunWriter(run_dir), RunWriter(run_dir)  # both checked before either writes
    a.write(evolve(first), first, "symbolic", finished=False)
    with pytest.raises(InputError, match="being written by another run"):
        b.write(evolve(second), second, "symbolic", finished=False)
    a.release()
    with pytest.raises(InputError, match="another run wrote there since"):
        b.write(evolve(second), second, "symbolic", finished=False)
    assert json.loads((run_dir / "config.json").read_text())["targets"] == [1]

    refused: list[str] = []

    def overwriting_run(gen: int, _: object) -> None:
        if gen == 1:
            with pytest.raises(InputError, match="being written by another run") as info:
                evolve(second, run_dir=run_dir, overwrite=True)
            refused.append(str(info.value))

    evolve(first, run_dir=run_dir, overwrite=True, callback=overwriting_run)
    assert refused
    assert json.loads((run_dir / "history.json").read_text())["finished"]
    evolve(second, run_dir=run_dir, overwrite=True)
    assert json.loads((run_dir / "config.json").read_text())["targets"] == [3]


def test_a_sidecar_saved_with_a_byte_order_mark_reads(tmp_path) -> None:
    """A checkpoint's JSON saved by a Windows editor (UTF-8 with a byte-order mark) was
    refused ('Unexpected UTF-8 BOM'), where every other text input reads past it."""
    import json
    import shutil
    from pathlib import Path

    import coplug.models
    from coplug.learned.rowdualnet import load

    models = Path(coplug.models.__file__).parent
    copy = tmp_path / "rowdualnet.pt"
    shutil.copy(models / "rowdualnet.pt", copy)
    text = (models / "rowdualnet.json").read_text(encoding="utf-8")
    copy.with_suffix(".json").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load(copy).hidden == json.loads(text)["hidden"]


def _tiny_cost_lp() -> pyo.ConcreteModel:
    """max -x0 + 5e-8 x1, x0 + x1 >= 1, x1 - x2 <= 5, x >= 0, x2 <= 1e12: the optimum is
    5e-8 (1e12 + 5) = 50000.00000025, far out along x1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.NonNegativeReals)
    m.x[2].setub(1e12)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] >= 1)
    m.d = pyo.Constraint(expr=m.x[1] - m.x[2] <= 5)
    m.o = pyo.Objective(expr=-m.x[0] + 5e-8 * m.x[1], sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def test_a_tiny_reduced_cost_on_a_long_column_is_no_zero() -> None:
    """SCIP (presolve off for duals) answered 5e-8 with zero duals, and the certificate
    called them a proof: the reduced cost 5e-8 counted as zero, on a column 1e12 from its
    bound. The duals are withheld now, naming the gap; HiGHS's answer is certified."""
    import numpy as np
    import scipy.sparse as sp

    from coplug.plugins.lp_certificate import certify

    matrix = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, -1.0, 1.0]]))
    inf = np.inf
    found = certify(np.array([1.0, -5e-8, 0.0]), np.array([0.0, 1.0, 0.0]), matrix,
                    np.array([1.0, -5.0]), np.array([inf, inf]), np.zeros(3),
                    np.array([inf, inf, 1e12]), np.zeros(2))
    assert not found.holds and found.worst[0] == "column"
    with pytest.warns(UserWarning, match="do not prove the point optimal"):
        result = solve(_tiny_cost_lp(), solver="scip")
    assert result.extra["duals"]["loaded"] is False
    m = _tiny_cost_lp()
    assert solve(m, solver="highs").objective == pytest.approx(50000.00000025, rel=1e-9)
    assert m.dual[m.c] == pytest.approx(0.0, abs=1e-15) and m.dual[m.d] == pytest.approx(5e-8)


def test_round_off_reduced_costs_on_free_columns_still_certify() -> None:
    """A reduced cost at round-off (1e-16 of its terms) on a free column stays a zero
    (guard: counted, its infinite distance made every such optimum uncertified)."""
    import numpy as np
    import scipy.sparse as sp

    from coplug.plugins.lp_certificate import certify

    inf = np.inf
    matrix = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, -1.0]]))
    duals = np.array([0.1 + 0.2, 0.3])  # 0.30000000000000004: c1 - y1 - y2 is 5.6e-17
    found = certify(np.array([0.6, 0.0]), np.array([1.0, 1.0]), matrix,
                    np.array([2.0, 0.0]), np.array([2.0, 0.0]), np.full(2, -inf),
                    np.full(2, inf), duals)
    assert found.reduced[0] == 0.0 and found.holds


def test_k_best_completes_a_point_whose_binaries_round_off_a_big_m_row() -> None:
    """max x - 2s + z - 1000y, x <= 1e9 y, x - s <= 50: SCIP met y = 5e-7 with x = 50
    (within its integrality tolerance), and k_best recorded it at y = 0, infeasible, as
    the proven best 51. The assignment's best point is computed instead: 1, 0, -949, -950
    (by enumeration of y and z)."""
    from coplug.plugins import k_best

    m = pyo.ConcreteModel()
    m.x, m.s = pyo.Var(bounds=(0, None)), pyo.Var(bounds=(0, None))
    m.y, m.z = pyo.Var(domain=pyo.Binary), pyo.Var(domain=pyo.Binary)
    m.arc = pyo.Constraint(expr=m.x <= 1e9 * m.y)
    m.cap = pyo.Constraint(expr=m.x - m.s <= 50)
    m.o = pyo.Objective(expr=m.x - 2 * m.s + m.z - 1000 * m.y, sense=pyo.maximize)
    found = k_best(m, k=4, solver="scip")
    assert found.proven
    assert [s.objective for s in found.solutions] == pytest.approx([1, 0, -949, -950])
    for solution in found.solutions:
        solution.load()
        assert not infeasibilities(m)


def test_k_best_drops_an_assignment_whose_rounding_leaves_no_point() -> None:
    """max 2z - 1000y, x <= 1e9 y, x >= 50 z: SCIP met y = 5e-8, z = 1, x = 50 (within its
    integrality tolerance), recorded as the proven best 2; y = 0 with z = 1 admits no x.
    By enumeration: 0 (y = z = 0), -998, -1000."""
    from coplug.plugins import k_best

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y, m.z = pyo.Var(domain=pyo.Binary), pyo.Var(domain=pyo.Binary)
    m.arc = pyo.Constraint(expr=m.x <= 1e9 * m.y)
    m.need = pyo.Constraint(expr=m.x >= 50 * m.z)
    m.o = pyo.Objective(expr=2 * m.z - 1000 * m.y, sense=pyo.maximize)
    found = k_best(m, k=4, solver="scip")
    assert found.proven
    assert [s.objective for s in found.solutions] == pytest.approx([0, -998, -1000])


def _small_qubo(**fields: object):
    """A 3-variable QUBO with the given fields (Q and c by default plain floats)."""
    import numpy as np

    from coplug.formulations.qubo import QUBO

    parts = {"Q": np.array([[1.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 3.0]]),
             "c": np.array([1.0, -1.0, 0.5])} | fields
    return QUBO(**parts, constant=0.0, decode=lambda z: z, is_feasible=lambda s: True,
                objective=lambda s: 0.0)


def test_qubo_takes_dok_matrices_and_tensors_that_require_grad() -> None:
    """A DOK matrix raised AttributeError ('no attribute data'), a tensor that requires
    grad torch's own RuntimeError: both are read as their values now."""
    import numpy as np
    import scipy.sparse as sp
    import torch

    plain = _small_qubo()
    for q in (sp.dok_matrix(plain.Q), sp.dok_array(plain.Q)):
        assert np.allclose(_small_qubo(Q=q).Q.toarray(), plain.Q.toarray())
    graded = _small_qubo(Q=torch.tensor(plain.Q.toarray(), requires_grad=True),
                         c=torch.tensor(plain.c, requires_grad=True))
    z = np.array([1.0, 0.0, 1.0])
    assert graded.energy(z) == plain.energy(z)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.asmatrix
@pytest.mark.parametrize("form", ["int64", "matrix", "list", "object", "numpy_objects",
                                  "mixed_list"])
def test_qubo_refuses_integers_float64_rounds(form: str) -> None:
    """An entry 2**62 + 1 became 2**62 with no word (as an np.matrix a raw TypeError; in a
    list or object array no word either, after the first fix)."""
    import numpy as np

    from coplug.plugins.errors import InputError

    q = np.diag(np.array([2**62 + 1, 1, 1], dtype=np.int64))
    mixed = q.tolist()
    mixed[0][1] = mixed[1][0] = 0.5
    given = {"int64": q, "matrix": np.asmatrix(q), "list": q.tolist(),
             "object": np.array(q.tolist(), dtype=object),
             "numpy_objects": np.array([[np.int64(v) for v in row] for row in q], dtype=object),
             "mixed_list": mixed}[form]
    with pytest.raises(InputError, match="QUBO Q holds the integer 4611686018427387905"):
        _small_qubo(Q=given)


@pytest.mark.parametrize("idx, expected", [([True, False, True], [0, 2]),
                                           ([0.0, 2.0], [0, 2]), ([], [])])
def test_hessian_block_reads_masks_as_masks(idx: list, expected: list) -> None:
    """A boolean mask read as indices 1, 0, 1; whole floats and [] stay coordinates."""
    import numpy as np

    q = _small_qubo()
    full = q.hessian_block(np.arange(3))
    got = q.hessian_block(np.array(idx) if idx else [])
    assert np.array_equal(got, full[np.ix_(expected, expected)])


@pytest.mark.parametrize("idx", [[0.9, 2.7], [True, False]])
def test_hessian_block_refuses_fractions_and_short_masks(idx: list) -> None:
    """[0.9, 2.7] was truncated to 0, 2; a mask of the wrong length read as indices."""
    import numpy as np

    from coplug.plugins.errors import InputError

    with pytest.raises(InputError, match="hessian_block needs whole-number coordinates"):
        _small_qubo().hessian_block(np.array(idx))


def test_selections_and_tours_refuse_masked_arrays() -> None:
    """A masked item counted in a knapsack's value and feasibility, a masked block in a
    pit's value, a masked city in a tour's length."""
    import numpy as np

    from coplug.formulations.knapsack import random_knapsack
    from coplug.formulations.openpit import random_block_model
    from coplug.formulations.tsp import tour_length
    from coplug.plugins.errors import InputError

    inst = random_knapsack(3, seed=1)
    x = np.ma.array([1, 0, 1], mask=[False, False, True])
    for call in (inst.value, inst.is_feasible):
        with pytest.raises(InputError, match="knapsack selection: masked arrays"):
            call(x)
    pit = random_block_model(12, seed=0)
    with pytest.raises(InputError, match="a pit: masked arrays"):
        pit.value(np.ma.array(np.ones(pit.n), mask=np.eye(1, pit.n, 0, dtype=bool)[0]))
    with pytest.raises(InputError, match="tour: masked arrays"):
        tour_length(np.ones((3, 3)), np.ma.array([0, 1, 2], mask=[0, 1, 0]))
    assert inst.value(np.array([1, 0, 1])) == float(inst.values[0] + inst.values[2])


def test_pmvb_predictors_refuse_masked_and_read_tensors_that_require_grad() -> None:
    """A masked X or y was used with its hidden entries; a tensor that requires grad
    raised torch's own error."""
    import numpy as np
    import torch

    from coplug.learned.pmvb_predictors import PMVBPredictor
    from coplug.plugins.errors import InputError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    model = PMVBPredictor("logreg", calibration="none")
    with pytest.raises(InputError, match="PMVBPredictor y: masked arrays"):
        model.fit(X, np.ma.array(y, mask=np.ones(40, bool)))
    model.fit(torch.tensor(X, requires_grad=True), y)
    with pytest.raises(InputError, match="PMVBPredictor X: masked arrays"):
        model.predict_proba(np.ma.array(X[:2], mask=np.zeros((2, 3), bool)))
    assert np.allclose(model.predict_proba(torch.tensor(X[:5], requires_grad=True)),
                       model.predict_proba(X[:5]))


def test_ranked_matchings_reads_line_costs_that_require_grad() -> None:
    """row_cost as a tensor that requires grad raised torch's own error."""
    import numpy as np
    import torch

    from coplug.plugins.lap import ranked_matchings

    costs = np.array([[4.0, 1.0], [2.0, 3.0]])
    plain = ranked_matchings(costs, 2, row_cost=np.array([5.0, 5.0]))
    graded = ranked_matchings(costs, 2, row_cost=torch.tensor([5.0, 5.0], requires_grad=True))
    assert [m.cost for m in graded.solutions] == [m.cost for m in plain.solutions]


@pytest.mark.parametrize("cost", ["int", "fraction"])
def test_min_trick_refuses_costs_float64_rounds(cost: str) -> None:
    """2**62 + 1023 gave v = 2**62 + 1024 > c, Fraction(1, 10) v = 0.1 > 1/10: the
    guarantee u + v <= c failed for the costs given."""
    from fractions import Fraction

    import numpy as np

    from coplug.learned.rowdualnet import min_trick
    from coplug.plugins.errors import InputError

    if cost == "int":
        c = np.array([[2**62 + 1023, 0], [0, 1]], dtype=np.int64)
    else:
        c = np.array([[Fraction(1, 10), Fraction(1)], [Fraction(2), Fraction(3)]],
                     dtype=object)
    with pytest.raises(InputError, match="min_trick's .* float64"):
        min_trick(c, np.zeros(2))
    assert np.all(min_trick(np.array([[0.5, 1.0], [2.0, 3.0]]), np.zeros(2)) <= [0.5, 1.0])


def _two_row_lp() -> pyo.ConcreteModel:
    """min 2x + 3y, x + 2y >= 4, 3x + y >= 6, x, y >= 0: duals 1.4 and 0.2."""
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(within=pyo.NonNegativeReals), pyo.Var(within=pyo.NonNegativeReals)
    m.c1 = pyo.Constraint(expr=m.x + 2 * m.y >= 4)
    m.c2 = pyo.Constraint(expr=3 * m.x + m.y >= 6)
    m.o = pyo.Objective(expr=2 * m.x + 3 * m.y)
    return m


@pytest.mark.parametrize("name", ["coplug_highs", "coplug_scip"])
def test_a_dual_suffix_declared_after_the_solve_is_named(name: str) -> None:
    """load_solution() emptied a dual Suffix declared after the solve and left it empty in
    silence (Pyomo's own highs fills it): coplug certifies duals during the solve, so it
    says so, as get_duals does; declared before, it is filled."""
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.util import NoDualsError

    m = _two_row_lp()
    results = SolverFactory(name).solve(m, load_solutions=False)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with pytest.raises(NoDualsError, match="declare m.dual .* before solving"):
        results.solution_loader.load_solution()
    m = _two_row_lp()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    results = SolverFactory(name).solve(m, load_solutions=False)
    results.solution_loader.load_solution()
    assert m.dual[m.c1] == pytest.approx(1.4) and m.dual[m.c2] == pytest.approx(0.2)


def test_one_thread_is_accepted_where_one_thread_is_run() -> None:
    """threads=1 to coplug_scip was refused ('runs on one thread; threads=1 is for
    coplug_highs'); more threads still are."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    from coplug.plugins.errors import InputError

    m = _two_row_lp()
    assert SolverFactory("coplug_scip").solve(m, threads=1).incumbent_objective == \
        pytest.approx(2 * 1.6 + 3 * 1.2)
    with pytest.raises(InputError, match="threads=2 is for coplug_highs"):
        SolverFactory("coplug_scip").solve(_two_row_lp(), threads=2)


def test_ill_conditioned_free_columns_keep_their_duals() -> None:
    """Hilbert rows (7 x 7) over free columns: SCIP's duals leave the free columns residuals
    near 1e-6 of their terms, which the first version of the small-cost gain counted with
    an infinite distance, withholding duals of a correct optimum."""
    import numpy as np

    n = 7
    hilbert = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)
    b, c = hilbert @ np.ones(n), hilbert.T @ np.ones(n)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I)
    m.r = pyo.Constraint(m.I, rule=lambda m, i: sum(hilbert[i, j] * m.x[j]
                                                    for j in range(n)) >= b[i])
    m.o = pyo.Objective(expr=sum(c[j] * m.x[j] for j in range(n)))
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(m, solver="scip")
    assert result.objective == pytest.approx(float(c.sum()), rel=1e-7)
    assert result.extra["duals"]["loaded"]
    y = np.array([m.dual[m.r[i]] for i in range(n)])
    assert np.all(y >= -1e-9) and np.allclose(hilbert.T @ y, c, atol=1e-5)


def test_the_solution_file_keeps_its_permissions(tmp_path) -> None:
    """Through the rename a private 0600 solution file had become 0644."""
    import os
    import stat

    from coplug.plugins.cli import _write_lines

    out = tmp_path / "x.sol"
    out.write_text("old\n")
    os.chmod(out, 0o600)
    _write_lines(str(out), ["# status optimal, objective 1.0"])
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text() == "# status optimal, objective 1.0\n"


def test_a_run_directory_without_locks_still_takes_runs(tmp_path, monkeypatch) -> None:
    """On NFS flock on a folder fails with EBADF, which read as 'being written by another
    run': every run there was refused. Only a lock another holds refuses now."""
    import errno

    import coplug.formulations.bbo.evolve as evolve_module
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.EBADF, "Bad file descriptor")

    monkeypatch.setattr(evolve_module.fcntl, "flock", no_locks)
    config = EvolutionConfig(population=4, generations=1, budget=20, seeds=3, seed=1,
                             targets=(1,))
    evolve(config, run_dir=tmp_path / "run")
    assert (tmp_path / "run" / "history.json").is_file()


@pytest.mark.parametrize("solver, tolerance", [("scip", 0.25 - 1e-7), ("highs", 0.25 - 1e-8),
                                               ("scip", 0.25)])
@pytest.mark.parametrize("objective", ["ratio_cut", "cut"])
def test_fair_clustering_meets_a_tolerance_just_below_a_share(solver: str, tolerance: float,
                                                             objective: str) -> None:
    """Two K4s joined by an edge, the halves 3:1 in groups (deviation 0.25): at a tolerance
    1e-7 below 0.25 the solvers' row tolerance passed the halves as fair ('optimal' ratio
    cut 0.5); the best fair partition is checked against brute force over every split."""
    import itertools

    import networkx as nx
    import numpy as np

    from coplug.formulations.fair_clustering_mip import (
        fair_clustering_mip,
        mip_labels,
        mip_objective,
    )
    from coplug.formulations.fair_metrics import proportion_deviation

    graph = nx.disjoint_union(nx.complete_graph(4), nx.complete_graph(4))
    graph.add_edge(0, 4)
    groups = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    m = fair_clustering_mip(graph, groups, 2, objective=objective, tolerance=tolerance)
    solve(m, solver=solver)
    labels = mip_labels(m)
    assert proportion_deviation(labels, groups) <= tolerance
    best = min(mip_objective(m, np.array(split)) for split in itertools.product((0, 1), repeat=8)
               if 0 < sum(split) < 8
               and proportion_deviation(np.array(split), groups) <= tolerance)
    assert mip_objective(m, labels) == pytest.approx(best)


@pytest.mark.parametrize("scale", [1.0, 1e-9, 1e-12])
def test_a_directed_adjacency_is_refused_at_any_scale(scale: float) -> None:
    """Weights of 1e-9 passed the symmetry check (its tolerance had a floor of 1), and the
    spectral methods clustered a directed graph as undirected."""
    import numpy as np

    from coplug.learned.fair_spectral import FairSpectralClustering
    from coplug.plugins.errors import InputError

    a = np.triu(np.ones((6, 6)), k=1) * scale
    with pytest.raises(InputError, match="not symmetric"):
        FairSpectralClustering(2, [0, 1] * 3).fit(a)
    sym = (a + a.T) * (1 + 1e-13)
    FairSpectralClustering(2, [0, 1] * 3).fit(sym)


@pytest.mark.parametrize("argument", ["n_clusters", "tol", "rho"])
def test_integers_past_float_range_are_named(argument: str) -> None:
    """10**400 as n_clusters, tol or rho raised numpy's TypeError from isfinite."""
    import networkx as nx

    from coplug.formulations.fair_clustering_mip import fair_clustering_mip
    from coplug.learned.fair_spectral import FairSpectralClustering
    from coplug.plugins.errors import InputError

    a, groups = nx.to_numpy_array(nx.cycle_graph(6)), [0, 1] * 3
    with pytest.raises(InputError, match=f"{argument} must be"):
        if argument == "n_clusters":
            fair_clustering_mip(a, groups, 10**400)
        else:
            FairSpectralClustering(2, groups, **{argument: 10**400}).fit(a)


def test_a_zero_product_in_a_let_keeps_the_nl_export_exact(tmp_path) -> None:
    """t = 3 (x + 0 |x|); t**2 + cos(2t): Pyomo's .nl writer dropped the 3 inside the cos
    (2.79 for 1.26 at x = 0.5; BBOB f4 was 3% off). The .nl file, read and solved by SCIP at
    x fixed, gives the program's value."""
    import numpy as np
    import pyscipopt

    from coplug.formulations.bbo import load, numpy_evaluator
    from coplug.formulations.bbo.export import write_program

    program = load("t = 3.0 * (x[0] + 0.0 * abs(x[0]))\nt ** 2.0 + cos(2.0 * t)", 1, -1.0, 1.0)
    path = tmp_path / "p.nl"
    write_program(program, path)
    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(str(path))
    x = next(v for v in scip.getVars() if v.name == "x[0]")
    scip.chgVarLb(x, 0.5)
    scip.chgVarUb(x, 0.5)
    scip.optimize()
    expected = float(numpy_evaluator(program)(np.array([[0.5]]))[0])
    assert scip.getObjVal() == pytest.approx(expected, rel=1e-9)


def test_the_baron_export_keeps_base_and_exponent_apart(tmp_path) -> None:
    """x[0] ** x[1] was written exp(x_0_ * log(x_1_)): x[1] ** x[0]."""
    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.export import write_program

    path = tmp_path / "p.bar"
    write_program(load("x[0] ** x[1]", 2, 1.0, 2.0), path)
    objective = next(line for line in path.read_text().splitlines() if line.startswith("OBJ"))
    assert "exp(x_1_*log(x_0_))" in objective.replace(" ", "")


@pytest.mark.parametrize("text, dim, lower, upper", [("x[0] ** x[1]", 2, 1.0, 2.0),
                                                     ("t0 = 0.5\nt0 ** x[0]", 1, -5.0, 5.0)])
def test_scripts_of_powers_with_variable_exponents(tmp_path, text: str, dim: int,
                                                   lower: float, upper: float) -> None:
    """Exporting these as a Pyomo script raised IndexError (the script's algebra bound an
    auxiliary variable the model had not); the script's model gives the program's value."""
    import runpy

    import numpy as np
    import pyomo.environ as pyo

    from coplug.formulations.bbo import load, numpy_evaluator
    from coplug.formulations.bbo.export import write_program
    from coplug.formulations.bbo.pyomo_model import set_point

    program = load(text, dim, lower, upper)
    path = tmp_path / "p.py"
    write_program(program, path)
    model = runpy.run_path(str(path), run_name="not_main")["build"]()
    point = np.full(dim, 0.5 * (lower + upper) + 0.3)
    set_point(model, point)
    expected = float(numpy_evaluator(program)(point[None, :])[0])
    assert pyo.value(model.obj) == pytest.approx(expected, rel=1e-9)


def test_a_program_at_its_domain_edge_is_certified_and_named() -> None:
    """sqrt(x / 49 - 1) on [49, 60]: numpy gives 0 at x = 49, Pyomo (x * (1 / 49)) a
    domain error, which came raw out of `coplug bbo solve` through its start point; the
    start is dropped, and the Pyomo form's failure is named."""
    import numpy as np

    from coplug.formulations.bbo import load, to_pyomo
    from coplug.formulations.bbo.certify import certify
    from coplug.formulations.bbo.pyomo_model import pyomo_objective_at
    from coplug.plugins.errors import InputError

    program = load("sqrt(x[0] / 49.0 - 1.0) ** (x[0] / 40.0)", 1, 49.0, 60.0)
    found = certify(program, time_limit=30)
    assert found.certified and found.objective == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(InputError, match="cannot be evaluated at this point"):
        pyomo_objective_at(to_pyomo(load("sqrt(x[0] / 49.0 - 1.0)", 1, 49.0, 60.0)),
                           np.array([49.0]))


def test_a_refused_start_of_a_run_directory_stays_refused(tmp_path) -> None:
    """After a start refused for another run's files, a retry on the same writer passed
    (its released lock read as held) and deleted that run's history."""
    from coplug.formulations.bbo.evolve import EvolutionConfig, RunWriter, evolve
    from coplug.plugins.errors import InputError

    config = EvolutionConfig(population=4, generations=1, budget=20, seeds=3, seed=1,
                             targets=(1,))
    run_dir = tmp_path / "run"
    late = RunWriter(run_dir)
    evolve(config, run_dir=run_dir)
    result = evolve(config)
    for _ in range(2):
        with pytest.raises(InputError, match="another run wrote there"):
            late.write(result, config, "symbolic", finished=False)
    assert (run_dir / "history.json").is_file()
