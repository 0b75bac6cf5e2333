"""`coplug bbo export | solve | evolve` through the real command line entry point."""

from __future__ import annotations

import json
import re

import pytest

from coplug.formulations.bbo.portfolio import min_runs_for_significance
from coplug.plugins.cli import main


def test_export_json_and_py_to_stdout(capsys) -> None:
    assert main(["bbo", "export", "bbob:8", "--dim", "3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dim"] == 3 and data["format"] == "coplug-bbo-program"
    assert main(["bbo", "export", "sum(x ** 2)", "--dim", "2"]) == 0
    assert "pyo.ConcreteModel" in capsys.readouterr().out


def test_export_files_and_read_back(tmp_path, capsys) -> None:
    program = tmp_path / "p.json"
    assert main(["bbo", "export", "sum(x ** 4 - 3 * x ** 2 + x)", "--dim", "2",
                 "--format", "json", "-o", str(program)]) == 0
    for fmt in ("nl", "gms", "py"):
        out = tmp_path / f"p.{fmt}"
        assert main(["bbo", "export", str(program), "--format", fmt, "-o", str(out)]) == 0
        assert out.stat().st_size > 50
    assert main(["bbo", "solve", str(program), "--time-limit", "20"]) == 0
    out = capsys.readouterr().out
    assert "status     optimal" in out and "certified  True" in out


def test_bad_program_is_one_line_error(capsys) -> None:
    assert main(["bbo", "export", "__import__('os')", "--dim", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("coplug: error: program rejected (unsafe)") and "\n" not in err
    assert main(["bbo", "export", "sum(x)"]) == 2
    assert "--dim" in capsys.readouterr().err
    assert main(["bbo", "export", "sum(sin(x))", "--dim", "2", "--format", "nl"]) == 2
    assert "--output" in capsys.readouterr().err


def test_evolve_command(tmp_path, capsys) -> None:
    run_dir = tmp_path / "run"
    assert main(["bbo", "evolve", "--targets", "1", "--population", "2", "--generations", "1",
                 "--budget", "10", "--seeds", "3", "--run-dir", str(run_dir), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Pareto front" in out and "hypervolume" in out
    assert (run_dir / "pareto_front.json").exists() and (run_dir / "pareto_front.png").exists()


def test_seeds_help_names_the_computed_minimum(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["bbo", "evolve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    found = re.search(r"runs per solver, at least (\d+): .*5% Mann-Whitney", text)
    assert found and int(found.group(1)) == min_runs_for_significance(0.05)


def test_llm_flags_without_the_llm_proposer_are_refused(tmp_path, capsys) -> None:
    code = main(["bbo", "evolve", "--llm-url", "http://localhost:1/v1", "--run-dir",
                 str(tmp_path / "run")])
    assert code == 2
    assert "--llm-url configure the LLM proposer: add --proposer llm" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
