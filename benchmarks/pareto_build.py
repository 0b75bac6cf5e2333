"""Pareto fronts on larger models: the model built once for every stage (as shipped)
against a fresh build per stage (`solve` each time, the path plugins and nonlinear
objectives still take).

    python benchmarks/pareto_build.py                      # 0,2000,5000,10000 rows (~4 min)
    python benchmarks/pareto_build.py --rows 0,5000 --size 12

Each instance is `benchmarks/pareto_front.py`'s bi-objective knapsack (value up, first
weight down) plus `rows` two-term rows over as many continuous variables, which neither
objective touches: what a front on a model of that many rows pays for building it. Both
ways run on the same instance in one run, with SCIP and with HiGHS; seconds are wall time,
"solver s" the solvers' own time in the built-once run. The last line is the summary.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import pyomo.environ as pyo
from pareto_front import instance
from tqdm import tqdm

import coplug.plugins.multiobjective as mo
from coplug.plugins.argtypes import ints_at_least, positive_int, seed_int
from coplug.plugins.interrupts import exit_on_interrupt


@dataclass
class Row:
    """One instance and solver: the front both ways."""

    rows: int
    solver: str
    points: int
    once_s: float
    solver_s: float
    rebuilt_s: float
    same: bool

    @property
    def ratio(self) -> float:
        """Rebuilt-per-stage seconds over built-once seconds."""
        return self.rebuilt_s / max(self.once_s, 1e-3)


def with_rows(size: int, seed: int, rows: int) -> pyo.ConcreteModel:
    """The knapsack of `pareto_front.py` with `rows` rows z[i] + z[i+1] / 2 <= 12 (z in
    [0, 10], cyclic) that no objective touches."""
    m = instance(size, seed)
    if rows:
        m.B = pyo.RangeSet(rows)
        m.z = pyo.Var(m.B, bounds=(0, 10))
        m.ballast = pyo.Constraint(m.B, rule=lambda m, i: m.z[i] + 0.5 * m.z[i % rows + 1]
                                   <= 12)
    return m


def front(m: pyo.ConcreteModel, solver: str, once: bool) -> tuple[list, float, float]:
    """The front's points, wall seconds and the solvers' seconds, built once or per stage."""
    spent: list[float] = []
    real_open, real_solve = mo.open_stages, mo.solve

    def counted_open(*args):
        staged = real_open(*args)
        if staged is not None:
            real = staged.solve
            staged.solve = lambda *a: _counted(real(*a), spent)
        return staged

    mo.open_stages = counted_open if once else (lambda *args: None)
    mo.solve = lambda *a, **k: _counted(real_solve(*a, **k), spent)
    try:
        start = time.perf_counter()
        found = mo.pareto_front(m, m.value, m.weight, solver=solver)
        wall = time.perf_counter() - start
    finally:
        mo.open_stages, mo.solve = real_open, real_solve
    points = sorted((round(a, 6), round(b, 6)) for a, b in (p.values for p in found.points))
    return (points if found.complete else []), wall, sum(spent)


def _counted(result, spent: list[float]):
    """`result`, its solver time added to `spent`."""
    spent.append(result.time)
    return result


def run_case(size: int, seed: int, rows: int, solver: str) -> Row:
    """The front built once and per stage on one instance."""
    once, once_s, solver_s = front(with_rows(size, seed, rows), solver, once=True)
    rebuilt, rebuilt_s, _ = front(with_rows(size, seed, rows), solver, once=False)
    return Row(rows, solver, len(once), once_s, solver_s, rebuilt_s,
               bool(once) and once == rebuilt)


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| extra rows | solver | front points | built once s | solver s | rebuilt per "
             "stage s | rebuilt/once | same front |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.rows:,} | {r.solver} | {r.points} | {r.once_s:.2f} | "
                     f"{r.solver_s:.2f} | {r.rebuilt_s:.2f} | "
                     f"{r.ratio:.2f} | {'yes' if r.same else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    if not rows:
        return f"SUMMARY pareto_build: no case finished; {wall:.0f} s wall"
    ratios = [r.ratio for r in rows]
    largest = max(r.rows for r in rows)
    top = [r.ratio for r in rows if r.rows == largest]
    return (f"SUMMARY pareto_build: rebuilt-per-stage/built-once median "
            f"{statistics.median(ratios):.2f}x, at {largest:,} extra rows "
            f"{min(top):.2f}-{max(top):.2f}x; same front {sum(r.same for r in rows)}/"
            f"{len(rows)}; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=ints_at_least(0), default=[0, 2000, 5000, 10000],
                        help="extra rows (0,2000,5000,10000)")
    parser.add_argument("--size", type=positive_int, default=15, help="knapsack items (15)")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed (0)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    cases = [(n, s) for n in args.rows for s in ("scip", "highs")]
    try:
        for extra, solver in tqdm(cases, desc="pareto_build", file=sys.stderr):
            rows.append(run_case(args.size, args.seed, extra, solver))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.same for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
