"""Shared fixtures: small seeded models used across the suite."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from numba_cache import refresh

from coplug.formulations.qubo import QUBO

NUMBA_FOLDERS = ("plugins/lap", "learned")
TEST_TIME_LIMIT_S = float(os.environ.get("COPLUG_TEST_TIME_LIMIT_S", "600"))


def pytest_configure(config: pytest.Config) -> None:
    """Clear stale numba caches once per session, in the controller before any worker
    starts (an xdist worker has `workerinput`). Ctrl-C raises KeyboardInterrupt in every
    process of the run: a shell starts a background job (`make test &`) with SIGINT
    ignored, and the tests that press Ctrl-C themselves then saw nothing happen."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not hasattr(config, "workerinput"):
        root = Path(__file__).resolve().parents[1]
        for folder in NUMBA_FOLDERS:
            refresh(root / folder)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """End the process, with every thread's stack on stderr, when one test runs past
    TEST_TIME_LIMIT_S: a compiled loop that never ends holds the GIL, so no Python-level
    timeout can stop it, and CI would stall. Under xdist the worker's crash fails that test
    by name and a fresh worker runs the rest."""
    faulthandler.dump_traceback_later(TEST_TIME_LIMIT_S, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def predict_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let `solve_lap` ask its predictor on matrices under PREDICT_MIN_ROWS rows, so tests of
    the predicted path (its exactness, its errors) run on small matrices."""
    from coplug.plugins.lap import solver

    monkeypatch.setattr(solver, "PREDICT_MIN_ROWS", 1)


@pytest.fixture
def duals_reach_the_certificate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep square warm starts whose dual bound lies below JV's column reduction (they are
    set aside for a cold start since session 38), so tests of the warm certificate can hand
    it adversarial duals on small matrices (the kernel path: the one-call path is compiled)."""
    from coplug.plugins.lap import small, warmstart

    monkeypatch.setattr(small, "MAX_ENTRIES", 0)
    monkeypatch.setattr(warmstart, "below_column_reduction", lambda u, v, low: False)


def assignment_model(cost: np.ndarray) -> pyo.ConcreteModel:
    """Square assignment MIP: min sum c_ij x_ij, one per row and one per column."""
    n = cost.shape[0]
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, m.I, domain=pyo.Binary)
    m.row = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.I) == 1)
    m.col = pyo.Constraint(m.I, rule=lambda m, j: sum(m.x[i, j] for i in m.I) == 1)
    m.cost = pyo.Objective(expr=sum(float(cost[i, j]) * m.x[i, j] for i in m.I for j in m.I))
    return m


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def plain_qubo(Q: np.ndarray, c: np.ndarray) -> QUBO:
    """A bare QUBO over z itself (every point feasible, objective 0) for certificate tests."""
    return QUBO(Q=sp.csr_matrix(Q), c=c, constant=0.0, decode=lambda z: z,
                is_feasible=lambda x: True, objective=lambda x: 0.0)


def setcover_relaxed(n: int) -> pyo.ConcreteModel:
    """setcover(n, seed=0) with every variable continuous in [0, 1]: an LP."""
    from coplug.formulations.mip_families import setcover

    m = setcover(n, seed=0)
    for var in m.component_data_objects(pyo.Var):
        var.domain = pyo.Reals
        var.setlb(0)
        var.setub(1)
    return m
