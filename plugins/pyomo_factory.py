"""coplug's backends under Pyomo's solver factories, so existing Pyomo scripts switch by name.

After `import coplug.plugins`, `pyo.SolverFactory("coplug_scip")` (legacy interface: results
with `results.solver.termination_condition`) and
`pyomo.contrib.solver.common.factory.SolverFactory("coplug_scip")` (Pyomo's new interface:
`Results` with `termination_condition`, `solution_status`, `incumbent_objective`,
`objective_bound` and a `solution_loader`) solve through `coplug.plugins.solve`, with all
its checks and guards; `coplug_highs` and `coplug_lap` likewise. coplug's own options ride
in the configuration: `plugins` (SCIP plugins), `warmstart`, and native solver options in
`solver_options` (legacy: `options`). Pyomo's `time_limit` (legacy `timelimit`), `tee`,
`rel_gap`, `abs_gap` and `threads` (HiGHS) map to the solver's own options.

`load_solutions=False` leaves the model as it was (values and `dual`/`rc` Suffixes are put
back); the solution stays in `results.solution_loader`. Duals are computed and certified
during the solve (see `coplug.plugins.duals`), so `get_duals()` needs an import Suffix
`dual` (or `rc` for `get_reduced_costs()`) declared on the model before solving.
"""

from __future__ import annotations

import datetime
import functools
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pyomo.environ as pyo
from pyomo.common.collections import ComponentMap
from pyomo.common.config import Bool, ConfigValue, In
from pyomo.common.tee import TeeStream
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.solver.common.base import Availability, LegacySolverWrapper, SolverBase
from pyomo.contrib.solver.common.config import BranchAndBoundConfig
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import Results, SolutionStatus, TerminationCondition
from pyomo.contrib.solver.common.solution_loader import SolutionLoader
from pyomo.contrib.solver.common.util import (
    NoDualsError,
    NoFeasibleSolutionError,
    NoOptimalSolutionError,
    NoReducedCostsError,
    NoSolutionError,
)
from pyomo.core.base.block import BlockData
from pyomo.core.base.var import VarData
from pyomo.opt import SolverStatus as LegacyStatus
from pyomo.opt import TerminationCondition as LegacyCondition

from coplug.plugins.bridge import available_solvers, check_model, solve
from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import capture_output
from coplug.plugins.outer_variables import DUAL_SUFFIXES, restore_state, solve_state
from coplug.plugins.results import OBJECTIVE_LIMIT, Result, Status
from coplug.plugins.serial import one_solve_at_a_time

_TERMINATION = {
    Status.OPTIMAL: TerminationCondition.convergenceCriteriaSatisfied,
    Status.INFEASIBLE: TerminationCondition.provenInfeasible,
    Status.UNBOUNDED: TerminationCondition.unbounded,
    Status.INFEASIBLE_OR_UNBOUNDED: TerminationCondition.infeasibleOrUnbounded,
    Status.TIME_LIMIT: TerminationCondition.maxTimeLimit,
    Status.NODE_LIMIT: TerminationCondition.iterationLimit,
    Status.ITERATION_LIMIT: TerminationCondition.iterationLimit,
    Status.MEMORY_LIMIT: TerminationCondition.unknown,  # Pyomo has no memory limit
    Status.INTERRUPTED: TerminationCondition.interrupted,
    Status.FEASIBLE: TerminationCondition.unknown,
    Status.UNKNOWN: TerminationCondition.unknown,
}
# Pyomo's gap options by backend: (relative, absolute) native option names.
_GAP_OPTIONS = {"scip": ("limits/gap", "limits/absgap"), "highs": ("mip_rel_gap", "mip_abs_gap")}


class CoplugConfig(BranchAndBoundConfig):
    """Pyomo's branch-and-bound options plus coplug's `plugins`, `warmstart` and
    `mip_duals`."""

    def __init__(self, description=None, doc=None, implicit=False, implicit_domain=None,
                 visibility=0) -> None:
        super().__init__(description=description, doc=doc, implicit=implicit,
                         implicit_domain=implicit_domain, visibility=visibility)
        self.plugins: list = self.declare("plugins", ConfigValue(
            domain=list, default=[], description="SCIP plugins (coplug.plugins.Plugin)"))
        self.warmstart: bool = self.declare("warmstart", ConfigValue(
            domain=Bool, default=False,
            description="hand the variables' current values to the solver as a MIP start"))
        self.mip_duals: str | None = self.declare("mip_duals", ConfigValue(
            domain=In([None, "fixed"]), default=None,
            description="'fixed': a MIP's duals from the LP with its integers fixed"))


class CoplugSolutionLoader(SolutionLoader):
    """The solution coplug loaded, kept apart from the model: values and certified duals."""

    def __init__(self, model: BlockData, result: Result, values: ComponentMap,
                 suffixes: dict[str, ComponentMap | None]) -> None:
        self._pyomo_model = model
        self._result = result
        self._values = values
        self._suffixes = suffixes

    def get_number_of_solutions(self) -> int:
        """1 when the solve found a point, else 0."""
        return 1 if self._result.has_solution else 0

    def get_vars(self, vars_to_load: Sequence[VarData] | None = None) -> ComponentMap:
        """The solution's value of each variable the solve saw (or of `vars_to_load`)."""
        if not self._result.has_solution:
            raise NoSolutionError(f"no solution: the solve ended {self._result.status.value}")
        if vars_to_load is None:
            return ComponentMap(self._values.items())
        missing = [v.name for v in vars_to_load if v not in self._values]
        if missing:
            raise InputError(f"variable(s) {missing[:3]} are not in the solved model's "
                             f"constraints or objective")
        return ComponentMap((v, self._values[v]) for v in vars_to_load)

    def get_duals(self, cons_to_load: Sequence[Any] | None = None) -> dict[Any, float]:
        """The certified LP duals (Pyomo's signs) of all rows or of `cons_to_load`."""
        return dict(self._subset("dual", cons_to_load, NoDualsError))

    def get_reduced_costs(self, vars_to_load: Sequence[VarData] | None = None) -> ComponentMap:
        """The certified reduced costs of all variables or of `vars_to_load` (a ComponentMap:
        Pyomo's variables cannot be dict keys)."""
        return ComponentMap(self._subset("rc", vars_to_load, NoReducedCostsError))

    def load_import_suffixes(self) -> None:
        """Fill `dual`/`rc` with what the solve certified; other import Suffixes stay empty.
        A model's own `dual`/`rc` declared after the solve is NoDualsError or
        NoReducedCostsError, as `get_duals` says (it was emptied, and stayed empty in
        silence: coplug certifies duals during the solve)."""
        for name, error in (("dual", NoDualsError), ("rc", NoReducedCostsError)):
            suffix = self._pyomo_model.component(name)
            if (name not in self._suffixes and isinstance(suffix, pyo.Suffix)
                    and suffix.active and suffix.import_enabled()):
                raise error(self._why_none(name))
        suffixes = self._collect_and_clear_import_suffixes()
        for name in DUAL_SUFFIXES:
            if name in suffixes and self._suffixes.get(name) is not None:
                suffixes[name].update(self._suffixes[name].items())

    def _subset(self, name: str, keys: Sequence[Any] | None, error: type[Exception]
                ) -> list[tuple[Any, float]]:
        """Suffix `name`'s (component, value) pairs (all, or those of `keys`), or `error`
        saying why not; a key without a value is named, not dropped in silence."""
        values = self._suffixes.get(name)
        if values is None:
            raise error(self._why_none(name))
        if keys is None:
            return list(values.items())
        missing = [k.name for k in keys if k not in values]
        if missing:
            raise InputError(f"no {name} value for {missing[:3]}: not a row or free variable "
                             f"of the solved LP (a fixed variable, or an integer one fixed in "
                             f"mip_duals='fixed', has none)")
        return [(k, values[k]) for k in keys]

    def _why_none(self, name: str) -> str:
        """Why the solve certified no `name` values."""
        if name not in self._suffixes:
            fixed = (" and pass mip_duals='fixed' (a MIP has no LP duals; those of the LP "
                     "with its integers fixed at the solution)"
                     if any(v.is_integer() for v in self._values) else "")
            return (f"coplug computes and certifies duals during the solve: declare "
                    f"m.{name} = pyo.Suffix(direction=pyo.Suffix.IMPORT) before solving"
                    f"{fixed}")
        info = self._result.extra.get("duals", {})
        return f"no {name} values: {info.get('reason', 'the solve gave none')}"


class _CertifiedOrNone:
    """A CoplugSolutionLoader whose duals and reduced costs are empty where the solve
    certified none, for Pyomo's legacy results (which ask for them unconditionally)."""

    def __init__(self, loader: CoplugSolutionLoader) -> None:
        self._loader = loader

    def get_vars(self, vars_to_load: Sequence[VarData] | None = None) -> ComponentMap:
        """The loader's values."""
        return self._loader.get_vars(vars_to_load)

    def get_duals(self, cons_to_load: Sequence[Any] | None = None) -> dict[Any, float]:
        """The certified duals, or none."""
        try:
            return self._loader.get_duals(cons_to_load)
        except NoDualsError:
            return {}

    def get_reduced_costs(self, vars_to_load: Sequence[VarData] | None = None
                          ) -> ComponentMap:
        """The certified reduced costs, or none."""
        try:
            return self._loader.get_reduced_costs(vars_to_load)
        except NoReducedCostsError:
            return ComponentMap()


class CoplugSolver(SolverBase):
    """One coplug backend ('scip', 'highs' or 'lap') behind Pyomo's solver interface."""

    CONFIG = CoplugConfig()
    backend = "scip"

    def available(self) -> Availability:
        """FullLicense where the backend's package imports (all are open source)."""
        return (Availability.FullLicense if self.backend in available_solvers()
                and _importable(self.backend) else Availability.NotFound)

    def version(self) -> tuple[int, ...]:
        """The version of the package behind the backend."""
        return _backend_version(self.backend)

    def is_persistent(self) -> bool:
        """False: each solve builds the model afresh (as `coplug.plugins.solve` does)."""
        return False

    def solve(self, model: BlockData, **kwds: Any) -> Results:
        """Solve `model` with `coplug.plugins.solve` and report in Pyomo's Results."""
        started, clock = datetime.datetime.now(datetime.timezone.utc), time.perf_counter()
        config = self.config(value=kwds, preserve_implicit=True)
        if not isinstance(model, BlockData):
            check_model(model)  # names what was passed: an indexed Block, a kernel model, ...
        before = solve_state(model)
        timer = config.timer if config.timer is not None else HierarchicalTimer()
        timer.start("solve")
        try:
            result = self._solve_teed(model, config)
        except BaseException:
            if not config.load_solutions:  # values a round loaded before the error go too
                restore_state(before)
            raise
        finally:
            timer.stop("solve")
        loader = CoplugSolutionLoader(model, result, _solution_values(before, result),
                                      _suffix_values(before, result))
        results = _results(result, model, loader, config, self)
        results.timing_info.timer = timer
        results.timing_info.start_timestamp = started
        # Pyomo's wall time is the whole call's (the solver's own is `result.time`, 0.25 s
        # of a 1.3 s call on a 20,000-row LP)
        results.timing_info.wall_time = time.perf_counter() - clock
        keep = config.load_solutions and result.has_solution
        nonoptimal = (config.raise_exception_on_nonoptimal_result and
                      results.termination_condition
                      is not TerminationCondition.convergenceCriteriaSatisfied)
        if not keep or nonoptimal:
            restore_state(before)
        if nonoptimal:
            raise NoOptimalSolutionError(f"{self.name}: the solve ended {result.status.value}"
                                         f"{_reason(result)}; set raise_exception_on_nonoptimal"
                                         f"_result=False to get the results")
        if config.load_solutions and not result.has_solution:
            raise NoFeasibleSolutionError(f"{self.name}: no solution to load (the solve ended "
                                          f"{result.status.value}{_reason(result)}); set "
                                          f"load_solutions=False to get the results")
        return results

    def _solve_teed(self, model: BlockData, config: CoplugConfig) -> Result:
        """`coplug.plugins.solve` with the solver's log sent to the streams in `config.tee`
        (Pyomo's `tee=stream`), as Pyomo's own interfaces send it."""
        # tee=True where the process has no stdout (closed, pythonw) holds None: Pyomo's
        # TeeStream failed writing to it
        streams = [stream for stream in config.tee if stream is not None]

        def run() -> Result:
            return solve(model, solver=self.backend, plugins=config.plugins,
                         time_limit=config.time_limit, tee=bool(streams),
                         warmstart=config.warmstart, mip_duals=config.mip_duals,
                         options=_native_options(self.backend, config))

        if not streams:
            return run()
        # the solve lock before Pyomo's capture lock, in the order `solve` takes them: the
        # other order let two threads each hold one and wait for the other for good
        with one_solve_at_a_time(), capture_output(TeeStream(*streams), capture_fd=True):
            return run()


class LegacyCoplugSolver(LegacySolverWrapper):
    """Pyomo's legacy `SolverFactory` interface, also taking `warmstart` and `plugins`."""

    def solve(self, model: BlockData, *args: Any, warmstart: bool | None = None,
              plugins: Sequence[Any] | None = None, mip_duals: str | None = None,
              **kwds: Any) -> Any:
        """Legacy `solve`, with coplug's `warmstart`, `plugins` and `mip_duals` (left out: those in
        `self.config`); what this call sets (timelimit, options, ...) is undone after it, so
        it does not stay for the next call (Pyomo's wrapper left it set)."""
        if plugins is not None and (isinstance(plugins, str)
                                    or not isinstance(plugins, Iterable)):
            raise InputError(f"plugins must be a list of plugin objects, got {plugins!r}")
        saved = self.config.value()
        if warmstart is not None:
            self.config.warmstart = warmstart
        if plugins is not None:
            self.config.plugins = list(plugins)
        if mip_duals is not None:
            self.config.mip_duals = mip_duals
        try:
            return super().solve(model, *args, **kwds)
        finally:
            self.config.reset()
            self.config.set_value(saved)

    def _map_results(self, model: BlockData, results: Results) -> tuple[Any, Any]:
        """Pyomo's mapping, except where Pyomo's vocabulary has no word for the stop: a point
        with no verdict (a solution limit, or SCIP's wrong 'infeasible' overturned) reads
        ok / `feasible`, and a memory limit aborted / `resourceInterrupt`. Both had read
        unknown / `unknown`, which `m.solutions.load_from` refuses and GDPopt's subproblem
        handler raises on."""
        legacy_results, legacy_soln = super()._map_results(model, results)
        if results.termination_condition is not TerminationCondition.unknown:
            return legacy_results, legacy_soln
        status = (getattr(results.extra_info, "coplug", None) or {}).get("status")
        if status == Status.FEASIBLE.value:
            legacy_results.solver.status = LegacyStatus.ok
            legacy_results.solver.termination_condition = LegacyCondition.feasible
        elif status == Status.MEMORY_LIMIT.value:
            legacy_results.solver.status = LegacyStatus.aborted
            legacy_results.solver.termination_condition = LegacyCondition.resourceInterrupt
        return legacy_results, legacy_soln

    def _solution_handler(self, load_solutions: bool, model: BlockData, results: Results,
                          legacy_results: Any, legacy_soln: Any) -> Any:
        """Pyomo's handler; with `load_solutions=False` it reads the duals whenever the model
        declares `dual`/`rc`, so a solve that certified none (a MIP) gives none there
        instead of raising NoDualsError, and reduced costs go to their variables (Pyomo's
        put every one under a variable named 'Rc', so `load_from` loaded none)."""
        loader = results.solution_loader
        if load_solutions or not isinstance(loader, CoplugSolutionLoader):
            return super()._solution_handler(load_solutions, model, results, legacy_results,
                                             legacy_soln)
        view = _CertifiedOrNone(loader)
        results.solution_loader = view
        try:
            legacy = super()._solution_handler(load_solutions, model, results, legacy_results,
                                               legacy_soln)
        finally:
            results.solution_loader = loader
        if "Rc" in legacy_soln.variable:  # Pyomo stores each reduced cost as a variable 'Rc'
            del legacy_soln.variable["Rc"]
            for var, value in view.get_reduced_costs().items():
                legacy_soln.variable[legacy_soln.symbol_map.getSymbol(var)]["Rc"] = value
        return legacy

    def warm_start_capable(self) -> bool:
        """SCIP and HiGHS take MIP starts (`warmstart=True`)."""
        return self.backend in ("scip", "highs")


def _importable(backend: str) -> bool:
    """Whether the package behind `backend` imports."""
    try:
        __import__({"scip": "pyscipopt", "highs": "highspy", "lap": "numba"}[backend])
    except ImportError:
        return False
    return True


@functools.cache
def _backend_version(backend: str) -> tuple[int, ...]:
    """The solver's version (SCIP's, HiGHS's; coplug's own for 'lap') as a tuple of ints,
    read once per process (SCIP's took a new model, 1.3 ms of every factory solve)."""
    if backend == "highs":
        import highspy

        return (highspy.HIGHS_VERSION_MAJOR, highspy.HIGHS_VERSION_MINOR,
                highspy.HIGHS_VERSION_PATCH)
    if backend == "scip":
        import pyscipopt

        scip = pyscipopt.Model()
        return (scip.getMajorVersion(), scip.getMinorVersion(), scip.getTechVersion())
    from importlib.metadata import version

    text = version("coplug")
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _native_options(backend: str, config: CoplugConfig) -> dict[str, Any]:
    """Pyomo's generic options (gaps, threads) as the backend's native ones, plus the
    caller's `solver_options`, which win."""
    options: dict[str, Any] = {}
    gap_names = _GAP_OPTIONS.get(backend)
    for value, name in zip((config.rel_gap, config.abs_gap), gap_names or (None, None),
                           strict=True):
        if value is None:
            continue
        if name is None:
            raise InputError(f"coplug_{backend} takes no gap options: it always solves to "
                             f"optimality")
        options[name] = value
    if config.threads is not None and backend == "highs":
        options["threads"] = config.threads
    elif config.threads is not None and config.threads != 1:  # one thread is what it runs on
        raise InputError(f"coplug_{backend} runs on one thread; threads={config.threads} "
                         f"is for coplug_highs")
    options.update(config.solver_options.value())
    return options


def _solution_values(before: dict[str, Any], result: Result) -> ComponentMap:
    """Each variable of the active constraints and objective (as `solve_state` read them
    before the solve: a second walk of the model cost as much as a LAP solve) at its solved
    value."""
    if not result.has_solution:
        return ComponentMap()
    return ComponentMap((v, v.value) for v in before["used"])


def _suffix_values(before: dict[str, Any], result: Result) -> dict[str, ComponentMap | None]:
    """What the solve left in the declared dual/rc Suffixes (None where it certified none;
    empty where it certified duals of no rows, as for an LP with bounds alone)."""
    loaded = result.extra.get("duals", {}).get("loaded", False)
    out: dict[str, ComponentMap | None] = {}
    for name, (suffix, _) in before["suffixes"].items():
        out[name] = ComponentMap(suffix.items()) if len(suffix) or loaded else None
    return out


def _results(result: Result, model: BlockData, loader: CoplugSolutionLoader,
             config: CoplugConfig, solver: CoplugSolver) -> Results:
    """Pyomo's Results for coplug's `result`."""
    results = Results()
    results.solution_loader = loader
    results.termination_condition = _termination(result, config, solver.backend)
    if not result.has_solution:
        results.solution_status = SolutionStatus.noSolution
    elif results.termination_condition is TerminationCondition.convergenceCriteriaSatisfied:
        results.solution_status = SolutionStatus.optimal  # a stop at the caller's gap too,
        # as Pyomo's own SCIP and HiGHS interfaces report it
    else:
        results.solution_status = SolutionStatus.feasible
    results.incumbent_objective = result.objective if result.has_solution else None
    results.objective_bound = _bound(result, model)
    results.solver_name = solver.name
    results.solver_version = solver.version()
    results.solver_config = config
    results.extra_info.nodes = result.nodes
    results.extra_info.coplug = result.to_dict()
    return results


def _termination(result: Result, config: CoplugConfig, backend: str) -> TerminationCondition:
    """Pyomo's termination condition; a stop at the caller's gap limit counts as converged,
    as in Pyomo's own SCIP and HiGHS interfaces."""
    if result.status is Status.FEASIBLE and _within_gap(result, config, backend):
        return TerminationCondition.convergenceCriteriaSatisfied
    if result.extra.get("stopped_at") == OBJECTIVE_LIMIT:
        return TerminationCondition.objectiveLimit
    return _TERMINATION[result.status]


def _within_gap(result: Result, config: CoplugConfig, backend: str) -> bool:
    """Whether the result's gap meets a gap limit the caller set, through Pyomo's options or
    the solver's own (`limits/gap`, `mip_rel_gap`, ...) in `solver_options`."""
    if result.objective is None or result.bound is None:
        return False
    relative, absolute = _gap_limits(backend, config)
    return ((absolute is not None and abs(result.objective - result.bound) <= absolute) or
            (relative is not None and result.gap is not None and result.gap <= relative))


def _gap_limits(backend: str, config: CoplugConfig) -> tuple[float | None, float | None]:
    """The (relative, absolute) gap limits the solve ran under, as `_native_options` set them
    (the native names win over Pyomo's)."""
    native = config.solver_options.value()
    names = _GAP_OPTIONS.get(backend, (None, None))
    return tuple(_number(native.get(name, pyomo_value)) for name, pyomo_value in  # type: ignore
                 zip(names, (config.rel_gap, config.abs_gap), strict=True))


def _number(value: Any) -> float | None:
    """`value` as a float, None where it is none or not a number."""
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _bound(result: Result, model: BlockData) -> float | None:
    """The objective bound; -inf (+inf when maximizing) where the solve proved none, None
    for a model without objective or one found infeasible."""
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    if objective is None or result.status in (Status.INFEASIBLE,
                                              Status.INFEASIBLE_OR_UNBOUNDED):
        return None
    if result.bound is not None:
        return result.bound
    return math.inf if objective.sense == pyo.maximize else -math.inf


def _reason(result: Result) -> str:
    """`: <reason>` where coplug recorded one (or the solve stopped at the caller's
    objective limit, which the status alone does not say)."""
    reason = result.extra.get("reason")
    if not reason and result.extra.get("stopped_at") == OBJECTIVE_LIMIT:
        reason = "stopped at the objective limit the caller set"
    return f": {reason}" if reason else ""


def register() -> None:
    """Register coplug_scip, coplug_highs and coplug_lap with both of Pyomo's factories."""
    for backend, doc in (("scip", "SCIP through coplug (plugins, guards, certified duals)"),
                         ("highs", "HiGHS through coplug (guards, certified duals)"),
                         ("lap", "exact linear assignment (JV) through coplug")):
        name = f"coplug_{backend}"
        if name in SolverFactory:
            continue
        solver = type(f"Coplug{backend.upper()}", (CoplugSolver,), {"backend": backend,
                                                                     "name": name})
        legacy = type(f"LegacyCoplug{backend.upper()}", (LegacyCoplugSolver, solver), {})
        SolverFactory.register(name, doc=doc)(solver, legacy)
