"""Why a Pyomo model is infeasible: an irreducible infeasible subsystem (IIS), checked.

`explain_infeasible(model)` builds the model (without its objective) in SCIP as `solve`
does, runs SCIP's IIS finder (SCIP >= 10) and maps the subsystem back to the model's own
constraints and variable bounds. Pyomo's `contrib.iis` needs Gurobi, CPLEX or Xpress; this
needs SCIP only.

The answer is checked, not trusted: a model of only the subsystem's rows over the
variables they use (every other bound removed, integrality kept; a binary's 0..1 is part of
its domain, its own tighter bound is listed) is solved again by HiGHS where it
takes the model (SCIP otherwise, and for a check HiGHS has not decided in 10 s) and must be
infeasible. While the subsystem has at most `check_limit` members, a deletion filter then
drops each member whose absence leaves it infeasible, one solve per member, so what is
returned is irreducible: each member is needed.

SCIP's IIS is asked for with bounds kept first (quick; past `check_limit` members, chunks
of them, halving in size, are dropped while the rest stays infeasible, then the filter drops
the bounds not needed). Its bound removal (`iis/removebounds`) runs only where that
subsystem is not infeasible, for at most 60 s: it looped without end on a 6-variable model,
once called an empty subsystem infeasible, and took 68 s on a 31-row conflict in 10,000
rows that the chunks settle in a few solves. Where no SCIP answer passes the check (its presolve
removed `2x + 2y == 1` over free integers), the subsystem is filtered out of the whole
model, in halving chunks past `check_limit`. Bounds no value meets are the answer on their
own. `time_limit` bounds the feasibility solve and each SCIP IIS pass; the filters stop
where it runs out (each check gets what is left of it, at most `_CHECK_SECONDS`), with the
subsystem checked infeasible so far (`irreducible` None, a note says so).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyomo.core.base.block import BlockData
from pyomo.core.base.componentuid import ComponentUID
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.var import VarData
from pyomo.core.expr.visitor import identify_variables, replace_expressions
from pyomo.util.vars_from_expressions import get_vars_from_components

from coplug.plugins.bar import progress_bar
from coplug.plugins.bridge import build_instance, contrib_solver, solve
from coplug.plugins.errors import InputError, SolverError, UnsupportedModelError
from coplug.plugins.fast_collector import install_fast_collector
from coplug.plugins.iis_farkas import farkas_support
from coplug.plugins.interrupts import generate_iis, stops_on_interrupt
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.modeldata import fixed_off_whole
from coplug.plugins.results import Status
from coplug.plugins.scip_walker import fix_scip_walker, mark_one_shot, unsupported_part
from coplug.plugins.serial import one_solve_at_a_time
from coplug.plugins.value_equality import ValueEquality

Bound = tuple[VarData, str]  # (variable, "lower" | "upper")
_INFINITE = 1e20  # SCIP's infinity: a side or bound at or past it is absent
_TOLERANCE = 1e-6  # the solvers' feasibility and integrality tolerance
# A check solve HiGHS has not decided by then goes to SCIP: with bounds dropped, HiGHS ran
# for ever on a 4-variable system of free integers that SCIP settles at once.
_CHECK_SECONDS = 10.0
# SCIP's bound removal (tried only for subsystems past check_limit) ran without end on a
# 6-variable model: it gets this long unless time_limit is shorter; what it has by then is
# checked like any answer.
_REMOVE_BOUNDS_SECONDS = 60.0


@dataclass(eq=False)
class InfeasibleSubsystem(ValueEquality):
    """Constraints and variable bounds of the model that cannot hold together."""

    constraints: list[ConstraintData]
    bounds: list[Bound]
    irreducible: bool | None  # None: more than check_limit members, not filtered one by one;
    # False: made irreducible but for members whose checks no solver decided (kept)
    checked_by: str  # the solver that re-solved the subsystem
    notes: list[str] = field(default_factory=list)
    fixed: list[VarData] = field(default_factory=list)  # integers fixed at a fraction

    def __len__(self) -> int:
        return len(self.constraints) + len(self.bounds) + len(self.fixed)

    def __str__(self) -> str:
        if self.fixed:
            return "\n".join([f"{len(self.fixed)} integer variable(s) fixed at a value that "
                              "is not a whole number, which no point can have:"]
                             + [f"  {var.name} fixed at {var.value!r}" for var in self.fixed])
        lines = [f"{len(self.constraints)} constraint(s) and {len(self.bounds)} bound(s) that "
                 f"cannot hold together ({self._state()}):"]
        lines += [f"  {con.name}: {con.expr}" for con in self.constraints]
        lines += [f"  bound {var.name} {'>=' if side == 'lower' else '<='} "
                  f"{var.lb if side == 'lower' else var.ub}" for var, side in self.bounds]
        return "\n".join(lines)

    def _state(self) -> str:
        """How far the subsystem was checked."""
        if self.irreducible:
            return f"checked by {self.checked_by}: infeasible, feasible without any one of them"
        if self.irreducible is False:
            return f"infeasible by {self.checked_by}; some members' checks stayed undecided"
        return f"infeasible by {self.checked_by}; too large to check that each one is needed"


def explain_infeasible(model: BlockData, time_limit: float | None = None,
                       check_limit: int = 60) -> InfeasibleSubsystem:
    """An irreducible infeasible subsystem of `model`, checked by a second solve; raises
    InputError when the model is feasible (or is not a Pyomo model)."""
    if not isinstance(model, BlockData):
        raise InputError(f"explain_infeasible() needs a Pyomo model (a Block), got {model!r}")
    from coplug.formulations.checks import check_count  # imports coplug.plugins

    check_limit = check_count(check_limit, "check_limit", 0)
    time_limit = checked_time_limit(time_limit)
    # its HiGHS and SCIP builds capture the process's streams; a Ctrl-C a check's solve
    # absorbed (HiGHS answering anyway) stops the search instead of being dropped
    with one_solve_at_a_time(), stops_on_interrupt():
        return _explained(model, time_limit, check_limit)


def _explained(model: BlockData, time_limit: float | None, check_limit: int
               ) -> InfeasibleSubsystem:
    """`explain_infeasible` once its arguments are checked."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    _check_own_variables(model)
    _refuse_sos(model)
    # integers fixed off a whole number: `solve` calls the model infeasible, and one fixed in
    # a row any value meets was explained by that row alone (or, used in the objective only,
    # the model was called feasible)
    fractional = fixed_off_whole(model, _TOLERANCE)
    if fractional:
        return InfeasibleSubsystem([], [], True, "domains", [
            "an integer variable fixed at a value that is not a whole number: both solvers "
            "call the model infeasible whatever its constraints"], fixed=fractional)
    conflict = _bound_conflict(model)
    if conflict is not None:
        return InfeasibleSubsystem([], conflict, True, "bounds",
                                   ["no value of the variable meets its bounds"])
    status = solve(_without_objective(model), solver="scip", time_limit=time_limit).status
    _stop_if_interrupted(status)
    if status not in (Status.OPTIMAL, Status.INFEASIBLE):
        status = _highs_feasibility(model, time_limit) or status
    if status is Status.OPTIMAL:
        raise InputError("the model is feasible (a solver found a point): no infeasible "
                         "subsystem")
    _stop_if_interrupted(status)
    if status is not Status.INFEASIBLE:
        raise SolverError(f"SCIP could not decide feasibility ({status.value}); give a longer "
                          f"time_limit")
    notes: list[str] = []
    farkas = _farkas_subsystem(model, time_limit)
    if farkas is not None:
        subsystem, checked_by, infeasible = farkas
        if infeasible:
            if check_limit:
                subsystem.shrink(check_limit, deadline)
            return _filtered(subsystem, checked_by, check_limit, notes, deadline)
        notes.append(f"HiGHS's Farkas certificate's rows and bounds were feasible for "
                     f"{checked_by}")
    # SCIP's bound removal looped without end on a 6-variable model; kept bounds are quick
    # and the deletion filter drops the ones not needed, so it is tried first
    kept = _scip_subsystem(model, False, time_limit)
    if kept[2]:  # its bounds often outnumber its rows: drop those not needed in chunks
        if check_limit:
            kept[0].shrink(check_limit, deadline)
        return _filtered(kept[0], kept[1], check_limit, notes, deadline)
    for remove_bounds in (True, False):
        subsystem, checked_by, infeasible = (_scip_subsystem(model, True, time_limit)
                                             if remove_bounds else kept)
        constraints, bounds = subsystem.originals()
        if infeasible:
            return _filtered(subsystem, checked_by, check_limit, notes, deadline)
        notes.append(f"SCIP's subsystem with{'' if remove_bounds else 'out'} bound removal "
                     f"({len(constraints)} constraints, {len(bounds)} bounds) was feasible "
                     f"for {checked_by}")
    subsystem = _Subsystem(model, *_whole_model(model))
    checked_by, infeasible = subsystem.infeasible()
    if not infeasible:
        raise SolverError(f"no checked infeasible subsystem: {'; '.join(notes)}")
    notes.append("so the subsystem was filtered out of the whole model")
    subsystem.shrink(check_limit, deadline)
    return _filtered(subsystem, checked_by, check_limit, notes, deadline)


def _farkas_subsystem(model: BlockData, time_limit: float | None
                      ) -> tuple[_Subsystem, str, bool] | None:
    """The support of HiGHS's infeasibility certificate of an LP as a subsystem, the solver
    that checked it and whether it is infeasible; None where HiGHS gives no certificate."""
    work = _without_objective(model)
    found = farkas_support(work, time_limit)
    if found is None:
        return None
    constraints = _in_model_order(model, [_original(model, work, c) for c in found[0]])
    bounds = [(var, side) for var, side in ((_original(model, work, v), side)
                                            for v, side in found[1]) if _listed(var, side)]
    subsystem = _Subsystem(model, constraints, bounds)
    return subsystem, *subsystem.infeasible()


def _in_model_order(model: BlockData, constraints: list[ConstraintData]
                    ) -> list[ConstraintData]:
    """`constraints` in the order the model holds them."""
    order = {id(c): k for k, c in enumerate(model.component_data_objects(
        pyo.Constraint, active=True, descend_into=True))}
    return sorted(constraints, key=lambda c: order[id(c)])


def _scip_subsystem(model: BlockData, remove_bounds: bool, time_limit: float | None
                    ) -> tuple[_Subsystem, str, bool]:
    """SCIP's IIS as a subsystem, the solver that checked it and whether it is infeasible."""
    subsystem = _Subsystem(model, *_scip_iis(model, remove_bounds, time_limit))
    return subsystem, *subsystem.infeasible()


def _filtered(subsystem: _Subsystem, checked_by: str, check_limit: int, notes: list[str],
              deadline: float | None) -> InfeasibleSubsystem:
    """The infeasible `subsystem`, made irreducible by the deletion filter where it has at
    most `check_limit` members, or already, where `shrink` ended with it (neither once the
    time limit has run out)."""
    irreducible = None
    if not subsystem.filtered and len(subsystem.members) <= check_limit:
        subsystem.deletion_filter(deadline)
    if subsystem.timed_out:
        notes.append("the time limit ran out before the filter finished: the subsystem is "
                     "infeasible, and may keep members it does not need")
    elif subsystem.filtered or len(subsystem.members) <= check_limit:
        irreducible = not subsystem.undecided
    if subsystem.undecided:
        notes.append(f"some checks stayed undecided (HiGHS and SCIP, {_CHECK_SECONDS:g} s "
                     "each); those members were kept")
    constraints, bounds = subsystem.originals()
    return InfeasibleSubsystem(constraints, bounds, irreducible, checked_by, notes)


def _bound_conflict(model: BlockData) -> list[Bound] | None:
    """The bounds of a variable of the model that no value meets (lower above upper, or no
    integer between them for an integer variable), which the solvers' presolve removes
    before SCIP's IIS finder sees it; None when every variable has a value."""
    for var in get_vars_from_components(model, (pyo.Constraint, pyo.Objective), active=True,
                                        include_fixed=False, descend_into=True):
        lower, upper = var.bounds
        if lower is not None and upper is not None and no_value_meets(lower, upper,
                                                                      var.is_integer()):
            return [(var, side) for side in ("lower", "upper") if _listed(var, side)]
    return None


def no_value_meets(lower: float, upper: float, integer: bool) -> bool:
    """Whether finite bounds admit no value: lower above upper, or for an integer no whole
    number between them (at the solvers' tolerance)."""
    return lower > upper + _TOLERANCE or (integer and math.ceil(lower - _TOLERANCE)
                                          > math.floor(upper + _TOLERANCE))


def _whole_model(model: BlockData) -> tuple[list[ConstraintData], list[Bound]]:
    """Every active constraint of the model and every bound of their variables."""
    constraints = list(model.component_data_objects(pyo.Constraint, active=True,
                                                    descend_into=True))
    variables = get_vars_from_components(model, pyo.Constraint, active=True,
                                         include_fixed=False, descend_into=True)
    return constraints, [(var, side) for var in variables for side in ("lower", "upper")
                         if _listed(var, side)]


def _stop_if_interrupted(status: Status) -> None:
    """Ctrl-C stopped a solve (which returns it as a status): stop the whole search."""
    if status is Status.INTERRUPTED:
        raise KeyboardInterrupt


def _check_own_variables(model: BlockData) -> None:
    """A block of a larger model must hold every variable its constraints use: the copies
    the check solves would otherwise share (and change) the outer variables."""
    if model.parent_block() is None:
        return
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        for var in identify_variables(con.body):
            block = var.parent_block()
            while block is not None and block is not model:
                block = block.parent_block()
            if block is None:
                raise InputError(f"constraint {con.name!r} uses {var.name!r}, a variable outside "
                                 f"the block {model.name!r}; pass the whole model")


def _refuse_sos(model: BlockData) -> None:
    """An UnsupportedModelError for an active SOS constraint: an IIS's members are rows and
    bounds (no SOS set can be one), and SCIP's IIS finder failed on such a model with "method
    cannot be called at this time"."""
    sos = next(model.component_data_objects(pyo.SOSConstraint, active=True,
                                            descend_into=True), None)
    if sos is not None:
        raise UnsupportedModelError(f"explain_infeasible takes no SOS constraint ({sos.name!r}):"
                                    " its subsystems are rows and bounds; write the SOS set "
                                    "with binaries and rows, or deactivate it")


def _highs_feasibility(model: BlockData, time_limit: float | None) -> Status | None:
    """HiGHS's verdict on the model's feasibility where SCIP gave none (its exact check made
    a 2-binary model with a row near 3e9 `unknown`, which HiGHS decides at once); None
    where HiGHS cannot take the model or stops with an error."""
    try:
        status = solve(_without_objective(model), solver="highs", time_limit=time_limit).status
    except (UnsupportedModelError, SolverError):
        return None
    _stop_if_interrupted(status)
    return status if status in (Status.OPTIMAL, Status.INFEASIBLE) else None


def _without_objective(model: BlockData) -> BlockData:
    """A copy of `model` with its objectives deactivated (feasibility only) and without
    Suffixes: solves of the copy fill no duals and warn of no Suffix they leave alone."""
    work = model.clone()
    for objective in work.component_data_objects(pyo.Objective, active=True):
        objective.deactivate()
    for suffix in list(work.component_objects(pyo.Suffix, descend_into=True)):
        suffix.parent_block().del_component(suffix)
    return work


def _scip_iis(model: BlockData, remove_bounds: bool, time_limit: float | None
              ) -> tuple[list[ConstraintData], list[Bound]]:
    """SCIP's IIS of `model`, as the model's own constraints and bounds."""
    work = _without_objective(model)
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    fix_scip_walker()
    install_fast_collector()
    mark_one_shot(opt)
    build_instance(opt, work, "SCIP", unsupported_part)
    scip = opt._solver_model  # the PySCIPOpt model; Pyomo keeps no public accessor
    scip.hideOutput()
    scip.setParam("iis/removebounds", remove_bounds)
    scip.setParam("iis/silent", True)
    limit = min(time_limit or math.inf, _REMOVE_BOUNDS_SECONDS if remove_bounds else math.inf)
    if limit < math.inf:
        scip.setParam("iis/time", limit)
    sub = generate_iis(scip).getSubscip()
    con_of = {c.name: pyomo for pyomo, c in opt._pyomo_con_to_solver_con_map.items()}
    var_of = {v.name: pyomo for pyomo, v in opt._pyomo_var_to_solver_var_map.items()}
    constraints = [_original(model, work, con_of[c.name]) for c in sub.getConss()
                   if c.name in con_of]
    unknown = [c.name for c in sub.getConss() if c.name not in con_of]
    if unknown:
        raise SolverError(f"SCIP's subsystem holds constraints the model does not: {unknown}")
    bounds = []
    used = {id(v) for con in constraints for v in identify_variables(con.body)}
    for scip_var in sub.getVars():
        var = _original(model, work, var_of[scip_var.name])
        if id(var) not in used and not _crossed(var):
            continue  # a variable outside the conflict: its bounds cannot matter
        bounds += [(var, side) for side, value in (("lower", scip_var.getLbOriginal()),
                                                   ("upper", scip_var.getUbOriginal()))
                   if abs(value) < _INFINITE and _listed(var, side)]
    return _in_model_order(model, constraints), bounds


def _copy_variable(var: VarData, copy: VarData) -> None:
    """Give `copy` what the subsystem keeps of `var`: a fixed one's value, a binary's
    domain, an integer's or a real's integrality (bounds are set apart, when listed)."""
    if var.is_binary():
        copy.domain = var.domain
    else:
        copy.domain = pyo.Integers if var.is_integer() else pyo.Reals
    copy.set_value(var.value, skip_validation=True)
    if var.fixed:
        copy.setlb(var.lb)
        copy.setub(var.ub)
        copy.fix()


def _original(model: BlockData, work: BlockData, component: Any) -> Any:
    """The component of `model` that `component` (of its copy `work`) stands for."""
    return ComponentUID(component, context=work).find_component_on(model)


def _crossed(var: VarData) -> bool:
    """Whether the variable's bounds alone are infeasible (lower above upper)."""
    return var.lb is not None and var.ub is not None and var.lb > var.ub


def _listed(var: VarData, side: str) -> bool:
    """Whether `var` has that bound in the model (its domain's or its own), other than a
    binary's 0..1, which is its domain: a binary's own tighter bound (ub = 0 to switch it
    off) is listed."""
    value = var.lb if side == "lower" else var.ub
    if value is None:
        return False
    if var.is_binary():
        return value > 0 if side == "lower" else value < 1
    return True


class _Subsystem:
    """A model of only some constraints and bounds, over the variables they use
    (integrality kept, domains' bounds not, except a binary's 0..1, which stays part of it;
    its own tighter bounds only where listed), re-solved to check that they cannot hold
    together. It holds nothing else: a copy of the whole model with the rest deactivated
    made each check walk and load every variable (45 ms a check on 8,300 rows)."""

    def __init__(self, model: BlockData, constraints: list[ConstraintData],
                 bounds: list[Bound]) -> None:
        self.model = model
        self.work = pyo.ConcreteModel()
        used = ComponentMap((var, None) for con in constraints
                            for var in identify_variables(con.expr))
        used.update((var, None) for var, _ in bounds)
        self.work.x = pyo.Var(range(len(used)))
        copies = dict(zip(map(id, used), self.work.x.values(), strict=True))
        for var, copy in zip(used, self.work.x.values(), strict=True):
            _copy_variable(var, copy)
        self.work.c = pyo.ConstraintList()
        for con in constraints:
            self.work.c.add(replace_expressions(con.expr, substitution_map=copies))
        self.members: list[tuple[Any, str | None]] = (
            [(copy, None) for copy in self.work.c.values()]
            + [(copies[id(var)], side) for var, side in bounds])
        self._origins = {id(copy): con for copy, con in
                         zip(self.work.c.values(), constraints, strict=True)}
        self._origins.update((id(copies[id(var)]), var) for var, _ in bounds)
        self.values = {(id(copies[id(var)]), side): var.lb if side == "lower" else var.ub
                       for var, side in bounds}
        self.undecided = 0  # checks of the filters that no solver decided
        self.filtered = False  # a pass of one-member chunks ran: the deletion filter
        self.timed_out = False  # a filter stopped at the time limit
        for copy in self.work.x.values():
            if not copy.fixed:
                copy.setlb(self.values.get((id(copy), "lower")))
                copy.setub(self.values.get((id(copy), "upper")))

    def infeasible(self) -> tuple[str, bool]:
        """Solve the subsystem (HiGHS where it can, SCIP where HiGHS cannot take it or does
        not decide it within `_CHECK_SECONDS`); True when it is infeasible. A SolverError
        where neither decides it."""
        solver, verdict, undecided = self._verdict()
        if verdict is None:
            raise SolverError(f"no solver decided the subsystem ({'; '.join(undecided)})")
        return solver, verdict

    def _verdict(self, seconds: float = _CHECK_SECONDS) -> tuple[str, bool | None, list[str]]:
        """`infeasible`'s solves, `seconds` each: the solver, its verdict (None: undecided)
        and why each solver left it undecided."""
        undecided = []
        for solver in ("highs", "scip"):
            try:
                status = solve(self.work, solver=solver, time_limit=seconds).status
            except UnsupportedModelError:
                continue
            except SolverError as exc:  # HiGHS's "Solve error" on a row near 1e10: SCIP's
                undecided.append(f"{solver}: {exc}")  # turn; SCIP's own error: undecided
                continue
            if status in (Status.INFEASIBLE, Status.OPTIMAL):
                return solver, status is Status.INFEASIBLE, undecided
            _stop_if_interrupted(status)
            undecided.append(f"{solver}: {status.value}")
        if not undecided:
            raise SolverError("neither HiGHS nor SCIP takes the subsystem")
        return "", None, undecided

    def _still_infeasible(self, deadline: float | None) -> bool:
        """Whether the subsystem as switched now is infeasible; undecided counts as not
        (its members stay: the subsystem stays infeasible, `undecided` says it may not be
        irreducible). Dropping bounds can leave free integers neither solver decides. Past
        `deadline` nothing is solved and the answer is no (`timed_out`)."""
        left = _CHECK_SECONDS if deadline is None else min(_CHECK_SECONDS,
                                                             deadline - time.perf_counter())
        if left <= 0:
            self.timed_out = True
            return False
        verdict = self._verdict(left)[1]
        self.undecided += verdict is None
        return bool(verdict)

    def deletion_filter(self, deadline: float | None) -> None:
        """Drop each member whose absence leaves the rest infeasible: what remains is
        irreducible (every member is needed) unless a check went undecided. A bar on a
        terminal shows the solves."""
        needed = []
        self.undecided = 0  # each member is judged alone now: earlier doubts are settled
        for member in progress_bar(self.members, desc="explain_infeasible", unit="check",
                                   disable=None, leave=False):
            self._switch(member, on=False)
            if not self._still_infeasible(deadline):
                self._switch(member, on=True)
                needed.append(member)
        self.members = needed

    def shrink(self, limit: int, deadline: float | None) -> None:
        """While more than `limit` members remain, drop chunks of them (halving in size)
        whose absence leaves the rest infeasible: fewer solves than one per member. A pass
        of one-member chunks is the deletion filter itself (`filtered`)."""
        size = len(self.members) // 2
        with progress_bar(desc="explain_infeasible", unit="check", disable=None,
                          leave=False) as bar:
            while size >= 1 and len(self.members) > limit and not self.timed_out:
                self.filtered = size == 1
                if self.filtered:  # each member is judged alone now: earlier doubts are settled
                    self.undecided = 0
                members, kept = self.members, []
                for start in range(0, len(members), size):
                    bar.update()
                    chunk = members[start:start + size]
                    for member in chunk:
                        self._switch(member, on=False)
                    if not self._still_infeasible(deadline):
                        for member in chunk:
                            self._switch(member, on=True)
                        kept += chunk
                self.members = kept
                size //= 2

    def _switch(self, member: tuple[Any, str | None], on: bool) -> None:
        """Put a member in the subsystem or take it out."""
        component, side = member
        if side is None:
            component.activate() if on else component.deactivate()
        elif side == "lower":
            component.setlb(self.values[(id(component), side)] if on else None)
        else:
            component.setub(self.values[(id(component), side)] if on else None)

    def originals(self) -> tuple[list[ConstraintData], list[Bound]]:
        """The members as the model's own constraints and (variable, side) bounds."""
        back = [(self._origins[id(c)], side) for c, side in self.members]
        return ([c for c, side in back if side is None],
                [(v, side) for v, side in back if side is not None])
