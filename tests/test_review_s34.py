"""Checks added by the thirty-fourth session's review: each pins a defect it found."""

from __future__ import annotations

import numpy as np
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


@pytest.mark.parametrize("kind", [np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("generator", ["geometric", "transport", "gated"])
def test_assignment_generators_read_small_numpy_sizes_as_ints(kind: type, generator: str) -> None:
    """A uint8 n wrapped in (n + m) // 4 (another road graph) and made noise / sqrt(n) a
    float16 (costs off by 1e-5)."""
    from coplug.formulations import assignment

    make = getattr(assignment, generator)
    plain, small = make(200, seed=7), make(kind(200), seed=7)
    plain = plain.toarray() if hasattr(plain, "toarray") else plain
    small = small.toarray() if hasattr(small, "toarray") else small
    assert np.array_equal(plain, small)
    if generator == "transport":
        assert np.array_equal(assignment.transport(100, seed=7, m=200),
                              assignment.transport(100, seed=7, m=kind(200)))


def test_knapsack_instance_keeps_its_own_values() -> None:
    """A float64 values array was kept by reference: NaN written later got past the checks."""
    from coplug.formulations.knapsack import KnapsackInstance

    values = np.array([4.0, 5.0, 6.0, 7.0])
    instance = KnapsackInstance(values, np.array([1, 2, 3, 4]), 5)
    values[2], values[3] = np.nan, -8.0
    assert np.array_equal(instance.values, [4.0, 5.0, 6.0, 7.0])
