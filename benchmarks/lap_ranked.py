"""The k best assignments: `ranked_assignments` (Murty, warm-started cells) against the
textbook Murty on scipy and against SCIP's `k_best` on the Pyomo assignment model.

    python benchmarks/lap_ranked.py                        # about 10 min on 2 cores
    python benchmarks/lap_ranked.py --sizes 20,50 --k 50 --generators geometric
    python benchmarks/lap_ranked.py --sizes 50 --columns 2000,4000,8000,16000 --k 10 \
        --generators uniform --methods warm,scipy          # wide frames, N x M

For each generator and size one seeded N x N matrix (N x M for each M of --columns);
every method ranks its k best
assignments (best wall time of up to 3 runs while a run takes under 1 s). "scipy" is
Murty's method as published: every child cell solved from scratch by
`scipy.optimize.linear_sum_assignment` (forbidden pairs inf, forced rows and columns
removed). "scip" is `coplug.plugins.k_best(assignment_model(c), k)`: one SCIP search with
no-good rows, run at sizes up to --scip-max-n. Costs must agree in every cell (relative
1e-9). A method is skipped at a size when its time at the previous size, scaled by N^4
(scipy) or N^3, predicts more than --max-seconds. The last line is the summary.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo
from lap_common import agrees as costs_agree
from lap_common import best_time, collect, fmt3, predicted, ratio, textbook_murty
from lap_common import compared as costs_compared
from scipy.optimize import linear_sum_assignment

from coplug.formulations.assignment import GENERATORS, assignment_model, generate
from coplug.plugins import k_best
from coplug.plugins.argtypes import choice_list, int_list, positive_float
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import ranked_assignments, ranked_matchings

METHODS = ("warm", "scipy", "scip")
SCALING = {"warm": 3, "scipy": 4, "scip": 3}


@dataclass
class Row:
    """One generator and size: seconds per method (None: skipped), costs, warm's work."""

    generator: str
    n: int
    m: int = 0
    seconds: dict[str, float | None] = field(default_factory=dict)
    costs: dict[str, list[float]] = field(default_factory=dict)
    cells: int = 0
    capped: int = 0
    fallbacks: int = 0


def scipy_murty(c: np.ndarray, k: int, n_part: int | None = None) -> list[float]:
    """Murty's method with every child cell solved from scratch by scipy (the reference),
    partitioned over the first `n_part` rows' pairs (all rows by default)."""
    return textbook_murty(lambda forced, banned: _scipy_cell(c, forced, banned),
                          c.shape[0] if n_part is None else n_part, k)


def _scipy_cell(c: np.ndarray, forced: dict[int, int],
                forbidden: tuple[tuple[int, int], ...]) -> tuple[float, np.ndarray] | None:
    """The cell's optimum (cost, column of each row) by scipy, or None when it is empty."""
    n = c.shape[0]
    rows = np.array([i for i in range(n) if i not in forced], dtype=np.int64)
    taken = set(forced.values())
    cols = np.array([j for j in range(c.shape[1]) if j not in taken], dtype=np.int64)
    sub = c[np.ix_(rows, cols)].copy()
    row_at = {int(i): a for a, i in enumerate(rows)}
    col_at = {int(j): b for b, j in enumerate(cols)}
    for i, j in forbidden:
        if i in row_at and j in col_at:
            sub[row_at[i], col_at[j]] = np.inf
    try:
        r, q = linear_sum_assignment(sub)
    except ValueError:  # scipy: "cost matrix is infeasible"
        return None
    col4row = np.empty(n, dtype=np.int64)
    for i, j in forced.items():
        col4row[i] = j
    col4row[rows[r]] = cols[q]
    return float(c[np.arange(n), col4row].sum()), col4row


def run_row(generator: str, n: int, k: int, seed: int, methods: Sequence[str],
            max_seconds: float, scip_max_n: int, previous: Row | None,
            kind: str = "assignment", m: int | None = None) -> Row:
    """Rank the k best assignments (or matchings) of one n x m matrix (square without m)
    with every method not predicted too slow."""
    c = generate(generator, n, seed=seed, m=m) if m else generate(generator, n, seed=seed)
    if kind == "matching":
        c = c - np.median(c)  # about half the pairs are worth matching
    row = Row(generator, n, c.shape[1])
    for name in methods:
        predicted_s = predicted(previous, name, n, SCALING[name])
        if (name == "scip" and n > scip_max_n) or predicted_s > max_seconds:
            row.seconds[name] = None
            continue
        if name == "warm":
            rank = ranked_matchings if kind == "matching" else ranked_assignments
            result, row.seconds[name] = best_time(lambda rank=rank: rank(c, k))
            row.costs[name] = result.costs
            row.cells, row.capped = result.info["solved_cells"], result.info["capped"]
            row.fallbacks = result.info["fallbacks"]
        elif name == "scipy":
            reference = (lambda: scipy_murty(_slack_augmented(c), k, n_part=n)) if (
                kind == "matching") else (lambda: scipy_murty(c, k))
            row.costs[name], row.seconds[name] = best_time(reference)
        else:
            build = matching_model if kind == "matching" else assignment_model
            found, row.seconds[name] = best_time(
                lambda build=build: k_best(build(c), k=k, time_limit=max_seconds))
            row.costs[name] = [s.objective for s in found.solutions] if found.proven else []
    return row


def _slack_augmented(c: np.ndarray) -> np.ndarray:
    """The 2n square matrix whose assignments are the matchings of c (unmatched lines free):
    row i or column j unmatched through its own zero-cost slack, slack rows fill the rest."""
    n = c.shape[0]
    big = np.full((2 * n, 2 * n), np.inf)
    big[:n, :n] = c
    big[np.arange(n), n + np.arange(n)] = 0.0
    big[n + np.arange(n), np.arange(n)] = 0.0
    big[n:, n:] = 0.0
    return big


def matching_model(c: np.ndarray) -> pyo.ConcreteModel:
    """min c.x over matchings: x[i, j] binary, at most one per row and one per column."""
    n, m = c.shape
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(n), range(m), domain=pyo.Binary)
    model.row = pyo.Constraint(range(n), rule=lambda b, i: sum(b.x[i, :]) <= 1)
    model.col = pyo.Constraint(range(m), rule=lambda b, j: sum(b.x[:, j]) <= 1)
    model.obj = pyo.Objective(expr=sum(float(c[i, j]) * model.x[i, j]
                                       for i in range(n) for j in range(m)))
    return model


def compared(row: Row) -> bool:
    """Whether a method besides warm ran on this row, so there is something to agree with."""
    return costs_compared(row.costs, "warm")


def agrees(row: Row) -> bool:
    """Every method that ran found the costs warm found."""
    return costs_agree(row.costs, "warm")


def table(rows: Sequence[Row], methods: Sequence[str], k: int) -> list[str]:
    """Markdown table: seconds per method, ratios against warm, warm's cells solved and
    searches stopped at the queue's next value, agreement."""
    others = [m for m in methods if m != "warm"]
    head = ["generator", "N", *methods, *(f"{m}/warm" for m in others), "cells solved",
            "searches stopped", f"same {k} costs"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        size = str(row.n) if row.m == row.n else f"{row.n} x {row.m}"
        cells = [row.generator, size, *(fmt3(row.seconds.get(m)) for m in methods),
                 *(fmt3(ratio(row.seconds, m, "warm")) for m in others), str(row.cells),
                 str(row.capped),
                 ("yes" if agrees(row) else "NO") if compared(row) else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(rows: Sequence[Row], methods: Sequence[str], wall: float) -> str:
    """The SUMMARY line: geometric-mean ratio to warm per method, agreement, fallbacks."""
    parts = []
    for name in (m for m in methods if m != "warm"):
        ratios = [r for row in rows if (r := ratio(row.seconds, name, "warm"))]
        if ratios:
            mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
            parts.append(f"{name}/warm {mean:.1f}x geomean ({min(ratios):.1f}-{max(ratios):.1f}x, "
                         f"{len(ratios)} cells)")
    checked = [r for r in rows if compared(r)]
    parts.append(f"same costs {sum(agrees(r) for r in checked)}/{len(checked)} rows compared "
                 f"(of {len(rows)})")
    parts.append(f"fallbacks {sum(r.fallbacks for r in rows)}")
    return f"SUMMARY lap_ranked: {'; '.join(parts)}; {wall:.0f} s wall"


def run_all(args: argparse.Namespace) -> tuple[list[Row], bool]:
    """Every generator and size in order; (rows, interrupted)."""
    def run(job: tuple[str, int, int | None], rows: list[Row]) -> Row:
        generator, n, m = job
        previous = rows[-1] if rows and rows[-1].generator == generator else None
        return run_row(generator, n, args.k, args.seed, args.methods, args.max_seconds,
                       args.scip_max_n, previous, args.kind, m)

    widths = args.columns or [None]
    jobs = [(g, n, m) for g in args.generators for n in args.sizes for m in widths]
    return collect(jobs, run, "lap_ranked",
                   lambda r: f"{r.generator} N={r.n} M={r.m}: " + ", ".join(
                       f"{m} {fmt3(s)} s" for m, s in r.seconds.items()))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="10,25,50,100,200,400")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--generators", type=choice_list(sorted(GENERATORS)),
                        default="uniform,geometric,low_rank,transport")
    parser.add_argument("--methods", type=choice_list(METHODS), default=",".join(METHODS))
    parser.add_argument("--max-seconds", type=positive_float, default=120.0,
                        help="skip a method predicted to take longer (also SCIP's limit)")
    parser.add_argument("--scip-max-n", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", choices=("assignment", "matching"), default="assignment",
                        help="rank assignments, or matchings of the costs less their median "
                        "(rows and columns may stay unmatched, at no cost)")
    parser.add_argument("--columns", type=int_list, default=None,
                        help="rank N x M matrices for each M (more than every N); square "
                        "by default")
    args = parser.parse_args(argv)
    if args.columns and (args.kind == "matching" or min(args.columns) <= max(args.sizes)):
        parser.error("--columns: each M must exceed every N, for assignments")
    if args.k < 1:
        parser.error(f"--k must be positive, got {args.k}")
    if min(args.sizes) < 2:
        parser.error(f"--sizes: an assignment needs N >= 2, got {min(args.sizes)}")
    if "warm" not in args.methods:
        parser.error("--methods must include warm (the others are compared with it)")
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every row, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    ranked_assignments(np.eye(3), 3)  # compile the kernels before the first timed row
    rows, interrupted = run_all(args)
    print(f"\nk = {args.k} best {args.kind}s, seed {args.seed}; wall seconds per method")
    print("\n".join(table(rows, args.methods, args.k)))
    print(summary(rows, args.methods, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
