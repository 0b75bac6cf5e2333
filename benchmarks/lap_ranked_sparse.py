"""The k best assignments (or matchings) of large gated tracking matrices: `ranked_assignments`
on the sparse costs against the same ranking on a dense copy and against the textbook Murty
on scipy's sparse solver.

    python benchmarks/lap_ranked_sparse.py                   # about 1 min on 2 cores
    python benchmarks/lap_ranked_sparse.py --sizes 1000,10000 --gate 5 --kind matching

Each size is one seeded tracking frame (`coplug.formulations.assignment.gated`): N tracks
and N detections in the unit square (each detection its track moved by noise), every track
gated to its `--gate` nearest detections and its own one, at distance costs: about
gate * N stored pairs (the own one is nearly always among the nearest). "sparse" is
`ranked_assignments(csr, k)` (`ranked_matchings`
with --kind matching: a missed track or a false alarm costs --miss-cost times the points'
typical spacing 1/sqrt(N)); "dense" is the same ranking on the dense copy (pairs not gated
are inf), skipped above --dense-max-n (its N x N copy); "scipy" is Murty's method as
published, every child cell solved from scratch by
`scipy.sparse.csgraph.min_weight_full_bipartite_matching`. Times are the best of up to 3
runs while a run takes under 1 s. Costs must agree in every row
(relative 1e-9). A method is skipped at a size when its time at the previous size, scaled
by N^2 (N^3 for scipy), predicts more than --max-seconds. The last line is the summary.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from lap_common import agrees as costs_agree
from lap_common import best_time, collect, fmt3, predicted, ratio, textbook_murty
from lap_common import compared as costs_compared
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from coplug.formulations.assignment import gated
from coplug.plugins.argtypes import choice_list, int_list, positive_float, seed_int
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.lap import ranked, ranked_assignments, ranked_matchings

METHODS = ("sparse", "dense", "scipy")
SCALING = {"sparse": 2, "dense": 2, "scipy": 3}


@dataclass
class Row:
    """One size: seconds per method (None: skipped), costs, the sparse ranking's work."""

    n: int
    nnz: int
    seconds: dict[str, float | None] = field(default_factory=dict)
    costs: dict[str, list[float]] = field(default_factory=dict)
    cells: int = 0
    capped: int = 0
    fallbacks: int = 0


def scipy_murty(csr: sp.csr_matrix, k: int, n_part: int | None = None) -> list[float]:
    """Murty's method with every child cell solved from scratch by scipy's sparse solver
    (the reference), partitioned over the first `n_part` rows' pairs (all by default: a
    matching's slack rows only complete it)."""
    return textbook_murty(lambda forced, banned: _scipy_cell(csr, forced, banned),
                          csr.shape[0] if n_part is None else n_part, k)


def _scipy_cell(csr: sp.csr_matrix, forced: dict[int, int],
                forbidden: tuple[tuple[int, int], ...]) -> tuple[float, np.ndarray] | None:
    """The cell's optimum (cost, column of each row) by scipy, or None when it is empty."""
    n = csr.shape[0]
    keep_row = np.ones(n, bool)
    keep_row[list(forced)] = False
    keep_col = np.ones(n, bool)
    keep_col[list(forced.values())] = False
    rows, cols = np.flatnonzero(keep_row), np.flatnonzero(keep_col)
    sub = csr[rows][:, cols].tocoo()
    if forbidden:
        row_at = np.full(n, -1)
        row_at[rows] = np.arange(rows.size)
        col_at = np.full(n, -1)
        col_at[cols] = np.arange(cols.size)
        banned = {(int(row_at[i]), int(col_at[j])) for i, j in forbidden}
        keep = np.array([(a, b) not in banned for a, b in
                         zip(sub.row.tolist(), sub.col.tolist(), strict=True)], dtype=bool)
        sub = sp.coo_matrix((sub.data[keep], (sub.row[keep], sub.col[keep])), shape=sub.shape)
    # scipy reads a stored zero as no edge: shift every cost by 1 (each full matching pays n)
    shifted = sp.csr_matrix((sub.data + 1.0, (sub.row, sub.col)), shape=sub.shape)
    try:
        r, q = min_weight_full_bipartite_matching(shifted)
    except ValueError:  # no full matching: the cell is empty
        return None
    col4row = np.empty(n, dtype=np.int64)
    for i, j in forced.items():
        col4row[i] = j
    col4row[rows[r]] = cols[q]
    return float(np.asarray(csr[np.arange(n), col4row]).sum()), col4row


def _matching_square(csr: sp.csr_matrix, miss: float) -> sp.csr_matrix:
    """The 2N square sparse matrix whose assignments are the matchings of `csr` (a missed
    track or false alarm at `miss`), for the scipy reference."""
    n = csr.shape[0]
    coo = csr.tocoo()
    line = np.arange(n)
    return sp.coo_matrix(
        (np.concatenate([coo.data, np.full(2 * n, miss), np.zeros(coo.nnz)]),
         (np.concatenate([coo.row, line, n + line, n + coo.col]),
          np.concatenate([coo.col, n + line, line, n + coo.row]))), shape=(2 * n, 2 * n)).tocsr()


def run_row(n: int, args: argparse.Namespace, previous: Row | None) -> Row:
    """Rank the k best of one frame with every method not predicted too slow."""
    csr = gated(n, gate=args.gate, seed=args.seed)
    row = Row(n, csr.nnz)
    for name in args.methods:
        if (name == "dense" and n > args.dense_max_n) or (
                predicted(previous, name, n, SCALING[name]) > args.max_seconds):
            row.seconds[name] = None
            continue
        if name == "scipy":
            square = (_matching_square(csr, _miss(args, n)) if args.kind == "matching"
                      else csr)
            row.costs[name], row.seconds[name] = best_time(
                lambda sq=square: scipy_murty(sq, args.k, n_part=n))
            continue
        share = 1.0 if name == "sparse" else 0.0
        result, row.seconds[name] = best_time(lambda s=share: _ranked(csr, args, s))
        row.costs[name] = result.costs
        if name == "sparse":
            row.cells, row.capped = result.info["solved_cells"], result.info["capped"]
            row.fallbacks = result.info["fallbacks"]
    return row


def _ranked(csr: sp.csr_matrix, args: argparse.Namespace, share: float) -> Any:
    """The coplug ranking, sparse (share 1) or on the dense copy (share 0)."""
    saved, ranked.SPARSE_SHARE = ranked.SPARSE_SHARE, share
    try:
        if args.kind == "matching":
            miss = _miss(args, csr.shape[0])
            return ranked_matchings(csr, args.k, row_cost=miss, col_cost=miss)
        return ranked_assignments(csr, args.k)
    finally:
        ranked.SPARSE_SHARE = saved


def _miss(args: argparse.Namespace, n: int) -> float:
    """What a missed track or a false alarm costs at N = n: --miss-cost spacings."""
    return args.miss_cost / math.sqrt(n)


def compared(row: Row) -> bool:
    """Whether a method besides sparse ran on this row, so there is something to agree with."""
    return costs_compared(row.costs, "sparse")


def agrees(row: Row) -> bool:
    """Every method that ran found the costs sparse found."""
    return costs_agree(row.costs, "sparse")


def table(rows: Sequence[Row], methods: Sequence[str], k: int) -> list[str]:
    """Markdown table: seconds per method, ratios against sparse, its work, agreement."""
    others = [m for m in methods if m != "sparse"]
    head = ["N", "stored pairs", *methods, *(f"{m}/sparse" for m in others), "cells solved",
            "searches stopped", f"same {k} costs"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        cells = [str(row.n), str(row.nnz), *(fmt3(row.seconds.get(m)) for m in methods),
                 *(fmt3(ratio(row.seconds, m, "sparse")) for m in others), str(row.cells),
                 str(row.capped),
                 ("yes" if agrees(row) else "NO") if compared(row) else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(rows: Sequence[Row], methods: Sequence[str], wall: float) -> str:
    """The SUMMARY line: geometric-mean ratio to sparse per method, the largest N ranked,
    agreement, fallbacks."""
    parts = []
    for name in (m for m in methods if m != "sparse"):
        ratios = [r for row in rows if (r := ratio(row.seconds, name, "sparse"))]
        if ratios:
            mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
            parts.append(f"{name}/sparse {mean:.1f}x geomean ({min(ratios):.1f}-"
                         f"{max(ratios):.1f}x, {len(ratios)} sizes)")
    done = [r for r in rows if r.seconds.get("sparse") is not None]
    if done:
        parts.append(f"sparse up to N={done[-1].n} in {done[-1].seconds['sparse']:.1f} s")
    checked = [r for r in rows if compared(r)]
    parts.append(f"same costs {sum(agrees(r) for r in checked)}/{len(checked)} rows compared "
                 f"(of {len(rows)})")
    parts.append(f"fallbacks {sum(r.fallbacks for r in rows)}")
    return f"SUMMARY lap_ranked_sparse: {'; '.join(parts)}; {wall:.0f} s wall"


def run_all(args: argparse.Namespace) -> tuple[list[Row], bool]:
    """Every size in order; (rows, interrupted)."""
    return collect(args.sizes, lambda n, rows: run_row(n, args, rows[-1] if rows else None),
                   "lap_ranked_sparse", lambda r: f"N={r.n}: " + ", ".join(
                       f"{m} {fmt3(s)} s" for m, s in r.seconds.items()))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="100,300,1000,3000,10000,30000,100000")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--gate", type=int, default=8,
                        help="nearest detections each track may take (besides its own)")
    parser.add_argument("--methods", type=choice_list(METHODS), default=",".join(METHODS))
    parser.add_argument("--max-seconds", type=positive_float, default=120.0,
                        help="skip a method predicted to take longer")
    parser.add_argument("--dense-max-n", type=int, default=3000,
                        help="largest N ranked on the dense copy (N x N float64)")
    parser.add_argument("--kind", choices=("assignment", "matching"), default="assignment")
    parser.add_argument("--miss-cost", type=positive_float, default=0.25,
                        help="what a missed track or a false alarm costs (--kind matching), "
                        "in typical spacings 1/sqrt(N) (a detection moves 0.25 on average)")
    parser.add_argument("--seed", type=seed_int, default=0)
    args = parser.parse_args(argv)
    if args.k < 1 or args.gate < 1:
        parser.error(f"--k and --gate must be positive, got {args.k} and {args.gate}")
    if min(args.sizes) < 2:
        parser.error(f"--sizes: an assignment needs N >= 2, got {min(args.sizes)}")
    if "sparse" not in args.methods:
        parser.error("--methods must include sparse (the others are compared with it)")
    args.sizes = sorted(set(args.sizes))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every size, print the table and the SUMMARY line; 130 when interrupted."""
    args = parse_args(argv)
    start = time.perf_counter()
    for share in (0.0, 1.0):  # compile both paths' kernels before the first timed row
        args_small = argparse.Namespace(**{**vars(args), "k": 3})
        _ranked(gated(20, gate=3), args_small, share)
    rows, interrupted = run_all(args)
    print(f"\nk = {args.k} best {args.kind}s, gate {args.gate}, seed {args.seed}; wall seconds")
    print("\n".join(table(rows, args.methods, args.k)))
    print(summary(rows, args.methods, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
