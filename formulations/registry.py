"""Named formulations for the CLI (`coplug solve NAME --size N`): name -> model builder."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pyomo.environ as pyo

from coplug.plugins.errors import InputError

Builder = Callable[[int, int], pyo.ConcreteModel]

# name -> ("module:function" building (size, seed) -> model, one-line description). Modules
# load on first use, so building one formulation does not import every other.
_LAZY: dict[str, tuple[str, str]] = {
    "knapsack": (
        "coplug.formulations.registry:_knapsack",
        "0/1 knapsack, uncorrelated, SIZE items",
    ),
    "tsp": (
        "coplug.formulations.tsp:registry_model",
        "travelling salesman, random Euclidean, MTZ, SIZE cities",
    ),
    "openpit": (
        "coplug.formulations.openpit:registry_model",
        "open-pit mining closure, random 2-D block model, ~SIZE blocks",
    ),
    "assignment": (
        "coplug.formulations.assignment:registry_model",
        "linear assignment, geometric tracking costs, SIZE x SIZE",
    ),
    "fair_clustering": (
        "coplug.formulations.fair_clustering_mip:registry_model",
        "exact fair 2-clustering (ratio cut), ~SIZE nodes",
    ),
    **{
        family: (f"coplug.formulations.mip_families:{family}", description)
        for family, description in {
            "setcover": "set cover, SIZE rows x 2*SIZE columns (PMVB family)",
            "cauction": "combinatorial auction, SIZE items, 5*SIZE bids (PMVB family)",
            "indset": "maximum independent set, Barabasi-Albert graph of SIZE nodes (PMVB family)",
            "fcnf": "fixed-charge network flow, SIZE nodes (PMVB family)",
            "mknapsack": "multi-dimensional knapsack, SIZE items x 5 dims (PMVB family)",
            "gisp": "generalized independent set, G(SIZE, 0.3) (PMVB family)",
        }.items()
    },
}
_BUILDERS: dict[str, tuple[Builder, str]] = {}


def register(name: str, builder: Builder, description: str) -> None:
    """Register `builder(size, seed) -> Pyomo model` under `name`."""
    _BUILDERS[name] = (builder, description)


def names() -> dict[str, str]:
    """Registered names and their one-line descriptions."""
    known = {name: desc for name, (_, desc) in _LAZY.items()}
    known.update({name: desc for name, (_, desc) in _BUILDERS.items()})
    return dict(sorted(known.items()))


def build(name: str, size: int, seed: int = 0) -> pyo.ConcreteModel:
    """Build the registered formulation `name` at `size` with `seed`."""
    if name not in _BUILDERS and name not in _LAZY:
        raise InputError(f"unknown formulation {name!r}; known: {', '.join(names())}")
    if size < 1:
        raise InputError(f"--size must be >= 1, got {size}")
    if name in _BUILDERS:
        return _BUILDERS[name][0](size, seed)
    module_name, func = _LAZY[name][0].split(":")
    return getattr(importlib.import_module(module_name), func)(size, seed)


def _knapsack(size: int, seed: int) -> pyo.ConcreteModel:
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack

    return knapsack_mip(random_knapsack(size, seed=seed))
