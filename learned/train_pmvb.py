"""Train PMVB predictors for one instance family and pick t and q on validation data.

    python -m coplug.learned.train_pmvb --family setcover --n-train 200
    python -m coplug.learned.train_pmvb --family setcover --rescore   # figures only, no refit

Data: seeded instances of the family (seeds seed .. seed+n_train-1 for training, the next
n_val for validation; the benchmark draws held-out seeds from 100000 on) are solved to
optimality by SCIP with a recorder plugin that reads the per-variable root features at
the first branching, or at the last optimal root LP when SCIP closes the root without
branching (instances solved before any optimal root LP, in presolve or by a heuristic whose
solution stopped the root LP at its objective limit, are skipped). Labels are the optimal 0/1
values. Each requested kind (logreg, gbt, mlp) is fitted, calibrated (isotonic by
default) and written to
``models/pmvb_<family>_<kind>.joblib`` (``.pt`` for the MLP) with a JSON of its metadata.

Choosing t and q (the concentration-bound rule): for every (t, q) on a grid, build the
Hoeffding hyperplanes from the calibrated validation probabilities of each validation
instance and check whether its recorded optimum lies in the likely child. Hoeffding
promises this with probability about q (per hyperplane) if the probabilities are
calibrated; we keep the pairs whose empirical hold rate is at least q and, among them,
take the one that pins the most variables (largest mean tightness, i.e. r_U + |L| - r_L
over n, the restriction the likely child imposes). If no pair keeps its promise, the pair
with the highest hold rate wins. The JSON reports the chosen pair's empirical hold rate
next to the promised q, and the whole grid. (The recorded optimum may not be the only
one, so the hold rate is a lower bound on "the likely child held an optimum".)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coplug.formulations import registry
from coplug.formulations.mip_families import FAMILIES, TRAIN_SIZES, build_family
from coplug.learned.checkpoint_io import (
    atomic_write_text,
    file_sha256,
    occupied_reason,
    read_sidecar,
    strict_json,
    unwritable_reason,
)
from coplug.learned.pmvb_features import FEATURE_NAMES, FEATURE_VERSION, RootFeatureRecorder
from coplug.learned.pmvb_predictors import (
    CALIBRATIONS,
    KINDS,
    SEED_BOUND,
    PMVBPredictor,
    checkpoint_name,
    load_predictor,
    stale_features,
)
from coplug.plugins.bar import on_terminal, progress_bar
from coplug.plugins.bridge import solve
from coplug.plugins.errors import CoplugError, InputError
from coplug.plugins.interrupts import exit_on_interrupt, sigint_deferred
from coplug.plugins.pmvb import hoeffding_hyperplanes
from coplug.plugins.results import Status

T_GRID = (0.6, 0.7, 0.8, 0.9, 0.95)
# Why `collect` skips an instance: no proven optimum to label it, or no root LP to read.
NOT_OPTIMAL, NO_ROOT_LP = "not_optimal", "no_root_lp"
Q_GRID = (0.8, 0.9, 0.95, 0.99)


@dataclass
class Sample:
    """Root features and optimal labels of one solved instance."""

    seed: int
    features: np.ndarray
    labels: np.ndarray


def collect(family: str, size: int, seeds: Sequence[int], time_limit: float = 30.0,
            progress: bool = True, skipped: Counter[str] | None = None) -> list[Sample]:
    """Solve each seeded instance and keep (root features, optimal labels) where SCIP solved
    it to optimality with a root LP; `skipped` counts the others by reason
    (NOT_OPTIMAL, NO_ROOT_LP), so an error can say why too few were kept.

    SCIP catches Ctrl-C and returns an INTERRUPTED result; that is re-raised as
    KeyboardInterrupt so training stops instead of silently dropping the instance.
    """
    skipped = Counter() if skipped is None else skipped
    samples = []
    for seed in progress_bar(seeds, desc=f"solve {family}", disable=not progress, leave=False):
        model = build_family(family, size, seed)
        recorder = RootFeatureRecorder()
        result = solve(model, plugins=[recorder], time_limit=time_limit)
        if result.status is Status.INTERRUPTED:
            raise KeyboardInterrupt(f"SCIP solve of {family} seed {seed} interrupted")
        if not result.optimal or not recorder.variables:
            skipped[NOT_OPTIMAL if not result.optimal else NO_ROOT_LP] += 1
            continue
        labels = np.array([round(v.value or 0.0) for v in recorder.variables], dtype=int)
        samples.append(Sample(int(seed), recorder.features, labels))
    return samples


def stack(samples: Sequence[Sample]) -> tuple[np.ndarray, np.ndarray]:
    """All rows of all samples as one (X, y)."""
    if not samples:
        return np.zeros((0, len(FEATURE_NAMES))), np.zeros(0, dtype=int)
    return np.vstack([s.features for s in samples]), np.concatenate([s.labels for s in samples])


def select_t_q(
    predictor: PMVBPredictor, samples: Sequence[Sample],
    t_grid: Sequence[float] = T_GRID, q_grid: Sequence[float] = Q_GRID,
) -> dict:
    """Grid of (t, q) with empirical hold rate and tightness, and the chosen pair (see module)."""
    if not samples:  # every hold rate would be a made-up 0 and the chosen pair arbitrary
        raise InputError("choosing t and q needs at least one validation instance, got none")
    probs = [predictor.predict_proba(s.features)[:, 1] for s in samples]
    grid = []
    for t in t_grid:
        for q in q_grid:
            held, tight = [], []
            for p, s in zip(probs, samples, strict=True):
                planes = hoeffding_hyperplanes(p, t, q)
                held.append(planes.likely_holds(s.labels))
                tight.append(planes.tightness(len(p)))
            grid.append({"t": t, "q": q, "hold_rate": float(np.mean(held)) if held else 0.0,
                         "tightness": float(np.mean(tight)) if tight else 0.0})
    kept = [g for g in grid if g["hold_rate"] >= g["q"]]
    if kept:
        best = max(kept, key=lambda g: (g["tightness"], g["q"]))
    else:
        best = max(grid, key=lambda g: (g["hold_rate"], g["tightness"]))
    return {"chosen": best, "grid": grid, "promise_kept": bool(kept)}


def train_family(
    family: str, n_train: int, n_val: int, size: int, seed: int, kinds: Sequence[str],
    calibration: str, out_dir: Path | None, time_limit: float, progress: bool = True,
) -> list[dict]:
    """Collect data, fit each kind, select t and q, write checkpoints + JSON; return metadata."""
    fitted = fit_family(family, n_train, n_val, size, seed, kinds, calibration, time_limit,
                        progress)
    if out_dir is not None:
        write_checkpoints(fitted, out_dir)
    return [meta for _, meta in fitted]


def fit_family(
    family: str, n_train: int, n_val: int, size: int, seed: int, kinds: Sequence[str],
    calibration: str, time_limit: float, progress: bool = True,
) -> list[tuple[PMVBPredictor, dict]]:
    """Collect data, fit each kind and select t and q; (predictor, metadata) pairs, no writes."""
    start = time.perf_counter()
    skipped: Counter[str] = Counter()
    train = collect(family, size, range(seed, seed + n_train), time_limit, progress, skipped)
    val = collect(family, size, range(seed + n_train, seed + n_train + n_val), time_limit,
                  progress, skipped)
    X, y = stack(train)
    X_val, y_val = stack(val)
    if len(train) < 2 or len(val) < 1:
        raise InputError(_too_few_message(family, size, len(train), len(val), skipped,
                                          time_limit))
    fitted = []
    for kind in progress_bar(kinds, desc=f"fit {family}", disable=not progress, leave=False):
        predictor = PMVBPredictor(kind=kind, calibration=calibration, random_state=seed).fit(X, y)
        selection = select_t_q(predictor, val)
        meta = {
            "family": family, "kind": kind, "calibration": calibration,
            "calibrated": bool(predictor.calibrated_), "size": size,
            "seed": seed, "n_train": n_train, "n_val": n_val,
            "train_instances_used": len(train), "val_instances_used": len(val),
            "train_rows": int(len(y)), **val_metrics(predictor, X_val, y_val),
            "threshold": selection["chosen"]["t"], "confidence": selection["chosen"]["q"],
            "empirical_hold_rate": selection["chosen"]["hold_rate"],
            "promised_q": selection["chosen"]["q"], "promise_kept": selection["promise_kept"],
            "grid": selection["grid"], "features": list(FEATURE_NAMES),
            "feature_version": FEATURE_VERSION,
            "seconds": round(time.perf_counter() - start, 1),
        }
        fitted.append((predictor, meta))
    return fitted


def val_metrics(predictor: PMVBPredictor, X_val: np.ndarray, y_val: np.ndarray) -> dict:
    """The validation figures a checkpoint's JSON reports: rows, accuracy (as `.score`),
    the majority class's accuracy and the Brier score of the calibrated probabilities."""
    p_val = predictor.predict_proba(X_val)[:, 1]
    return {
        "val_rows": int(len(y_val)),
        "val_accuracy": float(np.mean(predictor.predict(X_val) == y_val)),
        "val_majority_accuracy": float(max(y_val.mean(), 1 - y_val.mean())),
        "val_brier": float(np.mean((p_val - y_val) ** 2)),
    }


def rescored(family: str, kinds: Sequence[str], out_dir: Path, time_limit: float,
             progress: bool = True) -> list[tuple[Path, dict]]:
    """Each of the family's checkpoints in `out_dir` with its JSON metadata, `val_metrics`
    recomputed on the validation seeds the JSON names, without refitting (t and q stay:
    they were chosen on the same data, and the JSON's t/q grid stays as it was computed).
    Refuses when the validation seeds no longer give the instance and row counts recorded
    (another SCIP that solves fewer of them): the figures would describe other data. Other
    optima with the same counts are not detected (the JSON keeps no labels to compare)."""
    paths = {kind: out_dir / checkpoint_name(family, kind) for kind in kinds}
    metas = {kind: rescore_metadata(path.with_suffix(".json")) for kind, path in paths.items()}
    samples: dict[tuple[int, int, int, int], list[Sample]] = {}
    for kind, meta in metas.items():
        key = (meta["size"], meta["seed"], meta["n_train"], meta["n_val"])
        if key not in samples:
            size, seed, n_train, n_val = key
            samples[key] = collect(family, size, range(seed + n_train, seed + n_train + n_val),
                                   time_limit, progress)
        X_val, y_val = stack(samples[key])
        if (len(samples[key]), len(y_val)) != (meta["val_instances_used"], meta["val_rows"]):
            raise InputError(
                f"{family} {kind}: the validation seeds now give {len(samples[key])} "
                f"instances / {len(y_val)} rows, not the {meta['val_instances_used']} / "
                f"{meta['val_rows']} recorded; retrain instead")
        meta.update(val_metrics(load_predictor(paths[kind]), X_val, y_val))
    return [(paths[kind], metas[kind]) for kind in kinds]


# The JSON fields `rescored` reads to rebuild and check a checkpoint's validation data.
RESCORE_FIELDS = ("size", "seed", "n_train", "n_val", "val_instances_used", "val_rows")


def rescore_metadata(path: Path) -> dict:
    """A checkpoint's JSON for --rescore: an object whose RESCORE_FIELDS are integers >= 0
    and whose features are this coplug's (`stale_features`), else an InputError naming the
    file (a hand-edited or truncated JSON gave a traceback)."""
    meta = read_sidecar(path, "--rescore:")
    if not isinstance(meta, dict):
        raise InputError(f"--rescore: {path} must hold a JSON object, got "
                         f"{type(meta).__name__}")
    bad = [key for key in RESCORE_FIELDS if isinstance(meta.get(key), bool)
           or not isinstance(meta.get(key), int) or meta[key] < 0]
    if bad:
        raise InputError(f"--rescore: {path} needs integers >= 0 for {', '.join(bad)}, got "
                         f"{', '.join(repr(meta.get(key)) for key in bad)}; retrain instead")
    stale = stale_features(meta)
    if stale is not None:  # its figures would be computed on features it never saw
        raise InputError(f"--rescore: {path} {stale}; retrain instead")
    return meta


def _too_few_message(family: str, size: int, n_train: int, n_val: int,
                     skipped: Counter[str], time_limit: float) -> str:
    """Why training cannot start: how many instances were usable, and how many were
    skipped for each reason, with the flag that helps against it."""
    reasons = []
    if skipped[NOT_OPTIMAL]:
        reasons.append(f"{skipped[NOT_OPTIMAL]} not solved to optimality within "
                       f"--time-limit {time_limit:g} s (raise --time-limit or lower --size)")
    if skipped[NO_ROOT_LP]:
        reasons.append(f"{skipped[NO_ROOT_LP]} solved before any optimal root LP (in "
                       "presolve, or a heuristic's solution stopped the root LP at its "
                       "objective limit), with no root features to learn from (raise --size)")
    why = "; ".join(reasons) or "no instances were solved (raise --n-train or --n-val)"
    return (f"only {n_train} training / {n_val} validation {family} instances of size "
            f"{size} are usable (at least 2 / 1 needed): {why}")


def write_checkpoints(fitted: Sequence[tuple[PMVBPredictor, dict]], out_dir: Path) -> None:
    """Write each predictor and its JSON (atomically, strict JSON) and note the path in meta;
    Ctrl-C waits for the last file, so no kind is left beside an older one's JSON."""
    with sigint_deferred():
        for predictor, meta in fitted:
            path = out_dir / checkpoint_name(meta["family"], meta["kind"])
            strict_json(meta, indent=1)  # refused before the checkpoint is replaced
            predictor.save(path)
            meta["sha256"] = file_sha256(path)
            atomic_write_text(path.with_suffix(".json"), strict_json(meta, indent=1))
            meta["checkpoint"] = str(path)


def build_parser() -> argparse.ArgumentParser:
    """The command line of train_pmvb."""
    import coplug.models

    parser = argparse.ArgumentParser(prog="python -m coplug.learned.train_pmvb",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--family", required=True, choices=sorted(FAMILIES))
    parser.add_argument("--n-train", type=int, default=200, help=">= 2")
    parser.add_argument("--n-val", type=int, default=None,
                        help=">= 1; default: max(5, n_train // 4)")
    parser.add_argument("--size", type=int, default=None, help="default: the family's train size")
    parser.add_argument("--seed", type=int, default=0, help=">= 0")
    parser.add_argument("--kinds", default="logreg,gbt,mlp", help=f"comma list of {KINDS}")
    parser.add_argument("--calibration", default="isotonic", choices=CALIBRATIONS)
    parser.add_argument("--time-limit", type=float, default=30.0, help="seconds per instance")
    shipped = Path(coplug.models.__file__).parent
    parser.add_argument("--out-dir", default=str(shipped),
                        help=f"folder for the checkpoints (default {shipped}: replaces the "
                             "shipped ones of the family)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--rescore", action="store_true",
                        help="recompute the validation figures of the checkpoints already in "
                             "--out-dir on their recorded validation seeds, without refitting "
                             "(--n-train, --n-val, --size, --seed, --calibration come from "
                             "their JSONs)")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse and validate everything before any solve, so a bad flag costs no time."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.n_train < 2:
        parser.error(f"--n-train must be >= 2, got {args.n_train}")
    if args.n_val is None:
        args.n_val = max(5, args.n_train // 4)
    elif args.n_val < 1:
        parser.error(f"--n-val must be >= 1, got {args.n_val}")
    last = args.seed + args.n_train + args.n_val
    if args.seed < 0 or last > SEED_BOUND:
        parser.error(f"--seed must be >= 0 with --seed + --n-train + --n-val <= 2**32 (the "
                     f"instance seeds and the predictors' random_state), got --seed "
                     f"{args.seed} (+ {args.n_train} + {args.n_val} = {last})")
    if not (np.isfinite(args.time_limit) and args.time_limit > 0):
        parser.error(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    if args.size is None:
        args.size = TRAIN_SIZES[args.family]
    try:
        registry.check_size(args.family, args.size)  # memory, before generating anything
        build_family(args.family, args.size, args.seed)  # the family's own size check
    except InputError as exc:
        parser.error(f"--size {args.size}: {exc}")
    kinds = list(dict.fromkeys(k.strip() for k in args.kinds.split(",") if k.strip()))
    if not kinds:
        parser.error(f"--kinds names no predictor kind; give a comma list of {KINDS}")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        parser.error(f"unknown --kinds {bad}; choose from {KINDS}")
    args.kinds = kinds
    args.out_dir = Path(args.out_dir)
    problem = unwritable_reason(args.out_dir)
    targets = [args.out_dir / checkpoint_name(args.family, k) for k in kinds]
    files = targets + [t.with_suffix(".json") for t in targets]
    occupied = [reason for t in files if (reason := occupied_reason(t)) is not None]
    if problem or occupied:
        parser.error(f"--out-dir {args.out_dir}: {problem or occupied[0]}")
    missing = [t for t in files if not t.is_file()]
    if args.rescore and missing:
        parser.error(f"--rescore: {missing[0]} does not exist (train the family first)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry: train (or `--rescore`), print one line per kind; Ctrl-C writes
    nothing, exits 130."""
    args = parse_args(argv)
    try:
        if args.rescore:
            rescores = rescored(args.family, args.kinds, args.out_dir, args.time_limit,
                                progress=not args.quiet and on_terminal())
        else:
            fitted = fit_family(args.family, args.n_train, args.n_val, args.size, args.seed,
                                args.kinds, args.calibration, args.time_limit,
                                progress=not args.quiet and on_terminal())
    except KeyboardInterrupt:
        print("train_pmvb: interrupted; nothing written", file=sys.stderr)
        return 130
    except CoplugError as exc:
        print(f"train_pmvb: error: {exc}", file=sys.stderr)
        return 2
    if args.rescore:
        for path, meta in rescores:
            meta["sha256"] = file_sha256(path)
            atomic_write_text(path.with_suffix(".json"), strict_json(meta, indent=1))
            meta["checkpoint"] = str(path)
        metas = [meta for _, meta in rescores]
    else:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        write_checkpoints(fitted, args.out_dir)
        metas = [meta for _, meta in fitted]
    for r in metas:
        print(f"{r['family']:10s} {r['kind']:7s} val_acc={r['val_accuracy']:.3f} "
              f"(majority {r['val_majority_accuracy']:.3f}) t={r['threshold']} q={r['confidence']}"
              f" hold={r['empirical_hold_rate']:.2f} -> {r.get('checkpoint')}")
    return 0


if __name__ == "__main__":
    exit_on_interrupt(main)
