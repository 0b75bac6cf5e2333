"""Benchmark scripts after the nineteenth session's library changes: a TSP model whose arcs
are no tour (tour_from_model now raises) is a failed check, not a traceback; and the LAP
benchmarks load the kernels past solve_lap's one-call small path before timing anything."""

from __future__ import annotations

import math

import numpy as np
from bench_loader import bench

from coplug.plugins.lap import small


def test_lazy_tsp_arcs_that_are_no_tour_fail_the_check_instead_of_raising(monkeypatch):
    module = bench("lazy_tsp")
    monkeypatch.setattr(module, "subtour_separator", lambda model: (lambda solution: []))
    run = module.run_model(module.distances(8, 0), False, 10.0)  # subtours never cut
    assert run.finished and run.length is None
    row = module.Row(8, 0, {"lazy": run, "mtz": module.Run(0.1, 3.0, True)})
    assert not module.same_length(row)
    assert module.table([row])[-1].endswith("| NO |")


def _recorded(monkeypatch, module) -> list[tuple[tuple[int, ...], bool]]:
    """Record (shape, predicted) of every solve_lap call the module makes."""
    calls: list[tuple[tuple[int, ...], bool]] = []
    real = module.solve_lap

    def recording(cost, *args, **kwargs):
        calls.append((np.shape(cost), kwargs.get("predictor") is not None))
        return real(cost, *args, **kwargs)

    monkeypatch.setattr(module, "solve_lap", recording)
    return calls


def _past_small_path(calls: list[tuple[tuple[int, ...], bool]]) -> bool:
    """Whether some cold call left the one-call small path (more than MAX_ENTRIES entries)."""
    return any(math.prod(shape) > small.MAX_ENTRIES and not predicted
               for shape, predicted in calls)


def test_lap_warmstart_warm_up_loads_the_cold_kernels_before_timing(capsys, monkeypatch):
    module = bench("lap_warmstart")
    calls = _recorded(monkeypatch, module)
    # scipy alone in the grid: every solve_lap call is the warm-up's
    assert module.main(["--generators", "geometric", "--sizes", "200", "--methods", "scipy"]) == 0
    assert _past_small_path(calls)
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("SUMMARY lap_warmstart")


def test_lap_pyomo_warm_up_loads_the_kernels_past_the_small_path(monkeypatch):
    module = bench("lap_pyomo")
    calls = _recorded(monkeypatch, module)
    module.warm_up(["lap"])
    assert _past_small_path(calls)
