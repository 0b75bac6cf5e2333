"""Which Pyomo component types each backend reads: any other active component (a logical
constraint, a disjunction, an SOS where the backend has none) could restrict the variables,
and a backend that skipped it would answer a different model, so it is refused by name.
HiGHS used to call a model with a LogicalConstraint or a Disjunction optimal, ignoring it.
"""

from __future__ import annotations

import pyomo.environ as pyo
from pyomo.core.base.component import ActiveComponent, Component

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
}


def check_components(model: pyo.Block, solver: str) -> None:
    """Raise UnsupportedModelError naming the first component with an active entry that
    `solver` would not read (a container whose entries are all deactivated, e.g. after a
    transformation, restricts nothing; backends registered by users are not checked: their
    readable types are unknown)."""
    key = solver.lower()
    comp = unread_component(model, key)
    if comp is not None:
        kind = comp.ctype.__name__
        raise UnsupportedModelError(
            f"component {comp.name!r} ({kind}) is not read by solver {key!r}, which "
            f"would solve the model without it; "
            f"{_ADVICE.get(kind, 'use a solver that takes it')}"
        )


def unread_component(model: pyo.Block, solver: str) -> Component | None:
    """The first component with an active entry that `solver` would not read, or None."""
    readable = _READ_ALSO.get(solver.lower())
    if readable is None:
        return None
    readable = _READ_BY_ALL | readable
    for comp in model.component_objects(active=True, descend_into=True):
        if (issubclass(comp.ctype, ActiveComponent) and comp.ctype not in readable
                and any(data.active for data in comp.values())):
            return comp
    return None
