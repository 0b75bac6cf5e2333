"""Assignment models written in Pyomo: `solve(model, solver="lap")` against HiGHS and SCIP.

    python benchmarks/lap_pyomo.py                             # n = 100..1000 (about 10 min)
    python benchmarks/lap_pyomo.py --sizes 100,200 --solvers lap,highs

Each size builds one dense n x n `assignment_model` (binary x[i, j], one-per-row and
one-per-column equalities) from seeded costs (--generator) and solves it end to end with
every solver in --solvers: wall seconds of the `solve()` call, reading the Pyomo model
included (for lap also split into reading and JV). Objectives are checked against scipy's
`linear_sum_assignment` on the same costs. A solver is skipped at a size when its time at
the previous size, scaled by n^3, predicts more than --time-limit seconds. The last line
is the summary.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from tqdm import tqdm

from coplug.formulations.assignment import GENERATORS, assignment_model, generate
from coplug.plugins.argtypes import choice_list, int_list, positive_float
from coplug.plugins.bridge import solve
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import small, solve_lap
from coplug.plugins.results import Status

SOLVERS = ("lap", "highs", "scip")
REL_TOL = 1e-9


@dataclass
class Cell:
    """One solver on one size: wall seconds (None when skipped), status, objective."""

    solver: str
    seconds: float | None = None
    status: str = "skipped"
    objective: float | None = None
    jv_seconds: float | None = None
    optimal: bool | None = None


@dataclass
class Row:
    """One size: the model's build time, scipy's objective and every solver's cell."""

    n: int
    build: float
    reference: float
    cells: dict[str, Cell]


def run_size(n: int, generator: str, seed: int, solvers: Sequence[str], time_limit: float,
             previous: Row | None) -> Row:
    """Build the model of size n once and solve it with each solver not predicted too slow."""
    cost = generate(generator, n, seed=seed)
    rows, cols = linear_sum_assignment(cost)
    reference = float(cost[rows, cols].sum())
    start = time.perf_counter()
    model = assignment_model(cost)
    row = Row(n, time.perf_counter() - start, reference, {})
    for name in solvers:
        if _predicted(previous, name, n) > time_limit:
            row.cells[name] = Cell(name)
            continue
        start = time.perf_counter()
        result = solve(model, solver=name, time_limit=time_limit)
        cell = Cell(name, time.perf_counter() - start, result.status.value, result.objective,
                    result.extra.get("lap_s"))
        cell.optimal = result.status is Status.OPTIMAL and result.objective is not None and (
            abs(result.objective - reference) <= REL_TOL * max(1.0, abs(reference)))
        row.cells[name] = cell
    return row


def _predicted(previous: Row | None, name: str, n: int) -> float:
    """The previous size's time scaled by n^3 (inf after a skip or an unfinished solve)."""
    if previous is None:
        return 0.0
    cell = previous.cells[name]
    if cell.seconds is None or cell.status != "optimal":
        return float("inf")
    return cell.seconds * (n / previous.n) ** 3


def _fmt(value: float | None) -> str:
    """Seconds to 3 significant digits, '-' when absent."""
    return "-" if value is None else f"{value:.3g}"


def table(rows: Sequence[Row], solvers: Sequence[str]) -> list[str]:
    """Markdown table: seconds per solver, lap's read/JV split and ratios against lap."""
    others = [s for s in solvers if s != "lap"]
    head = ["n", "build", *solvers]
    if "lap" in solvers:
        head += ["lap read", "lap JV", *(f"{s}/lap" for s in others)]
    head.append("optimal")
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        cells = [str(row.n), _fmt(row.build), *(_fmt(row.cells[s].seconds) for s in solvers)]
        if "lap" in solvers:
            lap = row.cells["lap"]
            read = None if lap.seconds is None or lap.jv_seconds is None else (
                lap.seconds - lap.jv_seconds)
            cells += [_fmt(read), _fmt(lap.jv_seconds)]
            cells += [_fmt(_ratio(row.cells[s].seconds, lap.seconds)) for s in others]
        ran = [c for c in row.cells.values() if c.seconds is not None]
        cells.append(f"{sum(bool(c.optimal) for c in ran)}/{len(ran)}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _ratio(a: float | None, b: float | None) -> float | None:
    """a / b, None when either is missing."""
    return None if a is None or b is None or b <= 0 else a / b


def summary(rows: Sequence[Row], solvers: Sequence[str], wall: float) -> str:
    """The one SUMMARY line: median speed-up of lap over each other solver, the share of
    lap's time spent reading the model at the largest size, and the optimality count."""
    ran = [c for row in rows for c in row.cells.values() if c.seconds is not None]
    parts = []
    if "lap" in solvers:
        for other in (s for s in solvers if s != "lap"):
            ratios = [r for row in rows
                      if (r := _ratio(row.cells[other].seconds, row.cells["lap"].seconds))]
            if ratios:
                parts.append(f"{other}/lap median {statistics.median(ratios):.1f}x "
                             f"(max {max(ratios):.1f}x)")
        lap = [row for row in rows if row.cells["lap"].jv_seconds is not None]
        if lap:
            big = lap[-1].cells["lap"]
            parts.append(f"reading the model {1 - big.jv_seconds / big.seconds:.0%} of lap's "
                         f"{big.seconds:.2f} s at n={lap[-1].n}")
    parts.append(f"objectives equal scipy's in {sum(bool(c.optimal) for c in ran)}/{len(ran)} "
                 f"solves")
    return f"SUMMARY lap_pyomo: {'; '.join(parts)}; {wall:.0f} s wall"


def run_all(sizes: Sequence[int], generator: str, seed: int, solvers: Sequence[str],
            time_limit: float) -> tuple[list[Row], bool]:
    """Every size in order; (rows, interrupted)."""
    rows: list[Row] = []
    try:
        for n in tqdm(sizes, desc="lap_pyomo", file=sys.stderr):
            rows.append(run_size(n, generator, seed, solvers, time_limit,
                                 rows[-1] if rows else None))
            tqdm.write(f"n={n}: " + ", ".join(
                f"{c.solver} {c.status} {_fmt(c.seconds)} s" for c in rows[-1].cells.values()),
                file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the sizes finished so far", file=sys.stderr)
        return rows, True
    return rows, False


def warm_up(solvers: Sequence[str]) -> None:
    """Solve an 8 x 8 model with every solver, so numba kernels, solver imports and the model
    reader's first call are not charged to the first size; and one matrix past
    small.MAX_ENTRIES, whose kernels (not the one-call small path) solve the larger sizes."""
    solve_lap(np.eye(3))
    solve_lap(generate("uniform", math.isqrt(small.MAX_ENTRIES) + 1, seed=1))
    for name in solvers:
        solve(assignment_model(generate("uniform", 8, seed=1)), solver=name)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="100,200,300,500,1000")
    parser.add_argument("--generator", choices=sorted(GENERATORS), default="uniform")
    parser.add_argument("--solvers", type=choice_list(SOLVERS), default=",".join(SOLVERS))
    parser.add_argument("--time-limit", type=positive_float, default=120.0,
                        help="seconds per solve; also the skip threshold")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if min(args.sizes) < 2:
        parser.error(f"--sizes: an assignment needs n >= 2, got {min(args.sizes)}")
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every size, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    warm_up(args.solvers)
    rows, interrupted = run_all(args.sizes, args.generator, args.seed, args.solvers,
                                args.time_limit)
    print(f"\n{args.generator} costs, seed {args.seed}; wall seconds of solve(model, ...), "
          "reading the Pyomo model included; build = assignment_model(cost)")
    print("\n".join(table(rows, args.solvers)))
    print(summary(rows, args.solvers, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
