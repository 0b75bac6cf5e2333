"""Two-way map between Pyomo variables and SCIP variables, for plugins running inside SCIP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyomo.common.collections import ComponentMap
from pyomo.core.base.var import VarData

from coplug.plugins.cached import cached_property

_TRANSFORMED_PREFIX = "t_"


class VarMap:
    """Pyomo variable <-> SCIP variable.

    SCIP hands callbacks *transformed* variables (named ``t_<name>``); `to_pyomo` accepts
    original and transformed ones alike, so plugins can speak in Pyomo names.
    """

    def __init__(self, pairs: ComponentMap, block: Any = None,
                 epigraph: tuple[Any, Any] | None = None) -> None:
        self._to_scip = ComponentMap(pairs)
        self.block = block  # the Pyomo block solved (None where the caller did not say)
        # (SCIP variable, Pyomo expression it bounds) of a nonlinear objective's epigraph,
        # which a solution built by hand must value (see `coplug.plugins.scip_objective`)
        self.epigraph = epigraph

    @cached_property
    def _by_name(self) -> dict[str, VarData]:
        """SCIP name -> Pyomo variable, built on the first `to_pyomo` (reading every SCIP
        name took 0.03 s of each solve of a 45,000-variable model; most solves never ask)."""
        return {scip_var.name: pyo for pyo, scip_var in self._to_scip.items()}

    @cached_property
    def by_id(self) -> dict[int, object]:
        """id(Pyomo variable) -> SCIP variable, for callbacks that read thousands of values
        per call (a ComponentMap lookup costs several times a dict's)."""
        return {id(pyo): scip_var for pyo, scip_var in self._to_scip.items()}

    def __len__(self) -> int:
        return len(self._to_scip)

    def __contains__(self, var: object) -> bool:
        return isinstance(var, VarData) and var in self._to_scip

    def __iter__(self) -> Iterator[VarData]:
        return iter(self._to_scip)

    def items(self):
        """(Pyomo variable, SCIP variable) pairs."""
        return self._to_scip.items()

    def to_scip(self, var: VarData):
        """SCIP (original-problem) variable of a Pyomo variable; KeyError if not in the model."""
        return self._to_scip[var]

    def to_pyomo(self, scip_var) -> VarData | None:
        """Pyomo variable of a SCIP variable (original or transformed); None if SCIP made it."""
        name = scip_var.name
        found = self._by_name.get(name)
        if found is None and name.startswith(_TRANSFORMED_PREFIX):
            found = self._by_name.get(name[len(_TRANSFORMED_PREFIX):])
        return found

    def pyomo_name(self, scip_name: str) -> str:
        """The Pyomo name of the variable SCIP calls `scip_name` (that name where SCIP made
        the variable itself)."""
        found = self._by_name.get(scip_name)
        return scip_name if found is None else found.name

    def scip_name(self, var: VarData) -> str:
        """Name SCIP uses for a Pyomo variable in the original problem."""
        return self._to_scip[var].name


# Integer values within this of a whole number are loaded as that number: solvers leave
# 0.9999999999999876 for a chosen item, and int() of it is 0. Not further: a row tying the
# integer to a continuous variable moves by the coefficient times the rounding (at 1e-5,
# z == 1e5 x broke by 0.28 where SCIP left x at 1.0000028).
INTEGER_SNAP = 1e-6


def snapped(var: VarData, value: float) -> float:
    """`value` for `var`: rounded when `var` is integer and within INTEGER_SNAP of a whole
    number; -0.0 becomes 0.0."""
    return snap(value, var.is_integer())


def snap(value: float, integer: bool) -> float:
    """`value` rounded when `integer` and within INTEGER_SNAP of a whole number; -0.0
    becomes 0.0."""
    if integer and abs(value - round(value)) <= INTEGER_SNAP:
        return float(round(value))
    return value + 0.0
