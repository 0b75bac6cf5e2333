"""Lazy constraints in SCIP against the ways without them, on the TSP.

    python benchmarks/lazy_tsp.py                      # n = 20..80, 3 seeds (~3 min)
    python benchmarks/lazy_tsp.py --sizes 30,60 --seeds 0 --mtz-max 30

Random points in the unit square, Euclidean distances, solved exactly four ways side by side
in one process: `mtz` (the Miller-Tucker-Zemlin model, SCIP; only up to --mtz-max cities, it
grows slow fast), `rounds` (the assignment model solved, every subtour cut, solved again:
`solve_tsp_rounds`, with SCIP and with HiGHS), `lazy` (one SCIP solve, subtour rows added by
`LazyConstraints` at integral solutions) and `lazy-frac` (the same, also cutting fractional
LP solutions: what `solve_tsp_lazy` does). Seconds are wall seconds of the whole call, model
building included; a solve that hits --time-limit shows its time with a `+`. Every tour is
checked to visit each city once, and the finished ones must have the same length. The last
line is the summary: shifted geometric mean (shift 1 s) of each method's time over
lazy-frac's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from coplug.formulations.tsp import (
    solve_tsp_rounds,
    subtour_separator,
    tour_from_model,
    tour_length,
    tsp_mip,
)
from coplug.plugins import Status, solve
from coplug.plugins.argtypes import ints_at_least, positive_float
from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lazy import LazyConstraints

METHODS = ("mtz", "rounds-scip", "rounds-highs", "lazy", "lazy-frac")


@dataclass
class Run:
    """One method on one instance: seconds, tour length, whether it finished."""

    seconds: float
    length: float | None
    finished: bool


@dataclass
class Row:
    """One instance, every method that ran on it."""

    n: int
    seed: int
    runs: dict[str, Run] = field(default_factory=dict)


def distances(n: int, seed: int) -> np.ndarray:
    """Euclidean distances between n random points in the unit square."""
    points = np.random.default_rng(seed).random((n, 2))
    return np.linalg.norm(points[:, None] - points[None], axis=2)


def is_tour(tour: Sequence[int], n: int) -> bool:
    """Whether `tour` visits each of the n cities exactly once."""
    return sorted(tour) == list(range(n))


def run_model(d: np.ndarray, fractional: bool | None, time_limit: float) -> Run:
    """One SCIP solve: the MTZ model (`fractional` None), else the assignment model with
    lazy subtour rows; the tour's length if it is one."""
    started = time.perf_counter()
    m = tsp_mip(d, subtour="mtz" if fractional is None else "none")
    plugins = ([] if fractional is None
               else [LazyConstraints(subtour_separator(m), fractional=fractional)])
    result = solve(m, plugins=plugins, time_limit=time_limit)
    seconds = time.perf_counter() - started
    try:  # arcs that do not form one tour are an InputError: no length, the row shows NO
        tour = tour_from_model(m) if result.has_solution else []
    except InputError:
        tour = []
    length = tour_length(d, tour) if is_tour(tour, len(d)) else None
    return Run(seconds, length, result.status is Status.OPTIMAL)


def run_rounds(d: np.ndarray, solver: str, time_limit: float) -> Run:
    """`solve_tsp_rounds` with `solver` (rounds are not time-limited one by one)."""
    started = time.perf_counter()
    try:
        tour = solve_tsp_rounds(d, solver=solver)
    except InputError:
        return Run(time.perf_counter() - started, None, False)
    seconds = time.perf_counter() - started
    return Run(seconds, tour_length(d, tour) if is_tour(tour, len(d)) else None,
               seconds <= time_limit)


def run_instance(n: int, seed: int, mtz_max: int, time_limit: float) -> Row:
    """Every method on one instance."""
    d = distances(n, seed)
    row = Row(n, seed)
    methods: dict[str, Callable[[], Run]] = {
        "rounds-scip": lambda: run_rounds(d, "scip", time_limit),
        "rounds-highs": lambda: run_rounds(d, "highs", time_limit),
        "lazy": lambda: run_model(d, False, time_limit),
        "lazy-frac": lambda: run_model(d, True, time_limit),
    }
    if n <= mtz_max:
        methods = {"mtz": lambda: run_model(d, None, time_limit), **methods}
    for name, method in methods.items():
        row.runs[name] = method()
    return row


def same_length(row: Row) -> bool:
    """Whether every finished method found a tour of the same length (1e-6 relative)."""
    lengths = [r.length for r in row.runs.values() if r.finished]
    return all(x is not None for x in lengths) and (
        not lengths or max(lengths) - min(lengths) <= 1e-6 * max(1.0, max(lengths)))


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table: seconds per method, the tour length, the check."""
    lines = ["| n | seed | " + " | ".join(f"{m} s" for m in METHODS) + " | length | same |",
             "| --- " * (len(METHODS) + 4) + "|"]
    for r in rows:
        cells = []
        for m in METHODS:
            run = r.runs.get(m)
            cells.append("" if run is None else f"{run.seconds:.2f}{'' if run.finished else '+'}")
        lengths = [x.length for x in r.runs.values() if x.finished and x.length is not None]
        length = f"{lengths[0]:.4f}" if lengths else "-"
        lines.append(f"| {r.n} | {r.seed} | " + " | ".join(cells) +
                     f" | {length} | {'yes' if same_length(r) else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line: each method's shifted geomean time over lazy-frac's."""
    if not rows:
        return f"SUMMARY lazy_tsp: no instance finished; {wall:.0f} s wall"
    parts = []
    for m in METHODS[:-1]:
        ratios = [(r.runs[m].seconds + 1) / (r.runs["lazy-frac"].seconds + 1)
                  for r in rows if m in r.runs]
        if ratios:
            parts.append(f"{m}/lazy-frac {statistics.geometric_mean(ratios):.2f}x "
                         f"(max {max(ratios):.2f}x)")
    unfinished = sum(not run.finished for r in rows for run in r.runs.values())
    return (f"SUMMARY lazy_tsp: {'; '.join(parts)}; same tour length "
            f"{sum(same_length(r) for r in rows)}/{len(rows)}; time limit hit {unfinished}; "
            f"{wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every instance, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(3), default=[20, 40, 60, 80],
                        help="cities (20,40,60,80)")
    parser.add_argument("--seeds", type=ints_at_least(0), default=[0, 1, 2],
                        help="seeds (0,1,2)")
    parser.add_argument("--mtz-max", type=int, default=40,
                        help="largest n solved with the MTZ model (40)")
    parser.add_argument("--time-limit", type=positive_float, default=60.0,
                        help="per SCIP solve (60 s)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    cases = [(n, seed) for n in args.sizes for seed in args.seeds]
    try:
        run_instance(6, 0, 6, args.time_limit)  # warm-up: first calls load the solvers
        for n, seed in tqdm(cases, desc="lazy_tsp", file=sys.stderr):
            rows.append(run_instance(n, seed, args.mtz_max, args.time_limit))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the instances finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(same_length(r) for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
