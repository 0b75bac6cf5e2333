"""benchmarks/lap_heuristic.py reports honest rows: on tiny TSPs both configurations prove
the optimum a brute force over all tours finds, and the incumbent log ends at it."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from coplug.formulations.tsp import random_asymmetric, random_euclidean

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "lap_heuristic.py"


def _load() -> ModuleType:
    """Import the benchmark script as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_lap_heuristic", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def brute_force(dist: np.ndarray) -> float:
    """Shortest closed tour by enumerating every order of cities 1..n-1 after city 0."""
    n = len(dist)
    tours = np.array([(0, *p) for p in itertools.permutations(range(1, n))])
    return float(dist[tours, np.roll(tours, -1, axis=1)].sum(axis=1).min())


@pytest.mark.parametrize(("family", "seed"), [("euclid", 7), ("atsp", 8)])
def test_both_configurations_prove_the_brute_force_optimum(family: str, seed: int) -> None:
    bench = _load()
    n = 8
    make = random_euclidean if family == "euclid" else random_asymmetric
    dist = make(n, seed).dist
    optimum = brute_force(dist)
    rows = bench.bench_instance(family, n, seed, time_limit=60.0)
    assert [r.config for r in rows] == list(bench.CONFIGS)
    for row in rows:
        assert row.optimal
        assert row.objective == pytest.approx(optimum, rel=1e-9)
        assert row.reference == pytest.approx(optimum, rel=1e-9)
        assert row.incumbents and row.incumbents[-1][1] == pytest.approx(optimum, rel=1e-9)
        assert row.time_to(0.0) <= row.time + 1e-9 and row.pdi is not None
    assert rows[0].heur == {}
    assert rows[1].heur["blocks"] == 1 and rows[1].heur["error"] is None
    assert bench.same_optimum(*rows) is True


def test_random_asymmetric_instances_are_seeded_and_validated() -> None:
    from coplug.plugins.errors import InputError

    a, b = random_asymmetric(6, seed=3).dist, random_asymmetric(6, seed=3).dist
    assert np.array_equal(a, b) and not np.array_equal(a, a.T)
    off = a[~np.eye(6, dtype=bool)]
    assert off.min() >= 1 and off.max() <= 99 and np.all(np.diag(a) == 0)
    for kwargs, word in (({"n": 2}, "TSP size"), ({"n": 5, "seed": -1}, "seed"),
                         ({"n": 5, "high": 0}, "largest arc length")):
        with pytest.raises(InputError, match=word):
            random_asymmetric(**kwargs)
