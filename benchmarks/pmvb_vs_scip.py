"""Default SCIP vs SCIP + PMVB (each predictor) on held-out seeded instances per family.

    python benchmarks/pmvb_vs_scip.py                 # 50 instances x 6 families (hours)
    python benchmarks/pmvb_vs_scip.py --quick         # 3 small instances per family
    python benchmarks/pmvb_vs_scip.py --families mknapsack,gisp --size mknapsack=40,gisp=50

Every configuration solves the same instances (seeds from --seed-start on, disjoint from
the training seeds) with the same SCIP settings and random seed; times are SCIP CPU
seconds. Per family it prints the shifted geometric mean of time (shift 1 s) and nodes
(shift 10), the speed-up against default SCIP, wins/losses on time, how often the likely
child held the optimum, and whether the optimum agreed with default SCIP on every
instance. Learned predictors use the checkpoints shipped in models/ with their tuned t
and q; "lp" uses --threshold and --confidence. "oracle" (opt-in, `--predictors
lp,oracle`) gives PMVB default SCIP's optimal solution as its probabilities: the most any
predictor could tell it, so it bounds what better predictions can gain; it never counts
towards the target. `--baselines pscost` adds SCIP with pseudo-cost branching (no strong
branching), to tell a gain from the hyperplanes apart from a gain from skipping SCIP's
root strong branching, which PMVB's root branching also does. `--baselines given-optimum`
adds default SCIP handed default SCIP's best solution as a MIP start before presolve (the
ceiling for any use of a prediction as a starting solution); `--baselines two-pass` runs
the start mode with no hyperplanes (all probabilities 0.5), the scheme without PMVB.
`--depths 0,3` adds PMVB
variants that branch on hyperplanes again down to depth 3. `--modes start` adds PMVB as a
primal heuristic (a search of the likely region, `--likely-nodes` nodes at most, then the
whole model warm-started from its best solution; time is both steps'). The last line is the
summary: families where some PMVB variant reached the 1.3x target, and the number of
optimum disagreements (must be 0). `--merge a.json b.json` prints the tables and summary of
earlier `--json` runs pooled per family, so two seed ranges can run side by side on two
cores (`--seed-start 100000 --n-instances 25` and `--seed-start 100025 --n-instances 25`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from tqdm import tqdm

from coplug.formulations.mip_families import BENCH_SIZES, FAMILIES, TRAIN_SIZES, build_family
from coplug.plugins.argtypes import positive_float, positive_int, seed_int
from coplug.plugins.bridge import solve
from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.pmvb import check_pmvb_params
from coplug.plugins.pmvb_cli import (
    LEARNED_KINDS,
    resolve_predictor,
    same_objective,
    solve_with_pmvb,
)
from coplug.plugins.results import Result, Status

TARGET = 1.3
ORACLE = "oracle"
MODES = ("branch", "prefix", "start")
# Extra SCIP configurations to compare against (no PMVB): label suffix -> SCIP parameters.
BASELINES: dict[str, dict[str, float]] = {
    "pscost": {"branching/pscost/priority": 100_000},  # pseudo costs only, no strong branching
}
# Default SCIP handed default SCIP's own best solution as a MIP start before presolve: the
# most any use of a prediction as a primal solution could gain (never counts to the target).
GIVEN = "given-optimum"
# The start mode without hyperplanes (every probability 0.5): a 50-node search without root
# cuts, then the whole model warm-started. Tells the hyperplanes' share of a start-mode gain
# apart from the two-pass scheme's own.
TWO_PASS = "two-pass"
HALF = "half"


@dataclass
class Config:
    """One solver configuration: default SCIP (predictor None) or PMVB with a predictor."""

    label: str
    predictor: object = None
    threshold: float = 0.9
    confidence: float = 0.99
    mode: str = "branch"
    depth: int = 0
    params: dict[str, float] = field(default_factory=dict)
    warmstart: bool = False
    likely_nodes: int = 50


@dataclass
class Row:
    """Results of one configuration on one family."""

    times: list[float] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    agree: list[bool | None] = field(default_factory=list)
    held: list[bool] = field(default_factory=list)
    branched: int = 0


def _ratio(a: float, b: float) -> float:
    """a / b; 1 where both are 0 (times that round to nothing tie), nan where only b is."""
    return a / b if b > 0 else (1.0 if a == 0 else float("nan"))


def sgm(values: Sequence[float], shift: float) -> float:
    """Shifted geometric mean: exp(mean(log(v + shift))) - shift."""
    arr = np.asarray(values, dtype=float)
    return float(np.exp(np.log(arr + shift).mean()) - shift) if arr.size else float("nan")


def configs_for(family: str, predictors: Sequence[str], modes: Sequence[str], t: float,
                q: float, baselines: Sequence[str] = (), depths: Sequence[int] = (0,)
                ) -> list[Config]:
    """Default SCIP, the chosen SCIP baselines, then one PMVB config per (predictor, mode,
    depth) that can be loaded; depths > 0 only in branch mode (prefix and start are root-only)."""
    out = [Config("scip")] + [
        Config(f"scip-{name}", HALF, mode="start") if name == TWO_PASS else
        Config(f"scip-{name}", params=BASELINES.get(name, {}), warmstart=name == GIVEN)
        for name in baselines
    ]
    variants = [(mode, d) for mode in modes for d in depths if d == 0 or mode == "branch"]
    for name in predictors:
        if name == ORACLE:
            out += [Config(_label(name, mode, d), ORACLE, t, q, mode, d) for mode, d in variants]
            continue
        try:
            predictor, meta = resolve_predictor(name, family)
        except Exception as exc:  # a missing checkpoint skips that predictor, loudly
            print(f"  skip {family}/{name}: {exc}", file=sys.stderr)
            continue
        tt, qq = (t, q) if name == "lp" else (meta.get("threshold", t), meta.get("confidence", q))
        out += [Config(_label(name, mode, d), predictor, tt, qq, mode, d) for mode, d in variants]
    return out


def _label(predictor: str, mode: str, depth: int = 0) -> str:
    """Row label of a PMVB configuration."""
    return (f"pmvb-{predictor}" + ("" if mode == "branch" else f"-{mode}")
            + (f"-d{depth}" if depth else ""))


def optimum_probabilities(model: pyo.Block) -> ComponentMap:
    """The oracle predictor: each binary's value in the solution loaded into `model`."""
    return ComponentMap(
        (var, float(round(var.value)))
        for var in model.component_data_objects(pyo.Var, active=True)
        if var.is_binary() and var.value is not None
    )


def run_config(model, config: Config, time_limit: float, seed: int) -> Result:
    """Solve `model` under one configuration with SCIP's random seed shift `seed`.

    Times are SCIP's CPU clock (timing/clocktype 1), so machine load does not skew them.
    A solve cut short by Ctrl-C (status INTERRUPTED) raises KeyboardInterrupt, so it never
    counts as a result.
    """
    params = {"randomization/randomseedshift": seed % 2**31, "timing/clocktype": 1,
              **config.params}
    if config.predictor is None:  # a warm start uses the values default SCIP just loaded
        result = solve(model, time_limit=time_limit, warmstart=config.warmstart, **params)
    else:
        result = solve_with_pmvb(model, config.predictor, config.threshold, config.confidence,
                                 config.mode, time_limit, config.depth, config.likely_nodes,
                                 **params)
    if result.status is Status.INTERRUPTED:
        raise KeyboardInterrupt
    return result


def bench_family(family: str, size: int, seeds: Sequence[int], configs: list[Config],
                 time_limit: float) -> dict[str, Row]:
    """Solve every instance under every configuration; rows keyed by config label."""
    rows = {c.label: Row() for c in configs}
    for seed in tqdm(seeds, desc=f"{family} n={size}", leave=False):
        model = build_family(family, size, seed)
        base = oracle = start = None
        for config in configs:
            if config.warmstart:  # default SCIP's solution, whatever ran in between
                for var, value in start.items():
                    var.set_value(value, skip_validation=True)
            if isinstance(config.predictor, str) and config.predictor == ORACLE:
                config = replace(config, predictor=oracle)
            elif isinstance(config.predictor, str) and config.predictor == HALF:
                config = replace(config, predictor=ComponentMap(
                    (v, 0.5) for v in model.component_data_objects(pyo.Var) if v.is_binary()))
            result = run_config(model, config, time_limit, seed)
            if base is None:
                base, oracle = result, optimum_probabilities(model)
                start = ComponentMap((v, v.value) for v in model.component_data_objects(pyo.Var))
            row = rows[config.label]
            row.times.append(result.time)
            row.nodes.append(result.nodes)
            both = base.optimal and result.optimal  # a time-limited solve proves nothing
            row.agree.append(same_objective(base, result) if both else None)
            stats = result.plugin_stats.get("pmvb", {})
            if stats.get("root_branched"):
                row.branched += 1
                row.held.append(bool(stats.get("likely_held")))
    return rows


def print_family(family: str, size: int, rows: dict[str, Row]) -> dict[str, float]:
    """The family's table; returns speed-ups (sgm time ratio vs default) per config."""
    base = rows["scip"]
    t0, n0 = sgm(base.times, 1.0), sgm(base.nodes, 10.0)
    print(f"\n{family} (size {size}, {len(base.times)} instances)")
    print(f"{'config':22s}{'sgm time':>10s}{'speedup':>9s}{'sgm nodes':>11s}{'node ratio':>11s}"
          f"{'wins/losses':>13s}{'branched':>10s}{'held':>7s}{'same opt':>10s}")
    speedups = {}
    for label, row in rows.items():
        t, n = sgm(row.times, 1.0), sgm(row.nodes, 10.0)
        wins = sum(a < 0.95 * b for a, b in zip(row.times, base.times, strict=True))
        losses = sum(a > 1.05 * b for a, b in zip(row.times, base.times, strict=True))
        held = f"{np.mean(row.held):.2f}" if row.held else "-"
        agreed = f"{sum(a is True for a in row.agree)}/{sum(a is not None for a in row.agree)}"
        speedups[label] = _ratio(t0, t)
        print(f"{label:22s}{t:10.3f}{speedups[label]:9.2f}{n:11.1f}{n0 / max(n, 1e-9):11.2f}"
              f"{f'{wins}/{losses}':>13s}{row.branched:>10d}{held:>7s}"
              f"{agreed:>10s}")
    return speedups


@dataclass
class Tally:
    """What the summary line counts over the families done so far."""

    hits: list[str] = field(default_factory=list)
    disagreements: int = 0
    solves: int = 0


def tally_family(family: str, size: int, rows: dict[str, Row], tally: Tally) -> dict[str, float]:
    """Print the family's table and add its target hit and optimum checks to `tally`."""
    speedups = print_family(family, size, rows)
    fair = [(v, k) for k, v in speedups.items() if k.startswith("pmvb-") and ORACLE not in k]
    best = max(fair) if fair else (float("nan"), "-")
    if best[0] >= TARGET:
        tally.hits.append(f"{family}:{best[1]}")
    compared = list(rows.values())[1:]  # the first row is default SCIP itself
    tally.disagreements += sum(a is False for r in compared for a in r.agree)
    tally.solves += sum(a is not None for r in compared for a in r.agree)
    return speedups


def print_summary(tally: Tally, n_families: int, tail: str) -> None:
    """The one summary line: families at the target, optimum disagreements, `tail`."""
    print(f"\nSUMMARY: PMVB >= {TARGET}x faster (shifted geometric mean time) on "
          f"{len(tally.hits)}/{n_families} families {tally.hits}; optimum disagreements "
          f"{tally.disagreements}/{tally.solves} compared solves; {tail}")


def merge_runs(paths: Sequence[str], parser: argparse.ArgumentParser) -> int:
    """Tables and summary of earlier --json runs pooled per family (e.g. two seed ranges
    run side by side); refuses runs that differ in size or configurations or share a seed."""
    pooled: dict[str, dict] = {}
    for path in paths:
        try:
            with open(path) as fh:
                run = json.load(fh)
        except (OSError, ValueError) as exc:
            parser.error(f"--merge {path!r}: cannot read a --json result ({exc})")
        for family, res in run.items():
            rows = {k: Row(**v) for k, v in res["rows"].items()}
            seeds = res.get("seeds")
            if family not in pooled:
                pooled[family] = {"size": res["size"], "rows": rows, "seeds": list(seeds or [])}
                continue
            into = pooled[family]
            if into["size"] != res["size"] or list(into["rows"]) != list(rows):
                parser.error(f"--merge {path!r}: {family} ran at another size or with other "
                             "configurations than in the files before it")
            if seeds and set(seeds) & set(into["seeds"]):
                parser.error(f"--merge {path!r}: {family} repeats seeds of an earlier file")
            into["seeds"] += list(seeds or [])
            for label, row in rows.items():
                dest = into["rows"][label]
                for name in ("times", "nodes", "agree", "held"):
                    getattr(dest, name).extend(getattr(row, name))
                dest.branched += row.branched
    tally = Tally()
    for family, res in pooled.items():
        tally_family(family, res["size"], res["rows"], tally)
    counts = sorted({len(res["rows"]["scip"].times) for res in pooled.values()})
    print_summary(tally, len(pooled), f"{'/'.join(map(str, counts))} instances/family; "
                  f"merged from {len(paths)} runs")
    return 1 if tally.disagreements else 0


def parse_sizes(text: str | None, families: Sequence[str], parser: argparse.ArgumentParser
                ) -> dict[str, int]:
    """--size as one integer >= 1 for all families or as family=N pairs over --families."""
    if not text:
        return {}
    try:
        if "=" not in text:
            sizes = dict.fromkeys(families, int(text))
        else:
            pairs = (item.split("=") for item in text.split(",") if item.strip())
            sizes = {name.strip(): int(value) for name, value in pairs}
    except ValueError:
        parser.error(f"--size must be N or family=N pairs, got {text!r}")
    for name, size in sizes.items():
        if name not in families:
            parser.error(f"--size names family {name!r}, which is not among --families "
                         f"({', '.join(families)})")
        if size < 1:
            parser.error(f"--size for {name} must be >= 1, got {size}")
    return sizes


def comma_list(text: str) -> list[str]:
    """The non-empty items of a comma list, repeats dropped (a repeated label would get two
    results per instance), order kept."""
    return list(dict.fromkeys(item.strip() for item in text.split(",") if item.strip()))


def check_predictors(predictors: Sequence[str], parser: argparse.ArgumentParser) -> None:
    """Refuse a predictor that is neither lp, oracle, a learned kind nor a checkpoint file."""
    known = ("lp", ORACLE, *LEARNED_KINDS)
    bad = [p for p in predictors if p not in known and not os.path.isfile(p)]
    if bad:
        parser.error(f"--predictors: unknown {bad}; use {', '.join(known)} or checkpoint files")


def check_writable(path: str, parser: argparse.ArgumentParser) -> None:
    """Fail before any solve when `path` cannot be written (a file it creates is removed)."""
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        parser.error(f"--json {path!r} is not writable: {exc.strerror or exc}")
    if not existed:
        os.remove(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--n-instances", type=positive_int, default=50)
    parser.add_argument("--size", default=None,
                        help="N for every family, or per family: setcover=200,gisp=50")
    parser.add_argument("--predictors", default="lp,logreg,gbt,mlp")
    parser.add_argument("--modes", default="branch", help="comma list of branch, prefix, start")
    parser.add_argument("--depths", default="0",
                        help="comma list of PMVB depths (branch mode): 0 = root only, d > 0 "
                             "also branches on hyperplanes at nodes down to depth d")
    parser.add_argument("--likely-nodes", type=positive_int, default=None,
                        help="start mode (and the two-pass baseline): node limit of step 1")
    parser.add_argument("--baselines", default="",
                        help="comma list of extra SCIP configurations: "
                             f"{', '.join([*BASELINES, GIVEN, TWO_PASS])}")
    parser.add_argument("--threshold", type=float, default=0.9, help="t for the lp predictor")
    parser.add_argument("--confidence", type=float, default=0.99, help="q for the lp predictor")
    parser.add_argument("--time-limit", type=positive_float, default=300.0,
                        help="seconds per solve")
    parser.add_argument("--seed-start", type=seed_int, default=100000)
    parser.add_argument("--quick", action="store_true", help="3 instances at the train sizes")
    parser.add_argument("--json", default=None, help="write all raw figures to this file")
    parser.add_argument("--merge", nargs="+", metavar="JSON", default=None,
                        help="print the pooled tables of earlier --json runs and exit")
    args = parser.parse_args(argv)
    if args.merge:
        return merge_runs(args.merge, parser)
    families = comma_list(args.families)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    if not families:  # it ran nothing and summed "0/0 families"
        parser.error(f"--families is empty; give some of {', '.join(FAMILIES)}")
    n = 3 if args.quick else args.n_instances
    sizes = parse_sizes(args.size, families, parser)
    predictors = comma_list(args.predictors)
    check_predictors(predictors, parser)
    modes = comma_list(args.modes)
    if not modes or set(modes) - set(MODES):
        parser.error(f"--modes must list some of {', '.join(MODES)}, got {args.modes!r}")
    try:
        check_pmvb_params(args.threshold, args.confidence)
    except InputError as exc:
        parser.error(f"--threshold/--confidence: {exc}")
    baselines = comma_list(args.baselines)
    try:
        depths = list(dict.fromkeys(int(d) for d in comma_list(args.depths)))
    except ValueError:
        parser.error(f"--depths must be a comma list of integers, got {args.depths!r}")
    if not depths or min(depths) < 0:
        parser.error(f"--depths must list depths >= 0, got {args.depths!r}")
    known = {*BASELINES, GIVEN, TWO_PASS}
    if set(baselines) - known:
        parser.error(f"unknown baselines {sorted(set(baselines) - known)}; known: "
                     f"{', '.join(sorted(known))}")
    if args.likely_nodes is not None and "start" not in modes and TWO_PASS not in baselines:
        parser.error("--likely-nodes applies to --modes start and --baselines two-pass only")
    likely_nodes = 50 if args.likely_nodes is None else args.likely_nodes
    if args.json:
        check_writable(args.json, parser)
    seeds = range(args.seed_start, args.seed_start + n)
    results: dict[str, dict] = {}
    tally = Tally()
    interrupted = False
    start = time.perf_counter()
    try:
        for family in families:
            size = sizes.get(family) or (TRAIN_SIZES if args.quick else BENCH_SIZES)[family]
            configs = [replace(c, likely_nodes=likely_nodes) for c in configs_for(
                family, predictors, modes, args.threshold, args.confidence, baselines, depths)]
            rows = bench_family(family, size, seeds, configs, args.time_limit)
            speedups = tally_family(family, size, rows, tally)
            results[family] = {"size": size, "seeds": list(seeds), "speedups": speedups,
                               "rows": {k: vars(v) for k, v in rows.items()}}
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: summary covers the families finished so far", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, default=float)
    print_summary(tally, len(results), f"{n} instances/family; "
                  f"{time.perf_counter() - start:.0f} s wall")
    if interrupted:
        return 130
    return 1 if tally.disagreements else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
