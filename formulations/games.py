"""Games with coupling constraints, written in Pyomo: one block per player, shared constraints
on the parent model.

A player block holds its variables, its own constraints and an expression named `utility`
(to maximize, concave in the player's own variables). Constraints anywhere outside the player
blocks couple the players. Examples: Cournot oligopoly with a shared capacity, network flow
control with shared link capacities, and a resource-allocation potential game with a
nonconvex (bilinear) coupling constraint.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo
from numpy.typing import ArrayLike
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables

from coplug.formulations.checks import check_count, check_memory, check_positive
from coplug.plugins.arguments import detached, refuse_masked
from coplug.plugins.errors import InputError

UTILITY = "utility"
# About what one player block of `cournot` takes in memory (measured: ~4 KB), for refusing
# firm counts past the machine before Pyomo builds them one by one.
PLAYER_BYTES = 4_000


class Game:
    """A Pyomo model whose player blocks each carry variables, own constraints and a utility."""

    def __init__(self, name: str = "game") -> None:
        self.model = pyo.ConcreteModel(name=name)
        self._players: dict[str, None] = {}  # in order added; a dict for O(1) lookups

    def add_player(self, name: str) -> pyo.Block:
        """A new, empty player block on the model; fill it with Vars, Constraints, `utility`."""
        if not isinstance(name, str) or not name.isidentifier() or (
                self.model.component(name) is not None):
            raise InputError(f"player name {name!r} must be a new Python identifier")
        if hasattr(self.model, name):  # Pyomo's own attributes: name, model, clone, ...
            raise InputError(f"player name {name!r} is an attribute of Pyomo's model; "
                             "choose another name")
        block = pyo.Block(concrete=True)
        self.model.add_component(name, block)
        self._players[name] = None
        return block

    @property
    def players(self) -> list[str]:
        """Player names in the order they were added."""
        return list(self._players)

    def block(self, player: str) -> pyo.Block:
        """The block of one player."""
        if player not in self._players:
            raise InputError(f"unknown player {player!r}; players: {self._named()}")
        return self.model.component(player)

    def _named(self, shown: int = 10) -> str:
        """The players' names for a message, the first `shown` of them."""
        names = list(self._players)
        more = f", ... ({len(names)} players)" if len(names) > shown else ""
        return ", ".join(names[:shown]) + more

    def variables(self, player: str) -> list[VarData]:
        """The decision variables of one player (unfixed Vars inside its block)."""
        return [
            v for v in self.block(player).component_data_objects(pyo.Var, descend_into=True)
            if not v.fixed
        ]

    def utility(self, player: str) -> pyo.Expression:
        """The utility expression of one player (the component named `utility`)."""
        utility = self.block(player).component(UTILITY)
        if utility is None:
            raise InputError(f"player {player!r} has no component named {UTILITY!r}")
        if isinstance(utility, pyo.Objective):
            raise InputError(f"the utility of player {player!r} is a pyo.Objective: write it as "
                             "pyo.Expression (certify adds its own objective per player)")
        if utility.ctype is pyo.Var:
            raise InputError(f"the utility of player {player!r} is a pyo.Var, which the "
                             "ascent would take as a decision: write it as pyo.Expression")
        if utility.is_indexed() or not utility.is_numeric_type():
            raise InputError(f"the utility of player {player!r} must be a scalar numeric "
                             f"component (pyo.Expression), got {type(utility).__name__}")
        return utility

    def own_constraints(self, player: str) -> list[ConstraintData]:
        """Active constraints inside one player's block."""
        return list(self.block(player).component_data_objects(pyo.Constraint, active=True))

    def coupling_constraints(self) -> list[ConstraintData]:
        """Active constraints outside every player block: they couple the players."""
        inside = {id(c) for p in self._players for c in self.own_constraints(p)}
        return [
            c for c in self.model.component_data_objects(pyo.Constraint, active=True)
            if id(c) not in inside
        ]

    def validate(self) -> None:
        """Each player needs variables and a utility; own constraints touch only own variables;
        constraints and utilities use only variables some player owns (or fixed ones); no
        active Objective (certify adds one per player)."""
        if not self._players:
            raise InputError("the game has no players")
        owner: dict[int, str] = {}
        for player in self._players:
            variables = self.variables(player)
            if not variables:
                raise InputError(f"player {player!r} has no (unfixed) variables")
            _require_continuous(variables)
            self.utility(player)
            owner.update({id(v): player for v in variables})
        for player in self._players:
            _require_numeric_bounds(self.variables(player))
            for con in self.own_constraints(player):
                for v in identify_variables(con.body, include_fixed=False):
                    if owner.get(id(v)) != player:
                        raise InputError(
                            f"constraint {con.name!r} of player {player!r} uses {v.name!r}, "
                            "which is not that player's: put it on the parent model"
                        )
        _require_numeric_sides([con for player in self._players
                                for con in self.own_constraints(player)]
                               + list(self.coupling_constraints()))
        for con in self.coupling_constraints():
            for v in identify_variables(con.body, include_fixed=False):
                if id(v) not in owner:
                    raise InputError(f"constraint {con.name!r} uses {v.name!r}, owned by no player")
        for objective in self.model.component_data_objects(pyo.Objective, active=True):
            raise InputError(f"the game has an active objective {objective.name!r}: players' "
                             "utilities are pyo.Expressions; deactivate or delete it")
        for player in self._players:
            for v in identify_variables(self.utility(player), include_fixed=False):
                if id(v) not in owner:
                    raise InputError(
                        f"utility of player {player!r} uses {v.name!r}, owned by no player: "
                        "put it in a player's block or fix it"
                    )

    def profile(self) -> dict[str, np.ndarray]:
        """The current strategy of every player (variable values in block order)."""
        return {
            p: np.array([np.nan if v.value is None else v.value for v in self.variables(p)])
            for p in self._players
        }

    def set_profile(self, profile: Mapping[str, ArrayLike]) -> None:
        """Load a strategy profile into the Pyomo variables (an InputError names a profile
        that is no {player: numbers} mapping, and then nothing is loaded)."""
        if not isinstance(profile, Mapping):
            raise InputError(f"a profile must map each player to its values, got "
                             f"{type(profile).__name__}")
        checked = [self._checked_values(player, values) for player, values in profile.items()]
        for variables, values in checked:
            for var, value in zip(variables, values, strict=True):
                var.set_value(float(value), skip_validation=True)

    def _checked_values(self, player: str, values: Sequence[float]) -> tuple[list, np.ndarray]:
        """A player's variables and the profile's values for them, or the InputError naming
        what is wrong with them."""
        if player not in self._players:
            raise InputError(f"the profile names {player!r}, not a player "
                             f"({self._named()})")
        variables = self.variables(player)
        try:
            values = np.asarray(values, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InputError(f"the values of player {player!r} must be numbers, got "
                             f"{values!r}") from None
        if values.size != len(variables):
            raise InputError(
                f"player {player!r} has {len(variables)} variables, got {values.size} values"
            )
        return variables, values

    def utilities(self) -> dict[str, float]:
        """Each player's utility at the current profile; InputError naming the player where
        one is undefined there (log of a negative number)."""
        values = {}
        for player in self._players:
            try:
                values[player] = float(pyo.value(self.utility(player)))
            except (ValueError, OverflowError, ZeroDivisionError) as exc:
                raise InputError(f"the utility of player {player!r} is undefined at the "
                                 f"profile ({exc})") from None
        return values


def _require_numeric_bounds(variables: list[VarData]) -> None:
    """Refuse a NaN bound by name (Pyomo raises a ValueError of its own on reading it)."""
    for var in variables:
        try:
            var.bounds  # noqa: B018  (reading them is the check)
        except ValueError as exc:
            raise InputError(str(exc)) from None


def _require_numeric_sides(constraints: list[ConstraintData]) -> None:
    """Refuse a NaN side by name (a mutable Param's value, read when the sides are)."""
    for con in constraints:
        try:
            con.lb, con.ub  # noqa: B018  (reading them is the check)
        except ValueError as exc:
            raise InputError(str(exc)) from None


def _require_continuous(variables: list[VarData]) -> None:
    """Refuse integer and binary variables: the barrier ascent and the certificate are for
    continuous strategies and would silently treat an integer variable as a real one."""
    for var in variables:
        if not var.is_continuous():
            raise InputError(
                f"variable {var.name!r} is not continuous (domain {var.domain.name}); "
                "games here need continuous strategies: relax it to Reals with bounds"
            )


def _firm_costs(costs: float | Sequence[float], n_firms: int) -> np.ndarray:
    """One marginal cost per firm from a number or a sequence of n_firms numbers."""
    refuse_masked(costs, "cournot costs")
    costs = detached(costs, "cournot costs")
    try:
        raw = np.asarray(costs)
        cost = raw.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"costs must be a number or one number per firm, got {costs!r}") from None
    except OverflowError:  # an int past float's range: 10**400
        raise InputError("cournot needs finite costs, got an integer past float's range") from None
    if raw.dtype.kind == "b":  # True was a cost of 1
        raise InputError(f"costs must be numbers, got booleans: {costs!r}")
    if cost.ndim > 1:
        raise InputError(f"costs must be one number or one per firm, got shape {cost.shape}")
    if cost.ndim == 1 and cost.size != n_firms:
        raise InputError(f"got {cost.size} costs for {n_firms} firms: give one number or "
                         f"one cost per firm")
    return np.broadcast_to(cost, (n_firms,))


def cournot(
    n_firms: int = 3,
    intercept: float = 10.0,
    slope: float = 1.0,
    costs: float | Sequence[float] = 1.0,
    capacity: float = 5.0,
) -> Game:
    """Cournot oligopoly: price a - b Q, firm i earns q_i (a - b Q) - c_i q_i, sum q <= capacity."""
    n_firms = check_count(n_firms, "cournot n_firms", 1)
    check_memory(PLAYER_BYTES * n_firms, f"cournot(n_firms={n_firms})",
                 "each firm is a Pyomo block; use fewer firms")
    if isinstance(intercept, bool) or not isinstance(intercept, numbers.Real):
        raise InputError(f"cournot intercept must be a number, got {intercept!r}")
    try:
        finite = math.isfinite(intercept)
    except OverflowError:  # an int past float's range: 10**400
        raise InputError(f"cournot intercept must be a finite number, got an integer of "
                         f"{len(str(abs(intercept)))} digits") from None
    if not finite:
        raise InputError(f"cournot intercept must be a finite number, got {intercept!r}")
    check_positive(slope, "cournot slope")
    check_positive(capacity, "cournot capacity")
    cost = _firm_costs(costs, n_firms)
    bad = np.flatnonzero(~np.isfinite(cost) | (cost < 0))
    if bad.size:
        raise InputError(f"cournot costs must be finite numbers >= 0, got {float(cost[bad[0]])} "
                         f"for firm {int(bad[0])}")
    game = Game("cournot")
    firms = [game.add_player(f"firm{i}") for i in range(n_firms)]
    for firm in firms:
        firm.q = pyo.Var(bounds=(0, capacity), initialize=0.1 * capacity / n_firms)
    total = sum(f.q for f in firms)
    for firm, c in zip(firms, cost, strict=True):
        firm.utility = pyo.Expression(expr=firm.q * (intercept - slope * total) - float(c) * firm.q)
    game.model.capacity = pyo.Constraint(expr=total <= capacity)
    return game


def cournot_equilibrium(
    n_firms: int, intercept: float, slope: float, cost: float, capacity: float
) -> float:
    """Symmetric equilibrium quantity: (a - c) / (b (n + 1)) unless capacity binds, then C / n.

    With a binding shared capacity this is the variational equilibrium (equal multipliers,
    the maximizer of the potential over the shared set); the barrier game's equilibrium tends
    to it as mu -> 0, so a converged barrier ascent lands within O(mu) of it.
    """
    n_firms = check_count(n_firms, "cournot n_firms", 1)
    check_positive(slope, "cournot slope")
    check_positive(capacity, "cournot capacity")
    check_positive(cost, "cournot cost", zero_ok=True)
    if isinstance(intercept, bool) or not isinstance(intercept, numbers.Real) or not (
            math.isfinite(intercept)):
        raise InputError(f"cournot intercept must be a finite number, got {intercept!r}")
    return min(max(intercept - cost, 0.0) / (slope * (n_firms + 1)), capacity / n_firms)


def default_network() -> nx.Graph:
    """A 6-node two-route network with link capacities (attribute `capacity`)."""
    graph = nx.Graph()
    links = [
        ("s1", "a", 4.0), ("s2", "a", 4.0), ("a", "b", 3.0), ("b", "t", 5.0),
        ("a", "c", 2.0), ("c", "t", 4.0), ("s3", "c", 4.0), ("s3", "b", 3.0),
    ]
    for u, v, cap in links:
        graph.add_edge(u, v, capacity=cap)
    return graph


def network_flow(
    graph: nx.Graph | None = None,
    demands: Sequence[tuple[str, str, float]] = (("s1", "t", 3.0), ("s2", "t", 2.0),
                                                  ("s3", "t", 1.0)),
    paths_per_player: int = 2,
    latency: float = 0.1,
) -> Game:
    """Flow control: each source sends on its k shortest paths; utility w log(1 + rate) minus
    a linear congestion cost; a link shared by several players is a coupling capacity."""
    graph = default_network() if graph is None else graph
    if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
        raise InputError("network_flow needs an undirected nx.Graph (each link two-way with one "
                         f"capacity), got {type(graph).__name__}; for a DiGraph pass "
                         "graph.to_undirected() after settling each link's capacity")
    paths_per_player = check_count(paths_per_player, "paths_per_player", 1)
    demands = _demand_triples(demands)
    check_positive(latency, "latency", zero_ok=True)
    for u, v, data in graph.edges(data=True):
        if "capacity" not in data:
            raise InputError("every link of the network needs a 'capacity' attribute")
        check_positive(data["capacity"], f"capacity of link ({u!r}, {v!r})", inf_ok=True)
    game = Game("network_flow")
    usage: dict[frozenset, list[tuple[int, VarData]]] = {}
    oriented: dict[frozenset, tuple[Any, Any]] = {}  # each link as the paths first met it
    players = []
    for r, (source, target, weight) in enumerate(demands):
        if source == target:
            raise InputError(f"demand {r} starts and ends at {source!r}: its rate would use no "
                             "link and grow without limit")
        absent = next((node for node in (source, target) if node not in graph), None)
        if absent is not None:
            raise InputError(f"demand {r} names node {absent!r}, which the network does not "
                             "hold")
        if not nx.has_path(graph, source, target):
            raise InputError(f"demand {r} has no path from {source!r} to {target!r}")
        check_positive(weight, f"weight of demand {r}")
        paths = []
        for path in nx.shortest_simple_paths(graph, source, target):
            paths.append(path)
            if len(paths) == paths_per_player:
                break
        block = game.add_player(f"source{r}")
        block.P = pyo.RangeSet(0, len(paths) - 1)
        block.x = pyo.Var(block.P, domain=pyo.NonNegativeReals, initialize=0.01)
        for p, path in enumerate(paths):
            for u, v in zip(path[:-1], path[1:], strict=True):
                usage.setdefault(frozenset((u, v)), []).append((r, block.x[p]))
                oriented.setdefault(frozenset((u, v)), (u, v))
        players.append((block, paths, float(weight)))
    load = {link: sum(x for _, x in users) for link, users in usage.items()}
    for block, paths, weight in players:
        rate = sum(block.x[p] for p in block.P)
        congestion = sum(
            block.x[p] * sum(latency * load[frozenset((u, v))]
                             for u, v in zip(path[:-1], path[1:], strict=True))
            for p, path in enumerate(paths)
        )
        block.utility = pyo.Expression(expr=weight * pyo.log(1 + rate) - congestion)
    game.model.links = pyo.ConstraintList()
    for (u, v), users in _links_in_order(usage, oriented):
        capacity = float(graph.edges[u, v]["capacity"])
        owners = {r for r, _ in users}
        if len(owners) == 1:  # the player's own row, `cap[u, v]` in its block
            block = players[owners.pop()][0]
            if block.component("cap") is None:
                block.cap = pyo.Constraint(pyo.Any)
            block.cap[u, v] = load[frozenset((u, v))] <= capacity
        else:
            game.model.links.add(load[frozenset((u, v))] <= capacity)
    return game


def _links_in_order(usage: dict[frozenset, list], oriented: dict[frozenset, tuple[Any, Any]]
                    ) -> list[tuple[tuple[Any, Any], list]]:
    """Each link as (u, v) with its users, sorted by node labels where they compare, else
    oriented and ordered as the paths first met them (labels such as "s" and 1 do not sort;
    a frozenset's own order changed with the hash seed)."""
    pairs = [(oriented[link], users) for link, users in usage.items()]
    try:
        pairs = [(tuple(sorted(pair)), users) for pair, users in pairs]
        return sorted(pairs, key=lambda item: item[0])
    except TypeError:
        return pairs


def _demand_triples(demands: object) -> list[tuple[object, object, object]]:
    """`demands` as a list of (source, target, weight) triples, or InputError."""
    try:
        triples = [tuple(demand) for demand in demands]
    except TypeError:
        raise InputError("demands must be a list of (source, target, weight) triples, got "
                         f"{demands!r}") from None
    for r, triple in enumerate(triples):
        if len(triple) != 3:
            raise InputError(f"demand {r} must be a (source, target, weight) triple, got "
                             f"{triple!r}")
    return triples


def resource_allocation(
    weights: Sequence[float] = (3.0, 2.0, 1.5),
    price: float = 0.1,
    budget: float = 4.0,
    interference: float = 0.5,
    upper: float = 10.0,
) -> Game:
    """Potential game: player i earns w_i log(1 + x_i) - price x_i, shared budget
    sum x_i + interference * sum_{i<j} x_i x_j <= budget (convex in each x_i, not jointly)."""
    try:
        weights = list(weights)
    except TypeError:
        raise InputError("resource_allocation weights must be a sequence of numbers (one per "
                         f"player), got {weights!r}") from None
    if len(weights) == 0:
        raise InputError("resource_allocation needs at least one player (one weight)")
    for i, weight in enumerate(weights):
        check_positive(weight, f"weights[{i}]")
    check_positive(price, "price", zero_ok=True)
    check_positive(interference, "interference", zero_ok=True)
    check_positive(budget, "budget")
    check_positive(upper, "upper")
    game = Game("resource_allocation")
    blocks = [game.add_player(f"agent{i}") for i in range(len(weights))]
    for block, weight in zip(blocks, weights, strict=True):
        block.x = pyo.Var(bounds=(0, upper), initialize=0.01)
        block.utility = pyo.Expression(expr=float(weight) * pyo.log(1 + block.x) - price * block.x)
    pairs = [(i, j) for i in range(len(blocks)) for j in range(i + 1, len(blocks))]
    game.model.budget = pyo.Constraint(
        expr=sum(b.x for b in blocks)
        + interference * sum(blocks[i].x * blocks[j].x for i, j in pairs) <= budget
    )
    return game


EXAMPLES = {
    "cournot": cournot,
    "network_flow": network_flow,
    "resource_allocation": resource_allocation,
}


def example(name: str) -> Game:
    """One of the example games by name (see EXAMPLES)."""
    if not isinstance(name, str) or name not in EXAMPLES:
        raise InputError(f"unknown game {name!r}; choose one of {', '.join(EXAMPLES)}")
    return EXAMPLES[name]()
