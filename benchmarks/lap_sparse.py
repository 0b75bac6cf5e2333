"""Sparse linear assignment on gated tracking frames: `solve_lap` on the CSR against
`lap.lapmod` and scipy's `min_weight_full_bipartite_matching`.

    python benchmarks/lap_sparse.py                          # about 2 min on 2 cores
    python benchmarks/lap_sparse.py --sizes 1000,100000 --gate 4 --scipy-limit 10
    python benchmarks/lap_sparse.py --pattern random --gate 10 --sizes 12500,25000,50000

Each size is one seeded frame (`coplug.formulations.assignment.gated`: N tracks, each
allowed its `--gate` nearest detections and its own, at distance costs), or with
`--pattern random` a matrix whose rows each allow `--gate` uniformly random columns and
their own, at integer costs 1..999 (no geometry: shortest augmenting paths run long). Every
method solves
the same CSR (best of 3 runs while a run takes under 1 s); objectives must agree (relative
1e-9). scipy runs in a forked process stopped after --scipy-limit seconds (its matching
search can take time exponential in the depth of such layered patterns, scipy issue
#26147), shown as "> limit"; once it is stopped, larger sizes skip it. The last line is the
summary.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import lap
import numpy as np
import scipy.sparse as sp
from lap_common import best_time, collect
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from coplug.formulations.assignment import gated
from coplug.plugins.argtypes import int_list, positive_float, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import solve_lap

REL_TOL = 1e-9


@dataclass
class Row:
    """One size: seconds per method (None: skipped, inf: stopped at the limit), objectives."""

    n: int
    nnz: int
    seconds: dict[str, float | None] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)


def coplug_cost(c: sp.csr_matrix) -> float:
    """`solve_lap` on the CSR (certified optimal)."""
    return solve_lap(c).cost


def lapmod_cost(c: sp.csr_matrix) -> float:
    """`lap.lapmod` on the same CSR arrays."""
    return float(lap.lapmod(c.shape[0], c.data, c.indptr, c.indices)[0])


def scipy_cost(c: sp.csr_matrix) -> float:
    """scipy's sparse LAP; it reads a stored zero as no edge, so every cost is shifted by 1
    (each full matching pays n of them)."""
    shifted = sp.csr_matrix((c.data + 1.0, c.indices, c.indptr), shape=c.shape)
    rows, cols = min_weight_full_bipartite_matching(shifted)
    return float(np.asarray(c[rows, cols]).sum())


def _in_child(c: sp.csr_matrix, pipe: Any) -> None:
    """Child process body: time scipy once and send (cost, seconds) back."""
    start = time.perf_counter()
    cost = scipy_cost(c)
    pipe.send((cost, time.perf_counter() - start))


def _limited_scipy(c: sp.csr_matrix, limit: float) -> tuple[float | None, float]:
    """scipy's (cost, seconds) in a forked process, or (None, inf) when it ran past
    `limit` seconds and was stopped."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_in_child, args=(c, sender), daemon=True)
    child.start()
    try:
        if receiver.poll(limit):
            return receiver.recv()
        return None, math.inf
    finally:
        child.kill()
        child.join()


def random_pattern(n: int, per_row: int, seed: int) -> sp.csr_matrix:
    """n x n CSR: each row's `per_row` uniformly random columns (repeats merged) and its
    own, at seeded integer costs 1..999."""
    rng = np.random.default_rng(seed)
    rows = np.r_[np.repeat(np.arange(n), per_row), np.arange(n)]
    cols = np.r_[rng.integers(0, n, n * per_row), np.arange(n)]
    costs = rng.integers(1, 1000, rows.size).astype(float)
    unique, first = np.unique(rows * n + cols, return_index=True)
    return sp.csr_matrix((costs[first], (unique // n, unique % n)), shape=(n, n))


def frame(n: int, args: argparse.Namespace) -> sp.csr_matrix:
    """The size-n instance of `--pattern`."""
    if args.pattern == "random":
        return random_pattern(n, args.gate, args.seed)
    return gated(n, gate=args.gate, seed=args.seed)


def run_row(n: int, args: argparse.Namespace, previous: Row | None) -> Row:
    """Solve one frame with every method (scipy skipped after it was stopped)."""
    c = frame(n, args)
    row = Row(n, c.nnz)
    row.costs["coplug"], row.seconds["coplug"] = best_time(lambda: coplug_cost(c))
    row.costs["lapmod"], row.seconds["lapmod"] = best_time(lambda: lapmod_cost(c))
    if previous is not None and previous.seconds.get("scipy") in (None, math.inf):
        row.seconds["scipy"] = None
        return row
    cost, row.seconds["scipy"] = _limited_scipy(c, args.scipy_limit)
    if cost is not None:
        row.costs["scipy"] = cost
    return row


def agrees(row: Row) -> bool:
    """Every objective found equals coplug's."""
    mine = row.costs["coplug"]
    return all(math.isclose(v, mine, rel_tol=REL_TOL, abs_tol=1e-12) for v in row.costs.values())


def _fmt(value: float | None, limit: float) -> str:
    """3 significant digits; '> limit' when stopped, '-' when skipped."""
    if value is None:
        return "-"
    return f"> {limit:g}" if math.isinf(value) else f"{value:.3g}"


def table(rows: Sequence[Row], limit: float) -> list[str]:
    """Markdown table: seconds per method, ratios against coplug, agreement."""
    head = ["N", "stored pairs", "coplug", "lap.lapmod", "scipy", "lapmod/coplug",
            "scipy/coplug", "same objective"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        scipy_s = row.seconds.get("scipy")
        scipy_ratio = ("-" if scipy_s is None else f"> {limit / row.seconds['coplug']:.3g}"
                       if math.isinf(scipy_s) else f"{scipy_s / row.seconds['coplug']:.3g}")
        cells = [str(row.n), str(row.nnz), _fmt(row.seconds["coplug"], limit),
                 _fmt(row.seconds["lapmod"], limit), _fmt(scipy_s, limit),
                 f"{row.seconds['lapmod'] / row.seconds['coplug']:.3g}", scipy_ratio,
                 "yes" if agrees(row) else "NO"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The SUMMARY line: lapmod/coplug geometric mean, scipy's finished and stopped sizes,
    agreement."""
    ratios = [r.seconds["lapmod"] / r.seconds["coplug"] for r in rows]
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else math.nan
    finished = [r for r in rows if r.seconds.get("scipy") not in (None, math.inf)]
    stopped = [r.n for r in rows if r.seconds.get("scipy") == math.inf]
    scipy_ratios = [r.seconds["scipy"] / r.seconds["coplug"] for r in finished]
    scipy_part = (f"scipy/coplug {min(scipy_ratios):.3g}-{max(scipy_ratios):.4g}x on "
                  f"{len(finished)} sizes" if finished else "scipy finished no size")
    if stopped:
        scipy_part += f", stopped at N={stopped[0]}"
    return (f"SUMMARY lap_sparse: lapmod/coplug {mean:.2f}x geomean ({min(ratios):.2f}-"
            f"{max(ratios):.2f}x, {len(rows)} sizes); {scipy_part}; same objective "
            f"{sum(map(agrees, rows))}/{len(rows)}; {wall:.0f} s wall")


def run_all(args: argparse.Namespace) -> tuple[list[Row], bool]:
    """Every size in order; (rows, interrupted)."""
    return collect(args.sizes, lambda n, rows: run_row(n, args, rows[-1] if rows else None),
                   "lap_sparse", lambda r: f"N={r.n}: " + ", ".join(
                       f"{m} {_fmt(s, args.scipy_limit)} s" for m, s in r.seconds.items()))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="1000,3000,10000,30000,100000,300000")
    parser.add_argument("--pattern", choices=("gated", "random"), default="gated",
                        help="gated tracking frames, or uniformly random pairs per row")
    parser.add_argument("--gate", type=int, default=8,
                        help="pairs each row may take besides its own (gated: nearest)")
    parser.add_argument("--scipy-limit", type=positive_float, default=60.0,
                        help="seconds scipy may run before it is stopped")
    parser.add_argument("--seed", type=seed_int, default=0)
    args = parser.parse_args(argv)
    if args.gate < 1:
        parser.error(f"--gate must be positive, got {args.gate}")
    if min(args.sizes) < 2:
        parser.error(f"--sizes: an assignment needs N >= 2, got {min(args.sizes)}")
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every size, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    coplug_cost(gated(50, gate=3))  # compile the kernels before the first timed row
    rows, interrupted = run_all(args)
    print(f"\n{args.pattern}, gate {args.gate}, seed {args.seed}; wall seconds (scipy "
          f"stopped after {args.scipy_limit:g} s)")
    print("\n".join(table(rows, args.scipy_limit)))
    if rows:
        print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
