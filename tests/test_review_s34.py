"""Checks added by the thirty-fourth session's review: each pins a defect it found."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.formulations.mip_families import build_family
from coplug.plugins import InputError, LazyConstraints, OnSolution, SolutionPool, solve
from coplug.plugins.lap.heuristic import LapHeuristic
from coplug.plugins.user_heuristic import UserHeuristic


def _knapsack() -> pyo.ConcreteModel:
    return build_family("mknapsack", 10, 3)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_one_plugin_listed_twice_is_refused(solver: str) -> None:
    """HiGHS ran it twice (the pool's finish emptied what the first had kept)."""
    pool = SolutionPool(3)
    with pytest.raises(InputError, match="same SolutionPool plugin is listed twice"):
        solve(_knapsack(), solver=solver, plugins=[pool, pool])


def test_two_pools_of_one_name_are_refused_by_highs() -> None:
    """HiGHS kept one pool's statistics of the two (they are kept by name)."""
    with pytest.raises(InputError, match="two SolutionPool plugins .* share the name"):
        solve(_knapsack(), solver="highs", plugins=[SolutionPool(3), SolutionPool(4)])


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_plugins_of_two_kinds_may_not_share_a_name(solver: str) -> None:
    """SCIP solved with both and reported one plugin's statistics under the shared name."""
    plugins = [SolutionPool(3, name="stats"), OnSolution(lambda sol, obj: None, name="stats")]
    with pytest.raises(InputError, match="SolutionPool and OnSolution plugins of one solve "
                                         "share the name 'stats'"):
        solve(_knapsack(), solver=solver, plugins=plugins)
    lazy = LazyConstraints(lambda sol: [], name="stats")
    with pytest.raises(InputError, match="share the name 'stats'"):
        solve(_knapsack(), plugins=[lazy, OnSolution(lambda sol, obj: None, name="stats")])


def test_a_user_heuristic_named_as_the_lap_heuristic_is_named_up_front() -> None:
    """SCIP refused the include mid-solve, and the message asked for one LapHeuristic."""
    heuristic = UserHeuristic(lambda sol: None, name="lap_heuristic")
    with pytest.raises(InputError, match="UserHeuristic and LapHeuristic plugins"):
        solve(_knapsack(), plugins=[heuristic, LapHeuristic()])


def test_distinct_names_still_keep_each_plugins_statistics() -> None:
    model = _knapsack()
    result = solve(model, solver="highs", plugins=[SolutionPool(3, name="a"),
                                                   SolutionPool(4, name="b")])
    assert set(result.plugin_stats) >= {"a", "b"}
    assert result.plugin_stats["a"]["kept"] <= 3 and result.plugin_stats["b"]["kept"] <= 4
