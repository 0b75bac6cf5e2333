"""Benders decomposition through lazy constraints against the extensive form, on two-stage
stochastic facility location.

    python benchmarks/benders_facility.py                  # 10..160 scenarios (~4 min)
    python benchmarks/benders_facility.py --scenarios 20,80 --facilities 10 --customers 25

`coplug.formulations.facility` instances (demand must be met, so some openings are cut off
by feasibility cuts), each solved side by side in one process: the extensive form (every
scenario's flows in one MIP) with HiGHS and with SCIP, and the decomposed form with
`LazyConstraints(BendersCuts(subproblems))` in SCIP, cutting at integral master solutions
only (`benders`) and at fractional LP solutions too (`benders-frac`). Seconds are wall
seconds of the whole call, model building included; `+` marks the time limit. Optima must
agree (1e-6 relative). The last line is the summary: shifted geometric mean (shift 1 s)
of each method's time over HiGHS's on the extensive form.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tqdm import tqdm

from coplug.formulations.facility import (
    FacilityInstance,
    benders_models,
    extensive_model,
    random_facility_instance,
)
from coplug.plugins import LazyConstraints, Status, solve
from coplug.plugins.argtypes import ints_at_least, positive_float, positive_int
from coplug.plugins.benders import BendersCuts
from coplug.plugins.interrupts import exit_on_interrupt

METHODS = ("highs-ext", "scip-ext", "benders", "benders-frac")


@dataclass
class Run:
    """One method on one instance."""

    seconds: float
    objective: float | None
    finished: bool


@dataclass
class Row:
    """One instance, every method, and the Benders runs' subproblem solves."""

    scenarios: int
    seed: int
    runs: dict[str, Run] = field(default_factory=dict)
    subproblem_solves: int = 0


def run_extensive(inst: FacilityInstance, solver: str, time_limit: float) -> Run:
    """The extensive form with `solver`."""
    started = time.perf_counter()
    result = solve(extensive_model(inst), solver=solver, time_limit=time_limit)
    return Run(time.perf_counter() - started, result.objective,
               result.status is Status.OPTIMAL)


def run_benders(inst: FacilityInstance, fractional: bool, time_limit: float) -> tuple[Run, int]:
    """The decomposed form in SCIP with Benders cuts; the run and its subproblem solves."""
    started = time.perf_counter()
    master, subproblems = benders_models(inst)
    cuts = BendersCuts(subproblems)
    result = solve(master, plugins=[LazyConstraints(cuts, fractional=fractional)],
                   time_limit=time_limit)
    run = Run(time.perf_counter() - started, result.objective, result.status is Status.OPTIMAL)
    return run, cuts.stats["subproblem_solves"]


def run_instance(scenarios: int, seed: int, facilities: int, customers: int,
                 time_limit: float) -> Row:
    """Every method on one instance."""
    inst = random_facility_instance(facilities, customers, scenarios, seed=seed)
    row = Row(scenarios, seed)
    methods: dict[str, Callable[[], Run]] = {
        "highs-ext": lambda: run_extensive(inst, "highs", time_limit),
        "scip-ext": lambda: run_extensive(inst, "scip", time_limit),
    }
    for name, method in methods.items():
        row.runs[name] = method()
    for name, fractional in (("benders", False), ("benders-frac", True)):
        row.runs[name], solves = run_benders(inst, fractional, time_limit)
        row.subproblem_solves += solves
    return row


def same_optimum(row: Row) -> bool:
    """Whether every finished method reached the same objective (1e-6 relative)."""
    values = [r.objective for r in row.runs.values() if r.finished]
    return all(v is not None for v in values) and (
        not values or max(values) - min(values) <= 1e-6 * max(1.0, abs(max(values))))


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table: seconds per method, the optimum, subproblem solves, the check."""
    lines = ["| scenarios | seed | " + " | ".join(f"{m} s" for m in METHODS)
             + " | optimum | subproblem solves | same |", "| --- " * (len(METHODS) + 5) + "|"]
    for r in rows:
        cells = [f"{r.runs[m].seconds:.2f}{'' if r.runs[m].finished else '+'}" for m in METHODS]
        best = next((x.objective for x in r.runs.values() if x.finished), None)
        optimum = "-" if best is None else f"{best:.2f}"
        lines.append(f"| {r.scenarios} | {r.seed} | " + " | ".join(cells) +
                     f" | {optimum} | {r.subproblem_solves} | "
                     f"{'yes' if same_optimum(r) else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line: each method's shifted geomean time over highs-ext's."""
    if not rows:
        return f"SUMMARY benders_facility: no instance finished; {wall:.0f} s wall"
    parts = []
    for m in METHODS[1:]:
        ratios = [(r.runs[m].seconds + 1) / (r.runs["highs-ext"].seconds + 1) for r in rows]
        parts.append(f"{m}/highs-ext {statistics.geometric_mean(ratios):.2f}x "
                     f"(min {min(ratios):.2f}x)")
    unfinished = sum(not run.finished for r in rows for run in r.runs.values())
    return (f"SUMMARY benders_facility: {'; '.join(parts)}; same optimum "
            f"{sum(same_optimum(r) for r in rows)}/{len(rows)}; time limit hit {unfinished}; "
            f"{wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every instance, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=ints_at_least(1), default=[10, 40, 160],
                        help="scenario counts (10,40,160)")
    parser.add_argument("--seeds", type=ints_at_least(0), default=[0, 1],
                        help="seeds (0,1)")
    parser.add_argument("--facilities", type=positive_int, default=12, help="facilities (12)")
    parser.add_argument("--customers", type=positive_int, default=30, help="customers (30)")
    parser.add_argument("--time-limit", type=positive_float, default=300.0,
                        help="per solve (300 s)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    cases = [(s, seed) for s in args.scenarios for seed in args.seeds]
    try:
        run_instance(2, 0, 3, 4, args.time_limit)  # warm-up: first calls load the solvers
        for scenarios, seed in tqdm(cases, desc="benders_facility", file=sys.stderr):
            rows.append(run_instance(scenarios, seed, args.facilities, args.customers,
                                     args.time_limit))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the instances finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(same_optimum(r) for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
