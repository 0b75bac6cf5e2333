"""Review fixes for the QUBO modules: box and penalty checks in the certificate, Adam on huge
gradients, deep-pit guard, seeds and argument validation, neutral QUBO labels, CLI flags."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import plain_qubo

from coplug.formulations.knapsack import (
    KnapsackInstance,
    knapsack_qubo_naive,
    knapsack_qubo_safe,
    random_knapsack,
)
from coplug.formulations.openpit import (
    BlockModel,
    openpit_qubo_naive,
    openpit_qubo_safe,
    random_block_model,
)
from coplug.formulations.qubo_solvers import RunReport, certify, minimize
from coplug.formulations.tsp import random_euclidean, tsp_qubo_naive, tsp_qubo_safe
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("z", [[-0.5, 1.0], [0.0, 1.7], [np.nan, 1.0]])
def test_certify_refuses_points_outside_the_box(z: list[float]) -> None:
    q = knapsack_qubo_safe(KnapsackInstance([3, 4], [1, 1], 1))
    with pytest.raises(InputError, match="outside the box"):
        certify(q, np.array(z))
    assert certify(q, np.array([-1e-9, 1 + 1e-9])).ok  # within tol of the best vertex


def test_positive_penalty_point_is_not_feasible() -> None:
    q = knapsack_qubo_safe(KnapsackInstance([5, 1], [1, 1], 3))
    twice = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # item 0 placed on slots 0 and 1
    assert q.is_feasible(q.decode(twice)) and q.energy(twice) > -5.0
    cert = certify(q, twice)
    assert cert.binary and not cert.feasible and cert.objective is None
    once = certify(q, np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    assert once.feasible and once.objective == 5.0
    report = RunReport(np.zeros((1, q.n)), np.zeros(1), [cert], 1, 0.0, "pgd")
    assert report.fraction_binary_feasible == 0.0 and report.best_objective(-1) is None


def test_adam_converges_when_squared_gradients_overflow() -> None:
    d = np.array([[0, 1e200, 1, 2], [1e200, 0, 1, 3], [1, 1, 0, 1], [2, 3, 1, 0.0]])
    report = minimize(tsp_qubo_safe(d), method="adam", starts=4, seed=0, max_iter=1000)
    assert report.fraction_ok == 1.0 and report.stats["converged"] == 4
    linear = plain_qubo(-np.eye(2), np.array([1e200, -1e200]))  # |c| >> the Hessian bound D
    report = minimize(linear, method="adam", starts=4, seed=0, max_iter=200)
    assert np.array_equal(report.points, np.tile([0.0, 1.0], (4, 1)))


@pytest.mark.parametrize(("shape", "pattern"), [((400, 1), ""), ((13, 4), ""), ((9, 3, 3), "box")])
def test_too_deep_pit_is_refused_naming_depth_and_penalty(shape: tuple, pattern: str) -> None:
    model = BlockModel(np.ones(shape), pattern=pattern)
    with pytest.raises(InputError, match=rf"depth {shape[0]} .*P_0 = .*openpit_mip"):
        openpit_qubo_safe(model)


def test_deepest_accepted_pit_keeps_energy_equal_to_minus_value() -> None:
    model = BlockModel(np.random.default_rng(0).normal(0, 2, (8, 10, 10)).round(1), "box")
    q = openpit_qubo_safe(model)
    for k in range(9):
        pit = (np.arange(model.n) < k * 100).astype(float)  # the top k levels
        assert abs(q.energy(pit) + model.value(pit)) < 0.01  # values are on a 0.1 grid
        assert certify(q, pit).objective == pytest.approx(model.value(pit))


@pytest.mark.parametrize("seed", [-1, 2**63, 2.5, None, True])
def test_generators_refuse_bad_seeds(seed: object) -> None:
    for make in (random_knapsack, random_euclidean, random_block_model):
        with pytest.raises(InputError, match=r"seed must be a non-negative integer below 2\*\*63"):
            make(5, seed=seed)
    assert random_euclidean(4, seed=2**63 - 1).n == 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n": 3, "r": 0}, "weight range r"), ({"n": 2.5}, "size n"), ({"n": True}, "size n")],
)
def test_random_knapsack_validates_size_and_range(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        random_knapsack(**kwargs)
    assert random_knapsack(3, r=1).weights.tolist() == [1, 1, 1]


@pytest.mark.parametrize("seed", ["-5", "99999999999999999999", "x"])
def test_cli_refuses_bad_seed_up_front(seed: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["qubo", "knapsack", "--size", "3", "--starts", "2", "--seed", seed])
    assert exc.value.code == 2
    assert "argument --seed: must be an integer" in capsys.readouterr().err


def test_certified_minimizer_need_not_be_one_flip_optimal_and_readme_says_so() -> None:
    q = knapsack_qubo_safe(KnapsackInstance([10, 4], [1, 1], 2))  # mu = 5
    alone = np.array([1.0, 0.0, 0.0, 0.0])  # item 0 on slot 0; names y0@0 y0@1 y1@0 y1@1
    assert certify(q, alone).ok and certify(q, alone).objective == 10.0
    assert q.flip_deltas(alone).min() == pytest.approx(-4.0)  # adding item 1 gains 4
    text = (Path(__file__).parents[1] / "formulations" / "README.md").read_text()
    assert "slightly strengthened" not in text and "minimizers are 1-flip local optima" not in text
    assert "nor\neven 1-flip optimal" in text


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"starts": 2.5}, "starts"),
        ({"starts": True}, "starts"),
        ({"seed": None}, "seed"),
        ({"seed": -1}, "seed"),
        ({"threads": 0}, "threads"),
        ({"device": "bogus"}, "device 'bogus'"),
        ({"tol": float("inf")}, "tol"),
        ({"lr": float("nan")}, "lr"),
        ({"kicks": -1}, "kicks"),
        ({"max_iter": 0}, "max_iter"),
    ],
)
def test_minimize_refuses_bad_arguments_naming_them(kwargs: dict, name: str) -> None:
    q = tsp_qubo_safe(random_euclidean(4).dist)
    with pytest.raises(InputError, match=rf"^{name} "):
        minimize(q, **kwargs)


def test_minimize_refuses_an_unavailable_cuda_device() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(InputError, match="device 'cuda' is not usable"):
        minimize(tsp_qubo_safe(random_euclidean(4).dist), starts=2, device="cuda")


def test_qubo_data_and_points_are_checked() -> None:
    with pytest.raises(InputError, match="at least one variable"):
        plain_qubo(np.zeros((0, 0)), np.zeros(0))
    q = tsp_qubo_safe(random_euclidean(4).dist)
    with pytest.raises(InputError, match="energy needs points of length 9"):
        q.energy(np.zeros(3))
    with pytest.raises(InputError, match="solve it first"):
        q.from_pyomo(q.to_pyomo())
    with pytest.raises(InputError, match="distance matrix must be numeric"):
        tsp_qubo_safe([["a", "b", "c"]] * 3)
    with pytest.raises(InputError, match="block values must be numeric"):
        BlockModel(np.array([["a", "b"]]))


def test_hand_built_qubo_is_labelled_custom_and_packaged_forms_keep_labels() -> None:
    assert plain_qubo(-np.eye(2), np.ones(2)).form == "custom"
    inst = KnapsackInstance([3, 4], [1, 1], 1)
    assert knapsack_qubo_safe(inst).form == "safe"
    assert knapsack_qubo_safe(KnapsackInstance([3], [5], 1)).form == "safe"  # nothing fits
    assert knapsack_qubo_naive(inst).form == "naive"
    d = random_euclidean(4).dist
    assert (tsp_qubo_safe(d).form, tsp_qubo_naive(d).form) == ("safe", "naive")
    pit = BlockModel(np.ones((2, 3)))
    assert (openpit_qubo_safe(pit).form, openpit_qubo_naive(pit).form) == ("safe", "naive")


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--time-limit", "0"),
        ("--time-limit", "-1"),
        ("--time-limit", "nan"),
        ("--max-iter", "0"),
        ("--size", "0"),
        ("--starts", "2.5"),
    ],
)
def test_cli_refuses_bad_numbers_before_running(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["qubo", "tsp", "--starts", "2", flag, value])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert f"argument {flag}: expected" in captured.err and "QUBO with" not in captured.out


def test_cli_refuses_size_with_file(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "k.txt"
    path.write_text("2 3\n5 4\n6 5\n")
    assert main(["qubo", "knapsack", "--file", str(path), "--size", "5"]) == 2
    captured = capsys.readouterr()
    assert "--size cannot be combined with --file" in captured.err
    assert "QUBO with" not in captured.out


def test_pgd_on_twin_items_reaches_certified_minimizers_from_every_start() -> None:
    """Two identical items: accepting long steps on equal energy swapped two vertices
    until max_iter and returned non-minimal, even infeasible, points (1-3 of 64 starts)."""
    qubo = knapsack_qubo_safe(KnapsackInstance(np.array([5.0, 5.0]), np.array([1, 1]), 3))
    for seed in range(25):
        report = minimize(qubo, method="pgd", starts=64, seed=seed)
        assert report.fraction_ok == 1.0, seed
        assert report.stats["converged"] == 64, seed
