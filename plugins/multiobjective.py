"""Several objectives on one Pyomo model: lexicographic optimization (each objective optimal
given the ones before it, Gurobi's hierarchical multi-objective) and the exact Pareto front
of two (the epsilon-constraint method).

The objectives are the model's own `Objective` components, active or not; each stage
activates one, keeps the earlier ones at their optimum with a row, and solves as
`coplug.plugins.solve` would, with the previous stage's point as a MIP start (one HiGHS
hands back with a wrong objective is dropped there, see `highs_backend.misreported`). The
solver's model is built once per call and changed in place between stages
(`coplug.plugins.stages`) where that path is `solve`'s; otherwise each stage is a `solve`.
The model is given back as it came (the same objectives active, the temporary rows
removed), with the last point loaded.

The front: the lexicographic optimum of (first, second) is a non-dominated point; the
next one is the lexicographic optimum with the second objective better than the last point's
by at least `step`, until no point is left. When both objectives take whole multiples of
`step` on integer points (every variable integer, whole coefficients: `step` defaults to
their greatest common divisor) the front is complete; otherwise `step` says how far apart
the points must be.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.modeling import unique_component_name
from pyomo.core.base.objective import ObjectiveData
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables

from coplug.plugins.bridge import (
    SOLVE_SIBLINGS,
    as_solve_arguments,
    check_block,
    refuse_sibling_keywords,
    solve,
    whole_call_options,
)
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.duals import dual_request
from coplug.plugins.errors import InputError
from coplug.plugins.limits import checked_time_limit, zero_mip_gap
from coplug.plugins.linear_terms import linear_terms, value_step
from coplug.plugins.modeldata import SOLVER_INFINITY, check_objective_data
from coplug.plugins.outer_variables import used_outside
from coplug.plugins.results import Result, Status
from coplug.plugins.solution_pool import PoolSolution
from coplug.plugins.stages import open_stages
from coplug.plugins.value_equality import ValueEquality

# How far, relative to its value (at least absolutely), a kept objective may give way when
# its exact value leaves the next stage no point: a point can miss its optimum by the
# solver's feasibility tolerance (HiGHS answered y = 1.750002 for 1.75, and asking for the
# objective at that value then held no point and ended a front early as "infeasible").
NUMERIC_ROOM = 1e-6
# Of the size of an objective's terms: how far float rounding may move its value at whole
# points (far above float64's 1e-16 per term, far below any step a model means).
ROUNDING_ROOM = 1e-9
# One stage: solve with this objective active, within this time, from the point loaded or not.
Stage = Callable[[ObjectiveData, float | None, bool], Result]


@dataclass(eq=False)
class Lexicographic(ValueEquality):
    """The stages of a lexicographic solve: one `Result` each (fewer when a stage ended
    without an optimum: `status` says why), and each objective's value at the final point
    (empty unless every stage was optimal)."""

    results: list[Result]
    values: list[float] = field(default_factory=list)

    @property
    def status(self) -> Status:
        """The last stage's status: `optimal` only when every stage was."""
        return self.results[-1].status


@dataclass(eq=False)
class ParetoPoint(ValueEquality):
    """A non-dominated point: the two objective values and the solution reaching them
    (`solution.load()` puts it into the model)."""

    values: tuple[float, float]
    solution: PoolSolution


@dataclass(eq=False)
class ParetoFront(ValueEquality):
    """The points found, best first objective first; `complete` when no other point is left
    (False after `max_points`, a time limit or a stage without an optimum); `status`
    `optimal` when the front has points and ended well, else the stage's that stopped it
    (`infeasible` for a model without any point)."""

    points: list[ParetoPoint]
    complete: bool
    status: Status


def lexicographic(model: pyo.Block, objectives: Sequence[Any], solver: str = "scip",
                  time_limit: float | None = None, abs_tol: float = 1e-6,
                  rel_tol: float = 0.0, **params: Any) -> Lexicographic:
    """Optimize `objectives` in order, each within `abs_tol + rel_tol * |value|` of its
    optimum while the next ones are optimized; `time_limit` covers all stages, `params` go
    to every `solve`."""
    check_block(model, "lexicographic()")
    refuse_sibling_keywords(params, "lexicographic", SOLVE_SIBLINGS)
    chain = _objective_list(model, objectives, minimum=1)
    tolerances = _tolerances(abs_tol, rel_tol)
    time_limit, params = _whole_call_limit(solver, time_limit, params)
    deadline = _deadline(time_limit)
    with _stages(model, chain) as (activate, keep):
        stage = _stage_solver(model, chain, activate, solver, params, [keep])
        return _lexicographic(chain, activate, keep, stage, deadline, tolerances)


def pareto_front(model: pyo.Block, first: Any, second: Any, solver: str = "scip",
                 step: float | None = None, max_points: int = 1000,
                 time_limit: float | None = None, **params: Any) -> ParetoFront:
    """The non-dominated points of (`first`, `second`), best `first` first, each the
    lexicographic optimum with `second` better than the point before by `step` or more
    (default: the objective's own step, when it has one); the last one is loaded."""
    check_block(model, "pareto_front()")
    refuse_sibling_keywords(params, "pareto_front", SOLVE_SIBLINGS)
    chain = _objective_list(model, [first, second], minimum=2)
    if len(chain) != 2:  # an indexed Objective stood for its members: three or more
        raise InputError("pareto_front() takes two objectives, one each for first and "
                         f"second; got {len(chain)} (an indexed Objective stands for all its "
                         "members: pass one of them, e.g. m.o[1])")
    if isinstance(max_points, bool) or not isinstance(max_points, numbers.Integral) or \
            max_points < 1:
        raise InputError(f"max_points must be a whole number >= 1, got {max_points!r}")
    max_points = int(max_points)
    gap = _step(chain[1], step)
    time_limit, params = _whole_call_limit(solver, time_limit, params)
    deadline = _deadline(time_limit)
    variables = _point_variables(model, chain)
    points: list[ParetoPoint] = []
    with _stages(model, chain) as (activate, keep):
        bound = pyo.ConstraintList()
        model.add_component(unique_component_name(model, "_coplug_pareto_bound"), bound)
        try:
            stage = _stage_solver(model, chain, activate, solver, params, [keep, bound])
            status, complete = _walk_front(points, chain, activate, keep, bound, stage,
                                           deadline, gap, variables, max_points)
        finally:
            model.del_component(bound)
    if points:
        points[-1].solution.load()
    if complete and points:
        status = Status.OPTIMAL
    return ParetoFront(points, complete, status)


def _walk_front(points: list[ParetoPoint], chain: list[ObjectiveData], activate: Any,
                keep: Any, bound: pyo.ConstraintList, stage: Stage, deadline: float | None,
                gap: float, variables: list[VarData], max_points: int) -> tuple[Status, bool]:
    """Append the front's points to `points`, each beating the last one's second objective
    by `gap`; the status and whether the front is complete. Ctrl-C keeps the points found:
    with SCIP most of the time goes to Python between short stages, where it had raised
    KeyboardInterrupt and dropped them."""
    try:
        while len(points) < max_points:
            if deadline is not None and time.perf_counter() >= deadline:
                return Status.TIME_LIMIT, False  # stages past it got a millisecond each
            lex = _lexicographic(chain, activate, keep, stage, deadline, (0.0, 0.0))
            if lex.status is not Status.OPTIMAL:
                return lex.status, _front_ended(lex)
            values = (lex.values[0], lex.values[1])
            if points and _no_worse(chain[0], values[0], points[-1].values[0]):
                last = points[-1].values
                if not _no_worse(chain[1], last[1], values[1]):
                    points.pop()  # round-off kept the last one off its optimum: dominated
                elif not _improved(chain[1], values[1], last[1], gap / 2):
                    _warn_step_too_small(chain[1], gap, len(points))
                    return Status.UNKNOWN, False
            points.append(ParetoPoint(values, _snapshot(variables, values[0])))
            bound.clear()
            if not _add_row(bound, _better_than(chain[1], values[1], gap)):
                return Status.OPTIMAL, True  # a constant second objective: nothing beats it
    except KeyboardInterrupt:
        return Status.INTERRUPTED, False
    return Status.OPTIMAL, False


def _improved(objective: ObjectiveData, new: float, old: float, amount: float) -> bool:
    """Whether `new` beats `old` by `amount` or more for `objective`.

    Where the next point lies within `_no_worse`'s room of the last in both objectives (a
    step below that room: 1 on values near 1e7), it is no round-off miss but a point of
    its own, kept; unless it did not improve the second objective by half the step at all
    (a step the solvers' tolerances swallow, or 1e-300 that leaves `value - step ==
    value`): the last point had been popped and appended again forever."""
    if objective.sense == pyo.maximize:
        return new > old and new >= old + amount  # old + 1e-300 == old
    return new < old and new <= old - amount


def _warn_step_too_small(objective: ObjectiveData, gap: float, found: int) -> None:
    """Say why a front stopped where a stage did not honour its step: the step is below
    what the solvers resolve there."""
    warn_at_caller(f"pareto_front stopped after {found} point(s): the stage asking "
                   f"{objective.name!r} to improve by step={gap!r} came back with a point "
                   "not half a step better than the last (the step is below the solvers' "
                   "tolerances); give a larger step", RuntimeWarning)


def _no_worse(objective: ObjectiveData, new: float, old: float) -> bool:
    """Whether `new` is no worse than `old` for `objective`, within NUMERIC_ROOM of `old`:
    then the point of `old`, worse in the second objective, is dominated. On an exact front
    the first objective worsens from point to point; a point kept off its lexicographic
    optimum by the solver's round-off (it asked for 15.500002 where 15.5 also allowed a
    better second objective) is followed by the point it missed. An objective over integer
    variables alone is valued exactly at its (whole) loaded points: only its float rounding
    is room there (NUMERIC_ROOM of 1e7 took the next point, 3.5 worse, as no worse and
    dropped a true front point)."""
    room = _rounding_room(objective) if _whole_valued(objective) else _room(objective, old)
    if objective.sense == pyo.maximize:
        return new >= old - room
    return new <= old + room


def _room(objective: ObjectiveData, value: float) -> float:
    """NUMERIC_ROOM of the size of `objective`'s terms at `value`, at least NUMERIC_ROOM:
    its constant left out (a constant of 1e7 made a room of 10, and the front point 5
    away counted as no worse and dropped the one before it) and under half its step where
    it takes whole multiples of one (`value_step`), so no two of its values fall within."""
    terms = linear_terms(objective.expr)
    constant = 0.0 if terms is None else float(terms.constant)
    room = NUMERIC_ROOM * max(1.0, abs(value - constant))
    step = value_step(terms)
    return min(room, step / 2) if step > 0 else room


def _whole_valued(objective: ObjectiveData) -> bool:
    """Whether `objective` is linear over integer variables alone, which a solve loads as
    whole numbers (`coplug.plugins.varmap.snapped`)."""
    terms = linear_terms(objective.expr)
    return terms is not None and all(var.is_integer() for var in terms.variables)


def _rounding_room(objective: ObjectiveData) -> float:
    """How far float rounding can move a linear objective's value: ROUNDING_ROOM of the
    size of its terms at the loaded point (at least ROUNDING_ROOM)."""
    terms = linear_terms(objective.expr)
    values = np.array([abs(var.value or 0.0) for var in terms.variables], dtype=float)
    return ROUNDING_ROOM * max(1.0, float(np.abs(terms.coefs) @ values))


def _front_ended(lex: Lexicographic) -> bool:
    """Whether a stage without an optimum says that no point beats the last one: only a
    first stage that finds none does (a later stage without a point, after an optimal first
    one, is numerical trouble, and the front may go on)."""
    return len(lex.results) == 1 and lex.status is Status.INFEASIBLE


def _lexicographic(chain: list[ObjectiveData], activate: Any, keep: Any, stage: Stage,
                   deadline: float | None, tolerances: tuple[float, float]) -> Lexicographic:
    """The stages of one lexicographic solve, the rows they add removed afterwards."""
    results: list[Result] = []
    values: list[float] = []
    try:
        for k, objective in enumerate(chain):
            activate(objective)
            result = stage(objective, _left(deadline), k > 0)
            if result.status is Status.INFEASIBLE and k > 0:
                result = _with_room(chain[:k], values, activate, objective, keep, stage,
                                    deadline, tolerances)
            results.append(result)
            if result.status is not Status.OPTIMAL:
                return Lexicographic(results)
            values.append(float(pyo.value(objective.expr)))
            _add_row(keep, _within(objective, values[-1], tolerances))
        return Lexicographic(results, [float(pyo.value(o.expr)) for o in chain])
    finally:
        keep.clear()


def _with_room(kept: list[ObjectiveData], values: list[float], activate: Any,
               objective: ObjectiveData, keep: Any, stage: Stage, deadline: float | None,
               tolerances: tuple[float, float]) -> Result:
    """The stage of `objective` again, each earlier objective kept within NUMERIC_ROOM of
    its value (relative, at least absolute) where its tolerances give less: the exact
    values left no point, as when the last point missed its optimum by the solver's
    feasibility tolerance. `extra["numeric_room"]` says so."""
    keep.clear()
    for done, value in zip(kept, values, strict=True):
        room = max(tolerances[0] + tolerances[1] * abs(value), _room(done, value))
        _add_row(keep, _within(done, value, (room, 0.0)))
    activate(objective)
    result = stage(objective, _left(deadline), True)
    result.extra["numeric_room"] = NUMERIC_ROOM
    return result


def _stage_solver(model: pyo.Block, chain: list[ObjectiveData], activate: Any, solver: Any,
                  params: dict[str, Any], extra: list[pyo.ConstraintList]) -> Stage:
    """`stage(objective, time_limit, warmstart)`: one solve with `objective` active and the
    rows of the lists `extra`; on a model built once where `open_stages` can (a rebuild per
    stage costs more than the solve on large models), else through `solve`."""
    params = zero_mip_gap(solver, params)
    staged = open_stages(model, solver, chain, activate, params)
    if staged is None:
        return lambda objective, left, warmstart: solve(
            model, solver=solver, time_limit=left, warmstart=warmstart,
            **as_solve_arguments(params))
    return lambda objective, left, warmstart: staged.solve(
        objective, [row for rows in extra for row in rows.values()], left, warmstart)


@contextlib.contextmanager
def _stages(model: pyo.Block, chain: list[ObjectiveData]) -> Iterator[tuple[Any, Any]]:
    """Yield `activate(objective)` (that one active, every other objective of the model
    not) and a temporary ConstraintList; restore the objectives' states and remove the list
    on the way out. The model's `dual`/`rc` Suffixes are left empty (their duals priced the
    temporary rows and a stage's objective), as after a solve that raises."""
    everyone = list(model.component_data_objects(pyo.Objective, descend_into=True))
    was_active = [o.active for o in everyone]
    components = list(model.component_objects(pyo.Objective, descend_into=True))
    component_was_active = [c.active for c in components]
    keep = pyo.ConstraintList()
    model.add_component(unique_component_name(model, "_coplug_lexicographic"), keep)

    def activate(objective: ObjectiveData) -> None:
        for other in everyone:
            other.deactivate()
        objective.activate()

    try:
        yield activate, keep
    finally:
        dual_request(model, read=False)  # emptied: none is a dual of the model given back
        model.del_component(keep)
        for objective, active in zip(everyone, was_active, strict=True):
            if active:
                objective.activate()
            else:
                objective.deactivate()
        _restore_components(components, component_was_active)


def _restore_components(components: list[Any], was_active: list[bool]) -> None:
    """Deactivate the Objective components that were inactive: activating one member of an
    indexed Objective activates the component too, and an inactive one came back active."""
    for component, active in zip(components, was_active, strict=True):
        if not active:
            component.deactivate()


def _objective_list(model: pyo.Block, objectives: Any, minimum: int) -> list[ObjectiveData]:
    """`objectives` as a list of the model's objective data, each once (an indexed
    Objective stands for its members in order)."""
    if isinstance(objectives, (str, bytes)) or not isinstance(objectives, Sequence):
        raise InputError(f"objectives must be a list of the model's Objective components, "
                         f"got {objectives!r}")
    chain: list[ObjectiveData] = []
    for item in objectives:
        members = list(item.values()) if getattr(item, "is_indexed", lambda: False)() else [item]
        for objective in members:
            if not isinstance(objective, ObjectiveData):
                raise InputError(f"{objective!r} is not a Pyomo Objective")
            chain.append(objective)
    mine = {id(o) for o in model.component_data_objects(pyo.Objective, descend_into=True)}
    for objective in chain:
        if id(objective) not in mine:
            raise InputError(f"objective {objective.name!r} is not on the model solved")
        if _in_deactivated_block(objective, model):
            raise InputError(f"objective {objective.name!r} sits in a deactivated block: the "
                             "solve would not see it")
    if len({id(o) for o in chain}) < len(chain):
        raise InputError("an objective appears twice in the list")
    if len(chain) < minimum:
        raise InputError(f"need at least {minimum} objective(s), got {len(chain)}")
    for objective in chain:  # named here: the stages read them before any `solve` would
        check_objective_data(objective)
    return chain


def _in_deactivated_block(objective: ObjectiveData, model: pyo.Block) -> bool:
    """Whether a block between `objective` and `model` is deactivated (the solver skips
    its objectives, and a stage would call any point optimal)."""
    block = objective.parent_block()
    while block is not None and block is not model:
        if not block.active:
            return True
        block = block.parent_block()
    return False


def _tolerances(abs_tol: Any, rel_tol: Any) -> tuple[float, float]:
    """Both tolerances as non-negative finite floats (numpy numbers too)."""
    for name, value in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
                0 <= value < math.inf):
            raise InputError(f"{name} must be a number >= 0, got {value!r}")
    return float(abs_tol), float(rel_tol)


def _step(objective: ObjectiveData, step: Any) -> float:
    """The least improvement of `objective` between two points of the front. A given step
    below the objective's own (its values' greatest common divisor) is raised to it: the
    same front, and 1e-8 or 1e-300 would be below the solvers' tolerances."""
    terms = linear_terms(objective.expr)
    if step is None:
        if terms is not None and not len(terms.variables):
            return 1.0  # a constant: one point, whatever the step
        found = value_step(terms)
        if found > 0:
            return found
        raise InputError(f"objective {objective.name!r} can improve by any amount (continuous "
                         "variables or coefficients); give step=, the least improvement "
                         "between two points of the front")
    if isinstance(step, bool) or not isinstance(step, numbers.Real) or not 0 < step < math.inf:
        raise InputError(f"step must be a number > 0, got {step!r}")
    return max(float(step), value_step(terms))


def _within(objective: ObjectiveData, value: float, tolerances: tuple[float, float]) -> Any:
    """The row that keeps `objective` within the tolerances of `value`."""
    slack = tolerances[0] + tolerances[1] * abs(value)
    side = value - slack if objective.sense == pyo.maximize else value + slack
    if not abs(side) < SOLVER_INFINITY and abs(value) < SOLVER_INFINITY:
        return True  # a band so wide the solvers read its side as infinite (or inf): no row
    if objective.sense == pyo.maximize:
        return objective.expr >= side
    return objective.expr <= side


def _better_than(objective: ObjectiveData, value: float, step: float) -> Any:
    """The row that asks `objective` to beat `value` by `step`."""
    if objective.sense == pyo.maximize:
        return objective.expr >= value + step
    return objective.expr <= value - step


def _add_row(rows: pyo.ConstraintList, relation: Any) -> bool:
    """Add `relation` to `rows` unless it is a plain True or False (a constant objective's
    row, which Pyomo refuses); whether it holds (a plain False never does)."""
    if isinstance(relation, (bool, np.bool_)):
        return bool(relation)
    rows.add(relation)
    return True


def _point_variables(model: pyo.Block, chain: list[ObjectiveData]) -> list[VarData]:
    """The variables a point sets: the model's own and those its active rows and the
    objectives use from outside it (a sub-block's front lost the parent's variables)."""
    seen: dict[int, VarData] = {id(v): v for v in
                                model.component_data_objects(pyo.Var, descend_into=True)}
    for var in used_outside(model):
        seen.setdefault(id(var), var)
    for objective in chain:  # an inactive objective's variables too
        for var in identify_variables(objective.expr, include_fixed=False):
            seen.setdefault(id(var), var)
    return list(seen.values())


def _snapshot(variables: list[VarData], objective: float) -> PoolSolution:
    """The values loaded in the unfixed ones of `variables`, kept (with the first
    objective's value)."""
    kept = tuple(v for v in variables if not v.fixed and v.value is not None)
    values = np.array([float(v.value) for v in kept], dtype=float)
    return PoolSolution(objective, kept, values)


def _whole_call_limit(solver: Any, time_limit: float | None, params: dict[str, Any]
                      ) -> tuple[float | None, dict[str, Any]]:
    """`time_limit` and `params` (`options=` merged in), a native time limit made the whole
    call's (see `bridge.one_time_limit`: it would restart with every stage); `warmstart`
    refused: each stage starts from the point before it."""
    if "warmstart" in params:
        raise InputError("warmstart is set by the stages themselves (each starts from the "
                         "point before it); leave it out")
    return whole_call_options(solver, time_limit, params)


def _deadline(time_limit: float | None) -> float | None:
    """When the time limit runs out, on the perf_counter clock."""
    limit = checked_time_limit(time_limit)
    return None if limit is None else time.perf_counter() + limit


def _left(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (at least a millisecond: solve wants a positive one)."""
    return None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
