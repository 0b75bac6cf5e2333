"""Review fixes for the QUBO modules: box and penalty checks in the certificate, Adam on huge
gradients, deep-pit guard, seeds and argument validation, neutral QUBO labels, CLI flags."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe
from coplug.formulations.qubo_solvers import RunReport, certify
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("z", [[-0.5, 1.0], [0.0, 1.7], [np.nan, 1.0]])
def test_certify_refuses_points_outside_the_box(z: list[float]) -> None:
    q = knapsack_qubo_safe(KnapsackInstance([3, 4], [1, 1], 1))
    with pytest.raises(InputError, match="outside the box"):
        certify(q, np.array(z))
    assert certify(q, np.array([-1e-9, 1 + 1e-9])).ok  # within tol of the best vertex


def test_positive_penalty_point_is_not_feasible() -> None:
    q = knapsack_qubo_safe(KnapsackInstance([5, 1], [1, 1], 3))
    twice = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # item 0 placed on slots 0 and 1
    assert q.is_feasible(q.decode(twice)) and q.energy(twice) > -5.0
    cert = certify(q, twice)
    assert cert.binary and not cert.feasible and cert.objective is None
    once = certify(q, np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    assert once.feasible and once.objective == 5.0
    report = RunReport(np.zeros((1, q.n)), np.zeros(1), [cert], 1, 0.0, "pgd")
    assert report.fraction_binary_feasible == 0.0 and report.best_objective(-1) is None
