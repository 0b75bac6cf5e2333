"""PMVB instance families: seeded, registered, and solved alike by SCIP and HiGHS."""

from __future__ import annotations

import pytest

from coplug.formulations import registry
from coplug.formulations.mip_families import FAMILIES, build_family
from coplug.plugins import InputError, solve

TINY = {"setcover": 30, "cauction": 15, "indset": 40, "fcnf": 8, "mknapsack": 12, "gisp": 15}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_is_seeded_registered_and_agrees_with_highs(family: str) -> None:
    a, b = build_family(family, TINY[family], 3), registry.build(family, TINY[family], seed=3)
    scip_a, scip_b = solve(a), solve(b)
    highs = solve(build_family(family, TINY[family], 3), solver="highs")
    assert scip_a.optimal and highs.optimal and scip_a.objective == scip_b.objective
    assert abs(scip_a.objective - highs.objective) <= 1e-6 * max(1.0, abs(highs.objective))


def test_bad_family_or_size_is_named() -> None:
    with pytest.raises(InputError, match="unknown MIP family"):
        build_family("tsp", 10)
    with pytest.raises(InputError, match="size"):
        build_family("indset", 2)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_negative_seed_is_named(family: str) -> None:
    with pytest.raises(InputError, match="seed must be a non-negative integer"):
        build_family(family, TINY[family], -1)


@pytest.mark.parametrize("size", [5, 6, 7])
def test_smallest_auctions_build_and_solve(size: int) -> None:
    """Bundle targets reach 8 items; fewer items must not loop forever."""
    model = build_family("cauction", size, 0)
    assert solve(model).objective == pytest.approx(solve(model, solver="highs").objective)
