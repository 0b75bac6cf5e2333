"""Review s10 fixes: vertex certificates judged against rounding error, not D_i; knapsack
margins float64 keeps; TSPLIB count checked first; TSP QUBO size limit; R-FairSC and QUBO
input checks; ratio_cut on networkx graphs; SBM memory check; minimize's progress bar and
Ctrl-C."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import tqdm

from coplug.formulations import checks, fair_graphs, knapsack, tsp
from coplug.formulations.fair_clustering_mip import fair_clustering_mip
from coplug.formulations.fair_metrics import cut_weight, ratio_cut
from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe, random_knapsack
from coplug.formulations.openpit import openpit_qubo_safe, random_block_model
from coplug.formulations.qubo import QUBO
from coplug.formulations.qubo_solvers import certify, minimize
from coplug.formulations.tsp import load_tsplib, random_euclidean, tsp_qubo_naive, tsp_qubo_safe
from coplug.learned.fair_spectral import FairSpectralClustering
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError

# Item 0 (w = 1) and item 1 (w = 999) with 15 zero-value fillers: D_i of item 1's
# placements is about 1.4e7, so their slopes of a few units vanish relative to it.
WEIGHTS = [1, 999] + [50] * 15


def _item0_alone(values: list[float]) -> tuple[QUBO, np.ndarray]:
    """The safe QUBO of the big-D knapsack and the vertex with only y0@0 set."""
    q = knapsack_qubo_safe(KnapsackInstance(values, WEIGHTS, 1000))
    z = np.zeros(q.n)
    z[q.names.index("y0@0")] = 1
    return q, z


def test_certify_sees_a_small_descent_slope_next_to_large_penalties() -> None:
    q, z = _item0_alone([10, 10] + [0] * 15)
    i = q.names.index("y1@1")
    assert q.gradient(z)[i] == -5.0  # adding item 1 gains 10: no local minimizer
    cert = certify(q, z)
    assert not cert.kkt and not cert.ok and cert.reason == "not KKT"


def test_certify_sees_concave_zero_slope_coordinates_next_to_large_penalties() -> None:
    q, z = _item0_alone([10, 5] + [0] * 15)  # item 1's value is exactly mu = 5
    assert q.gradient(z)[q.names.index("y1@1")] == 0.0
    cert = certify(q, z)
    assert cert.kkt and not cert.second_order and not cert.ok


def test_certify_still_passes_the_vertex_with_both_items() -> None:
    q, z = _item0_alone([10, 10] + [0] * 15)
    z[q.names.index("y1@1")] = 1
    cert = certify(q, z)
    assert cert.ok and cert.strict and cert.objective == 20.0


@pytest.mark.parametrize("method", ["adam", "pgd"])
@pytest.mark.parametrize("seed", [0, 1])
def test_genuine_local_minimizers_still_certify(method: str, seed: int) -> None:
    qubos = [knapsack_qubo_safe(random_knapsack(8, seed=3, r=10)),
             tsp_qubo_safe(random_euclidean(6, seed=seed).dist),
             openpit_qubo_safe(random_block_model(40, seed=seed))]
    for q in qubos:
        report = minimize(q, method=method, starts=16, seed=seed)
        assert report.fraction_ok == 1.0
        for point in report.points:  # each certified vertex has every slope pointing inward
            z = np.round(point)
            assert ((1 - 2 * z) * q.gradient(z) > 0).all()


def test_knapsack_margin_lost_to_rounding_is_refused() -> None:
    inst = KnapsackInstance(values=[1e9, 1e9, 3e8], weights=[2, 2, 1], capacity=3)
    floor = knapsack.smallest_margin(inst)
    with pytest.raises(InputError, match=r"margin 1e-09 is lost to float64 rounding.*use margin"):
        knapsack_qubo_safe(inst, margin=1e-9)
    q = knapsack_qubo_safe(inst, margin=2 * floor)
    assert q.diagonal().max() < 0 and q.margin == 2 * floor


def _tsplib(tmp_path: Path, dimension: int, fmt: str, numbers: str) -> Path:
    """A small EXPLICIT TSPLIB file."""
    path = tmp_path / f"x{dimension}{fmt}.tsp"
    path.write_text(f"NAME: x\nTYPE: TSP\nDIMENSION: {dimension}\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                    f"EDGE_WEIGHT_FORMAT: {fmt}\nEDGE_WEIGHT_SECTION\n{numbers}\nEOF\n")
    return path


def test_short_explicit_section_is_refused_before_building_cells(tmp_path: Path) -> None:
    path = _tsplib(tmp_path, 3000, "FULL_MATRIX", "0 1 2")
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="has 3 numbers, FULL_MATRIX with DIMENSION 3000 "
                                             "needs 9000000"):
            load_tsplib(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20


@pytest.mark.parametrize("fmt, numbers", [
    ("FULL_MATRIX", "0 1 2 3 1 0 4 5 2 4 0 6 3 5 6 0"),
    ("UPPER_ROW", "1 2 3 4 5 6"),
    ("LOWER_ROW", "1 2 4 3 5 6"),
    ("UPPER_DIAG_ROW", "0 1 2 3 0 4 5 0 6 0"),
    ("LOWER_DIAG_ROW", "0 1 0 2 4 0 3 5 6 0"),
])
def test_explicit_formats_fill_the_same_matrix(tmp_path: Path, fmt: str, numbers: str) -> None:
    want = np.array([[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]], dtype=float)
    np.testing.assert_array_equal(load_tsplib(_tsplib(tmp_path, 4, fmt, numbers)).dist, want)


def test_explicit_negative_distance_names_its_line(tmp_path: Path) -> None:
    path = _tsplib(tmp_path, 3, "UPPER_ROW", "1 2\n-3")
    with pytest.raises(InputError, match=r":8: negative distance -3"):
        load_tsplib(path)


@pytest.mark.parametrize("builder", [tsp_qubo_safe, tsp_qubo_naive])
def test_tsp_qubo_size_limit(builder) -> None:
    d = random_euclidean(30, seed=0).dist
    with pytest.raises(InputError, match=r"over the limit 1000 .*max_nonzeros=.*tsp_mip"):
        builder(d, max_nonzeros=1000)
    q = builder(d)
    assert q.Q.nnz + q.A.nnz <= tsp.qubo_nonzeros(d)


def test_tsp_qubo_nonzeros_are_counted_exactly() -> None:
    d = random_euclidean(9, seed=2).dist
    d[2, 5] = d[5, 2] = 0.0
    q = tsp_qubo_safe(d)
    assert q.Q.nnz + q.A.nnz == tsp.qubo_nonzeros(d)


def test_large_tsp_is_refused_before_allocating() -> None:
    with pytest.raises(InputError, match="200 cities .* over the limit"):
        tsp_qubo_safe(random_euclidean(200, seed=0).dist)


@pytest.mark.parametrize("settings, match", [
    ({"tol": float("nan")}, "tol must be a finite number > 0"),
    ({"tol": -1.0}, "tol must be a finite number > 0"),
    ({"tol": 0.0}, "tol must be a finite number > 0"),
    ({"n_init": 0}, "n_init"),
    ({"n_init": 1.5}, "n_init"),
])
def test_rfairsc_settings_are_checked(settings: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        FairSpectralClustering(2, [0, 1] * 3, **settings).fit(nx.cycle_graph(6))


def test_rfairsc_accepts_auto_n_init() -> None:
    labels = FairSpectralClustering(2, [0, 1] * 3, n_init="auto").fit(nx.cycle_graph(6)).labels_
    assert len(set(labels)) == 2


def _string_weight_graph() -> nx.Graph:
    graph = nx.cycle_graph(6)
    nx.set_edge_attributes(graph, "heavy", "weight")
    return graph


def test_string_edge_weight_is_named() -> None:
    with pytest.raises(InputError, match=r"edge \(0, 1\) has weight 'heavy'"):
        FairSpectralClustering(2, [0, 1] * 3).fit(_string_weight_graph())
    with pytest.raises(InputError, match="has weight 'heavy'"):
        fair_clustering_mip(_string_weight_graph(), [0, 1] * 3, 2)


def test_string_dense_adjacency_is_an_input_error() -> None:
    adjacency = np.array([[0, "x"], ["x", 0]], dtype=object)
    with pytest.raises(InputError, match="real numbers"):
        fair_graphs.as_adjacency(adjacency)


@pytest.mark.parametrize("field", ["Q", "c", "weights"])
def test_qubo_with_a_string_coefficient_names_the_field(field: str) -> None:
    data = {"Q": [[1.0]], "c": [0.0], "A": [[1.0]], "weights": [1.0]}
    data[field] = [["a"]] if field == "Q" else ["a"]
    with pytest.raises(InputError, match=f"QUBO {field} must hold real numbers.*'a'"):
        QUBO(constant=0, decode=lambda z: z, is_feasible=lambda s: True,
             objective=lambda s: 0, **data)


def test_ratio_cut_takes_a_networkx_graph() -> None:
    labels = np.array([0, 0, 0, 1, 1, 1])
    assert ratio_cut(nx.cycle_graph(6), labels) == pytest.approx(4 / 3)
    assert cut_weight(nx.cycle_graph(6), labels) == 2.0
    assert ratio_cut(nx.to_scipy_sparse_array(nx.cycle_graph(6)), labels) == pytest.approx(4 / 3)


def test_sbm_too_big_for_memory_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "available_memory", lambda: 2**20)
    with pytest.raises(InputError, match=r"fair_sbm\(n=1000000\) needs about .* GiB"):
        fair_graphs.fair_sbm(10**6, n_clusters=2)
    assert fair_graphs.fair_sbm(100, n_clusters=2, avg_degree=4).n == 100  # ~30 kB fits


def test_cli_sbm_too_big_for_memory(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(checks, "available_memory", lambda: 2**20)
    assert main(["fairsc", "--n", "1000000", "--clusters", "2"]) == 2
    assert "needs about" in capsys.readouterr().err


def test_sbm_memory_check_skipped_without_meminfo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "available_memory", lambda: None)
    assert fair_graphs.fair_sbm(100, n_clusters=2, avg_degree=4).n == 100


class _Bar:
    """A stand-in tqdm bar recording its updates; raises KeyboardInterrupt at update `stop`."""

    made: list[_Bar] = []
    stop_at: int | None = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.total = kwargs.get("total")
        self.n, self.closed, self.stop, self.postfix = 0, False, _Bar.stop_at, ""
        _Bar.made.append(self)

    def update(self, k: int = 1) -> None:
        self.n += k
        if self.stop is not None and self.n >= self.stop:
            raise KeyboardInterrupt

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = text

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_bar(monkeypatch: pytest.MonkeyPatch) -> type[_Bar]:
    monkeypatch.setattr(tqdm, "tqdm", _Bar)
    monkeypatch.setattr(_Bar, "made", [])
    monkeypatch.setattr(_Bar, "stop_at", None)
    return _Bar


def test_progress_bar_moves_before_any_start_finishes(fake_bar: type[_Bar]) -> None:
    q = knapsack_qubo_safe(random_knapsack(8, seed=3, r=10))
    report = minimize(q, starts=4, max_iter=5, progress=True, certify_points=False)
    (bar,) = fake_bar.made
    assert bar.n == report.iterations == 5 and bar.closed
    assert bar.postfix == "0/4 starts done"


def test_ctrl_c_returns_the_points_reached(fake_bar: type[_Bar]) -> None:
    fake_bar.stop_at = 10
    q = knapsack_qubo_safe(random_knapsack(8, seed=3, r=10))
    report = minimize(q, starts=4, max_iter=3000, progress=True)
    (bar,) = fake_bar.made
    assert report.interrupted and bar.closed and report.iterations == 10
    assert report.points.shape == (4, q.n) and len(report.certificates) == 4
    assert not minimize(q, starts=2, max_iter=50).interrupted


def test_cli_ctrl_c_prints_what_it_has_and_exits_130(
    fake_bar: type[_Bar], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from coplug.formulations import qubo_cli

    monkeypatch.setattr(qubo_cli, "on_terminal", lambda: True)  # the bar is drawn: a terminal
    fake_bar.stop_at = 3
    assert main(["qubo", "knapsack", "--size", "5", "--starts", "4"]) == 130
    out = capsys.readouterr().out
    assert "adam interrupted after 3 iterations" in out
    assert "certified local minimizers" in out and "SCIP" not in out


def test_sparse_adjacency_still_accepted() -> None:
    adjacency = sp.csr_matrix(nx.to_numpy_array(nx.cycle_graph(4)))
    assert fair_graphs.as_adjacency(adjacency).nnz == 8
