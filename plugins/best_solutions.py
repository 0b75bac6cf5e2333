"""The k best solutions of a MIP with binary integers, proven: every assignment of the
binary variables better than the k-th found is found (Gurobi's PoolSearchMode=2).

One search, not k solves: a lazy-constraint function (`coplug.plugins.lazy`) records each
integral solution SCIP meets and rejects it with a no-good row that excludes its binary
assignment; once k are recorded, an objective row `c'x <= the k-th best` (>= when
maximizing) prunes whatever cannot enter them. When the tree is exhausted (SCIP calls the
model with all those rows infeasible) the record holds the k best, each with its best
continuous part: an integral LP solution is optimal over its node, which holds every point
with its binary assignment. SCIP runs with no symmetry handling (the lazy handler reports
none), which would drop symmetric alternatives. With HiGHS, which has no callbacks, the
same rows are added in rounds (k + 1 solves, as Pyomo's `enumerate_binary_solutions`).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as scipy_sparse
from pyomo.core.base.var import VarData
from pyomo.core.expr.numeric_expr import LinearExpression
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.bridge import (
    as_solve_arguments,
    check_block,
    keyword_options,
    refuse_sibling_keywords,
    solve,
)
from coplug.plugins.components import check_components
from coplug.plugins.duals import LinearProgram, dual_request, min_form
from coplug.plugins.errors import InputError, UnsupportedModelError
from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.lazy_rounds import BOX
from coplug.plugins.limits import checked_time_limit, zero_mip_gap
from coplug.plugins.linear_terms import LinearTerms, linear_terms, value_step
from coplug.plugins.modeldata import SOLVER_INFINITY, check_model_data
from coplug.plugins.results import Result, Status
from coplug.plugins.serial import warning_filters
from coplug.plugins.solution_pool import PoolSolution
from coplug.plugins.value_equality import ValueEquality

# No-good rows kept built (by assignment) before the cache starts afresh.
NO_GOOD_CACHE = 4096
# A recorded point must meet every row and bound of the model within this, relative to
# max(1, |side|, |activity|) as SCIP judges (ten times its default): a guard against an
# LP solution that enforcement hands on after another handler found it infeasible.
ROW_TOL = 1e-5
# scipy.optimize.linprog's statuses for an infeasible and an unbounded LP.
LINPROG_INFEASIBLE, LINPROG_UNBOUNDED = 2, 3


@dataclass(eq=False)
class KBest(ValueEquality):
    """The outcome of `k_best`: `solutions` (best first, the first loaded into the model),
    whether they are `proven` the k best (the search finished), and the search's `result`
    (status `infeasible` when it finished: every assignment was cut off)."""

    solutions: list[PoolSolution]
    proven: bool
    result: Result


def k_best(model: pyo.Block, k: int = 10, solver: str = "scip",
           time_limit: float | None = None, **params: Any) -> KBest:
    """The `k` best distinct assignments of `model`'s binary variables, each with its best
    continuous part, best first (fewer when the model has fewer; any `k` for a model
    without objective, or with a constant one); the first is loaded into the variables.
    `params` are the solver's native options, as for `solve`. `solver="lap"` ranks an
    assignment-structured model (as `solve(..., solver="lap")` reads it, matchings included)
    by Murty's method (`coplug.plugins.lap.ranked_assignments`, `ranked_matchings`); its
    result is `optimal` once complete."""
    check_block(model, "k_best()")
    check_model_data(model, warn_tiny=False)  # named before the rows are read (`solve` warns)
    refuse_sibling_keywords(params, "k_best", {
        "plugins": "its search runs as a plugin of its own",
        "progress": "its search draws no progress line"})
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise InputError(f"k must be a whole number >= 1, got {k!r}")
    k = int(k)
    if isinstance(solver, str) and solver.lower() == "lap":
        solutions, proven, result = _ranked_by_lap(model, k, time_limit, params)
    else:  # each round's best exactly, as a no-good list needs (`zero_mip_gap`)
        native = zero_mip_gap(solver, keyword_options(params))
        solutions, proven, result = _searched(model, k, solver, time_limit, native)
    if solutions:
        solutions[0].load()
    return KBest(solutions, proven, result)


def _searched(model: pyo.Block, k: int, solver: str, time_limit: float | None,
              params: dict[str, Any]) -> tuple[list[PoolSolution], bool, Result]:
    """One SCIP search (HiGHS: rounds) with no-good rows and the k-th best as cutoff."""
    search = _Search(model, k)
    if search.binaries.size == 0:
        return _one_assignment(model, search, solver, time_limit, params)
    with warning_filters():
        # HiGHS's rounds warn that a round stopped at a point violating lazy rows reports
        # no solution; here every such point was recorded, and `proven` says the rest
        warnings.filterwarnings("ignore", message="lazy constraints: the solve stopped")
        lazy = LazyConstraints(search.separate, name="k_best")
        lazy.records_rejected = True  # a start it rejects is recorded: used, not refused
        result = solve(model, solver=solver, time_limit=time_limit, plugins=[lazy],
                       **as_solve_arguments(params))
    solutions = search.ranked()
    if result.status is Status.UNBOUNDED or (
            solutions and search.rows.unbounded_at(solutions[0].values, search)):
        raise InputError("the model is unbounded: it has no k best solutions")
    proven = result.status is Status.INFEASIBLE or (
        search.flat and len(solutions) == k and result.has_solution)
    return solutions, proven, result


def _one_assignment(model: pyo.Block, search: _Search, solver: str,
                    time_limit: float | None, params: dict[str, Any]
                    ) -> tuple[list[PoolSolution], bool, Result]:
    """Every binary fixed: the one assignment there is, with its best continuous part (a
    no-good row over no binaries would cut off everything)."""
    result = solve(model, solver=solver, time_limit=time_limit, **as_solve_arguments(params))
    if result.status is Status.UNBOUNDED:
        raise InputError("the model is unbounded: it has no k best solutions")
    if not result.has_solution:
        return [], result.status is Status.INFEASIBLE, result
    values = np.array([var.value for var in search.variables], dtype=float)
    solution = PoolSolution(search._objective_at(values), tuple(search.variables), values)
    return [solution], result.status is Status.OPTIMAL, result


def _ranked_by_lap(model: pyo.Block, k: int, time_limit: float | None,
                   params: dict[str, Any]) -> tuple[list[PoolSolution], bool, Result]:
    """An assignment-structured model ranked by Murty's method (`coplug.plugins.lap`)."""
    if params:
        raise InputError(f"k_best with solver='lap' takes no solver options, got {sorted(params)}")
    from coplug.plugins.lap.ranked_model import rank_assignment_model  # numba kernels: on use

    check_components(model, "lap")  # an SOS or a logical row the ranking would not see
    dual_request(model, read=False)  # emptied: no ranking gives duals of the point loaded
    return rank_assignment_model(model, k, checked_time_limit(time_limit))


class _Search:
    """The record of solutions met, and the rows that reject them."""

    def __init__(self, model: pyo.Block, k: int) -> None:
        self.k = k
        self.variables, self.binaries = _variables(model)
        self.objective, self.maximize = _objective(model)
        self.rows = _model_rows(model, self.variables, self.objective)
        self.costs = self.rows.costs
        self.step = value_step(self.objective)
        self.flat = _flat(self.objective)
        self.found: dict[bytes, tuple[float, np.ndarray]] = {}
        self._no_goods: dict[bytes, Any] = {}  # each assignment's row, built once
        self._cutoff_row: tuple[float, Any] | None = None  # the k-th value and its row

    def separate(self, solution: Any) -> list[Any]:
        """Record `solution` (when it meets the model) and return the rows that reject it:
        its no-good, and the objective cutoff once k are recorded."""
        values = np.array(solution.values_of(self.variables), dtype=float)
        assignment = np.round(values[self.binaries])
        if not self.rows.meets(values) or self.rows.on_a_ray(values, self.variables):
            return []  # the solver decides: another handler rejects it, or it is unbounded
        values[self.binaries] = assignment
        key = assignment.astype(np.int8).tobytes()
        if not self.rows.meets(values):  # a binary 5e-7 off 0 had met a big-M row 1e9 * y
            completed = self.rows.best_completion(values, self)
            if completed is False:
                return [self._no_good(key, assignment)]  # no point has this assignment
            if completed is True or not self.rows.meets(completed):
                return []
            values = completed
        objective = self._objective_at(values)
        if self.flat and len(self.found) >= self.k and key not in self.found:
            return []  # k points where all tie (no objective): let the solver stop at this one
        known = self.found.get(key)
        if known is None or self._better(objective, known[0]):
            self.found[key] = (objective, values)
        if len(self.found) > 4 * self.k:  # heuristics meet thousands: keep what can count
            self.found = dict(self._ranked_items()[: self.k])
        rows = [self._no_good(key, assignment)]
        if len(self.found) >= self.k and not self.flat:
            rows.append(self._cutoff(self._ranked_values()[self.k - 1]))
        return rows

    def ranked(self) -> list[PoolSolution]:
        """The k best recorded, best first."""
        return [PoolSolution(objective, tuple(self.variables), values)
                for _, (objective, values) in self._ranked_items()[: self.k]]

    def _ranked_items(self) -> list[tuple[bytes, tuple[float, np.ndarray]]]:
        """The recorded assignments, best objective first."""
        sign = -1.0 if self.maximize else 1.0
        return sorted(self.found.items(), key=lambda item: sign * item[1][0])

    def _ranked_values(self) -> list[float]:
        """The recorded objectives, best first."""
        return [objective for _, (objective, _) in self._ranked_items()]

    def _objective_at(self, values: np.ndarray) -> float:
        """The objective at `values` (0 for a model without one)."""
        if self.objective is None:
            return 0.0
        return float(self.objective.constant + self.costs @ values)

    def _better(self, objective: float, than: float) -> bool:
        """Whether `objective` beats `than` in the model's sense."""
        return objective > than if self.maximize else objective < than

    def _no_good(self, key: bytes, assignment: np.ndarray) -> Any:
        """The row only `assignment` of the binaries violates (it differs somewhere), built
        once per assignment: heuristics offer the same ones again and again."""
        row = self._no_goods.get(key)
        if row is None:
            if len(self._no_goods) >= NO_GOOD_CACHE:
                self._no_goods.clear()
            row = self._no_goods[key] = self._new_no_good(assignment)
        return row

    def _new_no_good(self, assignment: np.ndarray) -> Any:
        """The no-good row of `assignment`, sum over ones - sum over zeros <= ones - 1, as
        one LinearExpression the lazy rows read off its lists (a sum of sums went through
        Pyomo's standard form at every heuristic solution: 4 ms of a callback at 1,000
        binaries)."""
        signs = np.where(assignment > 0.5, 1.0, -1.0)
        body = LinearExpression(constant=0.0, linear_coefs=signs.tolist(),
                                linear_vars=[self.variables[j] for j in self.binaries])
        return body <= float((signs > 0).sum() - 1)

    def _cutoff(self, kth: float) -> Any:
        """The row that admits only objectives better than `kth`: by `step` where the
        objective takes whole multiples of it (else ties with `kth` stay in, and each must
        be met and cut off: 313 rows for 10 best on a 60-node independent set)."""
        if self._cutoff_row is not None and self._cutoff_row[0] == kth:
            return self._cutoff_row[1]
        terms = self.objective
        expr = LinearExpression(constant=0.0, linear_coefs=[float(c) for c in terms.coefs],
                                linear_vars=list(terms.variables))
        if self.maximize:
            row = expr >= kth - terms.constant + self.step
        else:
            row = expr <= kth - terms.constant - self.step
        self._cutoff_row = (kth, row)
        return row


def _flat(objective: LinearTerms | None) -> bool:
    """Whether every point has the same objective (none, or a constant, fixed variables'
    terms too): any k feasible assignments are k best, and no cutoff row can prune."""
    return objective is None or not len(objective.variables)


def _variables(model: pyo.Block) -> tuple[list[VarData], np.ndarray]:
    """The model's unfixed variables of its active rows, SOS constraints and objective, and
    the positions of the binary ones; any other integer variable is refused (no linear
    no-good for it), as is an SOS over variables that are not binary."""
    seen: dict[int, VarData] = {}
    parts = [c.body for c in model.component_data_objects(pyo.Constraint, active=True)]
    parts += [o.expr for o in model.component_data_objects(pyo.Objective, active=True)]
    for expr in parts:
        for var in identify_variables(expr, include_fixed=False):
            seen.setdefault(id(var), var)
    for sos in model.component_data_objects(pyo.SOSConstraint, active=True):
        for var, _ in sos.get_items():
            if var.fixed:
                continue
            if not (var.is_integer() and _zero_one(var)):
                raise UnsupportedModelError(
                    f"k_best ranks binary assignments; SOS constraint {sos.name!r} has "
                    f"{var.name!r}, not binary: SCIP's SOS branching splits one assignment's "
                    "points across nodes, so a no-good row could cut off its best one "
                    "(write the SOS with binaries and rows)")
            seen.setdefault(id(var), var)
    variables = list(seen.values())
    for var in variables:
        if var.is_integer() and not _zero_one(var):
            raise UnsupportedModelError(
                f"k_best takes binary integers only; {var.name!r} is a general integer "
                f"(bounds {var.bounds})")
    binaries = np.array([j for j, var in enumerate(variables) if var.is_integer()],
                        dtype=np.int64)
    if binaries.size == 0 and not _has_fixed_binary(model):
        raise UnsupportedModelError("k_best needs binary variables: an LP has one optimum "
                                    "to report (use solve)")
    return variables, binaries


def _has_fixed_binary(model: pyo.Block) -> bool:
    """Whether some binary of `model` is fixed: its binaries then have one assignment."""
    return any(var.fixed and var.is_integer() and _zero_one(var)
               for var in model.component_data_objects(pyo.Var, active=True))


def _zero_one(var: VarData) -> bool:
    """Whether integer `var` takes 0 or 1 only: Binary, or an integer domain bounded within
    [0, 1] (`Integers` with bounds (0, 1)), for which the no-good row is the same."""
    if var.is_binary():
        return True
    lower, upper = var.bounds
    return lower is not None and upper is not None and math.ceil(lower - 1e-9) >= 0 \
        and math.floor(upper + 1e-9) <= 1


def _objective(model: pyo.Block) -> tuple[LinearTerms | None, bool]:
    """The active objective's linear terms (None without one) and whether it maximizes."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) > 1:
        raise InputError(f"the model has {len(objectives)} active objectives; keep one")
    if not objectives:
        return None, False
    terms = linear_terms(objectives[0].expr)
    if terms is None:
        raise UnsupportedModelError(f"k_best needs a linear objective; "
                                    f"{objectives[0].name!r} is not")
    return terms, objectives[0].sense == pyo.maximize


class _Rows:
    """The model's rows and bounds as arrays (columns in `variables` order), to check a
    point in one product, and the objective's coefficients."""

    def __init__(self, form: Any) -> None:
        self.matrix, self.lower, self.upper = form.matrix, form.lower, form.upper
        self.col_lower, self.col_upper = form.col_lower, form.col_upper
        self.costs = form.costs

    def meets(self, values: np.ndarray) -> bool:
        """Whether `values` meet every row and bound within ROW_TOL."""
        if not np.all(np.abs(values) < SOLVER_INFINITY):  # SCIP's points on an unbounded ray
            return False
        activity = self.matrix @ values
        return bool(_within(activity, self.lower, self.upper)
                    and _within(values, self.col_lower, self.col_upper))


    def unbounded_at(self, values: np.ndarray, search: _Search) -> bool:
        """Whether the LP left with the binaries fixed as in feasible `values` is unbounded.
        Then so is the model (every assignment's polyhedron has the same recession cone),
        which SCIP does not always say once the no-good rows reject its points on a ray."""
        return self._fixed_lp(values, search).status == LINPROG_UNBOUNDED

    def best_completion(self, values: np.ndarray, search: _Search) -> np.ndarray | bool:
        """The best point with the binaries as in `values` (scipy's HiGHS on the LP left);
        False where that LP is infeasible, True where it has no optimum for another reason
        (unbounded: the solver's to say)."""
        outcome = self._fixed_lp(values, search)
        if outcome.status == 0:
            return np.asarray(outcome.x, dtype=float) + 0.0
        return outcome.status != LINPROG_INFEASIBLE

    def _fixed_lp(self, values: np.ndarray, search: _Search) -> Any:
        """scipy's linprog outcome for the model with its binaries fixed as in `values`."""
        from scipy.optimize import linprog

        lower, upper = self.col_lower.copy(), self.col_upper.copy()
        lower[search.binaries] = upper[search.binaries] = values[search.binaries]
        has_upper, has_lower = np.isfinite(self.upper), np.isfinite(self.lower)
        a_ub = scipy_sparse.vstack([self.matrix[has_upper], -self.matrix[has_lower]])
        b_ub = np.concatenate([self.upper[has_upper], -self.lower[has_lower]])
        costs = -self.costs if search.maximize else self.costs
        bounds = np.column_stack([lower, upper])
        return linprog(costs, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")

    def on_a_ray(self, values: np.ndarray, variables: list[VarData]) -> bool:
        """Whether a variable without a bound sits at the box `solve` puts on an unbounded
        round with HiGHS (+-BOX), that box in place: the model is unbounded there, no point
        to record. Outside such a round a value past BOX is a point like any other (y =
        1e10 under y <= 1e10 x0 was dropped, and the optimum with it)."""
        free = ~np.isfinite(self.col_lower) | ~np.isfinite(self.col_upper)
        at_box = np.flatnonzero(free & (np.abs(values) >= BOX * (1 - 1e-9)))
        return any(_boxed(variables[k], values[k]) for k in at_box.tolist())


def _boxed(var: VarData, value: float) -> bool:
    """Whether `var` now holds the bound of the box (+-BOX) on the side `value` sits at."""
    bound = var.ub if value > 0 else var.lb
    return bound is not None and abs(bound) == BOX


def _within(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> bool:
    """lower <= values <= upper, each within ROW_TOL relative to max(1, |side|, |value|)."""
    scale = np.maximum(1.0, np.abs(values))
    with np.errstate(invalid="ignore"):  # inf - inf where a side is absent
        low = np.where(np.isfinite(lower), lower - ROW_TOL * np.maximum(scale, abs(lower)),
                       -np.inf)
        high = np.where(np.isfinite(upper), upper + ROW_TOL * np.maximum(scale, abs(upper)),
                        np.inf)
    return bool(np.all(values >= low) and np.all(values <= high))


def _model_rows(model: pyo.Block, variables: list[VarData],
                objective: LinearTerms | None) -> _Rows:
    """The model's rows over `variables` (any nonlinear one refused, named)."""
    rows = []
    for con in model.component_data_objects(pyo.Constraint, active=True):
        terms = linear_terms(con.body)
        if terms is None:
            raise UnsupportedModelError(f"k_best needs linear constraints; {con.name!r} is not")
        lo = None if con.lower is None else float(pyo.value(con.lower))
        hi = None if con.upper is None else float(pyo.value(con.upper))
        rows.append((con, terms, _finite(lo), _finite(hi)))
    return _Rows(min_form(LinearProgram(rows, objective, False, variables=list(variables))))


def _finite(side: float | None) -> float | None:
    """A side, None where it is absent or infinite (the solvers' 1e20 and beyond)."""
    return None if side is None or abs(side) >= SOLVER_INFINITY else side
