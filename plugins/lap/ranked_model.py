"""`k_best(model, k, solver="lap")`: the k best solutions of an assignment-structured Pyomo
model by Murty's ranking (`ranked_assignments`; `ranked_matchings` where rows and columns
may both stay unmatched) instead of a SCIP search, as PoolSolutions keyed by the model's
own variables."""

from __future__ import annotations

import time

import numpy as np
import pyomo.environ as pyo

from coplug.plugins.errors import InputError, UnsupportedModelError
from coplug.plugins.lap import sparse
from coplug.plugins.lap.backend import AssignmentStructure, detect_assignment, pattern_reason
from coplug.plugins.lap.matchings import rank_matchings
from coplug.plugins.lap.ranked import (
    RankedAssignments,
    forbidden_as_inf,
    is_sparse_enough,
    ranked_assignments,
)
from coplug.plugins.results import Result, Status
from coplug.plugins.solution_pool import PoolSolution

_STATUS = {"k_found": Status.OPTIMAL, "exhausted": Status.OPTIMAL,
           "time_limit": Status.TIME_LIMIT, "interrupted": Status.INTERRUPTED}


def rank_assignment_model(
    model: pyo.Block, k: int, time_limit: float | None
) -> tuple[list[PoolSolution], bool, Result]:
    """The k best assignments of `model` as (solutions best first, proven, result); the
    result's status is `optimal` once the ranking is complete (`time_limit` or `interrupted`
    with the best ones found so far, `infeasible` for a model with no assignment)."""
    start = time.perf_counter()
    structure = detect_assignment(model, pad_matchings=False)
    if structure.infeasible:
        return [], True, Result(status=Status.INFEASIBLE, solver="lap",
                                time=time.perf_counter() - start,
                                extra={"reason": structure.infeasible})
    _check_rankable(structure)
    variables = (*structure.variables, *structure.zero_vars, *(v for v, _ in structure.idle))
    if structure.n_rows == 0:  # fixed variables made every choice: one solution
        solutions = [PoolSolution(_objective(structure, 0.0), variables,
                                  _values(structure, len(variables)))]
        return solutions, True, _result(structure, solutions, "exhausted", {}, start)
    try:
        ranking = _ranking(structure, k, _time_left(time_limit, start))
    except InputError as exc:
        if "infeasible" not in str(exc):
            raise
        return [], True, Result(status=Status.INFEASIBLE, solver="lap",
                                time=time.perf_counter() - start,
                                extra={"reason": _infeasible_reason(structure, exc)})
    solutions = _pool_solutions(structure, ranking, variables)
    return solutions, ranking.complete, _result(structure, solutions, ranking.status,
                                                ranking.info, start)


def _time_left(time_limit: float | None, start: float) -> float | None:
    """The limit less the time the model's detection took (as `solve(solver="lap")` counts
    it), kept positive: a limit spent already stops the ranking at once."""
    if time_limit is None:
        return None
    return max(time_limit - (time.perf_counter() - start), 1e-9)


def _ranking(structure: AssignmentStructure, k: int,
             time_limit: float | None) -> RankedAssignments:
    """Rank assignments, or matchings when some block lets rows and columns both stay
    unmatched."""
    if not structure.matching_blocks:
        return ranked_assignments(structure.cost_matrix(), k, maximize=structure.maximize,
                                  time_limit=time_limit)
    rows, cols = _unmatched_costs(structure)
    cost = structure.cost_matrix()
    c = sparse.as_csr(cost) if is_sparse_enough(cost) else forbidden_as_inf(cost)
    return rank_matchings(c, rows, cols, k, structure.maximize, time_limit)


def _unmatched_costs(structure: AssignmentStructure) -> tuple[np.ndarray, np.ndarray]:
    """What leaving each row and column unmatched costs: 0 where its constraint is <= 1,
    inf (not allowed) where it is == 1 or >= 1."""
    rows = np.full(structure.n_rows, np.inf)
    cols = np.full(structure.n_cols, np.inf)
    for _, sense, is_row, index in structure.units:
        if sense == "<=":
            (rows if is_row else cols)[index] = 0.0
    return rows, cols


def _infeasible_reason(structure: AssignmentStructure, exc: InputError) -> str:
    """Why the ranking found no solution, in the model's terms (the solver's rows and
    columns are numbers, and a matching's augmented matrix has more of them)."""
    if not structure.matching_blocks:
        return pattern_reason(structure, structure.cost_matrix()) or str(exc)
    rows, cols = _unmatched_costs(structure)
    return (f"infeasible: no choice of pairs meets every '== 1' and '>= 1' constraint beside "
            f"the matching blocks ({int(np.isinf(rows).sum())} rows and "
            f"{int(np.isinf(cols).sum())} columns must each be matched)")


def _check_rankable(structure: AssignmentStructure) -> None:
    """Refuse what one optimum may ignore but a ranking cannot: a continuous variable (an
    LP's points between assignments are solutions too: x = 0.5 everywhere ranked nowhere),
    and parallel variables (two variables for one pair are two solutions; the LAP path
    keeps the better one)."""
    continuous = next((var for var in structure.variables if not var.is_integer()), None)
    if continuous is not None:
        raise UnsupportedModelError(
            f"k_best needs binary variables: {continuous.name!r} is continuous, and an LP has "
            "one optimum to report (use solve)")
    if structure.parallel:
        raise UnsupportedModelError(
            f"k_best with solver='lap' needs one variable per (row, column) pair; "
            f"{structure.parallel} variable(s) share a pair with another: use solver='scip'")


def _objective(structure: AssignmentStructure, cost: float) -> float:
    """The model's objective at an assignment of this cost (0 without an objective)."""
    return cost + structure.offset if structure.has_objective else 0.0


def _pool_solutions(
    structure: AssignmentStructure, ranking: RankedAssignments, variables: tuple
) -> list[PoolSolution]:
    """Each ranked assignment as x = 1 on its pairs' variables, 0 on every other."""
    slot = {pair: p for p, pair in enumerate(zip(structure.rows.tolist(),
                                                  structure.cols.tolist(), strict=True))}
    solutions = []
    for assignment in ranking.solutions:
        values = _values(structure, len(variables))
        pairs = zip(assignment.row_ind.tolist(), assignment.col_ind.tolist(), strict=True)
        values[[slot[pair] for pair in pairs]] = 1.0
        solutions.append(PoolSolution(_objective(structure, assignment.cost), variables,
                                      values))
    return solutions


def _values(structure: AssignmentStructure, size: int) -> np.ndarray:
    """A solution's values before its pairs are set: 0, the idle variables' last (see
    `AssignmentStructure.idle`)."""
    values = np.zeros(size)
    if structure.idle:
        values[size - len(structure.idle):] = [value for _, value in structure.idle]
    return values


def _result(structure: AssignmentStructure, solutions: list[PoolSolution], status: str,
            info: dict, start: float) -> Result:
    """The ranking's Result: `optimal` once complete, else why it stopped; the best
    solution's objective (the first one found is always the optimum)."""
    best = solutions[0].objective if solutions and structure.has_objective else None
    return Result(
        status=_STATUS[status],
        solver="lap",
        objective=best,
        bound=best,
        time=time.perf_counter() - start,
        has_solution=bool(solutions),
        extra={"ranking": status, "rows": structure.n_rows, "cols": structure.n_cols, **info},
    )
