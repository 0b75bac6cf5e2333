"""`coplug qubo PROBLEM`: run PGD/Adam on a naive or safe QUBO beside SCIP on the exact MIP.

Also holds the seeded test cases shared with the benchmark and the `make demo` section.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from coplug.formulations import registry
from coplug.formulations.qubo import QUBO
from coplug.plugins.argtypes import positive_float, positive_int, seed_int
from coplug.plugins.bar import on_terminal
from coplug.plugins.errors import InputError
from coplug.plugins.results import Result, Status

PROBLEMS = ("knapsack", "tsp", "openpit")
FORMS = ("safe", "naive")
# Item weights for QUBO knapsack cases are drawn from 1..KNAPSACK_R: the safe placement
# QUBO has about n * C variables, so weights stay small to keep C (about n * R / 4) modest.
KNAPSACK_R = 10
# Default --size of a generated instance.
SIZE = 20


@dataclass
class Case:
    """One seeded instance: its exact Pyomo MIP, QUBO builders and objective sense."""

    problem: str
    instance: Any
    mip: Callable[[], pyo.ConcreteModel]
    qubos: dict[str, Callable[[], QUBO]]
    sense: int
    label: str


def make_case(problem: str, size: int, seed: int = 0, path: str | None = None,
              max_nonzeros: int | None = None) -> Case:
    """Build a seeded (or loaded) instance of `problem` with its MIP and QUBOs; a generated
    one too large for this machine's memory is refused first, as `coplug solve` does.
    `max_nonzeros` raises the size limit of the QUBOs that have one (knapsack's safe form,
    TSP's two; None: their defaults)."""
    limit = {} if max_nonzeros is None else {"max_nonzeros": max_nonzeros}
    if path is None and problem in PROBLEMS:
        registry.check_size(problem, size)
    if problem == "knapsack":
        from coplug.formulations import knapsack as ks

        if path:
            inst = ks.load_knapsack(path)
        else:
            kind = "uncorrelated" if seed % 2 == 0 else "strongly_correlated"
            inst = ks.random_knapsack(size, seed=seed, kind=kind, r=KNAPSACK_R)
        return Case(
            problem,
            inst,
            lambda: ks.knapsack_mip(inst),
            {
                "safe": lambda: ks.knapsack_qubo_safe(inst, **limit),
                "naive": lambda: ks.knapsack_qubo_naive(inst),
            },
            -1,
            f"knapsack n={inst.n} C={inst.capacity}",
        )
    if problem == "tsp":
        from coplug.formulations import tsp

        inst = tsp.load_tsplib(path) if path else tsp.random_euclidean(size, seed=seed)
        return Case(
            problem,
            inst,
            lambda: tsp.tsp_mip(inst.dist),
            {
                "safe": lambda: tsp.tsp_qubo_safe(inst.dist, **limit),
                "naive": lambda: tsp.tsp_qubo_naive(inst.dist, **limit),
            },
            1,
            f"tsp {inst.name} n={inst.n}",
        )
    if problem == "openpit":
        from coplug.formulations import openpit as op

        if path:
            raise InputError("openpit cases are generated; --file is for knapsack and tsp")
        inst = op.random_block_model(size, seed=seed, dims=2 if seed % 2 == 0 else 3)
        shape = "x".join(str(s) for s in inst.values.shape)
        return Case(
            problem,
            inst,
            lambda: op.openpit_mip(inst),
            {
                "safe": lambda: op.openpit_qubo_safe(inst),
                "naive": lambda: op.openpit_qubo_naive(inst),
            },
            -1,
            f"openpit {shape} ({inst.n} blocks)",
        )
    raise InputError(f"unknown problem {problem!r}; use one of {', '.join(PROBLEMS)}")


def exact_solve(
    case: Case, time_limit: float | None = None, model: pyo.ConcreteModel | None = None
) -> tuple[Result, float]:
    """SCIP on the exact MIP (`model` when already built) and the wall seconds it took;
    Ctrl-C stops SCIP (status `interrupted`, with its incumbent and bound) as in `coplug
    solve`. A knapsack row with a large capacity is judged exactly by `solve` itself (its
    integral-row guard), so a packing over the capacity never comes back optimal."""
    from coplug.plugins.bridge import solve
    from coplug.plugins.progress import terminal_progress

    model = case.mip() if model is None else model
    start = time.perf_counter()
    result = solve(model, solver="scip", time_limit=time_limit, plugins=terminal_progress())
    return result, time.perf_counter() - start


def exact_optimum(case: Case, time_limit: float | None = None) -> tuple[float | None, float]:
    """SCIP's proven optimum of the exact MIP (None when it stopped without a proof, so no
    gap is measured against a mere incumbent) and the wall seconds it took."""
    result, seconds = exact_solve(case, time_limit)
    if result.status is Status.INTERRUPTED:
        raise KeyboardInterrupt
    return (result.objective if result.optimal else None), seconds


# SCIP's objective is a float sum over its solution values: on a tour of length 291 it can
# read 291.00000000000006. Relative gaps this small are that rounding, not a difference.
GAP_TOLERANCE = 1e-9


def gap(best: float | None, optimum: float | None, sense: int) -> float | None:
    """Gap of a found objective to the optimum, relative to max(|optimum|, 1) (0 = optimal;
    within GAP_TOLERANCE it is 0, so rounding in SCIP's sum never prints as -0.00%)."""
    if best is None or optimum is None:
        return None
    value = sense * (best - optimum) / max(abs(optimum), 1.0)
    return value if abs(value) > GAP_TOLERANCE else 0.0


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `qubo` command."""
    p = subparsers.add_parser(
        "qubo", help="PGD/Adam on a safe or naive relaxed QUBO (knapsack, tsp, openpit) vs SCIP"
    )
    p.add_argument("problem", choices=PROBLEMS)
    p.add_argument(
        "--size", type=positive_int, default=None, help=f"items / cities / blocks (default {SIZE})"
    )
    p.add_argument("--method", choices=("adam", "pgd"), default="adam")
    p.add_argument("--form", choices=FORMS, default="safe")
    p.add_argument("--starts", type=positive_int, default=200, help="random starts, batched")
    p.add_argument("--seed", type=seed_int, default=0, help="integer in [0, 2**63)")
    p.add_argument("--max-iter", type=positive_int, default=3000)
    p.add_argument(
        "--file", default=None, help="a knapsack text file or a TSPLIB .tsp file (no --size)"
    )
    p.add_argument(
        "--time-limit", type=positive_float, default=None, help="SCIP time limit, seconds"
    )
    p.add_argument("--max-nonzeros", type=positive_int, default=None,
                   help="raise the size limit of knapsack's safe QUBO and TSP's QUBOs")
    p.set_defaults(func=_cmd_qubo)


def _cmd_qubo(args: argparse.Namespace) -> int:
    """Run one QUBO experiment and print the comparison with SCIP; Ctrl-C during PGD/Adam
    prints what the starts reached and exits 130 without running SCIP."""
    from coplug.formulations.qubo_solvers import minimize

    if args.file and args.size is not None:
        raise InputError("--size cannot be combined with --file: the file fixes the instance")
    if args.file == "":  # Path("") is the current folder
        raise InputError(f"--file is empty; give the path of a {args.problem} file")
    if args.file is not None and Path(args.file).is_dir():  # the loaders said "not found"
        raise InputError(f"--file {args.file} is a directory, not a {args.problem} file")
    size = SIZE if args.size is None else args.size
    case = make_case(args.problem, size, seed=args.seed, path=args.file,
                     max_nonzeros=args.max_nonzeros)
    qubo = case.qubos[args.form]()
    print(f"{case.label}: {args.form} QUBO with {qubo.n} variables")
    report = minimize(
        qubo,
        method=args.method,
        starts=args.starts,
        seed=args.seed,
        max_iter=args.max_iter,
        progress=on_terminal(),
    )
    if report.interrupted:
        print(f"{args.method} interrupted after {report.iterations} iterations: the starts "
              "are certified where they stood")
    elif report.stats["unfinished"]:
        print(f"{report.stats['unfinished']} of {args.starts} starts NOT converged within "
              f"--max-iter {args.max_iter}: certified where they stood")
    best = report.best_objective(case.sense)
    print(f"binary+feasible  {report.fraction_binary_feasible:.1%} of {args.starts} starts")
    print(f"certified local minimizers  {report.fraction_ok:.1%}")
    print(f"best objective   {best}  ({report.seconds:.2f} s {args.method})")
    if report.interrupted:
        return 130  # Ctrl-C: no SCIP run after it
    limit = "no time limit" if args.time_limit is None else f"time limit {args.time_limit:g} s"
    model = case.mip()
    print(f"SCIP on the exact MIP ({limit}; Ctrl-C stops it) ...", flush=True)
    result, scip_seconds = exact_solve(case, args.time_limit, model)
    optimum = result.objective if result.optimal else None
    if optimum is not None:
        print(f"SCIP optimum     {optimum:.10g} in {scip_seconds:.2f} s, gap "
              f"{_pct(gap(best, optimum, case.sense))}")
        return 0
    print(f"SCIP stopped ({result.status.value}) after {scip_seconds:.2f} s without a proof: "
          f"incumbent {result.objective}, bound {result.bound}; no gap measured")
    return 130 if result.status is Status.INTERRUPTED else 0


def _pct(value: float | None) -> str:
    """A gap as a percentage, or 'n/a'."""
    return "n/a" if value is None else f"{100 * value:.2f}%"


def qubo_section() -> None:
    """A small knapsack: safe-QUBO Adam from 64 starts beside SCIP on the exact MIP."""
    from coplug.formulations.qubo_solvers import minimize

    case = make_case("knapsack", 10, seed=3)
    qubo = case.qubos["safe"]()
    report = minimize(qubo, method="adam", starts=64, seed=0)
    optimum, scip_seconds = exact_optimum(case)
    best = report.best_objective(case.sense)
    print(f"{case.label}: safe placement QUBO, {qubo.n} variables, Adam from 64 starts")
    print(
        f"binary+feasible {report.fraction_binary_feasible:.0%}, certified {report.fraction_ok:.0%}"
    )
    print(
        f"best value {best} in {report.seconds:.2f} s vs SCIP optimum {optimum} in "
        f"{scip_seconds:.2f} s (gap {_pct(gap(best, optimum, case.sense))})"
    )
