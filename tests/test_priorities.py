"""Pyomo's `priority` export Suffix reaches SCIP as branching priorities: the first branching
is on the variable given the highest priority; bad keys and values are refused by name."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, Status, solve


def _two_knapsacks() -> pyo.ConcreteModel:
    """Two independent knapsacks whose LP relaxations each leave one item fractional."""
    m = pyo.ConcreteModel()
    m.a = pyo.Var(range(3), domain=pyo.Binary)
    m.b = pyo.Var(range(3), domain=pyo.Binary)
    weight, value = [3, 4, 5], [4, 5, 7]
    m.ca = pyo.Constraint(expr=sum(w * m.a[i] for i, w in enumerate(weight)) <= 6)
    m.cb = pyo.Constraint(expr=sum(w * m.b[i] for i, w in enumerate(weight)) <= 6)
    m.o = pyo.Objective(expr=sum(v * (m.a[i] + 2 * m.b[i]) for i, v in enumerate(value)),
                        sense=pyo.maximize)
    m.priority = pyo.Suffix(direction=pyo.Suffix.EXPORT, datatype=pyo.Suffix.INT)
    return m


class _FirstBranching:
    """Turns SCIP's presolve, heuristics and cuts off (so the root must branch) and keeps
    what it needs to read which variables SCIP branched on."""

    name = "first-branching"

    def attach(self, scip, var_map) -> None:
        from pyscipopt import SCIP_PARAMSETTING

        for setter in (scip.setPresolve, scip.setHeuristics, scip.setSeparating):
            setter(SCIP_PARAMSETTING.OFF)
        self.scip, self.var_map = scip, var_map

    def branched(self) -> set[str]:
        names = {self.var_map.to_scip(v).name: v.name for v in self.var_map}
        return {names[var.name.removeprefix("t_")]
                for var in self.scip.getVars(transformed=True)
                if var.getNBranchings(0) + var.getNBranchings(1) > 0}


@pytest.mark.parametrize("first", ["a", "b"])
def test_scip_branches_first_on_the_highest_priority(first: str) -> None:
    m = _two_knapsacks()
    m.priority[getattr(m, first)] = 10  # an indexed variable: all three elements
    probe = _FirstBranching()
    result = solve(m, solver="scip", plugins=[probe], **{"limits/nodes": 2})
    assert result.status is Status.NODE_LIMIT
    branched = probe.branched()
    assert branched and all(name.startswith(f"{first}[") for name in branched), branched


def test_priorities_leave_the_optimum_alone() -> None:
    m = _two_knapsacks()
    m.priority[m.b[2]] = 5
    m.priority[m.a[0]] = -3
    assert solve(m, solver="scip").objective == pytest.approx(
        solve(_two_knapsacks(), solver="highs").objective)


@pytest.mark.parametrize("key, value, message", [
    ("ca", 3, "'ca' is not a variable"),
    ("a", 2.5, r"priority of 'a\[0\]' must be a whole number, got 2.5"),
    ("a", float("nan"), "must be a whole number, got nan"),
])
def test_bad_priorities_are_named(key: str, value: float, message: str) -> None:
    m = _two_knapsacks()
    m.priority[getattr(m, key)] = value
    with pytest.raises(InputError, match=message):
        solve(m, solver="scip")


def test_unread_export_suffixes_are_named() -> None:
    m = _two_knapsacks()
    m.priority[m.a] = 1
    with pytest.warns(UserWarning, match=r"export Suffix priority \(highs reads none\)"):
        solve(m, solver="highs")
    m.direction = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.direction[m.a[0]] = -1
    with pytest.warns(UserWarning, match=r"export Suffix direction \(SCIP reads only priority"):
        solve(m, solver="scip")


@pytest.mark.parametrize("element_first", [True, False])
def test_a_variables_own_priority_beats_its_indexed_variables(element_first: bool) -> None:
    from coplug.plugins.priorities import branch_priorities

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.priority = pyo.Suffix(direction=pyo.Suffix.EXPORT, datatype=pyo.Suffix.INT)
    settings = [(m.x[0], 9), (m.x, 1)] if element_first else [(m.x, 1), (m.x[0], 9)]
    for key, value in settings:
        m.priority[key] = value
    assert {var.name: p for var, p in branch_priorities(m)} == {"x[0]": 9, "x[1]": 1, "x[2]": 1}
