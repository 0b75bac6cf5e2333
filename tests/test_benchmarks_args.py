"""Benchmark scripts: bad arguments stop at argparse (exit 2, one error line) before any
work, and an interrupted run prints its partial results and returns 130."""

from __future__ import annotations

import argparse
import time

import pytest
from bench_loader import bench

from coplug.plugins.results import Result, Status

BAD_ARGS = [
    ("qubo_local_minima", ["--problems", "bogus"], "--problems: unknown 'bogus'"),
    ("qubo_local_minima", ["--forms", "bogus"], "--forms: unknown 'bogus'"),
    ("qubo_local_minima", ["--methods", "bogus"], "--methods: unknown 'bogus'"),
    ("qubo_local_minima", ["--knapsack-sizes", "x"], "--knapsack-sizes"),
    ("qubo_local_minima", ["--instances", "0"], "--instances"),
    ("qubo_local_minima", ["--starts", "0"], "--starts"),
    ("pmvb_vs_scip", ["--modes", "bogus"], "--modes"),
    ("pmvb_vs_scip", ["--threshold", "2"], "threshold"),
    ("pmvb_vs_scip", ["--time-limit", "0"], "--time-limit"),
    ("pmvb_vs_scip", ["--n-instances", "0"], "--n-instances"),
    ("pmvb_vs_scip", ["--n-instances", "-2"], "--n-instances"),
    ("pmvb_vs_scip", ["--size", "0"], "--size"),
    ("pmvb_vs_scip", ["--families", "mknapsack", "--size", "gisp=20"], "'gisp'"),
    ("pmvb_vs_scip", ["--likely-nodes", "0"], "--likely-nodes"),
    ("pmvb_vs_scip", ["--likely-nodes", "10"], "applies to --modes start"),
    ("pmvb_vs_scip", ["--baselines", "bogus"], "unknown baselines ['bogus']"),
    ("fair_clustering", ["--sizes", "abc"], "--sizes"),
    ("fair_clustering", ["--affinity", "1,2"], "--affinity"),
    ("fair_clustering", ["--clusters", "0"], "--clusters"),
    ("games_convergence", ["--games", "bogus"], "--games: unknown 'bogus'"),
    ("games_convergence", ["--eps", "abc"], "--eps"),
    ("games_convergence", ["--eps", "0"], "--eps"),
    ("lap_warmstart", ["--sizes", "0"], "--sizes"),
    ("iis_large", ["--sizes", "0"], "--sizes"),
    ("input_scaling", ["--scale", "0"], "--scale"),
    ("input_scaling", ["--repeat", "0"], "--repeat"),
    ("iis_large", ["--chain", "0"], "--chain"),
    ("lap_heuristic", ["--families", "bogus"], "--families: unknown 'bogus'"),
    ("lap_heuristic", ["--sizes", "0"], "--sizes"),
    ("lap_heuristic", ["--sizes", "2"], "--sizes: a TSP needs at least 3 cities"),
    ("lap_heuristic", ["--atsp-sizes", "x"], "--atsp-sizes"),
    ("lap_heuristic", ["--n-instances", "0"], "--n-instances"),
    ("lap_heuristic", ["--time-limit", "0"], "--time-limit"),
    ("lap_pyomo", ["--sizes", "1"], "--sizes: an assignment needs n >= 2"),
    ("lap_pyomo", ["--solvers", "gurobi"], "--solvers: unknown 'gurobi'"),
    ("lap_pyomo", ["--time-limit", "0"], "--time-limit"),
    ("scip_build", ["--cases", "knapsack"], "need NAME=SIZE"),
    ("scip_build", ["--cases", "bogus=3"], "need NAME=SIZE"),
    ("scip_build", ["--cases", "knapsack=0"], "need NAME=SIZE"),
    ("integral_rows", ["--sizes", "0"], "at least 1"),
    ("cut_guard", ["--sizes", "0"], "at least 1"),
    ("cut_guard", ["--exponents", "5"], "at least 8"),
    ("cut_guard", ["--seeds", "0"], "--seeds must be >= 1"),
    ("fractional_rows", ["--models", "0"], "--models must be >= 1"),
    ("lazy_tsp", ["--sizes", "2"], "at least 3"),
    ("benders_facility", ["--scenarios", "0"], "at least 1"),
    ("benders_facility", ["--facilities", "0"], "--facilities"),
    ("benders_facility", ["--time-limit", "-1"], "--time-limit"),
    ("lazy_tsp", ["--seeds", "x"], "expected integers"),
    ("lazy_tsp", ["--time-limit", "0"], "--time-limit"),
    ("integral_rows", ["--seeds", "x"], "expected integers"),
    ("eob_evolution", ["--seeds", "1"], "seeds=1 is too few"),
    ("eob_evolution", ["--targets", "99"], "--targets"),
    ("solution_pool", ["--families", "bogus"], "--families: unknown 'bogus'"),
    ("solution_pool", ["--k", "0"], "--k"),
    ("solution_pool", ["--sizes", "setcover=0"], "FAMILY=SIZE"),
    ("pareto_front", ["--sizes", "3"], "at least 5"),
    ("pareto_front", ["--seeds", "x"], "expected integers"),
    ("pareto_build", ["--rows", "x"], "expected integers"),
    ("pareto_build", ["--size", "0"], "expected an integer >= 1"),
    ("solver_race", ["--families", "bogus"], "--families: unknown 'bogus'"),
    ("solver_race", ["--time-limit", "0"], "--time-limit must be positive"),
    ("lap_ranked", ["--k", "0"], "--k must be positive"),
    ("lap_ranked", ["--sizes", "1"], "an assignment needs N >= 2"),
    ("lap_ranked", ["--methods", "scipy"], "--methods must include warm"),
    ("lap_ranked", ["--generators", "bogus"], "--generators: unknown 'bogus'"),
    ("lap_ranked", ["--sizes", "6", "--columns", "5"], "each M must exceed every N"),
    ("lap_ranked_sparse", ["--gate", "0"], "--k and --gate must be positive"),
    ("lap_ranked_sparse", ["--sizes", "1"], "an assignment needs N >= 2"),
    ("lap_ranked_sparse", ["--methods", "dense"], "--methods must include sparse"),
    ("lap_ranked_sparse", ["--seed", "-1"], "--seed"),
    ("lap_sparse", ["--gate", "0"], "--gate must be positive"),
    ("lap_small", ["--cases", "uniform,bogus"], "--cases: unknown 'bogus'"),
    ("lap_rectangular", ["--shapes", "1"], "--shapes must exceed 1"),
    ("lap_rectangular", ["--generators", "bogus"], "--generators: unknown 'bogus'"),
    ("lap_rectangular", ["--max-seconds", "0"], "--max-seconds"),
    ("lap_small", ["--samples", "0"], "--samples"),
    ("lap_small", ["--sizes", "1"], "expected integers of at least 2"),
    ("lap_rectangular", ["--sizes", "100,1"], "expected integers of at least 2"),
    ("lap_sparse_share", ["--densities", "0.1,1.5"], "--densities must lie in (0, 1]"),
    ("lap_sparse_share", ["--densities", "x"], "--densities"),
    ("lap_sparse_share", ["--k", "0"], "--k must be positive"),
    ("lap_sparse", ["--sizes", "1"], "an assignment needs N >= 2"),
    ("lap_matching", ["--per-row", "0"], "--per-row must be positive"),
    ("lap_matching", ["--sizes", "1"], "a matching needs n >= 2"),
    ("lap_sparse", ["--scipy-limit", "0"], "--scipy-limit"),
    ("lap_given_duals", ["--noise", "0.1,0"], "--noise: expected a number > 0"),
    ("lap_given_duals", ["--generators", "bogus"], "--generators: unknown 'bogus'"),
    ("lap_given_duals", ["--sizes", "1"], "expected integers of at least 2"),
]


def assert_usage_error(capsys, call, fragment: str) -> None:
    """`call()` exits 2 and its stderr ends in one error line containing `fragment`."""
    with pytest.raises(SystemExit) as exc:
        call()
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    last = captured.err.strip().splitlines()[-1]
    assert "error: " in last and fragment in last


@pytest.mark.parametrize(("name", "argv", "fragment"), BAD_ARGS,
                         ids=[f"{n}:{' '.join(a)}" for n, a, _ in BAD_ARGS])
def test_bad_argument_is_a_usage_error(capsys, name, argv, fragment):
    assert_usage_error(capsys, lambda: bench(name).main(argv), fragment)


def test_pmvb_unwritable_json_fails_up_front(capsys, tmp_path):
    path = tmp_path / "missing" / "out.json"
    assert_usage_error(capsys, lambda: bench("pmvb_vs_scip").main(["--json", str(path)]),
                       "--json")


def test_pmvb_json_check_leaves_files_as_they_were(tmp_path):
    check_writable = bench("pmvb_vs_scip").check_writable
    fresh, kept = tmp_path / "fresh.json", tmp_path / "kept.json"
    kept.write_text("{}")
    check_writable(str(fresh), argparse.ArgumentParser())
    check_writable(str(kept), argparse.ArgumentParser())
    assert not fresh.exists()
    assert kept.read_text() == "{}"


def test_eob_unwritable_run_dir_fails_up_front(capsys, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    argv = ["--run-dir", str(blocker / "run")]
    assert_usage_error(capsys, lambda: bench("eob_evolution").main(argv), "--run-dir")


def test_eob_hypervolume_ratio_only_from_a_positive_start():
    change = bench("eob_evolution").hypervolume_change
    assert change([0.0, 0.1374]) == "from 0 to 0.1374 (grew)"
    assert change([0.5, 1.0]) == "0.5000 -> 1.0000 (x2.00, grew)"


def test_pmvb_interrupted_solve_is_an_interrupt(capsys, monkeypatch):
    module = bench("pmvb_vs_scip")
    monkeypatch.setattr(module, "solve", lambda *a, **k: Result(Status.INTERRUPTED, "scip"))
    code = module.main(["--families", "mknapsack", "--n-instances", "1", "--size", "10",
                        "--predictors", "lp"])
    captured = capsys.readouterr()
    assert code == 130
    assert "interrupted" in captured.err
    assert "on 0/0 families" in captured.out.strip().splitlines()[-1]


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_qubo_interrupt_prints_partial_summary_and_returns_130(capsys, monkeypatch):
    module = bench("qubo_local_minima")
    monkeypatch.setattr(module, "make_case", _interrupt)
    assert module.main(["--problems", "knapsack", "--knapsack-sizes", "5"]) == 130
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("SUMMARY starts=200")


def test_lap_interrupt_prints_partial_table_and_returns_130(capsys, monkeypatch):
    module = bench("lap_warmstart")
    monkeypatch.setattr(module, "load", lambda: None)
    monkeypatch.setattr(module, "solve_lap", lambda *a, **k: None)
    monkeypatch.setattr(module, "_run", _interrupt)
    assert module.main(["--sizes", "16", "--generators", "uniform"]) == 130
    captured = capsys.readouterr()
    assert "interrupted: partial table" in captured.err
    assert captured.out.strip().splitlines()[-1].startswith("SUMMARY lap_warmstart")


def test_lap_heuristic_interrupt_prints_partial_table_and_returns_130(capsys, monkeypatch):
    module = bench("lap_heuristic")
    monkeypatch.setattr(module, "warm_up", lambda: None)
    monkeypatch.setattr(module, "solve", lambda *a, **k: Result(Status.INTERRUPTED, "scip"))
    assert module.main(["--families", "euclid", "--sizes", "5", "--n-instances", "1"]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith("SUMMARY lap_heuristic: no instance finished")


def test_pmvb_baselines_and_start_mode_agree_on_the_optimum(capsys):
    code = bench("pmvb_vs_scip").main([
        "--families", "setcover", "--size", "60", "--n-instances", "2", "--predictors", "lp",
        "--modes", "start", "--baselines", "given-optimum,two-pass", "--time-limit", "60"])
    out = capsys.readouterr().out
    assert code == 0
    for label in ("scip-given-optimum", "scip-two-pass", "pmvb-lp-start"):
        assert f"{label} " in out and out.split(label)[1].splitlines()[0].endswith("2/2")
    assert "optimum disagreements 0/6 compared solves" in out.strip().splitlines()[-1]


def test_pmvb_merge_pools_runs_and_refuses_repeated_seeds(capsys, tmp_path):
    main = bench("pmvb_vs_scip").main
    common = ["--families", "mknapsack", "--size", "12", "--n-instances", "1",
              "--predictors", "lp", "--time-limit", "30"]
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert main([*common, "--seed-start", "7", "--json", str(first)]) == 0
    assert main([*common, "--seed-start", "8", "--json", str(second)]) == 0
    capsys.readouterr()
    assert main(["--merge", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "mknapsack (size 12, 2 instances)" in out
    assert out.split("pmvb-lp ")[1].splitlines()[0].endswith("2/2")
    assert "optimum disagreements 0/2 compared solves; 2 instances/family" in out
    assert_usage_error(capsys, lambda: main(["--merge", str(first), str(first)]),
                       "repeats seeds")
    assert_usage_error(capsys, lambda: main(["--merge", str(tmp_path / "none.json")]),
                       "cannot read")


def test_lap_pyomo_runs_small_sizes_and_checks_every_objective(capsys):
    code = bench("lap_pyomo").main(["--sizes", "6,12", "--generator", "low_rank"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert lines[-1].startswith("SUMMARY lap_pyomo: highs/lap median")
    assert "objectives equal scipy's in 6/6 solves" in lines[-1]
    assert [line.split(" | ")[-1] for line in lines[-3:-1]] == ["3/3 |", "3/3 |"]


def test_scip_build_compares_identical_models(capsys):
    code = bench("scip_build").main(["--cases", "knapsack=300,tsp=6"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert [line.split(" | ")[-1] for line in lines[2:4]] == ["yes |", "yes |"]
    assert "identical SCIP models 2/2" in lines[-1]


def test_integral_rows_solves_the_traps_again_and_exactly(capsys):
    code = bench("integral_rows").main(["--sizes", "30", "--r", "1000", "--seeds", "0"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert [line.split(" | ")[5] for line in lines[2:-1]] == ["no", "no", "yes", "yes"]
    assert "solved again 2/4; same optimum 4/4; packings fit 4/4" in lines[-1]


def test_cut_guard_is_right_where_the_cuts_are_not(capsys):
    code = bench("cut_guard").main(["--sizes", "8", "--exponents", "10", "--seeds", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and lines[2].startswith("| n=8 w~1e10 | 3 | 0 | ")
    assert "wrong 'optimal' guarded 0/3, with cuts " in lines[-1]


def test_fractional_rows_counts_plain_scips_wrong_verdicts(capsys):
    code = bench("fractional_rows").main(["--models", "6", "--seed-start", "10"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and lines[2].startswith("| pyscipopt | 6 | 4 | 2 |")
    assert "coplug scip 0/6" in lines[-1]


def test_lazy_tsp_every_method_finds_the_same_tour_length(capsys):
    code = bench("lazy_tsp").main(["--sizes", "8", "--seeds", "0,1", "--mtz-max", "8"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert all(line.endswith("| yes |") and "+" not in line for line in lines[2:4])
    assert "same tour length 2/2; time limit hit 0" in lines[-1]


def test_lazy_tsp_interrupt_prints_partial_table_and_returns_130(capsys, monkeypatch):
    module = bench("lazy_tsp")
    monkeypatch.setattr(module, "run_instance", _interrupt)
    assert module.main(["--sizes", "8", "--seeds", "0"]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and "no instance finished" in captured.out


def test_benders_facility_every_method_reaches_the_same_optimum(capsys):
    code = bench("benders_facility").main(["--scenarios", "3", "--seeds", "0",
                                           "--facilities", "4", "--customers", "8"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and lines[2].endswith("| yes |") and "+" not in lines[2]
    assert "same optimum 1/1; time limit hit 0" in lines[-1]


def test_lap_pyomo_skips_a_solver_predicted_past_the_limit():
    module = bench("lap_pyomo")
    slow = module.Row(10, 0.0, 0.0, {"scip": module.Cell("scip", 2.0, "optimal")})
    assert module._predicted(slow, "scip", 20) == 16.0
    timed_out = module.Row(10, 0.0, 0.0, {"scip": module.Cell("scip", 2.0, "time_limit")})
    assert module._predicted(timed_out, "scip", 20) == float("inf")


def test_solution_pool_checks_every_point_and_k_best_and_stops_on_ctrl_c(capsys, monkeypatch):
    module = bench("solution_pool")
    code = module.main(["--families", "indset", "--sizes", "indset=20", "--seeds", "0",
                        "--k", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert lines[-1].startswith("SUMMARY solution_pool:")
    assert "infeasible points 0" in lines[-1] and "k_best equal to enum 2/2" in lines[-1]
    assert lines[2].split(" | ")[-1] == "0 |"
    monkeypatch.setattr(module, "run_case", _interrupt)
    assert module.main(["--families", "indset", "--seeds", "0"]) == 130
    assert "no case finished" in capsys.readouterr().out


def test_pareto_front_agrees_across_solvers_and_weighted_sums_stay_on_the_front(capsys):
    code = bench("pareto_front").main(["--sizes", "8", "--seeds", "0"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert lines[2].split(" | ")[5] == "yes"
    assert "wsum points on it: 1/1" in lines[-1]


def test_pareto_build_finds_the_same_front_built_once_and_per_stage(capsys):
    code = bench("pareto_build").main(["--rows", "0,300", "--size", "6"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and len(lines) == 7
    assert all(line.endswith("| yes |") for line in lines[2:6])
    assert "same front 4/4" in lines[-1]


def test_solver_race_checks_each_race_against_both_solvers(capsys):
    code = bench("solver_race").main(["--families", "mknapsack", "--seeds", "0"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert lines[2].endswith("| yes |") and "same optimum 1/1" in lines[-1]


def test_lap_ranked_runs_small_sizes_and_every_method_agrees(capsys):
    code = bench("lap_ranked").main(["--sizes", "6,8", "--k", "30", "--generators",
                                     "uniform,geometric", "--scip-max-n", "6"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert lines[-1].startswith("SUMMARY lap_ranked: scipy/warm")
    assert "same costs 4/4 rows compared (of 4); fallbacks 0" in lines[-1]
    assert "scip/warm" in lines[-1] and "2 cells" in lines[-1]


def test_lap_ranked_wide_frames_agree_with_textbook_murty(capsys):
    code = bench("lap_ranked").main(["--sizes", "6,8", "--k", "12", "--generators",
                                     "uniform,geometric", "--columns", "30,60",
                                     "--methods", "warm,scipy"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "| uniform | 6 x 30 |" in "\n".join(lines)
    assert "same costs 8/8 rows compared (of 8); fallbacks 0" in lines[-1]


@pytest.mark.parametrize("kind", ["assignment", "matching"])
def test_lap_ranked_sparse_agrees_with_the_dense_copy_and_scipy(capsys, kind: str):
    code = bench("lap_ranked_sparse").main(["--sizes", "12,40", "--k", "20", "--gate", "3",
                                            "--kind", kind, "--dense-max-n", "12"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and f"best {kind}s" in "\n".join(lines)
    assert "same costs 2/2 rows compared (of 2); fallbacks 0" in lines[-1]
    assert "dense/sparse" in lines[-1] and "1 sizes" in lines[-1]
    assert "sparse up to N=40" in lines[-1]


def test_lap_sparse_agrees_with_lapmod_and_scipy_and_stops_scipy_at_its_limit(
    capsys, monkeypatch
):
    module = bench("lap_sparse")
    code = module.main(["--sizes", "30,60", "--gate", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "same objective 2/2" in lines[-1]
    assert "scipy/coplug" in lines[-1] and "on 2 sizes" in lines[-1]

    def stuck(c):
        time.sleep(60)

    monkeypatch.setattr(module, "scipy_cost", stuck)
    code = module.main(["--sizes", "30,60", "--gate", "3", "--scipy-limit", "0.5"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "stopped at N=30" in lines[-1] and "| > 0.5 |" in lines[-3]
    assert "same objective 2/2" in lines[-1]


def test_lap_matching_agrees_across_starts_and_with_scipy(capsys):
    code = bench("lap_matching").main(["--sizes", "30,80", "--per-row", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "objectives agree on 2/2 sizes" in lines[-1]
    assert lines[-2].startswith("| 80 | 160 |") and lines[-2].endswith("| yes |")


def test_lap_sparse_share_ranks_both_ways_alike(capsys):
    code = bench("lap_sparse_share").main(["--sizes", "40", "--densities", "0.1,0.5",
                                           "--k", "15"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "same costs 2/2" in lines[-1] and "N=40" in lines[-1]
    assert lines[-3].startswith("| 40 | 0.1 |") and lines[-2].endswith("| yes |")


def test_lap_ranked_matchings_agree_with_scipy_and_scip(capsys):
    code = bench("lap_ranked").main(["--kind", "matching", "--sizes", "5,7", "--k", "25",
                                     "--generators", "low_rank", "--scip-max-n", "5"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "best matchings" in "\n".join(lines)
    assert "same costs 2/2 rows compared (of 2); fallbacks 0" in lines[-1]
    assert "1 cells" in lines[-1]


def test_lap_small_agrees_with_scipy_lap_and_its_kernel_path(capsys, monkeypatch):
    module = bench("lap_small")
    code = module.main(["--sizes", "6,20", "--samples", "1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "same objective 8/8" in lines[-1]
    assert "scipy/coplug" in lines[-1] and "lapmod/coplug" in lines[-1]
    assert module.small.MAX_ENTRIES > 0 and module.sparse.is_canonical(
        *(lambda c: (c.indptr, c.indices, c.data, c.shape[1]))(module.gated(5)))
    monkeypatch.setattr(module, "solve_lap", lambda c: type("S", (), {"cost": -1.0})())
    module.main(["--sizes", "6", "--cases", "uniform", "--samples", "1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert "same objective 0/1" in lines[-1] and lines[-2].endswith("| NO |")


def test_lap_small_interrupt_prints_partial_table_and_returns_130(capsys, monkeypatch):
    module = bench("lap_small")
    real = module.run_row
    calls = []

    def second_interrupts(*args):
        calls.append(args)
        return real(*args) if len(calls) == 1 else _interrupt()

    monkeypatch.setattr(module, "run_row", second_interrupts)
    assert module.main(["--sizes", "6,8", "--cases", "gated", "--samples", "1"]) == 130
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("SUMMARY lap_small") and "same objective 1/1" in lines[-1]


def test_lap_rectangular_agrees_with_scipy_and_lapjv_and_skips_past_its_limit(capsys):
    module = bench("lap_rectangular")
    code = module.main(["--sizes", "20,40", "--shapes", "1.5", "--generators",
                        "geometric,transport"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "same objective 4/4" in lines[-1] and "4 rows)" in lines[-1]
    assert "| geometric | 20 x 30 |" in "\n".join(lines)
    code = module.main(["--sizes", "20,2000", "--shapes", "1.5", "--generators", "uniform",
                        "--max-seconds", "1e-6"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and lines[-2].endswith("| - | - | - | - | yes |")
    assert lines[-2].startswith("| uniform | 2000 x 3000 |") and "1 rows)" in lines[-1]


def test_lap_rectangular_warm_columns_agree_and_count_fallbacks(capsys):
    module = bench("lap_rectangular")
    code = module.main(["--warm", "--sizes", "30,60", "--shapes", "1.5,2", "--generators",
                        "uniform,transport"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "same objective 8/8" in lines[-1] and "warm fallbacks 0" in lines[-1]
    assert "| warm | noisy |" in lines[-11] and "noisy/coplug" in lines[-1]


def test_lap_given_duals_sets_bad_duals_aside_and_agrees(capsys):
    code = bench("lap_given_duals").main(["--sizes", "150,200", "--generators",
                                          "uniform,low_rank", "--noise", "0.1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and "same objective 4/4" in lines[-1] and "fallbacks 0" in lines[-1]
    rows = [line for line in lines if line.startswith("| uniform") or line.startswith("| low")]
    assert [row.endswith("cold) | yes |") for row in rows] == [True, True, False, False]
    assert "set aside 2/8" in lines[-1]


def test_iis_large_finds_the_chain_both_ways(capsys):
    code = bench("iis_large").main(["--sizes", "40,80", "--chain", "4"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert [line.split(" | ")[5] for line in lines[2:4]] == ["yes, yes", "yes, yes"]
    assert [line.split(" | ")[-1] for line in lines[2:4]] == ["yes |", "yes |"]
    assert "farkas exact 2/2, scip-iis exact 2/2, files exact 2/2" in lines[-1]


def test_input_scaling_times_every_case_at_two_sizes(capsys):
    code = bench("input_scaling").main(["--scale", "0.01", "--repeat", "1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert [line.split(" | ")[0] for line in lines[2:-1]] == [
        f"| {case}" for case in ("openpit", "cauction", "fair_sbm", "euc_2d", "csv", "orlib")
        for _ in range(2)]
    assert lines[-1].startswith("SUMMARY input_scaling: steepest growth")


def test_iis_large_calls_a_wrong_bound_not_exact():
    from coplug.plugins.iis import InfeasibleSubsystem

    module = bench("iis_large")
    m = module.chained(3, 2)
    rows = [m.chain[0], m.chain[1], m.top]
    assert module.exact(InfeasibleSubsystem(rows, [(m.z[0], "lower")], True, "highs"), m, 2)
    assert not module.exact(InfeasibleSubsystem(rows, [(m.x[0], "lower")], True, "highs"), m, 2)


def test_huge_rows_divided_scip_is_right_where_undivided_is_not(capsys):
    code = bench("huge_rows").main(["--kinds", "cover-int,cover-lp", "--exponents", "9",
                                    "--seeds", "2"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and lines[2].startswith("| cover-int a~1e9 | 2 | ")
    assert "scip-undivided 2/4, scip 0/4, highs-undivided 0/4, highs 0/4" in lines[-1]


def test_huge_rows_divided_highs_is_right_where_undivided_is_not(capsys):
    """Seed 8 of the small fractional packings at 1e10: HiGHS's presolve, undivided."""
    code = bench("huge_rows").main(["--kinds", "pack-small", "--exponents", "10",
                                    "--seeds", "9"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and lines[2].startswith("| pack-small a~1e10 | 9 | ")
    assert "highs-undivided 1/9, highs 0/9" in lines[-1]


def test_lap_sparse_random_pattern_agrees_with_lapmod_and_scipy(capsys):
    module = bench("lap_sparse")
    c = module.random_pattern(50, 3, seed=1)
    assert c.shape == (50, 50) and (c.diagonal() > 0).all() and c.nnz <= 200
    assert module.main(["--pattern", "random", "--sizes", "40,80", "--gate", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "same objective 2/2" in lines[-1] and lines[-6].startswith("random, gate 3")
