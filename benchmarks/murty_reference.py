"""Murty's k-best ranking as published, every child cell solved from scratch by a given
solver: the reference the ranked-assignment benchmarks time and check coplug against."""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

# A cell's optimum from its forced pairs (row -> column) and forbidden pairs: (cost,
# column of each row), or None when the cell holds no assignment.
CellSolver = Callable[[dict[int, int], tuple[tuple[int, int], ...]],
                      tuple[float, np.ndarray] | None]


def textbook_murty(solve_cell: CellSolver, n_part: int, k: int) -> list[float]:
    """The k best costs, best first: child t of a solution's cell forbids its t-th pair and
    forces the ones before, partitioned over the first `n_part` rows' pairs (the rest, such
    as a matching's slack rows, only complete an assignment)."""
    first = solve_cell({}, ())
    if first is None:
        return []
    queue = [(first[0], 0, {}, (), first[1])]
    tie = 1
    costs: list[float] = []
    while queue and len(costs) < k:
        cost, _, forced, forbidden, col4row = heapq.heappop(queue)
        costs.append(cost)
        fixed = dict(forced)
        for i in (i for i in range(n_part) if i not in forced):
            banned = (*forbidden, (i, int(col4row[i])))
            child = solve_cell(fixed, banned)
            if child is not None:
                heapq.heappush(queue, (child[0], tie, dict(fixed), banned, child[1]))
                tie += 1
            fixed[i] = int(col4row[i])
    return costs
