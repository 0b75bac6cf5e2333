"""The variables a solve of a sub-block reads from outside it: `solve(m.b)` takes m.b's
active rows and objective, which may use variables declared on m. Each piece that checks,
reads or loads a block's variables (data checks, pools, fronts, the race) needs them too,
or it silently misses a bound or leaves a value unloaded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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


# The import Suffixes a solve fills (LP duals and reduced costs).
DUAL_SUFFIXES = ("dual", "rc")


def solve_state(model: pyo.Block) -> dict[str, Any]:
    """Values of the unfixed variables a solve may set (`values_a_solve_may_set`) and the
    contents of the block's dual/rc Suffixes, for `restore_state`."""
    suffixes = {s.local_name: s for s in model.component_objects(pyo.Suffix, active=True,
                                                                 descend_into=False)
                if s.import_enabled() and s.local_name in DUAL_SUFFIXES}
    return {"values": values_a_solve_may_set(model),
            "suffixes": {name: (s, list(s.items())) for name, s in suffixes.items()}}


def restore_state(before: dict[str, Any]) -> None:
    """Put back the variable values and Suffix contents `solve_state` took."""
    put_back(before["values"])
    for suffix, items in before["suffixes"].values():
        suffix.clear()
        suffix.update(items)


@contextmanager
def restored_on_failure(before: dict[str, Any] | None) -> Iterator[None]:
    """When the body raises, put back the variable values `before` holds (from
    `solve_state`; None: nothing) and leave its dual/rc Suffixes empty: a user's callback
    that fails once the solution is loaded must leave the model as a failure during the
    solve does (no stale duals either)."""
    try:
        yield
    except BaseException:
        if before is not None:
            put_back(before["values"])
            for suffix, _ in before["suffixes"].values():
                suffix.clear()
        raise
