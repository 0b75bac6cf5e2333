"""`coplug game`: solve an example constrained game by barrier ascent and certify it with SCIP;
and its demo section."""

from __future__ import annotations

import argparse
import time

from coplug.formulations.game_solvers import (
    AscentResult,
    Certificate,
    barrier_gradient_ascent,
    certify,
    check_certifier,
)
from coplug.formulations.games import EXAMPLES, Game, example
from coplug.plugins.argtypes import positive_float, positive_int
from coplug.plugins.bar import progress_bar

# Solvers `certify` can use: SCIP for any utility, HiGHS for concave quadratic ones (the
# lap backend takes assignment models only), checked before the ascent runs.
CERTIFIERS = ("scip", "highs")


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `game` command."""
    p = subparsers.add_parser(
        "game", help="constrained concave game: log-barrier ascent + SCIP-certified NE gap"
    )
    p.add_argument("name", choices=sorted(EXAMPLES), help="example game")
    p.add_argument("--mu", type=positive_float, default=1e-5, help="barrier weight (fixed)")
    p.add_argument("--max-iter", type=positive_int, default=20_000)
    p.add_argument("--update", default="simultaneous", choices=("simultaneous", "sequential"))
    p.add_argument("--solver", default="scip", choices=CERTIFIERS,
                   help="solver for the certifier (highs: quadratic utilities only)")
    p.set_defaults(func=_cmd_game)


def _cmd_game(args: argparse.Namespace) -> int:
    """Run the ascent on one example and print the profile and the certificate."""
    game = example(args.name)
    report(game, mu=args.mu, max_iter=args.max_iter, update=args.update, solver=args.solver)
    return 0


def report(game: Game, solver: str = "scip", **ascent: object) -> tuple[AscentResult,
                                                                          Certificate]:
    """Run, certify and print one game in a few lines; on a terminal a bar counts the
    ascent's iterations (several seconds with nothing shown before at the defaults)."""
    check_certifier(game, solver)
    start = time.perf_counter()
    with progress_bar(total=ascent.get("max_iter"), desc="barrier ascent",
                      unit="it", disable=None, leave=False) as bar:
        result = barrier_gradient_ascent(game, callback=lambda *_: bar.update(), **ascent)
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    certificate = certify(game, solver=solver)
    certify_time = time.perf_counter() - start
    print(f"{game.model.name}: {len(game.players)} players, {result.iterations} iterations "
          f"in {elapsed:.2f} s (mu={result.mu:.0e}, stopped by "
          f"{'tolerance' if result.converged else 'iteration limit'}), "
          f"smallest slack over all iterates {result.min_slack:.2e}")
    for player in game.players:
        values = ", ".join(f"{v:.5f}" for v in result.profile[player])
        print(f"  {player:<10} x=[{values}]  utility {certificate.utilities[player]:.6f}  "
              f"gap <= {certificate.gaps[player]:.2e} ({certificate.statuses[player]})")
    print(f"  certified epsilon {certificate.epsilon:.2e} ({solver}, {certify_time:.2f} s)")
    return result, certificate


def games_section() -> None:
    """The three example games, each solved by barrier ascent and certified by SCIP."""
    from coplug.formulations.games import cournot_equilibrium

    game = example("cournot")
    result, _ = report(game, mu=1e-6)
    print(f"  closed-form symmetric equilibrium C/n = {cournot_equilibrium(3, 10, 1, 1, 5):.5f}")
    report(example("network_flow"), mu=1e-5)
    report(example("resource_allocation"), mu=2e-5, max_iter=5000)
