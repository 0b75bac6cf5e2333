"""Benders decomposition as lazy constraints: a master Pyomo model solved by SCIP and LP
subproblems solved at each master solution, their certified duals turned into cuts.

Each `Subproblem` is a Pyomo LP (minimized) in which the master's linking variables appear
as copies; `links` pairs each master variable with its copy. At a master point y^, coplug
solves a clone of the subproblem with the copies fixed by rows `copy == y^` and reads those
rows' duals (d optimum / d y^, certified by `solve`): the optimality cut
``estimate >= Q(y^) + sum(dual_k * (y_k - y^_k))`` holds for every y because Q is convex in
y. Where the subproblem is infeasible at y^, an elastic clone (each link row given slacks,
their sum minimized) measures how far: with its optimum v > 0 and duals d, the feasibility
cut ``v + sum(d_k * (y_k - y^_k)) <= 0`` holds for every y the subproblem accepts and cuts
y^ off. A v small enough for SCIP's tolerance to forgive comes with the optimality cut made
at the elastic optimum's copies (a feasible point within v of y^), so that the estimate is
bounded at a point SCIP keeps; an elastic clone without any point (the subproblem's own
rows contradict each other) makes the master infeasible. The user's models are never
changed (coplug works on clones); a subproblem may be a deactivated block of a bigger
model, an indexed block's member included.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.block import BlockData
from pyomo.core.base.componentuid import ComponentUID
from pyomo.core.base.var import VarData

from coplug.plugins.components import unread_component
from coplug.plugins.duals import LinearProgram, min_form, read_lp
from coplug.plugins.errors import InputError, SolverError
from coplug.plugins.highs_interface import new_highs
from coplug.plugins.lp_certificate import certify, transposes
from coplug.plugins.outer_variables import declared_in
from coplug.plugins.results import Status
from coplug.plugins.serial import warning_filters

# A subproblem whose elastic form leaves at most this much slack counts as feasible.
FEASIBLE_SLACK = 1e-7
# A feasibility cut whose slack is at most this fraction of its row's size (SCIP forgives
# 1e-6 by default) comes with an optimality cut made at the nearest feasible point.
NEAR_SLACK = 1e-4
# Master points whose cuts are remembered (SCIP checks a solution, then enforces the same one).
CACHE_SIZE = 10_000


@dataclass(frozen=True)
class Subproblem:
    """An LP subproblem: `model` (minimized), `links` as (master variable, its copy in
    `model`) pairs, and `estimate`, the master variable bounding this subproblem's optimum
    from below (None: the subproblem only says which master points are feasible)."""

    model: BlockData
    links: Sequence[tuple[VarData, VarData]]
    estimate: VarData | None = None

    def __post_init__(self) -> None:
        """Keep the links as a tuple: an iterator (a zip) was used up by the first check,
        and the next one said the subproblem had no links."""
        try:
            object.__setattr__(self, "links", tuple(self.links))
        except TypeError:
            raise InputError(f"Subproblem links must be (master variable, copy) pairs, got "
                             f"{type(self.links).__name__}") from None


class _PersistentLP:
    """One HiGHS model of a clone, built once: each master point only moves the link rows'
    sides, and HiGHS starts from the previous basis. Its answers are certified by the
    duality gap (`lp_certificate`); one that is not gives None and the clone is solved
    through `solve` instead."""

    def __init__(self, lp: LinearProgram, links: list[Any], copies: list[Any]) -> None:
        self.form = form = min_form(lp)
        self.constant = lp.objective.constant if lp.objective is not None else 0.0
        position = {id(con): i for i, (con, _, _, _) in enumerate(lp.rows)}
        self.links = np.array([position[id(con)] for con in links], dtype=np.int32)
        self.copy_columns = np.array([form.index[id(var)] for var in copies], dtype=np.int64)
        self.copy_values: list[float] = []  # the copies' values at the last optimum
        self.transposed = transposes(form.matrix)
        self.highs = h = new_highs()
        h.silent()
        n = len(form.costs)
        h.addVars(n, form.col_lower, form.col_upper)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), form.costs)
        matrix = form.matrix
        h.addRows(matrix.shape[0], form.lower, form.upper, matrix.nnz,
                  matrix.indptr[:-1].astype(np.int32), matrix.indices.astype(np.int32),
                  matrix.data)

    def solve(self, point: np.ndarray) -> tuple[Status, float, list[float]] | None:
        """(status, optimum, link-row duals) at `point`, or None when HiGHS's answer is not
        certified or not one of optimal / infeasible."""
        import highspy

        form, h = self.form, self.highs
        lower, upper = form.lower.copy(), form.upper.copy()
        lower[self.links] = upper[self.links] = point
        h.changeRowsBounds(len(self.links), self.links, point, point)
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return Status.INFEASIBLE, float("nan"), []
        if status != highspy.HighsModelStatus.kOptimal:
            return None
        solution = h.getSolution()
        x = np.asarray(solution.col_value)
        found = certify(form.costs, x, form.matrix, lower, upper, form.col_lower,
                        form.col_upper, np.asarray(solution.row_dual), self.transposed)
        if not found.holds:
            return None
        self.copy_values = x[self.copy_columns].tolist()
        return (Status.OPTIMAL, float(form.costs @ x) + self.constant,
                found.duals[self.links].tolist())


class _Clone:
    """A clone of a subproblem with link rows `copy (+ plus - minus) == at`, where `at` is
    the master point, and a `dual` Suffix; with HiGHS also solved as a `_PersistentLP`."""

    def __init__(self, k: int, sub: Subproblem, elastic: bool, solver: str) -> None:
        model = sub.model
        # found again by ComponentUID, which keeps each index as it is (names do not: x[None]
        # and x['None'] share one, and x[' a'] read back as x['a'])
        uids = [ComponentUID(copy, context=model) for _, copy in sub.links]
        # the clone's components moved into a model of their own: a clone of one block of an
        # indexed block is no model (components added to it stay unconstructed), and a block
        # the user deactivated (a scenario block of a bigger model, kept out of the master's
        # solve) is still the subproblem
        self.model = m = pyo.ConcreteModel(name=model.name)
        m.transfer_attributes_from(model.clone())
        if not elastic:
            objectives = list(m.component_data_objects(pyo.Objective, active=True))
            if len(objectives) != 1 or objectives[0].sense != pyo.minimize:
                raise InputError(f"subproblem {k} needs one minimized objective to estimate")
        copies = [uid.find_component_on(m) for uid in uids]
        n = range(len(copies))
        m._coplug_at = pyo.Param(n, mutable=True, initialize=0.0)
        if elastic:
            for obj in m.component_data_objects(pyo.Objective, active=True):
                obj.deactivate()
            m._coplug_plus = pyo.Var(n, domain=pyo.NonNegativeReals)
            m._coplug_minus = pyo.Var(n, domain=pyo.NonNegativeReals)
            m._coplug_link = pyo.Constraint(n, rule=lambda m, i: copies[i] + m._coplug_plus[i]
                                            - m._coplug_minus[i] == m._coplug_at[i])
            m._coplug_slack = pyo.Objective(expr=sum(m._coplug_plus[i] + m._coplug_minus[i]
                                                     for i in n))
        else:
            m._coplug_link = pyo.Constraint(n, rule=lambda m, i: copies[i] == m._coplug_at[i])
        if not isinstance(getattr(m, "dual", None), pyo.Suffix):
            m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        other = unread_component(m, "highs")  # an SOS, a logical row: no LP's
        if other is not None:
            raise InputError(f"subproblem {k} is not an LP: it has {other.name!r} "
                             f"({other.ctype.__name__}), so its duals give no valid cut")
        lp, reason = read_lp(m)
        if lp is None:
            raise InputError(f"subproblem {k} is not an LP: {reason}")
        for var in lp.variables:
            if not declared_in(var, m):
                raise InputError(f"subproblem {k} uses {var.name!r}, a variable of another "
                                 "model: link it through a copy")
        self.copies = copies
        self.fast = (_PersistentLP(lp, [m._coplug_link[i] for i in n], copies)
                     if solver == "highs" else None)
        self.copy_values: list[float] = []  # the copies' values at the last optimum
        self.fallbacks = 0

    def solve(self, point: Sequence[float], solver: str) -> tuple[Any, float, list[float]]:
        """Solve at the master point: (status, optimum, link-row duals)."""
        if self.fast is not None:
            answer = self.fast.solve(np.asarray(point, dtype=float))
            if answer is not None:
                self.copy_values = self.fast.copy_values
                return answer
            self.fallbacks += 1
        return self._solve_model(point, solver)

    def _solve_model(self, point: Sequence[float], solver: str) -> tuple[Any, float, list[float]]:
        """The clone through `solve` (its checks, retries and certified duals)."""
        from coplug.plugins.bridge import solve

        m = self.model
        for i, value in enumerate(point):
            m._coplug_at[i] = value
        with warning_filters():
            warnings.simplefilter("ignore")  # a refusal shows in extra["duals"] below
            result = solve(m, solver=solver)
        if result.status is not Status.OPTIMAL:
            return result.status, float("nan"), []
        duals = result.extra.get("duals", {})
        if not duals.get("loaded"):
            raise SolverError(f"Benders subproblem {m.name!r}: its duals could not be "
                              f"certified ({duals.get('reason')}), so no cut is safe")
        self.copy_values = [float(pyo.value(copy)) for copy in self.copies]
        return result.status, float(result.objective), [m.dual.get(m._coplug_link[i], 0.0)
                                                        for i in range(len(point))]


class BendersCuts:
    """A `LazyConstraints` function for Benders decomposition over `subproblems`.

    ``solve(master, plugins=[LazyConstraints(BendersCuts(subs))])`` solves the master with
    SCIP and, at each master solution, every subproblem with `solver` (HiGHS by default),
    adding the optimality and feasibility cuts it violates. Each estimate variable needs a
    finite lower bound (a bound on its subproblem's optimum, 0 for nonnegative costs): SCIP
    would call the master unbounded before any cut.
    """

    def __init__(self, subproblems: Sequence[Subproblem], solver: str = "highs") -> None:
        if isinstance(subproblems, (str, bytes, Subproblem)) or \
                not isinstance(subproblems, Iterable):
            raise InputError(f"BendersCuts needs a list of Subproblem objects, got {subproblems!r}")
        subproblems = list(subproblems)
        if not subproblems:
            raise InputError("BendersCuts needs at least one Subproblem")
        for k, sub in enumerate(subproblems):
            _check_subproblem(k, sub)
        self.subproblems = subproblems
        self.solver = _lp_solver(solver)
        self._clones: tuple[list[_Clone | None], list[_Clone]] | None = None
        self._built()  # a subproblem the clones cannot take is named here, not mid-solve
        self._fresh = True  # the first solve may use these clones: the data is as it was
        self._forget()

    def reset(self) -> None:
        """As each solve starts (`LazyConstraints` calls this): forget the cuts and counts of
        an earlier solve, and clone the subproblems anew as they are then. Only the first
        solve uses the clones made with this object (a second build costs 2.2 s at 160
        scenarios): a subproblem whose data changed after a solve kept its old clone, and
        the next solve gave the old optimum (also after a solve that made no cut)."""
        if not self._fresh:
            self._clones = None
        self._fresh = False
        self._forget()

    def _forget(self) -> None:
        """No cuts, counts or infeasible points yet."""
        self._cache: dict[tuple[Any, ...], list[Any]] = {}  # cuts by point, this solve's
        self._infeasible_at: set[tuple[Any, ...]] = set()  # (k, point) with a feasibility cut
        self.stats = {"subproblem_solves": 0, "optimality_cuts": 0, "feasibility_cuts": 0,
                      "fallbacks": 0, "seconds": 0.0}

    def _built(self) -> tuple[list[_Clone | None], list[_Clone]]:
        """Each subproblem's clone (None without an estimate) and elastic clone, built from
        its data as it is when first asked for after a reset."""
        if self._clones is None:
            subs, solver = self.subproblems, self.solver
            for k, sub in enumerate(subs):  # a copy fixed since: named, not a KeyError
                _check_subproblem(k, sub)
            self._clones = ([None if s.estimate is None else _Clone(k, s, False, solver)
                             for k, s in enumerate(subs)],
                            [_Clone(k, s, True, solver) for k, s in enumerate(subs)])
        return self._clones

    def __call__(self, solution: Any) -> list[Any]:
        """The cuts every subproblem gives at the master point `solution`. A subproblem
        unbounded there makes the master unbounded only where no other subproblem is
        infeasible at that point (its feasibility cut then cuts the point off)."""
        started = time.perf_counter()
        cuts, unbounded = [], None
        try:
            for k in range(len(self.subproblems)):
                try:
                    cuts += self._cuts(k, solution)
                except _Unbounded as exc:
                    unbounded = unbounded or exc
        finally:
            self.stats["seconds"] += time.perf_counter() - started
        if unbounded is not None and not any(
                (k, *self._point(k, solution)) in self._infeasible_at
                for k in range(len(self.subproblems))):
            raise InputError(f"Benders subproblem {unbounded.k} is unbounded at a master point "
                             "every other subproblem takes: the master is unbounded too "
                             "(bound the subproblem)")
        return cuts

    def _point(self, k: int, solution: Any) -> list[float]:
        """Subproblem k's copies' values at the master point `solution`."""
        return [solution[master] for master, _ in self.subproblems[k].links]

    def _cuts(self, k: int, solution: Any) -> list[Any]:
        """Subproblem k's cut at `solution`, from the cache when SCIP asks about the same
        point again (it checks a solution, then enforces it)."""
        point = self._point(k, solution)
        key = (k, *point)
        if key not in self._cache:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = self._new_cuts(k, point)
        return self._cache[key]

    def _new_cuts(self, k: int, point: list[float]) -> list[Any]:
        """Subproblem k's cuts at `point`: an optimality cut, or a feasibility cut (with an
        optimality cut at the nearest feasible point when its slack is small), or none."""
        sub = self.subproblems[k]
        masters = [master for master, _ in sub.links]
        optimality, elastics = self._built()
        clone = optimality[k]
        if clone is not None:
            status, optimum, duals = self._solve(clone, point)
            if status is Status.OPTIMAL:
                self.stats["optimality_cuts"] += 1
                return [_optimality_cut(sub.estimate, optimum, duals, masters, point)]
            if status is Status.UNBOUNDED:
                raise _Unbounded(k)
            if status is not Status.INFEASIBLE:
                raise SolverError(f"Benders subproblem {k} ended {status.value}")
        elastic = elastics[k]
        status, slack, duals = self._solve(elastic, point)
        if status is Status.INFEASIBLE and elastic.fast is not None:
            # HiGHS's infeasible verdicts are not certified: this one decides the master
            elastic.fallbacks += 1
            self.stats["fallbacks"] += 1
            status, slack, duals = elastic._solve_model(point, self.solver)
        if status is Status.INFEASIBLE:
            # its rows have no solution whatever the copies are: no master point is feasible
            self.stats["feasibility_cuts"] += 1
            self._infeasible_at.add((k, *point))
            return [0 * masters[0] >= 1]
        if status is not Status.OPTIMAL:
            raise SolverError(f"Benders subproblem {k}'s elastic form ended {status.value}")
        cuts = []
        if slack > FEASIBLE_SLACK:
            self.stats["feasibility_cuts"] += 1
            self._infeasible_at.add((k, *point))
            cuts.append(slack + sum(d * (v - p) for d, v, p in zip(duals, masters, point,
                                                                  strict=True)) <= 0)
        size = max(1.0, abs(sum(d * p for d, p in zip(duals, point, strict=True))))
        if clone is not None and slack <= NEAR_SLACK * size:
            # SCIP takes a point whose feasibility cut its tolerance meets (slack 1e-7 on a
            # row near 1) as feasible: with no optimality cut there, the estimate would stay
            # at its lower bound. The copies of the elastic optimum are a subproblem point
            # at distance `slack`; the optimality cut made there holds for every y (Q is
            # convex) and bounds the estimate near this point too.
            nearest = list(elastic.copy_values)
            status, optimum, duals = self._solve(clone, nearest)
            if status is Status.OPTIMAL:
                self.stats["optimality_cuts"] += 1
                cuts.append(_optimality_cut(sub.estimate, optimum, duals, masters, nearest))
            elif not cuts:
                raise SolverError(f"Benders subproblem {k} was called infeasible at a point "
                                  f"its elastic form meets within {slack:.1e}")
        return cuts

    def _solve(self, clone: _Clone, point: list[float]) -> tuple[Any, float, list[float]]:
        """One subproblem solve, counted."""
        self.stats["subproblem_solves"] += 1
        before = clone.fallbacks
        answer = clone.solve(point, self.solver)
        self.stats["fallbacks"] += clone.fallbacks - before
        return answer


def _optimality_cut(estimate: VarData, optimum: float, duals: Sequence[float],
                    masters: Sequence[VarData], point: Sequence[float]) -> Any:
    """estimate >= Q(point) + sum(dual * (y - point)): Q is convex in y, so this holds at
    every master point."""
    return estimate >= optimum + sum(d * (v - p) for d, v, p in zip(duals, masters, point,
                                                                   strict=True))


class _Unbounded(Exception):
    """Subproblem `k` is unbounded at a master point (`BendersCuts.__call__` decides)."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.k = k


def _check_subproblem(k: int, sub: Any) -> None:
    """A Subproblem of a Pyomo block, (master, copy) variable pairs with the unfixed copies
    in the block and the masters outside, and an estimate with a finite lower bound (a
    fixed copy drops its link row, which HiGHS's fast path cannot find: a KeyError)."""
    if not isinstance(sub, Subproblem):
        raise InputError(f"subproblem {k} must be a Subproblem(model, links, estimate), got "
                         f"{type(sub).__name__}")
    if not isinstance(sub.model, BlockData):  # a model, a block, or one of an indexed block
        raise InputError(f"subproblem {k}: model must be a Pyomo model or block")
    links = list(sub.links)
    if not links:
        raise InputError(f"subproblem {k} has no links to the master")
    for link in links:
        if not (isinstance(link, (tuple, list)) and len(link) == 2
                and all(isinstance(var, VarData) for var in link)):
            raise InputError(f"subproblem {k}: links must be (master variable, copy) pairs of "
                             f"single variables, got {_named(link)}")
        master, copy = link
        if not declared_in(copy, sub.model):
            raise InputError(f"subproblem {k}: the copy {copy.name!r} is not a variable of its "
                             "model")
        if copy.fixed:
            raise InputError(f"subproblem {k}: the copy {copy.name!r} is fixed; unfix it (its "
                             "link row sets it to the master's value at each point)")
        if declared_in(master, sub.model):
            raise InputError(f"subproblem {k}: the master variable {master.name!r} belongs to "
                             "the subproblem's model")
    if sub.estimate is not None:
        if not isinstance(sub.estimate, VarData):
            raise InputError(f"subproblem {k}: estimate must be a master variable")
        if sub.estimate.lb is None:
            raise InputError(f"subproblem {k}: give the estimate {sub.estimate.name!r} a lower "
                             "bound (a bound on the subproblem's optimum, 0 for nonnegative "
                             "costs); without one SCIP calls the master unbounded")


def _named(link: Any) -> str:
    """A link as an error names it: its variables by name (a Var's repr is its address)."""
    if isinstance(link, (tuple, list)):
        return "(" + ", ".join(_named(part) for part in link) + ")"
    return repr(link.name) if isinstance(link, VarData) else repr(link)


def _lp_solver(solver: Any) -> str:
    """The subproblems' LP solver, "highs" or "scip" in any case ("HiGHS" skipped HiGHS's
    persistent fast path and solved each subproblem through `solve`)."""
    name = solver.lower() if isinstance(solver, str) else None
    if name not in ("highs", "scip"):
        raise InputError(f"BendersCuts solver must be 'highs' or 'scip', got {solver!r}")
    return name
