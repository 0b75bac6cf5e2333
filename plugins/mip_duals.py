"""Duals of a MIP, the way energy and pricing models take them: of the LP left when every
integer variable is fixed at its optimal value (CPLEX's and Gurobi's "fixed model").

`solve(m, mip_duals="fixed")` on a MIP that declares `m.dual` / `m.rc` solves the MIP, fixes
its integer variables at their (rounded) optimal values, solves that LP with the same
solver (its duals certified as for any LP, see `coplug.plugins.duals`), and puts back the
variables: they stay unfixed and keep the MIP's values, which are optimal for that LP too,
so the duals certify them. The LP's optimum must equal the MIP's (else the duals are not
loaded, with a warning); `result.extra["duals"]["of"]` says what they are duals of.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Iterator
from typing import NamedTuple

import pyomo.environ as pyo
from pyomo.core.base.block import BlockData
from pyomo.util.vars_from_expressions import get_vars_from_components

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import CoplugError, InputError
from coplug.plugins.results import Result, Status
from coplug.plugins.serial import warning_filters

CHOICES = (None, "fixed")
OF = "the LP with every integer variable fixed at its value in the MIP optimum"


class DualSource(NamedTuple):
    """How the duals' LP is named: in `extra["duals"]["of"]` (`of`), in warnings (`lp`, and
    `solve` for the solve it re-solves), and the `result.extra` key of its outcome (`key`)."""

    of: str
    lp: str
    solve: str
    key: str


FIXED = DualSource(OF, "the fixed LP", "the MIP", "fixed_lp")
# `coplug.plugins.duals`'s "<suffixes> left empty: <reason>": the MIP solve's (a MIP, or a
# nonlinear row the fixed LP may not have) and the fixed LP's (reworded here) are not shown.
_LEFT_EMPTY = r".*\b(dual|rc) left empty: "


def wants_fixed_duals(model: BlockData, mip_duals: str | None, solver: str) -> bool:
    """Whether this solve should compute fixed-MIP duals: asked for, the model declares
    `dual` or `rc`, and it has integer variables to fix."""
    if mip_duals not in CHOICES:
        raise InputError(f"mip_duals must be None or 'fixed', got {mip_duals!r}")
    if mip_duals is None:
        return False
    if solver.lower() not in ("scip", "highs"):
        raise InputError(f"mip_duals='fixed' needs solver='scip' or 'highs', not {solver!r}")
    return bool(declared_duals(model)) and bool(integers_to_fix(model))


@contextlib.contextmanager
def mip_warning_quiet() -> Iterator[None]:
    """Hide the MIP solve's own 'dual, rc left empty' warning (a MIP has no LP duals, or a row
    is nonlinear before its integers are fixed): the fixed LP decides."""
    with warning_filters():
        warnings.filterwarnings("ignore", message=_LEFT_EMPTY)
        yield


def load_fixed_duals(model: BlockData, result: Result, resolve: Callable[[], Result],
                     source: DualSource = FIXED) -> None:
    """After the MIP solve `result`, fill `m.dual`/`m.rc` from the LP with its integer
    variables fixed at their values (`resolve` solves the model as it then stands; a model
    without integers is re-solved as it is, see `coplug.plugins.lazy_duals`)."""
    if result.status is not Status.OPTIMAL or not result.has_solution:
        refuse_duals(model, result, f"{source.solve} solve ended {result.status.value}, not "
                               "optimal", source)
        return
    integers = integers_to_fix(model)
    values = [(v, v.value) for v in get_vars_from_components(
        model, (pyo.Constraint, pyo.Objective), active=True, include_fixed=False,
        descend_into=True)]
    try:
        for var in integers:
            var.fix(round(var.value))
        with mip_warning_quiet():  # its reason is said below, as the fixed LP's
            lp = resolve()
    except CoplugError as exc:  # the MIP's answer stands; only its duals are missing
        refuse_duals(model, result, f"{source.lp} could not be solved: {exc}", source)
        return
    finally:
        for var in integers:
            var.unfix()
        for var, value in values:
            var.set_value(value, skip_validation=True)
    duals = lp.extra.get("duals", {"loaded": False, "reason": "it gave none"})
    result.extra[source.key] = {"status": lp.status.value, "objective": lp.objective,
                                "time": lp.time}
    if not duals.get("loaded"):
        refuse_duals(model, result, f"{source.lp}: {duals.get('reason', 'it gave none')}", source)
    elif not _same_optimum(result.objective, lp.objective):
        _clear(model)
        refuse_duals(model, result, f"the optimum of {source.lp}, {lp.objective}, is not "
                               f"{source.solve}'s {result.objective}", source)
    else:
        result.extra["duals"] = {**duals, "of": source.of}


def integers_to_fix(model: BlockData) -> list:
    """The unfixed integer variables of the active constraints and objective."""
    return [v for v in get_vars_from_components(model, (pyo.Constraint, pyo.Objective),
                                                active=True, include_fixed=False,
                                                descend_into=True) if v.is_integer()]


def _same_optimum(mip: float | None, lp: float | None) -> bool:
    """Whether the two optima agree to the solvers' tolerance."""
    if mip is None or lp is None:
        return mip is lp
    return math.isclose(mip, lp, rel_tol=1e-6, abs_tol=1e-6)


def declared_duals(model: BlockData) -> list[pyo.Suffix]:
    """The model's own import Suffixes `dual` and `rc` (those `coplug.plugins.duals` fills)."""
    return [s for s in model.component_objects(pyo.Suffix, active=True, descend_into=False)
            if s.import_enabled() and s.local_name in ("dual", "rc")]


def _clear(model: BlockData) -> None:
    """Empty the model's dual and rc Suffixes."""
    for suffix in declared_duals(model):
        suffix.clear()


def refuse_duals(model: BlockData, result: Result, reason: str, source: DualSource) -> None:
    """Record and say why the duals are not loaded, naming the Suffixes declared (`source`:
    what they would be duals of)."""
    result.extra["duals"] = {"loaded": False, "reason": reason, "of": source.of}
    names = ", ".join(s.name for s in declared_duals(model))
    warn_at_caller(f"{names} left empty: {reason}")
