"""Review fixes of coplug.formulations.bbo: no false certificates, usable BBOB programs,
safe run directories, one-line CLI errors and exact Pyomo forms of max/min/abs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.certify import certify
from coplug.formulations.bbo.evaluate import check_points, numpy_evaluator
from coplug.formulations.bbo.grammar import ProgramError, parse
from coplug.formulations.bbo.validate import load
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError

POLE = "-1 / (x[0] - 0.3) ** 2"
LOG_POLE = "log((x[0] - 0.3) ** 2 + (x[1] - 0.2) ** 2)"


@pytest.mark.parametrize(("text", "what"), [
    (POLE, "denominator"), (LOG_POLE, "log argument"),
    ("sum(x) + ((x[1] - 0.3) ** 2) ** -0.5", "denominator")])
def test_load_rejects_an_expression_that_touches_zero(text: str, what: str) -> None:
    with pytest.raises(ProgramError) as info:
        load(text, 2)
    assert info.value.kind == "non_finite" and what in str(info.value)


@pytest.mark.parametrize("text", [
    "1 / (x[0] * x[0] - 2 * x[0] + 2)", "z = x - [0.1, 0.2]\nlog(sum(z * z) + 1e-300)",
    "sum(1 / (1.01 + sin(x)))", "log(1.0 + abs(x[0] - x[1]))", "1 / (floor(x[0]) + 0.5)"])
def test_load_keeps_denominators_and_logs_that_stay_away_from_zero(text: str) -> None:
    assert load(text, 2).dim == 2


def test_every_bbob_program_passes_the_pole_proof() -> None:
    for fid in range(1, 25):
        assert bbob_problem(fid, 3).fid == fid


def test_certify_refuses_a_program_without_minimum_and_says_why() -> None:
    for text in (POLE, LOG_POLE):
        cert = certify(parse(text, 2), time_limit=5.0)  # parse skips validation
        assert not cert.certified
        assert cert.result.extra["error"]


def test_solve_command_rejects_a_touching_log_in_one_line(capsys) -> None:
    assert main(["bbo", "solve", LOG_POLE, "--dim", "2", "--time-limit", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "log argument" in err and "\n" not in err


def test_certify_checks_scip_against_a_local_descent_on_f19() -> None:
    problem = bbob_problem(19, 2)  # without a start SCIP closes at -38.47946 > f_opt
    cert = certify(problem.program, time_limit=10.0, start=False)
    assert not cert.certified
    assert "below SCIP's bound" in cert.result.extra["error"]


def test_a_known_point_below_the_bound_refutes_a_certificate() -> None:
    from coplug.formulations.bbo.certify import _challenge

    program = load("-exp(-10000.0 * sum((x - [1.2345, -2.3456]) ** 2))", 2)  # a narrow well
    far = np.array([4.0, 4.0])
    assert _challenge(program, far, 0.0, 1e-6, known=(), samples=64) is None
    reason = _challenge(program, far, 0.0, 1e-6, known=[np.array([1.2345, -2.3456])],
                        samples=64)
    assert reason is not None and "below SCIP's bound" in reason


def test_solve_command_certifies_bbob_f19_from_its_known_optimum(capsys) -> None:
    assert main(["bbo", "solve", "bbob:19", "--dim", "2", "--time-limit", "10"]) == 0
    out = capsys.readouterr().out
    assert "certified  True" in out
    objective = float(next(line for line in out.splitlines() if line.startswith("objective"))
                      .split()[1])
    assert objective == pytest.approx(bbob_problem(19, 2).f_opt, abs=1e-6)


def test_certify_starts_scip_from_the_best_sample() -> None:
    problem = bbob_problem(15, 2)  # rotated Rastrigin: SCIP found no point in 30 s unaided
    cert = certify(problem.program, time_limit=3.0)
    assert cert.x is not None and not cert.certified
    assert cert.numpy_value == pytest.approx(cert.objective, rel=1e-6)


def test_bent_cigar_ships_at_dim_10_but_proposals_keep_the_limit() -> None:
    problem = bbob_problem(12, 10)
    f = numpy_evaluator(problem.program)
    assert f(problem.x_opt[None])[0] == pytest.approx(problem.f_opt)
    assert np.abs(f(check_points(problem.program))).max() > 1e12
    with pytest.raises(ProgramError, match="limit 1e\\+12"):
        load(problem.program.text, 10)


TINY = {"dim": 2, "targets": (1,), "population": 4, "generations": 2, "budget": 20,
        "seeds": 3, "sample": 40}


def test_run_dir_that_is_a_file_fails_before_any_work(tmp_path) -> None:
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    blocker = tmp_path / "run"
    blocker.write_text("")
    with pytest.raises(InputError, match="is a file"):
        evolve(EvolutionConfig(**TINY), run_dir=blocker, progress=False,
               callback=pytest.fail)


def test_non_empty_run_dir_needs_overwrite_which_removes_only_an_earlier_run(tmp_path) -> None:
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    (tmp_path / "front").mkdir()
    (tmp_path / "front" / "program_0099.py").write_text("stale")
    (tmp_path / "notes.txt").write_text("mine")
    config = EvolutionConfig(**TINY | {"generations": 0})
    with pytest.raises(InputError, match="--overwrite"):
        evolve(config, run_dir=tmp_path, progress=False)
    result = evolve(config, run_dir=tmp_path, progress=False, overwrite=True)
    fronts = sorted(p.name for p in (tmp_path / "front").iterdir())
    assert fronts == sorted(f"program_{c.id:04d}.py" for c in result.front)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_interrupted_run_keeps_its_finished_generations(tmp_path) -> None:
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    def stop(gen: int, population: list) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evolve(EvolutionConfig(**TINY), run_dir=tmp_path, progress=False, callback=stop)
    history = json.loads((tmp_path / "history.json").read_text())
    assert history["generations_done"] == 1 and not history["finished"]
    assert len((tmp_path / "programs.jsonl").read_text().splitlines()) >= TINY["population"]
    front = json.loads((tmp_path / "pareto_front.json").read_text())
    assert len(list((tmp_path / "front").glob("program_*.py"))) == len(front) >= 1


def _one_line_error(capsys, argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("coplug: error:") and needle in err and "\n" not in err


def test_export_to_a_missing_directory_names_the_path(tmp_path, capsys) -> None:
    target = tmp_path / "nodir" / "f1.nl"
    for fmt in ("nl", "json"):
        _one_line_error(capsys, ["bbo", "export", "bbob:1", "--dim", "2", "--format", fmt,
                                 "-o", str(target.with_suffix(f".{fmt}"))], "cannot write")


@pytest.mark.parametrize(("fields", "needle"), [
    ({"dim": "two"}, "'dim' must be an integer"), ({"lower": None}, "'lower' must be a number"),
    ({"text": 3}, "'text' must be text"), ({"body": {"nop": "x"}}, "string 'op'"),
    ({"lets": [["a"]]}, "[name, tree] pairs"), ({"body": {"op": "vec", "value": "ab"}}, "numbers"),
    ({"body": {"op": "add", "args": 3}}, "must be a list")])
def test_program_json_with_bad_fields_is_one_line_error(tmp_path, capsys, fields: dict,
                                                        needle: str) -> None:
    data = {"format": "coplug-bbo-program", "dim": 2, "text": "sum(x ** 2)", "lower": -5,
            "upper": 5, "body": {"op": "num", "value": 1.0}} | fields
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    _one_line_error(capsys, ["bbo", "solve", str(path)], needle)


def test_evolve_arguments_are_checked_up_front(tmp_path, capsys) -> None:
    base = ["bbo", "evolve", "--quiet", "--run-dir", str(tmp_path / "run")]
    _one_line_error(capsys, [*base, "--targets", "1", "--target-program",
                             str(tmp_path / "missing.json")], "missing.json: no such file")
    _one_line_error(capsys, [*base, "--targets", "3-1"], "'3-1' is reversed")
    _one_line_error(capsys, [*base, "--targets", "1", "--proposer", "llm", "--llm-url",
                             "http://127.0.0.1:9/v1", "--llm-timeout", "-1"], "--llm-timeout")
    _one_line_error(capsys, ["bbo", "solve", str(tmp_path / "missing.json")], "does not exist")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("text", "point"), [
    ("log(abs(exp(80.0 * x[0]))) + x[1]", [4.5, 1.0]),
    ("log(max(exp(80.0 * x[0]), 1.0)) + x[1]", [4.5, 1.0]),
    ("max(1e9 + x[0], 1e9) - 1e9 + x[1]", [2.8924754825267627, 0.0]),
    ("log(max(1e-160 * x[0], 0.0) + 1e-300) + x[1]", [-1.0, 0.0]),
    ("min(x[0], -x[1]) + abs(x[1] * 1e-200)", [0.25, 3.0])])
def test_pyomo_max_min_abs_match_numpy_exactly(tmp_path, text: str, point: list[float]) -> None:
    import runpy

    from coplug.formulations.bbo.export import pyomo_script
    from coplug.formulations.bbo.pyomo_model import pyomo_objective_at, to_pyomo

    program = load(text, 2)
    x = np.array(point)
    expected = numpy_evaluator(program)(x[None])[0]
    assert pyomo_objective_at(to_pyomo(program), x) == expected
    script = tmp_path / "p.py"
    script.write_text(pyomo_script(program))
    assert pyomo_objective_at(runpy.run_path(str(script))["model"], x) == expected


def test_scip_takes_exact_abs_and_max_and_files_keep_them(tmp_path) -> None:
    from coplug.formulations.bbo.export import write_program

    program = load("max(x[0], 0.5 - x[1]) + abs(x[0] + 1.5) + (1.0 + abs(x[1])) ** x[0]", 2)
    cert = certify(program, time_limit=10.0)
    assert cert.certified
    for fmt in ("nl", "gms"):
        assert write_program(program, tmp_path / f"p.{fmt}").stat().st_size > 50
    assert "abs(" in (tmp_path / "p.gms").read_text()
