"""Solution pools and k_best against Pyomo's k-best enumeration, on the PMVB families.

    python benchmarks/solution_pool.py                   # 4 families x 3 seeds, k=10 (~2 min)
    python benchmarks/solution_pool.py --families setcover --sizes setcover=300 --k 20

`enum` is Pyomo's own k-best enumeration (`pyomo.contrib.alternative_solutions.
enumerate_binary_solutions`: k solves, each with a no-good cut against the solutions before,
through coplug's `coplug_scip` SolverFactory name), the truth; `kbest-scip` and
`kbest-highs` are `coplug.plugins.best_solutions` (one SCIP search; HiGHS in rounds), whose
objectives must equal enum's (`same`); `pool-scip` and `pool-highs` are one `solve` with
`SolutionPool(k)`, not a proof. Seconds are wall time; `recall` is how many of the proven k
best objective values a pool holds (as a multiset, to 1e-6). Every pooled and k_best point
is loaded and checked against the model's rows, bounds and integrality. The last line is
the summary.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from tqdm import tqdm

from coplug.formulations.mip_families import build_family
from coplug.plugins import SolutionPool, infeasibilities, k_best, solve
from coplug.plugins.argtypes import choice_list, ints_at_least, positive_int
from coplug.plugins.interrupts import exit_on_interrupt

FAMILIES = ("mknapsack", "setcover", "indset", "cauction")
DEFAULT_SIZES = {"mknapsack": 40, "setcover": 150, "indset": 60, "cauction": 60}
TOL = 1e-6


@dataclass
class Row:
    """One instance: enumeration and both pools."""

    family: str
    size: int
    seed: int
    enum_s: float
    kbest_scip_s: float
    kbest_highs_s: float
    same: int
    scip_s: float
    highs_s: float
    scip_recall: int
    highs_recall: int
    k: int
    infeasible: int


def recall(found: Sequence[float], truth: Sequence[float]) -> int:
    """How many of `truth`'s values `found` holds, each matched once (to TOL, relative)."""
    left = list(truth)
    hits = 0
    for value in found:
        match = next((i for i, t in enumerate(left)
                      if abs(value - t) <= TOL * max(1.0, abs(t))), None)
        if match is not None:
            hits += 1
            left.pop(match)
    return hits


def pooled(family: str, size: int, seed: int, solver: str, k: int
           ) -> tuple[float, list[float], int]:
    """Seconds, pooled objectives and infeasible pooled points of one pooled solve."""
    model = build_family(family, size, seed)
    pool = SolutionPool(k)
    start = time.perf_counter()
    solve(model, solver=solver, plugins=[pool])
    seconds = time.perf_counter() - start
    bad = 0
    for solution in pool.solutions:
        solution.load()
        bad += bool(infeasibilities(model))
    return seconds, [s.objective for s in pool.solutions], bad


def searched(family: str, size: int, seed: int, solver: str, k: int
             ) -> tuple[float, list[float], int]:
    """Seconds, objectives and infeasible points of one `k_best` search."""
    model = build_family(family, size, seed)
    start = time.perf_counter()
    found = k_best(model, k, solver=solver)
    seconds = time.perf_counter() - start
    bad = 0
    for solution in found.solutions:
        solution.load()
        bad += bool(infeasibilities(model))
    return seconds, [s.objective for s in found.solutions] if found.proven else [], bad


def run_case(family: str, size: int, seed: int, k: int) -> Row:
    """Enumerate the k best, search them with k_best, then pool with SCIP and HiGHS."""
    from pyomo.contrib.alternative_solutions import enumerate_binary_solutions

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        truth = enumerate_binary_solutions(build_family(family, size, seed), num_solutions=k,
                                           solver="coplug_scip")
    enum_s = time.perf_counter() - start
    best = [s.objective_value for s in truth]
    searches = [searched(family, size, seed, solver, k) for solver in ("scip", "highs")]
    same = sum(len(found) == len(best) and recall(found, best) == len(best)
               for _, found, _ in searches)
    scip_s, scip_found, scip_bad = pooled(family, size, seed, "scip", k)
    highs_s, highs_found, highs_bad = pooled(family, size, seed, "highs", k)
    return Row(family, size, seed, enum_s, searches[0][0], searches[1][0], same, scip_s,
               highs_s, recall(scip_found, best), recall(highs_found, best), len(best),
               scip_bad + highs_bad + sum(bad for _, _, bad in searches))


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| family | size | seed | enum s | kbest-scip s | kbest-highs s | enum/kbest-scip "
             "| same | pool-scip s | pool-highs s | recall scip | recall highs | infeasible |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.family} | {r.size} | {r.seed} | {r.enum_s:.2f} | "
                     f"{r.kbest_scip_s:.2f} | {r.kbest_highs_s:.2f} | "
                     f"{r.enum_s / max(r.kbest_scip_s, 1e-3):.1f} | {r.same}/2 | "
                     f"{r.scip_s:.2f} | {r.highs_s:.2f} | {r.scip_recall}/{r.k} | "
                     f"{r.highs_recall}/{r.k} | {r.infeasible} |")
    return lines


def speedup(rows: Sequence[Row], seconds: str) -> float:
    """Geometric mean of enum's seconds over the `seconds` field's."""
    return statistics.geometric_mean([r.enum_s / max(getattr(r, seconds), 1e-3) for r in rows])


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line: time ratios, k_best's agreement, pool recall, feasibility."""
    if not rows:
        return f"SUMMARY solution_pool: no case finished; {wall:.0f} s wall"
    total = sum(r.k for r in rows)
    return (f"SUMMARY solution_pool: enum/kbest-scip {speedup(rows, 'kbest_scip_s'):.1f}x, "
            f"enum/kbest-highs {speedup(rows, 'kbest_highs_s'):.1f}x, enum/pool-scip "
            f"{speedup(rows, 'scip_s'):.1f}x, enum/pool-highs {speedup(rows, 'highs_s'):.1f}x "
            f"(geomean); k_best equal to enum {sum(r.same for r in rows)}/{2 * len(rows)}; "
            f"proven top-k held by pools: scip {sum(r.scip_recall for r in rows)}/{total}, "
            f"highs {sum(r.highs_recall for r in rows)}/{total}; infeasible points "
            f"{sum(r.infeasible for r in rows)}; {wall:.0f} s wall")


def family_sizes(text: str) -> dict[str, int]:
    """FAMILY=SIZE pairs, comma-separated (argparse type)."""
    sizes = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name not in FAMILIES or not value.isdigit() or int(value) < 1:
            raise argparse.ArgumentTypeError(f"need FAMILY=SIZE with FAMILY one of "
                                             f"{', '.join(FAMILIES)} and SIZE >= 1, got {part!r}")
        sizes[name] = int(value)
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=choice_list(FAMILIES), default=list(FAMILIES),
                        help=f"families ({','.join(FAMILIES)})")
    parser.add_argument("--sizes", type=family_sizes, default={},
                        help="FAMILY=SIZE overrides, e.g. setcover=300")
    parser.add_argument("--seeds", type=ints_at_least(0), default=[0, 1, 2], help="seeds (0,1,2)")
    parser.add_argument("--k", type=positive_int, default=10, help="solutions to keep (10)")
    args = parser.parse_args(argv)
    sizes = {**DEFAULT_SIZES, **args.sizes}
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    cases = [(f, sizes[f], s) for f in args.families for s in args.seeds]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for family, size, seed in tqdm(cases, desc="solution_pool", file=sys.stderr):
                rows.append(run_case(family, size, seed, args.k))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.infeasible == 0 and r.same == 2
                                             for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
