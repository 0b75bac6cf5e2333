"""Benchmark: cold JV vs RowDualNet-warm JV vs lap.lapjv vs scipy on generated LAPs.

    python benchmarks/lap_warmstart.py                 # issue grid: 4 generators x N 1024..16384
    python benchmarks/lap_warmstart.py --quick         # N 512, 1024
    python benchmarks/lap_warmstart.py --sizes 2048 4096 --generators geometric low_rank
    python benchmarks/lap_warmstart.py --oracle        # also warm JV from the exact duals
    python benchmarks/lap_warmstart.py --methods cold warm rowmin   # ablation: row minima

Warm is `solve_lap(c, predictor=RowDualNet)`: its time includes inference (features + MLP)
and the sparse refinement of the prediction (the "(sp)" column: the LAP over each row's and
column's 16 smallest reduced costs, priced until no missing entry is violated or for 12
rounds, whose duals and assignment start the dense solve; its augmentations are not in
"augs"). It predicts only when JV's column reduction leaves more
than 15% of the rows free (tracking costs do not; "(inf)" and "(sp)" are then 0), and under
1024 rows only where that reduction matched under half the rows (low-rank costs).
`--oracle` adds warm JV started from the optimal row duals of the cold solve (not timed):
the most any prediction can give.
Every objective is checked against scipy's. A method is skipped at a size when its time
at the previous size, scaled by (ratio of sizes)^3, would exceed --max-seconds. Matrices
from --float32-from on are float32 (a 16384^2 float64 matrix is 2 GB).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import lap
import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from tqdm import tqdm

from coplug.formulations.assignment import GENERATORS, generate
from coplug.learned.rowdualnet import load
from coplug.plugins.argtypes import positive_float, positive_int, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import small
from coplug.plugins.lap.solver import counters, solve_lap

STRUCTURED = ("geometric", "low_rank", "transport")
METHODS = ("scipy", "lapjv", "cold", "warm")
# Opt-in ablation (`--methods ... rowmin`): the warm pipeline fed row minima instead of
# RowDualNet duals, to show what the learned prediction adds.
ABLATIONS = ("rowmin",)


class RowMinima:
    """A data-free "predictor": u_i = min_j c_ij."""

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        return c.min(axis=1).astype(np.float64)


def _run(method: str, c: np.ndarray, model, exact: np.ndarray | None = None
         ) -> tuple[float, float, int | None, tuple[float, float], np.ndarray | None]:
    """(seconds, objective, augmentations, (inference, sparse refinement) seconds, row duals)
    of one method; `exact` are the optimal row duals (from the cold solve) the oracle starts
    from."""
    start = time.perf_counter()
    if method == "oracle":
        sol = solve_lap(c, row_duals=exact)
        return time.perf_counter() - start, sol.cost, sol.augmentations, (0.0, 0.0), None
    if method == "scipy":
        r, k = linear_sum_assignment(c)
        cost = float(c[r, k].astype(np.float64).sum())
        return time.perf_counter() - start, cost, None, (0.0, 0.0), None
    if method == "lapjv":
        x = lap.lapjv(c, extend_cost=False, return_cost=False)[0]
        rows = np.arange(len(x))
        cost = float(c[rows, x].astype(np.float64).sum())
        return time.perf_counter() - start, cost, None, (0.0, 0.0), None
    if method == "cold":
        sol = solve_lap(c)
        return time.perf_counter() - start, sol.cost, sol.augmentations, (0.0, 0.0), sol.row_duals
    sol = solve_lap(c, predictor=RowMinima() if method == "rowmin" else model)
    extra = (sol.info["inference_s"], sol.info["sparse_s"])
    return time.perf_counter() - start, sol.cost, sol.augmentations, extra, None




def main(argv: list[str] | None = None) -> int:
    """Run the grid, print the table and one summary line; 130 when interrupted."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    p.add_argument("--sizes", nargs="+", type=positive_int, default=[1024, 2048, 4096, 8192, 16384])
    p.add_argument("--seed", type=seed_int, default=2026)
    p.add_argument("--float32-from", type=int, default=8192)
    p.add_argument("--max-seconds", type=positive_float, default=300.0,
                   help="skip predicted longer runs")
    p.add_argument("--quick", action="store_true", help="sizes 512 and 1024")
    p.add_argument("--oracle", action="store_true", help="also warm JV from the exact duals")
    p.add_argument("--methods", nargs="+", default=list(METHODS),
                   choices=list(METHODS + ABLATIONS),
                   help="run only these (e.g. cold warm at N=16384, where scipy takes hours)")
    args = p.parse_args(argv)
    chosen = tuple(m for m in METHODS + ABLATIONS if m in args.methods)
    methods = chosen + ("oracle",) if args.oracle else chosen
    sizes = [512, 1024] if args.quick else sorted(args.sizes)
    torch.set_num_threads(1)  # a tiny MLP: thread pools only add contention
    model = load()
    # Past small.MAX_ENTRIES solve_lap leaves its one-call small path for the kernels cold JV
    # runs at every benchmark size: loading those was charged to the first timed cold solve.
    kernel_n = math.isqrt(small.MAX_ENTRIES) + 1
    for dtype in (np.float64, np.float32):  # compile (or load) every kernel before timing
        solve_lap(generate("low_rank", 128, seed=0, dtype=dtype), predictor=model)  # predicted
        solve_lap(generate("uniform", 96, seed=0, dtype=dtype))
        solve_lap(generate("uniform", kernel_n, seed=0, dtype=dtype))
    header = (f"{'generator':10s} {'N':>6s} {'scipy':>8s} {'lapjv':>8s} {'cold':>8s} {'augs':>6s} "
              f"{'warm':>8s} {'(inf)':>6s} {'(sp)':>6s} {'augs':>6s} {'cold/warm':>9s} "
              f"{'lapjv/warm':>10s} "
              + (f"{'rowmin':>8s} {'augs':>6s} " if "rowmin" in chosen else "")
              + (f"{'oracle':>8s} {'augs':>6s} " if args.oracle else "") + "opt")
    rows: list[dict] = []
    last: dict[tuple[str, str], tuple[int, float]] = {}
    cells = [(g, n) for g in args.generators for n in sizes]
    interrupted = False
    try:
        for name, n in tqdm(cells, desc="lap benchmark", file=sys.stderr):
            dtype = np.float32 if n >= args.float32_from else np.float64
            c = generate(name, n, seed=args.seed, dtype=dtype)
            row = dict.fromkeys(methods) | dict.fromkeys(METHODS) | {"generator": name, "n": n}
            exact = None  # the cold solve's optimal row duals, for the oracle
            for method in methods:
                prev = last.get((name, method))
                skip = method == "oracle" and not row.get("cold")
                if skip or (prev and prev[1] * (n / prev[0]) ** 3 > args.max_seconds):
                    row[method] = None
                    continue
                seconds, objective, augs, extra, duals = _run(method, c, model, exact)
                exact = duals if method == "cold" else exact
                last[(name, method)] = (n, seconds)
                row[method] = (seconds, objective, augs, extra)
            rows.append(row)
            del c
    except KeyboardInterrupt:
        interrupted = True
        print("interrupted: partial table", file=sys.stderr)
    print(header)
    for row in rows:
        print(_format(row))
    print(_summary(rows))
    return 130 if interrupted else 0


def _format(row: dict) -> str:
    """One table line; '-' for skipped methods."""
    def t(method: str) -> str:
        return f"{row[method][0]:8.3f}" if row[method] else f"{'-':>8s}"

    def a(method: str) -> str:
        return f"{row[method][2]:6d}" if row[method] else f"{'-':>6s}"

    warm, cold, lapjv = row["warm"], row["cold"], row["lapjv"]
    inf = f"{warm[3][0]:6.3f} {warm[3][1]:6.3f}" if warm else f"{'-':>6s} {'-':>6s}"
    cw = f"{cold[0] / warm[0]:9.2f}" if warm and cold else f"{'-':>9s}"
    lw = f"{lapjv[0] / warm[0]:10.2f}" if warm and lapjv else f"{'-':>10s}"
    oracle = "".join(f"{t(m)} {a(m)} " for m in ("rowmin", "oracle") if m in row)
    return (f"{row['generator']:10s} {row['n']:6d} {t('scipy')} {t('lapjv')} {t('cold')} "
            f"{a('cold')} {t('warm')} {inf} {a('warm')} {cw} {lw} {oracle}{_optimal(row)}")


def _optimal(row: dict) -> str:
    """'yes' when every method that ran matches scipy's objective ('n/a' without scipy)."""
    if not row["scipy"]:
        ref = row["cold"][1] if row["cold"] else None
        others = [row[m][1] for m in ("lapjv", "warm", "rowmin", "oracle") if row.get(m)]
        if ref is None:
            return "n/a"
        ok = all(abs(o - ref) <= 1e-6 * max(1.0, abs(ref)) for o in others)
        return "yes*" if ok else "NO"
    ref = row["scipy"][1]
    ran = [m for m in (*METHODS, *ABLATIONS, "oracle") if row.get(m)]
    ok = all(abs(row[m][1] - ref) <= 1e-6 * max(1.0, abs(ref)) for m in ran)
    return "yes" if ok else "NO"


def _summary(rows: list[dict]) -> str:
    """The one summary line: optimality, warm speedups, target cells."""
    checked = [r for r in rows if r["scipy"]]
    ok = sum(_optimal(r) == "yes" for r in checked)
    timed = [r for r in rows if r["warm"] and r["cold"]]
    speed = [r["cold"][0] / r["warm"][0] for r in timed]
    target = [r for r in timed if r["generator"] in STRUCTURED and r["n"] >= 4096]
    hit = [r for r in target if r["cold"][0] / r["warm"][0] >= 2.0]
    raced = [r for r in target if r["lapjv"]]
    beat = [r for r in raced if r["lapjv"][0] > r["warm"][0]]
    wrong = sum(_optimal(r) == "NO" for r in rows)
    cold_only = sum(_optimal(r) == "yes*" for r in rows)
    unchecked = sum(_optimal(r) == "n/a" for r in rows)
    median = f"{statistics.median(speed):.2f}x" if speed else "n/a"
    return (f"SUMMARY lap_warmstart: {ok}/{len(checked)} cells checked against scipy optimal, "
            f"{cold_only} against cold JV only, {unchecked} with no reference; "
            f"{wrong} wrong objectives; "
            f"warm vs cold median {median}; structured N>=4096: "
            f">=2x in {len(hit)}/{len(target)}, faster than lapjv in {len(beat)}/{len(raced)}; "
            f"fallbacks {counters()['fallbacks']}")


if __name__ == "__main__":
    exit_on_interrupt(main)
