"""Two-stage stochastic capacitated facility location: open facilities now (binary, fixed
costs), serve each scenario's demand later (continuous flows, capacity only where open).

Two forms of the same problem: `extensive_model` (every scenario's flows in one MIP) and
`benders_models` (a master over the openings and one estimate per scenario, plus one LP
subproblem per scenario for `coplug.plugins.benders.BendersCuts`). With `penalty` None,
demand must be met (a scenario can make an opening infeasible: feasibility cuts); with a
penalty, unmet demand is bought at that price per unit (only optimality cuts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyomo.environ as pyo

from coplug.formulations.checks import (
    check_count,
    check_memory,
    check_positive,
    check_seed,
    numeric_array,
    require_instance,
)
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

# How to make the instance the builders take, for their type errors.
FACILITY_HINT = ("FacilityInstance(fixed, capacity, cost, demand) or "
                 "random_facility_instance(facilities, customers, scenarios)")


@dataclass(frozen=True, eq=False)
class FacilityInstance(ValueEquality):
    """Fixed costs f[j], capacities cap[j], unit costs c[j, i], demands d[s, i] of scenario
    s (each equally likely) and the price of unmet demand (None: none may go unmet)."""

    fixed: np.ndarray
    capacity: np.ndarray
    cost: np.ndarray
    demand: np.ndarray
    penalty: float | None = None

    def __post_init__(self) -> None:
        """Check shapes (f, cap: (F,); c: (F, C); d: (S, C)), finiteness, non-negative
        capacities and demands and a positive price: a mismatch used to surface as an
        IndexError inside a Pyomo rule, a negative price as a model paid to leave demand unmet."""
        arrays = {name: numeric_array(getattr(self, name), f"facility {name}")
                  for name in ("fixed", "capacity", "cost", "demand")}
        cost, demand = arrays["cost"], arrays["demand"]
        if cost.ndim != 2 or demand.ndim != 2 or min(cost.shape + demand.shape) < 1:
            raise InputError(f"facility cost must be (facilities, customers) and demand "
                             f"(scenarios, customers), non-empty; got {cost.shape} and "
                             f"{demand.shape}")
        nf, nc = cost.shape
        wanted = {"fixed": (nf,), "capacity": (nf,), "demand": (demand.shape[0], nc)}
        for name, want in wanted.items():
            if arrays[name].shape != want:
                raise InputError(f"facility {name} must have shape {want} to match cost "
                                 f"{cost.shape}, got {arrays[name].shape}")
        for name, array in arrays.items():
            if not np.isfinite(array).all():
                raise InputError(f"facility {name} has NaN or infinite entries")
        for name in ("capacity", "demand"):
            if (arrays[name] < 0).any():
                raise InputError(f"facility {name} must be >= 0, got {arrays[name].min()}")
        for name, array in arrays.items():
            object.__setattr__(self, name, array)
        if self.penalty is not None:
            object.__setattr__(self, "penalty", check_positive(self.penalty, "penalty"))

    @property
    def shape(self) -> tuple[int, int, int]:
        """(facilities, customers, scenarios)."""
        return self.cost.shape[0], self.cost.shape[1], self.demand.shape[0]


def random_facility_instance(facilities: int, customers: int, scenarios: int, seed: int = 0,
                             penalty: float | None = None) -> FacilityInstance:
    """Integer data: fixed costs 50..99, capacities 20..39 (about half the facilities cover
    a scenario), unit costs 1..9, demands 1..9."""
    for name, value in (("facilities", facilities), ("customers", customers),
                        ("scenarios", scenarios)):
        check_count(value, name, 1)
    if penalty is not None:
        check_positive(penalty, "penalty")
    check_memory(16.0 * customers * (facilities + scenarios),  # int64 drawn, then float
                 f"random_facility_instance({facilities}, {customers}, {scenarios})",
                 "use fewer facilities, customers or scenarios")
    rng = np.random.default_rng(check_seed(seed))
    return FacilityInstance(
        fixed=rng.integers(50, 100, facilities).astype(float),
        capacity=rng.integers(20, 40, facilities).astype(float),
        cost=rng.integers(1, 10, (facilities, customers)).astype(float),
        demand=rng.integers(1, 10, (scenarios, customers)).astype(float),
        penalty=None if penalty is None else float(penalty),
    )


def extensive_model(inst: FacilityInstance) -> pyo.ConcreteModel:
    """All scenarios in one MIP: open[j], flow[s, j, i], unmet[s, i]."""
    require_instance(inst, FacilityInstance, "extensive_model", FACILITY_HINT)
    nf, nc, ns = inst.shape
    m = pyo.ConcreteModel(name="facility_extensive")
    m.open = pyo.Var(range(nf), domain=pyo.Binary)
    m.flow = pyo.Var(range(ns), range(nf), range(nc), domain=pyo.NonNegativeReals)
    m.unmet = pyo.Var(range(ns), range(nc), domain=pyo.NonNegativeReals,
                      bounds=(0, 0) if inst.penalty is None else (0, None))
    m.meet = pyo.Constraint(range(ns), range(nc), rule=partial(_meet, nf, inst.demand))
    m.capacity = pyo.Constraint(range(ns), range(nf), rule=partial(_capacity, nc, inst.capacity))
    m.cost = pyo.Objective(expr=sum(inst.fixed[j] * m.open[j] for j in range(nf)) + sum(
        _scenario_cost(inst, m.flow, m.unmet, s) for s in range(ns)) / ns)
    return m


def _meet(nf: int, demand: np.ndarray, m: pyo.ConcreteModel, s: int, i: int) -> Any:
    """Scenario s: customer i's demand is served or left unmet."""
    return sum(m.flow[s, j, i] for j in range(nf)) + m.unmet[s, i] == demand[s, i]


def _capacity(nc: int, capacity: np.ndarray, m: pyo.ConcreteModel, s: int, j: int) -> Any:
    """Scenario s: facility j serves within its capacity, and only when open."""
    return sum(m.flow[s, j, i] for i in range(nc)) <= capacity[j] * m.open[j]


def _scenario_cost(inst: FacilityInstance, flow: pyo.Var, unmet: pyo.Var, s: int):
    """Scenario s's serving cost (plus the unmet demand's price) in the extensive model."""
    nf, nc, _ = inst.shape
    serve = sum(inst.cost[j, i] * flow[s, j, i] for j in range(nf) for i in range(nc))
    return serve + (inst.penalty or 0.0) * sum(unmet[s, i] for i in range(nc))


def _at_least(least: np.ndarray, _m: pyo.ConcreteModel, s: int) -> tuple[float, None]:
    """Bounds of the master's estimate of scenario s: at least what it can cost."""
    return float(least[s]), None


def _sub_meet(nf: int, demand: np.ndarray, sp: pyo.ConcreteModel, i: int) -> Any:
    """A scenario subproblem: customer i's demand (this scenario's row) served or unmet."""
    return sum(sp.flow[j, i] for j in range(nf)) + sp.unmet[i] == demand[i]


def _sub_capacity(nc: int, capacity: np.ndarray, sp: pyo.ConcreteModel, j: int) -> Any:
    """A scenario subproblem: facility j serves within its capacity times its opening."""
    return sum(sp.flow[j, i] for i in range(nc)) <= capacity[j] * sp.open[j]


def benders_models(inst: FacilityInstance) -> tuple[pyo.ConcreteModel, list]:
    """The master (open[j], estimate[s] at least the least a scenario can cost: 0, or what
    its demand earns at the most negative unit costs) and one `Subproblem` per scenario,
    whose `open` copies are continuous in [0, 1]."""
    require_instance(inst, FacilityInstance, "benders_models", FACILITY_HINT)
    from coplug.plugins.benders import Subproblem

    nf, nc, ns = inst.shape
    m = pyo.ConcreteModel(name="facility_master")
    m.open = pyo.Var(range(nf), domain=pyo.Binary)
    least = inst.demand @ np.minimum(inst.cost.min(axis=0), 0.0)  # flows into i <= d[s, i]
    m.estimate = pyo.Var(range(ns), bounds=partial(_at_least, least))
    m.cost = pyo.Objective(expr=sum(inst.fixed[j] * m.open[j] for j in range(nf))
                           + sum(m.estimate.values()) / ns)
    subs = []
    for s in range(ns):
        sp = pyo.ConcreteModel(name=f"scenario_{s}")
        sp.open = pyo.Var(range(nf), bounds=(0, 1))
        sp.flow = pyo.Var(range(nf), range(nc), domain=pyo.NonNegativeReals)
        sp.unmet = pyo.Var(range(nc), domain=pyo.NonNegativeReals,
                           bounds=(0, 0) if inst.penalty is None else (0, None))
        sp.meet = pyo.Constraint(range(nc), rule=partial(_sub_meet, nf, inst.demand[s]))
        sp.capacity = pyo.Constraint(range(nf), rule=partial(_sub_capacity, nc, inst.capacity))
        sp.cost = pyo.Objective(expr=sum(inst.cost[j, i] * sp.flow[j, i] for j in range(nf)
                                         for i in range(nc))
                                + (inst.penalty or 0.0) * sum(sp.unmet.values()))
        subs.append(Subproblem(sp, [(m.open[j], sp.open[j]) for j in range(nf)],
                               m.estimate[s]))
    return m, subs
