"""The variables a solve of a sub-block reads from outside it: `solve(m.b)` takes m.b's
active rows and objective, which may use variables declared on m. Each piece that checks,
reads or loads a block's variables (data checks, pools, fronts, the race) needs them too,
or it silently misses a bound or leaves a value unloaded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyomo.environ as pyo
from pyomo.common.numeric_types import native_numeric_types
from pyomo.core.base.var import VarData
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression
from pyomo.core.expr.relational_expr import (
    EqualityExpression,
    InequalityExpression,
    RangedExpression,
)
from pyomo.core.expr.visitor import IdentifyVariableVisitor

_RELATIONAL = (EqualityExpression, InequalityExpression, RangedExpression)


def used_outside(block: pyo.Block) -> list[VarData]:
    """The unfixed variables `block`'s active rows and objectives use that are declared
    outside it, each once (none for a whole model)."""
    if block.parent_block() is None:
        return []
    return [var for var in used_variables(block)
            if not var.fixed and not declared_in(var, block)]


def declared_in(var: Any, block: pyo.Block) -> bool:
    """Whether `var` is declared on `block` or on a block below it."""
    parent = var.parent_block()
    while parent is not None:
        if parent is block:
            return True
        parent = parent.parent_block()
    return False


def values_a_solve_may_set(block: pyo.Block, used: list[VarData] | None = None
                           ) -> list[tuple[VarData, Any]]:
    """The values in the unfixed variables a solve of `block` may set: its own and those its
    active rows and objectives use from outside it (for `put_back` after a solve whose
    point must not stay); `used`: those rows' variables where the caller read them."""
    variables = {id(v): v for v in block.component_data_objects(pyo.Var, descend_into=True)
                 if not v.fixed}
    for var in used if used is not None else used_variables(block):
        if not var.fixed:
            variables.setdefault(id(var), var)
    return [(var, var.value) for var in variables.values()]


def used_variables(block: pyo.Block) -> list[VarData]:
    """The variables, fixed ones too, of `block`'s active rows and objectives, each once in
    the order Pyomo's `get_vars_from_components` gives them; a linear sum's terms are read
    off its arguments (the walk took 27 ms of a 73 ms LAP solve of 14,400 variables)."""
    visitor = IdentifyVariableVisitor(True, {})
    seen: dict[int, VarData] = {}
    for component in block.component_data_objects((pyo.Constraint, pyo.Objective),
                                                  active=True, descend_into=True):
        _collect(component.expr, visitor, seen)
    return list(seen.values())


def _collect(expr: Any, visitor: IdentifyVariableVisitor, seen: dict[int, VarData]) -> None:
    """Add the variables of `expr` to `seen` (by id, first seen first)."""
    kind = type(expr)
    if kind in _RELATIONAL:
        for arg in expr.args:
            _collect(arg, visitor, seen)
        return
    if kind is not LinearExpression:
        for var in visitor.walk_expression(expr):
            seen.setdefault(id(var), var)
        return
    for arg in expr.args:
        if type(arg) is MonomialTermExpression:  # (coefficient, variable): no variable in
            var = arg.args[1]                    # the coefficient, as Pyomo builds them
            seen.setdefault(id(var), var)
        elif type(arg) in native_numeric_types:
            continue
        elif arg.is_variable_type():
            seen.setdefault(id(arg), arg)
        else:
            _collect(arg, visitor, seen)


def put_back(values: list[tuple[VarData, Any]]) -> None:
    """Give each variable the value `values_a_solve_may_set` read, marked stale: no solve
    set it, as Pyomo's own solvers mark a value they leave (set_value had marked an earlier
    solve's point fresh after an infeasible one)."""
    for var, value in values:
        var.set_value(value, skip_validation=True)
        var.stale = True


# The import Suffixes a solve fills (LP duals and reduced costs).
DUAL_SUFFIXES = ("dual", "rc")


def solve_state(model: pyo.Block) -> dict[str, Any]:
    """Values of the unfixed variables a solve may set (`values_a_solve_may_set`) and the
    contents of the block's dual/rc Suffixes, for `restore_state`; under "used" the
    variables of its active rows and objectives, read once for whoever needs them after."""
    suffixes = {s.local_name: s for s in model.component_objects(pyo.Suffix, active=True,
                                                                 descend_into=False)
                if s.import_enabled() and s.local_name in DUAL_SUFFIXES}
    used = used_variables(model)
    return {"values": values_a_solve_may_set(model, used), "used": used,
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
