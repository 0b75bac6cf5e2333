"""The variables a solve of a sub-block reads from outside it: `solve(m.b)` takes m.b's
active rows and objective, which may use variables declared on m. Each piece that checks,
reads or loads a block's variables (data checks, pools, fronts, the race) needs them too,
or it silently misses a bound or leaves a value unloaded."""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyomo.core.base.var import VarData
from pyomo.util.vars_from_expressions import get_vars_from_components


def used_outside(block: pyo.Block) -> list[VarData]:
    """The unfixed variables `block`'s active rows and objectives use that are declared
    outside it, each once (none for a whole model)."""
    if block.parent_block() is None:
        return []
    used = get_vars_from_components(block, (pyo.Constraint, pyo.Objective),
                                    include_fixed=False, active=True)
    return [var for var in used if not declared_in(var, block)]


def declared_in(var: Any, block: pyo.Block) -> bool:
    """Whether `var` is declared on `block` or on a block below it."""
    parent = var.parent_block()
    while parent is not None:
        if parent is block:
            return True
        parent = parent.parent_block()
    return False


def values_a_solve_may_set(block: pyo.Block) -> list[tuple[VarData, Any]]:
    """The values in the unfixed variables a solve of `block` may set: its own and those its
    active rows and objectives use from outside it (for `put_back` after a solve whose
    point must not stay)."""
    variables = ComponentMap((v, None) for v in block.component_data_objects(
        pyo.Var, descend_into=True) if not v.fixed)
    variables.update((v, None) for v in get_vars_from_components(
        block, (pyo.Constraint, pyo.Objective), active=True, include_fixed=False,
        descend_into=True))
    return [(var, var.value) for var in variables]


def put_back(values: list[tuple[VarData, Any]]) -> None:
    """Give each variable the value `values_a_solve_may_set` read."""
    for var, value in values:
        var.set_value(value, skip_validation=True)
