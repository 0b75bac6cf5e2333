"""Named formulations for the CLI (`coplug solve NAME --size N`): name -> model builder.

Each built-in entry also says about how many variables plus constraint nonzeros its model
has at a size (fitted on sizes 10..4000, within 2x), so that `build` can refuse a size whose
Pyomo model and solver copy would not fit in memory before Pyomo starts on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pyomo.environ as pyo

from coplug.formulations.checks import check_count, check_memory
from coplug.plugins.errors import InputError

Builder = Callable[[int, int], pyo.ConcreteModel]
Terms = Callable[[int], float]

# Peak bytes of building and solving a model per variable and per nonzero: the Pyomo
# components and expressions, the SCIP copy and SCIP's presolved one; measured 2,000-3,200
# on knapsack, assignment, openpit and fair_clustering models of 10^5..10^6 terms.
BYTES_PER_TERM = 3000

# name -> ("module:function" building (size, seed) -> model, one-line description, about
# how many variables plus nonzeros at a size). Modules load on first use, so building one
# formulation does not import every other.
_FAMILY_TERMS: dict[str, Terms] = {
    "setcover": lambda s: 0.1 * s * s + 2 * s,
    "cauction": lambda s: 30 * s,
    "indset": lambda s: 8 * s,
    "fcnf": lambda s: s * s,
    "mknapsack": lambda s: 6 * s,
    "gisp": lambda s: 0.37 * s * s,
}
_LAZY: dict[str, tuple[str, str, Terms]] = {
    "knapsack": (
        "coplug.formulations.registry:_knapsack",
        "0/1 knapsack, uncorrelated, SIZE items",
        lambda s: 2 * s,
    ),
    "tsp": (
        "coplug.formulations.tsp:registry_model",
        "travelling salesman, random Euclidean, MTZ, SIZE cities",
        lambda s: 6 * s * s,
    ),
    "openpit": (
        "coplug.formulations.openpit:registry_model",
        "open-pit mining closure, random 2-D block model, ~SIZE blocks",
        lambda s: 6.5 * s,
    ),
    "assignment": (
        "coplug.formulations.assignment:registry_model",
        "linear assignment, geometric tracking costs, SIZE x SIZE",
        lambda s: 3 * s * s,
    ),
    "fair_clustering": (
        "coplug.formulations.fair_clustering_mip:registry_model",
        "exact fair 2-clustering (ratio cut), ~SIZE nodes",
        lambda s: float(s) ** 3,
    ),
    **{
        family: (f"coplug.formulations.mip_families:{family}", description,
                 _FAMILY_TERMS[family])
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
    """Register `builder(size, seed) -> Pyomo model` under `name` (a non-callable builder is
    refused here, not when `build` first calls it)."""
    if not callable(builder):
        raise InputError(f"the builder registered as {name!r} must be callable, got "
                         f"{type(builder).__name__}")
    _BUILDERS[name] = (builder, description)


def names() -> dict[str, str]:
    """Registered names and their one-line descriptions."""
    known = {name: entry[1] for name, entry in _LAZY.items()}
    known.update({name: desc for name, (_, desc) in _BUILDERS.items()})
    return dict(sorted(known.items()))


def build(name: str, size: int, seed: int = 0) -> pyo.ConcreteModel:
    """Build the registered formulation `name` at `size` with `seed`; a built-in one too
    large for this machine's available memory is refused first."""
    if name not in _BUILDERS and name not in _LAZY:
        raise InputError(f"unknown formulation {name!r}; known: {', '.join(names())}")
    size = check_count(size, "--size", 1)
    if name in _BUILDERS:
        return _BUILDERS[name][0](size, seed)
    check_size(name, size)
    module_name, func = _LAZY[name][0].split(":")
    return getattr(importlib.import_module(module_name), func)(size, seed)


def check_size(name: str, size: int) -> None:
    """Refuse a built-in formulation `name` at `size` that this machine's available memory
    cannot build and solve (before any of it is generated)."""
    terms = _LAZY[name][2]
    check_memory(BYTES_PER_TERM * terms(min(size, 10**30)), f"{name} at size {size}",
                 "choose a smaller --size")  # past 1e30 the estimate stays a refusal


def _knapsack(size: int, seed: int) -> pyo.ConcreteModel:
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack

    return knapsack_mip(random_knapsack(size, seed=seed))
