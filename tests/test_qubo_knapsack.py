"""Knapsack QUBOs: the safe placement form is exact and trap-free; the naive form is not."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from coplug.formulations.knapsack import (
    KnapsackInstance,
    knapsack_mip,
    knapsack_qubo_naive,
    knapsack_qubo_safe,
    load_knapsack,
    random_knapsack,
    save_knapsack,
)
from coplug.formulations.qubo_solvers import certify, minimize
from coplug.plugins.bridge import solve
from coplug.plugins.errors import InputError

TINY = KnapsackInstance(values=np.array([5, 4, 3]), weights=np.array([3, 2, 2]), capacity=4)


def _binaries(n: int):
    return (np.array(z, dtype=float) for z in itertools.product((0, 1), repeat=n))


def test_safe_energy_is_objective_and_infeasible_points_have_an_improving_flip() -> None:
    q = knapsack_qubo_safe(TINY)
    assert q.n <= 12
    assert (q.diagonal() < 0).all()
    best = np.inf
    for z in _binaries(q.n):
        energy, x = q.energy(z), q.decode(z)
        assert energy >= -TINY.value(x) - 1e-9 or not TINY.is_feasible(x)
        if abs(energy + TINY.value(x)) < 1e-9 and TINY.is_feasible(x):
            best = min(best, energy)
        else:  # penalty > 0: strictly worse than what it decodes to, and not a trap
            assert q.flip_deltas(z).min() <= -q.margin + 1e-9
            assert not certify(q, z).local_min
    opt = solve(knapsack_mip(TINY)).objective
    assert best == pytest.approx(-opt)
    # every feasible selection appears with energy equal to minus its value
    for x in _binaries(TINY.n):
        if TINY.is_feasible(x):
            z = np.zeros(q.n)
            pos = 0
            for i in np.flatnonzero(x):
                k = next(k for k, name in enumerate(q.names) if name == f"y{i}@{pos}")
                z[k] = 1
                pos += int(TINY.weights[i])
            assert q.energy(z) == pytest.approx(-TINY.value(x))


def test_safe_qubo_solved_by_scip_matches_the_mip() -> None:
    inst = random_knapsack(5, seed=4, r=4)
    q = knapsack_qubo_safe(inst)
    model = q.to_pyomo()
    res = solve(model, solver="scip")
    z = q.from_pyomo(model)
    assert res.objective == pytest.approx(q.energy(z))
    assert q.solution_objective(z) == pytest.approx(solve(knapsack_mip(inst)).objective)


@pytest.mark.parametrize("method", ["pgd", "adam"])
@pytest.mark.parametrize("seed", [1, 2])
def test_every_start_ends_binary_feasible_and_certified(method: str, seed: int) -> None:
    kind = "uncorrelated" if seed == 1 else "strongly_correlated"
    inst = random_knapsack(6, seed=seed, kind=kind, r=6)
    report = minimize(knapsack_qubo_safe(inst), method=method, starts=24, seed=seed)
    assert report.fraction_ok == 1.0
    opt = solve(knapsack_mip(inst)).objective
    assert report.best_objective(-1) <= opt + 1e-9


def test_naive_form_has_a_fractional_local_minimum() -> None:
    # one item heavier than the capacity: the squared penalty is convex and its minimum
    # sits at x = 9/16, an LP-like fractional point, not at a binary one.
    inst = KnapsackInstance(values=np.array([1]), weights=np.array([2]), capacity=1)
    q = knapsack_qubo_naive(inst)
    assert (q.diagonal() > 0).any()
    cert = certify(q, np.array([9 / 16, 0.0]))
    assert cert.local_min and not cert.binary
    report = minimize(q, method="pgd", starts=8, seed=0)
    assert report.fraction_binary_feasible == 0.0


def test_loader_round_trip_and_pisinger_layout(tmp_path) -> None:
    inst = random_knapsack(7, seed=3)
    path = tmp_path / "ks.txt"
    save_knapsack(inst, path)
    back = load_knapsack(path)
    assert back.capacity == inst.capacity and (back.values == inst.values).all()
    pis = tmp_path / "pis.txt"
    pis.write_text("3\n1 10 4\n2 7 3\n3 5 2\n6\n")
    got = load_knapsack(pis)
    assert list(got.weights) == [4, 3, 2] and got.capacity == 6
    fractional = KnapsackInstance(np.array([0.5, 2.0]), np.array([1, 1]), 1)
    with pytest.raises(InputError, match=r"values\[0\] is 0.5"):  # was written as 0
        save_knapsack(fractional, tmp_path / "frac.txt")


@pytest.mark.parametrize(
    "text, where",
    [
        ("3 10\n5 4\n6 x\n1 1\n", ":3:"),
        ("3 10\n5 4\n6 2 9\n1 1\n", ":3:"),
        ("3 10\n5 4\n", "announces 3 items"),
        ("2 10\n5 4\n-1 2\n", ":3:"),
        ("2 10\n5 4\n1 2\n7 7\n", ":4:"),
    ],
)
def test_loader_errors_name_the_line(tmp_path, text: str, where: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=where):
        load_knapsack(path)
