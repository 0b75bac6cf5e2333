"""Rows with huge coefficients (`coplug.plugins.row_scaling`): plain PySCIPOpt, coplug's
SCIP and coplug's HiGHS, each without and with the rows divided, side by side on the same
models.

    python benchmarks/huge_rows.py                       # 4 kinds x 3 scales x 20 seeds
    python benchmarks/huge_rows.py --kinds cover-int --exponents 9 --seeds 5

Kinds: `cover-int` / `cover-bin` (min c x, A x >= 0.31 / 0.21 of A's row sums, x integer
in [0, 3] / binary), `pack-int` (max c x, A x <= 0.4 of the row sums, x in [0, 3]),
`pack-frac` (pack-int with fractional weights), `pack-small` (pack-frac on 6 columns and
3 rows, each row on a random 2 to 6 of them, x in [0, 2]: where HiGHS's presolve went
wrong) and `cover-lp` (cover-int with x continuous); 30 columns, 6 rows, A drawn from
[10**e, 10**(e+1)), costs from 1..99. The reference is scipy's HiGHS (`milp` at no relative gap,
`linprog`), and every point is checked in exact integer arithmetic too. A verdict is wrong
when it says "optimal" at a worse value than a point known to meet every row exactly (the
best of the reference's and the three solvers'), or at a point that misses a row; an LP is
wrong when "optimal" differs from linprog's by 1e-6 relative. "error" counts SCIP's
"error in LP solver". Seconds are wall time per solve, model building included for
coplug. The last line is the summary.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
from pyscipopt import Model, quicksum
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from tqdm import tqdm

from coplug.plugins import CoplugError, Status, row_scaling, solve
from coplug.plugins.argtypes import ints_at_least
from coplug.plugins.interrupts import exit_on_interrupt

KINDS = ("cover-int", "cover-bin", "pack-int", "pack-frac", "pack-small", "cover-lp")
SOLVERS = ("pyscipopt", "scip-undivided", "scip", "highs-undivided", "highs")
COLUMNS, ROWS = 30, 6


@dataclass
class Instance:
    """One model's data: `sign` 1 for >= rows (minimize), -1 for <= rows (maximize)."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    upper: int
    sign: int
    integer: bool


@dataclass
class Row:
    """One model solved three ways: verdict per solver and seconds."""

    cell: str
    verdicts: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def instance(kind: str, exponent: int, seed: int) -> Instance:
    """The seeded model of `kind` at coefficients near 10**exponent."""
    rng = np.random.default_rng(seed)
    rows, columns = (3, 6) if kind == "pack-small" else (ROWS, COLUMNS)
    if kind in ("pack-frac", "pack-small"):
        a = rng.uniform(10**exponent, 10**(exponent + 1), (rows, columns))
    else:
        a = rng.integers(10**exponent, 10**(exponent + 1), (rows, columns))
    if kind == "pack-small":
        for row in a:
            row[rng.choice(columns, rng.integers(0, columns - 1), replace=False)] = 0.0
    share = {"cover-int": 0.31, "cover-bin": 0.21, "cover-lp": 0.31}.get(kind, 0.4)
    b = (a.sum(1) * share).astype(np.int64)
    c = rng.integers(1, 100, columns)
    upper = {"cover-bin": 1, "pack-small": 2}.get(kind, 3)
    return Instance(a, b, c, upper, -1 if kind.startswith("pack") else 1, kind != "cover-lp")


def meets_rows(inst: Instance, x: Sequence[float]) -> bool:
    """Whether integer point `x` meets every row in exact arithmetic."""
    whole = [round(v) for v in x]
    if any(abs(v - w) > 1e-6 or not 0 <= w <= inst.upper for v, w in zip(x, whole, strict=True)):
        return False
    activities = [sum(_exact(a) * w for a, w in zip(row, whole, strict=True)) for row in inst.a]
    return all(inst.sign * (act - int(side)) >= 0
               for act, side in zip(activities, inst.b, strict=True))


def _exact(number: float) -> int | Fraction:
    """A matrix entry as an exact number (whole weights as int, fractional as Fraction)."""
    return int(number) if float(number).is_integer() else Fraction(float(number))


def reference(inst: Instance) -> tuple[float, list[float] | None]:
    """scipy's HiGHS: the objective (minimization sense) and, for a MIP, its point (inf and
    None where it found none)."""
    costs = inst.sign * inst.c.astype(float)
    if not inst.integer:
        found = linprog(costs, A_ub=-inst.sign * inst.a.astype(float),
                        b_ub=-inst.sign * inst.b.astype(float),
                        bounds=[(0, inst.upper)] * len(inst.c))
        return float(found.fun), None
    lower, upper = (inst.b, np.inf) if inst.sign > 0 else (-np.inf, inst.b)
    found = milp(costs, constraints=LinearConstraint(inst.a.astype(float), lower, upper),
                 integrality=np.ones(len(inst.c)), bounds=Bounds(0, inst.upper),
                 options={"mip_rel_gap": 0.0})
    if found.x is None:  # scipy's HiGHS found no point (it happens on pack-frac)
        return float("inf"), None
    return float(found.fun), found.x.tolist()


def plain_scip(inst: Instance) -> tuple[str, float | None, list[float]]:
    """PySCIPOpt on the same rows, none of coplug's checks: status, objective, point."""
    scip = Model()
    scip.hideOutput()
    kind = "I" if inst.integer else "C"
    x = [scip.addVar(vtype=kind, lb=0, ub=inst.upper) for _ in inst.c]
    for row, side in zip(inst.a, inst.b, strict=True):
        body = quicksum(float(a) * v for a, v in zip(row, x, strict=True))
        scip.addCons(body >= float(side) if inst.sign > 0 else body <= float(side))
    scip.setObjective(quicksum(float(c) * v for c, v in zip(inst.c, x, strict=True)),
                      "minimize" if inst.sign > 0 else "maximize")
    try:
        scip.optimize()
    except Exception:  # SCIP's "error in LP solver"
        return "error", None, []
    if scip.getNSols() == 0:
        return scip.getStatus(), None, []
    return scip.getStatus(), scip.getObjVal(), [scip.getVal(v) for v in x]


def _written(number: float) -> int | float:
    """A matrix entry as the Pyomo model writes it."""
    return int(number) if float(number).is_integer() else float(number)


def pyomo_model(inst: Instance) -> pyo.ConcreteModel:
    """The same model in Pyomo, for coplug."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(len(inst.c)), domain=pyo.Integers if inst.integer else pyo.Reals,
                  bounds=(0, inst.upper))

    def row(m: pyo.ConcreteModel, i: int) -> object:
        body = sum(_written(inst.a[i, j]) * m.x[j] for j in range(len(inst.c)) if inst.a[i, j])
        return body >= int(inst.b[i]) if inst.sign > 0 else body <= int(inst.b[i])

    m.row = pyo.Constraint(range(len(inst.b)), rule=row)
    m.o = pyo.Objective(expr=sum(int(c) * m.x[j] for j, c in enumerate(inst.c)),
                        sense=pyo.minimize if inst.sign > 0 else pyo.maximize)
    return m


def coplug_solve(inst: Instance, solver: str) -> tuple[str, float | None, list[float]]:
    """coplug's `solve` (`scip-undivided`, `highs-undivided`: with `row_scaling` off):
    status, objective, point."""
    m = pyomo_model(inst)
    divide = row_scaling.SCALE_COEF
    if solver.endswith("-undivided"):
        solver, row_scaling.SCALE_COEF = solver.removesuffix("-undivided"), float("inf")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = solve(m, solver=solver, time_limit=60)
    except CoplugError:
        return "error", None, []
    finally:
        row_scaling.SCALE_COEF = divide
    status = "optimal" if result.status is Status.OPTIMAL else result.status.value
    point = [m.x[j].value for j in range(len(inst.c))] if result.has_solution else []
    return status, result.objective, point


def verdict(inst: Instance, answer: tuple[str, float | None, list[float]], best: float) -> str:
    """right / wrong / error / other for one solver's answer (`best`: minimization sense)."""
    status, objective, point = answer
    if status == "error":
        return "error"
    if status != "optimal" or objective is None:
        return "other"
    if not inst.integer:
        return "right" if abs(inst.sign * objective - best) <= 1e-6 * max(1.0, abs(best)) \
            else "wrong"
    if not meets_rows(inst, point) or inst.sign * objective > best + 0.5:
        return "wrong"
    return "right"


def run_case(kind: str, exponent: int, seed: int) -> Row:
    """Solve one model three ways and judge each against the best exactly feasible point."""
    inst = instance(kind, exponent, seed)
    row = Row(f"{kind} a~1e{exponent}")
    answers = {}
    for solver in SOLVERS:
        start = time.perf_counter()
        answers[solver] = plain_scip(inst) if solver == "pyscipopt" else coplug_solve(inst,
                                                                                      solver)
        row.seconds[solver] = time.perf_counter() - start
    best, point = reference(inst)
    if inst.integer:
        candidates = [best] if point is not None and meets_rows(inst, point) else []
        candidates += [inst.sign * obj for _, obj, x in answers.values()
                       if obj is not None and meets_rows(inst, x)]
        best = min(candidates, default=float("inf"))
    row.verdicts = {solver: verdict(inst, answer, best) for solver, answer in answers.items()}
    return row


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table per cell: wrong (and error) verdicts and seconds per solver."""
    lines = ["| models | n | wrong: pyscipopt | scip undivided | scip | highs undivided | "
             "highs | pyscipopt s | scip undivided s | scip s | highs undivided s | highs s |",
             "| --- " * 12 + "|"]
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.cell, []).append(row)
    for cell, group in groups.items():
        wrong = [_count(group, solver) for solver in SOLVERS]
        seconds = [sum(r.seconds[s] for r in group) for s in SOLVERS]
        lines.append(f"| {cell} | {len(group)} | " + " | ".join(wrong) + " | "
                     + " | ".join(f"{s:.2f}" for s in seconds) + " |")
    return lines


def _count(rows: Sequence[Row], solver: str) -> str:
    """'wrong' count, with errors in brackets where there are any."""
    wrong = sum(r.verdicts[solver] == "wrong" for r in rows)
    errors = sum(r.verdicts[solver] == "error" for r in rows)
    return f"{wrong}" + (f" (+{errors} error)" if errors else "")


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    if not rows:
        return f"SUMMARY huge_rows: no case finished; {wall:.0f} s wall"
    counts = ", ".join(f"{solver} {sum(r.verdicts[solver] in ('wrong', 'error') for r in rows)}"
                       f"/{len(rows)}" for solver in SOLVERS)
    ratios = [sum(r.seconds[s] for r in rows) / max(sum(r.seconds[f"{s}-undivided"]
                                                        for r in rows), 1e-9)
              for s in ("scip", "highs")]
    return (f"SUMMARY huge_rows: wrong or error {counts}; divided / undivided time scip "
            f"{ratios[0]:.2f}x, highs {ratios[1]:.2f}x; {wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"({','.join(KINDS)})")
    parser.add_argument("--exponents", type=ints_at_least(1, 16), default=[6, 8, 10],
                        help="coefficients near 10**e (6,8,10)")
    parser.add_argument("--seeds", type=int, default=20, help="models per cell (20)")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or any(k not in KINDS for k in kinds):
        parser.error(f"--kinds takes some of {','.join(KINDS)}, got {args.kinds!r}")
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    cases = [(k, e, s) for k in kinds for e in args.exponents for s in range(args.seeds)]
    start, rows, interrupted = time.perf_counter(), [], False
    try:
        for kind, exponent, seed in tqdm(cases, desc="huge_rows", file=sys.stderr):
            rows.append(run_case(kind, exponent, seed))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else 0


if __name__ == "__main__":
    exit_on_interrupt(main)
