"""Evolution: NSGA-II pieces, a deterministic offline run end to end, SCIP on the front."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coplug.formulations.bbo.certify import certify
from coplug.formulations.bbo.evolve import (
    EvolutionConfig,
    crowding_distance,
    evolve,
    hypervolume,
    non_dominated_sort,
    pareto_front,
)
from coplug.plugins.errors import InputError

TINY = {"dim": 2, "targets": (1, 15), "population": 4, "generations": 2, "budget": 24,
        "seeds": 3, "sample": 60}


def test_non_dominated_sort_crowding_and_hypervolume() -> None:
    pts = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [0.4, 0.4], [0.1, 0.1]])
    assert non_dominated_sort(pts) == [[0, 1, 2], [3], [4]]
    crowd = crowding_distance(pts[[0, 1, 2]])
    assert np.isinf(crowd[0]) and np.isinf(crowd[1]) and np.isfinite(crowd[2])
    assert hypervolume(pts) == pytest.approx(0.25)  # points on the reference axes add nothing
    staircase = np.array([[1.0, 0.2], [0.2, 1.0], [0.5, 0.5], [0.3, 0.3]])
    assert hypervolume(staircase) == pytest.approx(0.2 + 0.15 + 0.1)
    assert hypervolume(np.array([[1.0, 1.0]])) == pytest.approx(1.0)
    assert hypervolume(np.empty((0, 2))) == 0.0


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("eob")
    return evolve(EvolutionConfig(**TINY, seed=1), run_dir=run_dir, progress=False), run_dir


def test_offline_run_writes_everything(run) -> None:
    result, run_dir = run
    lines = (run_dir / "programs.jsonl").read_text().splitlines()
    assert len(lines) == len(result.candidates) >= TINY["population"]
    front = json.loads((run_dir / "pareto_front.json").read_text())
    assert len(front) == len(result.front) >= 1
    assert all(f["program"]["format"] == "coplug-bbo-program" for f in front)
    assert (run_dir / "pareto_front.png").stat().st_size > 1000
    assert len(list((run_dir / "front").glob("*.py"))) == len(front)
    hv = json.loads((run_dir / "history.json").read_text())["hypervolume"]
    assert len(hv) == TINY["generations"] + 1
    assert all(b >= a - 1e-12 for a, b in zip(hv, hv[1:], strict=False))
    assert result.rejections.get("accepted", 0) > 0


def test_front_is_non_dominated(run) -> None:
    result, _ = run
    front = pareto_front(result.candidates)
    for f in front:
        assert not any(c.similarity >= f.similarity and c.differentiation >= f.differentiation
                       and c.objectives != f.objectives for c in result.candidates)


def test_run_is_deterministic_under_seed(run) -> None:
    result, _ = run
    again = evolve(EvolutionConfig(**TINY, seed=1), progress=False)
    assert [c.text for c in again.candidates] == [c.text for c in result.candidates]
    assert again.hypervolume == result.hypervolume


def test_scip_certifies_front_programs_at_least_as_good_as_portfolio(run) -> None:
    result, _ = run
    certified = 0
    for cand in result.front:
        cert = certify(cand.program, time_limit=5.0)
        tol = 1e-6 * max(1.0, abs(cand.best_value))
        if cert.certified:
            certified += 1
            assert cert.result.optimal and cert.result.gap <= 1e-6
            assert cert.bound <= cand.best_value + tol
            assert cert.objective <= cand.best_value + tol
        elif cert.bound is not None:
            assert cert.bound <= cand.best_value + tol
    assert certified >= 1


def test_config_validation() -> None:
    with pytest.raises(InputError, match="dim >= 2"):
        EvolutionConfig(dim=1)


def test_too_few_seeds_name_the_minimum_for_the_significance() -> None:
    with pytest.raises(InputError, match=r"seeds=2 is too few.*alpha=0\.05.*seeds >= 3"):
        EvolutionConfig(seeds=2)
    with pytest.raises(InputError, match=r"alpha=0\.01.*seeds >= 5"):
        EvolutionConfig(seeds=4, alpha=0.01)
    with pytest.raises(InputError, match="alpha must be in"):
        EvolutionConfig(alpha=1.5)
    assert EvolutionConfig(seeds=3).seeds == 3 and EvolutionConfig(seeds=5, alpha=0.01)


def test_extra_targets_callable_and_pyomo() -> None:
    from coplug.formulations.bbo.evolve import target_features
    from coplug.formulations.bbo.pyomo_model import to_pyomo
    from coplug.formulations.bbo.validate import load

    config = EvolutionConfig(dim=2, targets=(1,), population=2, generations=0, seeds=3,
                             sample=40)
    feats = target_features(config, {
        "bowl": lambda X: (X**2).sum(axis=1),
        "pyomo_bowl": to_pyomo(load("sum(x ** 2)", 2)),
    })
    assert set(feats) == {"f1_sphere", "bowl", "pyomo_bowl"}
    np.testing.assert_allclose(feats["bowl"], feats["pyomo_bowl"], atol=1e-9)
    with pytest.raises(InputError, match="3 variables"):
        target_features(config, {"wrong": to_pyomo(load("sum(x ** 2)", 3))})
