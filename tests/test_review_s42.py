"""Session 42: error messages that named the wrong argument, position or cause."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.formulations.bbo import ProgramError, parse
from coplug.formulations.fair_metrics import balance, proportion_deviation
from coplug.formulations.game_solvers import certify
from coplug.formulations.games import cournot, example, network_flow
from coplug.plugins import InputError, explain_infeasible_file, race
from coplug.plugins.files import solve_file
from coplug.plugins.lap import ranked_assignments, ranked_matchings, solve_lap


@pytest.mark.parametrize("metric", [balance, proportion_deviation])
def test_labels_and_groups_of_different_lengths_name_both(metric) -> None:
    """groups one entry short blamed the right labels, calling the node count 5."""
    with pytest.raises(InputError, match="got 6 labels and 5 groups"):
        metric(np.array([0, 1, 0, 1, 0, 1]), np.array([0, 0, 1, 1, 0]))


@pytest.mark.parametrize("solver", ["highs", None])
def test_an_lp_file_highs_cannot_parse_quotes_its_reader(tmp_path: Path, solver) -> None:
    """explain_infeasible_file guessed nonlinear rows and sent the user to Pyomo, which
    reads no LP files; the reader's own words and line come back instead."""
    path = tmp_path / "bad.lp"
    path.write_text("Minimize\n obj: x + y\nSubject To\n c1: x + y >= 1\n c2: x + z >= \nEnd\n")
    call = (lambda: solve_file(path, solver="highs")) if solver else (
        lambda: explain_infeasible_file(path))
    with pytest.raises(InputError, match=r"HiGHS cannot read bad.lp \(line 6\): expected a "
                                         r"number"):
        call()


def test_certify_with_the_lap_path_names_the_solver() -> None:
    with pytest.raises(InputError, match="not 'lap'"):
        certify(example("cournot"), solver="lap")


def test_a_demand_at_an_unknown_node_names_the_node() -> None:
    with pytest.raises(InputError, match="names node 'zz', which the network does not hold"):
        network_flow(demands=[("zz", "t", 1.0)])


@pytest.mark.parametrize("kwargs, message", [
    ({"slope": -1}, "cournot slope must be a finite number > 0, got -1"),
    ({"slope": float("nan")}, "cournot slope must be a finite number > 0, got nan"),
    ({"capacity": 0}, "cournot capacity must be a finite number > 0, got 0"),
    ({"costs": [1, -2, 1]}, r"cournot costs must be finite numbers >= 0, got -2.0 for firm 1"),
    ({"costs": [1, 1, float("inf")]}, r"got inf for firm 2"),
    ({"intercept": float("nan")}, "cournot intercept must be a finite number, got nan"),
])
def test_cournot_names_the_one_bad_argument(kwargs, message) -> None:
    """Each was "cournot needs n_firms >= 1, slope > 0, capacity > 0 and costs >= 0"."""
    with pytest.raises(InputError, match=message):
        cournot(**kwargs)


def test_a_negative_index_is_out_of_range_not_a_non_literal() -> None:
    with pytest.raises(ProgramError, match=r"x\[-1\] is out of range for dim=2"):
        parse("x[0] + x[-1]", 2)
    parse("x[0] + x[1]", 2)  # in range: read


def test_a_one_dimensional_adjacency_is_quoted_as_given() -> None:
    from coplug.formulations.fair_graphs import as_adjacency

    with pytest.raises(InputError, match=r"square 2-D matrix, got shape \(12,\)"):
        as_adjacency(np.ones(12))


@pytest.mark.parametrize("kwargs, message", [
    ({"row_cost": [0, np.nan, 0]}, r"row_cost\[1\] is nan"),
    ({"row_cost": [0, np.inf, 0], "maximize": True}, r"row_cost\[1\] is inf"),
    ({"col_cost": np.inf}, "col_cost is inf"),
])
def test_a_non_finite_unmatched_cost_is_placed(kwargs, message) -> None:
    with pytest.raises(InputError, match=message):
        ranked_matchings(np.eye(3), k=2, **kwargs)


@pytest.mark.parametrize("cost", [None, "abc", 5, {"a": 1}])
def test_a_cost_that_is_no_array_is_named_by_type(cost) -> None:
    """'abc' and 5 were "must be 2-D, got shape ()"; None named solve_lap from
    ranked_assignments."""
    for call in (solve_lap, ranked_assignments):
        with pytest.raises(InputError, match=f"must be a 2-D array of numbers, got "
                                             f"{type(cost).__name__}"):
            call(cost)


def test_an_empty_race_says_empty() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x)
    with pytest.raises(InputError, match="solvers is empty"):
        race(m, solvers=[])
