"""Every named formulation (`coplug solve NAME`) builds a model with variables."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.formulations import registry
from coplug.plugins import InputError


@pytest.mark.parametrize("name", sorted(registry.names()))
def test_every_registered_name_builds(name: str) -> None:
    model = registry.build(name, 8, seed=1)
    assert isinstance(model, pyo.Block)
    assert next(model.component_data_objects(pyo.Var), None) is not None


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match="knapsack"):
        registry.build("nosuch", 5)


# Two sizes per formulation, small enough to build in well under a second.
SIZES = {"knapsack": (500, 2000), "assignment": (10, 40), "tsp": (8, 25),
         "openpit": (500, 2000), "fair_clustering": (8, 20), "setcover": (60, 200),
         "cauction": (15, 50), "indset": (60, 250), "fcnf": (10, 30), "mknapsack": (20, 80),
         "gisp": (20, 60)}


def _terms(model: pyo.Block) -> int:
    """Variables plus constraint nonzeros of a built model."""
    variables = sum(1 for _ in model.component_data_objects(pyo.Var))
    return variables + sum(len(list(pyo.expr.identify_variables(con.body)))
                           for con in model.component_data_objects(pyo.Constraint, active=True))


@pytest.mark.parametrize("name", sorted(SIZES))
def test_the_size_estimate_is_within_2x(name: str) -> None:
    assert set(SIZES) == set(registry.names())
    estimate = registry._LAZY[name][2]
    for size in SIZES[name]:
        actual = _terms(registry.build(name, size, seed=0))
        assert 0.5 <= estimate(size) / actual <= 2.0, (size, estimate(size), actual)


def test_a_size_too_large_for_memory_is_refused_before_building(monkeypatch) -> None:
    from coplug.formulations import checks
    from coplug.plugins.cli import main

    monkeypatch.setattr(checks, "available_memory", lambda: 2**30)
    with pytest.raises(InputError, match=r"tsp at size 1000 needs about 16\.8 GiB .* 1\.0 GiB"):
        registry.build("tsp", 1000)
    with pytest.raises(InputError, match="knapsack at size 10"):
        registry.build("knapsack", 10**400)
    assert main(["solve", "knapsack", "--size", "100000000"]) == 2
    assert _terms(registry.build("knapsack", 1000)) == 2000  # 6 MB fits
