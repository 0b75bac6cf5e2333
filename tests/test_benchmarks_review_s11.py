"""Benchmark review (eleventh session): flags checked up front, repeats that ran twice or
crashed, summaries on partial runs, and timing that leaves first-call costs out."""

from __future__ import annotations

import pytest
from bench_loader import bench

from coplug.plugins.results import Result, Status


def assert_usage_error(capsys, call, fragment: str) -> None:
    """`call()` exits 2 with one argparse error line containing `fragment`."""
    with pytest.raises(SystemExit) as exc:
        call()
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error: " in last and fragment in last


BAD_ARGS = [
    ("pmvb_vs_scip", ["--families", "mknapsack", "--size", "5", "--n-instances", "1",
                      "--predictors", "lp,lpp"], "--predictors: unknown ['lpp']"),
    ("pmvb_vs_scip", ["--seed-start", "-1"], "--seed-start"),
    ("lap_warmstart", ["--sizes", "16", "--seed", "-1"], "--seed"),
    ("lap_warmstart", ["--sizes", "16", "32", "--max-seconds", "-1"], "--max-seconds"),
    ("lap_heuristic", ["--sizes", "5", "--atsp-sizes", "5", "--n-instances", "1",
                       "--seed-start", "-1"], "--seed-start"),
    ("integral_rows", ["--sizes", "5", "--time-limit", "0"], "--time-limit"),
    ("integral_rows", ["--sizes", "5", "--time-limit", "nan"], "--time-limit"),
    ("fair_clustering", ["--sizes", "20", "--clusters", "2", "--seed", "-1"], "--seed"),
    ("fair_clustering", ["--sizes", "20", "--clusters", "2", "--threads", "0"], "--threads"),
    ("fair_clustering", ["--sizes", "20", "--clusters", "2", "--max-dense-gib", "-1"],
     "--max-dense-gib"),
]


@pytest.mark.parametrize(("name", "argv", "fragment"), BAD_ARGS,
                         ids=[f"{n}:{' '.join(a)}" for n, a, _ in BAD_ARGS])
def test_bad_value_is_a_usage_error_before_any_work(capsys, name, argv, fragment):
    assert_usage_error(capsys, lambda: bench(name).main(argv), fragment)


def test_eob_time_limit_checked_before_the_evolution(capsys):
    parse = bench("eob_evolution").parse_args
    assert_usage_error(capsys, lambda: parse(["--time-limit", "0"]), "--time-limit")


def _fake_solve(*args, **kwargs) -> Result:
    """An instant optimal SCIP answer."""
    return Result(Status.OPTIMAL, "scip", objective=1.0, bound=1.0, time=0.5, nodes=3,
                  has_solution=True)


def test_pmvb_repeated_predictor_runs_once(capsys, monkeypatch):
    module = bench("pmvb_vs_scip")
    monkeypatch.setattr(module, "solve", _fake_solve)
    monkeypatch.setattr(module, "solve_with_pmvb", _fake_solve)
    code = module.main(["--families", "mknapsack", "--size", "5", "--n-instances", "2",
                        "--predictors", "lp,lp", "--modes", "branch,branch", "--depths", "0,00"])
    out = capsys.readouterr().out
    assert code == 0
    assert sum(line.startswith("pmvb-lp ") for line in out.splitlines()) == 1
    assert "optimum disagreements 0/2 compared solves" in out


def test_qubo_summary_says_n_a_for_a_form_that_did_not_run():
    rows = {("knapsack", 8, "safe", "pgd"): [{"binfeas": 1.0}, {"binfeas": 0.5}]}
    line = bench("qubo_local_minima").summary(rows, 8, 1.0)
    assert "safe 100% binary+feasible on 1/2 runs (min 50.0%)" in line
    assert "naive mean n/a (min n/a)" in line


def test_qubo_repeated_size_runs_once():
    args = bench("qubo_local_minima").parse_args(["--knapsack-sizes", "8,8,12"])
    assert args.knapsack_sizes == [8, 12]


def test_lap_heuristic_repeated_size_runs_once():
    cells = bench("lap_heuristic").instances(["euclid"], {"euclid": [10, 10]}, 2, 0)
    assert cells == [("euclid", 10, 0), ("euclid", 10, 1)]


def _game_row(name: str, gap: float) -> dict:
    """One finished games_convergence run."""
    return {"game": name, "epsilon": 0.1, "reached": 3, "final_gap": gap, "feasible": True}


def test_games_summary_over_partial_runs():
    line = bench("games_convergence").summary([_game_row("cournot", 5e-5)],
                                               ["cournot", "network_flow"])
    assert "network_flow: no run finished" in line
    assert "gap < 1e-4 on every game: no" in line
    assert line.endswith("runs with an infeasible iterate: 0/1")


def test_games_interrupt_prints_summary_and_returns_130(capsys, monkeypatch):
    module = bench("games_convergence")
    calls = iter([_game_row("cournot", 5e-5) | {"mu": 0.025, "iterations": 4, "min_slack": 1.0,
                                                  "curve": [(0, 1.0), (4, 5e-5)]}])

    def run(name, epsilon, max_iter):
        row = next(calls, None)
        if row is None:
            raise KeyboardInterrupt
        return row

    monkeypatch.setattr(module, "run", run)
    assert module.main(["--games", "cournot,network_flow", "--eps", "1e-1"]) == 130
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("SUMMARY cournot: best certified gap 5.0e-05")


def test_fair_clustering_interrupt_prints_summary_and_returns_130(capsys, monkeypatch):
    module = bench("fair_clustering")
    done = {"status": "ok", "time": 1.0, "embed": 0.5, "balance": 1.0, "ratio_cut": 2.0,
            "ari": 1.0, "iterations": ""}

    def run_method(data, method, k, laplacian, max_gib):
        if data.n > 20:
            raise KeyboardInterrupt
        return done

    monkeypatch.setattr(module, "run_method", run_method)
    assert module.main(["--sizes", "20,40", "--clusters", "2"]) == 130
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("SUMMARY n=20: R-FairSC ratio cut x1.0000 of FairSC")


def test_lap_pyomo_warms_every_solver_before_timing(capsys, monkeypatch):
    module = bench("lap_pyomo")
    called: list[str] = []
    monkeypatch.setattr(module, "solve", lambda model, solver, **kw: called.append(solver))
    monkeypatch.setattr(module, "run_all", lambda *a: ([], False))
    assert module.main(["--sizes", "5", "--solvers", "lap,highs"]) == 0
    assert called == ["lap", "highs"]


def test_fair_clustering_tiny_graph_without_optimum_is_shown(capsys, monkeypatch):
    module = bench("fair_clustering")
    monkeypatch.setattr(module, "solve", lambda *a, **k: Result(Status.TIME_LIMIT, "highs"))
    assert module.against_mip() == []
    out = capsys.readouterr().out
    assert out.count("HiGHS time_limit  (skipped)") == 5
