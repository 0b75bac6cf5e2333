"""Evolution of benchmarks (EoB), offline: does the evolved Pareto front improve, beat random
programs on target similarity, and does SCIP certify each front program's optimum?

    python benchmarks/eob_evolution.py            # the issue's sizes
    python benchmarks/eob_evolution.py --quick    # a small run

Checks: (1) hypervolume of the (similarity, differentiation) front grows over generations;
(2) per BBOB target, the closest evolved program is closer in normalized ELA-feature space
than the closest of as many random programs from the same generator; (3) every Pareto-front
program's Pyomo model is solved by SCIP with status optimal and gap ~0, and the certified
optimum is at least as good as the best value any portfolio solver found.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from coplug.formulations.bbo.bbob import parse_fids
from coplug.formulations.bbo.certify import certify
from coplug.formulations.bbo.evolve import EvolutionConfig, evolve, target_features
from coplug.formulations.bbo.features import as_box_function, ela_features, feature_distance
from coplug.formulations.bbo.features import normalize as normalize_features
from coplug.formulations.bbo.proposers import SymbolicProposer
from coplug.plugins.argtypes import positive_float
from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import exit_on_interrupt


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dim", type=int, default=2)
    p.add_argument("--targets", default="1,3,15,21")
    p.add_argument("--population", type=int, default=10)
    p.add_argument("--generations", type=int, default=8)
    p.add_argument("--budget", type=int, default=60)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit", type=positive_float, default=20.0,
                   help="SCIP seconds per program")
    p.add_argument("--run-dir", default=None, help="default: a temporary directory")
    p.add_argument("--quick", action="store_true", help="population 6, 3 generations, budget 40")
    args = p.parse_args(argv)
    if args.quick:
        args.population, args.generations, args.budget, args.seeds = 6, 3, 40, 4
    try:
        targets = tuple(parse_fids(args.targets))
    except InputError as exc:
        p.error(f"argument --targets: {exc}")
    try:
        args.config = EvolutionConfig(dim=args.dim, targets=targets, population=args.population,
                                      generations=args.generations, budget=args.budget,
                                      seeds=args.seeds, seed=args.seed)
    except InputError as exc:
        p.error(str(exc))
    if args.run_dir is not None:
        try:
            Path(args.run_dir).mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=args.run_dir).close()
        except OSError as exc:
            p.error(f"argument --run-dir: cannot write to {args.run_dir!r}: "
                    f"{exc.strerror or exc}")
    return args


def random_baseline(config: EvolutionConfig, targets: dict[str, np.ndarray], n: int,
                    seed: int) -> dict[str, float]:
    """Closest distance to each target among n random programs of the same generator."""
    gen = SymbolicProposer(config.dim, config.lower, config.upper, config.max_nodes)
    rng = np.random.default_rng(seed)
    best = dict.fromkeys(targets, np.inf)
    for _ in tqdm(range(n), desc="random baseline", leave=False):
        feats = normalize_features(ela_features(as_box_function(gen.random_program(rng)),
                                                config.sample, seed=config.seed), config.sample)
        for name, f in targets.items():
            best[name] = min(best[name], feature_distance(feats, f))
    return best


def hypervolume_change(hv: list[float]) -> str:
    """First -> last hypervolume with their ratio; no ratio when the first is 0."""
    trend = "grew" if hv[-1] > hv[0] else "flat"
    if hv[0] > 0:
        return f"{hv[0]:.4f} -> {hv[-1]:.4f} (x{hv[-1] / hv[0]:.2f}, {trend})"
    return f"from 0 to {hv[-1]:.4f} ({trend})"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = args.config
    run_dir = args.run_dir or tempfile.mkdtemp(prefix="eob_")
    start = time.perf_counter()
    result = evolve(config, run_dir=run_dir, progress=True)
    evo_time = time.perf_counter() - start

    print(f"\nEoB offline: dim={config.dim} targets={args.targets} population="
          f"{config.population} generations={config.generations} budget={config.budget} "
          f"seeds={config.seeds}  ({evo_time:.0f} s, run dir {run_dir})")
    print(f"proposals: {result.rejections}")
    print("\ngeneration  hypervolume  ratio_vs_gen0")
    hv = result.hypervolume
    for g, v in enumerate(hv):
        ratio = f"{v / hv[0]:13.3f}" if hv[0] > 0 else f"{'-':>13s}"
        print(f"{g:>10d}  {v:11.4f}  {ratio}")

    targets = {k: np.array(v) for k, v in target_features(config).items()}
    baseline = random_baseline(config, targets, len(result.candidates), args.seed + 1000)
    print("\ntarget                       evolved_best_dist  random_best_dist  ratio")
    wins, ratios = 0, []
    for name, f in targets.items():
        evolved = min(feature_distance(np.array(c.features), f) for c in result.candidates)
        ratio = evolved / max(baseline[name], 1e-12)
        wins += evolved < baseline[name]
        ratios.append(ratio)
        print(f"{name:28s} {evolved:17.4f} {baseline[name]:17.4f} {ratio:6.3f}")

    print("\nid    SCIP_status  SCIP_objective   SCIP_bound  portfolio_best  certified  "
          "scip<=portfolio  time_s  program")
    certified, as_good = 0, 0
    for cand in result.front:
        cert = certify(cand.program, time_limit=args.time_limit)
        obj = cert.objective if cert.objective is not None else float("nan")
        bound = cert.bound if cert.bound is not None else float("nan")
        tol = 1e-6 * max(1.0, abs(cand.best_value))
        ok = cert.certified and obj <= cand.best_value + tol and bound <= cand.best_value + tol
        certified += cert.certified
        as_good += ok
        text = cand.text.strip().replace("\n", "; ")
        print(f"{cand.id:<5d} {cert.result.status.value:12s} {obj:14.6g} {bound:12.6g} "
              f"{cand.best_value:15.6g} {cert.certified!s:>10s} {ok!s:>16s} "
              f"{cert.result.time:7.2f}  {text[:60]}")

    print(f"\nSUMMARY eob: hypervolume {hypervolume_change(hv)}; evolved closer than random on "
          f"{wins}/{len(targets)} targets (mean distance ratio {np.mean(ratios):.3f}); SCIP "
          f"certified {certified}/{len(result.front)} front programs, certified optimum <= best "
          f"portfolio value on {as_good}/{len(result.front)}")
    return 0


if __name__ == "__main__":
    exit_on_interrupt(main)
