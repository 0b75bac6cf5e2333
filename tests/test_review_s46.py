"""Session 46 review fixes: each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations.knapsack import knapsack_qubo_safe, random_knapsack
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("shape", ["long", "short", "batch"])
def test_qubo_magnitude_names_a_wrong_point(shape: str) -> None:
    """`QUBO.magnitude` checks its point like `energy` and `gradient` (numpy's matmul
    dimension mismatch before)."""
    q = knapsack_qubo_safe(random_knapsack(5, seed=1))
    z = {"long": np.ones(q.n + 3), "short": np.ones(q.n - 1), "batch": np.ones((2, q.n))}[shape]
    with pytest.raises(InputError, match=f"length {q.n}"):
        q.magnitude(z)
    assert q.magnitude(np.ones(q.n)) > 0
