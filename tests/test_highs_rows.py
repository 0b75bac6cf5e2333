"""HiGHS's integrality tolerance against big-M rows: y = 5e-7 counts as integral, so in
`x <= 1e8 y` it let 50 units through a closed arc and called a wrong point optimal. Each
optimum here is checked against enumeration of the binaries (greedy flow for each)."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve


def _fixed_charge(cost, fixed, cap, big_m, demand) -> pyo.ConcreteModel:
    """Send `demand` over arcs with unit cost, fixed cost and capacity; x <= M y links."""
    arcs = range(len(cost))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(arcs, bounds=lambda _, a: (0, cap[a]))
    m.y = pyo.Var(arcs, domain=pyo.Binary)
    m.link = pyo.Constraint(arcs, rule=lambda m, a: m.x[a] <= big_m * m.y[a])
    m.demand = pyo.Constraint(expr=sum(m.x[a] for a in arcs) >= demand)
    m.o = pyo.Objective(expr=sum(cost[a] * m.x[a] + fixed[a] * m.y[a] for a in arcs))
    return m


def _exact(cost, fixed, cap, demand) -> float:
    """Open each subset of arcs, fill the cheapest first."""
    best = np.inf
    for open_ in itertools.product((0, 1), repeat=len(cost)):
        left, total = demand, sum(f for f, o in zip(fixed, open_, strict=True) if o)
        for a in sorted((a for a in range(len(cost)) if open_[a]), key=lambda a: cost[a]):
            take = min(left, cap[a])
            total, left = total + cost[a] * take, left - take
        if left <= 0:
            best = min(best, total)
    return best


def test_the_trickle_flow_of_the_probe() -> None:
    m = _fixed_charge([1.0, 10.0], [100.0, 0.0], [1e8, 1000.0], 1e8, 50.0)
    result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(150.0)
    assert m.x[0].value <= 1e8 * m.y[0].value + 1e-6  # the loaded point meets the link


@pytest.mark.parametrize("seed", range(30))
def test_random_fixed_charge_with_big_m_matches_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    cost = rng.integers(1, 20, n).astype(float)
    fixed = rng.integers(0, 300, n).astype(float)
    cap = rng.choice([1e3, 1e6, 1e8], n)
    demand = float(rng.integers(10, 200))
    big_m = float(rng.choice([1e7, 1e8, 1e9]))
    truth = _exact(cost, fixed, cap, demand)
    m = _fixed_charge(cost, fixed, cap, big_m, demand)
    result = solve(m, solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth, rel=1e-6)
