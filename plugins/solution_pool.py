"""The best feasible solutions a solve found, not only the optimum: alternatives to show a
planner, near-optimal plans to choose among on criteria the model leaves out, or starts for
a later solve (Gurobi's and CPLEX's solution pool).

SCIP keeps the solutions it finds (up to `limits/maxsol`, raised to the pool's size); the
pool reads them once the solve is over. HiGHS keeps only its incumbent, so the pool
subscribes to its MIP-solution callback, which sees every feasible point its heuristics and
tree search find, improving or not. Either way a point `solve` would discard (one missing a
large all-integer row, see `coplug.plugins.integral_rows`) is left out, and the solution
`solve` loads is always the pool's first.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.var import VarData

from coplug.plugins.base import UserCallbackPlugin, checked_plugin_name
from coplug.plugins.errors import InputError
from coplug.plugins.integral_rows import violations
from coplug.plugins.interrupts import sigint_deferred
from coplug.plugins.lazy import SolutionView
from coplug.plugins.limits import SCIP_INT_MAX
from coplug.plugins.on_solution import (
    evaluated,
    maximizes,
    misjudged_rows,
    objective_to_evaluate,
)
from coplug.plugins.outer_variables import used_outside
from coplug.plugins.results import Result
from coplug.plugins.value_equality import ValueEquality
from coplug.plugins.varmap import VarMap, snapped

# Two points are the same solution when every value agrees to this many decimals (HiGHS
# hands the same point to its callback more than once).
DISTINCT_DECIMALS = 9
# ... or within this, relative to max(1, |value|), in every value: the solvers' feasibility
# tolerance (HiGHS's callback met an optimum 4e-7 away from the copy `solve` loaded).
DISTINCT_TOL = 1e-6


@dataclass(frozen=True, eq=False)
class PoolSolution(ValueEquality):
    """One solution of the pool: its objective (in the model's own sense) and its values,
    read by Pyomo variable (`solution[m.x[1]]`); `load()` puts them into the variables."""

    objective: float
    variables: tuple[VarData, ...] = field(repr=False)
    values: np.ndarray = field(repr=False)

    def __getitem__(self, var: VarData) -> float:
        position = self._positions().get(id(var))
        if position is not None:
            return float(self.values[position])
        if isinstance(var, VarData) and var.fixed and var.value is not None:
            return float(var.value)
        if isinstance(var, VarData):  # declared, but the solver never saw it
            raise InputError(f"{var.name!r} is in no active constraint or objective of the "
                             "solved model, so the solution has no value for it")
        raise InputError(f"{var!r} is not a Pyomo variable")

    def _positions(self) -> dict[int, int]:
        """id(variable) -> its position in `values` (built on first use, then kept)."""
        positions = self.__dict__.get("_by_id")
        if positions is None:
            positions = {id(var): k for k, var in enumerate(self.variables)}
            object.__setattr__(self, "_by_id", positions)
        return positions

    def __getstate__(self) -> dict[str, Any]:
        """The fields without the `_positions` cache: its keys are the ids of this process's
        variables, which a copy (pickled, deep-copied) does not hold."""
        return {key: value for key, value in self.__dict__.items() if key != "_by_id"}

    def load(self) -> None:
        """Set the Pyomo variables to this solution's values, all of them before a Ctrl-C
        counts."""
        with sigint_deferred():
            for var, value in zip(self.variables, self.values.tolist(), strict=True):
                var.set_value(value, skip_validation=True)


class SolutionPool(UserCallbackPlugin):
    """Keep up to `size` distinct feasible solutions of a SCIP or HiGHS solve, best first
    (`pool.solutions`, a list of `PoolSolution`), for `solve(m, plugins=[pool])`.

    The first is the solution `solve` loaded (empty when it loaded none); the others are the
    best other points the solver met on its way. They are feasible at the solver's
    tolerances and sorted by objective; they need not be the `size` best of the model (the
    solver stops once it has proved the optimum, and prunes what cannot beat it).
    """

    def __init__(self, size: int = 10, name: str = "solution_pool") -> None:
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
            raise InputError(f"SolutionPool size must be a whole number >= 1, got {size!r}")
        self.size = int(size)
        self.name = checked_plugin_name(name)
        self._variables: tuple[VarData, ...] = ()
        self._integer = np.zeros(0, dtype=bool)  # which of `_variables` are integer
        self._found: dict[bytes, tuple[float, np.ndarray]] = {}
        self._read_solver: Callable[[], Iterator[tuple[float, np.ndarray]]] = _nothing
        self._maximize = False
        self._offered = 0
        self.solutions: list[PoolSolution] = []

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        """Make SCIP keep at least `size` solutions (at most its int range: a larger size
        overflowed PySCIPOpt's int parameter); read them once the solve is over."""
        self.bind(scip_model, var_map)
        self._start([var for var, _ in var_map.items() if not var.fixed], var_map.block)
        keep = min(self.size, SCIP_INT_MAX)
        if int(scip_model.getParam("limits/maxsol")) < keep:
            scip_model.setParam("limits/maxsol", keep)
        rows = misjudged_rows(scip_model)
        objective = objective_to_evaluate(var_map)
        handles = [var_map.to_scip(var) for var in self._variables]

        def stored() -> Iterator[tuple[float, np.ndarray]]:
            scip = self._scip
            for sol in scip.getSols() if scip is not None else ():
                if rows and violations(rows, lambda var, sol=sol: scip.getSolVal(sol, var)):
                    continue
                view = SolutionView.of_scip(scip, sol, var_map)
                value = evaluated(objective, view, lambda sol=sol: scip.getSolObjVal(sol))
                yield value, np.array([scip.getSolVal(sol, h) for h in handles], dtype=float)

        self._read_solver = stored

    def attach_highs(self, highs: Any, columns: dict[int, int], block: Any,
                     rejects: Callable[[Any], bool] | None = None) -> None:
        """Subscribe to every MIP solution HiGHS finds; `columns` maps id(Pyomo variable)
        to its HiGHS column, and a point `rejects(values)` calls one `solve` would discard."""
        self._failure = None
        self._start(_column_variables(block, columns), block)
        positions = np.array([columns[id(var)] for var in self._variables], dtype=np.int64)

        def found(event: Any) -> None:
            if self._failure is not None:
                return
            try:
                values = event.data_out.mip_solution
                if rejects is not None and rejects(values):
                    return
                point = np.asarray(values, dtype=float)[positions]
                self.offer(float(event.data_out.objective_function_value), point)
            except Exception as exc:  # a bug here must come out of solve(), not HiGHS
                self._failure = exc

        highs.cbMipSolution.subscribe(found)

    def _start(self, variables: list[VarData], block: Any) -> None:
        """Forget an earlier solve's pool and take this solve's variables and sense."""
        self._variables = tuple(variables)
        self._integer = np.array([var.is_integer() for var in variables], dtype=bool)
        self._found, self._offered, self.solutions = {}, 0, []
        self._read_solver = _nothing
        self._maximize = maximizes(block)

    def offer(self, objective: float, values: np.ndarray) -> None:
        """Consider one solution: kept unless the same point is already in, pruned to the
        best `size` now and then so a long solve does not keep them all."""
        self._offered += 1
        if not math.isfinite(objective) or not np.all(np.isfinite(values)):
            return
        values = np.array([snapped(var, v) for var, v in
                           zip(self._variables, values.tolist(), strict=True)], dtype=float)
        key = np.round(values, DISTINCT_DECIMALS).tobytes()
        known = self._found.get(key)
        if known is None or self._better(objective, known[0]):
            self._found[key] = (objective, values)
        if len(self._found) > 4 * self.size:
            self._found = dict(_distinct(self._ranked(), self._integer)[: self.size])

    def solve_failed(self) -> None:
        """Forget the reader of a solve that raised: it holds that solve's SCIP model (kept,
        the pool failed to pickle)."""
        self._read_solver = _nothing

    def finish(self, result: Result) -> None:
        """The solve is over and its solution loaded: read what SCIP kept, put the loaded
        solution first and keep the best `size`."""
        for objective, values in self._read_solver():
            self.offer(objective, values)
        self._read_solver = _nothing
        loaded = None
        if result.has_solution:
            values = np.array([float(var.value) for var in self._variables], dtype=float)
            loaded = np.round(values, DISTINCT_DECIMALS).tobytes()
            objective = 0.0 if result.objective is None else float(result.objective)
            self._found[loaded] = (objective, values)
        else:
            self._found.clear()
        ranked = self._ranked()
        if loaded is not None:
            ranked.sort(key=lambda item: item[0] != loaded)  # stable: the rest stays ranked
        ranked = _distinct(ranked, self._integer)
        self.solutions = [PoolSolution(objective, self._variables, values)
                          for _, (objective, values) in ranked[: self.size]]
        self._found = {}

    def _ranked(self) -> list[tuple[bytes, tuple[float, np.ndarray]]]:
        """The kept points, best objective first."""
        sign = -1.0 if self._maximize else 1.0
        return sorted(self._found.items(), key=lambda item: sign * item[1][0])

    def _better(self, objective: float, than: float) -> bool:
        """Whether `objective` beats `than` in the model's sense."""
        return objective > than if self._maximize else objective < than

    def statistics(self) -> dict[str, Any]:
        """Solutions offered to the pool (SCIP's kept ones, HiGHS's found ones) and kept."""
        return {"offered": self._offered, "kept": len(self.solutions)}


def _column_variables(block: Any, columns: dict[int, int]) -> list[VarData]:
    """The unfixed variables with a HiGHS column: the block's own, then any other its active
    rows and objective use (a sub-block's rows may use the variables of a block above)."""
    found = {id(var): var for var in block.component_data_objects(pyo.Var, descend_into=True)
             if id(var) in columns}
    if len(found) < len(columns):
        for var in used_outside(block):
            if id(var) in columns:
                found.setdefault(id(var), var)
    return [var for var in found.values() if not var.fixed]


def _distinct(ranked: list[tuple[bytes, tuple[float, np.ndarray]]], integer: np.ndarray
              ) -> list[tuple[bytes, tuple[float, np.ndarray]]]:
    """`ranked` less every point within DISTINCT_TOL of one before it: a solver's two copies
    of one point are one solution, and the first (the loaded one, or the better) stays.
    Copies share their `integer` values once rounded, so only points that do are compared."""
    kept: list[tuple[bytes, tuple[float, np.ndarray]]] = []
    groups: dict[bytes, list[np.ndarray]] = {}
    for item in ranked:
        values = item[1][1]
        group = groups.setdefault((np.round(values[integer]) + 0.0).tobytes(), [])
        if not any(_same_point(values, other) for other in group):
            group.append(values)
            kept.append(item)
    return kept


def _same_point(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether every value of `a` and `b` agrees within DISTINCT_TOL (relative, at least 1)."""
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return bool(np.all(np.abs(a - b) <= DISTINCT_TOL * scale))


def _nothing() -> Iterator[tuple[float, np.ndarray]]:
    """No solutions to read from the solver (HiGHS, or a pool not attached yet)."""
    return iter(())
