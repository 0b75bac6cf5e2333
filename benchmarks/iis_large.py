"""explain_infeasible on large infeasible LPs: HiGHS's Farkas certificate first against SCIP's
IIS finder alone, side by side.

    python benchmarks/iis_large.py                        # 5,000 / 10,000 / 20,000 rows (~3 min)
    python benchmarks/iis_large.py --sizes 2500 --chain 10

Each model is `--chain` + 1 rows that cannot hold together (z[k+1] >= z[k] + 1 for k <
chain, z[chain] <= chain - 0.5, z >= 0) inside a feasible LP of two-term rows, 2 per item.
`farkas` is `explain_infeasible` as shipped; `scip-iis` the same with the certificate
turned off, so SCIP's IIS finder proposes the subsystem (what it did before); the `file`
columns do the same with `explain_infeasible_file` on the model written as an .mps file.
Each must name the chain's rows and z[0]'s lower bound, irreducible. `solve s` is one plain
SCIP solve of the model, for scale. Seconds are wall time; the last line is the summary.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pyomo.environ as pyo
from tqdm import tqdm

from coplug.plugins import explain_infeasible, iis, iis_file, solve
from coplug.plugins.argtypes import ints_at_least, positive_int
from coplug.plugins.iis_file import FileInfeasibleSubsystem, explain_infeasible_file
from coplug.plugins.interrupts import exit_on_interrupt


@dataclass
class Row:
    """One model: both routes' times and whether each found exactly the chain."""

    items: int
    rows: int
    solve: float
    farkas: float
    scip: float
    farkas_exact: bool
    scip_exact: bool
    file_farkas: float
    file_scip: float
    file_exact: bool


def chained(items: int, chain: int) -> pyo.ConcreteModel:
    """A feasible LP of 2 * items two-term rows plus an infeasible chain of `chain` + 1 rows."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, items - 1)
    m.x, m.y = pyo.Var(m.I, bounds=(0, 10)), pyo.Var(m.I, bounds=(0, 10))
    m.cap = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + 2 * m.y[i] <= 5 + i % 3)
    m.gap = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] - m.y[i] >= -1)
    m.z = pyo.Var(range(chain + 1), bounds=(0, None))
    m.chain = pyo.Constraint(range(chain), rule=lambda m, k: m.z[k + 1] >= m.z[k] + 1)
    m.top = pyo.Constraint(expr=m.z[chain] <= chain - 0.5)
    m.value = pyo.Objective(expr=sum(m.x[i] + m.y[i] for i in m.I), sense=pyo.maximize)
    return m


def exact(found: iis.InfeasibleSubsystem, m: pyo.ConcreteModel, chain: int) -> bool:
    """Whether the answer is the chain's rows and z[0] >= 0, irreducible."""
    names = [c.name for c in found.constraints]
    bounds = [(id(var), side) for var, side in found.bounds]  # == on variables builds rows
    return (found.irreducible is True and bounds == [(id(m.z[0]), "lower")]
            and names == [f"chain[{k}]" for k in range(chain)] + ["top"])


def exact_file(found: FileInfeasibleSubsystem, chain: int) -> bool:
    """Whether a file's answer is the chain's rows and z(0) >= 0, irreducible."""
    return (found.irreducible is True and len(found.rows) == chain + 1
            and found.bounds == [("z(0)", "lower", 0.0)])


def timed(explain: Callable[[], Any], without_farkas: Any | None) -> tuple[float, Any]:
    """Seconds of explain() and its answer; with the certificate patched out when given."""
    start = time.perf_counter()
    with without_farkas if without_farkas is not None else contextlib.nullcontext():
        found = explain()
    return time.perf_counter() - start, found


def run_case(items: int, chain: int, folder: Path) -> Row:
    """One model, solved plainly and explained both ways, as a model and as an .mps file."""
    m = chained(items, chain)
    start = time.perf_counter()
    solve(m, solver="scip")
    plain = time.perf_counter() - start
    model_off = mock.patch.object(iis, "_farkas_subsystem", lambda model, time_limit: None)
    farkas, by_farkas = timed(lambda: explain_infeasible(m), None)
    scip, by_scip = timed(lambda: explain_infeasible(m), model_off)
    path = folder / f"chain{items}.mps"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    file_off = mock.patch.object(iis_file._Highs, "farkas_members", lambda self, limit: None)
    file_farkas, file_by_farkas = timed(lambda: explain_infeasible_file(path), None)
    file_scip, file_by_scip = timed(lambda: explain_infeasible_file(path), file_off)
    return Row(items, 2 * items + chain + 1, plain, farkas, scip, exact(by_farkas, m, chain),
               exact(by_scip, m, chain), file_farkas, file_scip,
               exact_file(file_by_farkas, chain) and exact_file(file_by_scip, chain))


def table(rows: Sequence[Row]) -> list[str]:
    """The markdown table of every model."""
    lines = ["| rows | solve s | farkas s | scip-iis s | scip-iis/farkas | exact (farkas, scip) "
             "| file farkas s | file scip-iis s | file exact |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.rows:,} | {r.solve:.2f} | {r.farkas:.2f} | {r.scip:.2f} | "
                     f"{r.scip / r.farkas:.1f} | {'yes' if r.farkas_exact else 'NO'}, "
                     f"{'yes' if r.scip_exact else 'NO'} | {r.file_farkas:.2f} | "
                     f"{r.file_scip:.2f} | {'yes' if r.file_exact else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one-line summary."""
    if not rows:
        return f"SUMMARY iis_large: no model finished; {wall:.0f} s wall"
    ratios = [r.scip / r.farkas for r in rows]
    exact_count = sum(r.farkas_exact for r in rows)
    files = statistics.median(r.file_scip / r.file_farkas for r in rows)
    return (f"SUMMARY iis_large: scip-iis/farkas median {statistics.median(ratios):.1f}x "
            f"(max {max(ratios):.1f}x), files {files:.1f}x; farkas exact "
            f"{exact_count}/{len(rows)}, scip-iis exact {sum(r.scip_exact for r in rows)}/"
            f"{len(rows)}, files exact {sum(r.file_exact for r in rows)}/{len(rows)}; "
            f"{wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every size, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints_at_least(1), default=[2500, 5000, 10000],
                        help="items, two rows each (2500,5000,10000)")
    parser.add_argument("--chain", type=positive_int, default=30,
                        help="rows in the infeasible chain, less one (30)")
    args = parser.parse_args(argv)
    chain = args.chain
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    try:
        with tempfile.TemporaryDirectory() as folder:
            for items in tqdm(args.sizes, desc="iis_large", file=sys.stderr):
                rows.append(run_case(items, chain, Path(folder)))
    except KeyboardInterrupt:
        print("\ninterrupted: the table covers the models finished so far", file=sys.stderr)
        interrupted = True
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.farkas_exact and r.file_exact for r in rows)
                                    else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
