"""Session 45: fixes found by this session's probes and reviews, each checked to fail
with its fix undone."""
from __future__ import annotations

import json

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import solve


def _setcover_relaxed(n: int):
    """setcover(n, seed=0) with every variable continuous in [0, 1]: an LP."""
    from coplug.formulations.mip_families import setcover

    m = setcover(n, seed=0)
    for var in m.component_data_objects(pyo.Var):
        var.domain = pyo.Reals
        var.setlb(0)
        var.setub(1)
    return m


def test_the_factory_error_names_the_objective_limit() -> None:
    """An LP stopped by `objective_bound` through Pyomo's factory raised "the solve ended
    unknown" with nothing saying why; the objective limit is named now."""
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.util import NoFeasibleSolutionError, NoOptimalSolutionError

    import coplug.plugins  # noqa: F401  (registers coplug_highs)

    m = _setcover_relaxed(200)
    optimum = solve(m, solver="highs").objective
    with pytest.raises(NoFeasibleSolutionError, match="objective limit"):  # legacy factory
        pyo.SolverFactory("coplug_highs").solve(
            m, solver_options={"objective_bound": 0.9 * optimum})
    with pytest.raises(NoOptimalSolutionError, match="objective limit"):
        SolverFactory("coplug_highs").solve(
            m, solver_options={"objective_bound": 0.9 * optimum})


def test_saving_a_joblib_keeps_the_json_of_the_pt_beside_it(tmp_path) -> None:
    """p.json recording p.pt's sha256 holds p.pt's tuned t and q: saving p.joblib removed
    it, so p.pt then ran with the defaults. A JSON describing the replaced file still
    goes."""
    from coplug.learned.checkpoint_io import file_sha256
    from coplug.learned.pmvb_features import FEATURE_NAMES
    from coplug.learned.pmvb_predictors import PMVBPredictor, checkpoint_metadata

    rng = np.random.default_rng(3)
    features = rng.normal(size=(60, len(FEATURE_NAMES)))
    labels = (features[:, 0] > 0).astype(int)
    predictor = PMVBPredictor(kind="logreg", calibration="none").fit(features, labels)
    pt = predictor.save(tmp_path / "p.pt")
    meta = {"threshold": 0.7, "confidence": 0.9, "sha256": file_sha256(pt)}
    (tmp_path / "p.json").write_text(json.dumps(meta))
    predictor.save(tmp_path / "p.joblib")
    assert checkpoint_metadata(pt)["threshold"] == 0.7
    (tmp_path / "p.json").write_text(json.dumps({"threshold": 0.7}))  # no record: goes
    predictor.save(tmp_path / "p.joblib")
    assert not (tmp_path / "p.json").exists()
