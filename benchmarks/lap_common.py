"""What the assignment benchmarks share: Murty's ranking as published (every child cell
solved from scratch by a given solver, the reference coplug's ranking is timed and checked
against) and the per-row helpers (best-of timing, size extrapolation, agreement)."""

from __future__ import annotations

import heapq
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

# A cell's optimum from its forced pairs (row -> column) and forbidden pairs: (cost,
# column of each row), or None when the cell holds no assignment.
CellSolver = Callable[[dict[int, int], tuple[tuple[int, int], ...]],
                      tuple[float, np.ndarray] | None]
REL_TOL = 1e-9
Job = TypeVar("Job")
RowT = TypeVar("RowT")


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


def best_time(run: Callable[[], Any], repeats: int = 3,
              repeat_below: float = 1.0) -> tuple[Any, float]:
    """run()'s value and its best wall time over up to `repeats` runs (repeated only while a
    run takes under `repeat_below` seconds: these machines are noisy at millisecond scale)."""
    value, best = None, math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - start)
        if best >= repeat_below:
            break
    return value, best


def predicted(previous: Any, name: str, n: int, power: float) -> float:
    """`name`'s seconds on the `previous` row (its `n` and `seconds`) scaled by N^power; 0
    without a previous row, inf after a skip."""
    if previous is None:
        return 0.0
    seconds = previous.seconds.get(name)
    if seconds is None:
        return math.inf
    return seconds * (n / previous.n) ** power


def compared(costs: Mapping[str, list[float]], key: str) -> bool:
    """Whether a method besides `key` ran, so there is something to agree with."""
    return key in costs and len(costs) > 1


def agrees(costs: Mapping[str, list[float]], key: str) -> bool:
    """Every method that ran found as many costs as `key`, equal to its."""
    mine = costs.get(key)
    return mine is not None and all(
        len(other) == len(mine) and np.allclose(other, mine, rtol=REL_TOL, atol=1e-12)
        for other in costs.values())


def fmt3(value: float | None) -> str:
    """3 significant digits, '-' when absent."""
    return "-" if value is None else f"{value:.3g}"


def span(ratios: Sequence[float]) -> str:
    """'G.GGx geomean (lo-hi x, k rows)' over positive ratios, 'no rows' when there are none."""
    if not ratios:
        return "no rows"
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    return f"{mean:.2f}x geomean ({min(ratios):.2f}-{max(ratios):.2f}x, {len(ratios)} rows)"


def ratio(seconds: Mapping[str, float | None], name: str, key: str) -> float | None:
    """name's seconds / key's, None when either did not run."""
    a, b = seconds.get(name), seconds.get(key)
    return None if a is None or not b else a / b


def collect(jobs: Sequence[Job], run: Callable[[Job, list[RowT]], RowT], desc: str,
            report: Callable[[RowT], str] | None = None) -> tuple[list[RowT], bool]:
    """Each job's row in order, `run(job, rows so far)`, under a progress bar, with
    `report(row)` written after each when given; (rows, interrupted): Ctrl-C keeps the rows
    finished so far for the table."""
    rows: list[RowT] = []
    try:
        for job in tqdm(jobs, desc=desc, file=sys.stderr):
            rows.append(run(job, rows))
            if report is not None:
                tqdm.write(report(rows[-1]), file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the rows finished so far", file=sys.stderr)
        return rows, True
    return rows, False
