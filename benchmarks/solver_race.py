"""Racing SCIP and HiGHS against each alone, on the PMVB families and facility location.

    python benchmarks/solver_race.py                       # 7 families x 3 seeds (~4 min)
    python benchmarks/solver_race.py --families setcover,facility --seeds 0

Each instance is solved by SCIP alone, HiGHS alone (at no relative MIP gap, as `race` runs
it) and `race` (both at once, in processes of their own), one after the other in one run;
seconds are wall time. `best/race` is the faster single solver's time over the race's (1.0
is a race as fast as knowing in advance which solver to pick); `scip/race` and `highs/race`
compare with always picking one. Every race's objective is checked against the single
solvers'. The last line is the summary.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyomo.environ as pyo
from tqdm import tqdm

from coplug.formulations.facility import extensive_model, random_facility_instance
from coplug.formulations.mip_families import build_family
from coplug.plugins import race, solve
from coplug.plugins.argtypes import choice_list, ints_at_least
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.limits import zero_mip_gap

SIZES = {"mknapsack": 45, "setcover": 250, "indset": 300, "cauction": 60, "fcnf": 20,
         "gisp": 50}
FAMILIES = (*SIZES, "facility")


@dataclass
class Row:
    """One instance, three ways."""

    family: str
    seed: int
    scip_s: float
    highs_s: float
    race_s: float
    winner: str
    same: bool


def builder(family: str, seed: int) -> Callable[[], pyo.ConcreteModel]:
    """A function building the instance afresh (each solve gets its own copy)."""
    if family == "facility":
        return lambda: extensive_model(random_facility_instance(10, 30, 8, seed=seed))
    return lambda: build_family(family, SIZES[family], seed)


def timed(call: Callable[[], object]) -> tuple[float, object]:
    """Seconds and value of `call()`."""
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def run_case(family: str, seed: int, time_limit: float) -> Row:
    """SCIP alone, HiGHS alone (at no relative MIP gap, as it races), then the race."""
    build = builder(family, seed)
    scip_s, scip = timed(lambda: solve(build(), solver="scip", time_limit=time_limit))
    highs_s, highs = timed(lambda: solve(build(), solver="highs", time_limit=time_limit,
                                         **zero_mip_gap("highs", {})))
    race_s, raced = timed(lambda: race(build(), time_limit=time_limit))
    objectives = [r.objective for r in (scip, highs) if r.optimal]
    same = raced.optimal and all(abs(raced.objective - o) <= 1e-6 * max(1.0, abs(o))
                                 for o in objectives)
    return Row(family, seed, scip_s, highs_s, race_s, raced.extra["race"]["winner"], same)


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| family | seed | scip s | highs s | race s | winner | best/race | same optimum |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.family} | {r.seed} | {r.scip_s:.2f} | {r.highs_s:.2f} | "
                     f"{r.race_s:.2f} | {r.winner} | "
                     f"{min(r.scip_s, r.highs_s) / max(r.race_s, 1e-3):.2f} | "
                     f"{'yes' if r.same else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line: geometric mean ratios and the objective check."""
    if not rows:
        return f"SUMMARY solver_race: no case finished; {wall:.0f} s wall"

    def ratio(seconds: Callable[[Row], float]) -> float:
        return statistics.geometric_mean([seconds(r) / max(r.race_s, 1e-3) for r in rows])

    return (f"SUMMARY solver_race: best/race {ratio(lambda r: min(r.scip_s, r.highs_s)):.2f}x, "
            f"scip/race {ratio(lambda r: r.scip_s):.2f}x, highs/race "
            f"{ratio(lambda r: r.highs_s):.2f}x (geomean); SCIP won "
            f"{sum(r.winner == 'scip' for r in rows)}/{len(rows)}; same optimum "
            f"{sum(r.same for r in rows)}/{len(rows)}; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=choice_list(FAMILIES), default=list(FAMILIES),
                        help=f"families ({','.join(FAMILIES)})")
    parser.add_argument("--seeds", type=ints_at_least(0), default=[0, 1, 2], help="seeds (0,1,2)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="per solve (120 s)")
    args = parser.parse_args(argv)
    if not args.time_limit > 0:
        parser.error("--time-limit must be positive")
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    cases = [(f, s) for f in args.families for s in args.seeds]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for family, seed in tqdm(cases, desc="solver_race", file=sys.stderr):
                rows.append(run_case(family, seed, args.time_limit))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.same for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
