"""Why an `.mps`/`.lp` file's model is infeasible: an irreducible infeasible subsystem by
row and column names, as `coplug.plugins.iis` finds one for a Pyomo model.

SCIP reads the file and its IIS finder (`iis/removebounds` on) proposes a subsystem; HiGHS
reads the same file and checks it: every other row freed, every other bound dropped
(integrality kept, an integer column's 0..1 kept as its domain), the subsystem must be
infeasible, and a deletion filter (one HiGHS solve per member, up to `check_limit`)
leaves only members it needs. A proposal that fails the check is asked for again with
every bound kept (SCIP's bound removal once called an empty subsystem infeasible).
HiGHS reads linear models only; a file with nonlinear rows is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pyomo.common.tee import capture_output

from coplug.plugins.errors import InputError, SolverError
from coplug.plugins.files import checked_model_path

Member = tuple[str, str | None]  # (row name, None) or (column name, "lower" | "upper")
_INFINITE = 1e20


@dataclass
class FileInfeasibleSubsystem:
    """Rows and column bounds of the file's model that cannot hold together."""

    rows: list[str]
    bounds: list[tuple[str, str, float]]  # (column, "lower" | "upper", value)
    irreducible: bool | None  # None: more members than check_limit, not made irreducible
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows) + len(self.bounds)

    def __str__(self) -> str:
        state = ("checked by highs: infeasible, feasible without any one of them"
                 if self.irreducible else
                 "infeasible by highs; too large to check that each one is needed")
        lines = [f"{len(self.rows)} row(s) and {len(self.bounds)} bound(s) that cannot hold "
                 f"together ({state}):"]
        lines += [f"  row {name}" for name in self.rows]
        lines += [f"  bound {col} {'>=' if side == 'lower' else '<='} {value:g}"
                  for col, side, value in self.bounds]
        return "\n".join(lines)


def explain_infeasible_file(path: str | Path, time_limit: float | None = None,
                            check_limit: int = 60) -> FileInfeasibleSubsystem:
    """An irreducible infeasible subsystem of the model in `path`, checked by HiGHS;
    InputError when the model is feasible."""
    if not isinstance(check_limit, int) or isinstance(check_limit, bool) or check_limit < 0:
        raise InputError(f"check_limit must be an integer >= 0, got {check_limit!r}")
    path = checked_model_path(path)
    highs = _Highs(path)
    if not highs.infeasible():
        raise InputError(f"{path.name} is feasible (HiGHS found a point): no infeasible "
                         f"subsystem")
    notes = []
    for remove_bounds in (True, False):
        members = _scip_iis(path, remove_bounds, time_limit, highs)
        highs.keep_only(members)
        if highs.infeasible():
            irreducible = None
            if len(members) <= check_limit:
                members = highs.deletion_filter(members)
                irreducible = True
            return highs.subsystem(members, irreducible, notes)
        notes.append(f"SCIP's subsystem with{'' if remove_bounds else 'out'} bound removal "
                     f"({len(members)} members) was feasible for HiGHS")
    raise SolverError(f"no checked infeasible subsystem: {'; '.join(notes)}")


def _scip_iis(path: Path, remove_bounds: bool, time_limit: float | None,
              highs: _Highs) -> list[Member]:
    """SCIP's IIS of the file as rows and the column bounds HiGHS's model has finite."""
    import pyscipopt

    scip = pyscipopt.Model()
    scip.hideOutput()
    try:
        scip.readProblem(str(path))
    except Exception as exc:
        raise InputError(f"SCIP cannot read {path.name}: {exc}") from exc
    scip.setParam("iis/removebounds", remove_bounds)
    scip.setParam("iis/silent", True)
    if time_limit is not None:
        scip.setParam("iis/time", time_limit)
    sub = scip.generateIIS().getSubscip()
    members: list[Member] = [(con.name, None) for con in sub.getConss()]
    for var in sub.getVars():
        for side, value in (("lower", var.getLbOriginal()), ("upper", var.getUbOriginal())):
            if abs(value) < _INFINITE and highs.has_bound(var.name, side):
                members.append((var.name, side))
    return members


class _Highs:
    """The file's model in HiGHS, with rows and bounds switched on and off for checks."""

    def __init__(self, path: Path) -> None:
        import highspy
        import numpy as np

        with capture_output(capture_fd=True):  # HiGHS prints its banner on construction
            self.highs = highspy.Highs()
            self.highs.setOptionValue("output_flag", False)
            status = self.highs.readModel(str(path))
        if status == highspy.HighsStatus.kError:
            raise InputError(f"HiGHS cannot read {path.name} (nonlinear rows?): load it into "
                             f"Pyomo and use coplug.plugins.explain_infeasible")
        lp = self.highs.getLp()
        self.inf = highspy.kHighsInf
        self.rows = {name: k for k, name in enumerate(lp.row_names_)}
        self.cols = {name: k for k, name in enumerate(lp.col_names_)}
        self.row_bounds = list(zip(lp.row_lower_, lp.row_upper_, strict=True))
        self.col_bounds = list(zip(lp.col_lower_, lp.col_upper_, strict=True))
        integer = [int(t) != 0 for t in lp.integrality_] or [False] * lp.num_col_
        self.domain = [k for k, (lo, hi) in enumerate(self.col_bounds)
                       if integer[k] and lo == 0 and hi == 1]  # binaries: 0..1 is the domain
        self.highs.changeColsCost(lp.num_col_, np.arange(lp.num_col_, dtype=np.int32),
                                  np.zeros(lp.num_col_))
        self.highs.clearSolver()

    def has_bound(self, col: str, side: str) -> bool:
        """Whether `col` has that bound finite in the file (and is no binary)."""
        k = self.cols.get(col)
        if k is None or k in self.domain:
            return False
        value = self.col_bounds[k][0 if side == "lower" else 1]
        return abs(value) < self.inf

    def infeasible(self) -> bool:
        """Run HiGHS on the model as switched now; True when it is infeasible."""
        import highspy

        self.highs.clearSolver()
        self.highs.run()
        status = self.highs.getModelStatus()
        if status in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kModelEmpty):
            return False
        if status == highspy.HighsModelStatus.kInfeasible:
            return True
        raise SolverError(f"HiGHS could not decide the subsystem "
                          f"({self.highs.modelStatusToString(status)})")

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

    def deletion_filter(self, members: list[Member]) -> list[Member]:
        """Drop each member whose absence leaves the rest infeasible."""
        needed = list(members)
        for member in members:
            rest = [m for m in needed if m != member]
            self.keep_only(rest)
            if self.infeasible():
                needed = rest
        self.keep_only(needed)
        return needed

    def subsystem(self, members: list[Member], irreducible: bool | None,
                  notes: list[str]) -> FileInfeasibleSubsystem:
        """The members as row names and (column, side, value) bounds, in file order."""
        members = sorted(members, key=lambda m: (m[1] is not None, self.rows.get(m[0], 0)
                                                 if m[1] is None else self.cols[m[0]]))
        rows = [name for name, side in members if side is None]
        bounds = [(name, side, float(self.col_bounds[self.cols[name]][
            0 if side == "lower" else 1])) for name, side in members if side is not None]
        return FileInfeasibleSubsystem(rows, bounds, irreducible, notes)

    def _row(self, k: int, on: bool) -> None:
        """Give row k its sides, or free it."""
        lo, hi = self.row_bounds[k] if on else (-self.inf, self.inf)
        self.highs.changeRowBounds(k, lo, hi)

    def _col(self, k: int, lower: bool, upper: bool) -> None:
        """Give column k the bounds kept, dropping the others."""
        lo, hi = self.col_bounds[k]
        self.highs.changeColBounds(k, lo if lower else -self.inf, hi if upper else self.inf)

