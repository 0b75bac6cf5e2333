"""The `coplug` command line: a thin argparse front over the library.

Each capability adds its commands from its own module (a `register(subparsers)`
function listed in `COMMAND_MODULES`), so this file stays generic.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

from coplug.plugins.errors import CoplugError
from coplug.plugins.results import Result

# Modules that contribute subcommands; each defines register(subparsers).
COMMAND_MODULES: list[str] = [
    "coplug.plugins.cli",
    "coplug.plugins.lap.cli",
    "coplug.plugins.demo",
    "coplug.formulations.bbo.cli",
    "coplug.plugins.pmvb_cli",
    "coplug.formulations.fair_cli",
    "coplug.formulations.games_cli",
]


def register(subparsers: argparse._SubParsersAction) -> None:
    """The core `solve` command."""
    p = subparsers.add_parser(
        "solve", help="solve an MPS/LP file or a registered formulation (e.g. knapsack)"
    )
    p.add_argument("target", help="an .mps/.lp file, or a formulation name (see --list)")
    p.add_argument("--size", type=int, default=30, help="instance size for a formulation name")
    p.add_argument("--seed", type=int, default=0, help="instance seed for a formulation name")
    p.add_argument("--solver", default="scip", help="scip | highs (| lap for assignments)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_cmd_solve)


def _cmd_solve(args: argparse.Namespace) -> int:
    """Solve a file or a named formulation and print the result."""
    from pathlib import Path

    if Path(args.target).suffix or Path(args.target).exists():
        from coplug.plugins.files import solve_file

        result = solve_file(args.target, solver=args.solver, time_limit=args.time_limit)
    else:
        from coplug.formulations import registry
        from coplug.plugins.bridge import solve

        model = registry.build(args.target, args.size, seed=args.seed)
        result = solve(model, solver=args.solver, time_limit=args.time_limit)
    print_result(result, as_json=args.json)
    return 0


def print_result(result: Result, as_json: bool = False) -> None:
    """Print a result as one JSON object or as aligned text lines."""
    if as_json:
        print(json.dumps(result.to_dict()))
        return
    gap = result.gap
    print(f"status     {result.status.value}")
    print(f"objective  {result.objective}")
    print(f"bound      {result.bound}")
    print(f"gap        {gap if gap is None else f'{gap:.2e}'}")
    print(f"nodes      {result.nodes}")
    print(f"time       {result.time:.3f} s  ({result.solver})")
    for name, stats in result.plugin_stats.items():
        print(f"plugin     {name}: {stats}")


def build_parser() -> argparse.ArgumentParser:
    """The full parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="coplug", description="Solver plugins and safe formulations for Pyomo + SCIP/HiGHS"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run one command; CoplugError prints one line and exits 2."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CoplugError as exc:
        print(f"coplug: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coplug: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
