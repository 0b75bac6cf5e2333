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

import pyomo.environ as pyo
from pyomo.core.base.block import BlockData
from pyomo.util.vars_from_expressions import get_vars_from_components

from coplug.plugins.errors import CoplugError, InputError
from coplug.plugins.results import Result, Status

CHOICES = (None, "fixed")
OF = "the LP with every integer variable fixed at its value in the MIP optimum"


def wants_fixed_duals(model: BlockData, mip_duals: str | None, solver: str) -> bool:
    """Whether this solve should compute fixed-MIP duals: asked for, the model declares
    `dual` or `rc`, and it has integer variables to fix."""
    if mip_duals not in CHOICES:
        raise InputError(f"mip_duals must be None or 'fixed', got {mip_duals!r}")
    if mip_duals is None:
        return False
    if solver.lower() not in ("scip", "highs"):
        raise InputError(f"mip_duals='fixed' needs solver='scip' or 'highs', not {solver!r}")
    declared = any(s.import_enabled() and s.local_name in ("dual", "rc")
                   for s in model.component_objects(pyo.Suffix, active=True, descend_into=False))
    return declared and bool(_integers(model))


@contextlib.contextmanager
def mip_warning_quiet() -> Iterator[None]:
    """Hide the MIP solve's 'a MIP has no LP duals' warning: the fixed LP gives them."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*a MIP has no LP duals")
        yield


def load_fixed_duals(model: BlockData, result: Result, resolve: Callable[[], Result]) -> None:
    """After the MIP solve `result`, fill `m.dual`/`m.rc` from the LP with its integer
    variables fixed at their values (`resolve` solves the model as it then stands)."""
    if result.status is not Status.OPTIMAL or not result.has_solution:
        _refuse(result, f"the MIP solve ended {result.status.value}, not optimal")
        return
    integers = _integers(model)
    values = [(v, v.value) for v in get_vars_from_components(
        model, (pyo.Constraint, pyo.Objective), active=True, include_fixed=False,
        descend_into=True)]
    try:
        for var in integers:
            var.fix(round(var.value))
        lp = resolve()
    except CoplugError as exc:  # the MIP's answer stands; only its duals are missing
        _refuse(result, f"the fixed LP could not be solved: {exc}")
        return
    finally:
        for var in integers:
            var.unfix()
        for var, value in values:
            var.set_value(value, skip_validation=True)
    duals = dict(lp.extra.get("duals", {"loaded": False, "reason": "the LP gave none"}))
    duals["of"] = OF
    result.extra["duals"] = duals
    result.extra["fixed_lp"] = {"status": lp.status.value, "objective": lp.objective,
                                "time": lp.time}
    if duals.get("loaded") and not _same_optimum(result.objective, lp.objective):
        _clear(model)
        _refuse(result, f"the fixed LP's optimum {lp.objective} is not the MIP's "
                        f"{result.objective}")


def _integers(model: BlockData) -> list:
    """The unfixed integer variables of the active constraints and objective."""
    return [v for v in get_vars_from_components(model, (pyo.Constraint, pyo.Objective),
                                                active=True, include_fixed=False,
                                                descend_into=True) if v.is_integer()]


def _same_optimum(mip: float | None, lp: float | None) -> bool:
    """Whether the two optima agree to the solvers' tolerance."""
    if mip is None or lp is None:
        return mip is lp
    return math.isclose(mip, lp, rel_tol=1e-6, abs_tol=1e-6)


def _clear(model: BlockData) -> None:
    """Empty the model's dual and rc Suffixes."""
    for suffix in model.component_objects(pyo.Suffix, active=True, descend_into=False):
        if suffix.import_enabled() and suffix.local_name in ("dual", "rc"):
            suffix.clear()


def _refuse(result: Result, reason: str) -> None:
    """Record and say why the fixed-MIP duals are not loaded."""
    result.extra["duals"] = {"loaded": False, "reason": reason, "of": OF}
    warnings.warn(f"dual, rc left empty: {reason}", UserWarning, stacklevel=4)
