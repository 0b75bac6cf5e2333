"""Review s19: Pyomo formulations and relaxed-QUBO local solvers. Each test is an input that
used to give a silently wrong answer or a traceback from deep inside numpy/Pyomo."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations import checks
from coplug.formulations.openpit import BlockModel, openpit_qubo_safe
from coplug.formulations.qubo import QUBO
from coplug.formulations.qubo_solvers import certify
from coplug.formulations.tsp import load_tsplib, random_asymmetric, random_euclidean, tsp_qubo_safe
from coplug.plugins.errors import InputError


def _qubo(**overrides: object) -> QUBO:
    fields: dict[str, object] = {
        "Q": -np.eye(2), "c": np.ones(2), "constant": 0.0, "decode": lambda z: z,
        "is_feasible": lambda x: True, "objective": lambda x: 0.0,
    }
    fields.update(overrides)
    return QUBO(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("build", [
    lambda: openpit_qubo_safe(BlockModel(np.full((2, 3), 1e307))),
    lambda: tsp_qubo_safe(np.full((4, 4), 1e307)),
])
def test_qubo_whose_energies_overflow_is_refused(build) -> None:
    # Q and c were finite, but every energy of a full pit / tour came out inf or NaN, so the
    # optimal pit was certified "infeasible" and minimize reported 0% without an error.
    with pytest.raises(InputError, match="overflow"):
        build()


def test_accepted_qubo_energies_are_finite_on_every_binary_point() -> None:
    model = BlockModel(np.full((2, 3), 1e305))
    q = openpit_qubo_safe(model)
    Z = np.array(list(itertools.product([0, 1], repeat=q.n)), dtype=float)
    assert np.isfinite(q.energy(Z)).all()
    assert certify(q, np.ones(q.n)).objective == pytest.approx(model.value(np.ones(q.n)))


def test_complex_qubo_data_is_refused_not_truncated() -> None:
    with pytest.raises(InputError, match="Q"):
        _qubo(Q=np.array([[-1 + 5j, 0], [0, -1]]))
    with pytest.raises(InputError, match="A"):
        _qubo(A=np.array([[1j, 1]]), weights=np.ones(1))


def test_penalty_weights_and_rows_come_together() -> None:
    with pytest.raises(InputError, match="weights need penalty rows A"):
        _qubo(weights=np.ones(1))  # dropped silently before: the penalty vanished
    with pytest.raises(InputError, match="need weights"):
        _qubo(A=np.array([[1.0, 1.0]]))
    q = _qubo(A=np.array([[1.0, 1.0]]), weights=np.full(1, 2.0))
    assert q.energy(np.ones((1, 2)))[0] == pytest.approx(_qubo().energy(np.ones((1, 2)))[0] + 8)


@pytest.mark.parametrize("sense", [0, 5, -2, 0.5, True])
def test_qubo_sense_must_be_plus_or_minus_one(sense: object) -> None:
    # sense 0 made `certify` treat only zero-energy points as penalty-free
    with pytest.raises(InputError, match="sense"):
        _qubo(sense=sense)


def test_certify_with_sense_minus_one_still_works() -> None:
    q = _qubo(Q=np.zeros((2, 2)), c=-np.ones(2), sense=-1, objective=lambda x: float(sum(x)))
    assert certify(q, np.ones(2)).objective == 2.0


@pytest.mark.parametrize("tol", [-1.0, 0.0, float("nan"), float("inf"), 0.5, 0.6, "1e-6"])
def test_certify_refuses_a_bad_tolerance_naming_it(tol: object) -> None:
    # tol = 0.6 certified the fractional point (0.5, 0.5) as binary and feasible
    q = _qubo()
    with pytest.raises(InputError, match="tol must be"):
        certify(q, np.array([0.5, 0.5]), tol=tol)  # type: ignore[arg-type]


def test_certify_refuses_a_scale_of_the_wrong_length() -> None:
    with pytest.raises(InputError, match="scale"):
        certify(_qubo(), np.array([0.5, 0.5]), scale=np.ones(3))


@pytest.mark.parametrize("method", ["gradient", "flip_deltas"])
def test_qubo_point_methods_name_a_wrong_length(method: str) -> None:
    with pytest.raises(InputError, match="length 2"):
        getattr(_qubo(), method)(np.zeros(3))


def test_tsplib_huge_dimension_is_refused_before_allocating(tmp_path: Path) -> None:
    path = tmp_path / "huge.tsp"
    path.write_text("DIMENSION: 100000000000\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                    "NODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n")
    with pytest.raises(InputError, match=r":6: NODE_COORD_SECTION ends after 2 nodes, "
                                         r"DIMENSION says 100000000000"):
        load_tsplib(path)


@pytest.mark.parametrize("build", [
    lambda tmp: random_euclidean(3000),
    lambda tmp: random_asymmetric(3000),
    lambda tmp: load_tsplib(_coords_file(tmp, 3000)),
])
def test_tsp_distance_matrix_too_big_for_memory_is_refused(
    build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checks, "available_memory", lambda: 10**8)
    with pytest.raises(InputError, match="memory"):
        build(tmp_path)


def _coords_file(tmp: Path, n: int) -> Path:
    path = tmp / f"r{n}.tsp"
    xy = np.random.default_rng(0).uniform(0, 100, (n, 2))
    body = "".join(f"{i + 1} {x:.3f} {y:.3f}\n" for i, (x, y) in enumerate(xy))
    path.write_text(f"DIMENSION: {n}\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n{body}EOF\n")
    return path


def test_small_tsp_instances_still_build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(checks, "available_memory", lambda: 10**8)
    assert random_euclidean(50).n == 50 and random_asymmetric(50).n == 50
    assert load_tsplib(_coords_file(tmp_path, 50)).n == 50


def _facility(**overrides: object):
    from coplug.formulations.facility import FacilityInstance

    fields: dict[str, object] = {"fixed": np.array([5.0, 6.0]), "capacity": np.array([9.0, 9.0]),
                                 "cost": np.ones((2, 3)), "demand": np.ones((1, 3))}
    fields.update(overrides)
    return FacilityInstance(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("overrides", "match"), [
    ({"cost": np.ones((2, 4))}, "demand must have shape"),   # IndexError in a Pyomo rule
    ({"fixed": np.ones(3)}, "fixed must have shape"),
    ({"capacity": 9.0}, "capacity must have shape"),
    ({"cost": 1.0}, "cost must be"),                       # AttributeError: no .shape
    ({"demand": np.array([[1.0, np.nan, 1.0]])}, "demand has NaN"),
    ({"demand": -np.ones((1, 3))}, "demand must be >= 0"),
    ({"capacity": np.array([9.0, -1.0])}, "capacity must be >= 0"),
    ({"penalty": -5.0}, "penalty"),                         # solved, paid to leave demand unmet
    ({"penalty": float("nan")}, "penalty"),
    ({"cost": [["a", "b", "c"], ["d", "e", "f"]]}, "numeric"),
])
def test_facility_instance_data_is_checked(overrides: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        _facility(**overrides)


def test_valid_facility_instance_solves_to_the_brute_force_optimum() -> None:
    from coplug.formulations.facility import extensive_model
    from coplug.plugins import solve

    inst = _facility(demand=np.array([[2.0, 3.0, 4.0], [1.0, 1.0, 1.0]]),
                     cost=np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
    result = solve(extensive_model(inst), solver="highs")
    # demand 9 and 3 fit one site (capacity 9): open one at fixed 5 or 6, or both at 11
    best = min(5 + ((2 + 6 + 12) + (1 + 2 + 3)) / 2, 6 + ((6 + 6 + 4) + (3 + 2 + 1)) / 2,
               11 + ((2 + 6 + 4) + (1 + 2 + 1)) / 2)
    assert result.objective == pytest.approx(best)


@pytest.mark.parametrize("name", ["uniform", "geometric", "low_rank", "transport"])
def test_dense_assignment_costs_too_big_for_memory_are_refused(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coplug.formulations.assignment import generate

    monkeypatch.setattr(checks, "available_memory", lambda: 10**6)
    with pytest.raises(InputError, match="memory"):  # was numpy's MemoryError traceback
        generate(name, 1000)
    assert generate(name, 50).shape == (50, 50)  # 20 kB still fits


def test_gated_sparse_frame_is_not_held_to_dense_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from coplug.formulations.assignment import gated

    monkeypatch.setattr(checks, "available_memory", lambda: 10**6)
    assert gated(2000, gate=4).shape == (2000, 2000)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"margin": "x"}, "margin"),            # numpy's "could not convert string to float"
    ({"margin": [1.0, 2.0]}, "margin"),     # float() TypeError
    ({"margin": float("inf")}, "margin"),   # "penalties overflowed", not the margin
    ({"margin": -1.0}, "margin"),
    ({"max_nonzeros": "x"}, "max_nonzeros"),  # '>' not supported between int and str
    ({"max_nonzeros": -1}, "max_nonzeros"),
    ({"max_nonzeros": 2.5}, "max_nonzeros"),
])
def test_safe_knapsack_options_are_named(kwargs: dict, name: str) -> None:
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe

    inst = KnapsackInstance(np.array([3, 4]), np.array([1, 2]), 2)
    with pytest.raises(InputError, match=f"^{name} must be"):
        knapsack_qubo_safe(inst, **kwargs)
    assert knapsack_qubo_safe(inst, margin=2, max_nonzeros=100).margin == 2.0


@pytest.mark.parametrize("size", ["3", 2.5, None, True, 0])
def test_registry_build_names_a_bad_size(size: object) -> None:
    from coplug.formulations.registry import build

    with pytest.raises(InputError, match="--size must be an integer >= 1"):
        build("knapsack", size)  # type: ignore[arg-type]
    assert len(list(build("knapsack", 3).x)) == 3


def test_registry_refuses_a_non_callable_builder() -> None:
    from coplug.formulations.registry import names, register

    with pytest.raises(InputError, match="must be callable"):
        register("review_s19_not_callable", 3, "x")  # type: ignore[arg-type]
    assert "review_s19_not_callable" not in names()


def test_tour_from_model_refuses_an_unsolved_model_and_subtours() -> None:
    from coplug.formulations.tsp import tour_from_model, tsp_mip
    from coplug.plugins import solve

    d = np.array([[0, 1, 9, 9], [1, 0, 9, 9], [9, 9, 0, 1], [9, 9, 1, 0.0]])
    m = tsp_mip(d, subtour="none")
    with pytest.raises(InputError, match="solve it first"):
        tour_from_model(m)  # was [0]
    solve(m, solver="highs")  # assignment optimum: subtours 0-1-0 and 2-3-2
    with pytest.raises(InputError, match="visit 2 of 4 cities"):
        tour_from_model(m)  # was [0, 1]
    m = tsp_mip(d)
    result = solve(m, solver="highs")
    tour = tour_from_model(m)
    assert sorted(tour) == [0, 1, 2, 3] and result.objective == pytest.approx(20.0)


@pytest.mark.parametrize("rounds", [0, -1, "x", 2.5])
def test_solve_tsp_rounds_names_a_bad_round_count(rounds: object) -> None:
    from coplug.formulations.tsp import solve_tsp_rounds

    with pytest.raises(InputError, match="max_rounds must be an integer >= 1"):
        solve_tsp_rounds(np.ones((4, 4)), max_rounds=rounds)  # type: ignore[arg-type]


@pytest.mark.parametrize("pattern", [["slope"], {"plus": 1}, 3])
def test_block_model_names_a_pattern_that_is_no_name(pattern: object) -> None:
    with pytest.raises(InputError, match="slope pattern"):  # a list was "unhashable type"
        BlockModel(np.zeros((2, 3, 3)), pattern=pattern)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "name"), [({"lr": True}, "lr"), ({"tol": True}, "tol")])
def test_minimize_refuses_boolean_step_sizes(kwargs: dict, name: str) -> None:
    from coplug.formulations.qubo_solvers import minimize

    with pytest.raises(InputError, match=f"{name} must be a finite positive number"):
        minimize(_qubo(), starts=2, **kwargs)


@pytest.mark.parametrize("tour", [[0, 1.7, 2], [0, 1, -1], [0, 1, 3], [], [[0, 1, 2]], ["a"]])
def test_tour_length_refuses_cities_that_are_not_cities(tour: list) -> None:
    from coplug.formulations.tsp import tour_length

    d = np.arange(9.0).reshape(3, 3)
    with pytest.raises(InputError, match="tour"):  # 1.7 was truncated, -1 wrapped around
        tour_length(d, tour)
    assert tour_length(d, [0, 1, 2]) == d[0, 1] + d[1, 2] + d[2, 0]
    assert tour_length(d, np.array([2.0, 0.0, 1.0])) == d[2, 0] + d[0, 1] + d[1, 2]


def test_selections_of_the_wrong_length_are_named() -> None:
    from coplug.formulations.knapsack import KnapsackInstance

    inst = KnapsackInstance(np.array([1, 2]), np.array([1, 1]), 1)
    assert inst.is_feasible([1, 1, 1]) is False  # was an IndexError
    assert inst.is_feasible([0, 1]) is True and inst.is_feasible([1, 1]) is False
    with pytest.raises(InputError, match="length 2"):
        inst.value([1, 1, 1])
    with pytest.raises(InputError, match="length 4"):
        BlockModel(np.ones((2, 2))).value([1, 1])
