"""`coplug pmvb FAMILY`: default SCIP vs SCIP + PMVB on one instance, and the demo section."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError
from coplug.plugins.results import Result

LEARNED_KINDS = ("logreg", "gbt", "mlp")


def resolve_predictor(predictor: str, family: str | None, threshold: float | None = None,
                      confidence: float | None = None) -> tuple[Any, dict[str, Any]]:
    """'lp', a learned kind (the family's shipped checkpoint) or a checkpoint path, with its
    training metadata ({} for lp), checked as the Python API checks it; a one-line warning
    on stderr when that metadata names another family than `family`."""
    from coplug.plugins.pmvb import EMPTY_PREDICTOR

    if predictor == "lp":
        return "lp", {}
    if not predictor.strip():  # Path("") is ".", the current folder
        raise InputError(EMPTY_PREDICTOR)
    if predictor in LEARNED_KINDS:
        from coplug.learned.pmvb_predictors import shipped_checkpoint

        if family is None:
            raise InputError(f"--predictor {predictor} needs a family to pick its checkpoint")
        path = shipped_checkpoint(family, predictor)
    else:
        path = Path(predictor)
    if path.is_dir():
        raise InputError(f"PMVB checkpoint {path} is a directory, not a checkpoint file")
    if not path.is_file():
        raise InputError(f"--predictor {predictor} is neither lp, {', '.join(LEARNED_KINDS)} "
                         "nor an existing checkpoint file (train one with python -m "
                         "coplug.learned.train_pmvb)")
    from coplug.learned.pmvb_predictors import checkpoint_metadata
    from coplug.plugins.pmvb import check_metadata, checked_predictor

    meta = checkpoint_metadata(path)
    check_metadata(meta, path.with_suffix(".json"), threshold, confidence)
    mismatch = family_mismatch(meta, family, path)
    if mismatch:
        print(f"coplug pmvb: warning: {mismatch}", file=sys.stderr)
    return checked_predictor(path), meta  # refused here, before any solve, when misfit


def family_mismatch(meta: dict[str, Any], family: str | None, path: Path) -> str | None:
    """Why a checkpoint trained on another family than `family` may predict badly, or None
    (no family to compare, or no family in its metadata)."""
    trained = meta.get("family")
    if family is None or trained is None or trained == family:
        return None
    return (f"checkpoint {path} was trained on {trained!r} instances, solving {family!r}: "
            "its predictions may be poor (the optimum stays exact)")


def solve_with_pmvb(
    model: Any, predictor: Any, threshold: float, confidence: float, mode: str = "branch",
    time_limit: float | None = None, depth: int = 0, likely_nodes: int = 50, **params: Any,
) -> Result:
    """One PMVB solve in `mode` ("branch": plugin, hyperplanes down to `depth`; "prefix":
    solve_pmvb_prefix and "start": solve_pmvb_start with `likely_nodes`, both root only)."""
    from coplug.plugins.bridge import solve
    from coplug.plugins.pmvb import PMVBBranching
    from coplug.plugins.pmvb_prefix import solve_pmvb_prefix
    from coplug.plugins.pmvb_start import solve_pmvb_start
    from coplug.plugins.progress import terminal_progress

    if mode in ("prefix", "start"):
        if depth:
            raise InputError(f"PMVB {mode} mode uses hyperplanes at the root only; use depth=0")
        if mode == "start":
            return solve_pmvb_start(model, predictor, threshold, confidence, time_limit,
                                    likely_nodes, **params)
        return solve_pmvb_prefix(model, predictor, threshold, confidence, time_limit, **params)
    rule = PMVBBranching(predictor, threshold, confidence, mode=mode, depth=depth)
    return solve(model, plugins=[rule, *terminal_progress()], time_limit=time_limit, **params)


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `pmvb` command."""
    p = subparsers.add_parser(
        "pmvb", help="compare default SCIP with SCIP + PMVB branching on one instance"
    )
    p.add_argument("family", help="setcover | cauction | indset | fcnf | mknapsack | gisp")
    p.add_argument("--size", type=int, default=None, help="default: the family's train size")
    p.add_argument("--seed", type=int, default=100000)
    p.add_argument("--predictor", default="lp",
                   help="lp | logreg | gbt | mlp (shipped checkpoint) | path to a checkpoint")
    p.add_argument("--threshold", type=float, default=None,
                   help="t; default 0.9, or the checkpoint's tuned value")
    p.add_argument("--confidence", type=float, default=None,
                   help="q; default 0.99, or the checkpoint's tuned value")
    p.add_argument("--mode", default="branch", choices=("branch", "prefix", "start"))
    p.add_argument("--depth", type=int, default=0,
                   help="branch mode: also branch on hyperplanes at nodes down to this depth")
    p.add_argument("--time-limit", type=float, default=None, help="seconds per solve")
    p.set_defaults(func=_cmd_pmvb)


def _cmd_pmvb(args: argparse.Namespace) -> int:
    """Solve one seeded instance both ways and print them side by side."""
    from coplug.formulations import registry
    from coplug.formulations.mip_families import FAMILIES, TRAIN_SIZES, build_family
    from coplug.plugins.pmvb import tuned_t_q

    if args.family not in FAMILIES:
        raise InputError(f"unknown family {args.family!r}; known: {', '.join(FAMILIES)}")
    size = TRAIN_SIZES[args.family] if args.size is None else args.size
    if isinstance(size, int) and size >= 1:  # the family names any other size itself
        registry.check_size(args.family, size)  # memory, before generating anything
    predictor, meta = resolve_predictor(args.predictor, args.family, args.threshold,
                                        args.confidence)
    t, q = tuned_t_q(meta, args.threshold, args.confidence)
    compare(lambda: build_family(args.family, size, args.seed), predictor, t, q, args.mode,
            args.time_limit, label=f"{args.family} size={size} seed={args.seed}",
            depth=args.depth)
    return 0


def compare(
    build: Any, predictor: Any, threshold: float, confidence: float, mode: str = "branch",
    time_limit: float | None = None, label: str = "", depth: int = 0,
) -> tuple[Result, Result]:
    """Solve `build()` with default SCIP and with PMVB; print both and whether optima agree.
    Ctrl-C (a solve `interrupted`) prints the rows solved so far, skips the PMVB solve when
    it stopped the default one, and raises KeyboardInterrupt (`coplug pmvb` exits 130)."""
    from coplug.plugins.bridge import solve
    from coplug.plugins.progress import terminal_progress
    from coplug.plugins.results import Status

    base = solve(build(), time_limit=time_limit, plugins=terminal_progress())
    pmvb = None
    if base.status is not Status.INTERRUPTED:
        pmvb = solve_with_pmvb(build(), predictor, threshold, confidence, mode, time_limit,
                               depth)
    name = predictor if isinstance(predictor, str) else getattr(predictor, "kind", "learned")
    print(f"{label}  PMVB predictor={name} t={threshold} q={confidence} mode={mode} "
          f"depth={depth}")
    print(f"{'':14s}{'status':>10s}{'objective':>16s}{'nodes':>9s}{'time s':>9s}")
    for tag, r in (("SCIP default", base), ("SCIP + PMVB", pmvb)):
        if r is None:
            print(f"{tag:14s}  not run (Ctrl-C)")
            continue
        obj = "-" if r.objective is None else f"{r.objective:.6g}"
        print(f"{tag:14s}{r.status.value:>10s}{obj:>16s}{r.nodes:>9d}{r.time:>9.3f}")
    if pmvb is None or pmvb.status is Status.INTERRUPTED:
        raise KeyboardInterrupt
    stats = pmvb.plugin_stats.get("pmvb", {})
    if stats:
        print(f"PMVB root: branched={stats['root_branched']} |U|={stats['n_upper']} "
              f"r_U={stats['rhs_upper']} |L|={stats['n_lower']} r_L={stats['rhs_lower']} "
              f"likely child held the optimum: {stats['likely_held']}")
    print(f"same optimum: {same_objective(base, pmvb)}")
    return base, pmvb


def same_objective(a: Result, b: Result, tol: float = 1e-6) -> bool:
    """Both optimal with objectives equal up to a relative tolerance."""
    if not (a.optimal and b.optimal) or a.objective is None or b.objective is None:
        return False
    return abs(a.objective - b.objective) <= tol * max(1.0, abs(a.objective))


def pmvb_section() -> None:
    """PMVB (data-free, root LP as predictor) on a 35-item multi-dimensional knapsack."""
    from coplug.formulations.mip_families import mknapsack

    for mode in ("branch", "prefix", "start"):
        _, pmvb = compare(lambda: mknapsack(35, seed=100001), "lp", 0.9, 0.99, mode=mode,
                          label="mknapsack n=35")
        assert pmvb.optimal
