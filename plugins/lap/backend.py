"""`solve(model, solver="lap")`: detect an assignment-structured Pyomo model and solve it
exactly by the LAP path (x[i,j] in [0,1], one-per-row / one-per-column constraints:
sum(x) == 1 or <= 1 on each side, <= 1 on both being a matching, and sum(x) >= 1 beside as
many == 1 or <= 1 constraints)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.arguments import check_flag
from coplug.plugins.duals import dual_request, load_duals, soplex_duals
from coplug.plugins.errors import InputError, TimeLimitError, UnsupportedModelError
from coplug.plugins.interrupts import sigint_deferred
from coplug.plugins.lap import bipartite, sparse
from coplug.plugins.lap.duals import assignment_row_duals
from coplug.plugins.lap.solver import LapSolution, solve_lap
from coplug.plugins.linear_terms import LinearTerms, dropped_variables, linear_terms
from coplug.plugins.modeldata import SOLVER_INFINITY, fixed_off_whole
from coplug.plugins.results import Result, Status

_KNOWN_PARAMS = {"warm"}
# Coefficients of a row/column constraint must agree to this relative tolerance (no absolute
# slack): x0 + 1.000009 x1 == 1 is not an assignment row (x1 = 1 would violate it).
COEF_RTOL = 1e-12


@dataclass
class AssignmentStructure:
    """Rows, columns and the variable of each allowed (row, column) pair with its cost."""

    n_rows: int
    n_cols: int
    rows: np.ndarray
    cols: np.ndarray
    costs: np.ndarray
    variables: list[VarData]
    zero_vars: list[VarData]
    maximize: bool
    offset: float
    infeasible: str | None = None
    has_objective: bool = True
    # Zero-cost pairs without a variable (padding of matching blocks, see `_pad_matchings`).
    dummy_rows: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    dummy_cols: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    fill_zero: bool = False  # every pair the model lacks is such a dummy: dense costs
    # Variables left at 0 because another variable of the same (row, column) pair costs
    # less (`_one_per_pair`): one optimum ignores them, a ranking of solutions cannot.
    parallel: int = 0
    # Matching blocks (first row, rows, first column, columns) left unpadded
    # (`detect_assignment(..., pad_matchings=False)`).
    matching_blocks: list[tuple[int, int, int, int]] = field(default_factory=list)
    # Each row/column constraint, its sense, and its row (is_row) or column index.
    units: list[tuple[Any, str, bool, int]] = field(default_factory=list)
    # The linear terms read off each row/column constraint, by id, for `dual_request`.
    terms: dict[int, LinearTerms] = field(default_factory=dict)
    # Variables of the model's rows or objective with zero coefficients only, and the value
    # within their bounds they are loaded at (nearest 0).
    idle: list[tuple[VarData, float]] = field(default_factory=list)

    @classmethod
    def infeasible_model(cls, reason: str, maximize: bool) -> AssignmentStructure:
        """No structure to solve: the model is infeasible for `reason`."""
        empty = np.empty(0, dtype=np.int64)
        return cls(n_rows=0, n_cols=0, rows=empty, cols=empty, costs=np.empty(0),
                   variables=[], zero_vars=[], maximize=maximize, offset=0.0,
                   infeasible=reason)

    def cost_matrix(self) -> np.ndarray | sp.csr_matrix:
        """Dense when every pair is allowed, else sparse (missing pairs forbidden); dummy
        pairs cost 0."""
        if self.fill_zero or len(self.costs) + len(self.dummy_rows) == self.n_rows * self.n_cols:
            dense = np.zeros((self.n_rows, self.n_cols))
            dense[self.rows, self.cols] = self.costs
            return dense
        if len(self.dummy_rows):
            return sp.csr_matrix(
                (np.r_[self.costs, np.zeros(len(self.dummy_rows))],
                 (np.r_[self.rows, self.dummy_rows], np.r_[self.cols, self.dummy_cols])),
                shape=(self.n_rows, self.n_cols),
            )
        return sp.csr_matrix(
            (self.costs, (self.rows, self.cols)), shape=(self.n_rows, self.n_cols)
        )


class _Unit(NamedTuple):
    """A row or column constraint sum(x) (==, <= or >=) rhs: rhs 1 (>= only 1), or 0 where
    fixed variables (constants, as for any solver) already fill it and force its variables
    to 0."""

    name: str
    variables: list[VarData]
    sense: str
    rhs: float
    con: Any = None  # the constraint itself, to name its family in messages
    terms: LinearTerms | None = None  # its body read once, reused for `m.dual`


class _Infeasible(Exception):
    """Fixed variables leave some constraint unsatisfiable; the message says which."""


def solve_assignment_model(
    model: pyo.Block,
    *,
    plugins: list[Any],
    time_limit: float | None,
    params: dict[str, Any],
    tee: bool,
) -> Result:
    """Solve an assignment-structured model by JV and load x back; `warm=True` predicts
    row duals with RowDualNet (dense costs). Past `time_limit` seconds the result has status
    TIME_LIMIT and no solution (JV holds no complete assignment before it finishes)."""
    if plugins:
        raise InputError("solver='lap' takes no plugins (JV has no callbacks); solve with "
                         "solver='scip', or 'highs' for the plugins HiGHS runs (SolutionPool, "
                         "OnSolution, Progress, LazyConstraints)")
    unknown = set(params) - _KNOWN_PARAMS
    if unknown:
        raise InputError(f"unknown lap option(s) {sorted(unknown)}; known: {sorted(_KNOWN_PARAMS)}")
    warm = check_flag(params.get("warm", False), "lap option warm")
    start = time.perf_counter()
    try:
        structure = detect_assignment(model)
    except Exception:
        dual_request(model, read=False)  # empties m.dual / m.rc: no stale duals stay
        raise
    request = dual_request(model, known_terms=structure.terms)
    # Sparse padded matchings start from row minima: JV's column reduction there left
    # augmenting paths long (15-265x slower on 4,000-row random matchings, 25x at 10,000
    # rows), and the duals it ends at price padded matchings by one shift per component
    # (those a column reduction ends at may need an LP re-solve: `coplug.plugins.lap.duals`)
    row_minima = structure.dummy_rows.size > 0
    result, solution = _solve_structure(structure, warm, time_limit, start, tee, row_minima)
    if request is not None:
        if solution is not None and request.lp is not None and result.status is Status.OPTIMAL:
            request.row_duals = assignment_row_duals(structure.units, solution,
                                                     structure.maximize, request.lp)
        load_duals(request, result, fallback=soplex_duals)
    return result


def _solve_structure(structure: AssignmentStructure, warm: bool, time_limit: float | None,
                     start: float, tee: bool, row_minima: bool = False
                     ) -> tuple[Result, LapSolution | None]:
    """Solve the detected structure by JV and load x; the JV solution too where there is one.
    `row_minima` starts sparse costs from row minima (`solve_lap(arr_passes=0)`)."""
    if structure.infeasible:
        return Result(status=Status.INFEASIBLE, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": structure.infeasible}), None
    if structure.n_rows == 0:  # fixed variables made every choice
        solution = _no_choice()
        return _finish(structure, solution, start, tee), solution
    cost = structure.cost_matrix()
    predictor = None
    if warm:
        from coplug.learned.rowdualnet import load

        predictor = load()
    try:
        remaining = None if time_limit is None else max(time_limit - (time.perf_counter() - start),
                                                        1e-9)
        solution = solve_lap(cost, maximize=structure.maximize, predictor=predictor,
                             time_limit=remaining,
                             arr_passes=0 if row_minima and sp.issparse(cost) else None)
    except TimeLimitError as exc:
        return Result(status=Status.TIME_LIMIT, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": str(exc)}), None
    except InputError as exc:
        if "infeasible" not in str(exc):
            raise
        return Result(status=Status.INFEASIBLE, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": pattern_reason(structure, cost) or str(exc)}), None
    return _finish(structure, solution, start, tee), solution


def pattern_reason(structure: AssignmentStructure, cost: Any) -> str | None:
    """Why the model's pairs admit no assignment, naming a row constraint left out (None
    when the pattern is not what fails): the solver's rows are numbers, the model's have
    names."""
    if not sp.issparse(cost):
        return None
    found = sparse.unassignable(sparse.as_csr(cost))
    if found is None:
        return None
    row, most = found
    names = {index: con.name for con, _, is_row, index in structure.units if is_row}
    where = (f"constraint {names[row]!r}" if row in names
             else "a padding row of a '<= 1' block")
    if most < 0:
        return f"infeasible: {where} has no pair left to choose"
    return (f"infeasible: at most {most} of the {structure.n_rows} row constraints can be met "
            f"at once; {where} is one left out")


def _no_choice() -> LapSolution:
    """The solution of an assignment with no rows left to assign."""
    empty = np.empty(0, dtype=np.int64)
    return LapSolution(row_ind=empty, col_ind=empty, cost=0.0, row_duals=np.empty(0),
                       col_duals=np.empty(0), augmentations=0, warm=False,
                       info={"prediction": "none"})


def _finish(
    structure: AssignmentStructure, solution: LapSolution, start: float, tee: bool
) -> Result:
    """Load x from `solution` and report it as the optimum."""
    _load(structure, solution.row_ind, solution.col_ind)
    objective = solution.cost + structure.offset if structure.has_objective else None
    if tee:
        print(f"lap: {structure.n_rows}x{structure.n_cols}, {len(structure.costs)} pairs, "
              f"objective {objective}, {solution.augmentations} augmentations")
    return Result(
        status=Status.OPTIMAL,
        solver="lap",
        objective=objective,
        bound=objective,
        time=time.perf_counter() - start,
        has_solution=True,
        extra={
            "rows": structure.n_rows,
            "cols": structure.n_cols,
            "pairs": len(structure.costs),
            "augmentations": solution.augmentations,
            "lap_s": solution.time,  # JV alone; `time` also counts reading the Pyomo model
            "warm": solution.warm,
            "prediction": solution.info["prediction"],
            "fallback": solution.fallback,
        },
    )


def detect_assignment(model: pyo.Block, pad_matchings: bool = True) -> AssignmentStructure:
    """Read the assignment structure off a model, or raise UnsupportedModelError saying why.
    Matching blocks are padded into assignment blocks (one optimum) unless `pad_matchings`
    is False: then they stay as they are, listed in `matching_blocks` (a ranking of
    solutions needs every pair)."""
    objective, maximize = _objective(model)
    objective_terms = _objective_terms(objective)
    constraints = list(model.component_data_objects(pyo.Constraint, active=True,
                                                     descend_into=True))
    if not constraints:
        raise UnsupportedModelError("model has no constraints; not an assignment model")
    try:
        units = [unit for con in constraints if (unit := _unit_constraint(con)) is not None]
        cons, zero = _drop_filled(units)
        edges = _edges(cons, objective_terms, zero)
    except _Infeasible as exc:
        return AssignmentStructure.infeasible_model(str(exc), maximize)
    structure = _orient(len(cons), edges, cons, objective_terms, maximize, zero, pad_matchings)
    structure.has_objective = objective is not None
    structure.terms = {id(unit.con): unit.terms for unit in units if unit.terms is not None}
    try:
        structure.idle = _idle(constraints, structure, objective, objective_terms)
    except _Infeasible as exc:
        return AssignmentStructure.infeasible_model(str(exc), maximize)
    off = fixed_off_whole(model)
    if off:  # as SCIP and HiGHS answer (an objective term alone had it called optimal)
        return AssignmentStructure.infeasible_model(
            f"integer variable {off[0].name!r} is fixed at {off[0].value!r}, not a whole "
            "number", maximize)
    return structure


def _idle(constraints: list[Any], structure: AssignmentStructure,
          objective: pyo.Objective | None, objective_terms: LinearTerms
          ) -> list[tuple[VarData, float]]:
    """The variables that only zero coefficients tie to the model (`0 * z` in a row or the
    objective), each with the value nearest 0 within its bounds, as a solver gives them."""
    dropped: list[VarData] = []
    for con in constraints:
        terms = structure.terms.get(id(con))
        dropped += (identify_variables(con.body, include_fixed=False) if terms is None
                    else dropped_variables(con.body, terms))
    if objective is not None:
        dropped += dropped_variables(objective.expr, objective_terms)
    if not dropped:
        return []
    kept = set(map(id, chain(structure.variables, structure.zero_vars)))
    idle = {id(var): var for var in dropped if id(var) not in kept}
    return [(var, _value_nearest_zero(var)) for var in idle.values()]


def _value_nearest_zero(var: VarData) -> float:
    """The value of `var` nearest 0 within its bounds (a whole one for an integer)."""
    lower, upper = var.bounds
    value = 0.0
    if lower is not None and value < lower:
        value = math.ceil(lower) if var.is_integer() else float(lower)
    if upper is not None and value > upper:
        value = math.floor(upper) if var.is_integer() else float(upper)
    if (lower is not None and value < lower) or (upper is not None and value > upper):
        raise _Infeasible(f"variable {var.name!r} has no value within its bounds "
                          f"{var.bounds}")
    return float(value)


class _Edges(NamedTuple):
    """Each constraint variable once, in order of first appearance: the two constraints it
    links, its id and its upper bound (NaN for none)."""

    variables: list[VarData]
    ends: np.ndarray
    ids: np.ndarray
    upper: np.ndarray


def _objective_terms(objective: pyo.Objective | None) -> LinearTerms:
    """The objective's linear terms (none for a feasibility problem, where every
    assignment is optimal)."""
    if objective is None:
        return LinearTerms([], np.empty(0), 0.0)
    terms = linear_terms(objective.expr)
    if terms is None:
        raise UnsupportedModelError(f"objective {objective.name!r} is not linear")
    return terms


def _ids(variables: Sequence[VarData]) -> np.ndarray:
    """The variables' identities as an int64 array."""
    return np.fromiter(map(id, variables), dtype=np.int64, count=len(variables))


def _edges(cons: list[_Unit], objective: LinearTerms, zero: list[VarData]) -> _Edges:
    """The incidence of variables and constraints as edges, checked: every objective
    variable is in some constraint (or forced to 0), every constraint variable in exactly
    two, each within [0, 1]. Arrays over all incidences at once (250,000 variables in a
    fraction of a second)."""
    flat = list(chain.from_iterable(unit.variables for unit in cons))
    ids = _ids(flat)
    obj_ids = _ids(objective.variables)
    stray = ~(np.isin(obj_ids, ids) | np.isin(obj_ids, _ids(zero)))
    if stray.any():
        name = objective.variables[int(np.argmax(stray))].name
        raise UnsupportedModelError(f"objective variable {name!r} appears in no row/column "
                                    "constraint")
    con_of = np.repeat(np.arange(len(cons)), [len(unit.variables) for unit in cons])
    unique, first, inverse, counts = np.unique(ids, return_index=True, return_inverse=True,
                                               return_counts=True)
    if (counts != 2).any():
        k = int(first[counts != 2].min())
        raise UnsupportedModelError(
            f"variable {flat[k].name!r} is in {counts[inverse[k]]} constraints; an assignment "
            "variable is in exactly one row and one column constraint"
        )
    by_id = con_of[np.argsort(inverse, kind="stable")].reshape(-1, 2)
    order = np.argsort(first)
    variables = [flat[k] for k in first[order].tolist()]
    return _Edges(variables, by_id[order], unique[order], _checked_bounds(variables))


def _checked_bounds(variables: list[VarData]) -> np.ndarray:
    """Upper bounds (NaN for none) after checking every x lives in [0, 1] (_Infeasible for
    an upper bound below 0)."""
    bounds = np.array([var.bounds for var in variables], dtype=float).reshape(-1, 2)
    lower, upper = bounds[:, 0], bounds[:, 1]
    bad = ~(np.abs(lower) <= 1e-9) | ((upper > 1e-9) & (upper < 1 - 1e-9)) | (upper < -1e-9)
    if bad.any():
        _check_bounds(variables[int(np.argmax(bad))])
    return upper


def _drop_filled(units: list[_Unit]) -> tuple[list[_Unit], list[VarData]]:
    """Remove the constraints fixed variables fill (rhs 0) and their variables (all 0) from
    every constraint; a constraint left empty is dropped, or infeasible if it is == 1."""
    # id(var) -> (var, the name of a constraint forcing it to 0)
    zero = {id(var): (var, unit.name) for unit in units if unit.rhs == 0
            for var in unit.variables}
    if not zero:
        return units, []
    for var, _ in zero.values():
        _check_bounds(var)
    cons = []
    for unit in units:
        if unit.rhs == 0:
            continue
        left = [var for var in unit.variables if id(var) not in zero]
        if left:
            cons.append(unit._replace(variables=left))
        elif unit.sense in ("==", ">="):
            names = sorted({zero[id(var)][1] for var in unit.variables})
            shown = ", ".join(repr(name) for name in names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else "")
            raise _Infeasible(f"constraint {unit.name!r} cannot be met: every variable in it "
                              f"is forced to 0 by {shown} (a sum of them at most 0, once "
                              "fixed variables count as constants)")
    return cons, [var for var, _ in zero.values()]


def _objective(model: pyo.Block) -> tuple[pyo.Objective | None, bool]:
    """The active objective (None for a feasibility problem) and whether it maximizes."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) > 1:
        raise UnsupportedModelError(f"need at most one active objective, found {len(objectives)}")
    if not objectives:
        return None, False
    return objectives[0], objectives[0].sense == pyo.maximize


def _unit_constraint(con: Any) -> _Unit | None:
    """The constraint as sum(x) (==, <= or >=) 1, or (== or <=) 0 once fixed variables fill
    it; None for a constraint of fixed variables only that they satisfy."""
    terms = linear_terms(con.body)
    if terms is None:
        raise UnsupportedModelError(f"constraint {con.name!r} is not a linear sum of variables")
    lower, upper = _finite_sides(con, terms.constant)
    if not len(terms.variables):
        if (lower is None or lower <= 1e-9) and (upper is None or upper >= -1e-9):
            return None
        note = _fixed_note(con)
        raise _Infeasible(f"constraint {con.name!r} is violated by its fixed variables{note}"
                          if note else f"constraint {con.name!r} has no variables, and its "
                          f"value {pyo.value(con.body, exception=False)!r} is outside its sides "
                          f"[{_side(con.lower, -math.inf)}, {_side(con.upper, math.inf)}]")
    coefs = terms.coefs
    a = float(coefs[0])
    if not (a > 0 or a < 0):
        raise UnsupportedModelError(
            f"constraint {con.name!r} has coefficient {a} on {terms.variables[0].name!r}; "
            "need sum(x) (=|<=) 1 with equal coefficients"
        )
    unequal = np.flatnonzero(np.abs(coefs - a) > COEF_RTOL * abs(a))
    if unequal.size:
        k = int(unequal[0])
        raise UnsupportedModelError(
            f"constraint {con.name!r} has coefficient {float(coefs[k])!r} on "
            f"{terms.variables[k].name!r} but {a!r} on {terms.variables[0].name!r}; "
            "need sum(x) (=|<=) 1 with equal coefficients"
        )
    if a < 0:  # -sum(x) >= -1 is sum(x) <= 1: dividing by a < 0 swaps the sides
        lower, upper = upper, lower
    lower = None if lower is None else lower / a
    upper = None if upper is None else upper / a
    variables = list(terms.variables)
    tol = _side_tolerance(a)
    if upper is not None and upper < -tol:
        for var in variables:
            _check_bounds(var)
        raise _Infeasible(f"constraint {con.name!r} needs sum(x) <= {upper:g} < 0"
                          f"{_fixed_note(con)}")
    if upper is None and lower is not None and abs(lower - 1) <= tol:
        return _Unit(con.name, variables, ">=", 1.0, con, terms)  # see `_sides`
    rhs = next((r for r in (1.0, 0.0) if upper is not None and abs(upper - r) <= tol), None)
    if rhs is None and upper is None and lower is not None and lower <= 1e-9 and _fixed_note(con):
        raise UnsupportedModelError(
            f"constraint {con.name!r} is already met by its fixed variables{_fixed_note(con)}, "
            "which leaves its other variables in one constraint only; the LAP path needs each "
            "x in a row and a column constraint: use solver='highs' or 'scip'")
    if rhs is None:
        raise UnsupportedModelError(
            f"constraint {con.name!r} is not of the form sum(x) (=|<=) 1{_fixed_note(con)}"
        )
    if lower is not None and abs(lower - rhs) <= tol:
        return _Unit(con.name, variables, "==", rhs, con, terms)
    if lower is None or lower <= 0:
        return _Unit(con.name, variables, "<=", rhs, con, terms)
    raise UnsupportedModelError(f"constraint {con.name!r} has lower bound {lower}; need 1 or none")


def _finite_sides(con: Any, constant: float) -> tuple[float | None, float | None]:
    """The constraint's sides less the body's constant; one at or past the solvers' infinity
    (1e20) is None, "no bound" as on the other paths (`1 <= sum(x) <= inf` had been refused)."""
    lower = None if con.lower is None else pyo.value(con.lower)
    upper = None if con.upper is None else pyo.value(con.upper)
    lower = None if lower is None or lower <= -SOLVER_INFINITY else lower - constant
    upper = None if upper is None or upper >= SOLVER_INFINITY else upper - constant
    return lower, upper


def _side_tolerance(a: float) -> float:
    """How far a side divided by the row's coefficient `a` may lie from 1 or 0: 1e-9 of the
    sum, and 1e-9 of the row's own activity past a few roundings of `a` (at a = 1e12 a side
    off by 500 had passed as 1, and an infeasible point came back optimal)."""
    return min(1e-9, max(1e-9 / abs(a), 4 * np.finfo(float).eps))


def _side(side: Any, missing: float) -> float:
    """A constraint side's value for a message, `missing` (+-inf) where it has none."""
    return missing if side is None else pyo.value(side)


def _fixed_note(con: Any) -> str:
    """Names and values of the fixed variables in `con` (constants to any solver) for an
    error message, or '' when it has none."""
    fixed = [var for var in identify_variables(con.body, include_fixed=True) if var.fixed]
    if not fixed:
        return ""
    shown = ", ".join(f"{var.name}={pyo.value(var)}" for var in fixed[:3])
    more = f" and {len(fixed) - 3} more" if len(fixed) > 3 else ""
    return f" (fixed variables count as constants: {shown}{more})"


def _check_bounds(var: VarData) -> None:
    """x must live in [0, 1] (binary, integer or continuous with lower bound 0); an upper
    bound below that 0 leaves x no value, so the model is infeasible, not x forced to 0."""
    lb, ub = var.bounds
    if lb is None or abs(lb) > 1e-9:
        raise UnsupportedModelError(f"variable {var.name!r} has lower bound {lb}; need 0")
    if ub is not None and ub < -1e-9:
        raise _Infeasible(f"variable {var.name!r} has bounds [{lb:g}, {ub:g}]: no value meets "
                          "both")
    if ub is not None and 1e-9 < ub < 1 - 1e-9:
        raise UnsupportedModelError(f"variable {var.name!r} has upper bound {ub}; need 0 or >= 1")


def _orient(
    n_cons: int, edges: _Edges, cons: list[_Unit], objective: LinearTerms, maximize: bool,
    zero: list[VarData], pad_matchings: bool = True,
) -> AssignmentStructure:
    """Two-colour each component of the constraint graph (constraints linked by the edges'
    variables) into row and column constraints and index the pairs (variables in `zero`
    are forced to 0 by fixed ones). A component the LAP path cannot take is refused unless
    another one already makes the model infeasible."""
    row_of = np.full(n_cons, -1, dtype=np.int64)
    col_of = np.full(n_cons, -1, dtype=np.int64)
    n_rows = n_cols = 0
    infeasible = None
    refused: UnsupportedModelError | None = None
    blocks: list[tuple[int, int, int, int]] = []  # matchings: first row, rows, first col, cols
    for part in bipartite.split(n_cons, edges.ends):
        try:
            side_a, side_b, infeasible_here, matching = _sides(part, cons)
        except UnsupportedModelError as exc:
            refused = refused or exc
            continue
        infeasible = infeasible_here or infeasible
        if matching:
            blocks.append((n_rows, len(side_a), n_cols, len(side_b)))
        row_of[side_a] = np.arange(n_rows, n_rows + len(side_a))
        col_of[side_b] = np.arange(n_cols, n_cols + len(side_b))
        n_rows, n_cols = n_rows + len(side_a), n_cols + len(side_b)
    if refused is not None:
        if infeasible is None:
            raise refused
        return AssignmentStructure.infeasible_model(infeasible, maximize)
    a, b = edges.ends[:, 0], edges.ends[:, 1]
    a_is_row = row_of[a] >= 0
    rows = row_of[np.where(a_is_row, a, b)]
    cols = col_of[np.where(a_is_row, b, a)]
    costs = _edge_costs(edges.ids, objective)
    forced = edges.upper <= 1e-9  # NaN (no bound) compares False
    keep, winner = _one_per_pair(rows, cols, costs, ~forced, maximize, n_cols)
    variables = [edges.variables[k] for k in winner[keep].tolist()]
    losers = np.flatnonzero(~forced & ~np.isin(np.arange(len(costs)), winner[keep]))
    zero_vars = [*zero, *(edges.variables[k] for k in np.flatnonzero(forced).tolist()),
                 *(edges.variables[k] for k in losers.tolist())]
    structure = AssignmentStructure(
        n_rows=n_rows, n_cols=n_cols, rows=rows[keep], cols=cols[keep],
        costs=costs[winner[keep]], variables=variables, zero_vars=zero_vars,
        maximize=maximize, offset=objective.constant, infeasible=infeasible,
        parallel=int(losers.size),
        units=[(unit.con, unit.sense, bool(row_of[k] >= 0), int(max(row_of[k], col_of[k])))
               for k, unit in enumerate(cons)],
    )
    if blocks and not pad_matchings:
        structure.matching_blocks = blocks
        return structure  # a matching block may have more rows than columns
    if blocks:
        _pad_matchings(structure, blocks)  # square blocks: they leave n_rows - n_cols as is
    if infeasible is None and structure.n_rows > structure.n_cols:
        structure.infeasible = (f"{structure.n_rows} rows must each get one of only "
                                f"{structure.n_cols} columns")
    return structure


def _pad_matchings(structure: AssignmentStructure, blocks: list[tuple[int, int, int, int]]
                   ) -> None:
    """Turn each matching block (sum(x) <= 1 on both sides; first row, rows, first column,
    columns) into a square assignment block in place: only pairs that beat 0 (cost < 0, or
    > 0 under maximize) keep their variable, every other x is 0, and zero-cost dummy pairs
    make every partial matching of those pairs completable.

    Why exact (minimize; maximize mirrors it): c'_ij = min(c_ij, 0) on the model's pairs and
    0 elsewhere. Any perfect matching of c' costs what its model pairs with c_ij < 0 cost,
    and those form a matching; any matching drops its c_ij >= 0 pairs at no loss and
    completes to a perfect matching through 0 entries, so both optima agree. A complete
    block is padded to max(n, m) squared, dense; a sparse one (a dense square would be
    mostly padding) gets a dummy row d_j per column and a dummy column d_i per row, pairs
    (i, d_i), (d_j, j) and (d_j, d_i) for each kept pair (i, j): a matching M completes by
    (i, d_i) for unmatched i, (d_j, j) for unmatched j and (d_j, d_i) for (i, j) in M."""
    favourable = structure.costs > 0 if structure.maximize else structure.costs < 0
    block_of = np.full(structure.n_rows, -1, dtype=np.int64)
    for k, (r0, n, _, _) in enumerate(blocks):
        block_of[r0:r0 + n] = k
    edge_block = block_of[structure.rows]
    pairs = np.bincount(edge_block[edge_block >= 0], minlength=len(blocks))
    drop = (edge_block >= 0) & ~favourable
    if drop.any():
        structure.zero_vars.extend(structure.variables[k] for k in np.flatnonzero(drop).tolist())
        structure.variables = [var for var, d in zip(structure.variables, drop.tolist(),
                                                     strict=True) if not d]
        keep = ~drop
        structure.rows, structure.cols = structure.rows[keep], structure.cols[keep]
        structure.costs, edge_block = structure.costs[keep], edge_block[keep]
    n_rows, n_cols = structure.n_rows, structure.n_cols
    if len(blocks) == 1 and pairs[0] == n_rows * n_cols:  # the whole model, every pair
        size = max(n_rows, n_cols)
        structure.n_rows = structure.n_cols = size
        structure.fill_zero = True
        return
    dummy_rows, dummy_cols = [], []
    for k, (r0, n, c0, m) in enumerate(blocks):
        inside = np.flatnonzero(edge_block == k)
        i, j = structure.rows[inside] - r0, structure.cols[inside] - c0
        if pairs[k] == n * m:
            size = max(n, m)
            block_rows = np.r_[np.arange(r0, r0 + n), np.arange(n_rows, n_rows + size - n)]
            block_cols = np.r_[np.arange(c0, c0 + m), np.arange(n_cols, n_cols + size - m)]
            taken = np.zeros((size, size), dtype=bool)
            taken[i, j] = True
            free_i, free_j = np.nonzero(~taken)
            dummy_rows.append(block_rows[free_i])
            dummy_cols.append(block_cols[free_j])
            n_rows, n_cols = n_rows + size - n, n_cols + size - m
        else:
            d_row = n_rows + np.arange(m)  # d_j
            d_col = n_cols + np.arange(n)  # d_i
            dummy_rows += [np.arange(r0, r0 + n), d_row, d_row[j]]
            dummy_cols += [d_col, np.arange(c0, c0 + m), d_col[i]]
            n_rows, n_cols = n_rows + m, n_cols + n
    structure.n_rows, structure.n_cols = n_rows, n_cols
    structure.dummy_rows = np.concatenate(dummy_rows).astype(np.int64)
    structure.dummy_cols = np.concatenate(dummy_cols).astype(np.int64)


def _family(cons: list[_Unit], side: list[int]) -> str:
    """The names of the constraint families (indexed components) on one side."""
    names = sorted({unit.name if unit.con is None else unit.con.parent_component().name
                    for unit in (cons[k] for k in side)})
    shown = ", ".join(repr(name) for name in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{'families' if len(names) > 1 else 'family'} {shown}{more}"


_TAKES = ("the LAP path takes sum(x) == 1 or <= 1 on each side (<= 1 on both: a matching), "
          "and sum(x) >= 1 only beside as many == 1 or <= 1 constraints; use solver='highs' "
          "or 'scip'")


def _sides(part: bipartite.Component, cons: list[_Unit]) -> tuple[list[int], list[int],
                                                                   str | None, bool]:
    """One component's row and column constraints (sorted), why it is infeasible (None
    when it is not) and whether it is a matching (<= 1 on both sides); raise when the LAP
    path cannot take it.

    sum(x) >= 1 on one side (n constraints) beside == 1 or <= 1 on the other (m): the x
    sum to at least n and at most m, so n > m is infeasible and n == m makes every
    constraint hold with equality (an assignment); n < m lets a row take several columns
    and is refused, as is >= on both sides (a covering problem)."""
    name = cons[min(part.nodes)].name
    if not part.bipartite:
        raise UnsupportedModelError(
            f"constraints do not split into row and column families (odd cycle through {name!r})"
        )
    side_a, side_b = part.side_a, part.side_b
    senses_a = {cons[k].sense for k in side_a}
    senses_b = {cons[k].sense for k in side_b}
    for side, senses in ((side_a, senses_a), (side_b, senses_b)):
        if len(senses) > 1:
            first = {}  # each sense's first constraint on this side (not `name`: the other's)
            for k in sorted(side):
                first.setdefault(cons[k].sense, cons[k].name)
            shown = ", ".join(f"{first[sense]!r} is sum(x) {sense} 1" for sense in sorted(first))
            raise UnsupportedModelError(
                f"constraint {_family(cons, side)} mixes senses on one side ({shown}); {_TAKES}"
            )
    (sense_a,), (sense_b,) = senses_a, senses_b
    if sense_a == sense_b == "<=":
        return sorted(side_a), sorted(side_b), None, True
    if ">=" in (sense_a, sense_b):
        if sense_a != ">=":
            side_a, side_b, sense_a, sense_b = side_b, side_a, sense_b, sense_a
        if sense_b == ">=":
            raise UnsupportedModelError(
                f"constraints of {_family(cons, side_a)} and of {_family(cons, side_b)} around "
                f"{name!r} are all sum(x) >= 1 (a covering problem, not an assignment); "
                f"{_TAKES}"
            )
        if len(side_a) > len(side_b):
            return sorted(side_a), sorted(side_b), (
                f"{len(side_a)} sum(x) >= 1 constraints ({_family(cons, side_a)}) around "
                f"{name!r} need more than the {len(side_b)} that the sum(x) {sense_b} 1 "
                f"constraints ({_family(cons, side_b)}) allow"
            ), False
        if len(side_a) < len(side_b):
            raise UnsupportedModelError(
                f"sum(x) >= 1 constraints ({_family(cons, side_a)}, {len(side_a)}) around "
                f"{name!r} need as many sum(x) == 1 or <= 1 constraints on the other side "
                f"(then each holds with equality), not {len(side_b)} "
                f"({_family(cons, side_b)}): a row could take several columns; {_TAKES}"
            )
        sense_a = sense_b = "=="
    if sense_a == "<=" or (sense_b == "==" and len(side_b) < len(side_a)):
        side_a, side_b = side_b, side_a
        sense_a, sense_b = sense_b, sense_a
    infeasible = None
    if sense_b == "==" and len(side_a) != len(side_b):
        infeasible = (f"{len(side_a)} row constraints but {len(side_b)} column constraints "
                      f"must all be met around {name!r}")
    elif len(side_a) > len(side_b):
        infeasible = (f"{len(side_a)} sum(x) == 1 constraints ({_family(cons, side_a)}) "
                      f"around {name!r} must each get one of only {len(side_b)} sum(x) <= 1 "
                      f"constraints ({_family(cons, side_b)})")
    return sorted(side_a), sorted(side_b), infeasible, False


def _edge_costs(ids: np.ndarray, objective: LinearTerms) -> np.ndarray:
    """Each edge variable's objective coefficient (0 when the objective lacks it)."""
    costs = np.zeros(len(ids))
    obj_ids = _ids(objective.variables)
    if obj_ids.size == 0 or ids.size == 0:
        return costs
    sorter = np.argsort(obj_ids)
    pos = np.minimum(np.searchsorted(obj_ids, ids, sorter=sorter), len(obj_ids) - 1)
    hit = obj_ids[sorter[pos]] == ids
    costs[hit] = objective.coefs[sorter[pos[hit]]]
    return costs


def _one_per_pair(rows: np.ndarray, cols: np.ndarray, costs: np.ndarray, usable: np.ndarray,
                  maximize: bool, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Where two usable variables share a (row, column) pair at most one can be 1: the pair
    keeps its first variable's slot and the better cost (the first on ties). Returns which
    edges keep a slot and, per edge, the edge whose variable fills it."""
    winner = np.arange(len(costs))
    keep = usable.copy()
    key = rows * np.int64(max(n_cols, 1)) + cols
    slots = np.flatnonzero(usable)
    slots = slots[np.argsort(key[slots], kind="stable")]  # grouped by pair, edge order kept
    bounds = np.flatnonzero(np.r_[True, key[slots][1:] != key[slots][:-1], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if hi - lo < 2:
            continue
        group = slots[lo:hi]
        best = group[0]
        for k in group[1:].tolist():
            if (costs[k] > costs[best]) if maximize else (costs[k] < costs[best]):
                best = k
            keep[k] = False
        winner[group[0]] = best
    return keep, winner


def _load(structure: AssignmentStructure, row_ind: np.ndarray, col_ind: np.ndarray) -> None:
    """Set x = 1 on the chosen pairs and 0 elsewhere, all of them before a Ctrl-C counts."""
    chosen = set(zip(row_ind.tolist(), col_ind.tolist(), strict=True))
    pairs = zip(structure.rows.tolist(), structure.cols.tolist(), structure.variables, strict=True)
    with sigint_deferred():
        for r, c, var in pairs:
            var.set_value(1.0 if (r, c) in chosen else 0.0, skip_validation=True)
        for var in structure.zero_vars:
            var.set_value(0.0, skip_validation=True)
        for var, value in structure.idle:
            var.set_value(value, skip_validation=True)
