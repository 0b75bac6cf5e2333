"""Exact Pareto fronts of bi-objective knapsacks: the epsilon-constraint method against
weighted sums.

    python benchmarks/pareto_front.py                    # sizes 15,25,35 x 3 seeds (~3 min)
    python benchmarks/pareto_front.py --sizes 40 --seeds 0,1

Each instance is a multi-dimensional knapsack (`mip_families.mknapsack`) with a second
objective, the packed weight of the first dimension, to minimize against the value to
maximize. `eps-scip` and `eps-highs` are `pareto_front` (every non-dominated point, since
both objectives are whole numbers); `wsum` is the textbook alternative, dichotomic weighted
sums in SCIP (Aneja and Nair): each solve minimizes a positive combination of the two, which
can only reach the *supported* points, those on the convex hull of the front. `points`
counts what each method found, `missed` the non-dominated points weighted sums cannot reach.
Seconds are wall time, all methods on the same instance in one run. The last line is the
summary.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import pyomo.environ as pyo
from tqdm import tqdm

from coplug.formulations.mip_families import mknapsack
from coplug.plugins import pareto_front, solve
from coplug.plugins.argtypes import ints_at_least
from coplug.plugins.interrupts import exit_on_interrupt


@dataclass
class Row:
    """One instance: the front both ways and the weighted sums."""

    size: int
    seed: int
    front: int
    eps_scip_s: float
    eps_highs_s: float
    same: bool
    wsum_points: int
    wsum_s: float


def instance(size: int, seed: int) -> pyo.ConcreteModel:
    """A knapsack with its value (maximize) and a weight objective (minimize), inactive."""
    m = mknapsack(size, seed=seed)
    m.value.deactivate()
    m.weight = pyo.Objective(expr=m.capacity[0].body)
    m.weight.deactivate()
    return m


def weighted_sums(m: pyo.ConcreteModel) -> set[tuple[float, float]]:
    """The supported points, by dichotomic search over positive weights (value maximized,
    weight minimized): between two points found, the weights that make them tie find a
    point beyond their segment, or none is there."""
    value, weight = m.value, m.weight

    def scalarized(w_value: float, w_weight: float) -> tuple[float, float]:
        m.scalar = pyo.Objective(expr=w_value * value.expr - w_weight * weight.expr,
                                 sense=pyo.maximize)
        solve(m)
        point = (round(pyo.value(value.expr), 6), round(pyo.value(weight.expr), 6))
        m.del_component(m.scalar)
        return point

    best_value, least_weight = scalarized(1.0, 1e-4), scalarized(1e-4, 1.0)
    found = {best_value, least_weight}
    pending = [(least_weight, best_value)]
    while pending:
        low, high = pending.pop()
        w_value, w_weight = high[1] - low[1], high[0] - low[0]  # both > 0 along the front
        if w_value <= 0 or w_weight <= 0:
            continue
        point = scalarized(w_value, w_weight)
        gain = w_value * point[0] - w_weight * point[1]
        if gain > w_value * low[0] - w_weight * low[1] + 1e-6 and point not in found:
            found.add(point)
            pending += [(low, point), (point, high)]
    return found


def run_case(size: int, seed: int) -> Row:
    """The front with SCIP and HiGHS, and the weighted sums, on one instance."""
    fronts, seconds = [], []
    for solver in ("scip", "highs"):
        m = instance(size, seed)
        start = time.perf_counter()
        front = pareto_front(m, m.value, m.weight, solver=solver)
        seconds.append(time.perf_counter() - start)
        fronts.append(sorted((round(a, 6), round(b, 6)) for a, b in
                             (p.values for p in front.points) if front.complete))
    m = instance(size, seed)
    start = time.perf_counter()
    supported = weighted_sums(m)
    wsum_s = time.perf_counter() - start
    exact = set(fronts[0])
    same = fronts[0] == fronts[1] and bool(fronts[0]) and supported <= exact
    return Row(size, seed, len(exact), seconds[0], seconds[1], same, len(supported), wsum_s)


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| size | seed | front points | eps-scip s | eps-highs s | same front | wsum points "
             "| missed by wsum | wsum s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.size} | {r.seed} | {r.front} | {r.eps_scip_s:.2f} | "
                     f"{r.eps_highs_s:.2f} | {'yes' if r.same else 'NO'} | {r.wsum_points} | "
                     f"{r.front - r.wsum_points} | {r.wsum_s:.2f} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    if not rows:
        return f"SUMMARY pareto_front: no case finished; {wall:.0f} s wall"
    front, supported = sum(r.front for r in rows), sum(r.wsum_points for r in rows)
    ratio = statistics.geometric_mean([r.eps_scip_s / max(r.wsum_s, 1e-3) for r in rows])
    highs = statistics.geometric_mean([r.eps_highs_s / max(r.eps_scip_s, 1e-3) for r in rows])
    return (f"SUMMARY pareto_front: exact fronts {front} points, weighted sums reach "
            f"{supported} ({100 * supported / max(front, 1):.0f}%); eps-scip/wsum time "
            f"{ratio:.2f}x, eps-highs/eps-scip {highs:.2f}x (geomean); same front SCIP and "
            f"HiGHS, wsum points on it: {sum(r.same for r in rows)}/{len(rows)}; "
            f"{wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(5), default=[15, 25, 35],
                        help="items (15,25,35)")
    parser.add_argument("--seeds", type=ints_at_least(0), default=[0, 1, 2], help="seeds (0,1,2)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    cases = [(n, s) for n in args.sizes for s in args.seeds]
    try:
        for size, seed in tqdm(cases, desc="pareto_front", file=sys.stderr):
            rows.append(run_case(size, seed))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.same for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
