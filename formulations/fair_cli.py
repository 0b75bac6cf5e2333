"""`coplug fairsc`: fair spectral clustering from the command line, and its demo section."""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from coplug.formulations.fair_graphs import FairGraph
from coplug.plugins.argtypes import positive_float, positive_int, seed32_int
from coplug.plugins.errors import InputError
from coplug.plugins.results import Result, Status

if TYPE_CHECKING:
    from coplug.learned.fair_spectral import FairSpectralClustering

METHOD_CHOICES = ("riemannian", "nullspace", "unnormalized", "normalized", "all")
FAIR_METHODS = ("riemannian", "nullspace")
# SBM settings and their defaults; a real graph brings its own nodes and groups.
SBM_DEFAULTS = {"n": 2000, "groups": 2, "degree": 30.0}
MIP_TIME_LIMIT = 60.0
# Largest graph --mip takes: the exact MIP has k * n binaries and grows past seconds beyond it.
MIP_MAX_NODES = 24


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `fairsc` command."""
    p = subparsers.add_parser(
        "fairsc", help="fair spectral clustering (SC, FairSC, R-FairSC) on an SBM or real graph"
    )
    p.add_argument("--graph", default="sbm", help="sbm | karate | davis | diabetes_knn")
    p.add_argument("--n", type=positive_int, default=None,
                   help=f"nodes of the SBM (default {SBM_DEFAULTS['n']})")
    p.add_argument("--clusters", type=positive_int, default=5, help="number of clusters k")
    p.add_argument("--groups", type=positive_int, default=None,
                   help=f"protected groups of the SBM (default {SBM_DEFAULTS['groups']})")
    p.add_argument("--degree", type=positive_float, default=None,
                   help=f"average degree of the SBM (default {SBM_DEFAULTS['degree']:g})")
    p.add_argument("--method", default="riemannian", choices=METHOD_CHOICES)
    p.add_argument("--laplacian", default=None, choices=("normalized", "unnormalized"),
                   help="relaxation of the fair methods (riemannian, nullspace): normalized "
                        "cut (default) or ratio cut")
    p.add_argument("--mip", action="store_true",
                   help="also solve the exact MIP (tiny graphs, <= 24 nodes)")
    p.add_argument("--time-limit", type=positive_float, default=None,
                   help=f"seconds for the --mip solve (default {MIP_TIME_LIMIT:g}); on the "
                        "limit the best partition found and the bound are shown")
    p.add_argument("--seed", type=seed32_int, default=0,
                   help="seeds the graph and the methods' random_state (below 2**32)")
    p.set_defaults(func=_cmd_fairsc)


def check_flags(args: argparse.Namespace) -> None:
    """Refuse flags that would be silently ignored: SBM settings with a real graph,
    --laplacian with plain SC only, --time-limit without --mip."""
    if args.graph != "sbm":
        given = [f"--{name}" for name in SBM_DEFAULTS if getattr(args, name) is not None]
        if given:
            raise InputError(f"{', '.join(given)}: for --graph sbm only; --graph "
                             f"{args.graph} brings its own nodes and groups")
    if args.laplacian is not None and args.method not in (*FAIR_METHODS, "all"):
        raise InputError(f"--laplacian picks the relaxation of the fair methods "
                         f"({', '.join(FAIR_METHODS)}); --method {args.method} is plain "
                         "spectral clustering on its own Laplacian")
    if args.time_limit is not None and not args.mip:
        raise InputError("--time-limit limits the exact MIP: add --mip")


def _cmd_fairsc(args: argparse.Namespace) -> int:
    """Cluster the chosen graph with the chosen method(s) and print balance and ratio cut."""
    from coplug.formulations.fair_graphs import fair_sbm, load_graph

    check_flags(args)
    if args.graph == "sbm":
        n, groups, degree = (getattr(args, name) or default
                             for name, default in SBM_DEFAULTS.items())
        data = fair_sbm(n, args.clusters, groups, degree, seed=args.seed)
    else:
        data = load_graph(args.graph)
    if args.mip and data.n > MIP_MAX_NODES:
        raise InputError(f"--mip is for tiny graphs (<= {MIP_MAX_NODES} nodes), this one has "
                         f"{data.n}")
    methods = METHOD_CHOICES[:-1] if args.method == "all" else (args.method,)
    laplacian = args.laplacian or "normalized"
    relaxation = f", laplacian={laplacian}" if set(methods) & set(FAIR_METHODS) else ""
    print(f"{data.name}: n={data.n}, edges={data.adjacency.nnz // 2}, "
          f"groups={np.bincount(data.groups).tolist()}, k={args.clusters}{relaxation}")
    print_comparison(data, args.clusters, methods, laplacian, args.seed)
    if args.mip:
        print_mip(data, args.clusters, time_limit=args.time_limit or MIP_TIME_LIMIT)
    return 0


def fit_method(
    data: FairGraph, k: int, method: str, laplacian: str, seed: int = 0
) -> tuple[FairSpectralClustering, float]:
    """Fit one method; returns (estimator, seconds). R-FairSC's non-convergence warning is
    left to `method_note` (the row says it); FairSC's memory refusal gets a CLI hint."""
    from coplug.learned.fair_spectral import (
        NOT_CONVERGED,
        DenseMemoryError,
        FairSpectralClustering,
    )

    estimator = FairSpectralClustering(k, data.groups, method=method, laplacian=laplacian,
                                       random_state=seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=re.escape(NOT_CONVERGED), category=UserWarning)
        try:
            estimator.fit(data.adjacency)
        except DenseMemoryError as error:
            raise DenseMemoryError(error.needed, error.n, "use --method riemannian") from None
    return estimator, time.perf_counter() - start


def method_note(info: dict[str, Any]) -> str:
    """What the row must add from R-FairSC's admm_info_: the nullspace fallback, or an ADMM
    that stopped at max_iter unconverged; empty otherwise."""
    if "fallback" in info:
        return (f"  (ran nullspace instead: k is over half the {info['fair_dimension']} "
                "fair dimensions)")
    if info.get("converged") is False:
        return (f"  (ADMM NOT converged in {info['iterations']} iterations, objective "
                f"{info['objective']:.3g})")
    return ""


def print_comparison(
    data: FairGraph, k: int, methods: tuple[str, ...], laplacian: str, seed: int = 0
) -> dict[str, np.ndarray]:
    """Fit each method and print a table of balance, ratio cut and time (and ARI against a
    planted partition); return the labels. With several methods, one that refuses the input
    (FairSC out of memory, say) gets a "skipped: <reason>" row and the others still run; a
    lone method's refusal, or every method's, is an error."""
    from sklearn.metrics import adjusted_rand_score

    from coplug.formulations.fair_metrics import balance, ratio_cut

    print(f"{'method':<14}{'balance':>9}{'ratio cut':>12}{'time s':>9}"
          + (f"{'ARI':>7}" if data.planted is not None else ""))
    labels: dict[str, np.ndarray] = {}
    refusals: list[InputError] = []
    for method in methods:
        if sys.stderr.isatty():  # a dense method runs tens of seconds before its row
            print(f"{method:<14}  fitting...", end="\r", file=sys.stderr, flush=True)
        try:
            estimator, elapsed = fit_method(data, k, method, laplacian, seed)
        except InputError as error:
            if len(methods) == 1:
                raise
            refusals.append(error)
            print(f"{method:<14}  skipped: {error}", flush=True)
            continue
        labels[method] = estimator.labels_
        row = (f"{method:<14}{balance(labels[method], data.groups):>9.3f}"
               f"{ratio_cut(data.adjacency, labels[method]):>12.4f}{elapsed:>9.2f}")
        if data.planted is not None:
            row += f"{adjusted_rand_score(data.planted, labels[method]):>7.3f}"
        print(row + method_note(estimator.admm_info_), flush=True)
    if refusals and not labels:
        raise refusals[0]
    return labels


def mip_status_note(result: Result, value: float) -> str:
    """`optimal`, or for a stopped solve its status with the bound, and the gap between the
    bound and `value`, the ratio cut of its best partition."""
    if result.optimal:
        return "optimal"
    if result.bound is None:
        return f"{result.status.value}: best found, bound n/a"
    gap = (value - result.bound) / max(abs(value), 1e-9)
    return f"{result.status.value}: best found, bound {result.bound:.4f}, gap {gap:.1%}"


def print_mip(
    data: FairGraph, k: int, max_nodes: int = MIP_MAX_NODES, time_limit: float = MIP_TIME_LIMIT
) -> float | None:
    """Solve the exact fair-clustering MIP with HiGHS within `time_limit` seconds; print the
    balance and ratio cut of its partition (recomputed from the labels; a solver objective
    below it is printed as a WARNING line), or that no fair k-clustering was found.
    Returns that ratio cut, or None; after Ctrl-C (status interrupted) raises
    KeyboardInterrupt once the row is printed."""
    from coplug.formulations.fair_clustering_mip import (
        fair_clustering_mip,
        mip_labels,
        mip_objective,
        objective_mismatch,
    )
    from coplug.formulations.fair_metrics import balance
    from coplug.plugins import solve

    if data.n > max_nodes:
        raise InputError(f"--mip is for tiny graphs (<= {max_nodes} nodes), this one has {data.n}")
    model = fair_clustering_mip(data.adjacency, data.groups, k)
    print(f"(exact MIP: HiGHS, time limit {time_limit:g} s)", file=sys.stderr, flush=True)
    # "optimal" here is the exact optimum: HiGHS's default gap of 1e-4 is closed
    result = solve(model, solver="highs", time_limit=time_limit, options={"mip_rel_gap": 0.0})
    if not result.has_solution:
        reason = (f"no exactly fair partition into {k} clusters exists"
                  if result.status.value == "infeasible" else "no partition found")
        bound = "" if result.bound is None else f", bound {result.bound:.4f}"
        print(f"{'exact MIP':<14}  {result.status.value}: {reason}{bound} ({result.time:.2f} s)")
        _stop_if_interrupted(result)
        return None
    labels = mip_labels(model, check=False)
    value = mip_objective(model, labels)
    print(f"{'exact MIP':<14}{balance(labels, data.groups):>9.3f}{value:>12.4f}"
          f"{result.time:>9.2f}  ({mip_status_note(result, value)}, exactly fair)")
    mismatch = objective_mismatch(model, labels, result.objective)
    if mismatch is not None:
        print(f"WARNING: {mismatch}", flush=True)
    _stop_if_interrupted(result)
    return value


def _stop_if_interrupted(result: Result) -> None:
    """Ctrl-C stopped HiGHS (its best partition is printed): stop the command too, so
    `coplug fairsc --mip` exits 130 as `coplug solve` does, not 0."""
    if result.status is Status.INTERRUPTED:
        raise KeyboardInterrupt


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
