"""Small assignments, the per-frame case of tracking: microseconds per `solve_lap` call
against scipy's `linear_sum_assignment` (dense), `lap.lapjv` (dense) and `lap.lapmod`
(sparse), and against coplug's own kernel-by-kernel path (`small.MAX_ENTRIES = 0`; sparse:
the checked copy of the CSR that `sparse.as_csr` makes of non-canonical input).

    python benchmarks/lap_small.py                     # about 1 min on 2 cores
    python benchmarks/lap_small.py --sizes 10,50 --samples 3

Cases, one seeded matrix per case and size N: `uniform` (N x N, costs in [0, 1)),
`tracking` (N x N: `geometric`, tracks and their detections one noisy frame later),
`tracking-rect` (the same with N/4 clutter detections added; lap.lapjv pads it with
`extend_cost`) and `gated` (the
sparse frame of `coplug.formulations.assignment.gated`, each track allowed its 8 nearest
detections and its own; lap.lapmod on the same CSR arrays). Times are the best of
`--samples` samples, each the mean over enough back-to-back calls to last about 20 ms.
Every method's objective must agree with scipy's (relative 1e-9; `gated`: lap.lapmod's).
The last line is the summary.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import lap
import numpy as np
import scipy.sparse as sp
from lap_common import collect, fmt3, span
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import gated, generate, geometric
from coplug.plugins.argtypes import choice_list, ints_at_least, positive_int, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import small, solve_lap, sparse

CASES = ("uniform", "tracking", "tracking-rect", "gated")
REL_TOL = 1e-9
SAMPLE_SECONDS = 0.02


@dataclass
class Row:
    """One case and size: microseconds per call and objective per method."""

    case: str
    n: int
    micros: dict[str, float] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)

    @property
    def reference(self) -> str:
        """The method the others are compared with."""
        return "lap" if self.case == "gated" else "scipy"

    def agrees(self) -> bool:
        """Every objective equals the reference's."""
        ref = self.costs[self.reference]
        return all(math.isclose(c, ref, rel_tol=REL_TOL, abs_tol=1e-12)
                   for c in self.costs.values())


def cost_matrix(case: str, n: int, seed: int) -> np.ndarray | sp.csr_matrix:
    """The case's matrix at size n."""
    if case == "uniform":
        return generate("uniform", n, seed=seed)
    if case == "gated":
        return gated(n, seed=seed)
    return geometric(n, seed=seed, m=n if case == "tracking" else (5 * n) // 4)


def per_call(run: Callable[[], float], samples: int) -> tuple[float, float]:
    """run()'s value and its best mean microseconds per call over `samples` samples."""
    value = run()
    tick = time.perf_counter()
    run()
    calls = max(1, int(SAMPLE_SECONDS / max(time.perf_counter() - tick, 1e-7)))
    best = math.inf
    for _ in range(samples):
        tick = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - tick) / calls)
    return value, best * 1e6


def methods(case: str, c: np.ndarray | sp.csr_matrix) -> dict[str, Callable[[], float]]:
    """Each method as a call returning its objective."""
    def kernels() -> float:
        saved = small.MAX_ENTRIES, sparse.is_canonical
        small.MAX_ENTRIES = 0
        sparse.is_canonical = lambda *args: False
        try:
            return solve_lap(c).cost
        finally:
            small.MAX_ENTRIES, sparse.is_canonical = saved

    runs: dict[str, Callable[[], float]] = {"coplug": lambda: solve_lap(c).cost,
                                            "kernels": kernels}
    if case == "gated":
        runs["lap"] = lambda: float(lap.lapmod(c.shape[0], c.data, c.indptr, c.indices)[0])
        return runs

    def scipy_cost() -> float:
        rows, cols = linear_sum_assignment(c)
        return float(c[rows, cols].sum())

    runs["scipy"] = scipy_cost
    runs["lap"] = lambda: float(lap.lapjv(c, extend_cost=c.shape[0] != c.shape[1])[0])
    return runs


def run_row(case: str, n: int, args: argparse.Namespace) -> Row:
    """Every method on one case and size."""
    c = cost_matrix(case, n, args.seed)
    row = Row(case, n)
    for name, run in methods(case, c).items():
        row.costs[name], row.micros[name] = per_call(run, args.samples)
    return row


def table(rows: Sequence[Row]) -> list[str]:
    """The markdown table: microseconds per call and the ratios to coplug."""
    head = ["case", "N", "coplug", "kernel path", "scipy", "lap.lapjv / lapmod",
            "scipy/coplug", "lap/coplug", "kernels/coplug", "same objective"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        us = r.micros
        scipy_us = us.get("scipy")
        lines.append("| " + " | ".join([
            r.case, str(r.n), fmt3(us["coplug"]), fmt3(us["kernels"]), fmt3(scipy_us),
            fmt3(us["lap"]), fmt3(None if scipy_us is None else scipy_us / us["coplug"]),
            fmt3(us["lap"] / us["coplug"]), fmt3(us["kernels"] / us["coplug"]),
            "yes" if r.agrees() else "NO"]) + " |")
    return lines


def _ratios(rows: Sequence[Row], other: str) -> list[float]:
    """`other`'s time over coplug's, per row."""
    return [r.micros[other] / r.micros["coplug"] for r in rows]


def crossover(rows: Sequence[Row], other: str) -> str:
    """'from N=n': the smallest size from which coplug beats `other` on every row at that
    size and above; 'at no size' when it never does."""
    for n in sorted({r.n for r in rows}):
        later = [r for r in rows if r.n >= n]
        if later and all(r.micros[other] > r.micros["coplug"] for r in later):
            return f"from N={n}"
    return "at no size"


def summary(rows: Sequence[Row], wall: float) -> str:
    """The SUMMARY line."""
    dense = [r for r in rows if r.case != "gated"]
    sparse_rows = [r for r in rows if r.case == "gated"]
    parts = []
    if dense:
        for label, name in (("scipy", "scipy"), ("lapjv", "lap")):
            parts.append(f"{label}/coplug {span(_ratios(dense, name))}, coplug faster "
                         f"{crossover(dense, name)}")
    if sparse_rows:
        parts.append(f"lapmod/coplug {span(_ratios(sparse_rows, 'lap'))}, coplug faster "
                     f"{crossover(sparse_rows, 'lap')}")
    parts.append(f"kernel path/coplug {span(_ratios(rows, 'kernels'))}")
    agreed = sum(r.agrees() for r in rows)
    return (f"SUMMARY lap_small: {'; '.join(parts)}; same objective {agreed}/{len(rows)}; "
            f"{wall:.0f} s wall")


def run_all(args: argparse.Namespace) -> tuple[list[Row], bool]:
    """Every case and size; (rows, interrupted)."""
    return collect([(case, n) for case in args.cases for n in args.sizes],
                   lambda job, rows: run_row(*job, args), "lap_small")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(2), default="8,16,32,64,128,256",
                        help="matrix sizes N (an assignment needs N >= 2)")
    parser.add_argument("--cases", type=choice_list(CASES), default=",".join(CASES))
    parser.add_argument("--samples", type=positive_int, default=5, help="timed samples per method")
    parser.add_argument("--seed", type=seed_int, default=0)
    args = parser.parse_args(argv)
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    for case in CASES:  # compile every kernel before the first timed row
        for run in methods(case, cost_matrix(case, 12, 0)).values():
            run()
    rows, interrupted = run_all(args)
    print(f"\nseed {args.seed}; microseconds per call, best of {args.samples} samples")
    print("\n".join(table(rows)))
    if rows:
        print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
