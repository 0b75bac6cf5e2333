"""`coplug lap`: solve one assignment problem from a file or a generator, cold or warm."""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any

import numpy as np

from coplug.plugins.bar import on_terminal
from coplug.plugins.errors import InputError

# Largest sparse matrix (rows x columns) `--check` copies densely for scipy (400 MB).
CHECK_MAX_ENTRIES = 50_000_000


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `lap` command."""
    p = subparsers.add_parser(
        "lap", help="exact linear assignment (JV) from a .npy/.npz/.csv/assignp*.txt file or "
        "generator"
    )
    p.add_argument("file", nargs="?", help="cost matrix: .npy, .csv, OR-Library assignp*.txt, "
                   "or a scipy.sparse .npz (pairs not stored are forbidden)")
    p.add_argument("--generator", help="uniform | geometric | low_rank | transport | gated "
                   "(sparse tracking frame: each track gated to its 8 nearest detections)")
    p.add_argument("--n", type=int, default=None,
                   help="instance size for --generator (default 1000)")
    p.add_argument("--seed", type=int, default=None, help="seed for --generator (default 0)")
    p.add_argument("--warm", action="store_true",
                   help="warm-start from RowDualNet duals (used when JV's column reduction "
                   "leaves over 15%% of the rows free, from 1024 rows up or when it matches "
                   "under half of them; the output says whether it was)")
    p.add_argument("--maximize", action="store_true")
    p.add_argument("--time-limit", type=float, default=None, help="seconds; stop without answer")
    p.add_argument("--check", action="store_true", help="compare with scipy's objective")
    p.add_argument("--k", type=int, default=None,
                   help="rank the K best assignments (Murty's method) instead of one")
    p.add_argument("--unmatched-cost", type=float, default=None,
                   help="with --k: rank matchings instead, each row or column left unmatched "
                   "at this cost")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_lap)


def _cmd_lap(args: argparse.Namespace) -> int:
    """Load or generate, solve, print cost, time and work (and scipy's objective if asked)."""
    from coplug.formulations.assignment import GENERATORS, gated, generate, load_costs
    from coplug.plugins.lap.solver import solve_lap

    if (args.file is None) == (args.generator is None):
        raise InputError("give exactly one of FILE or --generator")
    names = (*GENERATORS, "gated")
    if args.generator is not None and args.generator not in names:
        raise InputError(f"unknown generator {args.generator!r}; choose one of "
                         f"{', '.join(names)}")
    if args.file and (args.n is not None or args.seed is not None):
        raise InputError("--n and --seed apply to --generator, not to a FILE")
    n = 1000 if args.n is None else args.n
    if args.file:
        c = load_costs(args.file)
    elif args.generator == "gated":
        c = gated(n, seed=args.seed or 0)
    else:
        c = generate(args.generator, n, seed=args.seed or 0)
    if args.k is not None:
        return _ranked(c, args)
    if args.unmatched_cost is not None:
        raise InputError("--unmatched-cost ranks matchings: give --k too")
    predictor, load_s = None, 0.0
    if args.warm:
        from coplug.learned.rowdualnet import load

        start = time.perf_counter()
        predictor = load()
        load_s = time.perf_counter() - start
    sol = solve_lap(c, maximize=args.maximize, predictor=predictor, time_limit=args.time_limit)
    report = {  # solve_lap answers optimal or raises (a time limit is an error, exit 2)
        "status": "optimal", "shape": list(c.shape), "cost": sol.cost, "seconds": sol.time,
        "model_load_s": load_s,
        "augmentations": sol.augmentations, "warm": sol.warm,
        "prediction": sol.info["prediction"], "fallback": sol.fallback,
    }
    if args.check:
        report.update(_scipy_check(c, sol, args.maximize))
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key:14s} {value}")
    return 0


def _ranked(c: Any, args: argparse.Namespace) -> int:
    """`--k`: the K best assignments' (or, with `--unmatched-cost`, matchings') costs, best
    first, and how the ranking ended."""
    from coplug.plugins.lap.matchings import ranked_matchings
    from coplug.plugins.lap.ranked import ranked_assignments

    if args.warm or args.check:
        raise InputError("--k ranks assignments; --warm and --check apply to one solve")
    if args.unmatched_cost is not None and not math.isfinite(args.unmatched_cost):
        raise InputError(f"--unmatched-cost must be finite, got {args.unmatched_cost}; leave "
                         "it out to rank assignments, which match every row or column")
    progress = not args.json and on_terminal()
    if args.unmatched_cost is None:
        ranking = ranked_assignments(c, args.k, maximize=args.maximize,
                                     time_limit=args.time_limit, progress=progress)
    else:
        ranking = ranked_matchings(c, args.k, row_cost=args.unmatched_cost,
                                   col_cost=args.unmatched_cost, maximize=args.maximize,
                                   time_limit=args.time_limit, progress=progress)
    report = {"status": ranking.status, "shape": list(c.shape), "k": args.k,
              "found": len(ranking.solutions), "seconds": ranking.info["time"],
              "solved_cells": ranking.info["solved_cells"],
              "fallbacks": ranking.info["fallbacks"], "costs": ranking.costs}
    if args.json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            if key != "costs":
                print(f"{key:14s} {value}")
        for rank, cost in enumerate(ranking.costs, start=1):
            print(f"{rank:>6d} {cost!r}")
    return 130 if ranking.status == "interrupted" else 0  # Ctrl-C, as coplug solve


def _scipy_check(c: Any, sol: Any, maximize: bool) -> dict[str, Any]:
    """scipy's optimal cost, whether our cost matches it and the exact difference.

    Both costs are float64 sums of the entries (an input-dtype sum loses digits in float32,
    overflows in float16 or int64) and may differ by the gap the LAP certificate accepts,
    1e-9 * n * max|c|; `gap_to_scipy` (ours minus scipy) sums both assignments exactly
    (math.fsum), so a difference far below that tolerance (next to big-M entries) shows."""
    from scipy.optimize import linear_sum_assignment

    from coplug.plugins.lap.certify import tolerance

    c64 = _dense_for_check(c, maximize)
    r, k = linear_sum_assignment(c64, maximize=maximize)
    scipy_cost = float(c64[r, k].sum())
    scale = float(np.abs(c64[np.isfinite(c64)]).max())
    return {
        "scipy_cost": scipy_cost,
        "matches_scipy": bool(abs(scipy_cost - sol.cost) <= tolerance(scale, min(c64.shape))),
        "gap_to_scipy": math.fsum(c64[sol.row_ind, sol.col_ind]) - math.fsum(c64[r, k]),
    }


def _dense_for_check(c: Any, maximize: bool) -> np.ndarray:
    """The costs as float64 for scipy's dense solver; a sparse matrix with its missing pairs
    at inf, -inf when maximizing (what scipy forbids: +inf in a maximization is an invalid
    entry), refused past CHECK_MAX_ENTRIES (the copy's memory)."""
    import scipy.sparse as sp

    if not sp.issparse(c):
        return np.asarray(c, dtype=np.float64)
    n, m = c.shape
    if n * m > CHECK_MAX_ENTRIES:
        raise InputError(f"--check compares with scipy's dense solver, which needs a dense "
                         f"copy of this {n}x{m} sparse matrix ({n * m * 8 / 1e9:.1f} GB); "
                         "leave --check out")
    dense = np.full((n, m), -np.inf if maximize else np.inf)
    coo = c.tocoo()
    dense[coo.row, coo.col] = coo.data
    return dense


def main(argv: list[str] | None = None) -> int:
    """`python -m coplug.plugins.lap.cli ARGS`: the same as `coplug lap ARGS` (exit codes and
    one-line errors included), rather than a silent no-op."""
    import sys

    from coplug.plugins.cli import main as coplug_main

    return coplug_main(["lap", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
