"""HiGHS's `threads` option works in any solve of a process: HiGHS fixes its worker pool at
the first solve and refused a later `threads`, so such a solve stopped with no answer."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import Status, solve, solve_file


def _model() -> pyo.ConcreteModel:
    """A small MIP whose optimum is 1 (x[0] chosen)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x.values()) >= 1)
    m.o = pyo.Objective(expr=sum((j + 1) * m.x[j] for j in range(4)))
    return m


def test_threads_after_a_default_solve_and_back():
    for options in ({}, {"threads": 1}, {}, {"threads": 2}, {"threads": 1}, {}):
        result = solve(_model(), solver="highs", **options)
        assert result.status is Status.OPTIMAL and result.objective == pytest.approx(1.0)


def test_threads_on_a_file_after_a_default_solve(tmp_path):
    path = tmp_path / "m.mps"
    _model().write(str(path))
    assert solve(_model(), solver="highs").status is Status.OPTIMAL
    result = solve_file(path, solver="highs", threads=1)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(1.0)
    assert solve_file(path, solver="highs").status is Status.OPTIMAL


def _os_threads() -> int:
    """The threads of this process, as Linux counts them."""
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("Threads:")).split()[1])


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="Linux only")
def test_a_solve_with_threads_leaves_no_pool_of_its_own_behind():
    # the next solve gets HiGHS's default pool, not the last one's `threads`
    solve(_model(), solver="highs")
    with_default_pool = _os_threads()
    solve(_model(), solver="highs", threads=3)
    assert _os_threads() <= with_default_pool
