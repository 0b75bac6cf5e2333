"""`solve`: any Pyomo model through SCIP (with plugins) or HiGHS, one results object back.

SCIP models are built by Pyomo's own `scip_persistent` interface, which exposes the
PySCIPOpt model; plugins are included into it before the solve and see a `VarMap`.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.common.errors import PyomoException
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.core.base.block import BlockData
from pyomo.core.base.var import VarData
from pyomo.core.kernel.block import IBlock
from pyomo.core.staleflag import StaleFlagManager

from coplug.plugins.arguments import check_flag
from coplug.plugins.base import (
    adds_rows,
    calls_back_after_loading,
    finish_plugins,
    plugins_held,
    plugins_statistics,
    raise_plugin_failures,
    released_on_failure,
    stopped_by_plugin,
)
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.components import check_components
from coplug.plugins.duals import (
    ADDED_ROWS,
    NO_PRESOLVE_FAILED,
    dual_request,
    load_duals,
    other_import_suffixes,
    prepare_scip,
    read_scip_duals,
    soplex_duals,
    unfilled_import_suffixes,
)
from coplug.plugins.errors import (
    InputError,
    SolverError,
    SolverNotAvailableError,
    UnsupportedModelError,
)
from coplug.plugins.fast_collector import install_fast_collector
from coplug.plugins.highs_interface import UncapturedHighs
from coplug.plugins.infeasible_check import check_infeasible_verdict
from coplug.plugins.integral_rows import (
    IntegralRow,
    check_integral_rows,
    flag_fractional,
    optimize_checked,
    pyomo_integers,
    record_first_solve,
)
from coplug.plugins.interrupts import (
    capture_output,
    interrupt_kept,
    record_interrupt,
    sigint_deferred,
)
from coplug.plugins.lazy_duals import lazy_plugins, load_duals_after
from coplug.plugins.lazy_rounds import all_lazy, any_lazy, solve_in_rounds
from coplug.plugins.limits import checked_time_limit
from coplug.plugins.mip_duals import declared_duals, mip_warning_quiet, wants_fixed_duals
from coplug.plugins.mipstart import scip_mip_start
from coplug.plugins.modeldata import HUGE_BOUND_WHY, check_model_data, huge_scip_bound
from coplug.plugins.nonlinear_optimum import check_nonlinear_optimum
from coplug.plugins.objective_at_point import check_objective_at_point
from coplug.plugins.outer_variables import restored_on_failure, solve_state
from coplug.plugins.priorities import set_scip_priorities, unread_export_suffixes
from coplug.plugins.results import OBJECTIVE_LIMIT, Result, Status
from coplug.plugins.scip_objective import expression_value, use_native_objective
from coplug.plugins.scip_walker import fix_scip_walker, mark_one_shot, unsupported_part
from coplug.plugins.serial import one_solve_at_a_time, warning_filters
from coplug.plugins.stationarity import descent
from coplug.plugins.unbounded_check import check_unbounded_verdict
from coplug.plugins.varmap import VarMap, snapped

Backend = Callable[..., Result]

_SCIP_STATUS = {
    "optimal": Status.OPTIMAL,
    "infeasible": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "inforunbd": Status.INFEASIBLE_OR_UNBOUNDED,
    "timelimit": Status.TIME_LIMIT,
    "nodelimit": Status.NODE_LIMIT,
    "totalnodelimit": Status.NODE_LIMIT,
    "stallnodelimit": Status.NODE_LIMIT,
    "memlimit": Status.MEMORY_LIMIT,
    "userinterrupt": Status.INTERRUPTED,
}

_BACKENDS: dict[str, Backend] = {}
# Backends that live in their own module and load on first use ("module:function").
_LAZY_BACKENDS: dict[str, str] = {
    "highs": "coplug.plugins.highs_backend:solve_highs",
    "lap": "coplug.plugins.lap.backend:solve_assignment_model",
}


def register_backend(name: str, backend: Backend) -> None:
    """Make `solve(model, solver=name)` call `backend(model, plugins=..., time_limit=...,
    params=..., tee=...)`. Names are case-insensitive, as `solve` reads them."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"register_backend needs a solver name (a non-empty str), got {name!r}")
    if not callable(backend):
        raise InputError(f"register_backend({name!r}, ...) needs a callable backend, "
                         f"got {backend!r}")
    _BACKENDS[name.lower()] = backend


def available_solvers() -> list[str]:
    """Names accepted by `solve(solver=...)`."""
    return sorted(set(_BACKENDS) | set(_LAZY_BACKENDS))


def solve(
    model: pyo.Block,
    solver: str = "scip",
    plugins: Iterable[Any] = (),
    time_limit: float | None = None,
    tee: bool = False,
    warmstart: bool = False,
    options: Mapping[str, Any] | None = None,
    mip_duals: str | None = None,
    **params: Any,
) -> Result:
    """Solve a Pyomo model and load the best solution back into its variables.

    `plugins` (SCIP only; `LazyConstraints` alone also with HiGHS, solved in rounds) are
    objects with `attach(scip_model, var_map)`; `params` are
    solver options by their native names, e.g. ``**{"limits/nodes": 100}`` for SCIP;
    `options` takes them as a dict too, also those named like this function's own
    arguments (HiGHS's ``{"solver": "ipm"}``).
    `warmstart=True` (SCIP and HiGHS) hands the values already in the variables to the
    solver as a MIP start; `result.extra["warmstart"]` says how many and whether SCIP took
    them. Import Suffixes `m.dual`/`m.rc` are filled for an LP with certified duals (see
    `coplug.plugins.duals`), and for a MIP with `mip_duals="fixed"` from the LP with its
    integers fixed at the optimum (`coplug.plugins.mip_duals`); an export Suffix
    `m.priority` gives SCIP branching priorities.
    Infeasible or unbounded models come back as a status, never as an exception.
    """
    check_model(model)
    time_limit = checked_time_limit(time_limit)
    if not isinstance(solver, str):
        raise InputError(f"solver must be a name ({', '.join(available_solvers())}), "
                         f"got {solver!r}")
    if plugins is None or isinstance(plugins, str) or not isinstance(plugins, Iterable):
        raise InputError(f"plugins must be a list of plugin objects, got {plugins!r}")
    backend = _backend(solver)
    check_components(model, solver)
    check_model_data(model, warn_tiny=solver.lower() != "lap")
    warn_unread_suffixes(model, solver.lower())
    warmstart = check_flag(warmstart, "warmstart")
    tee = checked_tee(tee)
    if warmstart and solver.lower() not in ("scip", "highs"):
        raise InputError(f"warmstart=True needs solver='scip' or 'highs', not {solver!r}")
    start = {"warmstart": True} if warmstart else {}  # other backends take no such keyword
    refuse_sibling_keywords(params, "solve", SOLVE_SIBLINGS)
    params = merged_options(options, params)
    time_limit, params = one_time_limit(solver, time_limit, params)
    plugins = list(plugins)
    _check_plugins(plugins)
    if solver.lower() == "highs" and any_lazy(plugins) and not all_lazy(plugins):
        raise InputError("LazyConstraints with HiGHS are solved in rounds, with no other "
                         "plugins; use solver='scip' to combine them")
    # threads take turns (coplug.plugins.serial); a solve that raises lets its plugins
    # release what they hold for it, and puts back the values it loaded before a plugin's
    # callback raised after the fact
    before = solve_state(model) if calls_back_after_loading(plugins) else None
    empty_unfilled_suffixes(model, solver.lower())
    with one_solve_at_a_time(), released_on_failure(plugins), restored_on_failure(before):
        if solver.lower() == "highs" and all_lazy(plugins):
            run = functools.partial(solve_in_rounds, model, plugins, first_round_start(
                lambda left, **kw: backend(model, plugins=[], time_limit=left, params=params,
                                           tee=tee, **kw), start), time_limit)
        else:
            run = functools.partial(backend, model, plugins=plugins, time_limit=time_limit,
                                    params=params, tee=tee, **start)
        lazies = lazy_plugins(plugins)
        fixed = wants_fixed_duals(model, mip_duals, solver)
        if not fixed and not (lazies and declared_duals(model)):
            return check_unbounded_verdict(model, run(), solver)  # duals from the solve
        with mip_warning_quiet():  # the duals' own reasons are said once, below
            result = check_unbounded_verdict(model, run(), solver)
        left = None if time_limit is None else max(time_limit - result.time, 1e-3)
        load_duals_after(model, result, lazies, fixed, lambda: backend(
            model, plugins=[], time_limit=left, params=params, tee=tee))
        return result


def first_round_start(run: Callable[..., Result], start: dict[str, Any]
                      ) -> Callable[[float | None], Result]:
    """`run(time_left)` for lazy rounds with the caller's MIP start (`start`) in the first
    round only, its report kept in every round's result: later rounds started from the last
    round's point, which breaks a lazy row, and reported it as the caller's."""
    report: dict[str, Any] = {}

    def round_run(left: float | None) -> Result:
        result = run(left, **(start if not report else {}))
        report.setdefault("warmstart", result.extra.get("warmstart"))
        if report["warmstart"] is not None:
            result.extra["warmstart"] = report["warmstart"]
        return result

    return round_run


# Keywords of sibling entry points `solve` does not take, with what it takes instead.
SOLVE_SIBLINGS = {"progress": "pass plugins=[Progress()] for a live progress line (solver "
                              "'scip' or 'highs')"}


def refuse_sibling_keywords(params: Mapping[str, Any], name: str,
                            siblings: Mapping[str, str]) -> None:
    """An InputError for a keyword a sibling entry point takes and `name` does not (`solve`'s
    `progress`, `solve_file`'s `plugins`), before the solver is asked for a parameter of
    that name ("cannot set SCIP parameter 'progress'")."""
    for key in params:
        if key in siblings:
            raise InputError(f"{name}() takes no {key}= argument: {siblings[key]} (a native "
                             f"option of that name goes in options=)")


def merged_options(options: Mapping[str, Any] | None, params: dict[str, Any]
                    ) -> dict[str, Any]:
    """Native options from `options` and keyword `params` in one dict; a name in both is
    refused rather than one silently winning."""
    if options is None:
        return params
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise InputError(f"options must be a dict of native option names to values, "
                         f"got {options!r}")
    both = sorted(set(options) & set(params))
    if both:
        raise InputError(f"option(s) {both} given both in options= and as keywords")
    return {**options, **params}


# `solve`'s keyword arguments that a wrapper's merged options may carry as they are.
SOLVE_KEYWORDS = ("plugins", "tee", "warmstart", "mip_duals")


def as_solve_arguments(params: Mapping[str, Any]) -> dict[str, Any]:
    """Merged options (`merged_options`) as keywords for `solve`: its own keywords
    (SOLVE_KEYWORDS) as they are and every other name as a native option (`options=`), so
    HiGHS's `solver` reaches HiGHS rather than clash with `solve`'s argument (k_best,
    lexicographic and pareto_front raised "got multiple values for keyword 'solver'")."""
    own = {key: value for key, value in params.items() if key in SOLVE_KEYWORDS}
    native = {key: value for key, value in params.items() if key not in SOLVE_KEYWORDS}
    return {**own, "options": native} if native else own


# Each backend's own name for the time limit `solve`'s `time_limit` sets.
_NATIVE_TIME_LIMIT = {"scip": "limits/time", "highs": "time_limit"}


def one_time_limit(solver: Any, time_limit: float | None, params: dict[str, Any]
                   ) -> tuple[float | None, dict[str, Any]]:
    """The call's time limit and the other options: a limit given by the solver's own name
    (`limits/time`, HiGHS's `time_limit`) becomes `time_limit`, which covers the whole call,
    where the native one restarted with every solve inside it (the tightened-tolerance
    retry, lazy rounds, multi-objective stages: 5.4 s for a 3 s limit)."""
    name = _NATIVE_TIME_LIMIT.get(solver.lower()) if isinstance(solver, str) else None
    if name is None or name not in params:
        return time_limit, params
    check_one_time_limit(solver, time_limit, params)
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return time_limit, params  # the solver names a wrong type as for any option
    if not value > 0:
        raise InputError(f"the {solver} option {name!r} is a time limit and must be a "
                         f"positive number of seconds, got {value!r}")
    rest = {key: item for key, item in params.items() if key != name}
    return checked_time_limit(value), rest


def whole_call_options(solver: Any, time_limit: float | None, params: dict[str, Any]
                       ) -> tuple[float | None, dict[str, Any]]:
    """For a call made of several solves (stages, PMVB's steps): its checked `time_limit`
    (10**400: none) and its keyword `params` with `options=` merged in, a native time limit
    made the whole call's (`one_time_limit`)."""
    return one_time_limit(solver, checked_time_limit(time_limit), keyword_options(params))


def keyword_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """A wrapper's keyword `params` with the dict it got as `options=` merged in."""
    rest = {key: value for key, value in params.items() if key != "options"}
    return merged_options(params.get("options"), rest)


def check_one_time_limit(solver: str, time_limit: float | None, params: Mapping[str, Any]
                         ) -> None:
    """Refuse a time limit given both as `time_limit` and by the solver's own name: one of
    them would win in silence."""
    name = _NATIVE_TIME_LIMIT.get(solver.lower())
    if time_limit is not None and name in params:
        raise InputError(f"time_limit={time_limit} and the {solver} option {name!r}="
                         f"{params[name]!r} both set a time limit; give one")


def checked_tee(tee: Any) -> bool:
    """`tee` as a bool (numpy's too), else an InputError: HiGHS's Pyomo interface failed
    deep inside on None or "yes", which SCIP took as truthy."""
    if not isinstance(tee, (bool, np.bool_)):
        raise InputError(f"tee must be True or False, got {tee!r} (a stream or logger as "
                         "tee goes to Pyomo's SolverFactory('coplug_scip' or 'coplug_highs'))")
    return bool(tee)


def check_model(model: Any) -> None:
    """A Pyomo model or one block of it (e.g. `m.scen[2]`) with at most one active objective."""
    check_block(model, "solve()")
    objectives = sum(1 for _ in model.component_data_objects(pyo.Objective, active=True))
    if objectives > 1:
        raise UnsupportedModelError(f"model has {objectives} active objectives; need one")


def check_block(model: Any, caller: str) -> None:
    """Refuse, naming `caller`, what is not a built Pyomo model or one block of it."""
    if not isinstance(model, BlockData):
        what = type(model).__name__
        if isinstance(model, pyo.Block):  # an indexed Block: which element is meant?
            raise InputError(f"{caller} got the indexed Block {model.name!r}; pass one of its "
                             f"blocks, e.g. {model.name}[{next(iter(model.index_set()), 1)!r}]")
        if isinstance(model, IBlock):  # "needs a Block, got block" said nothing
            raise InputError(f"{caller} takes pyomo.environ models, not pyomo.kernel ones: "
                             "build the model as a pyo.ConcreteModel()")
        raise InputError(f"{caller} needs a Pyomo model (a Block), got {what}")
    if not model.parent_block() and not model.is_constructed():
        raise InputError("the model is an AbstractModel that was never built: solve "
                         "model.create_instance(data) instead")


# The backends that fill the model's `dual` and `rc` Suffixes.
DUAL_BACKENDS = ("scip", "highs", "lap")


def warn_unread_suffixes(model: pyo.Block, solver: str) -> None:
    """Say which import Suffixes stay empty (all but `dual` and `rc` where the backend fills
    those: an empty one read as 'all zero' would be wrong) and which export Suffixes go
    unread (all but SCIP's `priority`)."""
    fills_duals = solver in DUAL_BACKENDS
    names = other_import_suffixes(model, fills_duals)
    if names:
        filled = ("only dual and rc on the solved block itself, for LPs" if fills_duals
                  else "no duals with this solver")
        warn_at_caller(f"solve() fills no import Suffix {', '.join(names)} ({filled})")
    names = unread_export_suffixes(model, reads_priority=solver == "scip")
    if names:
        read = "SCIP reads only priority" if solver == "scip" else f"{solver} reads none"
        warn_at_caller(f"solve() does not pass on the export Suffix {', '.join(names)} "
                       f"({read})")


def empty_unfilled_suffixes(model: pyo.Block, solver: str) -> None:
    """Empty the solved block's own import-only Suffixes `solve` does not fill (`m.slack`,
    `m.iis`), as Pyomo's solvers empty theirs (its sub-blocks' they leave): values left by
    an earlier solve were read as this one's. Import-export Suffixes hold the caller's
    values and stay."""
    for suffix in unfilled_import_suffixes(model, solver in DUAL_BACKENDS):
        if suffix.parent_block() is model and not suffix.export_enabled():
            suffix.clear()


def build_instance(opt: Any, model: pyo.Block, label: str,
                   locate: Callable[[pyo.Block], str | None] | None = None) -> None:
    """Build `model` in the persistent solver `opt`; what Pyomo's interface cannot take
    becomes an UnsupportedModelError naming the solver and, where `locate` finds it, the
    constraint or objective at fault."""
    try:
        with interrupt_kept(), suffix_notice_quiet():  # HiGHS's build captures the streams
            opt.set_instance(model)
    except (ValueError, TypeError, NotImplementedError, KeyError, AttributeError,
            PyomoException) as exc:
        where = locate(model) if locate is not None else None
        detail = where or f"this model: {' '.join(str(exc).split())}"
        raise UnsupportedModelError(f"{label} cannot take {detail}") from exc


@contextmanager
def suffix_notice_quiet() -> Iterator[None]:
    """Hide Pyomo's 'ModelChangeDetector does not detect changes to suffixes' while a model
    is built: `solve` names the Suffixes it leaves alone itself."""
    with warning_filters():
        warnings.filterwarnings("ignore", message="ModelChangeDetector does not detect changes")
        yield


def _backend(name: str) -> Backend:
    """Look up a backend by name, importing lazy ones on first use."""
    key = name.lower()
    if key in _BACKENDS:
        return _BACKENDS[key]
    if key in _LAZY_BACKENDS:
        module_name, func = _LAZY_BACKENDS[key].split(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise SolverNotAvailableError(f"solver {name!r} is not available: {exc}") from exc
        _BACKENDS[key] = getattr(module, func)
        return _BACKENDS[key]
    raise SolverNotAvailableError(
        f"unknown solver {name!r}; choose one of {', '.join(available_solvers())}"
    )


def contrib_solver(factory_name: str, label: str, package: str) -> Any:
    """A Pyomo contrib solver instance (HiGHS's without the capture of the process's output
    its own interface does: see `highs_interface`), or a one-line error naming what to
    install."""
    opt = UncapturedHighs() if factory_name == "highs" else SolverFactory(factory_name)
    if not opt.available():
        raise SolverNotAvailableError(f"{label} is not available: install {package}")
    return opt


@dataclass
class BuiltScip:
    """A Pyomo model built in SCIP: Pyomo's interface, the PySCIPOpt model and the variable
    map plugins see."""

    opt: Any
    scip: Any
    var_map: VarMap


def build_scip(model: pyo.Block) -> BuiltScip:
    """Build `model` in SCIP via `scip_persistent`, with SCIP's own linear objective (see
    `coplug.plugins.scip_objective`)."""
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    fix_scip_walker()
    install_fast_collector()
    mark_one_shot(opt)
    build_instance(opt, model, "SCIP", unsupported_part)
    bounded = use_native_objective(opt, model)
    epigraph = None if bounded is None or opt._obj_var is None else (opt._obj_var, bounded)
    var_map = VarMap(opt._pyomo_var_to_solver_var_map, model, epigraph)
    refuse_huge_bounds(var_map)
    # the PySCIPOpt model; Pyomo keeps no public accessor
    return BuiltScip(opt, opt._solver_model, var_map)


def refuse_huge_bounds(var_map: VarMap) -> None:
    """An InputError for a column built in SCIP with a finite bound past SCIP_HUGE
    (`huge_scip_bound`). Only columns SCIP gets are read (a fixed variable's bounds are its
    value; an unused one is not built)."""
    for var, column in var_map.items():
        found = huge_scip_bound(column)
        if found is not None:
            raise InputError(f"variable {var.name!r}: its {found[0]} bound {found[1]:g} "
                             f"{HUGE_BOUND_WHY}")


def _solve_scip(
    model: pyo.Block,
    *,
    plugins: list[Any],
    time_limit: float | None,
    params: Mapping[str, Any],
    tee: bool,
    warmstart: bool = False,
    with_duals: bool = True,
) -> Result:
    """Build the model in SCIP, attach plugins, optimize, load back (and fill
    `m.dual`/`m.rc` for an LP that declares them, unless `with_duals` is off)."""
    built = build_scip(model)
    _set_scip_params(built.scip, time_limit, params)  # named before the Suffixes are emptied
    _check_attach(plugins)
    duals = dual_request(model, read=not adds_rows(plugins)) if with_duals else None
    if duals is not None and adds_rows(plugins):
        duals.reason = ADDED_ROWS
    if duals is not None and duals.lp is not None:
        prepare_scip(built.scip)  # before the caller's params, which win
    try:
        result = run_scip(built, model, plugins=plugins, time_limit=time_limit,
                          params=params, tee=tee, warmstart=warmstart)
    except SolverError:
        if duals is None or duals.lp is None:
            raise
        # the LP without presolving failed: solve a fresh model as SCIP would, without duals
        result = _solve_scip(model, plugins=plugins, time_limit=time_limit, params=params,
                             tee=tee, warmstart=warmstart, with_duals=False)
        duals.lp, duals.reason = None, NO_PRESOLVE_FAILED
        load_duals(duals, result)
        return result
    if duals is not None:
        if duals.lp is not None and result.status is Status.OPTIMAL:
            read_scip_duals(duals, built.scip, built.opt._pyomo_con_to_solver_con_map)
        load_duals(duals, result, fallback=soplex_duals)
    return result


def run_scip(built: BuiltScip, model: pyo.Block, *, plugins: list[Any],
             time_limit: float | None, params: Mapping[str, Any], tee: bool,
             warmstart: bool = False) -> Result:
    """Solve the model built in `built` with `plugins` attached and load the best point back
    into the Pyomo variables; `result.extra["warmstart"]` says how a start went."""
    opt, scip, var_map = built.opt, built.scip, built.var_map
    _set_scip_params(scip, time_limit, params)
    set_scip_priorities(scip, model, var_map)
    for plugin in plugins:  # checked by `_solve_scip` (stages pass none)
        plugin.attach(scip, var_map)
    con_names = _pyomo_con_names(opt)
    start = (scip_mip_start(scip, *_start_pairs(built), con_names, plugins)
             if warmstart else None)
    scip.hideOutput(quiet=not tee)
    try:
        rows, extra = optimize_checked(scip, params, functools.partial(optimize_scip, scip),
                                       functools.partial(_exact_rows, plugins))
    except SolverError:
        raise_plugin_failures(plugins)
        raise
    raise_plugin_failures(plugins)
    result = scip_result(scip, plugins)
    if "cuts_off" in extra:
        extra["cuts_off"] = con_names(extra["cuts_off"])  # SCIP's c2 is the model's weight[a]
    record_first_solve(result, extra)
    if result.status is Status.INFEASIBLE_OR_UNBOUNDED:
        with plugins_held(plugins):  # its points have objective 0: not the model's
            settle_infeasible_or_unbounded(scip, result)
        raise_plugin_failures(plugins)
        result.plugin_stats = plugins_statistics(plugins)  # of the run that decided the status
    epigraph = opt._obj_var.name if opt._obj_var is not None else None
    check_nonlinear_optimum(scip, result, epigraph, var_map.pyomo_name,
                            lambda: descent(model, lambda var: scip.getVal(var_map.to_scip(var))))
    if not adds_rows(plugins):  # a plugin's rows (lazy ones) are not the model's to check
        check_infeasible_verdict(model, result)
    if next(model.component_data_objects(pyo.Objective, active=True), None) is None:
        result.objective = result.bound = None  # a feasibility problem has no objective value
    StaleFlagManager.mark_all_as_stale()  # values from an earlier solve are stale
    if result.has_solution and not result.extra.get("infeasible_refuted"):
        _load_scip_solution(scip, var_map)
        flag_fractional(result, pyomo_integers(var_map), "SCIP", "numerics/feastol", params)
        check_objective_at_point(model, result, nonlinear=opt._obj_var is not None,
                                 raw=functools.partial(_scip_value, scip, scip.getBestSol(),
                                                       var_map))
    check_integral_rows(scip, result, rows, con_names)
    finish_plugins(plugins, result)
    if start is not None:
        result.extra["warmstart"] = start
    return result


def _check_plugins(plugins: list[Any]) -> None:
    """Refuse a plugin class given for an instance, one plugin listed twice, and two plugins
    of one solve under one declared `name`: `plugin_stats` are kept by name, and SCIP
    refuses a second include of one kind and name only once the solve has begun (the
    model's duals were gone by then). Plugins without a `name` of their own may repeat."""
    seen: dict[str, Any] = {}
    for k, plugin in enumerate(plugins):
        if isinstance(plugin, type):
            raise InputError(f"plugin {plugin.__name__} is a class; pass an instance "
                             f"({plugin.__name__}(...))")
        if any(plugin is other for other in plugins[:k]):
            raise InputError(f"the same {type(plugin).__name__} plugin is listed twice; list "
                             "it once")
        name = getattr(plugin, "name", None)
        if isinstance(name, str):
            if name in seen:
                raise InputError(_same_name(seen[name], plugin, name))
            seen[name] = plugin


def _same_name(first: Any, second: Any, name: str) -> str:
    """Why two plugins of one solve may not share `name`, and what to do instead."""
    kind = type(second)
    named = "name" in inspect.signature(kind).parameters
    if type(first) is not kind:
        return (f"the {type(first).__name__} and {kind.__name__} plugins of one solve share "
                f"the name {name!r} (plugin_stats are kept by name); give each a name of "
                "its own")
    return (f"two {kind.__name__} plugins of one solve share the name {name!r}; " +
            ("give each a name of its own" if named else f"pass one {kind.__name__} per solve"))


def _check_attach(plugins: list[Any]) -> None:
    """Refuse an object SCIP cannot attach (no `attach(scip_model, var_map)`)."""
    for plugin in plugins:
        if not callable(getattr(plugin, "attach", None)):
            raise InputError(f"plugin {plugin!r} has no attach(scip_model, var_map) method")


def _exact_rows(plugins: list[Any], feastol: float) -> list[IntegralRow]:
    """The rows `plugins` add to SCIP during a solve (lazy constraints) that coplug judges
    exactly, as the model's large all-integer rows (`LazyConstraints.exact_rows`)."""
    return [row for plugin in plugins if callable(getattr(plugin, "exact_rows", None))
            for row in plugin.exact_rows(feastol)]


def optimize_scip(scip: Any) -> None:
    """SCIP's solve, its error codes as SolverError."""
    try:
        scip.optimize()
    except Exception as exc:  # SCIP returned an error code (PySCIPOpt raises a bare Exception)
        raise SolverError(f"SCIP stopped with an error: {exc}") from exc


def settle_infeasible_or_unbounded(scip: Any, result: Result) -> None:
    """Decide SCIP's 'infeasible or unbounded' (its answer when presolve finds an unbounded
    ray before it knows of a point) by one more solve with a zero objective, which cannot be
    unbounded: a point means unbounded, none infeasible. An unfinished run keeps the verdict;
    both runs count in the result's time and nodes."""
    remaining = float(scip.getParam("limits/time")) - result.time
    if remaining <= 0.0:
        return
    maximize = scip.getObjectiveSense() == "maximize"
    scip.freeTransform()
    scip.setObjective(0, sense="minimize", clear=True)
    scip.setParam("limits/time", remaining)
    optimize_scip(scip)
    result.time += float(scip.getSolvingTime())
    result.nodes += int(scip.getNTotalNodes())
    if scip.getNSols() > 0:
        result.status, result.bound = Status.UNBOUNDED, math.inf if maximize else -math.inf
    elif scip.getStatus() == "infeasible":
        result.status, result.bound = Status.INFEASIBLE, None


def _pyomo_con_names(opt: Any) -> Callable[[str], str]:
    """SCIP constraint name -> the Pyomo constraint's name (the table is built on first use)."""

    @functools.cache
    def table() -> dict[str, str]:
        return {scip_con.name: con.name
                for con, scip_con in opt._pyomo_con_to_solver_con_map.items()}

    return lambda name: table().get(name, name)


def _start_pairs(built: BuiltScip) -> tuple[list[tuple[Any, Any]], list[tuple[Any, float]]]:
    """The (Pyomo, SCIP) variable pairs of a MIP start and the (SCIP variable, value) pairs
    behind the model (`_hidden_values`). A variable fixed at SCIP's infinity or beyond is in
    no SCIP constraint (its value is folded in) and its SCIP variable is free, so it starts
    at 0 rather than refusing the start for a value SCIP cannot hold."""
    scip, var_map = built.scip, built.var_map
    beyond = {id(var) for var, _ in var_map.items() if var.fixed and var.value is not None
              and not abs(var.value) < scip.infinity()}
    pairs = [(var, scip_var) for var, scip_var in var_map.items() if id(var) not in beyond]
    free = [(scip_var, 0.0) for var, scip_var in var_map.items() if id(var) in beyond]
    return pairs, _hidden_values(built.opt, var_map.epigraph) + free


def _hidden_values(opt: Any, epigraph: tuple[Any, Any] | None) -> list[tuple[Any, float]]:
    """Values of the SCIP variables Pyomo adds behind the model: one fixed variable per
    mutable Param, and the epigraph variable of a nonlinear objective (the value at the
    start of the expression it bounds, when every variable there has one)."""
    hidden = [(v, float(pyo.value(p))) for p, v in opt._pyomo_param_to_solver_param_map.items()]
    if epigraph is not None:
        value = expression_value(epigraph[1])
        if value is not None:
            hidden.append((epigraph[0], value))
    return hidden


def scip_result(scip: Any, plugins: Iterable[Any] = (), solver: str = "scip") -> Result:
    """Read status, objective, bound, nodes and time off a solved PySCIPOpt model."""
    has_solution = scip.getNSols() > 0
    native = scip.getStatus()
    status = _SCIP_STATUS.get(native, Status.UNKNOWN)
    if status is Status.UNKNOWN and has_solution:
        # SCIP can stop without a verdict (a gap limit, or after restarts) with its dual
        # bound already at the incumbent: that is a proof of optimality all the same
        closed = scip.isEQ(scip.getPrimalbound(), scip.getDualbound())
        status = Status.OPTIMAL if closed else Status.FEASIBLE
    if status is Status.INTERRUPTED and not stopped_by_plugin(plugins):
        record_interrupt()  # SCIP caught a Ctrl-C (see coplug.plugins.interrupts)
    objective = scip.getObjVal() if has_solution else None
    bound = None
    if status not in (Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED):
        bound = _finite_or_inf(scip.getDualbound(), scip.infinity())
    if status is Status.UNBOUNDED:
        objective = None
    stopped = status is not Status.OPTIMAL and native in ("primallimit", "duallimit")
    return Result(
        status=status,
        solver=solver,
        objective=objective,
        bound=bound,
        nodes=int(scip.getNTotalNodes()),
        time=float(scip.getSolvingTime()),
        has_solution=has_solution and status is not Status.UNBOUNDED,
        plugin_stats=plugins_statistics(plugins),
        extra={"stopped_at": OBJECTIVE_LIMIT} if stopped else {},
    )


def _finite_or_inf(value: float, infinity: float) -> float:
    """Map SCIP's +-1e20 infinity onto math.inf."""
    if value >= infinity:
        return math.inf
    if value <= -infinity:
        return -math.inf
    return float(value)


# SCIP real limits whose "no limit" lies below its infinity (SCIP_MEM_NOLIMIT, in MB), and
# those switched off by 1e99 on either side (at 1e20 SCIP stopped at once, with no point).
_NO_LIMIT = {"limits/memory": 8796093022207.0}
_OFF = {"limits/primal": 1e99, "limits/dual": 1e99}


def _set_scip_params(scip: Any, time_limit: float | None, params: Mapping[str, Any]) -> None:
    """Apply the time limit and native SCIP parameters, naming any unknown one."""
    if time_limit is not None:
        scip.setParam("limits/time", float(time_limit))
    for key, value in params.items():
        said = None
        try:
            current = scip.getParam(key)
            real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
            if isinstance(current, float) and real and \
                    abs(value) >= scip.infinity():  # inf, 1e30, 10**21: SCIP's "no limit"
                value = _OFF.get(key) or (_NO_LIMIT.get(key, scip.infinity()) if value > 0
                                          else -scip.infinity())
            _check_scip_param_type(key, value, current)
            with capture_output(capture_fd=True) as said:  # SCIP's C error lines, if any
                scip.setParam(key, value)
        except InputError:
            raise
        except OverflowError:  # an int parameter past 2**31, a longint one past 2**63
            raise InputError(f"SCIP parameter {key!r} takes an integer of smaller size, got "
                             f"{value!r} (its limits take -1 for no limit)") from None
        except Exception as exc:  # PySCIPOpt raises KeyError or a bare Exception
            raise InputError(f"cannot set SCIP parameter {key!r} to {value!r}: "
                             f"{said and _scip_reason(said.getvalue()) or exc}") from exc
    _no_restarts_without_presolve(scip, params)


def _no_restarts_without_presolve(scip: Any, params: Mapping[str, Any]) -> None:
    """With presolving off (`presolving/maxrounds` 0) also switch off SCIP's restarts unless
    the caller set them: a restart then presolves nothing, and SCIP 10 can end one with
    "invalid SCIP status <0>" (a root restart after a MIP start: an error, no result)."""
    if scip.getParam("presolving/maxrounds") == 0 and "presolving/maxrestarts" not in params:
        scip.setParam("presolving/maxrestarts", 0)


def _scip_reason(text: str) -> str:
    """The first of SCIP's ERROR lines in `text`, without its source position ("Invalid
    value <-5> for longint parameter <limits/nodes>. Must be in range [-1,...]")."""
    for line in text.splitlines():
        if "ERROR:" in line:
            return line.split("ERROR:", 1)[1].strip()
    return ""


def _check_scip_param_type(key: str, value: Any, current: Any) -> None:
    """Refuse a value of the wrong type for the parameter, which SCIP would coerce without a
    word (limits/nodes=10.7 ran as 10, lp/presolving=5 as True), and NaN, which SCIP's own
    range check lets through for limits/primal and limits/dual."""
    numeric = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if isinstance(current, bool):
        ok, what = isinstance(value, (bool, np.bool_)), "True or False"
    elif isinstance(current, int):
        ok = numeric and math.isfinite(value) and float(value).is_integer()
        what = "an integer (-1 for no limit)" if key.startswith("limits/") else "an integer"
    elif isinstance(current, float):  # NaN: limits/primal=nan stopped at once, "unknown"
        ok, what = numeric and not math.isnan(value), "a number (not NaN)"
    else:
        ok, what = isinstance(value, str), "a string"
    if not ok:
        raise InputError(f"SCIP parameter {key!r} takes {what}, got {value!r}")


def _scip_value(scip: Any, solution: Any, var_map: VarMap, var: VarData) -> float | None:
    """`solution`'s value of `var` as SCIP holds it (None: not in SCIP's model)."""
    try:
        return scip.getSolVal(solution, var_map.to_scip(var))
    except KeyError:
        return None


def _load_scip_solution(scip: Any, var_map: VarMap) -> None:
    """Copy SCIP's best solution into the Pyomo variables (integers snapped, see `snapped`),
    whole: a Ctrl-C meanwhile is held until it is in (`sigint_deferred`; a second press had
    left 35,265 of 100,000 variables loaded)."""
    best = scip.getBestSol()
    with sigint_deferred():
        for var, scip_var in var_map.items():
            if not var.fixed:
                var.set_value(snapped(var, scip.getSolVal(best, scip_var)), skip_validation=True)


register_backend("scip", _solve_scip)
