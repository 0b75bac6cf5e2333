"""Default SCIP vs SCIP + LapHeuristic (warm-started LAP, patched into tours) on TSP MIPs.

    python benchmarks/lap_heuristic.py                       # default grid (about 5-15 min)
    python benchmarks/lap_heuristic.py --quick               # 2 small instances per family
    python benchmarks/lap_heuristic.py --families euclid --sizes 20,30 --n-instances 5

Instances are MTZ models `tsp_mip(dist)`: "euclid" on `random_euclidean(n, seed)` (TSPLIB
EUC_2D, --sizes) and "atsp" on asymmetric uniform integer arc lengths 1..99 (--atsp-sizes),
whose assignment relaxation is tight. Seeds start at --seed-start (1000, disjoint from the
tests). Both configurations solve the same instances with the same SCIP settings, random
seed shift (the instance seed) and --time-limit; times are SCIP CPU seconds
(timing/clocktype 1), a time-limited solve counts at its limit. The numba kernels are
compiled before anything is timed.

Per family and configuration it prints: instances solved to optimality, shifted geometric
means of time (shift 1 s) and nodes (shift 10), the ratio default/heuristic of each (> 1:
the heuristic is faster / needs fewer nodes), the mean time and gap of the first incumbent,
the mean time until the incumbent is within 1% of and at the reference objective (the
proved optimum, else the best either configuration found; a solve that never gets there
counts at its own time), the mean primal-dual integral (SCIP's, gap % x s), the heuristic's
accepted solutions / calls and its own time, its wins/losses on time (> 5% apart) against
default SCIP per instance, and whether both configurations proved the
same optimum (1e-6 relative) on every instance where both proved one. The last line is the
summary.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyscipopt import SCIP_EVENTTYPE, Eventhdlr
from tqdm import tqdm

from coplug.formulations.tsp import random_asymmetric, random_euclidean, tsp_mip
from coplug.plugins.argtypes import choice_list, int_list, positive_float, positive_int, seed_int
from coplug.plugins.bridge import solve
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import LapHeuristic, solve_lap
from coplug.plugins.results import Result, Status

CONFIGS = ("default", "heuristic")
FAMILIES = ("euclid", "atsp")
REL_TOL = 1e-6


def build(family: str, n: int, seed: int) -> pyo.ConcreteModel:
    """The MTZ TSP model of one instance."""
    make = random_euclidean if family == "euclid" else random_asymmetric
    dist = make(n, seed).dist
    return tsp_mip(dist)


class _IncumbentLog(Eventhdlr):
    """Event handler: appends (SCIP time, objective) at every new incumbent."""

    def __init__(self, log: list[tuple[float, float]]) -> None:
        super().__init__()
        self.log = log

    def eventinit(self) -> None:
        self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexit(self) -> None:
        self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexec(self, event: Any) -> None:
        best = self.model.getBestSol()
        self.log.append((self.model.getSolvingTime(), self.model.getSolObjVal(best)))


class Recorder:
    """Plugin: logs the incumbents of one solve and reads SCIP's primal-dual integral."""

    name = "recorder"

    def __init__(self) -> None:
        self.incumbents: list[tuple[float, float]] = []
        self._scip: Any = None

    def attach(self, scip_model: Any, var_map: Any = None) -> None:
        """Include the incumbent event handler into the PySCIPOpt model."""
        self.incumbents, self._scip = [], scip_model
        scip_model.includeEventhdlr(_IncumbentLog(self.incumbents), "incumbent_log",
                                    "records every new incumbent")

    def statistics(self) -> dict[str, Any]:
        """Incumbent trajectory and primal-dual integral (read once, after the solve)."""
        pdi = float(self._scip.getPrimalDualIntegral()) if self._scip is not None else None
        self._scip = None  # the bridge reads statistics once; do not keep the model alive
        return {"incumbents": list(self.incumbents), "pdi": pdi}


@dataclass
class Row:
    """One solve of one instance under one configuration."""

    family: str
    n: int
    seed: int
    config: str
    status: str
    time: float
    nodes: int
    objective: float | None
    incumbents: list[tuple[float, float]]
    pdi: float | None
    heur: dict[str, Any] = field(default_factory=dict)
    reference: float | None = None

    @property
    def optimal(self) -> bool:
        """Whether SCIP proved optimality."""
        return self.status == Status.OPTIMAL.value

    def gap(self, value: float) -> float:
        """Relative gap of `value` to the reference objective, in percent."""
        ref = self.reference if self.reference is not None else value
        return 100.0 * abs(value - ref) / max(abs(ref), 1e-9)

    def first(self) -> tuple[float, float]:
        """(time, gap %) of the first incumbent; (time, inf) without one."""
        if not self.incumbents:
            return self.time, float("inf")
        t, value = self.incumbents[0]
        return t, self.gap(value)

    def time_to(self, gap_pct: float) -> float:
        """SCIP time when the incumbent first came within `gap_pct` % of the reference
        (plus a 1e-6 relative tolerance); the solve's time when it never did."""
        tol = max(gap_pct, 100.0 * REL_TOL)
        return next((t for t, v in self.incumbents if self.gap(v) <= tol), self.time)


def run_config(family: str, n: int, seed: int, config: str, time_limit: float) -> Row:
    """Solve one instance under one configuration; Ctrl-C inside SCIP raises
    KeyboardInterrupt so an interrupted solve never counts."""
    recorder = Recorder()
    plugins: list[Any] = [recorder] + ([LapHeuristic()] if config == "heuristic" else [])
    params = {"randomization/randomseedshift": seed % 2**31, "timing/clocktype": 1}
    result: Result = solve(build(family, n, seed), plugins=plugins, time_limit=time_limit,
                           **params)
    if result.status is Status.INTERRUPTED:
        raise KeyboardInterrupt
    stats = result.plugin_stats.get("recorder", {})
    return Row(family=family, n=n, seed=seed, config=config, status=result.status.value,
               time=result.time, nodes=result.nodes, objective=result.objective,
               incumbents=stats.get("incumbents", []), pdi=stats.get("pdi"),
               heur=result.plugin_stats.get("lap_heuristic", {}))


def bench_instance(family: str, n: int, seed: int, time_limit: float) -> list[Row]:
    """Both configurations on one instance; each row's reference is the proved optimum,
    else the best objective either found."""
    rows = [run_config(family, n, seed, config, time_limit) for config in CONFIGS]
    proved = [r.objective for r in rows if r.optimal and r.objective is not None]
    found = [r.objective for r in rows if r.objective is not None]
    reference = proved[0] if proved else (min(found) if found else None)
    for row in rows:
        row.reference = reference
    return rows


def same_optimum(a: Row, b: Row) -> bool | None:
    """Equal objectives (1e-6 relative) when both proved optimality; None otherwise."""
    if not (a.optimal and b.optimal) or a.objective is None or b.objective is None:
        return None
    return abs(a.objective - b.objective) <= REL_TOL * max(1.0, abs(a.objective))


def warm_up() -> None:
    """Compile the numba kernels (cold and warm-started JV) and run the heuristic once."""
    cost = sp.csr_matrix(np.arange(1.0, 10.0).reshape(3, 3))
    solve_lap(cost)
    solve_lap(cost, row_duals=np.zeros(3))
    solve(tsp_mip(random_euclidean(10, seed=0).dist), plugins=[LapHeuristic()])


def sgm(values: Sequence[float], shift: float) -> float:
    """Shifted geometric mean: exp(mean(log(v + shift))) - shift."""
    arr = np.asarray(values, dtype=float)
    return float(np.exp(np.log(arr + shift).mean()) - shift) if arr.size else float("nan")


def _mean(values: Sequence[float]) -> float:
    """Arithmetic mean, nan when empty."""
    return float(np.mean(values)) if len(values) else float("nan")


def aggregate(rows: Sequence[Row]) -> dict[str, float]:
    """Figures of one configuration over its rows."""
    heur = [r.heur for r in rows if r.heur]
    return {
        "solved": sum(r.optimal for r in rows), "count": len(rows),
        "time": sgm([r.time for r in rows], 1.0), "nodes": sgm([r.nodes for r in rows], 10.0),
        "first_t": _mean([r.first()[0] for r in rows]),
        "first_gap": _mean([r.first()[1] for r in rows]),
        "t1": _mean([r.time_to(1.0) for r in rows]), "topt": _mean([r.time_to(0.0) for r in rows]),
        "pdi": _mean([r.pdi for r in rows if r.pdi is not None]),
        "accepted": sum(h.get("accepted", 0) for h in heur),
        "calls": sum(h.get("calls", 0) for h in heur),
        "heur_time": sum(h.get("time", 0.0) for h in heur),
        "errors": sum(h.get("error") is not None for h in heur),
    }


def pairs(rows: Sequence[Row]) -> list[tuple[Row, Row]]:
    """(default, heuristic) rows of every instance both configurations finished."""
    by_instance: dict[tuple[str, int, int], dict[str, Row]] = {}
    for row in rows:
        by_instance.setdefault((row.family, row.n, row.seed), {})[row.config] = row
    return [(p["default"], p["heuristic"]) for p in by_instance.values() if len(p) == 2]


def agreement(rows: Sequence[Row]) -> tuple[int, int]:
    """(agreeing, compared) instances: both configurations proved an optimum."""
    verdicts = [same_optimum(*pair) for pair in pairs(rows)]
    return sum(v is True for v in verdicts), sum(v is not None for v in verdicts)


def wins_losses(rows: Sequence[Row], margin: float = 0.05) -> tuple[int, int]:
    """Instances where the heuristic's time is > 5% below / above default SCIP's."""
    both = pairs(rows)
    wins = sum(h.time < (1 - margin) * d.time for d, h in both)
    return wins, sum(h.time > (1 + margin) * d.time for d, h in both)


HEADER = (f"| {'family':7s} | {'config':9s} | {'opt':>5s} | {'sgm time':>8s} | {'sgm nodes':>9s} "
          f"| {'t 1st':>6s} | {'gap 1st':>7s} | {'t 1%':>6s} | {'t opt':>6s} | {'PDI':>7s} "
          f"| {'acc/calls':>9s} | {'heur s':>6s} | {'t ratio':>7s} | {'n ratio':>7s} "
          f"| {'w/l':>5s} |")


def table(rows: Sequence[Row], families: Sequence[str]) -> tuple[list[str], dict[str, dict]]:
    """Markdown lines (one per family and configuration, ratios default/this) and the
    aggregates keyed by family (and "all")."""
    lines = [HEADER, "|" + "|".join("-" * len(c) for c in HEADER.split("|")[1:-1]) + "|"]
    figures: dict[str, dict] = {}
    for family in [*families, "all"]:
        mine = [r for r in rows if family in ("all", r.family)]
        if not mine:
            continue
        figures[family] = {c: aggregate([r for r in mine if r.config == c]) for c in CONFIGS}
        for config, f in figures[family].items():
            acc = f"{f['accepted']}/{f['calls']}" if config == "heuristic" else "-"
            hs = f"{f['heur_time']:6.1f}" if config == "heuristic" else f"{'-':>6s}"
            solved = f"{f['solved']}/{f['count']}"
            base = figures[family]["default"]
            tr, nr = _ratio(base["time"], f["time"]), _ratio(base["nodes"], f["nodes"])
            wl = "{}/{}".format(*wins_losses(mine)) if config == "heuristic" else "-"
            lines.append(
                f"| {family:7s} | {config:9s} | {solved:>5s} "
                f"| {f['time']:8.2f} | {f['nodes']:9.1f} | {f['first_t']:6.2f} "
                f"| {f['first_gap']:6.1f}% | {f['t1']:6.2f} | {f['topt']:6.2f} | {f['pdi']:7.1f} "
                f"| {acc:>9s} | {hs} | {tr:7.2f} | {nr:7.2f} | {wl:>5s} |")
    return lines, figures


def _ratio(a: float, b: float) -> float:
    """a / b; 1 where both are 0 (times that round to nothing tie), nan where only b is."""
    return a / b if b > 0 else (1.0 if a == 0 else float("nan"))


def summary(figures: dict[str, dict], rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    agree, compared = agreement(rows)
    wins, losses = wins_losses(rows)
    if "all" not in figures:
        return (f"SUMMARY lap_heuristic: no instance finished; optimum agreements "
                f"{agree}/{compared}; {wall:.0f} s wall")
    d, h = figures["all"]["default"], figures["all"]["heuristic"]
    per_family = ", ".join(
        f"{fam} {_ratio(f['default']['time'], f['heuristic']['time']):.2f}x"
        for fam, f in figures.items() if fam != "all")
    return (f"SUMMARY lap_heuristic: time default/heuristic "
            f"{_ratio(d['time'], h['time']):.2f}x ({per_family}), nodes "
            f"{_ratio(d['nodes'], h['nodes']):.2f}x, heuristic wins/losses (5%) {wins}/{losses}; "
            f"first solution {d['first_t']:.2f}/{h['first_t']:.2f} s; time to 1% "
            f"{d['t1']:.2f}/{h['t1']:.2f} s; primal-dual integral {d['pdi']:.1f}/"
            f"{h['pdi']:.1f} (default/heuristic); proved optimal {d['solved']}/{d['count']} "
            f"and {h['solved']}/{h['count']}; heuristic accepted {h['accepted']} "
            f"in {h['calls']} calls, {h['errors']} errors; optimum agreements "
            f"{agree}/{compared}; {wall:.0f} s wall")


def instances(families: Sequence[str], sizes: dict[str, list[int]], n_instances: int,
              seed_start: int) -> list[tuple[str, int, int]]:
    """(family, n, seed) triples, seeds from `seed_start`; a size given twice runs once."""
    return list(dict.fromkeys((fam, n, seed) for fam in families for n in sizes[fam]
                              for seed in range(seed_start, seed_start + n_instances)))


def run_all(cells: Sequence[tuple[str, int, int]], time_limit: float,
            bench: Callable[[str, int, int, float], list[Row]] = bench_instance
            ) -> tuple[list[Row], bool]:
    """Every instance under both configurations; (rows, interrupted)."""
    rows: list[Row] = []
    try:
        for family, n, seed in tqdm(cells, desc="lap_heuristic", file=sys.stderr):
            pair = bench(family, n, seed, time_limit)
            rows += pair
            tqdm.write(f"{family} n={n} seed={seed}: " + ", ".join(
                f"{r.config} {r.status} {r.time:.2f} s {r.nodes} nodes obj {r.objective}"
                for r in pair), file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the instances finished so far",
              file=sys.stderr)
        return rows, True
    return rows, False


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line; sizes below 3 cities are a usage error."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=choice_list(FAMILIES), default=",".join(FAMILIES))
    parser.add_argument("--sizes", type=int_list, default=None,
                        help="euclid cities (default 20,25,30)")
    parser.add_argument("--atsp-sizes", type=int_list, default=None,
                        help="atsp cities (default 40,60,80)")
    parser.add_argument("--n-instances", type=positive_int, default=None, help="default 3")
    parser.add_argument("--time-limit", type=positive_float, default=60.0,
                        help="SCIP CPU seconds per solve")
    parser.add_argument("--seed-start", type=seed_int, default=1000)
    parser.add_argument("--quick", action="store_true",
                        help="2 instances, euclid n=15 and atsp n=30 (unless given)")
    args = parser.parse_args(argv)
    defaults = ([15], [30], 2) if args.quick else ([20, 25, 30], [40, 60, 80], 3)
    args.sizes = defaults[0] if args.sizes is None else args.sizes
    args.atsp_sizes = defaults[1] if args.atsp_sizes is None else args.atsp_sizes
    args.n_instances = defaults[2] if args.n_instances is None else args.n_instances
    for flag, sizes in (("--sizes", args.sizes), ("--atsp-sizes", args.atsp_sizes)):
        if min(sizes) < 3:
            parser.error(f"{flag}: a TSP needs at least 3 cities, got {min(sizes)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    sizes = {"euclid": args.sizes, "atsp": args.atsp_sizes}
    start = time.perf_counter()
    warm_up()
    cells = instances(args.families, sizes, args.n_instances, args.seed_start)
    rows, interrupted = run_all(cells, args.time_limit)
    lines, figures = table(rows, args.families)
    print(f"\n{len(rows) // 2} instances, time limit {args.time_limit:g} s (SCIP CPU s); "
          "time, t 1st, t 1%, t opt in s; PDI in gap % x s")
    print("\n".join(lines))
    print(summary(figures, rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
