"""Where do PGD and Adam end on relaxed QUBOs? Naive vs safe penalties, against SCIP.

For each problem (knapsack, TSP, open pit), size and seeded instance: run PGD and Adam from
`--starts` random points on the naive and on the safe QUBO, and report the fraction of
starts ending binary and feasible (min and mean over instances), the fraction certified as
local minimizers, the best-of-starts gap to SCIP's optimum of the exact MIP, and wall time
against SCIP on the same instance. Ends with one summary line.

    python benchmarks/qubo_local_minima.py            # issue defaults (long)
    python benchmarks/qubo_local_minima.py --quick    # a couple of minutes
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np
from tqdm import tqdm

from coplug.formulations.qubo_cli import FORMS, PROBLEMS, exact_optimum, gap, make_case
from coplug.formulations.qubo_solvers import METHODS, minimize
from coplug.plugins.argtypes import choice_list, int_list, positive_int
from coplug.plugins.interrupts import exit_on_interrupt

DEFAULT_SIZES = {"knapsack": "20,60,200", "tsp": "8,15,30", "openpit": "100,500,2000"}
QUICK_SIZES = {"knapsack": "8,12", "tsp": "5,8", "openpit": "60,200"}








def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags; --quick shrinks everything."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problems", type=choice_list(PROBLEMS), default=",".join(PROBLEMS))
    for name in PROBLEMS:
        p.add_argument(f"--{name}-sizes", type=int_list, default=None,
                       help=f"default {DEFAULT_SIZES[name]}")
    p.add_argument("--instances", type=positive_int, default=None, help="per size (default 10)")
    p.add_argument("--starts", type=positive_int, default=None, help="per run (default 200)")
    p.add_argument("--max-iter", type=positive_int, default=3000)
    p.add_argument("--forms", type=choice_list(FORMS), default="safe,naive")
    p.add_argument("--methods", type=choice_list(METHODS), default="pgd,adam")
    p.add_argument("--time-limit", type=float, default=600.0, help="SCIP, seconds")
    p.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    p.add_argument("--quick", action="store_true", help="small sizes, 2 instances, 32 starts")
    args = p.parse_args(argv)
    if not args.time_limit > 0:
        p.error(f"argument --time-limit: must be positive, got {args.time_limit}")
    sizes = QUICK_SIZES if args.quick else DEFAULT_SIZES
    for name in PROBLEMS:
        key = f"{name}_sizes"
        if getattr(args, key) is None:
            setattr(args, key, int_list(sizes[name]))
        setattr(args, key, list(dict.fromkeys(getattr(args, key))))  # a repeat runs once
    if args.instances is None:
        args.instances = 2 if args.quick else 10
    if args.starts is None:
        args.starts = 32 if args.quick else 200
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the grid, print the table and the summary line; 130 when interrupted."""
    start = time.perf_counter()
    args = parse_args(argv)
    problems, forms, methods = args.problems, args.forms, args.methods
    grid = [
        (prob, size, seed)
        for prob in problems
        for size in getattr(args, f"{prob}_sizes")
        for seed in range(args.instances)
    ]
    rows: dict[tuple, list[dict]] = defaultdict(list)
    interrupted = False
    bar = tqdm(total=len(grid) * len(forms) * len(methods), desc="runs", unit="run")
    try:
        for prob, size, seed in grid:
            case = make_case(prob, size, seed=seed)
            optimum, scip_s = exact_optimum(case, args.time_limit)
            for form in forms:
                qubo = case.qubos[form]()
                for method in methods:
                    bar.set_postfix_str(f"{prob} {size} #{seed} {form} {method} n={qubo.n}")
                    rep = minimize(
                        qubo,
                        method=method,
                        starts=args.starts,
                        seed=seed,
                        max_iter=args.max_iter,
                        threads=args.threads,
                    )
                    best = rep.best_objective(case.sense)
                    rows[(prob, size, form, method)].append(
                        {
                            "vars": qubo.n,
                            "binfeas": rep.fraction_binary_feasible,
                            "cert": rep.fraction_ok,
                            "gap": gap(best, optimum, case.sense),
                            "secs": rep.seconds,
                            "scip": scip_s,
                        }
                    )
                    bar.update()
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: partial results")
    finally:
        bar.close()
    print_table(rows, args.starts, time.perf_counter() - start)
    return 130 if interrupted else 0


def print_table(rows: dict[tuple, list[dict]], starts: int, wall: float) -> None:
    """One line per (problem, size, form, method), then the summary line."""
    head = (
        f"{'problem':9} {'size':>5} {'form':5} {'meth':4} {'inst':>4} {'vars':>7} "
        f"{'binfeas min':>11} {'mean':>6} {'cert':>6} {'gap best':>9} {'qubo s':>7} "
        f"{'scip s':>7} {'ratio':>6}"
    )
    print(head)
    print("-" * len(head))
    for (prob, size, form, method), rs in rows.items():
        gaps = [r["gap"] for r in rs if r["gap"] is not None]
        partial = "*" if len(gaps) < len(rs) else "%"  # some instances had no gap
        g = f"{100 * np.mean(gaps):8.2f}{partial}" if gaps else f"{'n/a':>9}"
        qs, ss = np.mean([r["secs"] for r in rs]), np.mean([r["scip"] for r in rs])
        print(
            f"{prob:9} {size:5d} {form:5} {method:4} {len(rs):4d} "
            f"{int(np.mean([r['vars'] for r in rs])):7d} "
            f"{100 * min(r['binfeas'] for r in rs):10.1f}% "
            f"{100 * np.mean([r['binfeas'] for r in rs]):5.1f}% "
            f"{100 * np.mean([r['cert'] for r in rs]):5.1f}% {g} {qs:7.2f} {ss:7.2f} "
            f"{qs / max(ss, 1e-9):6.1f}"
        )
    print("gap best: mean over instances of the best binary feasible end point's gap to "
          "SCIP's proven optimum; '*' marks a mean over only the instances that have one")
    print(summary(rows, starts, wall))


def _share(values: list[float], how: Callable[[list[float]], float]) -> str:
    """`how` (min or mean) of binary+feasible fractions in percent; n/a without runs."""
    return f"{100 * how(values):.1f}%" if values else "n/a"


def summary(rows: dict[tuple, list[dict]], starts: int, wall: float) -> str:
    """The SUMMARY line: safe runs at 100% binary+feasible, naive mean and min."""
    safe = [r["binfeas"] for k, rs in rows.items() if k[2] == "safe" for r in rs]
    naive = [r["binfeas"] for k, rs in rows.items() if k[2] == "naive" for r in rs]
    perfect = sum(v == 1.0 for v in safe)
    return (f"SUMMARY starts={starts}: safe 100% binary+feasible on {perfect}/{len(safe)} runs "
            f"(min {_share(safe, min)}); naive mean {_share(naive, np.mean)} "
            f"(min {_share(naive, min)}); wall {wall:.0f} s")


if __name__ == "__main__":
    exit_on_interrupt(main)
