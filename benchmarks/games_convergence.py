"""Constrained concave games: SCIP-certified Nash gap of log-barrier gradient ascent vs
iterations, on Cournot (shared capacity), network flow control (shared links) and resource
allocation (nonconvex bilinear coupling).

For each target epsilon the ascent runs with a fixed barrier weight mu = epsilon / 4 (as in
the analysis); the certified gap (max over players of SCIP's best-response bound minus the
player's utility) is computed at geometric checkpoints, giving the iterations after which it
stays below epsilon. The slope of log(iterations) against log(1/epsilon) is compared with
the bound's 3.
Every iterate is checked for feasibility (compiled slacks on all, Pyomo on a sample).

    python benchmarks/games_convergence.py            # eps = 1e-1 .. 1e-4
    python benchmarks/games_convergence.py --quick    # eps = 1e-1 .. 1e-3, fewer iterations
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from tqdm import tqdm

from coplug.formulations.game_solvers import (
    barrier_gradient_ascent,
    certify,
    compile_game,
    max_violation,
)
from coplug.formulations.games import EXAMPLES, example
from coplug.plugins.argtypes import choice_list, positive_int
from coplug.plugins.interrupts import exit_on_interrupt


def checkpoints(last: int, factor: float = 1.5) -> list[int]:
    """0, 1, 2, 3, 5, ... geometric up to and including `last`, plus the powers of ten."""
    points, t = [0], 1.0
    while t < last:
        points.append(int(t))
        t = max(t * factor, t + 1)
    decades = [10**d for d in range(1, 6) if 10**d < last]
    return sorted(set(points + decades + [last]))


def all_feasible(name: str, iterates: list[np.ndarray], sample: int = 300) -> tuple[bool, float]:
    """Smallest compiled slack over every iterate > 0, and no Pyomo-evaluated violation on
    an evenly spaced sample (an independent evaluation of the same constraints)."""
    game = example(name)
    compiled = compile_game(game)
    smallest = min(float(compiled.slacks(x).min()) for x in iterates)
    for x in iterates[:: max(1, len(iterates) // sample)] + [iterates[-1]]:
        game.set_profile(compiled.profile(x))
        if max_violation(game)[0] > 0.0:
            return False, smallest
    return smallest > 0, smallest


def run(name: str, epsilon: float, max_iter: int) -> dict:
    """One fixed-mu run; certified gap at every checkpoint; `reached` is the first checkpoint
    from which on every certified gap stays <= epsilon."""
    game = example(name)
    result = barrier_gradient_ascent(game, mu=epsilon / 4, max_iter=max_iter,
                                     keep_iterates=True)
    compiled = compile_game(game)
    curve = [(t, certify(game, compiled.profile(result.iterates[t])).epsilon)
             for t in checkpoints(len(result.iterates) - 1)]
    above = [t for t, gap in curve if gap > epsilon]
    reached = None if curve[-1][1] > epsilon else next(t for t, _ in curve if t > max(
        above, default=-1))
    final = curve[-1][1]
    feasible, smallest = all_feasible(name, result.iterates)
    return {"game": name, "epsilon": epsilon, "mu": epsilon / 4, "reached": reached,
            "iterations": result.iterations, "final_gap": final, "feasible": feasible,
            "min_slack": smallest, "curve": curve}


def fitted_slope(rows: list[dict]) -> float:
    """Slope of log(iterations to epsilon) against log(1/epsilon) (iterations counted >= 1)."""
    points = [(r["epsilon"], max(r["reached"], 1)) for r in rows if r["reached"] is not None]
    if len(points) < 2:
        return float("nan")
    eps, iters = np.array(points, dtype=float).T
    return float(np.polyfit(np.log(1 / eps), np.log(iters), 1)[0])


def epsilon_list(text: str) -> list[float]:
    """argparse type: comma-separated target gaps, each a finite number > 0."""
    try:
        values = [float(e) for e in text.split(",") if e.strip()]
    except ValueError:
        values = []
    if not values or not all(0 < e < float("inf") for e in values):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers > 0 (e.g. 1e-1,1e-2), got {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eps", type=epsilon_list, default="1e-1,1e-2,1e-3,1e-4",
                        help="target gaps")
    parser.add_argument("--games", type=choice_list(EXAMPLES), default=",".join(EXAMPLES))
    parser.add_argument("--max-iter", type=positive_int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="eps 1e-1..1e-3, 5000 iterations")
    args = parser.parse_args(argv)
    targets = [1e-1, 1e-2, 1e-3] if args.quick else args.eps
    max_iter = 5000 if args.quick else args.max_iter
    names = args.games
    rows = []
    print(f"{'game':<20}{'eps':>8}{'mu':>9}{'iters to eps':>14}{'ran':>7}{'final gap':>11}"
          f"{'min slack':>11}  feasible  certified gap at iteration (t:gap)")
    try:
        for name, epsilon in tqdm([(n, e) for n in names for e in targets], file=sys.stderr,
                                  leave=False):
            r = run(name, epsilon, max_iter)
            rows.append(r)
            shown = [(t, g) for t, g in r["curve"] if t in (0, 10, 100, 1000, 10000)]
            curve = " ".join(f"{t}:{g:.1e}" for t, g in shown + [r["curve"][-1]])
            print(f"{name:<20}{epsilon:>8.0e}{r['mu']:>9.1e}{r['reached']!s:>14}"
                  f"{r['iterations']:>7}{r['final_gap']:>11.2e}{r['min_slack']:>11.2e}"
                  f"  {'yes' if r['feasible'] else 'NO':<8}  {curve}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: the summary covers the runs finished so far", file=sys.stderr)
        print(summary(rows, names))
        return 130
    print(summary(rows, names))
    return 0


def summary(rows: list[dict], names: list[str]) -> str:
    """The SUMMARY line over the finished runs; a game with none counts as not below 1e-4."""
    parts = []
    for name in names:
        mine = [r for r in rows if r["game"] == name]
        if not mine:
            parts.append(f"{name}: no run finished")
            continue
        best = min(r["final_gap"] for r in mine)
        reached = sum(r["reached"] is not None for r in mine)
        slope = fitted_slope(mine)
        shown = f"{slope:.2f}" if np.isfinite(slope) else "? (a slope needs 2 targets reached)"
        parts.append(f"{name}: best certified gap {best:.1e}, iterations ~ (1/eps)^"
                     f"{shown} over {reached}/{len(mine)} targets reached "
                     "(bound: (1/eps)^3)")
    infeasible = sum(not r["feasible"] for r in rows)
    below = all(min((r["final_gap"] for r in rows if r["game"] == n), default=np.inf) < 1e-4
                for n in names)
    return (f"SUMMARY {'; '.join(parts)}; gap < 1e-4 on every game: "
            f"{'yes' if below else 'no'}; runs with an infeasible iterate: "
            f"{infeasible}/{len(rows)}")


if __name__ == "__main__":
    exit_on_interrupt(main)
