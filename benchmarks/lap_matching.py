"""Sparse matchings (`sum(x) <= 1` on both sides) as `solve(model, solver="lap")` solves
them: the square assignment on min(c, 0) padded with zero-cost dummies, started from row
minima (the default) or from JV's column reduction, against scipy's
`min_weight_full_bipartite_matching` on the same padded matrix.

    python benchmarks/lap_matching.py                    # about 15 s on 2 cores
    python benchmarks/lap_matching.py --sizes 2000,20000 --per-row 20

Each size is one seeded Pyomo model: n rows and n columns, each row allowed `--per-row`
uniformly random columns and its own, integer costs -500..499 (only negative ones can pay).
The padded matrix is read off the model by `detect_assignment`, as `solve` does; each method
solves it (best of 3 while a run takes under 1 s) and the objectives must agree. The last
line is the summary.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from lap_common import best_time, collect
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from coplug.plugins.argtypes import int_list, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import solve_lap
from coplug.plugins.lap.backend import detect_assignment

REL_TOL = 1e-9
METHODS = ("row minima", "column reduction", "scipy")


@dataclass
class Row:
    """One size: the padded matrix's shape and entries, seconds per method, agreement."""

    n: int
    padded: int
    nnz: int
    seconds: dict[str, float]
    agree: bool


def matching_model(n: int, per_row: int, seed: int) -> pyo.ConcreteModel:
    """The seeded n x n sparse matching model (its own column among each row's pairs)."""
    rng = np.random.default_rng(seed)
    pairs = sorted({(i, int(j)) for i in range(n) for j in rng.integers(0, n, per_row)}
                   | {(i, i) for i in range(n)})
    costs = rng.integers(-500, 500, len(pairs)).astype(float)
    by_row: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    by_col: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for pair in pairs:
        by_row[pair[0]].append(pair)
        by_col[pair[1]].append(pair)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(pairs, domain=pyo.Binary)
    m.row = pyo.Constraint(range(n), rule=lambda m, i: pyo.quicksum(m.x[p] for p in by_row[i])
                           <= 1)
    m.col = pyo.Constraint(range(n), rule=lambda m, j: pyo.quicksum(m.x[p] for p in by_col[j])
                           <= 1)
    m.cost = pyo.Objective(expr=pyo.quicksum(float(c) * m.x[p]
                                             for p, c in zip(pairs, costs, strict=True)))
    return m


def scipy_cost(c: sp.csr_matrix) -> float:
    """scipy's sparse LAP; it reads a stored zero as no edge, so every cost is shifted to 1
    or more (each full matching pays n shifts; +1 alone made a -1 a dropped zero)."""
    shift = 1.0 - min(float(c.data.min(initial=0.0)), 0.0)
    shifted = sp.csr_matrix((c.data + shift, c.indices, c.indptr), shape=c.shape)
    rows, cols = min_weight_full_bipartite_matching(shifted)
    return float(np.asarray(c[rows, cols]).sum())


def run_size(n: int, args: argparse.Namespace) -> Row:
    """Build the size-n model, read its padded matrix and time each method on it."""
    cost = detect_assignment(matching_model(n, args.per_row, args.seed)).cost_matrix()
    runs = {"row minima": lambda: solve_lap(cost, arr_passes=0).cost,
            "column reduction": lambda: solve_lap(cost).cost,
            "scipy": lambda: scipy_cost(cost)}
    costs, seconds = {}, {}
    for name, run in runs.items():
        costs[name], seconds[name] = best_time(run)
    first = costs["row minima"]
    agree = all(abs(c - first) <= REL_TOL * max(1.0, abs(first)) for c in costs.values())
    return Row(n, cost.shape[0], cost.nnz, seconds, agree)


def table(rows: Sequence[Row]) -> list[str]:
    """The markdown table: seconds per method and the ratios against row minima."""
    lines = ["| n | padded | entries | row minima s | column reduction s | scipy s | "
             "column reduction / row minima | scipy / row minima | same objective |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        s = r.seconds
        lines.append(f"| {r.n:,} | {r.padded:,} | {r.nnz:,} | {s['row minima']:.3f} | "
                     f"{s['column reduction']:.3f} | {s['scipy']:.3f} | "
                     f"{s['column reduction'] / s['row minima']:.1f}x | "
                     f"{s['scipy'] / s['row minima']:.1f}x | {'yes' if r.agree else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    reduction = [r.seconds["column reduction"] / r.seconds["row minima"] for r in rows]
    scipy = [r.seconds["scipy"] / r.seconds["row minima"] for r in rows]
    return (f"SUMMARY lap_matching: column reduction / row minima median "
            f"{np.median(reduction):.1f}x (min {min(reduction):.1f}x); scipy / row minima "
            f"median {np.median(scipy):.1f}x; objectives agree on {sum(r.agree for r in rows)}"
            f"/{len(rows)} sizes; {wall:.0f} s wall")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="1000,3000,10000")
    parser.add_argument("--per-row", type=int, default=10,
                        help="random columns each row may take besides its own")
    parser.add_argument("--seed", type=seed_int, default=0)
    args = parser.parse_args(argv)
    if args.per_row < 1:
        parser.error(f"--per-row must be positive, got {args.per_row}")
    if min(args.sizes) < 2:
        parser.error(f"--sizes: a matching needs n >= 2, got {min(args.sizes)}")
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every size, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    solve_lap(detect_assignment(matching_model(20, 3, 0)).cost_matrix())  # compile kernels
    rows, interrupted = collect(args.sizes, lambda n, _: run_size(n, args), "lap_matching")
    print(f"\nrandom matchings, {args.per_row} pairs per row besides its own, seed "
          f"{args.seed}; wall seconds of the solve on the padded matrix")
    print("\n".join(table(rows)))
    if rows:
        print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
