"""Square warm starts from given row duals: `solve_lap(c, row_duals=...)` against the cold
`solve_lap(c)` on the same matrix, in the same run. The duals are the cold solve's own, and
those plus normal noise of a fraction of the cost range (--noise, same seed), all computed
before timing. "set aside" counts the starts refused for bounding the optimum below JV's
column reduction (then solved cold).

    python benchmarks/lap_given_duals.py --sizes 1000,2000,4000 --noise 0.0001,0.01,0.1
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from lap_common import best_time, collect, fmt3, span

from coplug.formulations.assignment import generate
from coplug.plugins.argtypes import choice_list, float_list, ints_at_least, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import solve_lap

GENERATORS = ("uniform", "geometric", "low_rank", "transport")
REL_TOL = 1e-9


@dataclass
class Row:
    """One generator and size: the cold time and, per kind of duals, warm seconds,
    augmentations and whether the duals were used."""

    generator: str
    n: int
    cold: float = 0.0
    cold_augs: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    augs: dict[str, int] = field(default_factory=dict)
    used: dict[str, bool] = field(default_factory=dict)
    fallbacks: int = 0
    agreed: bool = True


def kinds(noise: Sequence[float]) -> list[str]:
    """Column names: the own duals, then each noise level."""
    return ["own", *(f"off {x:g}" for x in noise)]


def run_row(generator: str, n: int, args: argparse.Namespace) -> Row:
    """Cold, then warm from each kind of duals, on one matrix."""
    c = generate(generator, n, seed=args.seed)
    cold, seconds = best_time(lambda: solve_lap(c))
    row = Row(generator, n, seconds, cold.augmentations)
    rng = np.random.default_rng(args.seed)
    spread = float(np.ptp(c))
    duals = [cold.row_duals] + [cold.row_duals + rng.normal(0.0, x * spread, n)
                                for x in args.noise]
    for kind, u in zip(kinds(args.noise), duals, strict=True):
        sol, row.seconds[kind] = best_time(lambda u=u: solve_lap(c, row_duals=u))
        row.augs[kind], row.used[kind] = sol.augmentations, sol.warm
        row.fallbacks += sol.fallback
        row.agreed &= math.isclose(sol.cost, cold.cost, rel_tol=REL_TOL, abs_tol=1e-12)
    return row


def table(rows: Sequence[Row], names: Sequence[str]) -> list[str]:
    """The markdown table: cold seconds and augmentations, then warm/cold (augmentations;
    'cold' where the duals were set aside) per kind of duals."""
    head = ["generator", "N", "cold s", "cold augs", *(f"{k} warm/cold" for k in names),
            "same objective"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [f"{r.seconds[k] / r.cold:.2f} ({r.augs[k]}{'' if r.used[k] else ', cold'})"
                 for k in names]
        lines.append("| " + " | ".join([r.generator, str(r.n), fmt3(r.cold),
                                         str(r.cold_augs), *cells,
                                         "yes" if r.agreed else "NO"]) + " |")
    return lines


def summary(rows: Sequence[Row], names: Sequence[str], wall: float) -> str:
    """The SUMMARY line."""
    parts = [f"{k} warm/cold {span([r.seconds[k] / r.cold for r in rows])}" for k in names]
    aside = sum(not r.used[k] for r in rows for k in names)
    agreed = sum(r.agreed for r in rows)
    return (f"SUMMARY lap_given_duals: {'; '.join(parts)}; set aside {aside}/"
            f"{len(rows) * len(names)}; fallbacks {sum(r.fallbacks for r in rows)}; "
            f"same objective {agreed}/{len(rows)}; {wall:.0f} s wall")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(2), default="1000,2000,4000")
    parser.add_argument("--generators", type=choice_list(GENERATORS), default=",".join(GENERATORS))
    parser.add_argument("--noise", type=float_list, default="0.0001,0.01,0.1",
                        help="noise on the own duals, as fractions of the cost range")
    parser.add_argument("--seed", type=seed_int, default=0)
    args = parser.parse_args(argv)
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    run_row("uniform", 200, args)  # compile first
    jobs = [(g, n) for g in args.generators for n in args.sizes]
    rows, interrupted = collect(jobs, lambda job, _: run_row(*job, args), "lap_given_duals")
    names = kinds(args.noise)
    print(f"\nseed {args.seed}; wall seconds on the same matrices (best of 3 under 1 s)")
    print("\n".join(table(rows, names)))
    if rows:
        print(summary(rows, names, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
