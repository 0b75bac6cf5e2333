"""Compilation: numpy, torch and the emitted Pyomo model agree; exports round-trip."""

from __future__ import annotations

import json
import runpy

import numpy as np
import pytest
import torch

from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.compile import (
    load,
    numpy_evaluator,
    program_from_json,
    program_to_json,
    pyomo_objective_at,
    pyomo_script,
    to_pyomo,
    torch_evaluator,
    write_program,
)
from coplug.formulations.bbo.proposers import SymbolicProposer
from coplug.plugins.errors import InputError, UnsupportedModelError

TEXT = ("z = [[0.6, 0.8], [-0.8, 0.6]] @ (x - [1.0, -2.0])\n"
        "q = max(z, 0.0) ** 1.5\n"
        "10 * (2 - sum(cos(2 * pi * z))) + sum(z ** 2) + prod(q) + tanh(x[1]) / (1 + abs(x[0]))")


def _programs():
    gen = SymbolicProposer(3)
    rng = np.random.default_rng(11)
    randoms = [gen.random_program(rng) for _ in range(6)]
    bbob = [bbob_problem(fid, 3).program for fid in (2, 3, 6, 7, 12, 16, 20, 23, 24)]
    return [load(TEXT, 2), *randoms, *bbob]


@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.text.splitlines()[-1][:30])
def test_numpy_torch_and_pyomo_agree(program) -> None:
    X = np.random.default_rng(0).uniform(program.lower, program.upper, (6, program.dim))
    y = numpy_evaluator(program)(X)
    t = torch_evaluator(program)(torch.as_tensor(X)).numpy()
    model = to_pyomo(program)
    p = np.array([pyomo_objective_at(model, row) for row in X])
    np.testing.assert_allclose(t, y, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(p, y, rtol=1e-9, atol=1e-9)


def test_torch_evaluator_is_differentiable() -> None:
    problem = bbob_problem(1, 3)
    x = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    torch_evaluator(problem.program)(x).sum().backward()
    expected = 2 * (x.detach().numpy()[0] - problem.x_opt)
    np.testing.assert_allclose(x.grad.numpy()[0], expected, rtol=1e-12)


def test_pyomo_model_shape_and_bounds() -> None:
    model = to_pyomo(load(TEXT, 2))
    assert len(model.x) == 2
    assert all(model.x[i].lb == -5.0 and model.x[i].ub == 5.0 for i in model.I)
    assert hasattr(model, "e_z") and hasattr(model, "e_q")


def test_pyomo_script_builds_the_same_model(tmp_path) -> None:
    program = bbob_problem(15, 2).program
    path = tmp_path / "model.py"
    path.write_text(pyomo_script(program))
    model = runpy.run_path(str(path))["model"]
    X = np.random.default_rng(1).uniform(-5, 5, (5, 2))
    values = [pyomo_objective_at(model, row) for row in X]
    np.testing.assert_allclose(values, numpy_evaluator(program)(X), rtol=1e-9)


def test_json_round_trip_and_tamper_detection(tmp_path) -> None:
    program = load(TEXT, 2)
    data = json.loads(json.dumps(program_to_json(program)))
    assert program_from_json(data) == program
    data["body"]["op"] = "sub"
    with pytest.raises(InputError, match="disagree"):
        program_from_json(data)
    with pytest.raises(InputError, match="not a"):
        program_from_json({"text": "x[0]"})


def test_write_formats(tmp_path) -> None:
    program = load(TEXT, 2)
    for fmt in ("py", "json", "nl", "gms"):
        path = write_program(program, tmp_path / f"m.{fmt}")
        assert path.stat().st_size > 100
    linear = load("3 * x[0] - x[1] + 1", 2)
    assert "x" in write_program(linear, tmp_path / "lin.lp").read_text()
    with pytest.raises(UnsupportedModelError, match=".lp"):
        write_program(program, tmp_path / "m.lp")
    with pytest.raises(InputError, match="unknown export format"):
        write_program(program, tmp_path / "m.xyz")


def test_evaluator_checks_columns() -> None:
    with pytest.raises(InputError, match="3 columns"):
        numpy_evaluator(load("sum(x)", 3))(np.zeros((4, 2)))
