"""Solve MPS/LP files directly with SCIP or HiGHS (Pyomo cannot read these formats)."""

from __future__ import annotations

import functools
import math
import sys
import time
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from coplug.plugins import bridge
from coplug.plugins.arguments import check_flag
from coplug.plugins.bridge import (
    _set_scip_params,
    checked_tee,
    merged_options,
    one_time_limit,
    refuse_sibling_keywords,
    scip_result,
)
from coplug.plugins.errors import (
    InputError,
    SolverError,
    SolverNotAvailableError,
    UnsupportedModelError,
)
from coplug.plugins.file_reading import checked_text, names_in_utf8, native_name, write_fd1
from coplug.plugins.highs_backend import (
    beyond_default_gap,
    flag_duality_gap,
    guard_verdict,
    highs_options,
    mip_tolerance,
    objective_scale,
    qp_ray,
    quadratic_ray,
    read_hessian_convex,
    refuse_mip_objective_bound,
    solution_limit_status,
    threads_option,
    unbounded_qp,
    user_interrupt,
)
from coplug.plugins.highs_file_read import check_highs_read, highs_read
from coplug.plugins.highs_interface import new_highs, printing_solver
from coplug.plugins.highs_rows import RowView, highs_integral_rows, solution_violations
from coplug.plugins.integral_rows import (
    check_integral_rows,
    flag_fractional,
    flag_violations,
    optimize_checked,
    record_first_solve,
)
from coplug.plugins.interrupts import capture_to_file, sigint_cancels
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.modeldata import SOLVER_INFINITY
from coplug.plugins.nonlinear_optimum import check_nonlinear_optimum
from coplug.plugins.progress import Progress
from coplug.plugins.results import OBJECTIVE_LIMIT, Result, Status
from coplug.plugins.row_scaling import scale_highs_rows
from coplug.plugins.scip_file_read import (
    SCIP_VERBLEVEL_FULL,
    check_scip_names,
    check_scip_read,
    enforce_user_cuts,
    reader_columns,
    refuse_scip_ignored,
    scip_readable,
)
from coplug.plugins.scip_lp_read import check_scip_lp_text
from coplug.plugins.serial import one_solve_at_a_time
from coplug.plugins.varmap import snap

_SUFFIXES = (".mps", ".lp", ".mps.gz", ".lp.gz")

_HIGHS_STATUS = {
    "Optimal": Status.OPTIMAL,
    "Infeasible": Status.INFEASIBLE,
    "Unbounded": Status.UNBOUNDED,
    "Primal infeasible or unbounded": Status.INFEASIBLE_OR_UNBOUNDED,
    "Time limit reached": Status.TIME_LIMIT,
    "Iteration limit reached": Status.ITERATION_LIMIT,
    "Memory limit reached": Status.MEMORY_LIMIT,
    "Interrupted by user": Status.INTERRUPTED,
}


# `solve`'s keywords for Pyomo models that `solve_file` does not take, and why.
_FILE_SIBLINGS = {
    "plugins": "plugins work on Pyomo models (solve); progress=True draws the Progress line",
    "warmstart": "a file carries no start values; solve the Pyomo model with solve()",
    "mip_duals": "fixed-model duals are for Pyomo models (solve)",
}


def solve_file(
    path: str | Path, solver: str = "scip", time_limit: float | None = None, tee: bool = False,
    options: Mapping[str, Any] | None = None, progress: bool = False, **params: Any,
) -> Result:
    """Read an MPS or LP file into the solver and solve it (`tee`: show the solver's log,
    `progress`: a live line as the `Progress` plugin draws it); native options as keywords
    or, also those named like these arguments, in `options`."""
    with one_solve_at_a_time():  # threads take turns (see coplug.plugins.serial)
        if not isinstance(solver, str):
            raise InputError(f"solver must be 'scip' or 'highs', got {solver!r}")
        path = checked_model_path(path)
        time_limit = checked_time_limit(time_limit)
        refuse_sibling_keywords(params, "solve_file", _FILE_SIBLINGS)
        params = merged_options(options, params)
        time_limit, params = one_time_limit(solver, time_limit, params)
        progress = check_flag(progress, "progress")
        tee = checked_tee(tee)
        line = Progress() if progress else None
        try:
            with names_in_utf8(path):
                if solver.lower() == "scip":
                    return _solve_file_scip(path, time_limit, params, tee, line)
                if solver.lower() == "highs":
                    return _solve_file_highs(path, time_limit, params, tee, line)
        finally:
            if line is not None:
                line.close()
        raise SolverNotAvailableError(f"files solve with 'scip' or 'highs', not {solver!r}")


def checked_model_path(path: str | PathLike) -> Path:
    """`path` as an existing .mps/.lp file (or its lower-case .gz), else an InputError."""
    if not isinstance(path, (str, PathLike)):
        raise InputError(f"path must be the name of an .mps or .lp file, got {path!r}")
    path = Path(path).expanduser()
    if path.is_dir():
        raise InputError(f"{path} is a directory, not an .mps or .lp file")
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    if not path.name.lower().endswith(_SUFFIXES):
        raise InputError(f"{path.name}: expected an .mps or .lp file")
    if path.name.lower().endswith(".gz") and not path.name.endswith(".gz"):
        raise InputError(f"{path.name}: neither solver reads a compressed file unless its name "
                         "ends in lower-case .gz")
    return path


def scip_read(path: Path, tee: bool = False) -> Any:
    """A PySCIPOpt model read from `path` (`scip_read_text`)."""
    return scip_read_text(path, tee)[0]


def scip_read_text(path: Path, tee: bool = False) -> tuple[Any, bytes]:
    """A PySCIPOpt model read from `path`, and the file's text; a file SCIP cannot read is
    an InputError quoting its reader's first error line ("Syntax error in line 4 (']')"),
    not SCIP's log."""
    import io

    import pyscipopt

    text = checked_text(path)
    check_scip_names(path, text)
    check_scip_lp_text(path, text)
    scip = pyscipopt.Model()
    scip.setIntParam("display/verblevel", SCIP_VERBLEVEL_FULL)  # where it names dropped entries
    log = io.StringIO()
    try:  # through a file: SCIP's reader held Python's lock printing into a full pipe
        with capture_to_file() as log, scip_readable(path, text) as readable:
            scip.readProblem(native_name(readable))
    except Exception as exc:
        said = next((line.split("ERROR: ", 1)[1].strip() for line in log.getvalue().splitlines()
                     if "ERROR: " in line), str(exc))
        raise InputError(f"SCIP cannot read {path.name}: {said}") from exc
    finally:
        if tee:  # the reader's messages are the caller's to see
            write_fd1(log.getvalue())
        scip.resetParam("display/verblevel")
        scip.hideOutput(quiet=not tee)
    refuse_scip_ignored(path, log.getvalue())
    check_scip_read(scip, path, text)
    enforce_user_cuts(scip, path, text)
    _scip_refuse_nan(scip, path, text)
    return scip, text


def _scip_refuse_nan(scip: Any, path: Path, text: bytes) -> None:
    """An InputError naming the first NaN SCIP read from `path` (a bound, an objective
    coefficient or offset, a linear row's coefficient or side): SCIP looped past its time
    limit on a NaN cost and called a model with a NaN side optimal without that row."""
    def nan(what: str) -> InputError:
        return InputError(f"{path.name}: {what} is nan")

    if _spells_no_nan(text):
        return
    if math.isnan(scip.getObjoffset(original=True)):
        raise nan("the objective's constant")
    for var in scip.getVars():
        if math.isnan(var.getObj()):
            raise nan(f"the objective coefficient of {var.name!r}")
        if math.isnan(var.getLbOriginal()) or math.isnan(var.getUbOriginal()):
            raise nan(f"a bound of {var.name!r}")
    for cons in scip.getConss():
        if cons.getConshdlrName() != "linear":
            continue
        if math.isnan(scip.getLhs(cons)) or math.isnan(scip.getRhs(cons)):
            raise nan(f"a side of row {cons.name!r}")
        coefs = scip.getValsLinear(cons)
        if any(map(math.isnan, coefs.values())):
            name = next(name for name, coef in coefs.items() if math.isnan(coef))
            raise nan(f"row {cons.name!r}: the coefficient of {name!r}")


def _spells_no_nan(text: bytes) -> bool:
    """Whether the file's text (a .gz file's unpacked) has no "nan" in any case anywhere:
    its numbers are literals, so SCIP read no NaN, and walking every row's coefficients
    through PySCIPOpt cost as much as SCIP's read and solve (0.81 of 1.72 s on 80,000
    rows)."""
    return text.lower().find(b"nan") < 0  # a regex took a third of SCIP's read


def highs_refuse_nan(highs: Any, path: Path, view: RowView) -> None:
    """An InputError naming the first NaN HiGHS read from `path` (HiGHS takes a NaN cost or
    coefficient as read: it called a NaN coefficient's model optimal at a wrong -3), or an
    objective coefficient at its infinity."""
    import numpy as np

    lp = view.lp

    def nan(what: str) -> InputError:
        return InputError(f"{path.name}: {what} is nan")

    def first_nan(values: Any) -> int | None:
        found = np.flatnonzero(np.isnan(np.asarray(values, dtype=float)))
        return int(found[0]) if found.size else None

    def col(k: int) -> str:
        return repr(lp.col_names_[k]) if k < len(lp.col_names_) else f"column {k}"

    def row(k: int) -> str:
        return repr(lp.row_names_[k]) if k < len(lp.row_names_) else f"{k}"

    if math.isnan(lp.offset_):
        raise nan("the objective's constant")
    if (k := first_nan(lp.col_cost_)) is not None:
        raise nan(f"the objective coefficient of {col(k)}")
    for bounds in (lp.col_lower_, lp.col_upper_):
        if (k := first_nan(bounds)) is not None:
            raise nan(f"a bound of {col(k)}")
    for sides in (lp.row_lower_, lp.row_upper_):
        if (k := first_nan(sides)) is not None:
            raise nan(f"a side of row {row(k)}")
    matrix = view.matrix
    if (k := first_nan(matrix.data)) is not None:
        r = int(np.searchsorted(matrix.indptr, k, side="right")) - 1
        raise nan(f"row {row(r)}: the coefficient of {col(int(matrix.indices[k]))}")
    if first_nan(highs.getModel().hessian_.value_) is not None:
        raise nan("a quadratic objective coefficient")
    huge = np.flatnonzero(np.abs(np.asarray(lp.col_cost_, dtype=float)) >= SOLVER_INFINITY)
    if huge.size:  # HiGHS takes it as infinite: "optimal" -inf for a bounded -1e25 * x
        k = int(huge[0])
        raise InputError(f"{path.name}: the objective coefficient of {col(k)} is "
                         f"{lp.col_cost_[k]:g} as HiGHS reads it ({SOLVER_INFINITY:g} or "
                         "more is infinite to the solvers); rescale the objective")


def _solve_file_scip(path: Path, time_limit: float | None, params: dict[str, Any],
                     tee: bool, progress: Progress | None = None) -> Result:
    """SCIP reads and solves the file (`progress` draws its line)."""
    scip, text = scip_read_text(path, tee)
    if scip.getNVars() == 0:  # SCIP's LP reader takes some garbage as an empty problem
        raise InputError(f"{path.name} defines no variables: is it an MPS or LP model?")
    added = reader_columns(scip, path, text)
    _set_scip_params(scip, time_limit, params)
    if progress is not None:
        progress.attach(scip, None)
    rows, extra = optimize_checked(scip, params, functools.partial(bridge.optimize_scip, scip))
    result = scip_result(scip)
    record_first_solve(result, extra)
    if result.status is Status.INFEASIBLE_OR_UNBOUNDED:
        bridge.settle_infeasible_or_unbounded(scip, result)
    check_nonlinear_optimum(scip, result)
    check_integral_rows(scip, result, rows)
    if result.has_solution:
        best, variables = scip.getBestSol(), _file_variables(scip, added)
        names = [var.name for var in variables]
        _load_values(result, names, [scip.getSolVal(best, var) for var in variables],
                     [k for k, var in enumerate(variables)
                      if var.vtype() in ("BINARY", "INTEGER")], "SCIP", "numerics/feastol",
                     params)
    return result


def _file_variables(scip: Any, added: set[int]) -> list[Any]:
    """SCIP's variables less those its reader `added` (`reader_columns`: the file has no
    such variable; `check_scip_read` refuses a file naming a column as the epigraph's)."""
    return [var for var in scip.getVars() if var.ptr() not in added]


def _refuse_miqp(highs: Any, path: Path) -> None:
    """A quadratic objective beside integer columns, named as `solve` names it (HiGHS itself
    stopped with 'Not Set')."""
    import highspy

    model = highs.getModel()
    integer = any(kind != highspy.HighsVarType.kContinuous for kind in model.lp_.integrality_)
    if integer and any(value != 0 for value in model.hessian_.value_):
        raise UnsupportedModelError(f"HiGHS cannot take {path.name}'s quadratic objective with "
                                    "integer variables (MIQP); use solver='scip'")


def _refuse_nonconvex(highs: Any, path: Path) -> None:
    """A quadratic objective HiGHS cannot optimize (non-convex in its sense), named as
    `solve` names it: HiGHS answered "optimal" at a saddle point."""
    import highspy

    if not read_hessian_convex(highs):
        sense = "maximize" if highs.getModel().lp_.sense_ == highspy.ObjSense.kMaximize \
            else "minimize"
        raise UnsupportedModelError(f"HiGHS cannot {sense} {path.name}'s non-convex "
                                    "quadratic objective; use solver='scip'")


def _load_values(result: Result, names: list[str], values: list[float], integers: Any,
                 solver: str, option: str, params: Mapping[str, Any]) -> None:
    """`result.values` by name, integer columns (indices `integers`) within INTEGER_SNAP of
    a whole number made one, after the check that a loose tolerance `option` let none
    stray (`flag_fractional`)."""
    flag_fractional(result, ((names[k], values[k]) for k in integers), solver, option, params)
    whole = set(integers)
    result.values = {name: snap(value, k in whole)
                     for k, (name, value) in enumerate(zip(names, values, strict=True))}


def _solve_file_highs(path: Path, time_limit: float | None, params: dict[str, Any],
                      tee: bool, progress: Progress | None = None) -> Result:
    """HiGHS reads and solves the file (`progress` draws its line); a MIP stopped by a
    looser gap than HiGHS's default is `feasible`, as on the Pyomo path."""
    import highspy

    highs = new_highs()
    text = checked_text(path)
    # a warning is a model read all the same: Pyomo writes an integer without upper bound as
    # `UI BOUND x 10E20`, which HiGHS reads as infinite and warns about
    if highs_read(highs, path, text, tee) not in (highspy.HighsStatus.kOk,
                                                  highspy.HighsStatus.kWarning):
        raise InputError(f"HiGHS cannot read {path.name} (rerun with tee=True for its log)")
    if not tee:  # the console only: a `log_file` the caller names still gets the log
        highs.setOptionValue("log_to_console", False)
    check_highs_read(highs, path, text)
    if highs.getNumCol() == 0:  # HiGHS reads an empty file as a model it calls 'Empty'
        raise InputError(f"{path.name} defines no variables: is it an MPS or LP model?")
    _refuse_miqp(highs, path)
    _refuse_nonconvex(highs, path)
    if time_limit is not None:
        highs.setOptionValue("time_limit", float(time_limit))
    scaled = scale_highs_rows(highs)  # rows with huge coefficients: see row_scaling
    view = RowView(highs)  # the rows as read: the checks share one read of them
    highs_refuse_nan(highs, path, view)
    params = highs_options(params)
    for key, value in params.items():
        if highs.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise InputError(f"cannot set HiGHS option {key!r} to {value!r}")
    refuse_mip_objective_bound(highs, params)
    rows = highs_integral_rows(highs, mip_tolerance(highs, params), view)
    if progress is not None:
        progress.attach_highs(highs, {}, None)
    start = time.perf_counter()
    highs.HandleUserInterrupt = True  # its interrupt callbacks check cancelSolve's flag
    cancel, interrupted = user_interrupt(highs)
    shown = [sys.stdout] if tee else []
    with threads_option(params):
        with sigint_cancels(cancel), printing_solver(highs, shown):
            highs.run()
            scale = objective_scale(highs, params)
            if scale is not None and not interrupted():  # no answer on huge costs: scaled
                params = {**params, "user_objective_scale": scale}
                highs.setOptionValue("user_objective_scale", scale)
                highs.clearSolver()
                highs.run()
        _, status, extra = guard_verdict(
            highs, rows, params, time_limit, tee, start, None,
            lambda left, options: _rerun(highs, left, options, shown),
            lambda _: _HIGHS_STATUS.get(highs.modelStatusToString(highs.getModelStatus()),
                                        Status.UNKNOWN), view, interrupted)
    if scale is not None:
        extra["user_objective_scale"] = scale
    if scaled:
        extra["scaled_rows"] = scaled
    elapsed = time.perf_counter() - start
    info = highs.getInfo()
    has_solution = info.primal_solution_status == 2 and status is not Status.UNBOUNDED
    if status is Status.UNKNOWN and not has_solution and \
            highs.getModelStatus() in _highs_errors():
        if any(value != 0 for value in highs.getModel().hessian_.value_):
            raise UnsupportedModelError(
                f"HiGHS stopped on {path.name}'s quadratic objective (model status "
                f"{highs.modelStatusToString(highs.getModelStatus())!r}): it takes convex "
                "ones only (minimized, or concave maximized); use solver='scip'")
        raise SolverError(f"HiGHS stopped with an error (model status "
                          f"{highs.modelStatusToString(highs.getModelStatus())!r}); rerun "
                          "with tee=True for its log")
    if status is Status.UNBOUNDED and not quadratic_ray(highs):
        raise SolverError(f"HiGHS called {path.name} unbounded, but no direction its rows "
                          "and bounds allow lowers its convex quadratic objective without "
                          "bound; solve it with solver='scip'")
    if highs.getModelStatus() == highspy.HighsModelStatus.kSolutionLimit:
        status = solution_limit_status(highs, has_solution)
    if status is Status.UNKNOWN and has_solution:
        status = Status.FEASIBLE
    bound = _highs_bound(info, status, highs)
    if status is Status.OPTIMAL and beyond_default_gap(
            info.objective_function_value, bound, int(info.mip_node_count),
            highs.getObjectiveOffset()[1]):
        status = Status.FEASIBLE
    result = Result(
        status=status,
        solver="highs",
        objective=info.objective_function_value if has_solution else None,
        bound=bound,
        nodes=max(int(info.mip_node_count), 0) + extra.get("first_solve", {}).get("nodes", 0),
        time=elapsed,
        has_solution=has_solution,
        extra=extra,
    )
    if status is not Status.OPTIMAL and highs.getModelStatus() in (
            highspy.HighsModelStatus.kObjectiveBound, highspy.HighsModelStatus.kObjectiveTarget):
        result.extra["stopped_at"] = OBJECTIVE_LIMIT  # as `solve` says it
    if "duality_gap" in extra and has_solution and qp_ray(highs) is True:
        unbounded_qp(result, highs)
        has_solution = False
    elif "duality_gap" in extra:
        flag_duality_gap(result)
    if has_solution:
        _load_values(result, *_highs_columns(highs, view), np.flatnonzero(view.integer).tolist(),
                     "HiGHS", "mip_feasibility_tolerance", params)
        violated = solution_violations(highs, rows, view)
        if violated:
            names = highs.getLp().row_names_
            flag_violations(result, {names[int(k)] if len(names) > int(k) else k: v
                                     for k, v in violated.items()}, "HiGHS", "absolute",
                            "constraint(s) with integer variables")
    return result


def _highs_columns(highs: Any, view: RowView) -> tuple[list[str], list[float]]:
    """The columns' names (`c<j>` for one without) and solution values."""
    values = [float(value) for value in highs.getSolution().col_value]
    names = list(view.lp.col_names_)[:len(values)]
    names += [""] * (len(values) - len(names))
    return [name or f"c{j}" for j, name in enumerate(names)], values


def _highs_errors() -> tuple[Any, ...]:
    """HiGHS's model statuses for a run that failed (an option its checks refused at run
    time, such as large_matrix_value below the matrix's entries, a solver error)."""
    import highspy

    status = highspy.HighsModelStatus
    return (status.kNotset, status.kLoadError, status.kModelError, status.kPresolveError,
            status.kSolveError, status.kPostsolveError)


def _rerun(highs: Any, time_left: float | None, options: Mapping[str, float],
           shown: list[TextIO]) -> None:
    """Run HiGHS again with `options` set, within `time_left` (Ctrl-C cancels it; PDLP's
    own prints go to `shown`)."""
    for key, value in options.items():
        highs.setOptionValue(key, value)
    if time_left is not None:
        highs.setOptionValue("time_limit", float(time_left))
    with sigint_cancels(highs.cancelSolve), printing_solver(highs, shown):
        highs.run()


def _highs_bound(info: Any, status: Status, highs: Any) -> float | None:
    """HiGHS's dual bound: +-inf (the objective's direction) for an unbounded model, as SCIP
    and `solve` report it, the MIP bound once branch and bound ran (also under a limit), the
    objective of an LP solved to optimality, else None."""
    if status is Status.UNBOUNDED:
        import highspy

        sense = highs.getObjectiveSense()  # (status, sense) in highspy 1.16, sense before
        sense = sense[1] if isinstance(sense, tuple) else sense
        return math.inf if sense == highspy.ObjSense.kMaximize else -math.inf
    if status in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED):
        return None
    if info.mip_node_count >= 0:
        return float(info.mip_dual_bound)
    return float(info.objective_function_value) if status is Status.OPTIMAL else None
