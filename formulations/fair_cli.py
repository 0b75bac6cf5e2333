"""`coplug fairsc`: fair spectral clustering from the command line, and its demo section."""

from __future__ import annotations

import argparse
import time

import numpy as np

from coplug.formulations.fair_graphs import FairGraph
from coplug.plugins.argtypes import positive_float, positive_int, seed_int
from coplug.plugins.errors import InputError

METHOD_CHOICES = ("riemannian", "nullspace", "unnormalized", "normalized", "all")


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `fairsc` command."""
    p = subparsers.add_parser(
        "fairsc", help="fair spectral clustering (SC, FairSC, R-FairSC) on an SBM or real graph"
    )
    p.add_argument("--graph", default="sbm", help="sbm | karate | davis | diabetes_knn")
    p.add_argument("--n", type=positive_int, default=2000, help="nodes of the SBM")
    p.add_argument("--clusters", type=positive_int, default=5, help="number of clusters k")
    p.add_argument("--groups", type=positive_int, default=2, help="protected groups of the SBM")
    p.add_argument("--degree", type=positive_float, default=30.0,
                   help="average degree of the SBM")
    p.add_argument("--method", default="riemannian", choices=METHOD_CHOICES)
    p.add_argument("--laplacian", default="normalized", choices=("normalized", "unnormalized"))
    p.add_argument("--mip", action="store_true",
                   help="also solve the exact MIP (tiny graphs, <= 24 nodes)")
    p.add_argument("--seed", type=seed_int, default=0)
    p.set_defaults(func=_cmd_fairsc)


def _cmd_fairsc(args: argparse.Namespace) -> int:
    """Cluster the chosen graph with the chosen method(s) and print balance and ratio cut."""
    from coplug.formulations.fair_graphs import fair_sbm, load_graph

    if args.graph == "sbm":
        data = fair_sbm(args.n, args.clusters, args.groups, args.degree, seed=args.seed)
    else:
        data = load_graph(args.graph)
    methods = METHOD_CHOICES[:-1] if args.method == "all" else (args.method,)
    print(f"{data.name}: n={data.n}, edges={data.adjacency.nnz // 2}, "
          f"groups={np.bincount(data.groups).tolist()}, k={args.clusters}")
    print_comparison(data, args.clusters, methods, args.laplacian, args.seed)
    if args.mip:
        print_mip(data, args.clusters)
    return 0


def print_comparison(
    data: FairGraph, k: int, methods: tuple[str, ...], laplacian: str, seed: int = 0
) -> dict[str, np.ndarray]:
    """Fit each method and print a table of balance, ratio cut and time; return the labels."""
    from sklearn.metrics import adjusted_rand_score

    from coplug.formulations.fair_metrics import balance, ratio_cut
    from coplug.learned.fair_spectral import FairSpectralClustering

    print(f"{'method':<14}{'balance':>9}{'ratio cut':>12}{'time s':>9}"
          + (f"{'ARI':>7}" if data.planted is not None else ""))
    labels = {}
    for method in methods:
        start = time.perf_counter()
        estimator = FairSpectralClustering(k, data.groups, method=method, laplacian=laplacian,
                                           random_state=seed)
        labels[method] = estimator.fit_predict(data.adjacency)
        elapsed = time.perf_counter() - start
        row = (f"{method:<14}{balance(labels[method], data.groups):>9.3f}"
               f"{ratio_cut(data.adjacency, labels[method]):>12.4f}{elapsed:>9.2f}")
        if data.planted is not None:
            row += f"{adjusted_rand_score(data.planted, labels[method]):>7.3f}"
        print(row)
    return labels


def print_mip(data: FairGraph, k: int, max_nodes: int = 24) -> float | None:
    """Solve the exact fair-clustering MIP with HiGHS; print the balance of its partition and
    its optimum, or that no exactly fair k-clustering was found."""
    from coplug.formulations.fair_clustering_mip import fair_clustering_mip, mip_labels
    from coplug.formulations.fair_metrics import balance
    from coplug.plugins import solve

    if data.n > max_nodes:
        raise InputError(f"--mip is for tiny graphs (<= {max_nodes} nodes), this one has {data.n}")
    model = fair_clustering_mip(data.adjacency, data.groups, k)
    result = solve(model, solver="highs")
    if not result.has_solution:
        reason = (f"no exactly fair partition into {k} clusters exists"
                  if result.status.value == "infeasible" else "no partition found")
        print(f"{'exact MIP':<14}  {result.status.value}: {reason} ({result.time:.2f} s)")
        return None
    print(f"{'exact MIP':<14}{balance(mip_labels(model), data.groups):>9.3f}"
          f"{result.objective:>12.4f}{result.time:>9.2f}  ({result.status.value}, exactly fair)")
    return result.objective


def fair_clustering_section() -> None:
    """SC vs FairSC vs R-FairSC on a 1500-node fair SBM, then a tiny graph against the MIP."""
    from threadpoolctl import threadpool_limits

    from coplug.formulations.fair_graphs import fair_communities, fair_sbm

    data = fair_sbm(1500, n_clusters=4, avg_degree=25, seed=1)
    print(f"{data.name}: groups {np.bincount(data.groups).tolist()}, normalized-cut relaxation")
    with threadpool_limits(1):
        print_comparison(data, 4, ("normalized", "nullspace", "riemannian"), "normalized")
    tiny = fair_communities()
    print(f"{tiny.name}: spectral methods (ratio-cut relaxation) vs the exact fair MIP")
    print_comparison(tiny, 2, ("nullspace", "riemannian"), "unnormalized")
    print_mip(tiny, 2)
