"""Session 39's probe findings, each checked to fail with its fix undone."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.lap import solve_lap


class _NormalisingPredictor:
    """Normalises the matrix it is handed in place (a plausible slip), duals all zero."""

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        c -= c.min(axis=1, keepdims=True)
        return np.zeros(c.shape[0])


class _ReadingPredictor:
    """Reads the matrix only: row minima as duals."""

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        return c.min(axis=1)


@pytest.mark.parametrize("maximize", [False, True])
def test_a_predictor_cannot_write_into_the_cost_matrix(maximize: bool) -> None:
    """It certified the altered costs (204 for 1205) and changed the caller's array."""
    c = generate("low_rank", 300, seed=0)
    original = c.copy()
    with pytest.raises(ValueError, match="read-only"):
        solve_lap(c, predictor=_NormalisingPredictor(), maximize=maximize)
    assert np.array_equal(c, original)
    solved = solve_lap(c, predictor=_ReadingPredictor(), maximize=maximize)
    assert solved.info["prediction"] == "used"
    rows, cols = linear_sum_assignment(original, maximize=maximize)
    assert solved.cost == pytest.approx(original[rows, cols].sum(), rel=1e-12)
    assert np.array_equal(c, original) and c.flags.writeable


_USER_CUTS = {
    "cut.lp": "Maximize\n obj: x + y\nSubject To\n c1: x + y <= 10\nUser Cuts\n u1: x <= 10\n"
              "Bounds\n x <= 50\n y <= 50\nEnd\n",
    "cut_comment.lp": "Maximize\n obj: x + y\nSubject To\n c1: x + y <= 10\n"
                      "User Cuts \\ valid ones\n u1: x <= 10\nBounds\n x <= 50\n y <= 50\nEnd\n",
    "lazy_cut.lp": "Maximize\n obj: x + y\nSubject To\n c1: x <= 50\nLazy Constraints\n"
                   " l1: x + y <= 10\nUser Cuts\n u1: x <= 10\nBounds\n y <= 50\nEnd\n",
}


@pytest.mark.parametrize("name", sorted(_USER_CUTS))
def test_rows_before_a_user_cuts_section_are_enforced(tmp_path, name: str) -> None:
    """SCIP's LP reader gave the row before `User Cuts` the cuts' flags: 'optimal' 100 (and
    25) at points breaking c1 (l1); the optimum is 10."""
    from coplug.plugins.files import solve_file

    path = tmp_path / name
    path.write_text(_USER_CUTS[name])
    result = solve_file(path, solver="scip")
    assert result.status.value == "optimal" and result.objective == pytest.approx(10.0)
    values = result.values
    assert values["x"] + values["y"] <= 10.0 + 1e-6


def test_indicator_slacks_are_not_reported_as_file_columns(tmp_path) -> None:
    """`indslack_c1`, the slack SCIP adds for an indicator row, joined the solution."""
    from coplug.plugins.files import solve_file

    path = tmp_path / "ind.lp"
    path.write_text("Maximize\n obj: x + b\nSubject To\n c1: b = 1 -> x <= 3\n c2: x <= 10\n"
                    "Binary\n b\nEnd\n")
    result = solve_file(path, solver="scip")
    assert result.objective == pytest.approx(10.0) and sorted(result.values) == ["b", "x"]


def test_the_mip_duals_warning_points_to_mip_duals_fixed() -> None:
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 5))
    m.c = pyo.Constraint(expr=2 * m.x <= 7)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with pytest.warns(UserWarning, match="mip_duals='fixed' gives those of its fixed LP"):
        assert solve(m, solver="highs").objective == pytest.approx(3.0)


def _knapsack_30():
    import pyomo.environ as pyo

    rng = np.random.default_rng(1)
    weights = rng.integers(5, 41, size=30)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(30), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(int(weights[i]) * m.x[i] for i in range(30)) <= 200)
    m.o = pyo.Objective(expr=sum(int(weights[i] + i % 5) * m.x[i] for i in range(30)),
                        sense=pyo.maximize)
    return m, weights


@pytest.mark.parametrize("name, options", [("coplug_scip", {"limits/solutions": 1}),
                                           ("coplug_highs", {"mip_max_improving_sols": 1})])
def test_a_legacy_result_with_a_point_and_no_verdict_loads(name: str, options: dict) -> None:
    """A solution-limit stop read unknown / unknown in the legacy results, which
    `m.solutions.load_from` refuses (GDPopt and MindtPy load that way)."""
    import pyomo.environ as pyo
    from pyomo.opt import SolverStatus, TerminationCondition

    import coplug.plugins  # noqa: F401 - registers the factories

    m, weights = _knapsack_30()
    results = pyo.SolverFactory(name).solve(m, load_solutions=False, options=options)
    assert results.solver.status is SolverStatus.ok
    assert results.solver.termination_condition is TerminationCondition.feasible
    m.solutions.load_from(results)
    assert all(m.x[i].value is not None for i in range(30))  # loaded
    chosen = [i for i in range(30) if m.x[i].value > 0.5]
    assert sum(weights[chosen]) <= 200


@pytest.mark.parametrize("name", ["costs_5x10.txt", "assignproblem.txt", "assign2024.txt"])
def test_a_matrix_under_an_or_library_name_stays_a_matrix(tmp_path, name: str) -> None:
    """Its first cost, 7, was taken for n and the next 49 costs read as a 7 x 7 matrix."""
    from coplug.formulations.assignment import load_costs

    rows = [[7, *range(1, 10)]] + [list(range(1 + r, 11 + r)) for r in range(4)]
    path = tmp_path / name
    path.write_text("\n".join(" ".join(map(str, row)) for row in rows) + "\n")
    assert np.array_equal(load_costs(path), np.array(rows, dtype=float))


def test_an_or_library_file_is_still_read_as_one(tmp_path) -> None:
    from coplug.formulations.assignment import load_costs

    path = tmp_path / "assign3.txt"
    path.write_text(" 3\n 4 1 3 2 0\n 5 3 2\n 2\n")
    assert np.array_equal(load_costs(path), [[4, 1, 3], [2, 0, 5], [3, 2, 2]])


def test_a_subsystem_shrunk_to_one_member_chunks_is_irreducible(tmp_path) -> None:
    """81 rows each checked one by one were reported 'too large to check' (None)."""
    from coplug.plugins.iis_file import explain_infeasible_file

    n = 80
    lines = ["Minimize", " obj: x0", "Subject To", " s: x0 >= 1"]
    lines += [f" d{k}: x{k} - x{k - 1} >= 1" for k in range(1, n)]
    lines += [f" e: x{n - 1} <= {n - 1}.5", " spare: x0 + x1 <= 1000", "Bounds"]
    lines += [f" x{k} free" for k in range(n)] + ["End"]
    path = tmp_path / "chain.lp"
    path.write_text("\n".join(lines) + "\n")
    found = explain_infeasible_file(path, check_limit=60)
    assert len(found.rows) == n + 1 and "spare" not in found.rows
    assert found.irreducible is True and "feasible without any one" in str(found)


def test_a_quadratic_objective_is_dropped_for_the_feasibility_checks(tmp_path) -> None:
    """A nonconvex objective kept left every check undecided ('irreducible' False) and
    SCIP's fallback warned of an unbounded model."""
    import warnings

    from coplug.plugins.iis_file import explain_infeasible_file

    path = tmp_path / "ncqp.lp"
    path.write_text("Minimize\n obj: [ - x^2 - y^2 ] / 2\nSubject To\n c1: x + y >= 5\n"
                    " c2: x + y <= 3\n c3: x - y <= 10\nEnd\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = explain_infeasible_file(path)
    assert found.rows == ["c1", "c2"] and found.irreducible is True and not found.notes


def test_highs_names_a_nonconvex_quadratic_objective_in_a_file(tmp_path) -> None:
    from coplug.plugins.errors import UnsupportedModelError
    from coplug.plugins.files import solve_file

    path = tmp_path / "ncqp.lp"
    path.write_text("Minimize\n obj: [ - x^2 - y^2 ] / 2\nSubject To\n c1: x + y <= 5\n"
                    "Bounds\n x <= 4\n y <= 4\nEnd\n")
    with pytest.raises(UnsupportedModelError,
                       match="cannot minimize ncqp.lp's non-convex quadratic objective"):
        solve_file(path, solver="highs")
    assert solve_file(path, solver="scip").objective == pytest.approx(-8.5, abs=1e-6)


_TSP_HEAD = "NAME: x\nTYPE: TSP\n"
_TSP_FAULTS = {
    "asym.tsp": (_TSP_HEAD + "DIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: "
                 "FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\n5 0 1\n1 7 0\nEOF\n",
                 "node 1 to 2 is 1 and back 5: give TYPE: ATSP"),
    "both.tsp": (_TSP_HEAD + "DIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nEDGE_WEIGHT_SECTION\n"
                 "9 9 9 9 9 9\nNODE_COORD_SECTION\n1 0 0\n2 3 4\n3 0 5\n4 1 1\nEOF\n",
                 r"both.tsp:5: an EDGE_WEIGHT_SECTION beside EDGE_WEIGHT_TYPE EUC_2D"),
    "euc3d.tsp": (_TSP_HEAD + "DIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_3D\nNODE_COORD_SECTION\n"
                  "1 0 0 0\n2 3 4 0\n3 0 0 5\n4 1 1 1\nEOF\n",
                  "EDGE_WEIGHT_TYPE EUC_3D not supported"),
    "dup.tsp": (_TSP_HEAD + "DIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                "1 0 0\n2 3 4\n2 0 5\n4 1 1\nEOF\n", r"dup.tsp:8: node id 2 given a second time"),
}


@pytest.mark.parametrize("name", sorted(_TSP_FAULTS))
def test_tsplib_files_that_contradict_themselves_are_refused(tmp_path, name: str) -> None:
    """An asymmetric TYPE: TSP was solved as an ATSP, an EDGE_WEIGHT_SECTION beside
    coordinates dropped; EUC_3D was called a malformed line, a repeated id named nowhere."""
    from coplug.formulations.tsp import load_tsplib
    from coplug.plugins.errors import InputError

    text, said = _TSP_FAULTS[name]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=said):
        load_tsplib(path)
    if name == "asym.tsp":  # as an ATSP it reads as written
        path.write_text(text.replace("TYPE: TSP", "TYPE: ATSP"))
        assert load_tsplib(path).dist[1, 0] == 5


def test_a_knapsack_capacity_refusal_names_its_line(tmp_path) -> None:
    from coplug.formulations.knapsack import load_knapsack
    from coplug.plugins.errors import InputError

    path = tmp_path / "k.txt"
    path.write_text("2\n1 4 3\n2 5 2\n-5\n")
    with pytest.raises(InputError, match=r"k.txt:4: capacity must be a non-negative"):
        load_knapsack(path)


def test_masked_arrays_are_refused_by_min_trick_cournot_and_fair_groups() -> None:
    """Each used the values under the mask (min_trick v = -1e9, a cost of 99, a third
    group 7), where the README says masked arrays are refused wherever numbers come in."""
    import networkx as nx

    from coplug.formulations.fair_graphs import group_codes
    from coplug.formulations.fair_metrics import balance
    from coplug.formulations.games import cournot
    from coplug.learned.rowdualnet import min_trick
    from coplug.plugins.errors import InputError

    c = np.ma.masked_array([[-1e9, 2.0], [3.0, 4.0]], mask=[[True, False], [False, False]])
    with pytest.raises(InputError, match="masked arrays"):
        min_trick(c, np.zeros(2))
    with pytest.raises(InputError, match="masked arrays"):
        min_trick(np.ones((2, 2)), np.ma.masked_array([0.0, 5.0], mask=[False, True]))
    with pytest.raises(InputError, match="masked arrays"):
        cournot(3, costs=np.ma.masked_array([1.0, 99.0, 1.0], mask=[False, True, False]))
    groups = np.ma.masked_array([0, 1, 7, 1], mask=[False, False, True, False])
    with pytest.raises(InputError, match="groups: masked arrays"):
        group_codes(nx.path_graph(4), groups)
    with pytest.raises(InputError, match="groups: masked arrays"):
        balance(np.array([0, 0, 1, 1]), groups)


def test_sparse_costs_in_big_endian_order_are_solved() -> None:
    """scipy builds a CSR over '>f8' data (as read from a big-endian file), then refused to
    convert it; index arrays set so reached a numba kernel (TypingError)."""
    import scipy.sparse as sp

    from coplug.plugins.lap import ranked_assignments

    data = np.array([1.0, 2.0, 3.0, 4.0], dtype=">f8")
    big = sp.csr_matrix((data, np.array([0, 1, 0, 1]), np.array([0, 2, 4])), shape=(2, 2))
    assert not big.dtype.isnative
    assert solve_lap(big).cost == 5.0
    assert ranked_assignments(big, k=2).costs == [5.0, 5.0]
    odd = sp.csr_matrix(np.array([[1.0, 2.0], [3.0, 4.0]]))
    odd.indices, odd.indptr = odd.indices.astype(">i4"), odd.indptr.astype(">i4")
    assert solve_lap(odd).cost == 5.0
    assert solve_lap(big.tocsc()).cost == 5.0


def test_a_qubo_keeps_its_own_copies_of_the_callers_arrays() -> None:
    """Edits to the caller's c and Q after construction reached the checked QUBO (energy
    NaN, Q asymmetric)."""
    import scipy.sparse as sp

    from coplug.formulations.qubo import QUBO

    q = sp.csr_matrix(np.array([[-1.0, 0.5], [0.5, -1.0]]))
    c = np.array([0.5, -0.25])
    qubo = QUBO(Q=q, c=c, constant=0.0, decode=lambda z: z, is_feasible=lambda s: True,
                objective=lambda s: 0.0)
    before = qubo.energy(np.array([1.0, 1.0]))
    q.data[:] = np.nan
    c[:] = np.nan
    assert qubo.energy(np.array([1.0, 1.0])) == before and np.isfinite(before)


def test_a_knapsack_takes_numbers_held_as_objects() -> None:
    """Small ints in an object array (a pandas object column) were refused as past 2**63."""
    from coplug.formulations.knapsack import KnapsackInstance
    from coplug.plugins.errors import InputError

    made = KnapsackInstance(np.array([1, 2, 7], dtype=object), np.array([1, 1, 1], dtype=object),
                            2)
    assert made.values.tolist() == [1, 2, 7] and made.weights.dtype == np.int64
    with pytest.raises(InputError, match="64-bit"):
        KnapsackInstance([1, 2, 3], np.array([1, 2**70, 1], dtype=object), 2)
    with pytest.raises(InputError, match="numeric"):
        KnapsackInstance([1, 2, 3], np.array([1, "a", 1], dtype=object), 2)


def _two_player_game(utility_a: str, shared: str | None = None):
    import pyomo.environ as pyo

    from coplug.formulations.games import Game

    game = Game("g")
    a, b = game.add_player("a"), game.add_player("b")
    a.x = pyo.Var(bounds=(-1.5, 1.5), initialize=0.95)
    b.y = pyo.Var(bounds=(0, 1), initialize=0.35)
    a.utility = pyo.Expression(expr=eval(utility_a, {"x": a.x, "y": b.y, "log": pyo.log}))
    b.utility = pyo.Expression(expr=-(b.y - 0.5) ** 2 + 0.1 * a.x * b.y)
    if shared is not None:
        game.model.shared = pyo.Constraint(expr=eval(shared, {"x": a.x, "y": b.y}))
    return game


@pytest.mark.parametrize("utility, shared, said", [
    ("(x - 0.4) ** 2", None, "utility of player 'a' is not concave"),
    ("(x - 0.4) ** 2 + log(1 + y)", None, "utility of player 'a' is not concave"),
    ("-(x - 0.4) ** 2", "x ** 2 + y ** 2 >= 1", "constraint 'shared' is not convex"),
])
def test_the_ascent_warns_of_curvature_that_breaks_its_equilibria(utility, shared, said) -> None:
    """Both ran to converged=True, silently, at points a player could improve by 0.2 and
    5.9 (certify's gaps)."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent

    with pytest.warns(UserWarning, match=said):
        barrier_gradient_ascent(_two_player_game(utility, shared), mu=1e-4, max_iter=200)


def test_concave_games_and_convex_shared_rows_run_without_a_curvature_warning() -> None:
    import warnings

    from coplug.formulations.game_solvers import barrier_gradient_ascent

    game = _two_player_game("-(x - 0.4) ** 2 + x * y - x * x * 0.5", "x ** 2 + y ** 2 <= 4")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        barrier_gradient_ascent(game, mu=1e-4, max_iter=200)


def test_tsplib_weights_refused_whatever_the_order_and_a_typeless_matrix_kept(tmp_path) -> None:
    """Review: an EDGE_WEIGHT_TYPE after the sections let the weights be dropped again, and a
    file with no TYPE line (which may be either) had its asymmetric matrix refused."""
    from coplug.formulations.tsp import load_tsplib
    from coplug.plugins.errors import InputError

    after = tmp_path / "after.tsp"
    after.write_text("NAME: x\nDIMENSION: 4\nEDGE_WEIGHT_SECTION\n9 9 9 9 9 9\nNODE_COORD_SECTION\n"
                     "1 0 0\n2 3 4\n3 0 5\n4 1 1\nEDGE_WEIGHT_TYPE: EUC_2D\nEOF\n")
    with pytest.raises(InputError, match=r"after.tsp:3: an EDGE_WEIGHT_SECTION beside"):
        load_tsplib(after)
    typeless = tmp_path / "typeless.tsp"
    typeless.write_text("NAME: x\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: "
                        "FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\n5 0 1\n1 7 0\nEOF\n")
    assert load_tsplib(typeless).dist[1, 0] == 5


def test_a_comma_separated_matrix_under_an_or_library_name_stays_a_matrix(tmp_path) -> None:
    from coplug.formulations.assignment import load_costs

    path = tmp_path / "assign1_costs.txt"
    path.write_text("1,2,3\n4,5,6\n7,8,9\n")
    assert load_costs(path).tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
