"""certify and `coplug bbo solve | export` on programs SCIP struggles with: answers, not crashes."""

from __future__ import annotations

import time

from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.certify import certify
from coplug.formulations.bbo.grammar import parse
from coplug.plugins.cli import main

POLE = "1 / (x[0] - 0.31415926) + x[1] ** 2"


def test_scip_error_becomes_an_uncertified_answer_with_a_reason() -> None:
    cert = certify(parse(POLE, 2), time_limit=5.0)  # parse skips validation: the pole stays
    assert not cert.certified and cert.x is None
    assert "SCIP stopped with an error" in cert.result.extra["error"]
    assert "pole" in cert.result.extra["error"]


def test_infeasible_answer_says_why() -> None:
    cert = certify(parse("log(x[0] - 10.0) + x[1]", 2), time_limit=5.0)
    assert not cert.certified and cert.result.status.value == "infeasible"
    assert "undefined somewhere on the box" in cert.result.extra["error"]


def test_solve_command_rejects_a_pole_in_one_line(capsys) -> None:
    assert main(["bbo", "solve", POLE, "--dim", "2", "--time-limit", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "changes sign on the box" in err and "\n" not in err


def test_gallagher_solve_and_export_finish(tmp_path, capsys) -> None:
    problem = bbob_problem(21, 2)
    start = time.perf_counter()
    cert = certify(problem.program, time_limit=2.0)
    assert time.perf_counter() - start < 15.0
    tol = 1e-6 * max(1.0, abs(problem.f_opt))
    assert cert.bound is None or cert.bound <= problem.f_opt + tol
    assert cert.objective is None or cert.objective >= problem.f_opt - tol
    out = tmp_path / "f21.gms"
    start = time.perf_counter()
    assert main(["bbo", "export", "bbob:21", "--dim", "2", "--format", "gms", "-o", str(out)]) == 0
    assert time.perf_counter() - start < 10.0
    assert "aux_def" in out.read_text()
    capsys.readouterr()
