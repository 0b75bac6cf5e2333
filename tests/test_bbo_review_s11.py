"""Review s11 fixes of coplug.formulations.bbo: sound interval bounds for acos, cos and huge
integral powers (each let a pole through the proof), subexpressions the program hides that
the Pyomo model cannot evaluate, max/min forms that lose the value in the model, a
negative seed, an overflowing box width, box flags a bbob:/.json program ignored, and LLM
replies without text."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from coplug.formulations.bbo import numpy_evaluator, to_pyomo
from coplug.formulations.bbo.evolve import EvolutionConfig
from coplug.formulations.bbo.export import pyomo_script
from coplug.formulations.bbo.grammar import ProgramError, parse
from coplug.formulations.bbo.intervals import IntervalEvaluator
from coplug.formulations.bbo.llm_proposer import LLMConfig, LLMProposer
from coplug.formulations.bbo.pyomo_model import pyomo_objective_at
from coplug.formulations.bbo.validate import load
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError

# cos(-1.56834103) is 0.00245..., near a zero of cos: an ulp of the shifted argument
# sin(a + pi/2) was more than the EPS rounding of the result.
_T0 = -1.56834103
_COS_T0 = float(np.cos(_T0))


@pytest.mark.parametrize(("text", "dim", "box", "pole"), [
    ("1 / (acos(0.3 + (x[0] - 0.7) ** 2) - acos(0.3))", 1, (0.0, 1.0), [0.7]),
    ("1 / (1 - (cos(x[0] - 0.3) * cos(x[1] - 0.3) * -1) ** 2000000.0)", 2, (-2.0, 2.0),
     [0.3, 0.3]),
    (f"1 / (cos(-max({-_T0!r}, (x[0] - 0.3) ** 2 - {_T0!r})) - {_COS_T0!r})", 1, (0.0, 1.0),
     [0.3]),
])
def test_a_pole_the_interval_bounds_used_to_prove_away_is_rejected(text, dim, box, pole):
    program = parse(text, dim, *box)
    assert not np.isfinite(numpy_evaluator(program)(np.array([pole]))[0])
    with pytest.raises(ProgramError, match="denominator .* reaches 0"):
        load(text, dim, *box)


@pytest.mark.parametrize(("text", "lower", "upper"), [
    ("acos(x[0])", 0.3, 0.9), ("acos(x[0])", -0.7, -0.2), ("cos(x[0])", -1.5683410, -1.5),
    ("cos(x[0])", 1.5, 1.5707963), ("(x[0] - 0.1) ** 2000000.0", -0.95, 0.5),
    ("x[0] ** 3000001.0", -1.0, -0.999),
])
def test_interval_bounds_contain_the_values_at_the_ends_and_inside(text, lower, upper):
    program = parse(text, 1, lower, upper)
    X = np.linspace(lower, upper, 201)[:, None]
    values = numpy_evaluator(program)(X)
    boxes = (X, X), (np.array([[lower]]), np.array([[upper]]))
    for lo_box, hi_box in boxes:
        lo, hi = IntervalEvaluator(program, lo_box, hi_box).bounds(program.body)
        assert np.all(lo.ravel() <= values) and np.all(values <= hi.ravel())


@pytest.mark.parametrize(("text", "named"), [
    ("a = tanh(x[1]) * -1.0 / 0.0\nx[0] ** 2", r"tanh\(x\[1\]\) \* -1.0 / 0.0"),
    ("min(exp(exp(3 * x[0])), 1.0) + x[1] ** 2", r"exp\(exp\(3.0 \* x\[0\]\)\)"),
    ("0 * max(x[0] * 3e307, -x[0] * 3e307) + x[1]", "spread"),
])
def test_a_non_finite_subexpression_the_program_hides_is_rejected(text: str, named: str):
    program = parse(text, 2)
    assert np.isfinite(numpy_evaluator(program)(np.array([[4.0, 1.0]]))[0])
    with pytest.raises(ProgramError, match=f"(?s)(?=.*non_finite)(?=.*{named})(?=.*not finite)"):
        load(text, 2)


@pytest.mark.parametrize("text", ["min(x[1], 1e21 + x[0])",
                                  "max(x[1], 1e-3 * x[0] - 1e17) + x[0]"])
def test_a_max_min_the_pyomo_form_loses_is_rejected(text: str) -> None:
    program = parse(text, 2)
    point = np.array([0.5, 2.25])
    value = numpy_evaluator(program)(point[None])[0]
    assert abs(pyomo_objective_at(to_pyomo(program), point) - value) > 1.0
    with pytest.raises(ProgramError, match="operands differ too much in magnitude"):
        load(text, 2)


@pytest.mark.parametrize("text", ["max(x[0], -3.0) + min(x[1], 2 * x[0])",
                                  "sum(max(x, [1e5, -2.0]) ** 2) * 1e-6"])
def test_ordinary_max_min_load_and_agree_with_model_and_script(text: str) -> None:
    program = load(text, 2)
    namespace: dict = {}
    exec(compile(pyomo_script(program), "<script>", "exec"), namespace)
    X = np.random.default_rng(0).uniform(-5, 5, (5, 2))
    expected = numpy_evaluator(program)(X)
    for model in (to_pyomo(program), namespace["model"]):
        np.testing.assert_allclose([pyomo_objective_at(model, x) for x in X], expected,
                                   rtol=1e-12)


def test_a_negative_evolution_seed_is_a_one_line_error(tmp_path, capsys) -> None:
    with pytest.raises(InputError, match="seed must be a non-negative integer"):
        EvolutionConfig(seeds=3, seed=-1)
    run_dir = tmp_path / "run"
    assert main(["bbo", "evolve", "--quiet", "--seed", "-1", "--run-dir", str(run_dir)]) == 2
    assert "seed must be a non-negative integer" in capsys.readouterr().err
    assert not run_dir.exists()


def test_a_box_whose_width_overflows_is_named() -> None:
    with pytest.raises(InputError, match="too wide"):
        parse("x[0]", 1, -1e308, 1e308)


@pytest.mark.parametrize(("spec", "flags"), [
    ("bbob:3", ["--lower", "0", "--upper", "1"]), ("bbob:3", ["--upper", "4"]),
    ("FILE", ["--lower", "0"]), ("FILE", ["--dim", "2"]),
])
def test_box_flags_a_bbob_or_json_program_does_not_have_are_refused(tmp_path, capsys,
                                                                   spec: str, flags) -> None:
    path = tmp_path / "f3.json"
    assert main(["bbo", "export", "bbob:3", "--dim", "3", "-o", str(path)]) == 0
    spec = str(path) if spec == "FILE" else spec
    capsys.readouterr()
    assert main(["bbo", "export", spec, *flags]) == 2
    assert f"drop {flags[0]}" in capsys.readouterr().err
    assert main(["bbo", "export", spec, "--dim", "3", "--lower", "-5"]) == 0
    assert "dim=3" in capsys.readouterr().out


class _Reply(BaseHTTPRequestHandler):
    """A chat endpoint whose replies carry no text (null, a list), then a program."""

    replies = [None, ["x[0]"], "```program\nsum(x ** 2)\n```"]

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        content = self.replies[self.server.served % len(self.replies)]
        self.server.served += 1
        body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_reply_without_text_counts_as_no_program() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Reply)
    server.served = 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = LLMConfig(f"http://127.0.0.1:{server.server_port}/v1", "m", retries=0)
        proposer = LLMProposer(2, config)
        programs = proposer.propose([], 3, np.random.default_rng(0), {})
    finally:
        server.shutdown()
        server.server_close()
    assert [p.text for p in programs] == ["sum(x ** 2.0)\n"]
    assert proposer.stats["rejected_no_program"] == 2
    assert proposer.stats["rejected_unsafe"] == 0


@pytest.mark.parametrize("flag", ["--budget", "--max-nodes", "--population", "--generations"])
def test_evolve_size_flags_are_checked_before_any_work(flag: str, tmp_path, capsys) -> None:
    from coplug.plugins.cli import main as coplug_main

    with pytest.raises(SystemExit) as exc:
        coplug_main(["bbo", "evolve", flag, "0", "--run-dir", str(tmp_path / "run")])
    assert exc.value.code == 2
    assert f"argument {flag}: expected an integer >= 1, got 0" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
