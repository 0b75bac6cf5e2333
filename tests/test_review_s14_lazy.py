"""Review of `coplug.plugins.lazy` (session 14): each answer is checked against the same model
with the lazy rows given up front, solved by HiGHS."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve
from coplug.plugins.lazy import LazyConstraints


def _truth(m, make_rows):
    """HiGHS on the model with the rows added as ordinary constraints (removed after)."""
    m.full = pyo.ConstraintList()
    for row in make_rows():
        m.full.add(row)
    try:
        return solve(m, solver="highs")
    finally:
        m.del_component(m.full)


def _unbounded_lp_with_a_ranged_row():
    """Unbounded (c0 -> -inf with c2 following it); the LP's unbounded solutions reach values
    near 1e5, where the ranged row, in the LP, is met within the LP's tolerance but missed by
    the lazy handler's check."""
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(4), domain=pyo.Binary)
    m.i = pyo.Var(domain=pyo.Integers, bounds=(-2, None))
    m.c0 = pyo.Var(bounds=(None, -1.6806525080021504))
    m.c1 = pyo.Var(bounds=(-4.0, -2.9750524051129856))
    m.c2 = pyo.Var(bounds=(None, 4.339429990663689))
    m.obj = pyo.Objective(expr=-4 * m.b[0] - m.b[1] - 4 * m.b[2] - 2 * m.b[3] + 3 * m.i
                          + 3 * m.c0 - 5 * m.c1 + 0.001 * m.c2 + 1)
    return m, lambda: [pyo.inequality(-1.0, 0.001 * m.c0 - 2 * m.c2 - 3 * m.c1, 2.0)]


def test_a_row_already_added_is_not_added_again_and_again():
    # before the fix: the same row was added ~2,000 times a second until the time limit
    m, make_rows = _unbounded_lp_with_a_ranged_row()
    truth = _truth(m, make_rows)
    lazy = LazyConstraints(lambda _s: make_rows() * 3, fractional=True)  # duplicates too
    result = solve(m, plugins=[lazy], time_limit=10)
    assert truth.status is Status.UNBOUNDED
    assert result.status is truth.status
    assert lazy.statistics()["cuts_added"] == len(lazy.cuts) == 1


def test_duplicate_rows_in_one_call_are_added_once_and_the_optimum_holds():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, 5))
    m.obj = pyo.Objective(expr=-(3 * m.x[0] + 2 * m.x[1] + 4 * m.x[2]) + m.y)

    def make_rows():
        return [m.x[0] + m.x[2] <= 1 + m.y, m.x[1] + m.x[2] <= 1, 2 * m.y <= 1]

    truth = _truth(m, make_rows)
    lazy = LazyConstraints(lambda _s: make_rows() + make_rows())
    result = solve(m, plugins=[lazy])
    assert result.status is truth.status is Status.OPTIMAL
    assert result.objective == pytest.approx(truth.objective, abs=1e-6)
    assert lazy.statistics()["cuts_added"] <= len(make_rows())


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_the_integral_row_re_solve_with_lazy_constraints_does_not_crash():
    # An all-integer row with a coefficient of 1e5 makes `solve` solve SCIP a second time
    # (after freeTransform) when the first run ends infeasible; the lazy handler's constraint
    # then crashed the interpreter (segmentation fault). Run in a child process.
    code = """
        import warnings
        import pyomo.environ as pyo
        from coplug.plugins import solve
        from coplug.plugins.lazy import LazyConstraints
        warnings.simplefilter("ignore")
        m = pyo.ConcreteModel()
        m.i = pyo.Var(domain=pyo.Integers, bounds=(-3, 0))
        m.obj = pyo.Objective(expr=3 * m.i, sense=pyo.maximize)
        m.big = pyo.Constraint(expr=-100000 * m.i <= 200000)
        for rows in ([m.i >= 1], [1000 * m.i <= -1999]):
            lazy = LazyConstraints(lambda s, rows=rows: rows)
            r = solve(m, plugins=[lazy])
            print(r.status.value, r.objective, "feastol" in r.extra)
    """
    done = _run(code)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split("\n")
    m = pyo.ConcreteModel()
    m.i = pyo.Var(domain=pyo.Integers, bounds=(-3, 0))
    m.obj = pyo.Objective(expr=3 * m.i, sense=pyo.maximize)
    m.big = pyo.Constraint(expr=-100000 * m.i <= 200000)
    infeasible = _truth(m, lambda: [m.i >= 1])
    feasible = _truth(m, lambda: [1000 * m.i <= -1999])
    assert infeasible.status is Status.INFEASIBLE
    assert lines[0] == "infeasible None True"  # the re-solve ran (`feastol` in extra)
    status, objective, _ = lines[1].split()
    assert status == "optimal" and float(objective) == pytest.approx(feasible.objective)


def test_a_plugin_kept_until_the_interpreter_exits_does_not_crash_it():
    # A LazyConstraints kept (for its cuts) in a module's namespace held SCIP's model until
    # exit, where PySCIPOpt freed the model after the handler: exit code 139 after the
    # program's own work had succeeded.
    code = """
        import json
        import pyomo.environ as pyo
        from coplug.plugins import solve
        from coplug.plugins.lazy import LazyConstraints
        m = pyo.ConcreteModel()
        m.x = pyo.Var(domain=pyo.Binary)
        m.obj = pyo.Objective(expr=m.x)
        lazy = LazyConstraints(lambda s: [m.x >= 1])
        print(solve(m, plugins=[lazy]).objective, len(lazy.cuts), flush=True)
        json.kept = lazy
    """
    done = _run(code)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.obj = pyo.Objective(expr=m.x)
    truth = _truth(m, lambda: [m.x >= 1])
    assert done.returncode == 0, done.stderr[-2000:]
    objective, cuts = done.stdout.split()
    assert float(objective) == pytest.approx(truth.objective) and int(cuts) == 1
