"""Fair spectral clustering: SC vs FairSC (dense null space) vs R-FairSC (Riemannian ADMM).

On seeded fair SBMs at each --sizes n: balance, ratio cut, time and agreement with the planted
partition, FairSC where its dense matrices fit in --max-dense-gib; then, on tiny graphs, every
method against the exact fair MIP optimum (HiGHS). Ratios are against FairSC in the same run.

    python benchmarks/fair_clustering.py            # n = 1e3, 1e4, 1e5 (minutes)
    python benchmarks/fair_clustering.py --quick    # n = 1e3, 3e3
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from coplug.formulations.fair_clustering_mip import fair_clustering_mip, mip_labels, mip_objective
from coplug.formulations.fair_graphs import fair_communities, fair_sbm
from coplug.formulations.fair_metrics import balance, ratio_cut
from coplug.learned.fair_spectral import FairSpectralClustering, nullspace_bytes
from coplug.plugins import solve
from coplug.plugins.argtypes import int_list, positive_int, seed_int
from coplug.plugins.interrupts import exit_on_interrupt

METHODS = ("normalized", "nullspace", "riemannian")
LABEL = {"normalized": "SC", "nullspace": "FairSC", "riemannian": "R-FairSC"}


def run_method(data, method: str, k: int, laplacian: str, max_gib: float) -> dict:
    """Fit one method; a dense FairSC that would not fit is reported, not run."""
    if method == "nullspace" and nullspace_bytes(data.n) > max_gib * 2**30:
        return {"status": f"skipped: needs {nullspace_bytes(data.n) / 2**30:.0f} GiB dense"}
    estimator = FairSpectralClustering(k, data.groups, method=method, laplacian=laplacian)
    start = time.perf_counter()
    labels = estimator.fit_predict(data.adjacency)
    elapsed = time.perf_counter() - start
    return {
        "status": "ok",
        "time": elapsed,
        "embed": estimator.fit_time_,
        "balance": balance(labels, data.groups),
        "ratio_cut": ratio_cut(data.adjacency, labels),
        "ari": adjusted_rand_score(data.planted, labels),
        "iterations": estimator.admm_info_.get("iterations", ""),
    }


def scaling(sizes: list[int], k: int, degree: float, laplacian: str, max_gib: float,
            seed: int, affinity: tuple[float, ...] = (6.0, 5.0, 1.5, 1.0),
            rows: list[dict] | None = None) -> list[dict]:
    """Every method at every size; prints one row per (n, method) and appends it to `rows`
    (so an interrupted run keeps the sizes finished)."""
    rows = [] if rows is None else rows
    print(f"{'n':>7} {'method':<9}{'balance':>9}{'ratio cut':>11}{'time s':>9}{'embed s':>9}"
          f"{'ARI':>7}{'iters':>7}  vs FairSC")
    for n in sizes:
        data = fair_sbm(n, n_clusters=k, avg_degree=degree, affinity=affinity, seed=seed)
        results = {}
        for method in tqdm(METHODS, desc=f"n={n}", leave=False, file=sys.stderr):
            results[method] = run_method(data, method, k, laplacian, max_gib)
        reference = results["nullspace"]
        for method in METHODS:
            r = results[method]
            if r["status"] != "ok":
                print(f"{n:>7} {LABEL[method]:<9}  {r['status']}")
                continue
            versus = ""
            if reference["status"] == "ok" and method != "nullspace":
                versus = (f"ratio cut x{r['ratio_cut'] / reference['ratio_cut']:.4f}, "
                          f"balance {r['balance'] - reference['balance']:+.4f}, "
                          f"{reference['time'] / r['time']:.1f}x faster")
            print(f"{n:>7} {LABEL[method]:<9}{r['balance']:>9.4f}{r['ratio_cut']:>11.4f}"
                  f"{r['time']:>9.2f}{r['embed']:>9.2f}{r['ari']:>7.3f}{r['iterations']!s:>7}  "
                  f"{versus}", flush=True)
            rows.append({"n": n, "method": method, **r})
    return rows


def against_mip(k: int = 2) -> list[tuple[str, float, dict[str, float]]]:
    """Tiny graphs: each spectral method's ratio cut (and fairness) vs the exact fair MIP."""
    print(f"\n{'tiny graph':<22}{'MIP optimum':>12}" + "".join(f"{LABEL[m]:>12}" for m in METHODS))
    out = []
    graphs = [fair_communities(size, p_in=0.7, seed=seed) for size, seed in ((6, 5), (8, 3))]
    graphs += [g for g in (fair_sbm(16, 2, avg_degree=5, seed=s) for s in range(40))
               if np.bincount(g.groups).tolist() == [8, 8]][:3]
    for data in graphs:
        model = fair_clustering_mip(data.adjacency, data.groups, k)
        exact = solve(model, solver="highs")
        if not exact.optimal:  # shown, not dropped silently: no optimum to compare against
            print(f"{data.name:<22}{'HiGHS ' + exact.status.value:>12}  (skipped)")
            continue
        optimum = mip_objective(model, mip_labels(model))  # warns if the solver's is below
        cuts = {}
        for method in METHODS:
            labels = FairSpectralClustering(k, data.groups, method=method,
                                            laplacian="unnormalized").fit_predict(data.adjacency)
            fair = balance(labels, data.groups) == 1.0
            cuts[method] = ratio_cut(data.adjacency, labels) if fair else float("nan")
        cells = "".join(f"{cuts[m] / optimum:>12.4f}" if np.isfinite(cuts[m])
                        else f"{'unfair':>12}" for m in METHODS)
        print(f"{data.name:<22}{optimum:>12.4f}{cells}")
        out.append((data.name, optimum, cuts))
    print("(cells: method's ratio cut / exact optimum among exactly fair 2-clusterings)")
    return out






def affinity_rates(text: str) -> tuple[float, ...]:
    """argparse type: four non-negative edge rates, not all zero."""
    try:
        values = tuple(float(a) for a in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 4 or min(values) < 0 or max(values) <= 0:
        raise argparse.ArgumentTypeError(
            f"expected 4 comma-separated rates >= 0, not all 0, got {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int_list, default="1000,10000,100000",
                        help="comma-separated n")
    parser.add_argument("--quick", action="store_true", help="n = 1000, 3000 only")
    parser.add_argument("--clusters", type=positive_int, default=5)
    parser.add_argument("--degree", type=float, default=30.0, help="SBM average degree")
    parser.add_argument("--laplacian", default="normalized",
                        choices=("normalized", "unnormalized"))
    parser.add_argument("--max-dense-gib", type=float, default=12.0,
                        help="FairSC runs only where its dense matrices fit in this")
    parser.add_argument("--threads", type=positive_int, default=1,
                        help="BLAS threads for every method")
    parser.add_argument("--affinity", type=affinity_rates, default="6,5,1.5,1",
                        help="SBM edge rates: same cluster+group, cluster, group, neither")
    parser.add_argument("--seed", type=seed_int, default=1)
    args = parser.parse_args(argv)
    sizes = [1000, 3000] if args.quick else args.sizes
    if min(sizes) < 2 * args.clusters:
        parser.error(f"n={min(sizes)} is smaller than 2 groups x --clusters {args.clusters}")
    if not 0 <= args.max_dense_gib < float("inf"):
        parser.error(f"argument --max-dense-gib: must be >= 0, got {args.max_dense_gib}")
    if not args.degree > 0:
        parser.error(f"argument --degree: must be positive, got {args.degree}")
    rows: list[dict] = []
    mip: list[tuple[str, float, dict[str, float]]] = []
    try:
        with threadpool_limits(args.threads):
            scaling(sizes, args.clusters, args.degree, args.laplacian, args.max_dense_gib,
                    args.seed, args.affinity, rows)
            mip = against_mip()
    except KeyboardInterrupt:
        print("interrupted: the summary covers the sizes finished so far", file=sys.stderr)
        print(summary(rows, mip))
        return 130
    print(summary(rows, mip))
    return 0


def summary(rows: list[dict], mip: list[tuple[str, float, dict[str, float]]]) -> str:
    """One line: R-FairSC vs FairSC at the largest common n, largest n done, MIP gaps."""
    by = {(r["n"], r["method"]): r for r in rows}
    common = [n for (n, m) in by if m == "nullspace" and (n, "riemannian") in by]
    parts = []
    if common:
        n = max(common)
        f, r = by[(n, "nullspace")], by[(n, "riemannian")]
        parts.append(f"n={n}: R-FairSC ratio cut x{r['ratio_cut'] / f['ratio_cut']:.4f} of "
                     f"FairSC, balance {r['balance'] - f['balance']:+.4f}, "
                     f"{f['time'] / r['time']:.1f}x faster")
    largest = max((r["n"] for r in rows if r["method"] == "riemannian"), default=0)
    fair_largest = max((r["n"] for r in rows if r["method"] == "nullspace"), default=0)
    parts.append(f"R-FairSC done up to n={largest}, FairSC up to n={fair_largest}")
    ratios = np.array([cuts["riemannian"] / opt for _, opt, cuts in mip])
    fair = np.isfinite(ratios)
    parts.append(f"tiny graphs: R-FairSC exactly fair on {fair.sum()}/{ratios.size}, "
                 f"ratio cut / MIP optimum max {ratios[fair].max() if fair.any() else np.nan:.4f}")
    return "SUMMARY " + "; ".join(parts)


if __name__ == "__main__":
    exit_on_interrupt(main)
