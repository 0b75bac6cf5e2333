"""Certificate and QUBO object: rejects non-minimizers, SCIP on to_pyomo() is exact, CLI."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import plain_qubo

from coplug.formulations import registry
from coplug.formulations.qubo import QUBO
from coplug.formulations.qubo_solvers import certify, minimize
from coplug.formulations.tsp import random_euclidean, tsp_qubo_safe
from coplug.plugins.bridge import solve
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


def test_certificate_rejects_saddle_interior_and_descent_vertex() -> None:
    # f = (x1 - 1/2)^2 - (x2 - 1/2)^2 + const: stationary at the centre, a saddle.
    q = plain_qubo(np.diag([1.0, -1.0]), np.array([-1.0, 1.0]))
    saddle = certify(q, np.array([0.5, 0.5]))
    assert saddle.kkt and not saddle.second_order and not saddle.local_min
    assert not certify(q, np.array([0.2, 0.0])).kkt  # x1 can still move downhill
    good = certify(q, np.array([0.5, 1.0]))
    assert good.local_min and not good.binary
    # a binary point that is not a tour has a descent coordinate
    tq = tsp_qubo_safe(random_euclidean(5, seed=0).dist)
    assert not certify(tq, np.zeros(tq.n)).kkt


def test_to_pyomo_scip_equals_brute_force() -> None:
    rng = np.random.default_rng(0)
    M = rng.normal(size=(6, 6))
    A = sp.csr_matrix(rng.integers(0, 2, size=(2, 6)).astype(float))
    q = QUBO(
        Q=sp.csr_matrix(M + M.T),
        c=rng.normal(size=6),
        constant=1.5,
        A=A,
        weights=np.array([0.7, 1.3]),
        decode=lambda z: z,
        is_feasible=lambda x: True,
        objective=lambda x: 0.0,
    )
    brute = min(q.energy(np.array(z, float)) for z in itertools.product((0, 1), repeat=6))
    model = q.to_pyomo()
    assert solve(model).objective == pytest.approx(brute)
    assert q.energy(q.from_pyomo(model)) == pytest.approx(brute)
    assert np.allclose(q.dense_Q(), q.dense_Q().T)


def test_bad_input_is_named() -> None:
    with pytest.raises(InputError, match="symmetric"):
        plain_qubo(np.array([[0.0, 1.0], [0.0, 0.0]]), np.zeros(2))
    with pytest.raises(InputError, match="length"):
        plain_qubo(np.eye(2), np.zeros(3))
    with pytest.raises(InputError, match="method"):
        minimize(plain_qubo(np.eye(2), np.zeros(2)), method="sgd")
    with pytest.raises(InputError, match="square"):
        random_euclidean(3).__class__(np.zeros((2, 3)))


def test_cli_and_registry(capsys) -> None:
    assert main(["qubo", "tsp", "--size", "5", "--starts", "8", "--method", "pgd"]) == 0
    out = capsys.readouterr().out
    assert "binary+feasible  100.0%" in out
    for name in ("tsp", "openpit"):
        assert solve(registry.build(name, 12, seed=1)).optimal


def test_a_fractional_point_with_negative_curvature_is_no_local_minimum() -> None:
    """At large values (D_i near 1e10) a curvature of -1.76 on the free coordinate passed as
    0 relative to D_i, and a point that the energy falls from was called a local minimum."""
    from coplug.formulations import knapsack

    instance = knapsack.KnapsackInstance(
        values=np.array([1632270800.0, 1543624990.0, 1559917440.0, 1935072420.0]),
        weights=np.array([1, 3, 3, 1]), capacity=4)
    q = knapsack.knapsack_qubo_safe(instance, margin=1.76)
    z = np.zeros(q.n)
    z[[2, 8]], z[9] = 1.0, 0.19
    step = np.zeros(q.n)
    step[9] = -1e-3
    assert q.energy(z + step) < q.energy(z)  # not a local minimum: the energy falls
    assert q.hessian_block([9])[0, 0] < 0
    found = certify(q, z)
    assert not found.second_order and not found.local_min
    assert found.reason == "negative curvature on free coordinates"


@pytest.mark.parametrize("call,message", [
    (lambda q: certify(q, ["a", "b"]), "point must be numeric"),
    (lambda q: certify(None, np.zeros(2)), "certify needs a QUBO"),
    (lambda q: q.solution_objective(np.zeros(1)), "a point must have length 2"),
    (lambda q: q.hessian_block([100]), "hessian_block needs coordinates in 0..1"),
    (lambda q: minimize(q, device="meta", starts=2), "meta tensors hold no values"),
    (lambda q: QUBO(Q=None, c=[0.0], constant=0, decode=None, is_feasible=None,
                    objective=None), "Q must be a square matrix, got None"),
])
def test_more_bad_input_is_named(call, message) -> None:
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe

    q = knapsack_qubo_safe(KnapsackInstance(values=np.array([3.0, 2.0]),
                                            weights=np.array([1, 1]), capacity=1))
    with pytest.raises(InputError, match=message):
        call(q)
