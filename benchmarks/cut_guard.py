"""SCIP without cuts on huge all-integer rows (`integral_rows.cuts_off`) against SCIP with them.

    python benchmarks/cut_guard.py                      # 8, 50 and 200 items, ~3 min
    python benchmarks/cut_guard.py --sizes 8 --seeds 150 --exponents 10,11

Knapsacks with weights in [10**e / 2, 10**e): `solve`'s default turns SCIP's separation off
for them (`guarded`); `cuts` keeps it (the caller's `separating/maxrounds` and
`maxroundsroot` at -1, which the guard leaves alone). Each answer is checked against the
optimum: brute force up to 12 items, HiGHS at no relative gap beyond. A "wrong" row is one
SCIP called optimal at another value. Seconds are SCIP's solving time; the last line is the
summary.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from coplug.formulations.knapsack import KnapsackInstance, knapsack_mip
from coplug.plugins import Status, solve
from coplug.plugins.argtypes import ints_at_least, positive_float
from coplug.plugins.interrupts import exit_on_interrupt

KEEP_CUTS = {"separating/maxrounds": -1, "separating/maxroundsroot": -1}
BRUTE_FORCE_ITEMS = 12
# HiGHS proves optimality to its gaps (relative 1e-4 by default: 74457 for 74459); values
# are whole numbers, so an absolute gap under 1 is exact.
EXACT_HIGHS = {"mip_rel_gap": 0.0, "mip_abs_gap": 0.5}


@dataclass
class Row:
    """One knapsack solved both ways, against its optimum."""

    name: str
    guarded: float
    cuts: float
    guarded_wrong: bool
    cuts_wrong: bool


def knapsack(n: int, exponent: int, seed: int) -> KnapsackInstance:
    """Weights in [10**e / 2, 10**e), values about proportional to them, capacity half."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(10**exponent // 2, 10**exponent, n)
    values = (weights / 10**exponent * 1000).astype(int) + rng.integers(0, 100, n)
    return KnapsackInstance(values=values.tolist(), weights=weights.tolist(),
                            capacity=int(weights.sum() * rng.uniform(0.3, 0.7)))


def optimum(instance: KnapsackInstance, time_limit: float) -> float:
    """The best value: brute force for a few items, HiGHS for more."""
    n = len(instance.values)
    if n <= BRUTE_FORCE_ITEMS:
        return float(max(sum(instance.values[list(s)]) for r in range(n + 1)
                         for s in itertools.combinations(range(n), r)
                         if sum(int(w) for w in instance.weights[list(s)])
                         <= instance.capacity))
    return solve(knapsack_mip(instance), solver="highs", time_limit=time_limit,
                 **EXACT_HIGHS).objective


def wrong(result: object, best: float) -> bool:
    """SCIP said optimal at another value."""
    return result.status is Status.OPTIMAL and abs(result.objective - best) > 0.5


def run_case(n: int, exponent: int, seed: int, time_limit: float) -> Row:
    """Solve one knapsack with and without the guard."""
    instance = knapsack(n, exponent, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        guarded = solve(knapsack_mip(instance), time_limit=time_limit)
        cuts = solve(knapsack_mip(instance), time_limit=time_limit, **KEEP_CUTS)
        best = optimum(instance, time_limit)
    return Row(f"n={n} w~1e{exponent} s={seed}", guarded.time, cuts.time,
               wrong(guarded, best), wrong(cuts, best))


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table by size and weight range: wrong answers and time both ways."""
    lines = ["| knapsacks | instances | wrong, guarded | wrong, with cuts | guarded s | "
             "with cuts s | guarded/cuts |", "| --- | --- | --- | --- | --- | --- | --- |"]
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.name.rsplit(" ", 1)[0], []).append(row)
    for name, group in groups.items():
        guarded, cuts = sum(r.guarded for r in group), sum(r.cuts for r in group)
        lines.append(f"| {name} | {len(group)} | {sum(r.guarded_wrong for r in group)} | "
                     f"{sum(r.cuts_wrong for r in group)} | {guarded:.2f} | {cuts:.2f} | "
                     f"{_ratio(group):.2f}x |")
    return lines


def _ratio(rows: Sequence[Row]) -> float:
    """Shifted geometric mean (0.1 s) of guarded / with-cuts time."""
    return statistics.geometric_mean([(r.guarded + 0.1) / (r.cuts + 0.1) for r in rows])


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    if not rows:
        return f"SUMMARY cut_guard: no case finished; {wall:.0f} s wall"
    return (f"SUMMARY cut_guard: wrong 'optimal' guarded {sum(r.guarded_wrong for r in rows)}"
            f"/{len(rows)}, with cuts {sum(r.cuts_wrong for r in rows)}/{len(rows)}; "
            f"guarded/with-cuts time shifted geomean {_ratio(rows):.2f}x; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(1), default=[8, 50, 200],
                        help="items (8,50,200)")
    parser.add_argument("--exponents", type=ints_at_least(8, 18), default=[10, 11],
                        help="weights near 10**e (10,11)")
    parser.add_argument("--seeds", type=int, default=40, help="instances per cell (40)")
    parser.add_argument("--time-limit", type=positive_float, default=60.0,
                        help="per solve (60 s)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    cases = [(n, e, s) for n in args.sizes for e in args.exponents for s in range(args.seeds)]
    start, rows, interrupted = time.perf_counter(), [], False
    try:
        for n, exponent, seed in tqdm(cases, desc="cut_guard", file=sys.stderr):
            rows.append(run_case(n, exponent, seed, args.time_limit))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if not any(r.guarded_wrong for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
