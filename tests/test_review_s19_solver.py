"""`solve_lap` review (nineteenth session): a dense row search that fails takes the same
overflow path as a sparse one, and row duals that cannot be read as an array are named."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.errors import InputError
from coplug.plugins.lap import jv, solver
from coplug.plugins.lap.solver import solve_lap


def _failing_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the first dense row search report row 0 unassignable, as float64 overflow in
    its distances would; later searches run the real kernel."""
    real = jv.shortest_augmenting_paths
    calls = []

    def kernel(*args):
        calls.append(1)
        return (-1, 0) if len(calls) == 1 else real(*args)

    monkeypatch.setattr(jv, "shortest_augmenting_paths", kernel)


def test_dense_warm_solve_whose_row_search_fails_falls_back_cold(monkeypatch) -> None:
    c = generate("uniform", 200, seed=5)
    _failing_once(monkeypatch)
    sol = solve_lap(c, row_duals=np.zeros(200))
    r, k = linear_sum_assignment(c)
    assert sol.fallback and sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


def test_dense_cold_solve_whose_row_search_fails_is_not_called_unassignable(monkeypatch):
    _failing_once(monkeypatch)
    with pytest.raises(RuntimeError, match="certificate failed on a cold solve"):
        solve_lap(generate("uniform", 200, seed=5))


def test_one_call_path_failure_falls_back_cold(monkeypatch) -> None:
    real = solver.small.solve
    calls = []

    def one_call(c, u0, warm, *rest):
        calls.append(warm)
        out = real(c, u0, warm, *rest)
        return (*out[:3], -1, *out[4:]) if len(calls) == 1 else out

    monkeypatch.setattr(solver.small, "solve", one_call)
    c = generate("uniform", 10, seed=5)
    sol = solve_lap(c, row_duals=np.arange(10.0))
    r, k = linear_sum_assignment(c)
    assert calls == [True, False] and sol.fallback
    assert sol.cost == pytest.approx(c[r, k].sum(), rel=1e-12)


def test_row_duals_that_require_grad_are_named() -> None:
    duals = torch.zeros(4, requires_grad=True)
    with pytest.raises(InputError, match="row_duals cannot be read as an array"):
        solve_lap(np.eye(4), row_duals=duals)


def test_a_predictor_returning_a_grad_tensor_is_named() -> None:
    class GradPredictor:
        def predict_duals(self, c: np.ndarray) -> torch.Tensor:
            return torch.zeros(len(c), requires_grad=True)

    c = generate("low_rank", 300, seed=1)
    with pytest.raises(InputError, match="predictor's row duals cannot be read"):
        solve_lap(c, predictor=GradPredictor())
