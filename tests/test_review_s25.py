"""Faults found by the twenty-fifth session's probes, each held to a reference answer."""

from __future__ import annotations

import warnings

import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve


def _pinned_equality_lp() -> pyo.ConcreteModel:
    """An LP whose equality row holds its variables at their bound 0: any dual of the right
    sign certifies the point, and SCIP's final LP gave the placeholder -1e99."""
    m = pyo.ConcreteModel()
    m.v0 = pyo.Var(bounds=(0, 8.5))
    m.v1 = pyo.Var(bounds=(0, 8.5))
    m.v2 = pyo.Var(bounds=(0, None))
    m.v3 = pyo.Var(bounds=(1.5, 8.5))
    m.c0 = pyo.Constraint(expr=15 * m.v0 - 10 * m.v1 + 20 * m.v2 + 5 * m.v3 <= 3)
    m.c2 = pyo.Constraint(expr=-3 * m.v0 - 3 * m.v2 == 0)
    m.o = pyo.Objective(expr=2 * m.v0 + 3 * m.v1 + 2 * m.v2 + 3, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_a_placeholder_dual_is_not_loaded_as_a_price(solver: str) -> None:
    """The loaded duals are HiGHS's vertex duals (-2/3 on c2), not SCIP's -1e99."""
    m = _pinned_equality_lp()
    result = solve(m, solver=solver)
    assert result.objective == pytest.approx(28.5)
    assert result.extra["duals"]["loaded"]
    assert all(abs(m.dual[c]) < 1e6 for c in (m.c0, m.c2))
    assert all(abs(m.rc[v]) < 1e6 for v in (m.v0, m.v1, m.v2, m.v3))
    assert m.dual[m.c2] == pytest.approx(-2 / 3)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_duals_of_a_negated_pinning_row_are_prices(solver: str) -> None:
    """`-x0 - x1 == -1` with x0 >= 1 pins the point; SCIP gave 1e99 for the row and both
    reduced costs, with which c - A'y - rc and the duality gap are rounding noise."""
    m = pyo.ConcreteModel()
    m.x0 = pyo.Var(bounds=(1, 3))
    m.x1 = pyo.Var(bounds=(0, None))
    m.eq = pyo.Constraint(expr=-m.x0 - m.x1 == -1)
    m.o = pyo.Objective(expr=2 * m.x0 - 3 * m.x1)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = solve(m, solver=solver)
    assert result.objective == pytest.approx(2) and result.extra["duals"]["loaded"]
    y, rc0, rc1 = m.dual[m.eq], m.rc[m.x0], m.rc[m.x1]
    assert (2 + y - rc0, -3 + y - rc1) == pytest.approx((0, 0))  # c - A'y - rc = 0
    assert -1 * y + 1 * rc0 == pytest.approx(result.objective)  # strong duality
    assert rc1 >= -1e-9 and rc0 >= -1e-9  # both columns at their lower bounds


def test_lap_imports_where_numba_finds_no_cache_folder(tmp_path) -> None:
    """A read-only install with no writable home: `@njit(cache=True)` raised "cannot cache
    function 'min_trick': no locator available" at `import coplug.plugins.lap`. Simulated
    by numba's locator list without the in-tree one and a cache home that is a file."""
    import os
    import subprocess
    import sys

    blocked = tmp_path / "not_a_folder"
    blocked.write_text("")
    env = {**os.environ, "NUMBA_CACHE_LOCATOR_CLASSES": "UserProvidedCacheLocator,"
           "UserWideCacheLocator", "XDG_CACHE_HOME": str(blocked), "HOME": str(blocked),
           "NUMBA_CACHE_DIR": ""}
    code = ("import numpy as np\nfrom coplug.plugins.lap import solve_lap\n"
            "import coplug.learned.rowdualnet\n"
            "print(solve_lap(np.array([[4.0, 1.0], [2.0, 3.0]])).cost)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-500:]
    assert float(done.stdout.split()[-1]) == pytest.approx(3.0)


def test_bbo_certify_judges_and_returns_a_point_in_the_box() -> None:
    """SCIP's point lay 1e-8 below the box; a program defined only on its box (sqrt at the
    bound) was NaN there and failed certification with a reason about poles."""
    import numpy as np

    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.certify import certify

    base = "(-0.21 + x[1]) * sum(x - [4.27, 2.97])"
    for text in (base, "0.0 * sqrt(x[0] - 1.0) + " + base):
        program = load(text, 2, 1.0, 4.8)
        found = certify(program, time_limit=10)
        assert found.certified, found.result.extra.get("error")
        assert (found.x >= program.lower).all() and (found.x <= program.upper).all()
        assert np.isfinite(found.numpy_value)
        assert found.numpy_value == pytest.approx(-9.090225, abs=1e-6)


def test_a_reply_past_max_nodes_is_refused_before_validation(monkeypatch) -> None:
    """Validation's interval proofs took a minute on a 31 KB reply that was then refused as
    too large; the size is judged first, and validation never runs on it."""
    from collections import Counter

    from coplug.formulations.bbo import proposers

    def never(*args, **kwargs):
        raise AssertionError("validated a reply already too large")

    monkeypatch.setattr(proposers, "load", never)
    text = "\n".join(f"a{k} = 1 / (x[0] * x[1] - x[0] * x[1] + {1.2 + k * 1e-6!r})"
                     for k in range(200)) + "\nsum(x)\n"
    stats: Counter = Counter()
    assert proposers.accept(text, 2, -5.0, 5.0, 40, stats) is None
    assert stats == Counter({"rejected_too_large": 1})


def test_an_llm_timeout_past_the_timers_reach_is_refused() -> None:
    from coplug.formulations.bbo.llm_proposer import LLMConfig
    from coplug.plugins import InputError

    with pytest.raises(InputError, match="--llm-timeout"):
        LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", timeout=1e10)
    assert LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", timeout=1e9).timeout == 1e9


def test_highs_keeps_its_start_warnings_off_the_console_without_tee(capfd) -> None:
    """A fractional MIP start printed three "assessUserColValues" warnings on stdout with
    tee=False."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 2)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    for j in range(3):
        m.x[j].set_value(0.5, skip_validation=True)
    assert solve(m, solver="highs", warmstart=True).objective == pytest.approx(2)
    out, err = capfd.readouterr()
    assert "assessUserColValues" not in out + err


def test_an_interrupted_evolution_keeps_only_finished_generations(tmp_path, monkeypatch) -> None:
    """Programs scored in the generation Ctrl-C cut short went into programs.jsonl and the
    saved front, while history.json counted only the finished generations."""
    import json

    import coplug.formulations.bbo.evolve as ev

    real, scored = ev.score_program, {}

    def interrupted(program, targets, config, cid, gen, parents):
        scored[gen] = scored.get(gen, 0) + 1
        if gen == 2 and scored[gen] == 3:
            raise KeyboardInterrupt
        return real(program, targets, config, cid, gen, parents)

    monkeypatch.setattr(ev, "score_program", interrupted)
    config = ev.EvolutionConfig(targets=(1, 3), population=4, generations=5, budget=20, seeds=3)
    with pytest.raises(KeyboardInterrupt):
        ev.evolve(config, run_dir=tmp_path / "run", progress=False)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    generations = [json.loads(line)["generation"]
                   for line in (tmp_path / "run" / "programs.jsonl").open()]
    front = json.loads((tmp_path / "run" / "pareto_front.json").read_text())
    assert history["generations_done"] == 1 and not history["finished"]
    assert generations and max(generations) == 1
    assert all(c["generation"] <= 1 for c in front)


def test_commands_draw_a_live_line_only_on_a_terminal(monkeypatch) -> None:
    """`coplug bbo solve` ran its 30 s SCIP solve without a word on a terminal; the pmvb
    and qubo commands likewise. The line is drawn only where stderr is a terminal."""
    import io
    import sys

    from coplug.formulations.bbo import load
    from coplug.formulations.bbo.certify import certify
    from coplug.plugins.progress import Progress, terminal_progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert terminal_progress() == []
    monkeypatch.setattr(sys, "stderr", Terminal())
    line = terminal_progress()
    assert len(line) == 1 and isinstance(line[0], Progress)
    found = certify(load("sum((x - [1.0, 2.0]) ** 2)", 2), time_limit=10, plugins=line)
    assert found.certified and "progress" not in found.result.plugin_stats


def _half_coefficient_model() -> pyo.ConcreteModel:
    """A model with no integer point: halves near 6e11 in an equality (enumerated below)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(0, 3))
    m.row = pyo.Constraint(expr=600000000000.5 * m.x[0] + 400000000001 * m.x[1]
                           + 300000000000.5 * m.x[2] == 1500000000003)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1] + m.x[2])
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_rows_with_halves_are_judged_exactly(solver: str) -> None:
    """SCIP's point missing such a row by 4 passed an allowance of 1e-12 of the terms
    (meant for decimals like 0.1), and HiGHS's rows with fractions got no exact check: both
    said "optimal" for a model without an integer point."""
    import itertools
    from fractions import Fraction

    def activity(x):
        return (Fraction(600000000000.5) * x[0] + 400000000001 * x[1]
                + Fraction(300000000000.5) * x[2])

    assert not [x for x in itertools.product(range(4), repeat=3)
                if activity(x) == 1500000000003]
    with pytest.warns(UserWarning, match="violates 1 .*'row'"):
        result = solve(_half_coefficient_model(), solver=solver)
    assert result.status is Status.UNKNOWN


def test_a_dual_solve_that_finds_no_optimum_is_named_not_a_crash() -> None:
    """Two singleton equalities pinning x to nearly one value: SCIP's duals failed, the
    LP solver's second try found no optimum, and certify raised a numpy broadcast error."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.r0 = pyo.Constraint(expr=-121106758006.00134 * m.x == -156496144722.08517)
    m.r1 = pyo.Constraint(expr=1e9 * m.x == 1292216448.5183408)
    m.o = pyo.Objective(expr=11 * m.x, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(m, solver="scip")
    assert result.objective == pytest.approx(11 * 1.2922164485183408)
    assert "loaded" in result.extra["duals"]
