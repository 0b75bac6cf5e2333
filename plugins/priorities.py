"""Branching priorities from Pyomo's `priority` export Suffix, as Pyomo's CPLEX and Gurobi
interfaces read it: `m.priority = pyo.Suffix(direction=pyo.Suffix.EXPORT, datatype=
pyo.Suffix.INT)`, then `m.priority[m.x] = 10` (an indexed variable gives every element its
value). SCIP branches on a fractional variable of the highest priority first (default 0).
Other export Suffixes are read by no backend and are named in a warning rather than dropped
in silence.
"""

from __future__ import annotations

import numbers
from typing import Any

import pyomo.environ as pyo
from pyomo.core.base.var import VarData

from coplug.plugins.errors import InputError

PRIORITY = "priority"


def _export_suffixes(model: pyo.Block) -> list[pyo.Suffix]:
    """Active export Suffixes on the model and its sub-blocks."""
    return [s for s in model.component_objects(pyo.Suffix, active=True, descend_into=True)
            if s.export_enabled()]


def branch_priorities(model: pyo.Block) -> list[tuple[VarData, int]]:
    """(variable, priority) from every `priority` export Suffix, indexed variables expanded;
    a variable's own entry beats its indexed variable's, whatever the order they were set
    in (as Pyomo's SuffixFinder reads them). A key that is not a variable (or is one of
    another model, which SCIP would never see) or a value that is not a whole number is an
    InputError."""
    found = []
    root = model.model()
    for suffix in _export_suffixes(model):
        if suffix.local_name != PRIORITY:
            continue
        chosen: dict[int, tuple[VarData, int]] = {}
        for component, value in sorted(suffix.items(), key=lambda kv: isinstance(kv[0], VarData)):
            variables = _variables(suffix, component)
            if component.model() is not root:
                raise InputError(f"Suffix {suffix.name!r}: {component.name!r} is a variable of "
                                 "another model; give the priority to this model's variable")
            chosen.update((id(var), (var, _whole(suffix, var, value))) for var in variables)
        found.extend(chosen.values())
    return found


def _variables(suffix: pyo.Suffix, component: Any) -> list[VarData]:
    """The variables a Suffix key stands for."""
    if isinstance(component, VarData):
        return [component]
    if isinstance(component, pyo.Var):
        return list(component.values())
    raise InputError(f"Suffix {suffix.name!r}: {component.name!r} is not a variable; branching "
                     "priorities are given per variable")


def _whole(suffix: pyo.Suffix, var: VarData, value: Any) -> int:
    """A priority as an int, refusing fractions, NaN, non-numbers and whole numbers past
    SCIP's int range (named as such: "must be a whole number, got 2**40" misled)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value or (
            not float(value).is_integer()):
        raise InputError(f"Suffix {suffix.name!r}: the priority of {var.name!r} must be a whole "
                         f"number, got {value!r}")
    if abs(value) >= 2**31:
        raise InputError(f"Suffix {suffix.name!r}: the priority of {var.name!r} must lie within "
                         f"SCIP's int range (-2**31, 2**31), got {value!r}")
    return int(value)


def unread_export_suffixes(model: pyo.Block, reads_priority: bool) -> list[str]:
    """Names of the export Suffixes holding values the backend will not read."""
    return [s.name for s in _export_suffixes(model)
            if len(s) and not (reads_priority and s.local_name == PRIORITY)]


def set_scip_priorities(scip: Any, model: pyo.Block, var_map: Any) -> None:
    """Give SCIP the branching priorities of the model's variables (those in `var_map`, the
    ones SCIP holds)."""
    for var, priority in branch_priorities(model):
        if var in var_map:
            scip.chgVarBranchPriority(var_map.to_scip(var), priority)
