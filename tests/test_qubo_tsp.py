"""TSP: TSPLIB reader, exact MIP vs brute force, safe QUBO exact and trap-free, naive fails."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from coplug.formulations.qubo_solvers import certify, minimize
from coplug.formulations.tsp import (
    load_tsplib,
    random_euclidean,
    solve_tsp_lazy,
    tour_from_model,
    tour_length,
    tsp_mip,
    tsp_qubo_naive,
    tsp_qubo_safe,
)
from coplug.plugins.bridge import solve
from coplug.plugins.errors import InputError


def _brute_force(dist: np.ndarray) -> float:
    n = dist.shape[0]
    return min(tour_length(dist, (0, *p)) for p in itertools.permutations(range(1, n)))


def test_mip_matches_brute_force_and_keeps_names() -> None:
    inst = random_euclidean(6, seed=5)
    model = tsp_mip(inst.dist)
    assert hasattr(model, "out_degree") and hasattr(model, "in_degree")
    assert (0, 1) in model.x and (1, 0) in model.x
    res = solve(model)
    assert res.objective == pytest.approx(_brute_force(inst.dist))
    assert tour_length(inst.dist, tour_from_model(model)) == pytest.approx(res.objective)
    lazy = solve_tsp_lazy(inst.dist)
    assert tour_length(inst.dist, lazy) == pytest.approx(res.objective)


def test_safe_energy_is_tour_length_and_infeasible_points_are_not_minima() -> None:
    dist = random_euclidean(4, seed=3).dist
    q = tsp_qubo_safe(dist)
    assert (q.diagonal() < 0).all()
    energies = []
    for bits in itertools.product((0, 1), repeat=q.n):
        z = np.array(bits, dtype=float)
        tour = q.decode(z)
        if tour is not None:
            assert q.energy(z) == pytest.approx(tour_length(dist, tour))
            energies.append(q.energy(z))
        else:
            assert q.flip_deltas(z).min() <= -q.margin + 1e-9
            assert not certify(q, z).local_min
    assert min(energies) == pytest.approx(_brute_force(dist))


@pytest.mark.parametrize("method", ["pgd", "adam"])
def test_every_start_ends_at_a_certified_tour(method: str) -> None:
    inst = random_euclidean(6, seed=2)
    report = minimize(tsp_qubo_safe(inst.dist), method=method, starts=32, seed=0)
    assert report.fraction_ok == 1.0
    assert report.best_objective(1) >= _brute_force(inst.dist) - 1e-9


def test_naive_form_ends_at_fractional_local_minima() -> None:
    inst = random_euclidean(5, seed=1)
    q = tsp_qubo_naive(inst.dist)
    assert (q.diagonal() > 0).all()
    report = minimize(q, method="pgd", starts=8, seed=0, max_iter=4000)
    assert report.fraction_binary_feasible < 1.0
    assert any(c.local_min and not c.binary for c in report.certificates)


EUC = """NAME : tiny
TYPE : TSP
DIMENSION : 4
EDGE_WEIGHT_TYPE : EUC_2D
NODE_COORD_SECTION
1 0 0
2 3 0
3 3 4
4 0 4
EOF
"""

UPPER = """NAME : up
TYPE : TSP
DIMENSION : 4
EDGE_WEIGHT_TYPE : EXPLICIT
EDGE_WEIGHT_FORMAT : UPPER_ROW
EDGE_WEIGHT_SECTION
1 2 3
4 5
6
EOF
"""


def test_tsplib_euc_2d_and_explicit(tmp_path) -> None:
    (tmp_path / "a.tsp").write_text(EUC)
    inst = load_tsplib(tmp_path / "a.tsp")
    assert inst.dist[0, 2] == 5 and inst.n == 4
    assert tour_length(inst.dist, [0, 1, 2, 3]) == 14
    (tmp_path / "b.tsp").write_text(UPPER)
    d = load_tsplib(tmp_path / "b.tsp").dist
    assert d[0, 3] == 3 and d[3, 0] == 3 and d[2, 3] == 6
    full = UPPER.replace("UPPER_ROW", "FULL_MATRIX").replace(
        "1 2 3\n4 5\n6", "0 1 2 3\n1 0 4 5\n2 4 0 6\n3 5 6 0"
    )
    (tmp_path / "c.tsp").write_text(full)
    assert (load_tsplib(tmp_path / "c.tsp").dist == d).all()


@pytest.mark.parametrize(
    "text, where",
    [
        (EUC.replace("3 3 4", "3 3 four"), ":8:"),
        (EUC.replace("2 3 0", "2 3"), ":7:"),
        (EUC.replace("DIMENSION : 4\n", ""), "DIMENSION"),
        (UPPER.replace("4 5", "4 x"), ":8:"),
        (UPPER.replace("\n6\n", "\n"), "needs 6"),
        (UPPER.replace("UPPER_ROW", "WEIRD"), "EDGE_WEIGHT_FORMAT"),
        (EUC.replace("TYPE : TSP", "TYPE TSP"), ":2:"),
    ],
)
def test_tsplib_errors_name_the_line(tmp_path, text: str, where: str) -> None:
    path = tmp_path / "bad.tsp"
    path.write_text(text)
    with pytest.raises(InputError, match=where):
        load_tsplib(path)
