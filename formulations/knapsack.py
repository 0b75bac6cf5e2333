"""0/1 knapsack: seeded instance generators and the exact Pyomo MIP."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from coplug.plugins.errors import InputError


@dataclass(frozen=True)
class KnapsackInstance:
    """Item values, item weights and a capacity (all non-negative integers)."""

    values: np.ndarray
    weights: np.ndarray
    capacity: int

    def __post_init__(self) -> None:
        values = np.asarray(self.values)
        weights = np.asarray(self.weights)
        if values.ndim != 1 or weights.shape != values.shape:
            raise InputError(
                f"values and weights must be 1-D of one length, got shapes "
                f"{values.shape} and {weights.shape}"
            )
        if values.size == 0:
            raise InputError("a knapsack instance needs at least one item")
        if (weights < 0).any() or self.capacity < 0:
            raise InputError("knapsack weights and capacity must be non-negative")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "weights", weights)

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.values.size)

    def is_feasible(self, x: np.ndarray) -> bool:
        """True when a 0/1 vector fits the capacity."""
        x = np.asarray(x)
        return bool(np.isin(x, (0, 1)).all() and self.weights @ x <= self.capacity)

    def value(self, x: np.ndarray) -> float:
        """Total value of a selection."""
        return float(self.values @ np.asarray(x))


def random_knapsack(
    n: int, seed: int = 0, kind: str = "uncorrelated", r: int = 100
) -> KnapsackInstance:
    """Pisinger-style instance: `uncorrelated` or `strongly_correlated` (v = w + r/10)."""
    if n < 1:
        raise InputError(f"knapsack size must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, r + 1, size=n)
    if kind == "uncorrelated":
        values = rng.integers(1, r + 1, size=n)
    elif kind == "strongly_correlated":
        values = weights + r // 10
    else:
        raise InputError(f"unknown knapsack kind {kind!r}; use uncorrelated or strongly_correlated")
    capacity = int(weights.sum() // 2)
    return KnapsackInstance(values=values, weights=weights, capacity=capacity)


def knapsack_mip(instance: KnapsackInstance) -> pyo.ConcreteModel:
    """Exact MIP: maximize sum v_i x_i subject to sum w_i x_i <= C, x binary."""
    m = pyo.ConcreteModel(name="knapsack")
    m.I = pyo.RangeSet(0, instance.n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.capacity = pyo.Constraint(
        expr=sum(float(instance.weights[i]) * m.x[i] for i in m.I) <= instance.capacity
    )
    m.value = pyo.Objective(
        expr=sum(float(instance.values[i]) * m.x[i] for i in m.I), sense=pyo.maximize
    )
    return m
