"""One model built once for a run of solves that differ only in the active objective and
a few extra linear rows (the stages of `coplug.plugins.multiobjective`).

`solve` builds the model in the solver afresh each time, which on a model of thousands of
rows costs several times the solve itself, once per stage. `StagedSolver` builds it once
and, per stage, sets the objective and swaps the extra rows in place: SCIP's transformed
problem is freed and the changes go into the original one (every stage starts from scratch,
as a fresh build would); HiGHS's solver state is cleared the same way. Each stage runs the
same path as `solve` (`bridge.run_scip`, `highs_backend.run_highs`: MIP starts, the guards
of all-integer rows, status and solution loading), so a stage's `Result` means what
`solve`'s does.

`open_stages` returns None where that path would not be the same: other solvers, plugins,
`mip_duals`, a nonlinear objective, a model HiGHS sees without free variables. The caller
then solves each stage with `solve`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.collections import ComponentSet
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.objective import ObjectiveData
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.bridge import (
    BuiltScip,
    build_scip,
    check_model,
    check_one_time_limit,
    contrib_solver,
    merged_options,
    run_scip,
    warn_unread_suffixes,
)
from coplug.plugins.components import check_components
from coplug.plugins.errors import UnsupportedModelError
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.linear_terms import expanded_repn
from coplug.plugins.modeldata import check_model_data
from coplug.plugins.results import Result
from coplug.plugins.row_scaling import forget_rows
from coplug.plugins.serial import one_solve_at_a_time

# `solve` keywords a staged run takes; any other non-native one means the plain path.
_STAGE_KEYWORDS = ("tee", "options", "plugins", "mip_duals")
# `solve` keywords the stages set themselves: given again, `solve` raises as it always did.
_OWN_KEYWORDS = ("model", "solver", "time_limit", "warmstart")


class StagedSolver:
    """A model built once in SCIP or HiGHS; `solve(objective, rows, ...)` makes `objective`
    the solver's objective and `rows` (linear Pyomo constraints outside the build) its extra
    rows, then solves as `coplug.plugins.solve` would."""

    def __init__(self, model: pyo.Block, solver: str, params: dict[str, Any],
                 tee: bool) -> None:
        self.model, self.solver, self.params, self.tee = model, solver, params, tee
        self._backend: _Scip | _Highs = (_Scip(model) if solver == "scip"
                                         else _Highs(model, params))

    def covers(self, objectives: Sequence[ObjectiveData]) -> bool:
        """Whether the build has a column for every unfixed variable of `objectives`, with a
        zero coefficient too (the stages add rows and objectives, never columns, and the
        objective's value is read from every variable it names)."""
        columns = self._backend.columns
        return all(var in columns for objective in objectives
                   for var in identify_variables(objective.expr, include_fixed=False))

    def solve(self, objective: ObjectiveData, rows: Sequence[ConstraintData],
              time_limit: float | None, warmstart: bool) -> Result:
        """Solve with `objective` and the extra `rows` (which must be active in the model,
        as `objective` must be its only active objective); load the point back."""
        time_limit = checked_time_limit(time_limit)
        check_one_time_limit(self.solver, time_limit, self.params)
        with one_solve_at_a_time():
            backend = self._backend
            backend.reset()
            backend.set_rows([_row(row) for row in rows])
            repn = _repn(objective.expr)
            backend.set_objective(_terms(repn), float(repn.constant),
                                  objective.sense == pyo.maximize)
            return backend.run(self.model, time_limit, self.params, self.tee, warmstart)


def open_stages(model: pyo.Block, solver: Any, chain: Sequence[ObjectiveData],
                activate: Callable[[ObjectiveData], None], params: Mapping[str, Any],
                ) -> StagedSolver | None:
    """A `StagedSolver` for the objectives `chain` of `model`, each checked as `solve` checks
    the model it is given (`activate(o)` makes `o` the active one; `chain[0]` is left
    active); None where the stages must go through `solve` (see the module docstring)."""
    if not isinstance(solver, str) or solver.lower() not in ("scip", "highs"):
        return None
    key = solver.lower()
    if any(name in params for name in _OWN_KEYWORDS) or params.get("plugins", []) not in (
            [], ()) or params.get("mip_duals") is not None or not all(map(_linear, chain)):
        return None  # `solve` takes (or names the mistake in) what a build once cannot
    tee = params.get("tee", False)
    native = merged_options(params.get("options"),
                            {k: v for k, v in params.items() if k not in _STAGE_KEYWORDS})
    if not isinstance(tee, (bool, np.bool_)):
        return None  # `solve` names the mistake
    for objective in reversed(chain):  # every objective as `solve` would see it
        activate(objective)
        check_model(model)
        check_components(model, key)
        check_model_data(model)
    warn_unread_suffixes(model, key)
    if key == "highs":
        from coplug.plugins.highs_backend import check_linear_for_highs, has_free_variables

        check_linear_for_highs(model)  # a nonlinear row named as `solve` names it
        if not has_free_variables(model):
            return None  # `solve` answers a model without free variables itself
    with one_solve_at_a_time():  # building captures output: a solve beside it deadlocked
        staged = StagedSolver(model, key, native, tee)
    return staged if staged.covers(chain) else None


def _linear(objective: ObjectiveData) -> bool:
    """Whether `objective` is linear once Params and fixed variables take their values."""
    return _repn(objective.expr).is_linear()


# A linear row: its terms (variable, coefficient) and its sides (None where open).
Row = tuple[list[tuple[VarData, float]], float | None, float | None]


def _row(con: ConstraintData) -> Row:
    """`con` as terms and sides, its body's constant moved onto them."""
    repn = _repn(con.body)
    if not repn.is_linear():
        raise UnsupportedModelError(f"stage row {con.name!r} is not linear")
    shift = float(repn.constant)
    lower = None if con.lb is None else float(con.lb) - shift
    upper = None if con.ub is None else float(con.ub) - shift
    return _terms(repn), lower, upper


def _terms(repn: Any) -> list[tuple[VarData, float]]:
    """The nonzero linear terms of `repn` (duplicates merged by the representation)."""
    return [(var, float(coef)) for coef, var in
            zip(repn.linear_coefs, repn.linear_vars, strict=True) if coef != 0]


def _repn(expr: Any) -> Any:
    """The linear standard representation of `expr` at the current values."""
    return expanded_repn(expr)


class _Scip:
    """The SCIP side: changes go into the original problem after freeing the transformed
    one; parameters go back to SCIP's defaults before each stage sets its own."""

    def __init__(self, model: pyo.Block) -> None:
        self.built: BuiltScip = build_scip(model)
        self.columns = self.built.opt._pyomo_var_to_solver_var_map
        self._rows: list[Any] = []

    def reset(self) -> None:
        """Back to the original problem, without the last stage's solutions (SCIP keeps
        them as candidates for the next solve, which a fresh build would not have), and to
        default parameters (a tightened feasibility tolerance or the last stage's time
        limit must not carry over)."""
        scip = self.built.scip
        scip.setParam("limits/maxorigsol", 0)
        scip.freeTransform()
        scip.resetParams()

    def set_rows(self, rows: list[Row]) -> None:
        """Replace the last stage's extra rows by `rows`."""
        from pyscipopt.scip import ExprCons  # SCIP is optional until a SCIP model is built

        scip = self.built.scip
        forget_rows(scip, self._rows)
        for con in self._rows:
            scip.delCons(con)
        self._rows = [scip.addCons(ExprCons(self._sum(terms), lhs=lower, rhs=upper))
                      for terms, lower, upper in rows]

    def set_objective(self, terms: list[tuple[VarData, float]], constant: float,
                      maximize: bool) -> None:
        """SCIP's own linear objective, with `constant` as its offset."""
        scip = self.built.scip
        scip.setObjective(self._sum(terms) if terms else 0.0,
                          sense="maximize" if maximize else "minimize", clear=True)
        scip.addObjoffset(constant)

    def _sum(self, terms: list[tuple[VarData, float]]) -> Any:
        """The PySCIPOpt expression of `terms`."""
        from pyscipopt import quicksum

        return quicksum(coef * self.columns[var] for var, coef in terms)

    def run(self, model: pyo.Block, time_limit: float | None, params: dict[str, Any],
            tee: bool, warmstart: bool) -> Result:
        """One stage, as `solve(solver="scip")` runs it on a fresh build."""
        return run_scip(self.built, model, plugins=[], time_limit=time_limit, params=params,
                        tee=tee, warmstart=warmstart)


class _Highs:
    """The HiGHS side: rows and costs go straight into HiGHS (the extra rows after Pyomo's,
    whose row and column maps stay as built); solution, basis and options are cleared
    before each stage."""

    def __init__(self, model: pyo.Block, params: dict[str, Any]) -> None:
        from coplug.plugins.highs_backend import build_highs, highs_options

        self.options = highs_options(params)
        self.opt = contrib_solver("highs", "HiGHS", "highspy")
        build_highs(self.opt, model)
        self.highs = self.opt._solver_model  # the highspy model; Pyomo keeps no accessor
        self.base_rows = self.highs.getNumRow()
        self._by_id = self.opt._pyomo_var_to_solver_var_map  # id(var) -> column
        self.columns = ComponentSet(self.opt._vars[vid][0] for vid in self._by_id)

    def reset(self) -> None:
        """Drop the last stage's solution, basis and options (a fresh build has none)."""
        self.highs.clearSolver()
        self.highs.resetOptions()

    def set_rows(self, rows: list[Row]) -> None:
        """Replace the last stage's extra rows (those past Pyomo's) by `rows`."""
        import highspy

        extra = self.highs.getNumRow() - self.base_rows
        if extra:
            self.highs.deleteRows(extra, np.arange(self.base_rows, self.base_rows + extra,
                                                   dtype=np.int32))
        inf = highspy.kHighsInf
        for terms, lower, upper in rows:
            columns, values = self._arrays(terms)
            self.highs.addRow(-inf if lower is None else lower, inf if upper is None else upper,
                              len(columns), columns, values)

    def set_objective(self, terms: list[tuple[VarData, float]], constant: float,
                      maximize: bool) -> None:
        """Costs of every column (zero where `terms` has none), sense and offset."""
        import highspy

        n = self.highs.getNumCol()
        costs = np.zeros(n)
        columns, values = self._arrays(terms)
        costs[columns] = values
        self.highs.changeColsCost(n, np.arange(n, dtype=np.int32), costs)
        self.highs.changeObjectiveSense(highspy.ObjSense.kMaximize if maximize
                                        else highspy.ObjSense.kMinimize)
        self.highs.changeObjectiveOffset(constant)

    def _arrays(self, terms: list[tuple[VarData, float]]) -> tuple[np.ndarray, np.ndarray]:
        """Column indices and coefficients of `terms`."""
        columns = np.array([self._by_id[id(var)] for var, _ in terms], dtype=np.int32)
        return columns, np.array([coef for _, coef in terms], dtype=float)

    def run(self, model: pyo.Block, time_limit: float | None, params: dict[str, Any],
            tee: bool, warmstart: bool) -> Result:
        """One stage, as `solve(solver="highs")` runs it on a fresh build."""
        from coplug.plugins.highs_backend import run_highs

        result, _ = run_highs(self.opt, model, plugins=[], time_limit=time_limit,
                              params=self.options, tee=tee, warmstart=warmstart)
        return result
