"""Seeded MIP instance families of the PMVB paper, each emitted as a Pyomo model.

Set cover, combinatorial auction, maximum independent set, fixed-charge network flow,
multi-dimensional knapsack and generalized independent set (GISP). Every builder takes
`(size, seed)` and returns a `pyo.ConcreteModel` whose binaries live in `model.x`, except
fixed-charge flow's, which are its arc binaries `model.y` beside the flows `model.f` (GISP
has edge binaries `model.y` besides `model.x`). The generators follow the
classical recipes (Balas-Ho set cover, Chu-Beasley knapsack, Barabasi-Albert graphs with
clique inequalities, Colombi et al. GISP) in simplified, dependency-free form.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from coplug.formulations.checks import check_count, check_memory, check_positive, check_seed
from coplug.plugins.errors import InputError

Builder = Callable[[int, int], pyo.ConcreteModel]


def _check_size(size: int, minimum: int, family: str, seed: int) -> int:
    """`size` as an int, refusing non-integers (30.5, "30", None, True) and sizes too small
    for a meaningful instance of `family`, and seeds numpy and networkx would refuse deep
    inside."""
    from coplug.formulations.registry import check_size

    check_seed(seed, f"{family} seed")
    size = check_count(size, f"{family} size", minimum)
    check_size(family, size)  # memory, before numpy draws a matrix of it
    return size


def _check_fraction(value: float, name: str) -> float:
    """A probability or share: a finite number in [0, 1], else an InputError naming it."""
    try:
        number = check_positive(value, name, zero_ok=True)
    except InputError:
        number = -1.0  # not a finite number >= 0: the message below says what is wanted
    if not 0.0 <= number <= 1.0:
        raise InputError(f"{name} must be a number in [0, 1], got {value!r}")
    return number


def setcover(size: int, seed: int = 0, density: float = 0.05) -> pyo.ConcreteModel:
    """Set cover with `size` rows and 2*size columns, costs 1..100 (Balas-Ho style)."""
    size = _check_size(size, 5, "setcover", seed)
    density = _check_fraction(density, "setcover density")
    rng = np.random.default_rng(seed)
    n_rows, n_cols = size, 2 * size
    a = rng.random((n_rows, n_cols)) < density
    a[np.arange(n_rows), rng.integers(0, n_cols, n_rows)] = True
    a[rng.integers(0, n_rows, n_cols), np.arange(n_cols)] = True
    cost = rng.integers(1, 101, n_cols)
    m = pyo.ConcreteModel(name="setcover")
    m.J = pyo.RangeSet(0, n_cols - 1)
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.cover = pyo.Constraint(range(n_rows), rule=partial(_cover_row, a))
    m.cost = pyo.Objective(expr=sum(float(cost[j]) * m.x[j] for j in m.J))
    return m


def cauction(size: int, seed: int = 0) -> pyo.ConcreteModel:
    """Combinatorial auction, `size` items, 5*size bids on mostly-local bundles (small world)."""
    size = _check_size(size, 5, "cauction", seed)
    rng = np.random.default_rng(seed)
    n_items, n_bids = size, 5 * size
    value = rng.uniform(1.0, 100.0, n_items)
    graph = nx.watts_strogatz_graph(n_items, 4, 0.2, seed=int(seed))
    bundles: list[list[int]] = []
    prices: list[float] = []
    for _ in range(n_bids):
        bundle = {int(rng.integers(n_items))}
        target = min(int(rng.integers(2, 9)), n_items)  # small auctions: all items
        while len(bundle) < target:
            frontier = sorted({v for u in bundle for v in graph[u]} - bundle)
            if not frontier or rng.random() < 0.3:
                bundle.add(int(rng.integers(n_items)))
            else:
                bundle.add(int(rng.choice(frontier)))
        bundles.append(sorted(bundle))
        synergy = 1.0 + 0.2 * rng.random() * (len(bundle) - 1)
        prices.append(float(value[list(bundle)].sum() * synergy * rng.uniform(0.8, 1.2)))
    m = pyo.ConcreteModel(name="cauction")
    m.B = pyo.RangeSet(0, n_bids - 1)
    m.x = pyo.Var(m.B, domain=pyo.Binary)
    holders: list[list[int]] = [[] for _ in range(n_items)]  # the bids on each item
    for b, bundle in enumerate(bundles):
        for i in bundle:
            holders[i].append(b)
    m.item = pyo.Constraint(
        [i for i in range(n_items) if holders[i]], rule=partial(_at_most_one, holders)
    )
    m.revenue = pyo.Objective(
        expr=sum(prices[b] * m.x[b] for b in m.B), sense=pyo.maximize
    )
    return m


def _clique_cover(graph: nx.Graph) -> list[list[int]]:
    """Maximal cliques, largest first, until every edge lies in one (Ecole-style)."""
    uncovered = {frozenset(e) for e in graph.edges}
    cover: list[list[int]] = []
    for clique in sorted(nx.find_cliques(graph), key=lambda c: (-len(c), sorted(c))):
        pairs = {frozenset((u, v)) for i, u in enumerate(clique) for v in clique[i + 1:]}
        if pairs & uncovered:
            cover.append(sorted(clique))
            uncovered -= pairs
        if not uncovered:
            break
    return cover


def indset(size: int, seed: int = 0, affinity: int = 4) -> pyo.ConcreteModel:
    """Maximum independent set on a Barabasi-Albert graph of `size` nodes, clique cover."""
    affinity = check_count(affinity, "indset affinity", 1)
    size = _check_size(size, 2, "indset", seed)
    if affinity >= size:  # the size's own message named size for a huge affinity
        raise InputError(f"indset size must be above its affinity (edges from each new "
                         f"node), got size {size} and affinity {affinity}")
    graph = nx.barabasi_albert_graph(size, affinity, seed=int(seed))
    m = pyo.ConcreteModel(name="indset")
    m.V = pyo.RangeSet(0, size - 1)
    m.x = pyo.Var(m.V, domain=pyo.Binary)
    cliques = _clique_cover(graph)
    m.clique = pyo.Constraint(range(len(cliques)), rule=partial(_at_most_one, cliques))
    m.size = pyo.Objective(expr=sum(m.x[v] for v in m.V), sense=pyo.maximize)
    return m


def fcnf(size: int, seed: int = 0, p: float = 0.15) -> pyo.ConcreteModel:
    """Fixed-charge network flow on a random strongly connected digraph of `size` nodes.

    A Hamiltonian cycle with capacity = total supply keeps every instance feasible.
    """
    size = _check_size(size, 4, "fcnf", seed)
    p = _check_fraction(p, "fcnf arc probability p")
    rng = np.random.default_rng(seed)
    graph = nx.gnp_random_graph(size, p, seed=int(seed), directed=True)
    order = [int(v) for v in rng.permutation(size)]
    nx.add_cycle(graph, order)
    supply = np.zeros(size)
    sources = rng.choice(size, max(1, size // 5), replace=False)
    sinks = rng.choice(np.setdiff1d(np.arange(size), sources), max(1, size // 4), replace=False)
    total = float(rng.integers(20, 50) * len(sinks))
    supply[sources] = rng.multinomial(int(total), np.ones(len(sources)) / len(sources))
    supply[sinks] -= rng.multinomial(int(total), np.ones(len(sinks)) / len(sinks))
    arcs = sorted(graph.edges)
    cycle = set(zip(order, order[1:] + order[:1], strict=True))
    cap = {e: total if e in cycle else float(rng.integers(int(total // 4) + 1, int(total) + 1))
           for e in arcs}
    var_cost = {e: float(rng.integers(1, 11)) for e in arcs}
    fix_cost = {e: float(rng.integers(50, 201)) for e in arcs}
    m = pyo.ConcreteModel(name="fcnf")
    m.A = pyo.Set(initialize=arcs, dimen=2)
    m.f = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    m.y = pyo.Var(m.A, domain=pyo.Binary)
    m.open = pyo.Constraint(m.A, rule=partial(_arc_open, cap))
    out = [list(graph.successors(n)) for n in range(size)]
    into = [list(graph.predecessors(n)) for n in range(size)]
    m.balance = pyo.Constraint(range(size), rule=partial(_flow_balance, out, into, supply))
    m.cost = pyo.Objective(
        expr=sum(var_cost[e] * m.f[e] + fix_cost[e] * m.y[e] for e in arcs)
    )
    return m


def mknapsack(size: int, seed: int = 0, n_dims: int = 5) -> pyo.ConcreteModel:
    """Multi-dimensional knapsack, `size` items, Chu-Beasley weights and tightness 1/2."""
    from coplug.formulations.registry import BYTES_PER_TERM

    size = _check_size(size, 2, "mknapsack", seed)
    n_dims = check_count(n_dims, "mknapsack n_dims", 1)
    check_memory(BYTES_PER_TERM * (n_dims + 1) * float(size),  # 2**40 dims: 40 TiB of weights
                 f"mknapsack with {n_dims} dims of {size} items", "choose fewer n_dims")
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 1001, (n_dims, size))
    values = weights.sum(axis=0) / n_dims + 500.0 * rng.random(size)
    capacity = 0.5 * weights.sum(axis=1)
    m = pyo.ConcreteModel(name="mknapsack")
    m.I = pyo.RangeSet(0, size - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.capacity = pyo.Constraint(range(n_dims), rule=partial(_knapsack_row, weights, capacity))
    m.value = pyo.Objective(
        expr=sum(round(float(values[i]), 2) * m.x[i] for i in m.I), sense=pyo.maximize
    )
    return m


def gisp(size: int, seed: int = 0, p: float = 0.3, alpha: float = 0.25) -> pyo.ConcreteModel:
    """Generalized independent set on G(size, p): a fraction `alpha` of edges removable at cost."""
    size = _check_size(size, 3, "gisp", seed)
    p = _check_fraction(p, "gisp edge probability p")
    alpha = _check_fraction(alpha, "gisp alpha")
    rng = np.random.default_rng(seed)
    graph = nx.gnp_random_graph(size, p, seed=int(seed))
    edges = sorted(graph.edges)
    removable = [e for e in edges if rng.random() < alpha]
    fixed = sorted(set(edges) - set(removable))
    cost = {e: float(rng.integers(20, 81)) for e in removable}
    revenue = rng.integers(90, 111, size)
    m = pyo.ConcreteModel(name="gisp")
    m.V = pyo.RangeSet(0, size - 1)
    m.E2 = pyo.Set(initialize=removable, dimen=2)
    m.x = pyo.Var(m.V, domain=pyo.Binary)
    m.y = pyo.Var(m.E2, domain=pyo.Binary)
    m.hard = pyo.Constraint(pyo.Set(initialize=fixed, dimen=2), rule=_hard_edge)
    m.soft = pyo.Constraint(m.E2, rule=_soft_edge)
    m.profit = pyo.Objective(
        expr=sum(float(revenue[v]) * m.x[v] for v in m.V)
        - sum(cost[e] * m.y[e] for e in removable),
        sense=pyo.maximize,
    )
    return m


def _cover_row(a: np.ndarray, m: pyo.ConcreteModel, i: int) -> Any:
    """Set cover row i: some column covering it is chosen."""
    return sum(m.x[j] for j in np.flatnonzero(a[i])) >= 1


def _at_most_one(groups: list[list[int]], m: pyo.ConcreteModel, k: int) -> Any:
    """At most one of the binaries in groups[k] (an item's bids, a clique's nodes)."""
    return sum(m.x[v] for v in groups[k]) <= 1


def _arc_open(cap: dict[tuple[int, int], float], m: pyo.ConcreteModel, u: int, v: int) -> Any:
    """Flow on arc (u, v) only when it is open, up to its capacity."""
    return m.f[u, v] <= cap[u, v] * m.y[u, v]


def _flow_balance(out: list[list[int]], into: list[list[int]], supply: np.ndarray,
                  m: pyo.ConcreteModel, n: int) -> Any:
    """Flow out of node n less flow into it equals its supply."""
    return (sum(m.f[n, v] for v in out[n]) - sum(m.f[u, n] for u in into[n])
            == float(supply[n]))


def _knapsack_row(weights: np.ndarray, capacity: np.ndarray, m: pyo.ConcreteModel,
                  d: int) -> Any:
    """Dimension d's weight of the chosen items within its capacity."""
    return sum(float(weights[d, i]) * m.x[i] for i in m.I) <= capacity[d]


def _hard_edge(m: pyo.ConcreteModel, u: int, v: int) -> Any:
    """A fixed GISP edge: not both ends chosen."""
    return m.x[u] + m.x[v] <= 1


def _soft_edge(m: pyo.ConcreteModel, u: int, v: int) -> Any:
    """A removable GISP edge: both ends chosen only when it is removed (y = 1)."""
    return m.x[u] + m.x[v] - m.y[u, v] <= 1


FAMILIES: dict[str, Builder] = {
    "setcover": setcover,
    "cauction": cauction,
    "indset": indset,
    "fcnf": fcnf,
    "mknapsack": mknapsack,
    "gisp": gisp,
}

# Sizes at which default SCIP needs roughly seconds on one core (benchmark default).
BENCH_SIZES: dict[str, int] = {
    "setcover": 200,
    "cauction": 100,
    "indset": 400,
    "fcnf": 30,
    "mknapsack": 60,
    "gisp": 70,
}

# Small sizes used for training data and tests (solved in well under a second).
TRAIN_SIZES: dict[str, int] = {
    "setcover": 150,
    "cauction": 50,
    "indset": 300,
    "fcnf": 25,
    "mknapsack": 30,
    "gisp": 40,
}


def build_family(family: str, size: int, seed: int = 0) -> pyo.ConcreteModel:
    """Build one instance of `family` at `size` with `seed` (checked by the builder, not
    truncated: 30.5 is refused rather than read as 30); a family that is not a known name
    (a list, a dict) is refused by name too, not with a TypeError from the lookup."""
    if not isinstance(family, str) or family not in FAMILIES:
        raise InputError(f"unknown MIP family {family!r}; known: {', '.join(FAMILIES)}")
    return FAMILIES[family](size, seed)
