"""Session 28 review fixes outside PMVB: the knapsack margin floor that `certify` can see,
formulation builders and helpers given the wrong kind of argument, and the fair-clustering
generator and MIP."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations import (
    facility,
    fair_clustering_mip,
    game_solvers,
    knapsack,
    openpit,
    tsp,
)
from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe, smallest_margin
from coplug.formulations.qubo import QUBO
from coplug.formulations.qubo_solvers import certify
from coplug.plugins import InputError


@pytest.mark.parametrize("factor", [1.0, 5.0])
def test_a_fractional_saddle_at_the_margin_floor_is_no_local_minimizer(factor: float) -> None:
    """With the floor at 1024 ulps, certify's rounding allowance hid the concave diagonal:
    a stationary fractional point (energy lower on both sides) was called a local minimum."""
    inst = KnapsackInstance(values=[1000.0, 1e-10], weights=[1, 1], capacity=2)
    delta = factor * smallest_margin(inst)
    qubo = knapsack_qubo_safe(inst, margin=delta)
    mu = delta / 2
    z = np.array([1.0, 0.0, 0.0, (mu - 1e-10) / (2 * mu)])  # gradient 0 along the last one
    step = np.array([0.0, 0.0, 0.0, 0.01])
    assert qubo.energy(z + step) < qubo.energy(z) and qubo.energy(z - step) < qubo.energy(z)
    cert = certify(qubo, z)
    assert not cert.binary and not cert.local_min and not cert.ok


@pytest.mark.parametrize("factor", [1.0, 10.0])
def test_an_item_placed_twice_at_the_margin_floor_is_not_feasible(factor: float) -> None:
    """Its penalty is exactly the margin, which fell inside certify's zero-penalty allowance."""
    inst = KnapsackInstance(values=[1000.0], weights=[1], capacity=2)
    qubo = knapsack_qubo_safe(inst, margin=factor * smallest_margin(inst))
    both = np.array([1.0, 1.0])  # item 0 on slot 0 and on slot 1
    assert qubo.energy(both) > qubo.sense * inst.value(qubo.decode(both))
    cert = certify(qubo, both)
    assert cert.binary and not cert.feasible and cert.objective is None


@pytest.mark.parametrize(("n", "factor"), [(13, 1.0), (40, 2.0), (160, 10.0)])
def test_an_extra_placement_among_many_is_not_feasible(n: int, factor: float) -> None:
    """certify's zero-penalty allowance grows with the whole point (n + C placements and
    slots); the floor grew only with one placement's rows, so from 13 items a point placing
    item 0 twice, decoding to a feasible packing, was called feasible."""
    values = np.full(n, 1e-6)
    values[0] = 1000.0
    inst = KnapsackInstance(values=values, weights=np.ones(n, dtype=int), capacity=n + 1)
    qubo = knapsack_qubo_safe(inst, margin=factor * smallest_margin(inst))
    where = {name: k for k, name in enumerate(qubo.names)}
    z = np.zeros(qubo.n)
    z[[where[f"y{i}@{i}"] for i in range(n)] + [where[f"y0@{n}"]]] = 1.0
    assert inst.is_feasible(qubo.decode(z))
    assert qubo.energy(z) > qubo.sense * inst.value(qubo.decode(z))  # the margin, no more
    cert = certify(qubo, z)
    assert cert.binary and not cert.feasible and cert.objective is None


@pytest.mark.parametrize(("build", "given", "expected"), [
    (knapsack.knapsack_qubo_safe, [1, 2], "knapsack_qubo_safe takes a KnapsackInstance, got list"),
    (knapsack.knapsack_qubo_naive, (1, 2), "takes a KnapsackInstance, got tuple"),
    (knapsack.knapsack_mip, {"values": [1]}, "knapsack_mip takes a KnapsackInstance, got dict"),
    (knapsack.smallest_margin, None, "takes a KnapsackInstance, got NoneType"),
    (openpit.openpit_qubo_safe, np.ones((3, 3)), "openpit_qubo_safe takes a BlockModel, got "
                                                  "ndarray"),
    (openpit.openpit_mip, np.ones((3, 3)), "openpit_mip takes a BlockModel, got ndarray"),
    (openpit.openpit_penalties, [[1.0]], "takes a BlockModel, got list"),
    (facility.extensive_model, {"fixed": [1.0]}, "extensive_model takes a FacilityInstance, "
                                                 "got dict"),
    (facility.benders_models, [1, 2], "benders_models takes a FacilityInstance, got list"),
    (game_solvers.certify, None, "certify takes a Game, got NoneType"),
    (game_solvers.barrier_gradient_ascent, "cournot", "takes a Game, got str"),
    (game_solvers.compile_game, 3, "compile_game takes a Game, got int"),
])
def test_builders_name_the_instance_they_take(build, given, expected: str) -> None:
    """A list, dict or plain grid failed on a missing attribute deep in the builder."""
    with pytest.raises(InputError, match=expected):
        build(given)


def test_penalty_rows_as_a_list_without_weights_are_named() -> None:
    """A as a list of lists read A.shape before converting it (AttributeError)."""
    with pytest.raises(InputError, match=r"penalty rows A \(1 rows\) need weights"):
        QUBO(Q=np.zeros((2, 2)), c=[0, 0], constant=0, decode=None, is_feasible=None,
             objective=None, A=[[1, 1]])


@pytest.mark.parametrize("share", [("a", "b"), (1, "x"), [[1, 1]], {"a": 1}])
def test_fair_sbm_names_a_bad_group_share(share: object) -> None:
    """Strings failed in numpy's isfinite, a 2-D share inside numpy's random generator."""
    from coplug.formulations.fair_graphs import fair_sbm

    with pytest.raises(InputError, match="group_share must be"):
        fair_sbm(40, 2, 2, group_share=share, seed=0)


def test_the_fair_mip_needs_groups() -> None:
    """groups=None built a model without fairness rows and solved it as 'optimal'."""
    ring = np.roll(np.eye(6), 1, axis=1)
    with pytest.raises(InputError, match="fair_clustering_mip needs groups"):
        fair_clustering_mip.fair_clustering_mip(ring + ring.T, None, 2)


@pytest.mark.parametrize(("call", "expected"), [
    (lambda: tsp.qubo_nonzeros([[0, 1], [1]]), "distance matrix must be"),
    (lambda: tsp.is_tour([0, 1, 2], "3"), "is_tour's n must be an integer"),
    (lambda: fair_clustering_mip.mip_labels(None),
     "mip_labels needs a model built by fair_clustering_mip, got NoneType"),
    (lambda: fair_clustering_mip.mip_objective(None, np.zeros(3)),
     "mip_objective needs a model built by fair_clustering_mip"),
])
def test_helpers_name_a_wrong_argument(call, expected: str) -> None:
    """These failed on a missing attribute or a comparison deep inside."""
    with pytest.raises(InputError, match=expected):
        call()
