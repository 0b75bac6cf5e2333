"""Compilation: numpy, torch and the emitted Pyomo model agree; exports round-trip."""

from __future__ import annotations

import json
import runpy
import time

import numpy as np
import pyomo.environ as pyo
import pytest
import torch
from pyomo.core.expr.visitor import StreamBasedExpressionVisitor

from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.certify import certify
from coplug.formulations.bbo.evaluate import numpy_evaluator, torch_evaluator
from coplug.formulations.bbo.export import (
    program_from_json,
    program_to_json,
    pyomo_script,
    write_program,
)
from coplug.formulations.bbo.features import as_box_function
from coplug.formulations.bbo.grammar import ProgramError
from coplug.formulations.bbo.proposers import SymbolicProposer
from coplug.formulations.bbo.pyomo_model import (
    COPY_LIMIT,
    POW_BASE_SHIFT,
    pyomo_objective_at,
    to_pyomo,
)
from coplug.formulations.bbo.validate import load
from coplug.plugins.errors import InputError, UnsupportedModelError

TEXT = ("z = [[0.6, 0.8], [-0.8, 0.6]] @ (x - [1.0, -2.0])\n"
        "q = max(z, 0.0) ** 1.5\n"
        "10 * (2 - sum(cos(2 * pi * z))) + sum(z ** 2) + prod(q) + tanh(x[1]) / (1 + abs(x[0]))")


def _programs():
    gen = SymbolicProposer(3)
    rng = np.random.default_rng(11)
    randoms = [gen.random_program(rng) for _ in range(6)]
    bbob = [bbob_problem(fid, 3).program for fid in (2, 3, 6, 7, 12, 16, 20, 21, 22, 23, 24)]
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
    direct = [pyomo_objective_at(to_pyomo(program), row) for row in X]
    np.testing.assert_allclose(values, direct, rtol=1e-12)
    # within 1e-7 of the program: the asymmetric transform's bases are shifted by 1e-9
    np.testing.assert_allclose(values, numpy_evaluator(program)(X), rtol=1e-7)


def test_a_power_with_a_variable_exponent_over_a_base_reaching_zero_goes_to_scip() -> None:
    problem = bbob_problem(12, 2)  # bent cigar: max(u, 0) ** (1 + beta * sqrt(max(u, 0)))
    model = to_pyomo(problem.program)
    assert any(var.lb == POW_BASE_SHIFT for var in model.aux.values())
    cert = certify(problem.program, time_limit=30, known=[problem.x_opt])
    assert cert.certified, cert.result.extra.get("error")
    assert abs(cert.objective - problem.f_opt) <= 1e-5 * abs(problem.f_opt)


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


class _TooLarge(Exception):
    """The expanded model passed the node budget."""


def _expanded_size(model: pyo.ConcreteModel, budget: int) -> int:
    """Nodes of the objective and constraints with every named Expression expanded, the way
    SCIP's interface and the writers see them; stops early past `budget`."""
    count = 0

    def enter(node):
        nonlocal count
        count += 1
        if count > budget:
            raise _TooLarge
        return None, None

    visitor = StreamBasedExpressionVisitor(enterNode=enter)
    for expr in [model.obj.expr, *(c.body for c in model.component_data_objects(pyo.Constraint))]:
        visitor.walk_expression(expr)
    return count


def _linear_budget(program) -> int:
    """A size linear in the program: each node copied at most COPY_LIMIT times per dimension."""
    return 4 * COPY_LIMIT * program.dim * program.size()


CHAIN = "t0 = x[0] + 0.5 * x[1]\n" + "".join(
    f"t{k} = sin(t{k - 1}) + 0.9 * cos(t{k - 1}) * max(t{k - 1}, x[{k % 2}])\n"
    for k in range(1, 60)) + "t59 ** 2 + sum(x ** 2)"


@pytest.mark.parametrize("fid", [21, 22])
def test_gallagher_models_are_linear_in_size_and_exact(fid: int) -> None:
    problem = bbob_problem(fid, 2)
    start = time.perf_counter()
    model = to_pyomo(problem.program)
    assert _expanded_size(model, _linear_budget(problem.program)) > 0
    value = pyomo_objective_at(model, problem.x_opt)
    assert time.perf_counter() - start < 5.0
    assert value == pytest.approx(problem.f_opt, abs=1e-9)
    assert value == numpy_evaluator(problem.program)(problem.x_opt[None])[0]
    X = np.random.default_rng(fid).uniform(-5, 5, (4, 2))
    np.testing.assert_allclose([pyomo_objective_at(model, row) for row in X],
                               numpy_evaluator(problem.program)(X), rtol=1e-12)


def test_let_chain_with_repeated_references_stays_linear(tmp_path) -> None:
    program = load(CHAIN, 2)
    model = to_pyomo(program)
    assert _expanded_size(model, _linear_budget(program)) > 0
    X = np.random.default_rng(3).uniform(-5, 5, (4, 2))
    expected = numpy_evaluator(program)(X)
    np.testing.assert_allclose([pyomo_objective_at(model, row) for row in X], expected,
                               rtol=1e-10)
    path = tmp_path / "chain.py"
    path.write_text(pyomo_script(program))
    scripted = runpy.run_path(str(path))["model"]
    np.testing.assert_allclose([pyomo_objective_at(scripted, row) for row in X], expected,
                               rtol=1e-10)
    assert [v.bounds for v in scripted.aux.values()] == [v.bounds for v in model.aux.values()]
    assert write_program(program, tmp_path / "chain.gms").stat().st_size < 200_000
    box = as_box_function(model)
    assert box.dim == 2
    np.testing.assert_allclose(box(X), expected, rtol=1e-10)


def test_auxiliary_variables_are_bounded_by_their_definition() -> None:
    model = to_pyomo(bbob_problem(21, 2).program)
    X = np.random.default_rng(5).uniform(-5, 5, (20, 2))
    for row in X:
        pyomo_objective_at(model, row)
        for var in model.aux.values():
            assert var.lb is None or var.value >= var.lb
            assert var.ub is None or var.value <= var.ub


@pytest.mark.parametrize("text", [
    "1 / (x[0] - 0.31415926) + x[1] ** 2",
    "(x[0] - 0.3) ** -1.0 + x[1]",
    "sum(1 / (x - [0.3, 0.2]))",
    "d = 2 * x[1] - 0.7\nq = d * 3\nx[0] / q",
])
def test_sign_changing_denominator_is_rejected_as_a_pole(text: str) -> None:
    with pytest.raises(ProgramError, match="changes sign on the box") as info:
        load(text, 2)
    assert info.value.kind == "non_finite"


@pytest.mark.parametrize("text", [
    "1 / (x[0] ** 2 - 2 * x[0] + 2)",
    "1 / (floor(x[0]) + 0.5)",
    "tanh(x[1]) / (1 + abs(x[0]))",
    "(x[0] ** 2 + 1) ** -1.5",
])
def test_denominators_that_keep_their_sign_are_accepted(text: str) -> None:
    assert load(text, 2).dim == 2
