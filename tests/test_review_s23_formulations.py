"""Formulation probe fixes (session 23): the QUBO command's memory refusal, ragged knapsack
data, an out-of-range arc length, and tours of non-whole cities."""

from __future__ import annotations

import pytest

from coplug.formulations import knapsack, openpit, tsp
from coplug.formulations.knapsack import KnapsackInstance
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("problem", ["openpit", "knapsack", "tsp"])
def test_the_qubo_command_refuses_a_size_past_memory_before_generating(
        problem, monkeypatch, capsys):
    """`coplug qubo openpit --size 4000000` reached 7 GB before this (`coplug solve`
    refused it at once)."""
    def never(*_args, **_kwargs):
        raise AssertionError("the instance was generated")

    monkeypatch.setattr(openpit, "random_block_model", never)
    monkeypatch.setattr(tsp, "random_euclidean", never)
    monkeypatch.setattr(knapsack, "random_knapsack", never)
    assert main(["qubo", problem, "--size", "100000000", "--starts", "1"]) == 2
    assert "of memory" in capsys.readouterr().err


def test_the_qubo_command_still_runs_a_small_case(capsys):
    assert main(["qubo", "knapsack", "--size", "12", "--starts", "4"]) == 0
    assert "knapsack n=12" in capsys.readouterr().out


@pytest.mark.parametrize("field", ["values", "weights"])
def test_ragged_knapsack_data_is_named(field):
    data = {"values": [1, 2], "weights": [1, 1]}
    data[field] = [1, [2, 3]]
    with pytest.raises(InputError, match=f"knapsack {field} must be a flat list of numbers"):
        KnapsackInstance(data["values"], data["weights"], 1)


def test_an_arc_length_past_float_precision_is_named():
    with pytest.raises(InputError, match="largest arc length must be an integer"):
        tsp.random_asymmetric(4, high=2**63)


@pytest.mark.parametrize(("tour", "expected"), [
    ([0, 1.5, 2.2], False), ([0, 2, 1], True), ([0.0, 2.0, 1.0], True), ([0, 1], False),
    ([0, 1, 1], False), (None, False), (["0", "1", "2"], False)])
def test_a_tour_is_whole_cities(tour, expected):
    """int() truncated 1.5 and 2.2 into cities 1 and 2: a 'tour'."""
    assert tsp.is_tour(tour, 3) is expected


@pytest.mark.parametrize("bad", [-1.0, float("nan"), 0.0])
def test_certify_refuses_a_scale_that_is_not_positive(bad):
    """A negative scale turned every slope's sign and the certificate meant nothing."""
    import numpy as np

    from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
    from coplug.formulations.qubo_solvers import certify, gradient_scale

    qubo = knapsack_qubo_safe(random_knapsack(6, seed=0))
    scale = gradient_scale(qubo)
    assert certify(qubo, np.zeros(qubo.n), scale=scale) is not None
    scale[2] = bad
    with pytest.raises(InputError, match="scale must be finite and > 0"):
        certify(qubo, np.zeros(qubo.n), scale=scale)


def _tsplib(tmp_path, body: str, name: str = "t.tsp"):
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_fixed_edges_are_refused_not_dropped(tmp_path):
    """Edge 1-3 had to be in every tour (length 48); the section was read and dropped, and
    the plain optimum 40 came back (linhp318 would solve as lin318)."""
    path = _tsplib(tmp_path, "NAME: f4\nTYPE: TSP\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                   "NODE_COORD_SECTION\n1 0 0\n2 10 0\n3 10 10\n4 0 10\n"
                   "FIXED_EDGES_SECTION\n1 3\n-1\nEOF\n")
    with pytest.raises(InputError, match="FIXED_EDGES_SECTION is not supported"):
        tsp.load_tsplib(path)


def test_a_byte_order_mark_is_read_past(tmp_path):
    path = _tsplib(tmp_path, "\ufeffDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                   "NODE_COORD_SECTION\n1 0 0\n2 3 4\n3 0 1\nEOF\n")
    assert tsp.load_tsplib(path).dist[0, 1] == 5.0


@pytest.mark.parametrize("section", [
    "EDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1_0 2 3\n",
    "EDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3_0 4\n3 0 1\n",
    "EDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 3 4\n3_0 0 1\n"])
def test_underscores_in_numbers_are_refused(tmp_path, section):
    """Python's float("1_0") is 10: d[0, 1] loaded as 10."""
    path = _tsplib(tmp_path, f"DIMENSION: 3\n{section}EOF\n")
    with pytest.raises(InputError, match=r"t\.tsp:\d+"):
        tsp.load_tsplib(path)


def test_coordinates_too_large_for_distances_are_named_without_numpy_warnings(tmp_path):
    import warnings

    path = _tsplib(tmp_path, "DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n"
                   "1 0 0\n2 1e160 4\n3 0 1\nEOF\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"t\.tsp: .*NaN or infinite"):
            tsp.load_tsplib(path)


def test_infinite_cities_are_no_tour():
    import numpy as np

    assert tsp.is_tour([0, 1, np.inf], 3) is False and tsp.is_tour([0, 1, -np.inf], 3) is False


def test_a_model_tsp_mip_did_not_build_is_named():
    import numpy as np

    from coplug.formulations.assignment import assignment_model

    m = assignment_model(np.eye(3))
    for function in (tsp.subtour_separator, tsp.tour_from_model):
        with pytest.raises(InputError, match="expected a model from tsp_mip"):
            function(m)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_ctrl_c_stops_the_exact_tsp_instead_of_returning_a_worse_tour(solver, tmp_path):
    """solve_tsp_lazy returned a tour of 4084 (optimum 701) after Ctrl-C, with no sign, and
    the rounds went on solving after it."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "tsp_ctrl_c.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, threading, time
        from coplug.formulations.tsp import random_euclidean, solve_tsp_lazy
        d = random_euclidean(80, 7).dist
        threading.Thread(target=lambda: (time.sleep(0.7), os.kill(os.getpid(),
                         signal.SIGINT)), daemon=True).start()
        try:
            tour = solve_tsp_lazy(d, solver={solver!r})
        except KeyboardInterrupt:
            print("interrupted")
        else:
            print("tour", len(tour))
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "interrupted", done.stdout + done.stderr
