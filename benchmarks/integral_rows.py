"""Large integral rows in SCIP: a lowered tolerance up front against coplug's checked solve.

    python benchmarks/integral_rows.py                  # eight knapsacks and two traps (~2 min)
    python benchmarks/integral_rows.py --sizes 300,2000 --r 100000,1000000 --seeds 0

SCIP's feasibility tolerance is relative, so a knapsack row with a capacity of 2e6 accepts an
overshoot of 1. Two ways to stay exact, side by side on the same Pyomo model in one process:
`tight` lowers numerics/feastol to 0.1 / capacity (not below 1e-9) before solving, as coplug
did at first; `checked` is `solve`'s default now: it solves at SCIP's own tolerance and solves
again at the lowered one only when the answer violates the row in exact arithmetic. The
`trap` instances (two items of value 1 whose weights exceed the capacity by 1) make the
first solve overshoot. Seconds are SCIP's solving time (both solves for `checked`). The
last line is the summary.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyomo.environ as pyo
from tqdm import tqdm

from coplug.formulations.knapsack import KnapsackInstance, knapsack_mip, random_knapsack
from coplug.plugins import solve
from coplug.plugins.argtypes import ints_at_least, positive_float
from coplug.plugins.integral_rows import FEASTOL_FLOOR, STEP
from coplug.plugins.interrupts import exit_on_interrupt

KINDS = ("uncorrelated", "strongly_correlated")


@dataclass
class Row:
    """One instance solved both ways."""

    name: str
    capacity: int
    tight: float
    checked: float
    resolved: bool
    same: bool
    within: bool


def trap(capacity: int) -> KnapsackInstance:
    """Two items of value 1 whose weights sum to capacity + 1: the optimum takes one."""
    return KnapsackInstance(values=[1, 1], weights=[capacity // 2 + 1, capacity - capacity // 2],
                            capacity=capacity)


def packed_weight(model: pyo.ConcreteModel, instance: KnapsackInstance) -> int:
    """The exact weight of the packing loaded into the model."""
    return sum(int(w) * round(model.x[i].value) for i, w in enumerate(instance.weights))


@contextlib.contextmanager
def stdout_to_devnull() -> Iterator[None]:
    """Send file descriptor 1 to /dev/null: SoPlex writes its notes there from C++, and a
    pipe that captures them (Pyomo's capture_output) fills and blocks SCIP mid-solve."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def run_case(name: str, instance: KnapsackInstance, time_limit: float) -> Row:
    """Solve `instance` with the lowered tolerance, then with the checked default."""
    tight_feastol = max(FEASTOL_FLOOR, min(1e-6, STEP / instance.capacity))
    with stdout_to_devnull(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SoPlex's "without GMP" notes and solver warnings
        tight = solve(knapsack_mip(instance), time_limit=time_limit,
                      **{"numerics/feastol": tight_feastol})
        model = knapsack_mip(instance)
        checked = solve(model, time_limit=time_limit)
    same = (tight.optimal and checked.optimal
            and abs(tight.objective - checked.objective) < 0.5)
    return Row(name, int(instance.capacity), tight.time, checked.time,
               "first_solve" in checked.extra, same,
               packed_weight(model, instance) <= instance.capacity)


def instances(sizes: Sequence[int], ranges: Sequence[int], seeds: Sequence[int]
              ) -> list[tuple[str, KnapsackInstance]]:
    """Random knapsacks of every kind, size, weight range and seed, then the two traps."""
    cases = [(f"{kind[:6]} n={n} r={r:g} s={seed}", random_knapsack(n, seed, kind, r))
             for kind in KINDS for n in sizes for r in ranges for seed in seeds]
    return cases + [(f"trap C={c:g}", trap(c)) for c in (2 * 10**6, 10**8)]


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| instance | capacity | tight s | checked s | tight/checked | solved again | "
             "same optimum | packing fits |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.name} | {r.capacity} | {r.tight:.2f} | {r.checked:.2f} | "
                     f"{r.tight / max(r.checked, 1e-3):.2f} | {'yes' if r.resolved else 'no'} | "
                     f"{'yes' if r.same else 'NO'} | {'yes' if r.within else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line: shifted geometric mean ratio (shift 0.1 s) and the checks."""
    if not rows:
        return f"SUMMARY integral_rows: no case finished; {wall:.0f} s wall"
    shifted = [(r.tight + 0.1) / (r.checked + 0.1) for r in rows]
    ratios = [r.tight / max(r.checked, 1e-3) for r in rows]  # the table's column
    return (f"SUMMARY integral_rows: tight/checked shifted geomean "
            f"{statistics.geometric_mean(shifted):.2f}x (the column's min {min(ratios):.2f}x, "
            f"max {max(ratios):.2f}x); solved again {sum(r.resolved for r in rows)}/{len(rows)}; "
            f"same optimum {sum(r.same for r in rows)}/{len(rows)}; packings fit "
            f"{sum(r.within for r in rows)}/{len(rows)}; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(1), default=[300, 2000],
                        help="items (300,2000)")
    parser.add_argument("--r", type=ints_at_least(1), default=[10**5, 10**6],
                        help="weight ranges (100000,1000000): capacities of n * r / 4")
    parser.add_argument("--seeds", type=ints_at_least(0), default=[1],
                        help="seeds (1)")
    parser.add_argument("--time-limit", type=positive_float, default=60.0,
                        help="per solve (60 s)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    try:
        for name, instance in tqdm(instances(args.sizes, args.r, args.seeds),
                                   desc="integral_rows", file=sys.stderr):
            rows.append(run_case(name, instance, args.time_limit))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.same and r.within for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
