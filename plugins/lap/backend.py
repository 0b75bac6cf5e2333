"""`solve(model, solver="lap")`: detect an assignment-structured Pyomo model and solve it
exactly by the LAP path (x[i,j] in [0,1], one-per-row / one-per-column constraints)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables
from pyomo.repn import generate_standard_repn

from coplug.plugins.errors import InputError, TimeLimitError, UnsupportedModelError
from coplug.plugins.lap import bipartite
from coplug.plugins.lap.solver import LapSolution, solve_lap
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

    @classmethod
    def infeasible_model(cls, reason: str, maximize: bool) -> AssignmentStructure:
        """No structure to solve: the model is infeasible for `reason`."""
        empty = np.empty(0, dtype=np.int64)
        return cls(n_rows=0, n_cols=0, rows=empty, cols=empty, costs=np.empty(0),
                   variables=[], zero_vars=[], maximize=maximize, offset=0.0,
                   infeasible=reason)

    def cost_matrix(self) -> np.ndarray | sp.csr_matrix:
        """Dense when every pair is allowed, else sparse (missing pairs forbidden)."""
        if len(self.costs) == self.n_rows * self.n_cols:
            dense = np.zeros((self.n_rows, self.n_cols))
            dense[self.rows, self.cols] = self.costs
            return dense
        return sp.csr_matrix(
            (self.costs, (self.rows, self.cols)), shape=(self.n_rows, self.n_cols)
        )


class _Unit(NamedTuple):
    """A row or column constraint sum(x) (== or <=) rhs: rhs 1, or 0 where fixed variables
    (constants, as for any solver) already fill it and force its variables to 0."""

    name: str
    variables: list[VarData]
    sense: str
    rhs: float


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
        raise InputError("solver='lap' takes no plugins; plugins run inside SCIP (solver='scip')")
    unknown = set(params) - _KNOWN_PARAMS
    if unknown:
        raise InputError(f"unknown lap option(s) {sorted(unknown)}; known: {sorted(_KNOWN_PARAMS)}")
    warm = params.get("warm", False)
    if not isinstance(warm, bool):
        raise InputError(f"lap option warm must be True or False, got {warm!r}")
    start = time.perf_counter()
    structure = detect_assignment(model)
    if structure.infeasible:
        return Result(status=Status.INFEASIBLE, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": structure.infeasible})
    if structure.n_rows == 0:  # fixed variables made every choice
        return _finish(structure, _no_choice(), start, tee)
    cost = structure.cost_matrix()
    predictor = None
    if warm:
        from coplug.learned.rowdualnet import load

        predictor = load()
    try:
        remaining = None if time_limit is None else max(time_limit - (time.perf_counter() - start),
                                                        1e-9)
        solution = solve_lap(cost, maximize=structure.maximize, predictor=predictor,
                             time_limit=remaining)
    except TimeLimitError as exc:
        return Result(status=Status.TIME_LIMIT, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": str(exc)})
    except InputError as exc:
        if "infeasible" not in str(exc):
            raise
        return Result(status=Status.INFEASIBLE, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": str(exc)})
    return _finish(structure, solution, start, tee)


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


def detect_assignment(model: pyo.Block) -> AssignmentStructure:
    """Read the assignment structure off a model, or raise UnsupportedModelError saying why."""
    objective, maximize = _objective(model)
    if objective is None:  # a feasibility problem: every assignment is optimal
        obj_vars, obj_coef, offset = [], {}, 0.0
    else:
        obj_repn = generate_standard_repn(objective.expr, compute_values=True, quadratic=False)
        if obj_repn.nonlinear_expr is not None:
            raise UnsupportedModelError(f"objective {objective.name!r} is not linear")
        obj_vars, offset = list(obj_repn.linear_vars), float(obj_repn.constant)
        obj_coef = {id(v): float(a) for v, a in zip(
            obj_repn.linear_vars, obj_repn.linear_coefs, strict=True
        )}
    constraints = list(model.component_data_objects(pyo.Constraint, active=True,
                                                     descend_into=True))
    if not constraints:
        raise UnsupportedModelError("model has no constraints; not an assignment model")
    try:
        units = [unit for con in constraints if (unit := _unit_constraint(con)) is not None]
        cons, zero = _drop_filled(units)
    except _Infeasible as exc:
        return AssignmentStructure.infeasible_model(str(exc), maximize)
    var_cons: dict[int, list[int]] = {}
    var_obj: dict[int, VarData] = {}
    for k, unit in enumerate(cons):
        for var in unit.variables:
            var_cons.setdefault(id(var), []).append(k)
            var_obj[id(var)] = var
    zero_ids = {id(var) for var in zero}
    for var in obj_vars:
        if id(var) not in var_cons and id(var) not in zero_ids:
            raise UnsupportedModelError(
                f"objective variable {var.name!r} appears in no row/column constraint"
            )
    ends, edge_vars = [], []
    for vid, where in var_cons.items():
        var = var_obj[vid]
        if len(where) != 2:
            raise UnsupportedModelError(
                f"variable {var.name!r} is in {len(where)} constraints; an assignment variable "
                "is in exactly one row and one column constraint"
            )
        _check_bounds(var)
        ends.append(where)
        edge_vars.append(vid)
    structure = _orient(len(cons), np.array(ends, dtype=np.int64).reshape(-1, 2), edge_vars,
                        cons, var_obj, obj_coef, maximize, offset, zero)
    structure.has_objective = objective is not None
    return structure


def _drop_filled(units: list[_Unit]) -> tuple[list[_Unit], list[VarData]]:
    """Remove the constraints fixed variables fill (rhs 0) and their variables (all 0) from
    every constraint; a constraint left empty is dropped, or infeasible if it is == 1."""
    zero = {id(var): var for unit in units if unit.rhs == 0 for var in unit.variables}
    if not zero:
        return units, []
    for var in zero.values():
        _check_bounds(var)
    cons = []
    for unit in units:
        if unit.rhs == 0:
            continue
        left = [var for var in unit.variables if id(var) not in zero]
        if left:
            cons.append(unit._replace(variables=left))
        elif unit.sense in ("==", ">="):
            raise _Infeasible(f"constraint {unit.name!r} cannot be met: fixed variables force "
                              "every variable in it to 0")
    return cons, list(zero.values())


def _objective(model: pyo.Block) -> tuple[pyo.Objective | None, bool]:
    """The active objective (None for a feasibility problem) and whether it maximizes."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) > 1:
        raise UnsupportedModelError(f"need at most one active objective, found {len(objectives)}")
    if not objectives:
        return None, False
    return objectives[0], objectives[0].sense == pyo.maximize


def _unit_constraint(con: Any) -> _Unit | None:
    """The constraint as sum(x) (== or <=) 1, or 0 once fixed variables fill it; None for a
    constraint of fixed variables only that they satisfy."""
    repn = generate_standard_repn(con.body, compute_values=True, quadratic=False)
    if repn.nonlinear_expr is not None:
        raise UnsupportedModelError(f"constraint {con.name!r} is not a linear sum of variables")
    lower = None if con.lower is None else pyo.value(con.lower) - repn.constant
    upper = None if con.upper is None else pyo.value(con.upper) - repn.constant
    if not repn.linear_vars:
        if (lower is None or lower <= 1e-9) and (upper is None or upper >= -1e-9):
            return None
        raise _Infeasible(f"constraint {con.name!r} is violated by its fixed variables"
                          f"{_fixed_note(con)}")
    coefs = np.array(repn.linear_coefs, dtype=float)
    a = float(coefs[0])
    if not (a > 0 or a < 0):
        raise UnsupportedModelError(
            f"constraint {con.name!r} has coefficient {a} on {repn.linear_vars[0].name!r}; "
            "need sum(x) (=|<=) 1 with equal coefficients"
        )
    unequal = np.flatnonzero(np.abs(coefs - a) > COEF_RTOL * abs(a))
    if unequal.size:
        k = int(unequal[0])
        raise UnsupportedModelError(
            f"constraint {con.name!r} has coefficient {float(coefs[k])!r} on "
            f"{repn.linear_vars[k].name!r} but {a!r} on {repn.linear_vars[0].name!r}; "
            "need sum(x) (=|<=) 1 with equal coefficients"
        )
    if a < 0:  # -sum(x) >= -1 is sum(x) <= 1: dividing by a < 0 swaps the sides
        lower, upper = upper, lower
    lower = None if lower is None else lower / a
    upper = None if upper is None else upper / a
    variables = list(repn.linear_vars)
    if upper is not None and upper < -1e-9:
        for var in variables:
            _check_bounds(var)
        raise _Infeasible(f"constraint {con.name!r} needs sum(x) <= {upper:g} < 0"
                          f"{_fixed_note(con)}")
    if upper is None and lower is not None and abs(lower - 1) <= 1e-9:
        return _Unit(con.name, variables, ">=", 1.0)  # exact only beside an == family
    rhs = next((r for r in (1.0, 0.0) if upper is not None and abs(upper - r) <= 1e-9), None)
    if rhs is None:
        raise UnsupportedModelError(
            f"constraint {con.name!r} is not of the form sum(x) (=|<=) 1{_fixed_note(con)}"
        )
    if lower is not None and abs(lower - rhs) <= 1e-9:
        return _Unit(con.name, variables, "==", rhs)
    if lower is None or lower <= 0:
        return _Unit(con.name, variables, "<=", rhs)
    raise UnsupportedModelError(f"constraint {con.name!r} has lower bound {lower}; need 1 or none")


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
    """x must live in [0, 1] (binary, integer or continuous with lower bound 0)."""
    lb, ub = var.bounds
    if lb is None or abs(lb) > 1e-9:
        raise UnsupportedModelError(f"variable {var.name!r} has lower bound {lb}; need 0")
    if ub is not None and 1e-9 < ub < 1 - 1e-9:
        raise UnsupportedModelError(f"variable {var.name!r} has upper bound {ub}; need 0 or >= 1")


def _orient(
    n_cons: int, ends: np.ndarray, edge_vars: list[int], cons: list[_Unit],
    var_obj: dict[int, VarData], obj_coef: dict[int, float], maximize: bool, offset: float,
    zero: list[VarData],
) -> AssignmentStructure:
    """Two-colour each component of the constraint graph (constraints linked by the variable
    `edge_vars[e]` at `ends[e]`) into row and column constraints and index the pairs
    (variables in `zero` are forced to 0 by fixed ones)."""
    row_of: dict[int, int] = {}
    col_of: dict[int, int] = {}
    infeasible = None
    for part in bipartite.split(n_cons, ends):
        component = part.nodes
        if not part.bipartite:
            raise UnsupportedModelError(
                "constraints do not split into row and column families (odd cycle through "
                f"{cons[min(component)].name!r})"
            )
        side_a, side_b = part.side_a, part.side_b
        senses_a = {cons[k].sense for k in side_a}
        senses_b = {cons[k].sense for k in side_b}
        if senses_a == {"<="} and senses_b == {"<="}:
            raise UnsupportedModelError(
                f"no one-per-row equality family around {cons[min(component)].name!r}"
            )
        if len(senses_a) > 1 or len(senses_b) > 1:
            raise UnsupportedModelError(
                f"constraint family around {cons[min(component)].name!r} mixes senses "
                f"({', '.join(sorted(senses_a | senses_b))})"
            )
        if ">=" in senses_a | senses_b:
            senses_a = senses_b = _equal_from_cover(senses_a, senses_b, side_a, side_b,
                                                    cons[min(component)].name)
        if senses_a == {"<="} or (senses_b == {"=="} and len(side_b) < len(side_a)):
            side_a, side_b = side_b, side_a
            senses_a, senses_b = senses_b, senses_a
        if senses_b == {"=="} and len(side_a) != len(side_b):
            infeasible = (
                f"{len(side_a)} row constraints but {len(side_b)} column constraints "
                f"must all be met around {cons[min(component)].name!r}"
            )
        for k in sorted(side_a):
            row_of[k] = len(row_of)
        for k in sorted(side_b):
            col_of[k] = len(col_of)
    if len(row_of) > len(col_of):
        infeasible = f"{len(row_of)} rows must each get one of only {len(col_of)} columns"
    rows, cols, costs, variables, zero_vars = [], [], [], [], list(zero)
    slot: dict[tuple[int, int], int] = {}
    for (a, b), vid in zip(ends.tolist(), edge_vars, strict=True):
        var = var_obj[vid]
        if var.ub is not None and var.ub <= 1e-9:
            zero_vars.append(var)
            continue
        r, c = (a, b) if a in row_of else (b, a)
        pair, cost = (row_of[r], col_of[c]), obj_coef.get(vid, 0.0)
        if pair in slot:  # two variables for one pair: at most one can be 1, keep the better
            k = slot[pair]
            if (cost > costs[k]) if maximize else (cost < costs[k]):
                variables[k], costs[k], var = var, cost, variables[k]
            zero_vars.append(var)
            continue
        slot[pair] = len(costs)
        rows.append(pair[0])
        cols.append(pair[1])
        costs.append(cost)
        variables.append(var)
    return AssignmentStructure(
        n_rows=len(row_of), n_cols=len(col_of), rows=np.array(rows, dtype=np.int64),
        cols=np.array(cols, dtype=np.int64), costs=np.array(costs, dtype=np.float64),
        variables=variables, zero_vars=zero_vars, maximize=maximize, offset=offset,
        infeasible=infeasible,
    )


def _equal_from_cover(senses_a: set[str], senses_b: set[str], side_a: list[int],
                      side_b: list[int], name: str) -> set[str]:
    """sum(x) >= 1 rows beside as many sum(x) == 1 columns hold with equality (the x sum to
    the column count either way); any other use of >= is refused."""
    if {frozenset(senses_a), frozenset(senses_b)} != {frozenset({">="}), frozenset({"=="})} or (
        len(side_a) != len(side_b)
    ):
        raise UnsupportedModelError(
            f"sum(x) >= 1 constraints around {name!r} need as many sum(x) == 1 constraints on "
            "the other side (then each holds with equality); use solver='scip'"
        )
    return {"=="}


def _load(structure: AssignmentStructure, row_ind: np.ndarray, col_ind: np.ndarray) -> None:
    """Set x = 1 on the chosen pairs and 0 elsewhere."""
    chosen = set(zip(row_ind.tolist(), col_ind.tolist(), strict=True))
    pairs = zip(structure.rows.tolist(), structure.cols.tolist(), structure.variables, strict=True)
    for r, c, var in pairs:
        var.set_value(1.0 if (r, c) in chosen else 0.0, skip_validation=True)
    for var in structure.zero_vars:
        var.set_value(0.0, skip_validation=True)
