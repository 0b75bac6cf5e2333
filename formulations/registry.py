"""Named formulations for the CLI (`coplug solve NAME --size N`): name -> model builder."""

from __future__ import annotations

from collections.abc import Callable

import pyomo.environ as pyo

from coplug.plugins.errors import InputError

Builder = Callable[[int, int], pyo.ConcreteModel]

_BUILDERS: dict[str, tuple[Builder, str]] = {}


def register(name: str, builder: Builder, description: str) -> None:
    """Register `builder(size, seed) -> Pyomo model` under `name`."""
    _BUILDERS[name] = (builder, description)


def names() -> dict[str, str]:
    """Registered names and their one-line descriptions."""
    return {name: desc for name, (_, desc) in sorted(_BUILDERS.items())}


def build(name: str, size: int, seed: int = 0) -> pyo.ConcreteModel:
    """Build the registered formulation `name` at `size` with `seed`."""
    if name not in _BUILDERS:
        raise InputError(f"unknown formulation {name!r}; known: {', '.join(sorted(_BUILDERS))}")
    if size < 1:
        raise InputError(f"--size must be >= 1, got {size}")
    return _BUILDERS[name][0](size, seed)


def _knapsack(size: int, seed: int) -> pyo.ConcreteModel:
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack

    return knapsack_mip(random_knapsack(size, seed=seed))


register("knapsack", _knapsack, "0/1 knapsack, uncorrelated, SIZE items")

from coplug.formulations import mip_families as _mip  # noqa: E402  (PMVB instance families)

for _name, _builder in _mip.FAMILIES.items():
    register(_name, _builder, _mip.DESCRIPTIONS[_name])
from coplug.formulations.assignment import registry_model as _assignment  # noqa: E402

register("assignment", _assignment, "linear assignment, geometric tracking costs, SIZE x SIZE")
from coplug.formulations.fair_clustering_mip import registry_model as _fair  # noqa: E402

register("fair_clustering", _fair, "exact fair 2-clustering (ratio cut), ~SIZE nodes")
from coplug.formulations.tsp import registry_model as _tsp  # noqa: E402

register("tsp", _tsp, "travelling salesman, random Euclidean, MTZ, SIZE cities")
from coplug.formulations.openpit import registry_model as _openpit  # noqa: E402

register("openpit", _openpit, "open-pit mining closure, random 2-D block model, ~SIZE blocks")
