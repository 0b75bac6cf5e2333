"""Session 43: large MPS sections checked a chunk of lines at a time."""

from __future__ import annotations

import itertools
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from coplug.plugins import InputError, mps_text
from coplug.plugins.file_reading import checked_text
from coplug.plugins.files import solve_file


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of about one line, so every check crosses chunk ends."""
    monkeypatch.setattr(mps_text, "ODD_LINE_CHUNK", 4)
    monkeypatch.setattr(mps_text, "PLAIN_CHUNK", 4)


def _mps(columns: str, rhs: str) -> str:
    """max x + y + z, x <= c1's side, y <= c2's side, z <= c3's side."""
    return ("NAME P\nOBJSENSE\n    MAX\nROWS\n N obj\n L c1\n L c2\n L c3\nCOLUMNS\n"
            f"{columns}RHS\n{rhs}BOUNDS\n UP BND x 10\n UP BND y 10\n UP BND z 10\nENDATA\n")


_COLUMNS = "    x obj 1 c1 1\n    y obj 1 c2 1\n    z obj 1 c3 1\n"


@pytest.mark.usefixtures("tiny_chunks")
@pytest.mark.parametrize("columns, rhs, refused", [
    (_COLUMNS, "    RHS c1 4\n    RHS c2 3\n    R2 c3 1\n", r"P.mps:16: a second RHS set"),
    (_COLUMNS, "    RHS c1 4\n    RHS c2 1D2\n    RHS c3 1\n", r"P.mps:15: the RHS of 'c2'"),
    ("    x obj 1 c1 1\n    y obj 1\n    y c2 1 c3\n    z obj 1 c3 1\n",
     "    RHS c1 4\n", r"P.mps:12: the COLUMNS line 'y c2 1 c3' is no"),
])
def test_a_fault_past_the_first_chunk_is_named_at_its_line(tmp_path: Path, columns: str,
                                                          rhs: str, refused: str) -> None:
    path = tmp_path / "P.mps"
    path.write_text(_mps(columns, rhs))
    with pytest.raises(InputError, match=refused):
        checked_text(path)


@pytest.mark.usefixtures("tiny_chunks")
@pytest.mark.parametrize("rhs, optimum", [
    ("    RHS c1 4 c2 3\n    RHS c3 2\n", 9.0),  # the short line last
    ("    RHS c1 4\n    RHS c2 3 c3 2\n", 9.0),
    ("    RHS c3 2\n    RHS c1 4 c2 3\n", 9.0),  # the short line first: line by line
])
def test_lines_of_pairs_across_chunks_still_solve(tmp_path: Path, rhs: str,
                                                  optimum: float) -> None:
    path = tmp_path / "P.mps"
    path.write_text(_mps(_COLUMNS, rhs))
    for solver in ("scip", "highs"):
        assert solve_file(path, solver=solver).objective == pytest.approx(optimum)


def test_checking_a_large_mps_file_holds_little_beside_its_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The COLUMNS field counts and the BOUNDS words over whole sections had peaked at 4.5
    times a 97 MB file's size in Python memory (numpy arrays, a list of every word)."""
    monkeypatch.setattr(mps_text, "ODD_LINE_CHUNK", 1 << 16)
    monkeypatch.setattr(mps_text, "PLAIN_CHUNK", 1 << 14)
    n = 20_000
    columns = "".join(f"    x{j} obj -1 c{j % 500} 1.5\n    x{j} c{(j + 1) % 500} 2.5\n"
                      for j in range(n))
    path = tmp_path / "big.mps"
    path.write_text("NAME big\nROWS\n N obj\n" + "".join(f" L c{i}\n" for i in range(500))
                    + f"COLUMNS\n{columns}RHS\n"
                    + "".join(f"    RHS c{i} {i % 7 + 1}\n" for i in range(500))
                    + "BOUNDS\n" + "".join(f" UP BND x{j} 1\n" for j in range(n)) + "ENDATA\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        text = checked_text(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(text) == size
    assert peak < 1.6 * size, f"peak {peak / size:.1f} times the file"


@pytest.mark.parametrize("coefficient", ["1e-30", "1E-10", "9e-9", "0.000000001", ".0000000001",
                                         "0.1e-8", ".1e-8", "0.01e-7", "0.0000001e-2",
                                         "0e-30", "0.0e5"])
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_term_after_a_tiny_coefficient_needs_a_sign(tmp_path: Path, coefficient: str,
                                                     solver: str) -> None:
    """SCIP's LP reader counts 1e-9 and less as zero and took `1e-30 y x` for x, as it took
    `0 y x` (HiGHS's refuses the row): 'optimal' 7 from a row it read otherwise."""
    path = tmp_path / "t.lp"
    path.write_text(f"Maximize\n obj: x + y\nSubject To\n c1: {coefficient} y x <= 4\n"
                    " c2: y <= 3\nBounds\n x <= 10\n y <= 10\nEnd\n")
    with pytest.raises(InputError, match=rf"t.lp:4: 'c1: {re.escape(coefficient)} y x <= 4': "
                                         "a term follows another without a sign"):
        solve_file(path, solver=solver)


@pytest.mark.parametrize("row, optimum", [
    ("c1: 1e-05 y + x <= 4", 7 - 3e-5), ("c1: x2e-9 y + x <= 4", 13.0),
    ("c1: 0.00000001 y + x <= 4", 7 - 3e-8), ("c1: x + 2e-10 y <= 4", 7.0),
])
def test_tiny_coefficients_with_their_signs_still_solve(tmp_path: Path, row: str,
                                                        optimum: float) -> None:
    """`x2e-9 y` is x2e minus 9 y (both readers read it so: x up to 10)."""
    path = tmp_path / "t.lp"
    path.write_text(f"Maximize\n obj: x + y\nSubject To\n {row}\n c2: y <= 3\nBounds\n"
                    " x <= 10\n y <= 10\n x2e <= 3\nEnd\n")
    for solver in ("scip", "highs"):
        assert solve_file(path, solver=solver).objective == pytest.approx(optimum, abs=1e-7)


@pytest.mark.parametrize("method", ["adam", "pgd"])
def test_an_item_heavier_than_the_capacity_leaves_the_safe_qubo_as_it_was(method: str) -> None:
    """Its value (100 next to fitting ones up to 6) had set the penalties and the diagonal:
    every Adam start ended at the empty knapsack, 'certified', where SCIP finds 11."""
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_mip, knapsack_qubo_safe
    from coplug.formulations.qubo_solvers import minimize
    from coplug.plugins import solve

    heavy = KnapsackInstance(np.array([100.0, 6, 5, 4]), np.array([20, 3, 2, 2]), 6)
    light = KnapsackInstance(np.array([6.0, 5, 4]), np.array([3, 2, 2]), 6)
    with_heavy, without = knapsack_qubo_safe(heavy), knapsack_qubo_safe(light)
    assert with_heavy.margin == without.margin
    assert np.array_equal(with_heavy.c, without.c)
    report = minimize(with_heavy, method=method, starts=16, seed=0)
    optimum = solve(knapsack_mip(heavy), solver="scip").objective
    assert optimum == pytest.approx(11.0)
    assert report.best_objective(-1) == pytest.approx(optimum)


def _knapsack(values: list[float], weights: list[int], capacity: int):
    from coplug.formulations.knapsack import KnapsackInstance

    return KnapsackInstance(np.array(values, dtype=float), np.array(weights), capacity)


def _assert_every_infeasible_point_has_a_flip_worth_the_margin(instance) -> None:
    """C2 on every binary point of the safe QUBO of `instance` (which must allow one)."""
    from coplug.formulations.knapsack import knapsack_qubo_safe

    q = knapsack_qubo_safe(instance)
    assert q.n <= 14 and (q.diagonal() < 0).all()
    infeasible = 0
    for z in map(np.array, itertools.product((0.0, 1.0), repeat=q.n)):
        x = q.decode(z)
        if instance.is_feasible(x) and q.energy(z) == pytest.approx(-instance.value(x)):
            continue
        infeasible += 1
        assert q.flip_deltas(z).min() <= -q.margin + 1e-9, z
    assert infeasible > 0


@pytest.mark.parametrize("seed", range(12))
def test_every_infeasible_point_of_the_safe_qubo_has_a_flip_worth_its_margin(seed: int) -> None:
    """C2 checked on every binary point: the margin now counts only the values a conflict
    can force out (an item of weight 0, C or more than C conflicts with nothing of its
    own), so it is checked where such items are worth the most."""
    rng = np.random.default_rng(seed)
    capacity = 3
    weights = [0, capacity, capacity + 1, *rng.integers(1, capacity, size=2).tolist()]
    values = rng.integers(1, 200, size=len(weights)).astype(float).tolist()
    _assert_every_infeasible_point_has_a_flip_worth_the_margin(
        _knapsack(values, weights, capacity))


def test_an_item_placed_twice_is_worth_its_own_value_in_the_margin() -> None:
    """Weight C - 1 has two placements that conflict: dropping one costs its 100."""
    _assert_every_infeasible_point_has_a_flip_worth_the_margin(_knapsack([100.0, 5], [2, 1], 3))


@pytest.mark.parametrize("weight", [0, 6, 7])
def test_an_item_without_conflicts_of_its_own_leaves_the_margin(weight: int) -> None:
    """Weight 0 (one placement, no slot), the whole capacity (one placement) or more (none):
    however much it is worth, the margin and penalties stay those of the other items."""
    from coplug.formulations.knapsack import knapsack_qubo_safe

    base = _knapsack([6.0, 5, 4], [3, 2, 2], 6)
    more = _knapsack([6.0, 5, 4, 1000.0], [3, 2, 2, weight], 6)
    assert knapsack_qubo_safe(more).margin == knapsack_qubo_safe(base).margin == 6.0


def test_two_items_filling_the_capacity_keep_the_cheaper_ones_value() -> None:
    """Two items of weight C conflict: the cheaper (90) is dropped, so the margin is 90."""
    from coplug.formulations.knapsack import knapsack_qubo_safe

    assert knapsack_qubo_safe(_knapsack([100.0, 90, 5], [6, 6, 2], 6)).margin == 90.0


def _every_vertex_minimizer_is_a_pit(block_model) -> bool:
    """Lemma 2 on every vertex of the safe open-pit QUBO: no flip lowers the energy there
    (gradient >= 0 at a 0, <= 0 at a 1) only at feasible pits."""
    from coplug.formulations.openpit import openpit_qubo_safe

    q = openpit_qubo_safe(block_model)
    vertices = np.array(list(itertools.product((0.0, 1.0), repeat=q.n)))
    gradients = vertices @ (q.dense_Q() + q.dense_Q().T) + q.c
    minimizers = (np.where(vertices == 0, gradients, -gradients) >= 0).all(axis=1)
    return all(block_model.is_feasible(z.astype(int)) for z in vertices[minimizers])


@pytest.mark.parametrize("seed", range(6))
def test_a_valuable_surface_block_leaves_the_open_pit_penalties(seed: int) -> None:
    """The safety argument drops blocks below the surface only; a surface block's value had
    set every penalty (worth 10,000, it was left unmined by 10 of 50 PGD ends). Checked:
    the penalties do not move, and every vertex local minimizer is still a pit."""
    from coplug.formulations.openpit import BlockModel, openpit_penalties

    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(0, 3, size=(3, 4)), 1)
    rich = values.copy()
    rich[0, rng.integers(4)] += 10_000
    assert np.array_equal(openpit_penalties(BlockModel(rich)),
                          openpit_penalties(BlockModel(values)))
    assert _every_vertex_minimizer_is_a_pit(BlockModel(rich))


def test_a_valuable_block_below_the_surface_still_sets_the_penalties() -> None:
    """Under costly surface blocks, a block at depth 1 worth 10,000 mined alone is an
    infeasible point whose only way out is dropping it: its value must set the penalties."""
    from coplug.formulations.openpit import BlockModel

    values = np.array([[-1000.0] * 4, [1.0, 10_000.0, -2.0, 1.0], [-1.0, 2.0, 3.0, -1.0]])
    assert _every_vertex_minimizer_is_a_pit(BlockModel(values))


@pytest.mark.parametrize("method", ["adam", "pgd"])
def test_the_safe_tsp_qubo_finds_the_same_tours_in_any_unit(method: str) -> None:
    """Distances under 1 had their penalties floored at 1 (tours at 1/1024 scale no better
    than random ones), and the solvers' curvature floor of 1e-12 stalled every start below
    about 1e-22: the same starts now end at the same tours at every scale."""
    from coplug.formulations.qubo_solvers import minimize
    from coplug.formulations.tsp import random_euclidean, tour_length, tsp_qubo_safe

    dist = random_euclidean(7, seed=0).dist
    tours = []
    for scale in (1.0, 1 / 1024, 1e-40):
        report = minimize(tsp_qubo_safe(dist * scale), method=method, starts=6, seed=0)
        assert report.fraction_ok == 1.0
        lengths = [c.objective / scale for c in report.certificates]
        assert lengths == pytest.approx([tour_length(dist, t) for t in map(
            tsp_qubo_safe(dist).decode, report.points)], rel=1e-9)
        tours.append([tuple(tsp_qubo_safe(dist).decode(z)) for z in report.points])
    assert tours[0] == tours[1] == tours[2]


def test_the_safe_knapsack_and_open_pit_qubos_search_alike_in_any_unit() -> None:
    """v+ was floored at 1: values below 1 ended at the empty knapsack more often."""
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe, random_knapsack
    from coplug.formulations.openpit import BlockModel, openpit_qubo_safe, random_block_model
    from coplug.formulations.qubo_solvers import minimize

    knapsack, pit = random_knapsack(10, seed=3, r=10), random_block_model(60, seed=0)
    for build in (lambda s: knapsack_qubo_safe(KnapsackInstance(
                      knapsack.values * s, knapsack.weights, knapsack.capacity)),
                  lambda s: openpit_qubo_safe(BlockModel(pit.values * s))):
        found = []
        for scale in (1.0, 1e-3, 1e-30):
            report = minimize(build(scale), method="adam", starts=8, seed=0)
            assert report.fraction_ok == 1.0
            found.append([c.objective / scale for c in report.certificates])
        assert found[1] == pytest.approx(found[0]) and found[2] == pytest.approx(found[0])


def test_where_no_conflict_is_worth_anything_the_scale_comes_from_the_values() -> None:
    """Any positive v+ is safe there: the one chosen follows the values' unit."""
    from coplug.formulations.knapsack import knapsack_qubo_safe
    from coplug.formulations.openpit import BlockModel, openpit_penalties

    for scale in (1.0, 1e-3):
        free_only = _knapsack([0.0, 0.0, 5.0 * scale], [1, 2, 0], 3)
        assert knapsack_qubo_safe(free_only).margin == pytest.approx(5.0 * scale)
    _assert_every_infeasible_point_has_a_flip_worth_the_margin(
        _knapsack([0.0, 0.0, 5e-3], [1, 2, 0], 3))
    waste = np.array([[4.0, 1.0, 2.0], [-1.0, -3.0, -2.0]])
    assert openpit_penalties(BlockModel(waste * 1e-3)) == pytest.approx(
        openpit_penalties(BlockModel(waste)) * 1e-3)
    assert openpit_penalties(BlockModel(waste))[-1] == pytest.approx(2 * 4.0)


@pytest.mark.parametrize("mode", ["branch", "prefix", "start"])
@pytest.mark.parametrize("by_name", [False, True])
def test_pmvb_passes_over_a_probability_of_a_binary_the_solve_does_not_use(mode: str,
                                                                          by_name: bool) -> None:
    """Probabilities over every binary a model declares refused the solve over one that no
    row or objective uses (SCIP has no column for it); it is passed over, as a fixed one."""
    import pyomo.environ as pyo
    from pyomo.common.collections import ComponentMap

    from coplug.plugins import solve
    from coplug.plugins.pmvb import PMVBBranching
    from coplug.plugins.pmvb_prefix import solve_pmvb_prefix
    from coplug.plugins.pmvb_start import solve_pmvb_start

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=3 * m.x[0] + 4 * m.x[1] + 5 * m.x[2] + 6 * m.x[3] <= 10)
    m.o = pyo.Objective(expr=4 * m.x[0] + 5 * m.x[1] + 7 * m.x[2] + 8 * m.x[3],
                        sense=pyo.maximize)
    m.unused = pyo.Var(domain=pyo.Binary)
    m.b = pyo.Block()
    m.b.off = pyo.Var(domain=pyo.Binary)
    m.b.row = pyo.Constraint(expr=m.b.off <= 0)
    m.b.deactivate()
    variables = [*m.x.values(), m.unused, m.b.off]
    probs = ({v.name: 0.9 for v in variables} if by_name
             else ComponentMap((v, 0.9) for v in variables))
    if mode == "branch":
        result = solve(m, plugins=[PMVBBranching(probs)])
    else:
        result = (solve_pmvb_prefix if mode == "prefix" else solve_pmvb_start)(m, probs)
    assert result.objective == pytest.approx(solve(m, solver="scip").objective) == 13.0


@pytest.mark.parametrize("fid, dim", [(15, 120), (21, 100_000), (1, 100_000)])
def test_a_bbob_program_past_the_text_limit_names_the_dim_that_fits(fid: int, dim: int) -> None:
    """The limit was met inside the parser ('text has 626127 characters'), after a 5,000-D
    f15 had built 1.1 GB of text; the dim named loads."""
    from coplug.formulations.bbo import bbob_problem

    with pytest.raises(InputError, match=rf"BBOB f{fid} at dim {dim} is a .*, over the "
                                         r"program limit of 500,000 .*use a smaller dim "
                                         r"\(dim (\d+) fits\)") as caught:
        bbob_problem(fid, dim=dim)
    fits = int(re.search(r"\(dim (\d+) fits\)", str(caught.value)).group(1))
    assert fits < dim and bbob_problem(fid, dim=fits).program.dim == fits


@pytest.mark.parametrize("scale", [1e-13, 1e-15, 1e3])
def test_landscape_features_of_a_scaled_program_are_the_programs(scale: float) -> None:
    """The flat test and the basin search's improvement threshold were absolute (1e-12):
    f scaled by 1e-13 reached 95 basins for f's 2, by 1e-15 the flat vector."""
    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.features import as_box_function, ela_features

    text = "sum((x - [1.0, -2.0]) ** 2) + sin(3 * x[0]) + cos(2 * x[1])"
    base = ela_features(as_box_function(load(text, 2)), n=100)
    scaled = ela_features(as_box_function(load(f"{scale!r} * ({text}) + 3.0 * {scale!r}", 2)),
                          n=100)
    assert scaled == pytest.approx(base, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("text", ["x[0] ** (1.0 + x[1]) - x[0]",
                                  "y = x[0]\ny ** (1.0 + x[1]) - x[0]",
                                  "(1.0 * x[0]) ** (1.0 + x[1]) - x[0]"])
def test_a_bare_variable_base_under_an_exponent_of_at_least_1_is_shifted(text: str) -> None:
    """A variable as the base (a let of one too) skipped the base shift and was refused for
    SCIP, while the same power over 1.0 * x[0] solved: all three reach 1/sqrt(27) - 1/sqrt(3)
    at (1/sqrt(3), 2)."""
    from coplug.formulations.bbo import load, to_pyomo
    from coplug.plugins import solve

    result = solve(to_pyomo(load(text, 2, lower=0.0, upper=2.0)), solver="scip")
    assert result.objective == pytest.approx(27 ** -0.5 - 3 ** -0.5, abs=1e-6)


@pytest.mark.parametrize("key", ["x[01]", "x[ 1]", "x[1.0]", "x[", "]", "", "x[1:2]", "u[0]"])
def test_pmvb_refuses_a_name_that_is_not_a_variables_own(key: str) -> None:
    """`x[01]` finds the used x[1] in Pyomo but is not its name (it was passed over in
    silence, its probability lost); malformed names raised Pyomo's own errors."""
    import pyomo.environ as pyo

    from coplug.plugins import solve
    from coplug.plugins.pmvb import PMVBBranching

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 2)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    m.u = pyo.Var([0], domain=pyo.Binary)  # unused: its name is u[0], not u[00]
    key = "u[00]" if key == "u[0]" else key
    with pytest.raises(InputError, match=f"PMVB probability given for {re.escape(repr(key))}"):
        solve(m, plugins=[PMVBBranching({key: 0.9})])


def test_a_sub_block_solved_alone_passes_over_its_unused_variable_by_full_name() -> None:
    """Names were looked up relative to the solved block, so the variable's own name
    b.y[3] was refused and the relative y[3] passed over."""
    import pyomo.environ as pyo

    from coplug.plugins import solve
    from coplug.plugins.pmvb import PMVBBranching

    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.y = pyo.Var(range(4), domain=pyo.Binary)
    m.b.c = pyo.Constraint(expr=m.b.y[0] + m.b.y[1] + m.b.y[2] <= 2)
    m.b.o = pyo.Objective(expr=m.b.y[0] + 2 * m.b.y[1] + 3 * m.b.y[2], sense=pyo.maximize)
    m.b.y[2].fix(0)
    for block in (m, m.b):
        assert solve(block, plugins=[PMVBBranching({"b.y[0]": 0.9, "b.y[3]": 0.9})]
                     ).objective == pytest.approx(3.0)
        with pytest.raises(InputError, match="given for 'y\\[3\\]'"):
            solve(block, plugins=[PMVBBranching({"b.y[0]": 0.9, "y[3]": 0.9})])


def test_certify_counts_a_tiny_penalty_as_a_penalty() -> None:
    """A floor of 1 on certify's zero-penalty allowance let an item of value 1e-13 placed
    twice (penalty 2e-13) pass as a feasible packing."""
    from coplug.formulations.knapsack import knapsack_qubo_safe
    from coplug.formulations.qubo_solvers import certify

    q = knapsack_qubo_safe(_knapsack([1e-13, 1e-13], [1, 1], 2))
    twice = np.array([1.0 if name.startswith("y0@") else 0.0 for name in q.names])
    assert q.energy(twice) > -1e-13  # its penalty, 2e-13, outweighs the value
    assert not certify(q, twice).feasible


def test_a_qubo_without_curvature_still_steps_to_a_vertex() -> None:
    """The curvature floor fell back to 1.0 with no curvature at all: PGD left every start
    where it began on c = 1e-7 terms, and certify took z = 0.5 for a local minimum."""
    import scipy.sparse as sp

    from coplug.formulations.qubo import QUBO
    from coplug.formulations.qubo_solvers import certify, minimize

    q = QUBO(Q=sp.csr_matrix((3, 3)), c=np.array([1e-7, -1e-7, 2e-7]), constant=0.0,
             decode=np.round, is_feasible=lambda x: True, objective=lambda x: 0.0)
    assert not certify(q, np.full(3, 0.5)).local_min
    report = minimize(q, method="pgd", starts=4, seed=0)
    assert np.array_equal(report.points, np.tile([0.0, 1.0, 0.0], (4, 1)))


def test_a_constant_with_rounding_in_its_terms_is_flat() -> None:
    """(x + 100) ** 2 - x ** 2 - 200 x - 9990 is 10, off by 3.6e-12 in rounding: a flat test
    at 64 ulps read features and 97 basins out of the noise."""
    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.features import as_box_function, ela_features

    text = "(x[0] + 100.0) ** 2 - x[0] ** 2 - 200.0 * x[0] - 9990.0 + 0.0 * x[1]"
    assert ela_features(as_box_function(load(text, 2)), n=100).tolist() == [0, 0, 0, 1, 1, 1, 1]


def test_a_two_field_line_beside_a_four_field_one_is_no_pair_of_plain_lines(
        tmp_path: Path) -> None:
    """Counted over a chunk, ` RHS c2` and ` 4 RHS c3 1` made 6 words, two lines of 3, and
    passed as plain: SCIP solved a file HiGHS refuses."""
    path = tmp_path / "P.mps"
    path.write_text(_mps(_COLUMNS, "    RHS c1 4\n    RHS c2\n    4 RHS c3 1\n"))
    with pytest.raises(InputError, match=r"P.mps:15: the RHS line 'RHS c2' is no"):
        checked_text(path)


def test_values_far_apart_still_get_a_safe_knapsack_qubo() -> None:
    """A weight-0 item of 1e12 raises the margin's floor (40) past 2**32 times the 1e-9 a
    conflict can force out: the default margin was refused, telling the user (who passed
    none) to pass a smaller one; v+ now rises to the floor."""
    _assert_every_infeasible_point_has_a_flip_worth_the_margin(
        _knapsack([1e12, 1e-9, 1e-9], [0, 1, 1], 1))


@pytest.mark.parametrize("after", ["->0.1e-8", "->0", "->.1e-8"])
def test_a_tiny_coefficient_right_after_an_indicators_arrow_is_seen(tmp_path: Path,
                                                                     after: str) -> None:
    """With no space after `->`, the coefficient's look-behind passed over it: SCIP read
    `b = 1 ->0.1e-8 y x >= 1` as `b = 1 -> x >= 1`."""
    path = tmp_path / "t.lp"
    path.write_text(f"Minimize\n obj: x + y\nSubject To\n c1: b = 1 {after} y x >= 1\n"
                    "Bounds\n x <= 10\n y <= 10\nBinaries\n b\nEnd\n")
    with pytest.raises(InputError, match="a term follows another without a sign"):
        checked_text(path)


@pytest.mark.parametrize("form", ["safe", "naive"])
def test_the_tsp_qubo_count_is_each_forms_own(form: str) -> None:
    """The count held the safe form's diagonal for both: a naive QUBO of 42 stored nonzeros
    was refused at max_nonzeros=42 ('51 nonzeros')."""
    from coplug.formulations.tsp import (
        qubo_nonzeros,
        random_asymmetric,
        tsp_qubo_naive,
        tsp_qubo_safe,
    )

    build = tsp_qubo_safe if form == "safe" else tsp_qubo_naive
    for dist in (np.array([[0, 3, 4, 5], [3, 0, 2, 6], [4, 2, 0, 1], [5, 6, 1, 0]], float),
                 random_asymmetric(6, 2).dist, np.zeros((5, 5))):
        stored = build(dist).Q.nnz + build(dist).A.nnz
        assert qubo_nonzeros(dist, form) == stored
        assert build(dist, max_nonzeros=stored).n == (len(dist) - 1) ** 2
    with pytest.raises(InputError, match="form must be 'safe' or 'naive'"):
        qubo_nonzeros(np.zeros((4, 4)), "other")
