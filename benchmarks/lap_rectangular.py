"""Rectangular dense assignment (N rows, more columns: tracks against detections with
clutter): `solve_lap` cold against scipy's `linear_sum_assignment` and `lap.lapjv` (which
pads the matrix to a square, `extend_cost=True`); with --warm also `solve_lap` warm-started
from the cold solve's own row duals ("warm") and from those duals 1% of the cost range off
("noisy", normal noise, the same seed), the duals computed before timing.

    python benchmarks/lap_rectangular.py                     # about 3 min on 2 cores
    python benchmarks/lap_rectangular.py --sizes 1000 --generators geometric --shapes 1.25
    python benchmarks/lap_rectangular.py --warm --sizes 1000,2000 --max-seconds 5

One seeded matrix per generator, N and shape (columns = shape x N). Every method solves
the same matrix (best of 3 runs while a run takes under 1 s); objectives must agree
(relative 1e-9). scipy or lap.lapjv is skipped ("-") once its time at the previous N,
scaled by N^3, predicts more than --max-seconds. The last line is the summary.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import lap
import numpy as np
from lap_common import best_time, collect, fmt3, predicted, span
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import generate
from coplug.plugins.argtypes import choice_list, float_list, ints_at_least, positive_float, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import solve_lap

GENERATORS = ("uniform", "geometric", "low_rank", "transport")
METHODS = ("coplug", "scipy", "lapjv")
WARM = ("warm", "noisy")
# The noisy duals' standard deviation, as a fraction of max |c|.
NOISE = 0.01
REL_TOL = 1e-9


@dataclass
class Row:
    """One generator, size and shape: seconds (None: skipped) and objective per method."""

    generator: str
    n: int
    m: int
    seconds: dict[str, float | None] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)
    fallbacks: int = 0

    def agrees(self) -> bool:
        """Every objective equals coplug's."""
        ref = self.costs["coplug"]
        return all(math.isclose(c, ref, rel_tol=REL_TOL) for c in self.costs.values())


def runners(c: np.ndarray, warm: bool = False, seed: int = 0
            ) -> dict[str, Callable[[], float]]:
    """Each method as a call returning its objective (with `warm`, the warm starts too)."""
    def scipy_cost() -> float:
        rows, cols = linear_sum_assignment(c)
        return float(c[rows, cols].sum())

    calls = {"coplug": lambda: solve_lap(c).cost, "scipy": scipy_cost,
             "lapjv": lambda: float(lap.lapjv(c, extend_cost=True)[0])}
    if warm:
        own = solve_lap(c).row_duals
        noise = np.random.default_rng(seed).normal(0.0, NOISE * np.abs(c).max(), own.size)
        calls["warm"] = lambda: solve_lap(c, row_duals=own)
        calls["noisy"] = lambda: solve_lap(c, row_duals=own + noise)
    return calls


def run_row(generator: str, n: int, shape: float, args: argparse.Namespace,
            previous: Row | None) -> Row:
    """coplug, and each reference not predicted past the limit, on one matrix."""
    m = max(n + 1, round(shape * n))
    c = generate(generator, n, seed=args.seed, m=m)
    row = Row(generator, n, m)
    for name, run in runners(c, args.warm, args.seed).items():
        if name in ("scipy", "lapjv") and predicted(previous, name, n, 3.0) > args.max_seconds:
            row.seconds[name] = None
            continue
        value, row.seconds[name] = best_time(run)
        if name in WARM:
            row.fallbacks += value.fallback
            value = value.cost
        row.costs[name] = value
    return row


def table(rows: Sequence[Row]) -> list[str]:
    """The markdown table: seconds per method and the ratios to coplug (and the warm
    starts' seconds and ratios when they ran)."""
    warm = any("warm" in r.seconds for r in rows)
    extra = list(WARM) if warm else []
    head = ["generator", "N x M", "coplug", "scipy", "lap.lapjv", *extra, "scipy/coplug",
            "lapjv/coplug", *(f"{k}/coplug" for k in extra), "same objective"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        s = r.seconds
        ratios = [None if s.get(k) is None else s[k] / s["coplug"]
                  for k in ("scipy", "lapjv", *extra)]
        lines.append("| " + " | ".join([
            r.generator, f"{r.n} x {r.m}", *(fmt3(s.get(k)) for k in (*METHODS, *extra)),
            *(fmt3(x) for x in ratios), "yes" if r.agrees() else "NO"]) + " |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The SUMMARY line."""
    parts = []
    warm = any("warm" in r.seconds for r in rows)
    for name in ("scipy", "lapjv", *(WARM if warm else ())):
        ratios = [r.seconds[name] / r.seconds["coplug"] for r in rows
                  if r.seconds.get(name) is not None]
        parts.append(f"{name}/coplug {span(ratios)}")
    if warm:
        parts.append(f"warm fallbacks {sum(r.fallbacks for r in rows)}")
    agreed = sum(r.agrees() for r in rows)
    return (f"SUMMARY lap_rectangular: {'; '.join(parts)}; same objective {agreed}/{len(rows)}; "
            f"{wall:.0f} s wall")


def run_all(args: argparse.Namespace) -> tuple[list[Row], bool]:
    """Every generator, shape and size in order (each size after the last scaled from the
    one before it); (rows, interrupted)."""
    def run(job: tuple[str, float, int], rows: list[Row]) -> Row:
        generator, shape, n = job
        last = rows[-1] if rows else None
        previous = last if last and last.generator == generator and last.n < n else None
        return run_row(generator, n, shape, args, previous)

    jobs = [(g, s, n) for g in args.generators for s in args.shapes for n in args.sizes]
    return collect(jobs, run, "lap_rectangular")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(2), default="1000,2000,4000",
                        help="matrix sizes N (an assignment needs N >= 2)")
    parser.add_argument("--shapes", type=float_list, default="1.25,2",
                        help="columns per row (each > 1)")
    parser.add_argument("--generators", type=choice_list(GENERATORS), default=",".join(GENERATORS))
    parser.add_argument("--max-seconds", type=positive_float, default=30.0,
                        help="skip a method predicted to take longer than this")
    parser.add_argument("--seed", type=seed_int, default=0)
    parser.add_argument("--warm", action="store_true",
                        help="also time warm starts from the cold solve's own and noisy duals")
    args = parser.parse_args(argv)
    if min(args.shapes) <= 1:
        parser.error(f"--shapes must exceed 1 (more columns than rows), got {min(args.shapes)}")
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    for run in runners(generate("uniform", 20, m=30), args.warm).values():  # compile first
        run()
    rows, interrupted = run_all(args)
    print(f"\nseed {args.seed}; wall seconds on the same matrices (best of 3 under 1 s)")
    print("\n".join(table(rows)))
    if rows:
        print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
