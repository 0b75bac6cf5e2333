"""Why an `.mps`/`.lp` file's model is infeasible: an irreducible infeasible subsystem by
row and column names, as `coplug.plugins.iis` finds one for a Pyomo model.

HiGHS reads the file, and the Farkas certificate of its LP relaxation (`iis_farkas`)
proposes the rows with a nonzero multiplier and the finite bounds of the columns its
activity reaches. Where there is none, SCIP reads the file and its IIS finder proposes the
rows of a subsystem (with bounds kept: SCIP's own bound removal ran for ever on a 6-variable
model), together with the finite bounds of the columns in those rows; past `check_limit`
members, halving chunks of them are dropped while the rest stays infeasible. HiGHS checks
the proposal:
every other row freed, every other bound dropped (integrality kept, an integer column's
0..1 kept as its domain: the answer's notes name those of its rows), it must be
infeasible (else the whole model is filtered instead), and a deletion filter (one solve
per member, up to `check_limit`) leaves only members it needs. A check HiGHS has not
decided in 10 s (free integers left after bounds are dropped) goes to SCIP, on HiGHS's
copy written out. HiGHS reads linear models only; a file with
nonlinear rows is refused by name, as is one whose rows (or columns) share a name. A
column no value meets (bounds crossed, or no integer between them) is the answer on its
own, as in `iis`: SCIP's reading rounds such bounds and its IIS finder never sees them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from coplug.plugins.bar import progress_bar
from coplug.plugins.errors import InputError, SolverError
from coplug.plugins.file_reading import checked_text, names_in_utf8
from coplug.plugins.files import checked_model_path, highs_refuse_nan, scip_read
from coplug.plugins.highs_backend import user_interrupt
from coplug.plugins.highs_file_read import highs_read
from coplug.plugins.highs_interface import new_highs
from coplug.plugins.highs_rows import RowView
from coplug.plugins.iis import no_value_meets
from coplug.plugins.iis_farkas import ray_support, relax_integrality
from coplug.plugins.interrupts import generate_iis, sigint_cancels
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.serial import one_solve_at_a_time
from coplug.plugins.value_equality import ValueEquality

if TYPE_CHECKING:
    import highspy

Member = tuple[str, str | None]  # (row name, None) or (column name, "lower" | "upper")
# A check HiGHS has not decided by then keeps its member (free integers left after bounds
# are dropped can make its branch and bound run for ever).
_CHECK_SECONDS = 10.0


@dataclass(eq=False)
class FileInfeasibleSubsystem(ValueEquality):
    """Rows and column bounds of the file's model that cannot hold together."""

    rows: list[str]
    bounds: list[tuple[str, str, float]]  # (column, "lower" | "upper", value)
    irreducible: bool | None  # None: past check_limit; False: some checks undecided
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows) + len(self.bounds)

    def __str__(self) -> str:
        state = {True: "checked by highs: infeasible, feasible without any one of them",
                 False: "infeasible by highs; some members' checks stayed undecided",
                 None: "infeasible by highs; too large to check that each one is needed"
                 }[self.irreducible]
        lines = [f"{len(self.rows)} row(s) and {len(self.bounds)} bound(s) that cannot hold "
                 f"together ({state}):"]
        lines += [f"  row {name}" for name in self.rows]
        lines += [f"  bound {col} {'>=' if side == 'lower' else '<='} {float(value)!r}"
                  for col, side, value in self.bounds]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def explain_infeasible_file(path: str | Path, time_limit: float | None = None,
                            check_limit: int = 60) -> FileInfeasibleSubsystem:
    """An irreducible infeasible subsystem of the model in `path`, checked by HiGHS;
    InputError when the model is feasible."""
    with one_solve_at_a_time():  # threads take turns (see coplug.plugins.serial)
        from coplug.formulations.checks import check_count  # imports coplug.plugins

        check_limit = check_count(check_limit, "check_limit", 0)
        time_limit = checked_time_limit(time_limit)
        path = checked_model_path(path)
        with names_in_utf8(path):
            return _explained_file(path, time_limit, check_limit)


def _explained_file(path: Path, time_limit: float | None, check_limit: int
                    ) -> FileInfeasibleSubsystem:
    """`explain_infeasible_file` once its arguments are checked."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    highs = _Highs(path)
    conflict = highs.bound_conflict()
    if conflict:
        return highs.subsystem(conflict, True, ["no value of the column meets its bounds"])
    seconds = _CHECK_SECONDS if time_limit is None else min(_CHECK_SECONDS, time_limit)
    verdict = highs.infeasible(seconds)
    if verdict is False:
        raise InputError(f"{path.name} is feasible (HiGHS found a point): no infeasible "
                         f"subsystem")
    if verdict is None:
        raise SolverError(f"neither HiGHS nor SCIP decided within {seconds:g} s whether "
                          f"{path.name} is feasible; give a longer time_limit")
    notes: list[str] = []
    members = highs.farkas_members(time_limit)
    if members is not None:
        highs.keep_only(members)
        if not highs.infeasible():
            notes.append(f"HiGHS's Farkas certificate ({len(members)} members) was not "
                         f"infeasible with integrality kept")
            members = None
    if members is None:
        members = _scip_iis(path, time_limit, highs)
        highs.keep_only(members)
        if not highs.infeasible():
            notes.append(f"SCIP's subsystem ({len(members)} members) was not infeasible "
                         f"for HiGHS; the whole model was filtered instead")
            members = highs.all_members()
            highs.keep_only(members)
            if not highs.infeasible():
                raise SolverError(f"no checked infeasible subsystem: {notes[-1]}, which "
                                  f"HiGHS found feasible too")
    if check_limit and len(members) > check_limit:
        members = highs.shrink(members, check_limit, deadline)
    decided = not highs.undecided
    if len(members) <= check_limit and not highs.timed_out and not highs.filtered:
        members, decided = highs.deletion_filter(members, deadline)
    if highs.timed_out:
        notes.append("the time limit ran out before the filter finished: the subsystem is "
                     "infeasible, and may keep members it does not need")
    if highs.timed_out or (len(members) > check_limit and not highs.filtered):
        return highs.subsystem(members, None, notes)
    if not decided:
        notes.append("some checks stayed undecided (HiGHS and SCIP, 10 s each); those "
                     "members were kept")
    return highs.subsystem(members, decided, notes)


def _scip_iis(path: Path, time_limit: float | None, highs: _Highs) -> list[Member]:
    """SCIP's IIS of the file (its rows), with the finite bounds of the columns in them:
    SCIP's own bound removal can run for ever, so the deletion filter drops bounds."""
    scip = scip_read(path)
    scip.setParam("iis/removebounds", False)
    scip.setParam("iis/silent", True)
    if time_limit is not None:
        scip.setParam("iis/time", time_limit)
    rows = [con.name for con in generate_iis(scip).getSubscip().getConss()
            if con.name in highs.rows]  # not SCIP's own, such as a quadratic objective's row
    return [(name, None) for name in rows] + highs.bounds_of(rows)


def _check_seconds(deadline: float | None) -> float:
    """What one filter check may take: `_CHECK_SECONDS`, less where `deadline` is nearer."""
    if deadline is None:
        return _CHECK_SECONDS
    return min(_CHECK_SECONDS, deadline - time.perf_counter())


class _Highs:
    """The file's model in HiGHS, with rows and bounds switched on and off for checks."""

    def __init__(self, path: Path) -> None:
        import highspy
        import numpy as np

        text = checked_text(path)
        self.highs = new_highs()
        status = highs_read(self.highs, path, text, tee=False)
        self.highs.setOptionValue("output_flag", False)
        self.highs.HandleUserInterrupt = True  # its interrupt callbacks check cancelSolve's flag
        self.timed_out = False  # a filter stopped at the time limit
        if status == highspy.HighsStatus.kError:
            raise InputError(f"HiGHS cannot read {path.name} (rerun solve_file with "
                             "solver='highs', tee=True for its reader's log)")
        view = RowView(self.highs)  # the objective's misreadings (check_highs_read) do not
        # touch the rows and bounds an IIS is made of
        highs_refuse_nan(self.highs, path, view)  # HiGHS would check a NaN row as read
        lp = view.lp
        _unique_names(path, "row", lp.row_names_)
        _unique_names(path, "column", lp.col_names_)
        self.inf = highspy.kHighsInf
        self.rows = {name: k for k, name in enumerate(lp.row_names_)}
        self.cols = {name: k for k, name in enumerate(lp.col_names_)}
        self.row_bounds = list(zip(lp.row_lower_, lp.row_upper_, strict=True))
        self.col_bounds = list(zip(lp.col_lower_, lp.col_upper_, strict=True))
        _refuse_semicontinuous(path, lp)
        integer = [int(t) != 0 for t in lp.integrality_] or [False] * lp.num_col_
        self.domain = {k for k, (lo, hi) in enumerate(self.col_bounds)
                       if integer[k] and lo == 0 and hi == 1}  # binaries: 0..1 is the domain
        self.integer = integer
        self.matrix = view.matrix
        self.highs.changeColsCost(lp.num_col_, np.arange(lp.num_col_, dtype=np.int32),
                                  np.zeros(lp.num_col_))
        if self.highs.getModel().hessian_.dim_:  # feasibility only: a kept nonconvex Hessian
            self.highs.passHessian(highspy.HighsHessian())  # left every check undecided
        self.filtered = False  # `shrink` ended with a pass of one-member chunks
        self.undecided = False  # a check of that pass stayed undecided
        self.highs.setOptionValue("time_limit", _CHECK_SECONDS)
        self.highs.clearSolver()

    def bounds_of(self, rows: list[str]) -> list[Member]:
        """The finite bounds (binaries' 0..1 aside) of the columns in `rows`, and of any
        column whose bounds cross."""
        picked = {self.rows[name] for name in rows if name in self.rows}
        cols = {int(j) for i in picked
                for j in self.matrix.indices[self.matrix.indptr[i]:self.matrix.indptr[i + 1]]}
        cols |= {k for k, (lo, hi) in enumerate(self.col_bounds) if lo > hi}
        return [(name, side) for name, k in self.cols.items()
                if k in cols and k not in self.domain
                for side, value in zip(("lower", "upper"), self.col_bounds[k], strict=True)
                if abs(value) < self.inf]

    def bound_conflict(self) -> list[Member]:
        """The bounds of the first column no value meets (lower above upper, or no integer
        between them for an integer column), which SCIP's reading or presolve removes before
        its IIS finder sees them; [] when every column has a value."""
        for name, k in self.cols.items():
            lo, hi = self.col_bounds[k]
            if math.isfinite(lo) and math.isfinite(hi) and no_value_meets(lo, hi,
                                                                          self.integer[k]):
                return [(name, side) for side, value in zip(("lower", "upper"), (lo, hi),
                                                            strict=True)
                        if abs(value) < self.inf]
        return []

    def all_members(self) -> list[Member]:
        """Every row and every finite bound of the model."""
        return [(name, None) for name in self.rows] + self.bounds_of(list(self.rows))

    def infeasible(self, seconds: float = _CHECK_SECONDS) -> bool | None:
        """Run HiGHS on the model as switched now, for at most `seconds`: True when it is
        infeasible, False when feasible; past them (free integers can make it search for
        ever), or stopped on its numerics ("Solve error" on a row near 1e10), SCIP decides,
        None when neither does. Ctrl-C stops HiGHS and raises KeyboardInterrupt (HiGHS's
        stop read as a "Solve error" before)."""
        import highspy

        self.highs.setOptionValue("time_limit", float(seconds))
        self.highs.clearSolver()
        cancel, interrupted = user_interrupt(self.highs)
        with sigint_cancels(cancel):
            self.highs.run()
        self.highs.setOptionValue("time_limit", _CHECK_SECONDS)
        if interrupted():
            raise KeyboardInterrupt
        status = self.highs.getModelStatus()
        if status in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kModelEmpty):
            return False
        if status == highspy.HighsModelStatus.kInfeasible:
            return True
        return self._scip_verdict(seconds)

    def _scip_verdict(self, seconds: float) -> bool | None:
        """SCIP's verdict on the model as switched now (HiGHS's own copy, written out), for
        a check HiGHS left undecided: SCIP settled such free-integer systems, and a row
        near 1e10 HiGHS stopped on, at once. It goes through `solve_file`, whose exact
        check of large all-integer rows SCIP's tolerance needs (alone, SCIP took a point 1
        off a side of 1.1e10 as feasible)."""
        from coplug.plugins.file_reading import native_name, solver_temp_folder
        from coplug.plugins.files import solve_file
        from coplug.plugins.results import Status

        with solver_temp_folder() as folder:
            path = folder / "subsystem.mps"
            self.highs.writeModel(native_name(path))
            result = solve_file(path, solver="scip", time_limit=float(seconds))
        if result.status is Status.INFEASIBLE:
            return True
        return False if result.status in (Status.OPTIMAL, Status.FEASIBLE) else None

    def farkas_members(self, time_limit: float | None) -> list[Member] | None:
        """HiGHS's Farkas certificate of the model's LP relaxation as members: the rows with a
        nonzero multiplier and the finite bounds (binaries' 0..1 aside) of the columns its
        activity reaches; None where HiGHS gives no ray. Integrality, presolve and the check
        time limit are put back after."""
        import highspy
        import numpy as np

        columns = np.arange(len(self.cols), dtype=np.int32)
        kinds = [highspy.HighsVarType(int(t)) for t in self.highs.getLp().integrality_]
        try:
            relax_integrality(self.highs)
            self.highs.clearSolver()
            support = ray_support(self.highs, time_limit)
        finally:
            if kinds:
                self.highs.changeColsIntegrality(columns.size, columns, np.array(kinds))
            self.highs.setOptionValue("presolve", "choose")
            self.highs.setOptionValue("time_limit", _CHECK_SECONDS)
            self.highs.clearSolver()
        if support is None:
            return None
        rows, reached = support
        row_names, col_names = list(self.rows), list(self.cols)
        return [(row_names[k], None) for k in rows] + [
            (col_names[k], side) for k in sorted(reached) if k not in self.domain
            for side, value in zip(("lower", "upper"), self.col_bounds[k], strict=True)
            if abs(value) < self.inf]

    def shrink(self, members: list[Member], limit: int, deadline: float | None
               ) -> list[Member]:
        """While more than `limit` members remain, drop chunks of them (halving in size) whose
        absence leaves the rest infeasible: fewer checks than one per member. Past
        `deadline` the rest are kept (`timed_out`). A finished pass of one-member chunks is
        a deletion filter: its members are irreducible where its checks were decided
        (`filtered`, `undecided`; 81 such members had been called too many to check)."""
        size = len(members) // 2
        with progress_bar(desc="explain_infeasible_file", unit="check", disable=None,
                          leave=False) as bar:
            while size >= 1 and len(members) > limit and not self.timed_out:
                kept: list[Member] = []
                self.undecided = False
                for start in range(0, len(members), size):
                    bar.update()
                    self.keep_only(kept + members[start + size:])
                    if not self._still_infeasible(deadline):
                        kept += members[start:start + size]
                members, size = kept, size // 2
                self.filtered = size == 0 and not self.timed_out
        self.keep_only(members)
        return members

    def keep_only(self, members: list[Member]) -> None:
        """Switch the model to hold only `members` (binaries keep their 0..1)."""
        rows = {name for name, side in members if side is None}
        missing = [name for name in rows if name not in self.rows]
        if missing:
            raise SolverError(f"SCIP's subsystem names rows HiGHS does not read: {missing[:3]}")
        for name, k in self.rows.items():
            self._row(k, name in rows)
        kept = {(name, side) for name, side in members if side is not None}
        for name, k in self.cols.items():
            if k in self.domain:
                continue
            self._col(k, (name, "lower") in kept, (name, "upper") in kept)

    def _still_infeasible(self, deadline: float | None) -> bool:
        """Whether the model as switched now is infeasible (undecided: no); past `deadline`
        nothing is solved and the answer is no (`timed_out`)."""
        left = _check_seconds(deadline)
        if left <= 0:
            self.timed_out = True
            return False
        verdict = self.infeasible(left)
        self.undecided = self.undecided or verdict is None
        return bool(verdict)

    def deletion_filter(self, members: list[Member], deadline: float | None
                        ) -> tuple[list[Member], bool]:
        """Drop each member whose absence leaves the rest infeasible; also whether every
        check was decided (an undecided one keeps its member)."""
        needed, decided = list(members), True
        for member in progress_bar(members, desc="explain_infeasible_file", unit="check",
                                   disable=None, leave=False):
            left = _check_seconds(deadline)
            if left <= 0:
                self.timed_out = True
                break
            rest = [m for m in needed if m != member]
            self.keep_only(rest)
            verdict = self.infeasible(left)
            decided = decided and verdict is not None
            if verdict:
                needed = rest
        self.keep_only(needed)
        return needed, decided

    def subsystem(self, members: list[Member], irreducible: bool | None,
                  notes: list[str]) -> FileInfeasibleSubsystem:
        """The members as row names and (column, side, value) bounds, in file order."""
        members = sorted(members, key=lambda m: (m[1] is not None, self.rows.get(m[0], 0)
                                                 if m[1] is None else self.cols[m[0]]))
        rows = [name for name, side in members if side is None]
        bounds = [(name, side, float(self.col_bounds[self.cols[name]][
            0 if side == "lower" else 1])) for name, side in members if side is not None]
        return FileInfeasibleSubsystem(rows, bounds, irreducible, notes + self._domain_note(rows))

    def _domain_note(self, rows: list[str]) -> list[str]:
        """A note naming the integer columns of `rows` held in 0..1 (read as binaries, their
        0..1 is kept as the domain and never listed, yet the answer may need it)."""
        picked = {self.rows[name] for name in rows}
        cols = sorted({int(j) for i in picked
                       for j in self.matrix.indices[self.matrix.indptr[i]:
                                                    self.matrix.indptr[i + 1]]}
                      & self.domain)
        if not cols:
            return []
        names = list(self.cols)
        shown = ", ".join(names[k] for k in cols[:5])
        more = f" and {len(cols) - 5} more" if len(cols) > 5 else ""
        return [f"integer columns held in 0..1 (their domain, as binaries): {shown}{more}"]

    def _row(self, k: int, on: bool) -> None:
        """Give row k its sides, or free it."""
        lo, hi = self.row_bounds[k] if on else (-self.inf, self.inf)
        self.highs.changeRowBounds(k, lo, hi)

    def _col(self, k: int, lower: bool, upper: bool) -> None:
        """Give column k the bounds kept, dropping the others."""
        lo, hi = self.col_bounds[k]
        self.highs.changeColBounds(k, lo if lower else -self.inf, hi if upper else self.inf)



def _refuse_semicontinuous(path: Path, lp: highspy.HighsLp) -> None:
    """An InputError naming a semicontinuous or semi-integer column (0, or a value within
    its bounds): the subsystem's bound checks read its bounds as the whole domain and named
    a feasible file's [5.2, 5.8] as a conflict."""
    import highspy

    kinds = {int(highspy.HighsVarType.kSemiContinuous): "semicontinuous",
             int(highspy.HighsVarType.kSemiInteger): "semi-integer"}
    for k, kind in enumerate(lp.integrality_):
        if int(kind) in kinds:
            raise InputError(f"{path.name}: column {lp.col_names_[k]!r} is {kinds[int(kind)]}; "
                             "explain_infeasible_file takes continuous and integer columns "
                             "(write it as a binary switch and a big-M row to explain it)")


def _unique_names(path: Path, kind: str, names: list[str]) -> None:
    """Refuse a file two rows (or columns) of which share a name: the subsystem is named,
    and checks that switch one of them leave the other on (an answer scipy found
    feasible)."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    twice = [name for name, count in seen.items() if count > 1]
    if twice:
        raise InputError(f"{kind} name {twice[0]!r} is given to {seen[twice[0]]} {kind}s of "
                         f"{path.name}: the subsystem names {kind}s, so each needs its own "
                         f"name")
