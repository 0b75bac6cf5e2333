"""coplug's own overhead in `solve`: coplug against Pyomo's own interfaces on large models.

    python benchmarks/solve_overhead.py                     # six shapes, both solvers (~2 min)
    python benchmarks/solve_overhead.py --cases transport=150,rows=20000 --solvers highs
    python benchmarks/solve_overhead.py --repeat 3 --time-limit 30

Each case builds one model shape at one size and solves it side by side in one process:
coplug's `solve(solver="highs")` against Pyomo's `pyomo.contrib.solver` `Highs().solve`, and
`solve(solver="scip")` against Pyomo's `scip_direct` and against `scip_persistent`, the
interface coplug builds SCIP models with (coplug's linear-time sum handler is installed for
all: Pyomo's own is quadratic, see `benchmarks/scip_build.py`). Shapes:
`transport=N` (N sources, 2N sinks: an LP of 2N^2 variables), `rows=N` (an LP of 2N
variables in 2N two-term rows), `assignment=N` (N x N binaries), `setcover=N` and
`knapsack=N` (coplug's generators, binary MIPs) and `qp=N` (a separable convex QP with one
budget row). Every solve gets a fresh model, built outside the timing, after a
`gc.collect()`. Seconds are wall seconds of the whole call, the best of --repeat runs;
`solver s` is the solver's own time as coplug reports it (`result.time`), `overhead s` is
coplug's wall minus Pyomo's, `own s` coplug's wall minus that of the Pyomo interface it
builds on (`base s`: Highs for HiGHS, scip_persistent for SCIP), which is coplug's own
overhead. Objectives must agree (1e-6 relative, 1e-4 for MIPs: HiGHS's default gap). The
last line is the summary.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from tqdm import tqdm

from coplug.formulations.assignment import assignment_model
from coplug.formulations.knapsack import knapsack_mip, random_knapsack
from coplug.formulations.mip_families import setcover
from coplug.plugins import solve
from coplug.plugins.argtypes import positive_float, positive_int
from coplug.plugins.errors import CoplugError
from coplug.plugins.interrupts import exit_on_interrupt

DEFAULT_CASES = "transport=150,rows=20000,assignment=150,setcover=200,knapsack=5000,qp=800"
SOLVERS = ("highs", "scip")
# Pyomo's interfaces timed per solver: the one compared against, then the one coplug builds on
# (HiGHS's is the same).
INTERFACES = {"highs": ("highs",), "scip": ("scip_direct", "scip_persistent")}
# Relative objective agreement: LPs and QPs to the solvers' tolerances, MIPs to HiGHS's gap.
AGREE_REL = {"lp": 1e-6, "mip": 1e-4}


def transport(n: int) -> pyo.ConcreteModel:
    """n sources, 2n sinks: ship 90% of the supply at random unit costs (an LP)."""
    rng = np.random.default_rng(0)
    supply = rng.integers(50, 100, n).astype(float)
    demand = supply.sum() * 0.9 / (2 * n)
    cost = rng.random((n, 2 * n)) * 10
    m = pyo.ConcreteModel(name="transport")
    m.S, m.D = pyo.RangeSet(0, n - 1), pyo.RangeSet(0, 2 * n - 1)
    m.x = pyo.Var(m.S, m.D, domain=pyo.NonNegativeReals)
    m.supply = pyo.Constraint(m.S, rule=lambda m, i: sum(m.x[i, j] for j in m.D) <= supply[i])
    m.demand = pyo.Constraint(m.D, rule=lambda m, j: sum(m.x[i, j] for i in m.S) >= demand)
    m.cost = pyo.Objective(expr=sum(float(cost[i, j]) * m.x[i, j] for i in m.S for j in m.D))
    return m


def rows(n: int) -> pyo.ConcreteModel:
    """2n bounded variables in 2n two-term rows: many small constraints (an LP)."""
    weight = np.random.default_rng(0).random(n)
    m = pyo.ConcreteModel(name="rows")
    m.I = pyo.RangeSet(0, n - 1)
    m.x, m.y = pyo.Var(m.I, bounds=(0, 10)), pyo.Var(m.I, bounds=(0, 10))
    m.cap = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + 2 * m.y[i] <= 5 + i % 3)
    m.gap = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] - m.y[i] >= -1)
    m.value = pyo.Objective(expr=sum(-float(weight[i]) * m.x[i] - m.y[i] for i in m.I))
    return m


def assignment(n: int) -> pyo.ConcreteModel:
    """An n x n assignment of binaries at random integer costs (a MIP)."""
    return assignment_model(np.random.default_rng(0).integers(1, 100, (n, n)).astype(float))


def knapsack(n: int) -> pyo.ConcreteModel:
    """coplug's uncorrelated binary knapsack of n items, weights up to 1000."""
    return knapsack_mip(random_knapsack(n, 0, "uncorrelated", 1000))


def qp(n: int) -> pyo.ConcreteModel:
    """min sum (1 + c_i) x_i^2 - c_i x_i on [0, 1]^n with sum x = n / 10 (a convex QP)."""
    c = np.random.default_rng(0).random(n)
    m = pyo.ConcreteModel(name="qp")
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.budget = pyo.Constraint(expr=sum(m.x[i] for i in m.I) == n / 10)
    m.cost = pyo.Objective(expr=sum(float(1 + c[i]) * m.x[i] ** 2 - float(c[i]) * m.x[i]
                                    for i in m.I))
    return m


SHAPES: dict[str, tuple[Callable[[int], pyo.ConcreteModel], str, int]] = {
    "transport": (transport, "lp", 1),
    "rows": (rows, "lp", 1),
    "assignment": (assignment, "mip", 1),
    "setcover": (lambda n: setcover(n, 0), "mip", 5),
    "knapsack": (knapsack, "mip", 1),
    "qp": (qp, "lp", 1),
}


@dataclass
class Row:
    """One shape at one size with one solver: coplug's and Pyomo's best wall seconds."""

    shape: str
    size: int
    variables: int
    constraints: int
    solver: str
    coplug: float
    pyomo: float
    base: float
    solver_time: float
    agree: bool


def cases(text: str) -> list[tuple[str, int]]:
    """`shape=size,...` pairs."""
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, size = item.partition("=")
        if name not in SHAPES or not size.isdigit() or int(size) < SHAPES[name][2]:
            raise argparse.ArgumentTypeError(
                f"{item!r}: need SHAPE=SIZE with SHAPE one of {', '.join(SHAPES)} and SIZE a "
                "positive integer (setcover at least 5)")
        pairs.append((name, int(size)))
    if not pairs:
        raise argparse.ArgumentTypeError("no cases given")
    return pairs


def solvers(text: str) -> list[str]:
    """Comma-separated solver names out of SOLVERS."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(names) - set(SOLVERS))
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(SOLVERS)}")
    return names


def coplug_run(model: pyo.ConcreteModel, solver: str, time_limit: float
               ) -> tuple[float | None, float]:
    """coplug's objective and the solver's own seconds."""
    result = solve(model, solver=solver, time_limit=time_limit)
    return result.objective, result.time


def pyomo_run(model: pyo.ConcreteModel, interface: str, time_limit: float) -> float | None:
    """The objective of one of Pyomo's own interfaces, solving once: contrib `highs`, or
    `scip_direct` / `scip_persistent` with SCIP's log off (coplug's is off too; Pyomo shows it
    and captures it through a pipe, which a long log fills while SCIP holds the GIL: the
    process hangs)."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    quiet = {} if interface == "highs" else {"display/verblevel": 0}
    opt = SolverFactory(interface)
    results = opt.solve(model, time_limit=time_limit, solver_options=quiet,
                        raise_exception_on_nonoptimal_result=False)
    return results.incumbent_objective


def warm_up(names: Sequence[str]) -> None:
    """One tiny solve through each interface, so imports and first-call costs stay out of
    the timings."""
    for solver in names:
        coplug_run(transport(2), solver, 10.0)
        for interface in INTERFACES[solver]:
            pyomo_run(transport(2), interface, 10.0)


def timed(call: Callable[[], object]) -> tuple[float, object]:
    """Wall seconds of `call()` after a full garbage collection, and what it returned."""
    gc.collect()
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def agree(a: float | None, b: float | None, kind: str) -> bool:
    """Whether two objectives agree to the tolerance of the model's kind."""
    if a is None or b is None:
        return a is b
    return abs(a - b) <= AGREE_REL[kind] * max(1.0, abs(a), abs(b))


def run_case(shape: str, size: int, solver: str, repeat: int, time_limit: float) -> Row:
    """`repeat` rounds of coplug then Pyomo, each on a fresh model (only the model being
    solved is alive); the best time of each."""
    build, kind, _ = SHAPES[shape]
    model = build(size)
    variables = sum(1 for _ in model.component_data_objects(pyo.Var))
    constraints = sum(1 for _ in model.component_data_objects(pyo.Constraint, active=True))
    del model
    best = {name: float("inf") for name in ("coplug", *INTERFACES[solver])}
    same, solver_time = True, 0.0
    for _ in range(repeat):
        model = build(size)
        seconds, (ours, solver_time) = timed(lambda m=model: coplug_run(m, solver, time_limit))
        best["coplug"] = min(best["coplug"], seconds)
        for interface in INTERFACES[solver]:
            model = build(size)
            seconds, theirs = timed(lambda m=model, i=interface: pyomo_run(m, i, time_limit))
            best[interface] = min(best[interface], seconds)
            same = same and agree(ours, theirs, kind)
    compared, base = INTERFACES[solver][0], INTERFACES[solver][-1]
    return Row(shape, size, variables, constraints, solver, best["coplug"], best[compared],
               best[base], solver_time, same)


def table(rows_: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| model | size | vars | rows | solver | coplug s | Pyomo s | coplug/Pyomo | "
             "overhead s | base s | own s | solver s | same objective |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows_:
        lines.append(f"| {r.shape} | {r.size} | {r.variables} | {r.constraints} | {r.solver} | "
                     f"{r.coplug:.2f} | {r.pyomo:.2f} | {r.coplug / r.pyomo:.2f} | "
                     f"{r.coplug - r.pyomo:+.2f} | {r.base:.2f} | {r.coplug - r.base:+.2f} | "
                     f"{r.solver_time:.2f} | {'yes' if r.agree else 'NO'} |")
    return lines


def summary(rows_: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line: median and max coplug/Pyomo wall ratio, per solver too."""
    if not rows_:
        return f"SUMMARY solve_overhead: no case finished; {wall:.0f} s wall"
    ratios = [r.coplug / r.pyomo for r in rows_]
    by_solver = {name: [r.coplug / r.pyomo for r in rows_ if r.solver == name]
                 for name in SOLVERS}
    per_solver = "; ".join(f"{name} median {statistics.median(found):.2f}x"
                           for name, found in by_solver.items() if found)
    same = sum(r.agree for r in rows_)
    return (f"SUMMARY solve_overhead: coplug/Pyomo wall median {statistics.median(ratios):.2f}x "
            f"(max {max(ratios):.2f}x) over {len(rows_)} runs ({per_solver}); overhead median "
            f"{statistics.median(r.coplug - r.pyomo for r in rows_):+.2f} s, coplug's own over "
            f"the interface it builds on median "
            f"{statistics.median(r.coplug - r.base for r in rows_):+.2f} s (max "
            f"{max(r.coplug - r.base for r in rows_):+.2f} s); "
            f"same objective {same}/{len(rows_)}; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=cases, default=cases(DEFAULT_CASES),
                        help=f"SHAPE=SIZE,... (default {DEFAULT_CASES})")
    parser.add_argument("--solvers", type=solvers, default=list(SOLVERS),
                        help="highs,scip (both)")
    parser.add_argument("--repeat", type=positive_int, default=2,
                        help="rounds per case; the best time counts (2)")
    parser.add_argument("--time-limit", type=positive_float, default=60.0,
                        help="per solve (60 s)")
    args = parser.parse_args(argv)
    from coplug.plugins.scip_walker import fix_scip_walker

    fix_scip_walker()  # Pyomo's scip_direct gets coplug's linear-time sums too
    start = time.perf_counter()
    results: list[Row] = []
    interrupted = False
    work = [(shape, size, solver) for shape, size in args.cases for solver in args.solvers]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. Pyomo's notes on time limits
            warm_up(args.solvers)
            for shape, size, solver in tqdm(work, desc="solve_overhead", file=sys.stderr):
                results.append(run_case(shape, size, solver, args.repeat, args.time_limit))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    except CoplugError as exc:
        print(f"solve_overhead: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(table(results)))
    print(summary(results, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.agree for r in results) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
