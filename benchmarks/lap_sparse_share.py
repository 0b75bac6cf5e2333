"""Where ranking on sparse costs stops paying: `ranked_assignments` on random sparse
patterns of rising density, once with the sparse kernels and once on the dense copy, the
measurement behind `coplug.plugins.lap.ranked.SPARSE_SHARE`.

    python benchmarks/lap_sparse_share.py                    # about 30 s on 2 cores
    python benchmarks/lap_sparse_share.py --sizes 1000 --densities 0.05,0.1,0.15

Each row is one seeded N x N pattern (uniform costs on a random share of the pairs plus the
diagonal, so an assignment exists); both paths rank its k best (best of up to 3 runs while
a run takes under 1 s) and must agree. The last line is the summary: the densest share at
which the sparse kernels were still faster, per size.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from lap_common import best_time
from tqdm import tqdm

from coplug.plugins.argtypes import float_list, int_list, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import ranked, ranked_assignments


def pattern(n: int, density: float, seed: int) -> sp.csr_matrix:
    """Uniform costs on a random `density` share of the pairs, plus the diagonal."""
    a = sp.random(n, n, density=density, format="csr", random_state=seed)
    return (a + sp.eye(n, format="csr") * 0.5).tocsr()


def ranked_with(c: sp.csr_matrix, k: int, share: float) -> list[float]:
    """The k best costs, ranked sparse (share 1) or on the dense copy (share 0)."""
    saved, ranked.SPARSE_SHARE = ranked.SPARSE_SHARE, share
    try:
        return ranked_assignments(c, k).costs
    finally:
        ranked.SPARSE_SHARE = saved


def run(args: argparse.Namespace) -> tuple[list[tuple[int, float, float, float, bool]], bool]:
    """(N, density, sparse s, dense s, same costs) per row; (rows, interrupted)."""
    rows = []
    jobs = [(n, d) for n in args.sizes for d in args.densities]
    try:
        for n, density in tqdm(jobs, desc="lap_sparse_share", file=sys.stderr):
            c = pattern(n, density, args.seed)
            sparse_costs, sparse_s = best_time(lambda c=c: ranked_with(c, args.k, 1.0))
            dense_costs, dense_s = best_time(lambda c=c: ranked_with(c, args.k, 0.0))
            same = np.allclose(sparse_costs, dense_costs, rtol=1e-9, atol=1e-12)
            rows.append((n, density, sparse_s, dense_s, bool(same)))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the rows finished so far", file=sys.stderr)
        return rows, True
    return rows, False


def summary(rows: Sequence[tuple[int, float, float, float, bool]], wall: float) -> str:
    """The SUMMARY line: per size, the densest share where sparse was faster; agreement."""
    parts = []
    for n in sorted({r[0] for r in rows}):
        faster = [d for m, d, s, dn, _ in rows if m == n and s < dn]
        parts.append(f"N={n} sparse faster up to {max(faster):g}" if faster
                     else f"N={n} sparse never faster")
    same = sum(r[4] for r in rows)
    return (f"SUMMARY lap_sparse_share: {'; '.join(parts)}; same costs {same}/{len(rows)}; "
            f"{wall:.0f} s wall")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="300,1000")
    parser.add_argument("--densities", type=float_list, default="0.02,0.05,0.1,0.2,0.4")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--seed", type=seed_int, default=1)
    args = parser.parse_args(argv)
    if args.k < 1:
        parser.error(f"--k must be positive, got {args.k}")
    if min(args.sizes) < 2:
        parser.error(f"--sizes: an assignment needs N >= 2, got {min(args.sizes)}")
    if not all(0 < d <= 1 for d in args.densities):
        parser.error(f"--densities must lie in (0, 1], got {args.densities}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every row, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    for share in (0.0, 1.0):  # compile both paths' kernels before the first timed row
        ranked_with(pattern(30, 0.2, 0), 3, share)
    rows, interrupted = run(args)
    print(f"\nk = {args.k}, seed {args.seed}; wall seconds")
    print("| N | density | sparse | dense | dense/sparse | same costs |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n, density, sparse_s, dense_s, same in rows:
        print(f"| {n} | {density:g} | {sparse_s:.3g} | {dense_s:.3g} | "
              f"{dense_s / sparse_s:.2f} | {'yes' if same else 'NO'} |")
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
