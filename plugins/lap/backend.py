"""`solve(model, solver="lap")`: detect an assignment-structured Pyomo model and solve it
exactly by the LAP path (x[i,j] in [0,1], one-per-row / one-per-column constraints)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.base.var import VarData
from pyomo.repn import generate_standard_repn

from coplug.plugins.errors import InputError, TimeLimitError, UnsupportedModelError
from coplug.plugins.lap.solver import solve_lap
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

    def cost_matrix(self) -> np.ndarray | sp.csr_matrix:
        """Dense when every pair is allowed, else sparse (missing pairs forbidden)."""
        if len(self.costs) == self.n_rows * self.n_cols:
            dense = np.zeros((self.n_rows, self.n_cols))
            dense[self.rows, self.cols] = self.costs
            return dense
        return sp.csr_matrix(
            (self.costs, (self.rows, self.cols)), shape=(self.n_rows, self.n_cols)
        )


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
    start = time.perf_counter()
    structure = detect_assignment(model)
    if structure.infeasible:
        return Result(status=Status.INFEASIBLE, solver="lap", time=time.perf_counter() - start,
                      extra={"reason": structure.infeasible})
    cost = structure.cost_matrix()
    predictor = None
    if params.get("warm"):
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
    _load(structure, solution.row_ind, solution.col_ind)
    objective = solution.cost + structure.offset
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
    obj_repn = generate_standard_repn(objective.expr, compute_values=True, quadratic=False)
    if obj_repn.nonlinear_expr is not None:
        raise UnsupportedModelError(f"objective {objective.name!r} is not linear")
    obj_coef = {id(v): float(a) for v, a in zip(
        obj_repn.linear_vars, obj_repn.linear_coefs, strict=True
    )}
    cons = [_unit_constraint(con) for con in model.component_data_objects(
        pyo.Constraint, active=True, descend_into=True)]
    if not cons:
        raise UnsupportedModelError("model has no constraints; not an assignment model")
    var_cons: dict[int, list[int]] = {}
    var_obj: dict[int, VarData] = {}
    for k, (_, variables, _) in enumerate(cons):
        for var in variables:
            var_cons.setdefault(id(var), []).append(k)
            var_obj[id(var)] = var
    for vid in obj_coef:
        if vid not in var_cons:
            raise UnsupportedModelError(
                f"objective variable {var_obj.get(vid, vid)} appears in no row/column constraint"
            )
    graph = nx.MultiGraph()
    graph.add_nodes_from(range(len(cons)))
    for vid, where in var_cons.items():
        var = var_obj[vid]
        if len(where) != 2:
            raise UnsupportedModelError(
                f"variable {var.name!r} is in {len(where)} constraints; an assignment variable "
                "is in exactly one row and one column constraint"
            )
        _check_bounds(var)
        graph.add_edge(where[0], where[1], key=vid)
    return _orient(graph, cons, var_obj, obj_coef, maximize, float(obj_repn.constant))


def _objective(model: pyo.Block) -> tuple[pyo.Objective, bool]:
    """The single active objective and whether it maximizes."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        raise UnsupportedModelError(f"need exactly one active objective, found {len(objectives)}")
    return objectives[0], objectives[0].sense == pyo.maximize


def _unit_constraint(con: Any) -> tuple[str, list[VarData], str]:
    """(name, variables, '==' or '<=') of a constraint sum(x) == 1 or sum(x) <= 1."""
    repn = generate_standard_repn(con.body, compute_values=True, quadratic=False)
    if repn.nonlinear_expr is not None or not repn.linear_vars:
        raise UnsupportedModelError(f"constraint {con.name!r} is not a linear sum of variables")
    coefs = np.array(repn.linear_coefs, dtype=float)
    a = float(coefs[0])
    if not a > 0:
        raise UnsupportedModelError(
            f"constraint {con.name!r} has coefficient {a} on {repn.linear_vars[0].name!r}; "
            "need sum(x) (=|<=) 1 with equal positive coefficients"
        )
    unequal = np.flatnonzero(np.abs(coefs - a) > COEF_RTOL * a)
    if unequal.size:
        k = int(unequal[0])
        raise UnsupportedModelError(
            f"constraint {con.name!r} has coefficient {float(coefs[k])!r} on "
            f"{repn.linear_vars[k].name!r} but {a!r} on {repn.linear_vars[0].name!r}; "
            "need sum(x) (=|<=) 1 with equal coefficients"
        )
    lower = None if con.lower is None else (pyo.value(con.lower) - repn.constant) / a
    upper = None if con.upper is None else (pyo.value(con.upper) - repn.constant) / a
    if upper is None or abs(upper - 1) > 1e-9:
        raise UnsupportedModelError(f"constraint {con.name!r} is not of the form sum(x) (=|<=) 1")
    if lower is not None and abs(lower - 1) <= 1e-9:
        return con.name, list(repn.linear_vars), "=="
    if lower is None or lower <= 0:
        return con.name, list(repn.linear_vars), "<="
    raise UnsupportedModelError(f"constraint {con.name!r} has lower bound {lower}; need 1 or none")


def _check_bounds(var: VarData) -> None:
    """x must live in [0, 1] (binary, integer or continuous with lower bound 0)."""
    if var.fixed:
        raise UnsupportedModelError(f"variable {var.name!r} is fixed; unfix it or drop it")
    lb, ub = var.bounds
    if lb is None or abs(lb) > 1e-9:
        raise UnsupportedModelError(f"variable {var.name!r} has lower bound {lb}; need 0")
    if ub is not None and 1e-9 < ub < 1 - 1e-9:
        raise UnsupportedModelError(f"variable {var.name!r} has upper bound {ub}; need 0 or >= 1")


def _orient(graph, cons, var_obj, obj_coef, maximize, offset) -> AssignmentStructure:
    """Two-colour each component into row and column constraints and index the pairs."""
    row_of: dict[int, int] = {}
    col_of: dict[int, int] = {}
    infeasible = None
    for component in nx.connected_components(graph):
        sub = graph.subgraph(component)
        if not nx.is_bipartite(sub):
            raise UnsupportedModelError(
                "constraints do not split into row and column families (odd cycle through "
                f"{cons[min(component)][0]!r})"
            )
        side_a, side_b = nx.bipartite.sets(sub) if len(component) > 1 else (set(component), set())
        senses_a = {cons[k][2] for k in side_a}
        senses_b = {cons[k][2] for k in side_b}
        if senses_a == {"<="} and senses_b == {"<="}:
            raise UnsupportedModelError(
                f"no one-per-row equality family around {cons[min(component)][0]!r}"
            )
        if len(senses_a) > 1 or len(senses_b) > 1:
            raise UnsupportedModelError(
                f"constraint family around {cons[min(component)][0]!r} mixes == and <="
            )
        if senses_a == {"<="} or (senses_b == {"=="} and len(side_b) < len(side_a)):
            side_a, side_b = side_b, side_a
            senses_a, senses_b = senses_b, senses_a
        if senses_b == {"=="} and len(side_a) != len(side_b):
            infeasible = (
                f"{len(side_a)} row constraints but {len(side_b)} column constraints "
                f"must all be met around {cons[min(component)][0]!r}"
            )
        for k in sorted(side_a):
            row_of[k] = len(row_of)
        for k in sorted(side_b):
            col_of[k] = len(col_of)
    if len(row_of) > len(col_of):
        infeasible = f"{len(row_of)} rows must each get one of only {len(col_of)} columns"
    rows, cols, costs, variables, zero_vars = [], [], [], [], []
    slot: dict[tuple[int, int], int] = {}
    for a, b, vid in graph.edges(keys=True):
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


def _load(structure: AssignmentStructure, row_ind: np.ndarray, col_ind: np.ndarray) -> None:
    """Set x = 1 on the chosen pairs and 0 elsewhere."""
    chosen = set(zip(row_ind.tolist(), col_ind.tolist(), strict=True))
    pairs = zip(structure.rows.tolist(), structure.cols.tolist(), structure.variables, strict=True)
    for r, c, var in pairs:
        var.set_value(1.0 if (r, c) in chosen else 0.0, skip_validation=True)
    for var in structure.zero_vars:
        var.set_value(0.0, skip_validation=True)
