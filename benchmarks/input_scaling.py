"""How instance generators and file readers scale: each at two sizes (the second 4x the
first; 2x for the n x n cases, 4x their numbers), against a numpy or scipy reference doing
the same work where one exists.

    python benchmarks/input_scaling.py                  # default sizes (~1 min)
    python benchmarks/input_scaling.py --scale 0.5      # every size halved

Cases: `openpit` (random_block_model, blocks), `cauction` (the Pyomo model, items),
`fair_sbm` (average degree 1, so many isolated nodes are joined, nodes), `euc_2d` (TSPLIB
distances of n cities; reference `floor(cdist + 0.5)` from scipy), `csv` and `orlib`
(`load_costs` of an n x n integer matrix; references `np.loadtxt` and one
`np.array(text.split())`). `growth` is log(time ratio) / log(size ratio) between the two
sizes, about 1 for work linear in the size, 2 for quadratic (`euc_2d` and the files hold n^2
numbers: 2 is linear in them). Seconds are the best of --repeat runs; the last line is the
summary.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cdist
from tqdm import tqdm

from coplug.formulations import fair_graphs, mip_families, openpit, tsp
from coplug.formulations.assignment import load_costs
from coplug.plugins.argtypes import positive_float, positive_int
from coplug.plugins.interrupts import exit_on_interrupt

# (case, first size, linear exponent of its data in the size)
CASES = (("openpit", 160_000, 1), ("cauction", 800, 1), ("fair_sbm", 100_000, 1),
         ("euc_2d", 2_500, 2), ("csv", 1_000, 2), ("orlib", 1_000, 2))


@dataclass
class Row:
    """One case at one size: coplug's seconds and the reference's (None: no reference)."""

    case: str
    size: int
    seconds: float
    reference: float | None


def best_of(repeat: int, work: Callable[[], object]) -> float:
    """The least wall seconds of `repeat` runs of `work`."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def _costs_file(folder: Path, kind: str, n: int) -> Path:
    """An n x n integer cost matrix as a CSV or an OR-Library file (assign<n>.txt)."""
    costs = np.random.default_rng(0).integers(1, 1000, (n, n))
    if kind == "csv":
        path = folder / f"costs{n}.csv"
        np.savetxt(path, costs, fmt="%d", delimiter=",")
    else:
        path = folder / f"assign{n}.txt"
        numbers = "\n".join(" ".join(map(str, row)) for row in costs.tolist())
        path.write_text(f"{n}\n{numbers}\n")
    return path


def run_case(case: str, size: int, repeat: int, folder: Path) -> Row:
    """Time one case at one size, and its reference where it has one."""
    reference: float | None = None
    if case == "openpit":
        seconds = best_of(repeat, lambda: openpit.random_block_model(size, seed=0))
    elif case == "cauction":
        seconds = best_of(repeat, lambda: mip_families.cauction(size, seed=0))
    elif case == "fair_sbm":
        seconds = best_of(repeat, lambda: fair_graphs.fair_sbm(size, avg_degree=1.0, seed=0))
    elif case == "euc_2d":
        xy = np.random.default_rng(0).uniform(0, 1000, (size, 2))
        seconds = best_of(repeat, lambda: tsp.euc_2d(xy))
        reference = best_of(repeat, lambda: np.floor(cdist(xy, xy) + 0.5))
    else:
        path = _costs_file(folder, case, size)
        seconds = best_of(repeat, lambda: load_costs(path))
        if case == "csv":
            reference = best_of(repeat, lambda: np.loadtxt(path, delimiter=","))
        else:
            reference = best_of(repeat, lambda: np.array(path.read_text().split(), dtype=float))
        path.unlink()
    return Row(case, size, seconds, reference)


def growth(first: Row, second: Row) -> float:
    """log(time ratio) / log(size ratio) between two sizes of one case."""
    return math.log(second.seconds / first.seconds) / math.log(second.size / first.size)


def table(rows: Sequence[Row]) -> list[str]:
    """The markdown table, one line per case and size."""
    lines = ["| case | size | coplug s | reference s | coplug/reference | growth |",
             "| --- | --- | --- | --- | --- | --- |"]
    for k, r in enumerate(rows):
        ref = "-" if r.reference is None else f"{r.reference:.3f}"
        ratio = "-" if r.reference is None else f"{r.seconds / r.reference:.2f}"
        grew = f"{growth(rows[k - 1], r):.2f}" if k % 2 else ""
        lines.append(f"| {r.case} | {r.size:,} | {r.seconds:.3f} | {ref} | {ratio} | {grew} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one-line summary: the steepest growth over each case's own linear exponent."""
    pairs = [(rows[k], rows[k + 1]) for k in range(0, len(rows) - 1, 2)]
    if not pairs:
        return f"SUMMARY input_scaling: no case finished; {wall:.0f} s wall"
    linear = {case: exponent for case, _, exponent in CASES}
    excess = max(pairs, key=lambda p: growth(*p) / linear[p[0].case])
    ratios = [r.seconds / r.reference for r in rows if r.reference is not None]
    worst = f"{max(ratios):.2f}x" if ratios else "-"
    return (f"SUMMARY input_scaling: steepest growth {growth(*excess):.2f} ({excess[0].case}, "
            f"linear is {linear[excess[0].case]}); coplug/reference at most {worst}; "
            f"{wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case at both sizes, print the table and the SUMMARY line; 130 when
    interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=positive_float, default=1.0,
                        help="multiply every size by this (1)")
    parser.add_argument("--repeat", type=positive_int, default=2, help="runs per timing (2)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    runs = [(case, max(4, int(first * args.scale)) * factor) for case, first, _ in CASES
            for factor in (1, 4 if case in ("openpit", "cauction", "fair_sbm") else 2)]
    try:
        with tempfile.TemporaryDirectory() as folder:
            for case, size in tqdm(runs, desc="input_scaling", file=sys.stderr):
                rows.append(run_case(case, size, args.repeat, Path(folder)))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    rows = rows[: len(rows) // 2 * 2]  # whole pairs only
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
