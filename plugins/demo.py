"""`coplug demo`: the showcase, run end to end on embedded defaults (no network, no server).

Each capability contributes a section: a function `section() -> None` listed in
`DEMO_SECTIONS` as "module:function"; sections print their own short report.
"""

from __future__ import annotations

import argparse
import importlib
import time

from coplug.plugins.errors import InputError

DEMO_SECTIONS: list[str] = [
    "coplug.plugins.demo:knapsack_section",
    "coplug.formulations.qubo_cli:qubo_section",
    "coplug.plugins.lap.demo:lap_section",
    "coplug.formulations.bbo.demo:evolved_benchmark_section",
    "coplug.plugins.pmvb_cli:pmvb_section",
    "coplug.formulations.fair_cli:fair_clustering_section",
    "coplug.formulations.games_cli:games_section",
]


def knapsack_section() -> None:
    """A 60-item knapsack built as a Pyomo model, solved by SCIP through the bridge."""
    from coplug.formulations.knapsack import knapsack_mip, random_knapsack
    from coplug.plugins.bridge import solve
    from coplug.plugins.cli import print_result

    instance = random_knapsack(60, seed=7, kind="strongly_correlated")
    model = knapsack_mip(instance)
    result = solve(model, solver="scip")
    print(f"knapsack n={instance.n} (strongly correlated), Pyomo model -> SCIP")
    print_result(result)
    chosen = [i for i in model.I if model.x[i].value > 0.5]
    assert instance.is_feasible([1 if i in chosen else 0 for i in range(instance.n)])
    _relaxation_prices(model, instance)


def _relaxation_prices(model, instance) -> None:
    """The LP relaxation with `m.dual` declared: the capacity's shadow price is the value per
    unit of weight of the item the LP takes fractionally (Dantzig's bound)."""
    import numpy as np
    import pyomo.environ as pyo

    from coplug.plugins.bridge import solve

    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(model, solver="scip")
    price = model.dual[model.capacity]
    ratios = np.asarray(instance.values, float) / np.asarray(instance.weights, float)
    fractional = [i for i in model.I if 1e-6 < model.x[i].value < 1 - 1e-6]
    assert len(fractional) == 1, "the demo instance's LP optimum takes one item fractionally"
    ratio = ratios[fractional[0]]
    print(f"LP relaxation bound {result.objective:.1f}; capacity shadow price {price:.4f} "
          f"(value per weight of the fractional item: {ratio:.4f})")
    assert abs(price - ratio) < 1e-6 * max(1.0, price)


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `demo` command."""
    p = subparsers.add_parser("demo", help="run the showcase end to end (offline)")
    p.add_argument("--only", default=None, help="run only sections whose name contains this")
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    """Run every demo section in order (or those `--only` names), timing each."""
    names = [spec.split(":")[1] for spec in DEMO_SECTIONS]
    if args.only is not None and not any(args.only in name for name in names):
        shown = ", ".join(name.replace("_section", "") for name in names)
        raise InputError(f"--only {args.only!r} matches no demo section; sections: {shown}")
    for spec in DEMO_SECTIONS:
        module_name, func_name = spec.split(":")
        if args.only and args.only not in func_name:
            continue
        print(f"\n== {func_name.replace('_section', '').replace('_', ' ')} ==")
        start = time.perf_counter()
        getattr(importlib.import_module(module_name), func_name)()
        print(f"-- {time.perf_counter() - start:.2f} s")
    return 0
