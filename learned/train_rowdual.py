"""Train RowDualNet offline: `python -m coplug.learned.train_rowdual [--quick]`.

Generates seeded instances of every generator, solves them exactly (cold JV) for their row
duals, fits the MLP with a shift-invariant loss (duals are defined up to a constant), and
writes models/rowdualnet.pt plus models/rowdualnet.json describing the run.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

import coplug.models
from coplug.formulations.assignment import GENERATORS, generate
from coplug.learned.checkpoint_io import occupied_reason, unwritable_reason
from coplug.learned.rowdualnet import MAX_HIDDEN, RowDualNet, row_features, save
from coplug.plugins.bar import on_terminal, progress_bar
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap.solver import solve_lap

DEFAULT_OUT = Path(coplug.models.__file__).parent / "rowdualnet.pt"


def make_dataset(
    generators: list[str], sizes: list[int], per_cell: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(features, normalized target offsets) per instance; targets from exact cold solves."""
    data = []
    cells = [(g, name, n, k) for g, name in enumerate(generators) for n in sizes
             for k in range(per_cell)]
    for g_index, name, n, k in progress_bar(cells, desc="instances", leave=False,
                                            disable=not on_terminal()):
        c = generate(name, n, seed=seed + 1000 * g_index + 37 * n + k)
        u = solve_lap(c).row_duals
        feats, s1, scale = row_features(c)
        data.append((torch.from_numpy(feats), torch.from_numpy((u - s1) / scale).float()))
    return data


def shift_invariant_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error after removing the best constant shift (duals are shift-free)."""
    d = pred - target
    return ((d - d.mean()) ** 2).mean()


def train(
    data: list[tuple[torch.Tensor, torch.Tensor]], epochs: int, hidden: int, seed: int
) -> tuple[RowDualNet, float]:
    """Adam on the per-instance shift-invariant loss; returns the model and last epoch loss."""
    with torch.random.fork_rng(devices=[]):  # seed a copy: the caller's generator stays
        torch.manual_seed(seed)
        model = RowDualNet(hidden=hidden)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
    rng = np.random.default_rng(seed)
    last = float("nan")
    for _ in progress_bar(range(epochs), desc="epochs", leave=False, disable=not on_terminal()):
        total = 0.0
        for idx in rng.permutation(len(data)):
            x, y = data[idx]
            loss = shift_invariant_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach())
        sched.step()
        last = total / len(data)
    model.eval()
    return model, last


def evaluate(model: RowDualNet, generators: list[str], n: int, seed: int) -> dict[str, dict]:
    """Held-out check per generator: augmentations and time, cold vs warm (exact both).
    Warm passes the predicted duals as `row_duals` (HELD_OUT_WARM), measuring the raw
    prediction rather than the full `predictor=` pipeline the benchmark times."""
    report = {}
    for name in progress_bar(generators, desc="held-out check", leave=False,
                             disable=not on_terminal()):
        c = generate(name, n, seed=seed)
        cold = solve_lap(c)
        t0 = time.perf_counter()
        warm = solve_lap(c, row_duals=model.predict_duals(c))
        t_warm = time.perf_counter() - t0
        if abs(warm.cost - cold.cost) > 1e-6 * max(1.0, abs(cold.cost)):
            raise RuntimeError(f"warm objective differs from cold on {name}")
        report[name] = {
            "n": n,
            "cold_augmentations": cold.augmentations,
            "warm_augmentations": warm.augmentations,
            "cold_s": round(cold.time, 4),
            "warm_s_with_inference": round(t_warm, 4),
        }
    return report


HELD_OUT_WARM = (
    "warm = solve_lap(c, row_duals=predict_duals(c)): the raw prediction's quality, without "
    "the column-reduction gate and sparse refinement solve_lap(predictor=) adds"
)

FULL = {"sizes": [256, 512, 1024, 2048], "per_cell": 3, "epochs": 60, "hidden": 64,
        "eval_n": 4096}
QUICK = {"sizes": [32, 48], "per_cell": 2, "epochs": 3, "hidden": 16, "eval_n": 64}
MAX_SEED = 2**32 - 1
# Upper limits of the sizing flags: past them a run cannot fit in memory or time (an N x N
# float64 cost matrix at N = 16384 is 2 GiB) and is surely a typo.
MAX_SIZE = 16_384
LIMITS = {"--sizes": MAX_SIZE, "--eval-n": MAX_SIZE, "--per-cell": 1_000,
          "--epochs": 100_000, "--hidden": MAX_HIDDEN}


def build_parser() -> argparse.ArgumentParser:
    """The command line; sizing flags default to None so --quick can tell what was given."""
    p = argparse.ArgumentParser(
        prog="python -m coplug.learned.train_rowdual", description=__doc__.splitlines()[0],
        epilog="--quick only changes the defaults of the sizing flags (--sizes, --per-cell, "
               f"--epochs, --hidden, --eval-n) to {QUICK}; any of them given explicitly "
               "wins over --quick.",
    )
    p.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    p.add_argument("--sizes", nargs="+", type=int, default=None,
                   help=f"training instance sizes, each 1 .. {MAX_SIZE} "
                        f"(default {FULL['sizes']})")
    p.add_argument("--per-cell", type=int, default=None,
                   help=f"instances per generator and size, 1 .. {LIMITS['--per-cell']} "
                        f"(default {FULL['per_cell']})")
    p.add_argument("--epochs", type=int, default=None,
                   help=f"1 .. {LIMITS['--epochs']} (default {FULL['epochs']})")
    p.add_argument("--hidden", type=int, default=None,
                   help=f"hidden width, 1 .. {MAX_HIDDEN} (default {FULL['hidden']})")
    p.add_argument("--seed", type=int, default=0, help=f"0 .. {MAX_SEED}")
    p.add_argument("--eval-n", type=int, default=None,
                   help=f"held-out instance size, 1 .. {MAX_SIZE} (default {FULL['eval_n']})")
    p.add_argument("--out", type=Path, default=None,
                   help=f"checkpoint path; its .json sidecar goes next to it (default "
                        f"{DEFAULT_OUT}, the shipped model; --quick needs an explicit --out)")
    p.add_argument("--quick", action="store_true",
                   help="tiny run (tests, smoke checks): small defaults for the sizing flags "
                        "not given explicitly")
    return p


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse, fill the sizing defaults (quick or full) and reject bad values before any work."""
    p = build_parser()
    args = p.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    for flag, value in (("--per-cell", args.per_cell), ("--epochs", args.epochs),
                        ("--hidden", args.hidden), ("--eval-n", args.eval_n),
                        *(("--sizes", n) for n in args.sizes)):
        if not 1 <= value <= LIMITS[flag]:
            p.error(f"{flag} must be in 1 .. {LIMITS[flag]}, got {value}")
    if not 0 <= args.seed <= MAX_SEED:
        p.error(f"--seed must be in 0 .. {MAX_SEED}, got {args.seed}")
    if args.out is None:
        if args.quick:
            p.error(f"--quick trains a toy model: give --out (the default {DEFAULT_OUT} is "
                    "the shipped checkpoint)")
        args.out = DEFAULT_OUT
    problem = out_problem(args.out)
    if problem:
        p.error(f"--out {args.out}: {problem}")
    return args


def out_problem(out: Path) -> str | None:
    """Why the checkpoint and its .json sidecar could not be written at `out`, or None."""
    if out.suffix == ".json":
        return "the checkpoint may not end in .json (its metadata goes to the .json sidecar)"
    if not out.name or out.name in (".", ".."):  # '.', '' and '/': a folder, not a file
        return f"{str(out) or repr('')} names a folder, not a checkpoint file"
    if out.suffix != ".pt" and not out.is_dir():  # `--out README.md` wrote over a README
        return "the checkpoint must end in .pt (a torch checkpoint, its .json beside it)"
    for path in (out, out.with_suffix(".json")):
        if (reason := occupied_reason(path)) is not None:
            return reason
    return unwritable_reason(out.parent)


def main(argv: list[str] | None = None) -> int:
    """Build data, train, evaluate on held-out seeds, write the checkpoint and its JSON.

    Ctrl-C before the write leaves the old checkpoint untouched and exits 130.
    """
    args = parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, meta = fit_and_evaluate(args, argv)
    except KeyboardInterrupt:
        print("train_rowdual: interrupted; nothing written", file=sys.stderr)
        return 130
    finally:  # a caller's torch keeps its threads (main() left it at 1)
        torch.set_num_threads(threads)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save(model, args.out, meta)
    print(f"trained on {meta['instances']} instances, loss {meta['final_train_loss']:.4f}; "
          f"wrote {args.out}")
    for name, r in meta["held_out"].items():
        print(f"  {name:9s} n={r['n']} augmentations cold {r['cold_augmentations']} "
              f"warm {r['warm_augmentations']}  time cold {r['cold_s']}s "
              f"warm {r['warm_s_with_inference']}s")
    return 0


def fit_and_evaluate(args: argparse.Namespace, argv: list[str] | None) -> tuple[RowDualNet, dict]:
    """Train and evaluate for validated arguments; the model and its metadata (no writes)."""
    start = time.perf_counter()
    data = make_dataset(args.generators, args.sizes, args.per_cell, args.seed)
    model, loss = train(data, args.epochs, args.hidden, args.seed)
    report = evaluate(model, args.generators, args.eval_n, seed=args.seed + 999_999)
    meta = {
        "model": "RowDualNet MLP", "hidden": args.hidden, "features": model.n_features,
        "generators": args.generators, "sizes": args.sizes, "instances": len(data),
        "epochs": args.epochs, "seed": args.seed, "final_train_loss": loss,
        "loss": "shift-invariant MSE of (u - row_min) / local_scale, targets from cold JV",
        "held_out": report, "held_out_warm": HELD_OUT_WARM,
        "train_seconds": round(time.perf_counter() - start, 1),
        "command": "python -m coplug.learned.train_rowdual " + shlex.join(
            sys.argv[1:] if argv is None else argv),  # quoted: a path with a space reruns
    }
    return model, meta


if __name__ == "__main__":
    exit_on_interrupt(main)
