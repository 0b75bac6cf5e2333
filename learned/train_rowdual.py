"""Train RowDualNet offline: `python -m coplug.learned.train_rowdual [--quick]`.

Generates seeded instances of every generator, solves them exactly (cold JV) for their row
duals, fits the MLP with a shift-invariant loss (duals are defined up to a constant), and
writes models/rowdualnet.pt plus models/rowdualnet.json describing the run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

import coplug.models
from coplug.formulations.assignment import GENERATORS, generate
from coplug.learned.rowdualnet import RowDualNet, row_features, save
from coplug.plugins.lap.solver import solve_lap

DEFAULT_OUT = Path(coplug.models.__file__).parent / "rowdualnet.pt"


def make_dataset(
    generators: list[str], sizes: list[int], per_cell: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(features, normalized target offsets) per instance; targets from exact cold solves."""
    data = []
    cells = [(g, name, n, k) for g, name in enumerate(generators) for n in sizes
             for k in range(per_cell)]
    for g_index, name, n, k in tqdm(cells, desc="instances", leave=False):
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
    torch.manual_seed(seed)
    model = RowDualNet(hidden=hidden)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
    rng = np.random.default_rng(seed)
    last = float("nan")
    for _ in tqdm(range(epochs), desc="epochs", leave=False):
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
    """Held-out check per generator: augmentations and time, cold vs warm (exact both)."""
    report = {}
    for name in generators:
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


def main(argv: list[str] | None = None) -> int:
    """Build data, train, evaluate on held-out seeds, write the checkpoint and its JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--generators", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    p.add_argument("--sizes", nargs="+", type=int, default=[256, 512, 1024, 2048])
    p.add_argument("--per-cell", type=int, default=3, help="instances per generator and size")
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-n", type=int, default=4096, help="held-out instance size")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--quick", action="store_true", help="tiny run (tests, smoke checks)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if args.quick:
        args.sizes, args.per_cell, args.epochs, args.hidden, args.eval_n = [32, 48], 2, 3, 16, 64
    start = time.perf_counter()
    data = make_dataset(args.generators, args.sizes, args.per_cell, args.seed)
    model, loss = train(data, args.epochs, args.hidden, args.seed)
    report = evaluate(model, args.generators, args.eval_n, seed=args.seed + 999_999)
    meta = {
        "model": "RowDualNet MLP", "hidden": args.hidden, "features": model.n_features,
        "generators": args.generators, "sizes": args.sizes, "instances": len(data),
        "epochs": args.epochs, "seed": args.seed, "final_train_loss": loss,
        "loss": "shift-invariant MSE of (u - row_min) / local_scale, targets from cold JV",
        "held_out": report, "train_seconds": round(time.perf_counter() - start, 1),
        "command": " ".join(["python -m coplug.learned.train_rowdual",
                             *(sys.argv[1:] if argv is None else argv)]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save(model, args.out, meta)
    print(f"trained on {len(data)} instances, loss {loss:.4f}; wrote {args.out}")
    for name, r in report.items():
        print(f"  {name:9s} n={r['n']} augmentations cold {r['cold_augmentations']} "
              f"warm {r['warm_augmentations']}  time cold {r['cold_s']}s "
              f"warm {r['warm_s_with_inference']}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
