"""Knapsack and QUBO inputs that used to fail deep inside numpy, run out of memory or give
a wrong answer: each is now either solved or refused with an error that names the cause."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
import scipy.sparse as sp

from coplug.formulations import knapsack as ks
from coplug.formulations import openpit, tsp
from coplug.formulations.knapsack import (
    KnapsackInstance,
    knapsack_mip,
    knapsack_qubo_naive,
    knapsack_qubo_safe,
    random_knapsack,
)
from coplug.formulations.qubo import QUBO
from coplug.formulations.qubo_solvers import certify, minimize, uses_dense
from coplug.plugins.bridge import solve
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


def _plain(**overrides: object) -> QUBO:
    fields: dict[str, object] = {
        "Q": sp.csr_matrix(-np.eye(2)),
        "c": np.ones(2),
        "constant": 0.0,
        "decode": lambda z: z,
        "is_feasible": lambda x: True,
        "objective": lambda x: 0.0,
        "A": sp.csr_matrix(np.ones((1, 2))),
        "weights": np.ones(1),
    }
    fields.update(overrides)
    return QUBO(**fields)  # type: ignore[arg-type]


def test_safe_qubo_refuses_a_huge_capacity_before_allocating(tmp_path) -> None:
    inst = KnapsackInstance(np.array([5, 4]), np.array([40000, 50000]), 100000)
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"variables.*nonzeros.*knapsack_mip"):
        knapsack_qubo_safe(inst)
    assert time.perf_counter() - start < 1.0
    # capacity 5000 with two items: about 12M nonzeros, over the default limit
    with pytest.raises(InputError, match="12265504 nonzeros.*max_nonzeros"):
        knapsack_qubo_safe(KnapsackInstance(np.array([1, 1]), np.array([2000, 2500]), 5000))
    small = KnapsackInstance(np.array([1, 1]), np.array([1, 2]), 50)
    with pytest.raises(InputError, match="limit 100"):
        knapsack_qubo_safe(small, max_nonzeros=100)
    assert knapsack_qubo_safe(small, max_nonzeros=ks.SAFE_MAX_NONZEROS).n == 50 + 49
    path = tmp_path / "k.txt"
    path.write_text("2 100000\n5 40000\n4 50000\n")
    assert main(["qubo", "knapsack", "--file", str(path), "--starts", "4"]) == 2


def test_safe_qubo_size_estimate_is_exact() -> None:
    inst = KnapsackInstance(np.array([3, 1, 2, 7]), np.array([2, 0, 5, 9]), 6)
    q = knapsack_qubo_safe(inst)
    variables, nonzeros = ks.safe_qubo_size(inst)
    assert variables == q.n
    assert nonzeros == q.A.nnz + q.Q.nnz


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": np.array([3.0, np.nan])}, r"weights\[1\] .*nan"),
        ({"weights": np.array([3.0, 1.5])}, r"weights\[1\] .*1\.5"),
        ({"weights": np.array([np.inf, 1.0])}, r"weights\[0\]"),
        ({"weights": np.array([3, -1])}, r"weights\[1\] .*-1"),
        ({"weights": np.array(["a", "b"])}, "weights must be numeric"),
        ({"values": np.array([1.0, np.nan])}, r"values\[1\]"),
        ({"values": np.array([-1.0, 2.0])}, r"values\[0\]"),
        ({"capacity": np.nan}, "capacity"),
        ({"capacity": 2.5}, "capacity"),
        ({"capacity": -1}, "capacity"),
        ({"capacity": "3"}, "capacity"),
        ({"capacity": 2**63}, r"capacity must fit in 64-bit integers"),
        ({"weights": [1, 2**70]}, r"weights must fit in 64-bit integers"),
    ],
)
def test_instance_rejects_bad_numbers_naming_field_and_index(kwargs: dict, match: str) -> None:
    fields = {"values": np.array([3.0, 4.0]), "weights": np.array([1, 2]), "capacity": 3}
    fields.update(kwargs)
    with pytest.raises(InputError, match=match):
        KnapsackInstance(**fields)


def test_instance_converts_whole_floats_and_the_safe_qubo_builds() -> None:
    inst = KnapsackInstance(np.array([3.0, 4.0]), np.array([1.0, 2.0]), 3.0)
    assert inst.weights.dtype.kind == "i" and isinstance(inst.capacity, int)
    assert inst.capacity == 3
    report = minimize(knapsack_qubo_safe(inst), method="pgd", starts=8, seed=0)
    assert report.fraction_ok == 1.0
    assert report.best_objective(-1) == 7.0


@pytest.mark.parametrize(
    "inst",
    [
        KnapsackInstance(np.array([5, 4]), np.array([3, 2]), 0),
        KnapsackInstance(np.array([5, 4]), np.array([3, 2]), 1),
        random_knapsack(1, seed=0, r=10),
    ],
)
def test_nothing_fits_is_solved_with_value_zero(inst: KnapsackInstance) -> None:
    q = knapsack_qubo_safe(inst)
    assert (q.diagonal() < 0).all()
    for z in itertools.product((0.0, 1.0), repeat=q.n):
        point = np.array(z)
        assert q.is_feasible(q.decode(point)) and q.energy(point) == pytest.approx(0.0)
        assert certify(q, point).ok
    report = minimize(q, method="adam", starts=16, seed=1)
    assert report.fraction_ok == 1.0 and report.best_objective(-1) == 0.0
    assert solve(knapsack_mip(inst)).objective == pytest.approx(0.0, abs=1e-6)
    assert solve(q.to_pyomo()).objective == pytest.approx(0.0, abs=1e-6)
    naive = knapsack_qubo_naive(inst)
    assert solve(naive.to_pyomo()).objective == pytest.approx(0.0, abs=1e-6)


def test_zero_weight_items_with_zero_capacity_are_taken() -> None:
    inst = KnapsackInstance(np.array([5, 4]), np.array([0, 0]), 0)
    assert solve(knapsack_mip(inst)).objective == pytest.approx(9.0)
    report = minimize(knapsack_qubo_safe(inst), method="pgd", starts=8, seed=0)
    assert report.fraction_ok == 1.0 and report.best_objective(-1) == 9.0


def test_cli_knapsack_size_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["qubo", "knapsack", "--size", "1", "--starts", "4", "--max-iter", "200"]) == 0
    out = capsys.readouterr().out
    assert "binary+feasible  100.0%" in out and "best objective   0.0" in out


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"constant": np.nan}, "constant"),
        ({"constant": np.inf}, "constant"),
        ({"c": np.array([0.0, np.nan])}, "c"),
        ({"Q": sp.csr_matrix(np.diag([np.nan, 1.0]))}, "Q"),
        ({"A": sp.csr_matrix(np.array([[np.inf, 1.0]]))}, "A"),
        ({"weights": np.array([np.nan])}, "weights"),
    ],
)
def test_qubo_rejects_non_finite_data_naming_the_field(overrides: dict, field: str) -> None:
    with pytest.raises(InputError, match=rf"QUBO {field} .*(NaN|infinite)"):
        _plain(**overrides)


def test_report_without_certificates_has_no_fractions() -> None:
    with np.errstate(all="raise"):
        report = minimize(_plain(), method="pgd", starts=4, certify_points=False)
    assert report.certificates == []
    assert report.fraction_ok is None and report.fraction_binary_feasible is None
    certified = minimize(_plain(), method="pgd", starts=4)
    assert certified.fraction_ok == 1.0 and certified.fraction_binary_feasible == 1.0


def test_dense_product_only_where_it_pays():
    """A sparse open-pit QUBO keeps its sparse product even under dense_limit; a small
    nearly dense TSP one is expanded; dense_limit=0 keeps every QUBO sparse."""
    pit = openpit.openpit_qubo_safe(openpit.random_block_model(600, 0))
    tour = tsp.tsp_qubo_safe(tsp.random_euclidean(8, seed=0).dist)
    assert not uses_dense(pit, 3000)
    assert uses_dense(tour, 3000)
    assert not uses_dense(tour, 0)
