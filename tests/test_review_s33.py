"""Session 33 review: defects found by this session's probes, each with the test that
failed before its fix."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import lexicographic
from coplug.plugins.errors import InputError


def _huge_objective_model() -> pyo.ConcreteModel:
    """Three objectives, the first with coefficients that `scale_rows` divides, so its bound
    row in the later stages is a divided row that the next stage deletes."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.NonNegativeIntegers, bounds=(0, 5))
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in range(4)) <= 7)
    m.o1 = pyo.Objective(expr=3e7 * m.x[0] + 5e7 * m.x[1] + 1e7 * m.x[2] + 7e6 * m.x[3],
                         sense=pyo.maximize)
    m.o2 = pyo.Objective(expr=m.x[0] - m.x[3] + 2 * m.x[2], sense=pyo.maximize)
    m.o3 = pyo.Objective(expr=m.x[3] + m.x[2], sense=pyo.maximize)
    return m


def test_staged_solve_does_not_rescale_a_row_added_where_a_deleted_one_was():
    """SCIP hands a deleted row's address to the next row added; the divided bound row's
    factor stayed keyed by it, so stage 3 multiplied its new bound row by 2**22 and took a
    second solve to repair the answer."""
    m = _huge_objective_model()
    result = lexicographic(m, [m.o1, m.o2, m.o3], solver="scip")
    assert result.values == [310000000.0, 2.0, 0.0]
    for stage in result.results[1:]:
        assert stage.extra.get("scaled_rows") == 1
        assert "cuts_off" not in stage.extra and "first_solve" not in stage.extra


@pytest.mark.parametrize("argument", ["slope", "intercept", "capacity"])
def test_cournot_takes_a_python_int_past_int64_like_its_float(argument):
    """10**30 and 1e30 are the same number; the int reached numpy as an object array."""
    from coplug.formulations.games import cournot

    as_int = cournot(n_firms=2, **{argument: 10**30})
    as_float = cournot(n_firms=2, **{argument: 1e30})
    assert as_int.players == as_float.players == ["firm0", "firm1"]


@pytest.mark.parametrize("sizes", [(np.int64(2**32), np.int64(2**32)), (4, np.uint64(2**63))])
def test_assignment_memory_guard_does_not_wrap_on_numpy_integer_sizes(sizes):
    """n * m * 8 in numpy integers wrapped past 2**64, so numpy, not the guard, refused."""
    from coplug.formulations.assignment import uniform

    with pytest.raises(InputError, match="GiB"):
        uniform(sizes[0], m=sizes[1])
