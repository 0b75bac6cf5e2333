"""Session 40 review: coplug's SCIP plugins on hand-built PySCIPOpt models, and files whose
bytes or names differ from plain ASCII."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from pyscipopt import Model, quicksum
from scipy.optimize import linear_sum_assignment

from coplug.plugins.errors import InputError


def _raw_assignment(cost: np.ndarray, same_names: bool = False) -> Model:
    """A hand-built SCIP assignment model with a side row that keeps SCIP from solving it
    at the root by presolve alone."""
    n = len(cost)
    m = Model()
    m.hideOutput()
    m.setParam("presolving/maxrounds", 0)
    x = {(i, j): m.addVar("x" if same_names else f"x_{i}_{j}", vtype="B", obj=float(cost[i, j]))
         for i in range(n) for j in range(n)}
    for i in range(n):
        m.addCons(quicksum(x[i, j] for j in range(n)) == 1)
        m.addCons(quicksum(x[j, i] for j in range(n)) == 1)
    return m


def _costs(seed: int, n: int = 6) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 50, (n, n)).astype(float)


def _lap_optimum(cost: np.ndarray) -> float:
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum())


def test_one_lap_heuristic_attached_to_two_models_works_on_each_own() -> None:
    from coplug.plugins.lap import LapHeuristic

    # the second attach replaced the blocks the first model's heuristic read: solving the
    # first model then probed the second's variables (a segmentation fault)
    for seed in range(3):
        c1, c2 = _costs(seed), _costs(seed + 100)
        m1, m2 = _raw_assignment(c1), _raw_assignment(c2)
        heuristic = LapHeuristic()
        heuristic.attach(m1)
        heuristic.attach(m2)
        m2.optimize()
        m1.optimize()
        assert m1.getObjVal() == pytest.approx(_lap_optimum(c1))
        assert m2.getObjVal() == pytest.approx(_lap_optimum(c2))
        assert heuristic.statistics()["error"] is None
        pickle.dumps(heuristic)  # held SCIP variables after a raw solve: failed to pickle


def test_lap_heuristic_finds_blocks_whose_variables_share_a_name() -> None:
    from coplug.plugins.lap import LapHeuristic
    from coplug.plugins.lap.heuristic import find_blocks

    cost = _costs(7)
    model = _raw_assignment(cost, same_names=True)  # SCIP allows it; blocks keyed by name: none
    assert [(b.n, b.m) for b in find_blocks(model)] == [(6, 6)]
    heuristic = LapHeuristic()
    heuristic.attach(model)
    model.optimize()
    assert model.getObjVal() == pytest.approx(_lap_optimum(cost))
    assert heuristic.statistics()["blocks"] == 1


def _attach_all_kinds(model: Model) -> list[str]:
    """Each SCIP plugin's refusal when attached to `model` (solved already)."""
    from coplug.plugins import OnSolution, Progress
    from coplug.plugins.lap import LapHeuristic
    from coplug.plugins.pmvb import PMVBBranching

    said = []
    for plugin in (LapHeuristic(), PMVBBranching("lp"), Progress(), OnSolution(print)):
        with pytest.raises(InputError) as info:
            plugin.attach(model, None)
        said.append(str(info.value))
    return said


def test_plugins_attached_after_a_solve_say_so() -> None:
    model = _raw_assignment(_costs(3))
    model.optimize()
    # the LAP heuristic found no blocks among the solved model's rows and did nothing; the
    # others had SCIP's error code read as "pass one ... per solve"
    for said in _attach_all_kinds(model):
        assert "before its optimize()" in said and "freeTransform()" in said


def test_plugins_that_speak_pyomo_refuse_a_missing_variable_map() -> None:
    from coplug.plugins import OnSolution
    from coplug.plugins.pmvb import PMVBBranching

    for plugin in (PMVBBranching("lp"), OnSolution(print)):
        with pytest.raises(InputError, match="needs the VarMap of a Pyomo model, got None"):
            plugin.attach(_raw_assignment(_costs(4)), None)
