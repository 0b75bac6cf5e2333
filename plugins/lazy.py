"""Lazy constraints for `coplug.plugins.solve`: rows given by a Python function of a solution
and added to SCIP only when a solution violates them (subtour elimination, Benders-style
cuts), written with the Pyomo model's own variables.

SCIP has no lazy-constraint callback; a constraint handler is its form of one. The handler
here checks every candidate solution (heuristics', the LP's, a MIP start) by calling the
user's `separate(solution)`, rejects a solution that violates a returned row, and adds the
violated rows as global linear constraints when it enforces an LP or pseudo solution.
Because SCIP never sees the rows up front, anything that assumes the rows it holds are all
the rows would be wrong: the handler holds one constraint that locks every variable both
ways (no dual fixing, no dual presolving), reports no variables (no component split) and
no symmetry graph (no symmetry handling), so only reasoning valid for any extra row is
left.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.var import VarData
from pyomo.core.expr.numvalue import is_potentially_variable, native_numeric_types
from pyomo.core.expr.relational_expr import (
    EqualityExpression,
    InequalityExpression,
    RangedExpression,
    RelationalExpression,
)
from pyomo.core.expr.visitor import identify_mutable_parameters, identify_variables
from pyscipopt import SCIP_RESULT, Conshdlr, quicksum

from coplug.plugins.arguments import check_flag
from coplug.plugins.base import UserCallbackPlugin, checked_plugin_name, checked_user_function
from coplug.plugins.errors import InputError
from coplug.plugins.integral_rows import STEP, IntegralRow, judged_row
from coplug.plugins.linear_terms import final_parts, linear_terms
from coplug.plugins.modeldata import SOLVER_INFINITY
from coplug.plugins.row_scaling import row_scale
from coplug.plugins.varmap import VarMap

_INF = float("inf")
# Check and enforcement priority: after every constraint handler of SCIP's own that a model
# can use (the lowest, Benders', is -5,000,000), so `separate` sees solutions that meet the
# model's rows and integrality.
LAST = -8_000_000
# Expressions whose rows `LazyConstraints._read` keeps read (each holds its expression alive).
READ_CACHE = 4096


class SolutionView:
    """The values of one solution, read by Pyomo variable: `solution[m.x[1, 2]]`.

    `handles` maps id(Pyomo variable) to the solver's handle of it (a SCIP variable, a
    HiGHS column) and `read(handle)` gives its value; a fixed Pyomo variable (which the
    solve takes as a constant) reads as its value.
    """

    def __init__(self, handles: Mapping[int, Any], read: Callable[[Any], float]) -> None:
        self._handles, self._read = handles, read
        self._values: dict[int, float] = {}  # read once: a row's activity reads them again

    @classmethod
    def of_scip(cls, scip: Any, sol: Any, var_map: VarMap) -> SolutionView:
        """The view of SCIP's `sol` (None: the current LP or pseudo solution)."""
        return cls(var_map.by_id, lambda scip_var: scip.getSolVal(sol, scip_var))

    def __getitem__(self, var: VarData) -> float:
        known = self._values.get(id(var))
        if known is not None:
            return known
        handle = self._handles.get(id(var))
        if handle is not None:
            value = self._values[id(var)] = float(self._read(handle))
            return value
        if not isinstance(var, VarData):
            raise InputError(f"a solution is read one variable at a time (m.x[i]), got {var!r}")
        if var.fixed and var.value is not None:
            return float(var.value)
        raise InputError(f"variable {var.name!r} is not in the solved model")

    def __call__(self, var: VarData) -> float:
        return self[var]

    def values_of(self, variables: Sequence[VarData]) -> list[float]:
        """The values of many variables, as `[self[v] for v in variables]` but reading those
        already read without a call each (a row's activity and k_best's record read every
        variable of a 1,000-binary model at each of its hundreds of solutions)."""
        known, handles, read = self._values, self._handles, self._read
        values = [known.get(id(var)) for var in variables]
        for k, value in enumerate(values):
            if value is None:
                var = variables[k]
                handle = handles.get(id(var))
                if handle is None:  # fixed, or not in the model: as `self[var]` says
                    values[k] = self[var]
                else:
                    values[k] = known[id(var)] = float(read(handle))
        return values


class LinearRow(NamedTuple):
    """lower <= sum(coefs * variables) <= upper, with the expression it came from."""

    variables: list[Any]
    coefs: list[float]
    lower: float
    upper: float
    expr: Any

    def frozen(self) -> Any:
        """The row as a relational expression of its numbers: the Params and fixed variables
        of `expr` as they were when it was read, so a later change to them (a separator
        that keeps its point in a mutable Param) leaves the row as it was added."""
        if not self.variables:
            return self.expr  # nothing a solver could change: the data decides it alone
        body = sum(c * v for c, v in zip(self.coefs, self.variables, strict=True))
        if self.lower == self.upper:
            return body == self.upper
        if self.lower == -_INF:
            return body <= self.upper
        if self.upper == _INF:
            return body >= self.lower
        return pyo.inequality(self.lower, body, self.upper)


def linear_row(expr: Any) -> LinearRow:
    """A relational Pyomo expression (`<=`, `>=`, `==`, `inequality`) as a `LinearRow` over
    its non-fixed variables; an InputError names anything else."""
    if isinstance(expr, (RangedExpression, InequalityExpression)) and (
        any(expr._strict) if isinstance(expr, RangedExpression) else expr.strict
    ):
        raise InputError(f"lazy constraint {expr} is strict; use <= or >=")
    if isinstance(expr, RangedExpression):
        lower, body, upper = expr.args
        lo, hi = _constant_side(lower, expr), _constant_side(upper, expr)
    elif isinstance(expr, (InequalityExpression, EqualityExpression)):
        left, right = expr.args
        equality = isinstance(expr, EqualityExpression)
        if is_potentially_variable(left) or not is_potentially_variable(right):
            plain = right.__class__ in native_numeric_types and -_INF < right < _INF
            body = left if plain else left - right  # `row <= 3` read without `- 3`
            side = right if plain else 0.0  # (an infinite side is refused below, as before)
            lo, hi = (side if equality else -_INF), side
        else:  # `3 <= x + 2*y` is the row x + 2*y >= 3, as Pyomo reads it: its dual's sign
            body = right
            lo = hi = float(pyo.value(left))
            hi = hi if equality else _INF
    else:
        raise InputError(
            f"a lazy constraint must be a relational expression like `sum(...) <= k`, got "
            f"{shown_expression(expr)} ({type(expr).__name__})"
        )
    terms = linear_terms(body)
    if terms is None:
        raise InputError(f"lazy constraint {expr} is not linear")
    row = LinearRow(list(terms.variables), terms.coefs.tolist(), lo - terms.constant,
                    hi - terms.constant, expr)
    _check_finite(row)
    return row


def _check_finite(row: LinearRow) -> None:
    """An InputError for a row with a NaN or infinite coefficient or constant, one of 1e20
    or more (the solvers' infinity: SCIP stops with "error in input data"), or a side that
    is NaN or infinite the wrong way: the solvers drop or loop on such rows."""
    if not (np.isfinite(row.coefs).all() and -_INF < row.upper and row.lower < _INF
            and row.lower == row.lower and row.upper == row.upper):
        raise InputError(f"lazy constraint {row.expr} has a NaN or infinite coefficient or "
                         "side; give finite numbers (an infinite side only as "
                         "pyo.inequality(-inf, body, upper) or its mirror)")
    largest = max(map(abs, row.coefs), default=0.0)
    if largest >= SOLVER_INFINITY:
        raise InputError(f"lazy constraint {row.expr} has a coefficient of {largest:g}, at or "
                         f"past the solvers' infinity ({SOLVER_INFINITY:g}); rescale the row")


def _constant_side(value: Any, expr: Any) -> float:
    """A side of a ranged lazy constraint as a float: a number, not variables."""
    terms = linear_terms(value)
    if terms is None or len(terms.variables):
        raise InputError(f"lazy constraint {expr}: a side of a ranged row must be a number")
    return terms.constant


class LazyConstraints(UserCallbackPlugin):
    """Rows generated from solutions, added to SCIP only when violated.

    ``separate(solution)`` gets a `SolutionView` (read values by Pyomo variable) and returns
    relational Pyomo expressions over the model's variables (an empty list when it has
    none); only those the solution violates (beyond SCIP's feasibility tolerance) are
    added. It is called on solutions whose integer variables are integral; with
    ``fractional=True`` also on fractional LP solutions, to cut them off early (the
    function must then cope with fractional values). The rows the last `solve()` added are
    kept in `cuts` (where `solve` ran SCIP twice, its checked re-solve, both runs' rows and
    counts); `name` is the key of its `plugin_stats` (two in one solve need two names).
    An exception raised by `separate` stops the solve and comes out of `solve()`.
    """

    adds_rows = True  # the model SCIP solves is not Pyomo's: duals from a re-solve with
    # the added rows in the model (coplug.plugins.lazy_duals)

    def __init__(self, separate: Callable[[SolutionView], Iterable[Any]],
                 fractional: bool = False, name: str = "lazy") -> None:
        self.separate = checked_user_function(
            separate, "LazyConstraints needs a function separate(solution)")
        self.fractional = check_flag(fractional, "fractional")
        self.name = checked_plugin_name(name)
        self._var_map: VarMap | None = None
        self._forget()

    def reset(self) -> None:
        """As a solve starts: forget the rows and counts of an earlier one, and reset a
        `separate` with a `reset()` of its own (`BendersCuts`: it reads the model's data as
        it is now)."""
        self._forget()
        own = getattr(self.separate, "reset", None)
        if callable(own):
            own()

    def _forget(self) -> None:
        """No rows or counts yet."""
        self.cuts: list[Any] = []
        self.added_rows: list[LinearRow] = []  # the rows of `cuts`, as read when added
        self._added: set[Any] = set()  # keys (`_key`) of the rows the solver now holds
        self._rows_read: dict[int, tuple[LinearRow, Any, tuple | None]] = {}  # by id(expr)
        self._stats = {"calls": 0, "rejected": 0, "cuts_added": 0, "seconds": 0.0}
        self.last_rejected: LinearRow | None = None  # a row the last rejected point missed

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        """Include the lazy-constraint handler and its one constraint into SCIP."""
        self.bind(scip_model, var_map)  # weakly: see UserCallbackPlugin
        self._var_map = var_map
        self.reset()
        handler = _LazyHandler(self)
        try:
            scip_model.includeConshdlr(
                handler, self.name, "rows from a Python function, added when violated",
                sepapriority=-1, enfopriority=LAST, chckpriority=LAST, sepafreq=1,
                propfreq=-1, eagerfreq=-1, maxprerounds=0, delaysepa=False,
                needscons=True,
            )
        except Exception as exc:  # PySCIPOpt raises a bare Exception for SCIP's error code
            raise InputError(f"SCIP refused the lazy-constraint handler {self.name!r} ({exc}); "
                             "give each LazyConstraints of a solve a name of its own") from exc
        cons = scip_model.createCons(handler, self.name, initial=False,
                                     separate=self.fractional, enforce=True, check=True,
                                     propagate=False)
        scip_model.addPyCons(cons)

    def statistics(self) -> dict[str, Any]:
        """Calls of `separate`, solutions rejected, rows added, seconds spent in `separate`."""
        return dict(self._stats)

    def violated(self, sol: Any, judge_added: bool = False) -> list[LinearRow]:
        """The rows `separate` returns for SCIP's `sol` (None: the current LP or pseudo
        solution) that it violates by SCIP's tolerance (rows already added too with
        `judge_added`)."""
        scip = self._scip
        return self.violated_at(SolutionView.of_scip(scip, sol, self._var_map), scip.isFeasLE,
                                judge_added)

    def violated_at(self, view: Any, feasible_le: Callable[[float, float], bool],
                    judge_added: bool = False) -> list[LinearRow]:
        """The rows `separate` returns for the point `view` reads that violate it
        (`feasible_le(a, b)`: a <= b within tolerance), each once, leaving out rows already
        added unless `judge_added`: those are the solver's rows now, judged by its own check.
        Judging them again while enforcing loops: an LP solution that meets such a row within
        the LP's tolerance but misses it by this check's would add it again and again,
        forever (the same row 9,500 times in 5 s on an unbounded LP with values near 1e5)."""
        out, keys = [], set()
        for row, key in self._separated(view):
            if key in keys or key in self._added and not judge_added:
                continue
            keys.add(key)
            activity = sum(map(operator.mul, row.coefs, view.values_of(row.variables)))
            if not (feasible_le(row.lower, activity) and feasible_le(activity, row.upper)):
                out.append(row)
        return out

    def _separated(self, view: Any) -> list[tuple[LinearRow, Any]]:
        """The rows `separate` returns for the point `view` reads, with their keys."""
        started = time.perf_counter()
        try:
            return [self._read(expr) for expr in _returned_rows(self.separate(view))]
        finally:
            self._stats["calls"] += 1
            self._stats["seconds"] += time.perf_counter() - started

    def exact_rows(self, feastol: float) -> list[IntegralRow]:
        """The rows of this plugin that SCIP's relative `feastol` cannot judge, all-integer
        ones and mixed ones with a large integer coefficient (as
        `coplug.plugins.integral_rows` picks the model's): those added and those
        `separate` returns at SCIP's best solution, in SCIP's variables, for coplug's exact
        check. SCIP let `1000000 x0 + 1000001 x1 <= 2000000` pass at x = (1, 1), 1 over
        (1e-6 of 2e6 is 2), and called that point optimal; the row, never violated by
        SCIP's measure, was never added."""
        scip, to_scip = self._scip, self._var_map.to_scip
        found = {_key(row): row for row in self.added_rows}
        if scip.getNSols() and self._failure is None:  # else `separate` raised: not again
            view = SolutionView.of_scip(scip, scip.getBestSol(), self._var_map)
            found.update((key, row) for row, key in self._separated(view))
        judged = (judged_row(f"{self.name}: {str(row.expr)[:80]}",
                             [to_scip(v) for v in row.variables], row.coefs,
                             [var.is_integer() for var in row.variables],
                             None if row.lower == -_INF else row.lower,
                             None if row.upper == _INF else row.upper, STEP / feastol)
                  for row in found.values())
        return [row for row in judged if row is not None]

    def _read(self, expr: Any) -> tuple[LinearRow, Any]:
        """`linear_row(expr)` and its `_key`, made once per expression object a solve sees
        while the data it rests on stays: a function that hands back the rows it built
        before (k_best's no-goods and cutoff, met by thousands of heuristic solutions) spent
        half its time having them read again, and one that hands back a row whose side is a
        Param it changes means the row at the Param's value now. A row met a second time is
        read again and, unchanged, remembered with its data (`_data_of`), which later
        meetings compare; rows met once (most separators build each afresh) pay nothing."""
        known = self._rows_read.get(id(expr))
        if known is not None and known[0].expr is expr:
            row, key, data = known
            if data is not None and _unchanged(data):
                return row, key
            fresh = linear_row(expr)
            if data is None and _key(fresh) == key:
                self._rows_read[id(expr)] = (row, key, _data_of(expr))
                return row, key
            row, key = fresh, _key(fresh)
        else:
            row = linear_row(expr)
            key = _key(row)
        if len(self._rows_read) >= READ_CACHE:
            self._rows_read.clear()
        self._rows_read[id(expr)] = (row, key, None)
        return row, key

    def record(self, row: LinearRow) -> None:
        """Count `row` as added (to SCIP, or to the model between HiGHS's rounds)."""
        self._added.add(_key(row))
        self.cuts.append(row.expr)
        self.added_rows.append(row)
        self._stats["cuts_added"] += 1

    def add(self, rows: list[LinearRow]) -> None:
        """Add `rows` to SCIP as global linear constraints and to `cuts`, each with huge
        coefficients divided by a power of two as the model's rows are
        (`coplug.plugins.row_scaling`: SoPlex's LPs with rows near 1e10 went wrong or slow;
        one 5-variable model with such lazy rows took SCIP 25 s for 10 nodes, 0.03 s divided)."""
        scip, to_scip = self._scip, self._var_map.to_scip  # `violated_at` read every variable
        for row in rows:
            factor = row_scale(row.coefs, None if row.lower == -_INF else row.lower,
                               None if row.upper == _INF else row.upper)
            body = quicksum(c * factor * to_scip(v)
                            for c, v in zip(row.coefs, row.variables, strict=True))
            lower, upper = row.lower * factor, row.upper * factor
            if lower == upper:
                cons = body == upper
            elif lower == -_INF:
                cons = body <= upper
            elif upper == _INF:
                cons = body >= lower
            else:
                cons = (lower <= body) <= upper
            scip.addCons(cons, name=f"coplug_lazy_{self._stats['cuts_added']}", removable=True)
            self.record(row)


def _returned_rows(returned: Any) -> Iterable[Any]:
    """What `separate` returned as an iterable of rows (None: none); an InputError for one
    row or anything else not a list of rows (truth-testing a Pyomo row raises deep in
    Pyomo)."""
    if returned is None:
        return ()
    if isinstance(returned, (RelationalExpression, str, bytes)) or not isinstance(
            returned, Iterable):
        raise InputError("separate must return a list of rows (relational expressions) or "
                         f"None, got {type(returned).__name__} {returned!r}")
    return returned


def _data_of(expr: Any) -> tuple[tuple[Any, ...], ...]:
    """What a row's numbers rest on besides its form: its mutable Params and its fixed
    variables, with their values. (A variable fixed only later, during the solve, is not
    watched: comparing every variable of a 300-term row cost a quarter of reading it.) A
    row of plain numbers and free variables rests on nothing: it is not walked."""
    if isinstance(expr, (InequalityExpression, EqualityExpression)) and (
            expr.args[1].__class__ in native_numeric_types
            and final_parts(expr.args[0]) is not None):
        return (), ()
    params = tuple((param, param.value) for param in identify_mutable_parameters(expr))
    fixed = tuple((var, var.value) for var in identify_variables(expr, include_fixed=True)
                  if var.fixed)
    return params, fixed


def _unchanged(data: tuple[tuple[Any, ...], ...]) -> bool:
    """Whether the Params and fixed variables `_data_of` read still hold what they held."""
    params, fixed = data
    return all(param.value == value for param, value in params) and all(
        var.fixed and var.value == value for var, value in fixed)


def _key(row: LinearRow) -> Any:
    """What makes two rows the same row: their terms (by variable) and their sides."""
    return frozenset(zip(map(id, row.variables), row.coefs, strict=True)), row.lower, row.upper


class _LazyHandler(Conshdlr):
    """SCIP's side of `LazyConstraints`: check, enforce, separate, lock."""

    def __init__(self, owner: LazyConstraints) -> None:
        self.owner = owner

    def consinit(self, constraints):
        # a new transformed problem (a first solve, or one after freeTransform: coplug's
        # re-solves) holds none of the rows added to the one before
        self.owner._added = set()

    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason,
                  completely):
        # SCIP checks a solution of the original space (a UserHeuristic's) against the
        # original constraints only, never the rows added to the transformed problem: here
        # they are judged too, or such a point that misses one became the answer
        original = any(cons.isOriginal() for cons in constraints)
        if self.owner.stop_if_failed():  # SCIP could not stop yet: no more user calls
            return {"result": SCIP_RESULT.INFEASIBLE}
        try:
            bad = self.owner.violated(solution, judge_added=original)
        except BaseException as exc:  # the user's (KeyboardInterrupt too): raised after
            self.owner.fail(exc)
            return {"result": SCIP_RESULT.INFEASIBLE}
        if bad:
            self.owner._stats["rejected"] += 1
            self.owner.last_rejected = bad[0]
            return {"result": SCIP_RESULT.INFEASIBLE}
        return {"result": SCIP_RESULT.FEASIBLE}

    def _enforce(self, none_found: Any) -> dict[str, Any]:
        """Add the rows the current solution violates; `none_found` when there are none."""
        if self.owner.stop_if_failed():
            return {"result": SCIP_RESULT.CUTOFF}
        try:
            bad = self.owner.violated(None)
            self.owner.add(bad)
        except BaseException as exc:  # the user's (KeyboardInterrupt too): raised after
            self.owner.fail(exc)
            return {"result": SCIP_RESULT.CUTOFF}
        return {"result": SCIP_RESULT.CONSADDED if bad else none_found}

    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        return self._enforce(SCIP_RESULT.FEASIBLE)

    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        return self._enforce(SCIP_RESULT.FEASIBLE)

    def conssepalp(self, constraints, nusefulconss):
        return self._enforce(SCIP_RESULT.DIDNOTFIND)

    def constrans(self, sourceconstraint):
        # A constraint of its own for the transformed problem. Without this PySCIPOpt gives
        # the transformed constraint the original's Python object as its data without a
        # reference of its own, and deleting it (freeTransform, which coplug's re-solves
        # call) frees that object under the original constraint: the next solve of the
        # same model crashed the interpreter (segmentation fault).
        src = sourceconstraint
        return {"targetcons": self.model.createCons(
            self, src.name, initial=src.isInitial(), separate=src.isSeparated(),
            enforce=src.isEnforced(), check=src.isChecked(), propagate=src.isPropagated())}

    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        # the original variables, for the transformed constraint too: SCIP passes a lock of
        # an original variable on to its transformed one (and lists no transformed variables
        # while it transforms or frees the problem, when this is called)
        scip = self.model
        both = nlockspos + nlocksneg
        for var in scip.getVars(transformed=False):
            scip.addVarLocksType(var, locktype, both, both)


def shown_expression(expr: Any) -> str:
    """A Pyomo expression as written (`x[0] + x[1]`, at most 200 characters); anything
    else by its repr."""
    text = str(expr) if hasattr(expr, "is_expression_type") else repr(expr)
    return text if len(text) <= 200 else text[:197] + "..."
