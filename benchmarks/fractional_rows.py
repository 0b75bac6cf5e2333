"""Verdicts on all-integer rows with huge, partly half-integer coefficients, against brute
force: plain PySCIPOpt, coplug's SCIP and coplug's HiGHS side by side.

    python benchmarks/fractional_rows.py                 # 300 models (~2 min)
    python benchmarks/fractional_rows.py --models 100 --seed-start 1000

Each model has 2-3 integer variables on small boxes under 1-2 rows (<=, >=, ==, ranged)
whose coefficients lie near 1e8-3e9, each a half-integer with probability 0.3, and a
small integer objective; the truth is enumerated in exact rational arithmetic. A verdict
is wrong when it says "optimal" at another value or "infeasible" for a model with a
point; "unknown" (coplug's flag for a row still missed) and "error" (a SolverError: HiGHS
stops with "Solve error" on some) are counted apart. Plain PySCIPOpt
is SCIP on the same rows with none of coplug's checks. The last line is the summary.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
from pyscipopt import Model, quicksum
from tqdm import tqdm

from coplug.plugins import SolverError, solve
from coplug.plugins.interrupts import exit_on_interrupt

KINDS = ("le", "ge", "eq", "range")
SOLVERS = ("pyscipopt", "scip", "highs")


@dataclass
class Case:
    """Integer boxes, rows (coefficients, kind, side), objective costs."""

    low: list[int]
    high: list[int]
    rows: list[tuple[list[float], str, float]]
    costs: list[int]


def random_case(seed: int) -> Case:
    """One seeded model (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 4))
    low = rng.integers(-3, 1, n)
    high = low + rng.integers(1, 5, n)
    base, rows = float(rng.integers(1e8, 3e9)), []
    for _ in range(int(rng.integers(1, 3))):
        coefs = [(base + float(rng.integers(-3, 4)) + (0.5 if rng.random() < 0.3 else 0.0))
                 * (1 if rng.random() < 0.5 else -1) for _ in range(n)]
        side = float(rng.integers(-5, 6)) + (0.5 if rng.random() < 0.3 else 0.0)
        rows.append((coefs, str(rng.choice(KINDS)), side))
    return Case(low.tolist(), high.tolist(), rows, rng.integers(-9, 10, n).tolist())


def truth(case: Case) -> float | None:
    """The minimum over every integer point meeting every row exactly (None: no point)."""
    best = None
    for point in itertools.product(*[range(a, b + 1) for a, b in zip(case.low, case.high,
                                                                       strict=True)]):
        if all(_meets(coefs, kind, side, point) for coefs, kind, side in case.rows):
            value = sum(c * p for c, p in zip(case.costs, point, strict=True))
            best = value if best is None else min(best, value)
    return best


def _meets(coefs: list[float], kind: str, side: float, point: tuple[int, ...]) -> bool:
    """Whether one row holds at `point`, in exact arithmetic."""
    activity = sum(Fraction(c) * p for c, p in zip(coefs, point, strict=True))
    s = Fraction(side)
    return {"le": activity <= s, "ge": activity >= s, "eq": activity == s,
            "range": s <= activity <= s + 2}[kind]


def pyomo_model(case: Case) -> pyo.ConcreteModel:
    """The case as a Pyomo model."""
    n = len(case.low)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Integers,
                  bounds=lambda _m, i: (case.low[i], case.high[i]))
    m.rows = pyo.ConstraintList()
    for coefs, kind, side in case.rows:
        body = sum(c * m.x[i] for i, c in enumerate(coefs))
        m.rows.add({"le": body <= side, "ge": body >= side, "eq": body == side,
                    "range": pyo.inequality(side, body, side + 2)}[kind])
    m.cost = pyo.Objective(expr=sum(c * m.x[i] for i, c in enumerate(case.costs)))
    return m


def plain_scip(case: Case) -> tuple[str, float | None]:
    """SCIP through PySCIPOpt alone: its status and objective."""
    m = Model()
    m.hideOutput()
    x = [m.addVar(vtype="I", lb=a, ub=b) for a, b in zip(case.low, case.high, strict=True)]
    for coefs, kind, side in case.rows:
        body = quicksum(c * v for c, v in zip(coefs, x, strict=True))
        m.addCons({"le": body <= side, "ge": body >= side, "eq": body == side,
                   "range": (side <= body) <= side + 2}[kind])
    m.setObjective(quicksum(c * v for c, v in zip(case.costs, x, strict=True)))
    m.optimize()
    status = m.getStatus()
    return status, (m.getObjVal() if m.getNSols() else None)


def verdict(status: str, objective: float | None, best: float | None) -> str:
    """'right', 'wrong' or 'unknown' for one answer against the truth."""
    if status == "optimal":
        ok = best is not None and objective is not None and abs(objective - best) <= 1e-6
        return "right" if ok else "wrong"
    if status == "infeasible":
        return "right" if best is None else "wrong"
    return "unknown"


def run_case(seed: int) -> dict[str, str]:
    """Each solver's verdict on one model."""
    case, out = random_case(seed), {}
    best = truth(case)
    out["pyscipopt"] = verdict(*plain_scip(case), best)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # coplug's flagged 'unknown's warn
        for solver in ("scip", "highs"):
            try:
                result = solve(pyomo_model(case), solver=solver)
            except SolverError:  # HiGHS's own "Solve error" on some of these rows
                out[solver] = "error"
                continue
            out[solver] = verdict(result.status.value, result.objective, best)
    return out


def table(rows: Sequence[dict[str, str]]) -> list[str]:
    """Markdown table: verdicts per solver."""
    kinds = ("right", "wrong", "unknown", "error")
    lines = ["| solver | models | " + " | ".join(kinds) + " |", "| --- " * 6 + "|"]
    for solver in SOLVERS:
        counts = [str(sum(r[solver] == v for r in rows)) for v in kinds]
        lines.append(f"| {solver} | {len(rows)} | " + " | ".join(counts) + " |")
    return lines


def summary(rows: Sequence[dict[str, str]], wall: float) -> str:
    """The one SUMMARY line."""
    wrong = {s: sum(r[s] == "wrong" for r in rows) for s in SOLVERS}
    return (f"SUMMARY fractional_rows: wrong verdicts pyscipopt {wrong['pyscipopt']}/"
            f"{len(rows)}, coplug scip {wrong['scip']}/{len(rows)}, coplug highs "
            f"{wrong['highs']}/{len(rows)}; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every model, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=300, help="models (300)")
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (0)")
    args = parser.parse_args(argv)
    if args.models < 1 or args.seed_start < 0:
        parser.error("--models must be >= 1 and --seed-start >= 0")
    start, rows, interrupted = time.perf_counter(), [], False
    try:
        for seed in tqdm(range(args.seed_start, args.seed_start + args.models),
                         desc="fractional_rows", file=sys.stderr):
            rows.append(run_case(seed))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the models finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
