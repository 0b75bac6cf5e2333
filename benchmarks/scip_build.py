"""Building Pyomo models in SCIP: coplug's linear-time sums against Pyomo's own handler.

    python benchmarks/scip_build.py                    # six formulations (about 2 min)
    python benchmarks/scip_build.py --cases knapsack=20000,tsp=40

Each case builds one registered formulation (`coplug solve NAME --size N`) and hands it to
Pyomo's `scip_persistent` twice in the same process: once with Pyomo's sum handler
(Python's `sum`, which copies the growing SCIP expression at every term) and once with
coplug's (`quicksum`, in place). Both SCIP models are written out and must be identical,
byte for byte. Seconds are wall seconds of `set_instance`. The last line is the summary.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyomo.environ as pyo
from tqdm import tqdm

from coplug.formulations import registry
from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import exit_on_interrupt
from coplug.plugins.scip_walker import fix_scip_walker, pyomo_sum_handler

DEFAULT_CASES = ("knapsack=20000,knapsack=50000,mknapsack=10000,openpit=20000,"
                 "assignment=200,tsp=60,fair_clustering=40")


@dataclass
class Row:
    """One formulation at one size: build seconds both ways and whether the models agree."""

    name: str
    size: int
    nonzeros: int
    pyomo: float
    coplug: float
    identical: bool


def cases(text: str) -> list[tuple[str, int]]:
    """`name=size,...` pairs of registered formulations."""
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, size = item.partition("=")
        if name not in registry.names() or not size.isdigit() or int(size) < 1:
            raise argparse.ArgumentTypeError(
                f"{item!r}: need NAME=SIZE with NAME one of {', '.join(registry.names())}")
        pairs.append((name, int(size)))
    if not pairs:
        raise argparse.ArgumentTypeError("no cases given")
    return pairs


def build_seconds(model: pyo.Block, path: Path) -> float:
    """Wall seconds of building `model` in SCIP; the SCIP model is written to `path`."""
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    start = time.perf_counter()
    build_instance(opt, model, "SCIP")
    seconds = time.perf_counter() - start
    opt._solver_model.writeProblem(str(path), verbose=False)
    return seconds


def run_case(name: str, size: int, folder: Path) -> Row:
    """Both builds of one formulation, Pyomo's first."""
    model = registry.build(name, size, seed=0)
    nonzeros = sum(len(list(pyo.expr.identify_variables(con.body)))
                   for con in model.component_data_objects(pyo.Constraint, active=True))
    fix_scip_walker()
    with pyomo_sum_handler():
        slow = build_seconds(model, folder / "pyomo.cip")
    fast = build_seconds(model, folder / "coplug.cip")
    same = (folder / "pyomo.cip").read_bytes() == (folder / "coplug.cip").read_bytes()
    return Row(name, size, nonzeros, slow, fast, same)


def table(rows: Sequence[Row]) -> list[str]:
    """Markdown table of the rows."""
    lines = ["| formulation | size | nonzeros | Pyomo sum s | coplug s | Pyomo/coplug | same |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r.name} | {r.size} | {r.nonzeros} | {r.pyomo:.2f} | {r.coplug:.2f} | "
                     f"{r.pyomo / r.coplug:.2f} | {'yes' if r.identical else 'NO'} |")
    return lines


def summary(rows: Sequence[Row], wall: float) -> str:
    """The one SUMMARY line."""
    if not rows:
        return f"SUMMARY scip_build: no case finished; {wall:.0f} s wall"
    ratios = [r.pyomo / r.coplug for r in rows]
    same = sum(r.identical for r in rows)
    return (f"SUMMARY scip_build: Pyomo/coplug build time median {statistics.median(ratios):.2f}x "
            f"(max {max(ratios):.2f}x); identical SCIP models {same}/{len(rows)}; "
            f"{wall:.0f} s wall")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every case, print the table and the SUMMARY line; 130 when interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=cases, default=cases(DEFAULT_CASES),
                        help=f"NAME=SIZE,... (default {DEFAULT_CASES})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows: list[Row] = []
    interrupted = False
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for name, size in tqdm(args.cases, desc="scip_build", file=sys.stderr):
                rows.append(run_case(name, size, Path(tmp)))
        except KeyboardInterrupt:
            print("\ninterrupted: the table covers the cases finished so far", file=sys.stderr)
            interrupted = True
        except InputError as exc:
            print(f"scip_build: error: {exc}", file=sys.stderr)
            return 2
    print("\n".join(table(rows)))
    print(summary(rows, time.perf_counter() - start))
    return 130 if interrupted else (0 if all(r.identical for r in rows) else 1)


if __name__ == "__main__":
    exit_on_interrupt(main)
