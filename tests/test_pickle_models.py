"""coplug's model builders make models that pickle (their rules are module-level functions,
their data bound by `functools.partial`), and a copy solves to the original's optimum; pool
and k-best solutions pickle with their model and read by the copy's own variables."""

from __future__ import annotations

import pickle
from typing import Any

import networkx as nx
import numpy as np
import pytest

from coplug.formulations import registry
from coplug.formulations.assignment import assignment_model
from coplug.formulations.facility import (
    benders_models,
    extensive_model,
    random_facility_instance,
)
from coplug.formulations.fair_clustering_mip import fair_clustering_mip
from coplug.formulations.mip_families import build_family
from coplug.formulations.tsp import tsp_mip
from coplug.plugins import LazyConstraints, SolutionPool, Status, k_best, solve
from coplug.plugins.benders import BendersCuts

# Every registered formulation at a size HiGHS solves in well under a second.
SMALL = 8


def _copied(model: Any) -> Any:
    """A pickled and unpickled copy of `model`."""
    return pickle.loads(pickle.dumps(model))


def _same_optimum(model: Any, solver: str = "highs") -> None:
    """The model's copy, made before and after the original's solve, solves to its optimum."""
    before = _copied(model)
    expected = solve(model, solver=solver, mip_rel_gap=0.0)
    assert expected.status is Status.OPTIMAL
    for copy in (before, _copied(model)):
        assert copy is not model
        found = solve(copy, solver=solver, mip_rel_gap=0.0)
        assert found.status is Status.OPTIMAL
        assert found.objective == pytest.approx(expected.objective, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", sorted(registry.names()))
def test_every_registered_formulation_pickles_and_its_copy_solves_alike(name: str) -> None:
    _same_optimum(registry.build(name, SMALL, seed=1))


@pytest.mark.parametrize("objective", ["cut", "ratio_cut"])
def test_a_fair_clustering_model_pickles(objective: str) -> None:
    graph = nx.gnp_random_graph(10, 0.4, seed=1)
    groups = [i % 2 for i in range(10)]
    _same_optimum(fair_clustering_mip(graph, groups, 3, objective=objective, tolerance=0.2))


def test_a_rectangular_maximized_assignment_and_a_bare_tsp_pickle() -> None:
    _same_optimum(assignment_model(np.arange(12).reshape(3, 4), maximize=True))
    dist = np.random.default_rng(0).random((5, 5))
    _same_optimum(tsp_mip(dist + dist.T, subtour="none"))


@pytest.mark.parametrize("penalty", [None, 40.0])
def test_facility_models_pickle(penalty: float | None) -> None:
    inst = random_facility_instance(3, 5, 2, seed=1, penalty=penalty)
    _same_optimum(extensive_model(inst))
    master, subs = benders_models(inst)
    _same_optimum(master)
    for sub in subs:
        _same_optimum(sub.model)


def test_a_pickled_benders_decomposition_reaches_the_extensive_optimum() -> None:
    inst = random_facility_instance(3, 6, 2, seed=2, penalty=40.0)
    master, subs = _copied(benders_models(inst))
    result = solve(master, plugins=[LazyConstraints(BendersCuts(subs))])
    truth = solve(extensive_model(inst), solver="highs")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, rel=1e-6)


def test_pool_and_k_best_solutions_pickle_and_read_their_copys_variables() -> None:
    m = build_family("setcover", 60, seed=1)
    pool = SolutionPool(4)
    solve(m, plugins=[pool])
    best = k_best(build_family("setcover", 60, seed=1), k=3)
    assert best.proven and len(best.solutions) == 3 and len(pool.solutions) >= 2
    for solutions in (pool.solutions, best.solutions):
        model = solutions[0].variables[0].model()
        expected = [[s[model.x[j]] for j in model.J] for s in solutions]
        copies, copied_model = _copied((solutions, model))
        assert copied_model is not model
        assert [[s[copied_model.x[j]] for j in copied_model.J] for s in copies] == expected
        assert [s.objective for s in copies] == [s.objective for s in solutions]
        alone = _copied(solutions[1])  # its variables bring their own copy of the model
        own = alone.variables[0].model()
        assert own is not model
        assert [alone[own.x[j]] for j in own.J] == expected[1]
        alone.load()
        assert [own.x[j].value for j in own.J] == expected[1]
    copied_best = _copied(best)
    assert copied_best.proven and copied_best.result.status is best.result.status
    assert [s.objective for s in copied_best.solutions] == [s.objective for s in best.solutions]
