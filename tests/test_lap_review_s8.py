"""Eighth-session review fixes on the LAP path and the model checks every backend shares:
big-M warm starts, components a backend would ignore, file names and encodings, fixed
variables without a value, equivalent row forms, switches and the constraint graph."""

from __future__ import annotations

import itertools
import json
import math

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.gdp import Disjunct, Disjunction
from scipy.optimize import linear_sum_assignment

from coplug.formulations import assignment
from coplug.formulations.assignment import assignment_model, generate, load_costs
from coplug.learned.rowdualnet import load
from coplug.plugins import InputError, Status, UnsupportedModelError, solve
from coplug.plugins.cli import main
from coplug.plugins.lap import bipartite, solve_lap

C3 = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])


def _exact_cost(c: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> float:
    """The assignment's cost summed exactly (big-M entries swamp a plain float sum)."""
    return math.fsum(np.asarray(c, dtype=np.float64)[rows, cols])


def _big_m_costs(n: int = 300, seed: int = 1, big: float = 1e15) -> np.ndarray:
    """Integer costs 0..100 with four forced pairs at -big: every sum is exact in float64."""
    base = generate("low_rank", n, seed=seed)
    c = np.round(base * 100 / base.max())
    for t in range(4):
        c[10 * t, 7 * t + 3] = -big
    return c


def test_learned_warm_start_is_exact_next_to_big_m_entries() -> None:
    """A tight-edge tolerance relative to max|c| (about 14 here) kept edges 0..100 off tight:
    the warm answer was 23 above the optimum, certified. Now per entry."""
    c = _big_m_costs()
    r, k = linear_sum_assignment(c)
    best = _exact_cost(c, r, k)
    warm = solve_lap(c, predictor=load())
    assert warm.info["prediction"] == "used"
    assert _exact_cost(c, warm.row_ind, warm.col_ind) == best
    result = solve(assignment_model(c), solver="lap", warm=True)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(best, abs=0.5)


@pytest.mark.parametrize("big", [1e9, 1e12])
def test_warm_start_is_exact_on_real_costs_with_big_m(big: float) -> None:
    for seed in range(3):
        rng = np.random.default_rng(seed)
        c = generate(("uniform", "low_rank", "transport")[seed], 160, seed=seed)
        for _ in range(4):
            c[rng.integers(0, 160), rng.integers(0, 160)] = -big
        r, k = linear_sum_assignment(c)
        warm = solve_lap(c, predictor=load())
        assert _exact_cost(c, warm.row_ind, warm.col_ind) == _exact_cost(c, r, k)


def test_cli_check_reports_the_exact_difference(tmp_path, capsys) -> None:
    path = tmp_path / "bigm.npy"
    np.save(path, _big_m_costs(60))
    assert main(["lap", str(path), "--warm", "--check", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["matches_scipy"] and report["gap_to_scipy"] == 0.0


def _with_sos() -> pyo.ConcreteModel:
    m = assignment_model(C3)
    m.S = pyo.Set(initialize=[(0, 1), (1, 0)], dimen=2)
    m.sos = pyo.SOSConstraint(rule=lambda b: ([b.x[p] for p in b.S], [1, 2]), sos=1)
    return m


def _with_logical() -> pyo.ConcreteModel:
    m = assignment_model(C3)
    m.Y = pyo.BooleanVar()
    m.Y.associate_binary_var(m.x[0, 1])
    m.no = pyo.LogicalConstraint(expr=~m.Y)
    return m


def _with_disjunction() -> pyo.ConcreteModel:
    m = assignment_model(C3)
    m.d1 = Disjunct()
    m.d1.c = pyo.Constraint(expr=m.x[0, 1] == 0)
    m.d2 = Disjunct()
    m.d2.c = pyo.Constraint(expr=m.x[0, 1] == 0)
    m.dj = Disjunction(expr=[m.d1, m.d2])
    return m


def _best_without_pair_01() -> float:
    """Brute force over the 3! assignments avoiding x[0,1] = 1 (what every side rule forces)."""
    return min(sum(C3[i, p[i]] for i in range(3))
               for p in itertools.permutations(range(3)) if p[0] != 1)


@pytest.mark.parametrize(("build", "kind"), [(_with_sos, "SOSConstraint"),
                                             (_with_logical, "LogicalConstraint"),
                                             (_with_disjunction, "Disjunct")])
@pytest.mark.parametrize("solver", ["lap", "highs"])
def test_components_a_backend_would_ignore_are_refused(build, kind: str, solver: str) -> None:
    """HiGHS called the logical and disjunctive models optimal at 5 and lap all three: both
    solved the plain assignment, x[0,1] = 1, as if the component were not there."""
    with pytest.raises(UnsupportedModelError, match=rf"'\w+' \({kind}\).*{solver}"):
        solve(build(), solver=solver)


def test_scip_takes_sos_and_transformed_models_agree() -> None:
    assert solve(_with_sos(), solver="scip").objective == pytest.approx(_best_without_pair_01())
    with pytest.raises(UnsupportedModelError, match="logical_to_linear"):
        solve(_with_logical(), solver="scip")
    m = _with_disjunction()
    pyo.TransformationFactory("gdp.bigm").apply_to(m)
    assert solve(m, solver="highs").objective == pytest.approx(_best_without_pair_01())
    m = _with_logical()
    pyo.TransformationFactory("core.logical_to_linear").apply_to(m)
    assert solve(m, solver="highs").objective == pytest.approx(_best_without_pair_01())


@pytest.mark.parametrize("solver", ["scip", "highs", "lap"])
def test_a_variable_fixed_without_value_is_named(solver: str) -> None:
    m = assignment_model(C3)
    m.x[0, 1].fixed = True
    with pytest.raises(InputError, match=r"'x\[0,1\]' is fixed but has no value"):
        solve(m, solver=solver)


def test_only_assignp_files_are_read_as_or_library(tmp_path) -> None:
    """assignment_costs.txt holding a 2x5 matrix was re-read as 3x3 (first entry as n)."""
    path = tmp_path / "assignment_costs.txt"
    path.write_text("3 1 2 5 4\n6 7 8 2 1\n")
    assert load_costs(path).shape == (2, 5)
    orlib = tmp_path / "assignp_bad.txt"
    orlib.write_text("4\n1 3\n2 0 5\n3 2 2\n")  # n alone on its line: OR-Library's form
    with pytest.raises(InputError, match="OR-Library.*expected 4x4"):
        load_costs(orlib)
    orlib.write_text("4 1 3\n2 0 5\n3 2 2\n")  # a matrix under that name stays one
    assert np.array_equal(load_costs(orlib), [[4, 1, 3], [2, 0, 5], [3, 2, 2]])


def test_spreadsheet_csv_with_byte_order_mark_and_npz_archives(tmp_path) -> None:
    csv = tmp_path / "excel.csv"
    csv.write_bytes("\ufeff4,1,3\n2,0,5\n3,2,2\n".encode())
    assert np.array_equal(load_costs(csv), C3)
    npz = tmp_path / "costs.npy"
    with open(npz, "wb") as fh:
        np.savez(fh, a=C3)
    with pytest.raises(InputError, match=r"\.npz archive \(arrays \['a'\]\)"):
        load_costs(npz)


@pytest.mark.parametrize("form", ["negated", "moved"])
def test_equivalent_row_forms_are_assignments(form: str) -> None:
    m = assignment_model(C3)
    for i in m.I:
        s = sum(m.x[i, j] for j in m.J)
        m.row[i].set_value(-s == -1 if form == "negated" else 1 - s == 0)
    lap = solve(m, solver="lap")
    assert lap.objective == pytest.approx(solve(assignment_model(C3), solver="highs").objective)
    assert all(abs(pyo.value(m.row[i].body) - pyo.value(m.row[i].upper)) < 1e-9 for i in m.I)


def test_negated_inequality_rows_keep_their_sense() -> None:
    """-sum(x) >= -1 is sum(x) <= 1: with == columns over more rows, each column is filled."""
    c = generate("uniform", 3, m=4, seed=2).T
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), range(3), domain=pyo.Binary)
    m.row = pyo.Constraint(range(4), rule=lambda b, i: -sum(b.x[i, j] for j in range(3)) >= -1)
    m.col = pyo.Constraint(range(3), rule=lambda b, j: sum(b.x[i, j] for i in range(4)) == 1)
    m.cost = pyo.Objective(expr=sum(c[i, j] * m.x[i, j] for i in range(4) for j in range(3)))
    r, k = linear_sum_assignment(c)
    assert solve(m, solver="lap").objective == pytest.approx(c[r, k].sum())


def test_a_model_without_objective_is_a_feasibility_problem_on_lap() -> None:
    m = assignment_model(C3)
    m.cost.deactivate()
    result = solve(m, solver="lap")
    assert result.status is Status.OPTIMAL and result.objective is None
    assert all(abs(pyo.value(m.col[j].body) - 1) < 1e-9 for j in m.J)


def test_lap_skips_the_tiny_objective_warning_that_highs_gets() -> None:
    c = C3 * 1e-9
    with pytest.warns(UserWarning, match="absolute tolerances"):
        solve(assignment_model(c), solver="highs")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = solve(assignment_model(c), solver="lap")
    r, k = linear_sum_assignment(c)
    assert result.objective == pytest.approx(c[r, k].sum(), rel=1e-12)


def test_boolean_switches_must_be_booleans() -> None:
    with pytest.raises(InputError, match="maximize must be True or False, got 'no'"):
        solve_lap(C3, maximize="no")
    with pytest.raises(InputError, match="warm must be True or False, got 'no'"):
        solve(assignment_model(C3), solver="lap", warm="no")
    assert solve_lap(C3, maximize=np.bool_(True)).cost == pytest.approx(
        C3[linear_sum_assignment(C3, maximize=True)].sum())


@pytest.mark.parametrize("bad", [np.array([["a", "b"], ["c", "d"]]), C3.astype(complex),
                                 np.array([[1, None], [2, 3]], dtype=object)])
def test_rowdualnet_names_bad_dtypes(bad: np.ndarray) -> None:
    with pytest.raises(InputError, match="cost matrix must be"):
        load().predict_duals(bad)


def test_rowdualnet_refuses_sparse_costs() -> None:
    import scipy.sparse as sp

    with pytest.raises(InputError, match="dense cost matrix"):
        load().predict_duals(sp.csr_matrix(C3))


def test_out_of_memory_is_one_line(monkeypatch, capsys) -> None:
    def huge(*_args, **_kwargs):
        raise MemoryError("Unable to allocate 298. GiB")

    monkeypatch.setattr(assignment, "generate", huge)
    assert main(["lap", "--generator", "uniform", "--n", "200000"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out of memory" in err[0] and "298. GiB" in err[0]


@pytest.mark.parametrize("seed", range(8))
def test_bipartite_split_agrees_with_networkx(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    ends = rng.integers(0, n, size=(int(rng.integers(0, 40)), 2))
    ends = ends[ends[:, 0] != ends[:, 1]]
    if seed % 2:  # a random bipartite multigraph: even nodes to odd nodes
        ends[:, 0] -= ends[:, 0] % 2
        ends[:, 1] -= ends[:, 1] % 2 - 1
        ends = ends[ends[:, 1] < n]
    graph = nx.MultiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(ends.tolist())
    parts = bipartite.split(n, ends)
    expected = sorted((c for c in nx.connected_components(graph) if len(c) > 1), key=min)
    assert [set(p.nodes) for p in parts] == expected
    for part in parts:
        sub = graph.subgraph(part.nodes)
        assert part.bipartite == nx.is_bipartite(sub)
        assert sorted(part.side_a + part.side_b) == part.nodes
        inside = ends[part.edges]
        assert set(inside.ravel().tolist()) <= set(part.nodes)
        if part.bipartite:
            a = set(part.side_a)
            assert all((u in a) != (v in a) for u, v in inside.tolist())
    assert sum(len(p.edges) for p in parts) == len(ends)


def _cover_rows(n_rows: int, n_cols: int) -> pyo.ConcreteModel:
    """sum(x) >= 1 rows and sum(x) == 1 columns over a random cost matrix."""
    c = np.random.default_rng(n_rows * 10 + n_cols).random((n_rows, n_cols))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n_rows), range(n_cols), domain=pyo.Binary)
    m.row = pyo.Constraint(range(n_rows),
                           rule=lambda b, i: sum(b.x[i, j] for j in range(n_cols)) >= 1)
    m.col = pyo.Constraint(range(n_cols),
                           rule=lambda b, j: sum(b.x[i, j] for i in range(n_rows)) == 1)
    m.cost = pyo.Objective(expr=sum(c[i, j] * m.x[i, j]
                                    for i in range(n_rows) for j in range(n_cols)))
    return m


def test_cover_rows_beside_as_many_equal_columns_are_an_assignment() -> None:
    m = _cover_rows(5, 5)
    lap = solve(m, solver="lap")
    assert lap.objective == pytest.approx(solve(_cover_rows(5, 5), solver="highs").objective)
    assert all(abs(pyo.value(m.row[i].body) - 1) < 1e-9 for i in range(5))


def test_cover_rows_that_could_take_two_columns_are_refused() -> None:
    """3 >= rows beside 5 == columns: a row may take two columns, not an assignment."""
    with pytest.raises(UnsupportedModelError, match="need as many sum\\(x\\) == 1"):
        solve(_cover_rows(3, 5), solver="lap")
    assert solve(_cover_rows(3, 5), solver="highs").status is Status.OPTIMAL


def _network(expand: bool) -> pyo.ConcreteModel:
    """Two blocks joined by an Arc between Ports (x_a == x_b once expanded): min x_a - 2 x_b."""
    from pyomo.network import Arc, Port

    m = pyo.ConcreteModel()
    m.a, m.b = pyo.Block(), pyo.Block()
    m.a.x = pyo.Var(bounds=(0, 5))
    m.b.x = pyo.Var(bounds=(0, 3))
    m.a.p = Port(initialize={"x": m.a.x})
    m.b.p = Port(initialize={"x": m.b.x})
    m.arc = Arc(source=m.a.p, destination=m.b.p)
    m.o = pyo.Objective(expr=m.a.x - 2 * m.b.x)
    if expand:
        pyo.TransformationFactory("network.expand_arcs").apply_to(m)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_ports_are_read_and_an_unexpanded_arc_is_named(solver: str) -> None:
    """Ports only group variables; the expanded Arc is a constraint (x_a = x_b = 3: -3)."""
    assert solve(_network(True), solver=solver).objective == pytest.approx(-3.0)
    with pytest.raises(UnsupportedModelError, match="'arc' \\(Arc\\).*network.expand_arcs"):
        solve(_network(False), solver=solver)


def _logical_base() -> pyo.ConcreteModel:
    """min b1 + b2 over binaries tied to Boolean y1, y2."""
    m = pyo.ConcreteModel()
    m.y = pyo.BooleanVar([1, 2])
    m.b = pyo.Var([1, 2], domain=pyo.Binary)
    for i in (1, 2):
        m.y[i].associate_binary_var(m.b[i])
    m.o = pyo.Objective(expr=m.b[1] + m.b[2])
    return m


def test_containers_whose_entries_are_all_inactive_restrict_nothing() -> None:
    """The check read the container's flag: a Reference to transformed logical constraints,
    or an indexed one with every entry deactivated, was refused."""
    m = _logical_base()
    m.l = pyo.LogicalConstraint([1], rule=lambda m, i: pyo.lor(m.y[1], m.y[2]))
    pyo.TransformationFactory("core.logical_to_linear").apply_to(m)
    m.lr = pyo.Reference(m.l)
    assert solve(m, solver="highs").objective == pytest.approx(1.0)
    m = _logical_base()
    m.l = pyo.LogicalConstraint([1, 2], rule=lambda m, i: pyo.lor(m.y[1], m.y[2]))
    m.l[1].deactivate()
    with pytest.raises(UnsupportedModelError, match="'l' \\(LogicalConstraint\\)"):
        solve(m, solver="highs")  # one entry still active
    m.l[2].deactivate()
    assert solve(m, solver="highs").objective == pytest.approx(0.0)


def test_a_fixed_variable_without_value_that_nothing_reads_is_fine() -> None:
    m = assignment_model(C3)
    m.unused = pyo.Var()
    m.unused.fixed = True
    assert solve(m, solver="highs").objective == pytest.approx(5.0)
    m.side = pyo.Block()
    m.side.z = pyo.Var()
    m.side.z.fixed = True
    m.side.c = pyo.Constraint(expr=m.side.z + m.x[0, 0] <= 3)
    m.side.deactivate()
    assert solve(m, solver="scip").objective == pytest.approx(5.0)


def test_hundreds_of_variables_for_one_pair_are_still_an_assignment() -> None:
    """256 variables between the same two constraints summed to 0 in an int8 adjacency."""
    m = pyo.ConcreteModel()
    m.K = pyo.RangeSet(0, 255)
    m.x = pyo.Var(m.K, domain=pyo.Binary)
    m.row = pyo.Constraint(expr=sum(m.x[i] for i in m.K) == 1)
    m.col = pyo.Constraint(expr=sum(m.x[i] for i in m.K) == 1)
    m.o = pyo.Objective(expr=sum((i % 7 + 1) * m.x[i] for i in m.K))
    assert solve(m, solver="lap").objective == pytest.approx(1.0)
