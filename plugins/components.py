"""Which Pyomo component types each backend reads: any other active component (a logical
constraint, a disjunction, an SOS where the backend has none) could restrict the variables,
and a backend that skipped it would answer a different model, so it is refused by name.
HiGHS used to call a model with a LogicalConstraint or a Disjunction optimal, ignoring it.
"""

from __future__ import annotations

import pyomo.environ as pyo
from pyomo.core.base.component import ActiveComponent, Component
from pyomo.dae import DerivativeVar

from coplug.plugins.errors import UnsupportedModelError

# Active components every backend reads (inactive kinds, such as Var, Param, Set, Expression
# or a network Port, cannot restrict the variables: as in Pyomo's own model observer, only
# active component types are checked).
_READ_BY_ALL = frozenset({pyo.Constraint, pyo.Objective, pyo.Block, pyo.Suffix})
_READ_ALSO = {"scip": frozenset({pyo.SOSConstraint}), "highs": frozenset(), "lap": frozenset()}
# What to do instead, by component type: mostly the transformation that turns it into
# linear constraints every backend reads.
_ADVICE = {
    "LogicalConstraint": "apply TransformationFactory('core.logical_to_linear') first",
    "Disjunct": "apply TransformationFactory('gdp.bigm') or 'gdp.hull' first",
    "Disjunction": "apply TransformationFactory('gdp.bigm') or 'gdp.hull' first",
    "Complementarity": "apply TransformationFactory('mpec.simple_nonlinear') first",
    "Arc": "apply TransformationFactory('network.expand_arcs') first",
    "SOSConstraint": "use solver='scip'",
    "PiecewiseLinearFunction": "apply a MIP transformation such as TransformationFactory("
                               "'contrib.piecewise.incremental') or "
                               "'contrib.piecewise.convex_combination' first",
    "DerivativeVar": "apply TransformationFactory('dae.finite_difference') or "
                     "'dae.collocation' first",
}
# What infeasibilities() checks a point against: the rows every backend reads, and SOS sets.
_CHECKED = _READ_BY_ALL | {pyo.SOSConstraint}


def check_components(model: pyo.Block, solver: str) -> None:
    """Raise UnsupportedModelError naming the first component with an active entry that
    `solver` would not read (a container whose entries are all deactivated, e.g. after a
    transformation, restricts nothing; backends registered by users are not checked: their
    readable types are unknown)."""
    key = solver.lower()
    comp = unread_component(model, key)
    if comp is not None:
        raise UnsupportedModelError(_unread_message(
            comp, f"read by solver {key!r}, which would solve the model"))


def check_checkable(model: pyo.Block) -> None:
    """Raise UnsupportedModelError naming the first component infeasibilities() cannot
    check a point against (a raw disjunction had let it call a point feasible that meets
    neither side)."""
    comp = _first_unread(model, _CHECKED)
    if comp is not None:
        raise UnsupportedModelError(_unread_message(
            comp, "checked by infeasibilities(), which would judge the point"))


def unread_component(model: pyo.Block, solver: str) -> Component | None:
    """The first component with an active entry that `solver` would not read, or None."""
    readable = _READ_ALSO.get(solver.lower())
    if readable is None:
        return None
    return _first_unread(model, _READ_BY_ALL | readable)


def _first_unread(model: pyo.Block, readable: frozenset) -> Component | None:
    """The first component of `model` outside `readable` with an active entry, or a
    derivative not yet discretized (pyomo.dae: read as a free variable, it had let an ODE's
    x(1) = 1 come back as 10), or None."""
    for comp in model.component_objects(active=True, descend_into=True):
        if isinstance(comp, DerivativeVar):
            if not comp.is_fully_discretized():
                return comp
        elif (issubclass(comp.ctype, ActiveComponent) and comp.ctype not in readable
                and any(data.active for data in comp.values())):
            return comp
    return None


def _unread_message(comp: Component, what: str) -> str:
    """Why `comp` is refused: it is not `what` without it, and what to do instead."""
    kind = comp.ctype.__name__
    state = ", not discretized" if isinstance(comp, DerivativeVar) else ""
    return (f"component {comp.name!r} ({kind}{state}) is not {what} without it; "
            f"{_ADVICE.get(kind, 'use a solver that takes it')}")
