"""The plugin protocol: what `coplug.plugins.solve` needs from a SCIP plugin."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from typing import Any, Protocol, runtime_checkable

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError
from coplug.plugins.varmap import VarMap


@runtime_checkable
class Plugin(Protocol):
    """A SCIP plugin that includes itself into a model before the solve.

    `attach` receives the PySCIPOpt model (problem stage) and the Pyomo<->SCIP variable
    map; it includes branching rules, heuristics or event handlers. `statistics` is
    optional and returns the plugin's own counters, copied into `Result.plugin_stats`.
    One that calls `interruptSolve()` itself says so with `stopped_solve = True`, or its
    stop counts as a Ctrl-C (`coplug.plugins.interrupts`).
    `raise_failure`, also optional, re-raises an error the plugin caught inside a SCIP
    callback (where raising would only give SCIP an error code): `solve` calls it once SCIP
    has stopped. A plugin with `adds_rows = True` adds rows the Pyomo model does not hold,
    so `solve` loads no LP duals from its solve (LazyConstraints' rows are put in the model
    for a re-solve that gives them: `coplug.plugins.lazy_duals`). One with
    `attach_highs(highs, columns, block, rejects)` runs in HiGHS too (`OnSolution`); HiGHS
    refuses the others by name. One with `finish(result)` is told the outcome once the
    solution is loaded (`SolutionPool`).
    """

    name: str

    def attach(self, scip_model: Any, var_map: VarMap) -> None: ...


def checked_user_function(fn: Any, what: str) -> Any:
    """`fn` when callable, else an InputError saying `what` is needed ("a function
    separate(solution)")."""
    if not callable(fn):
        raise InputError(f"{what}, got {fn!r}")
    return fn


def checked_plugin_name(name: Any) -> str:
    """A plugin's name (its SCIP plugin's name and `plugin_stats` key): an identifier."""
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"a plugin name must be an identifier like 'subtours', got {name!r}")
    return name


def check_problem_stage(scip_model: Any, plugin: str) -> None:
    """Refuse, by name, a SCIP model past its problem stage: SCIP includes no plugin once it
    has transformed or solved the model, and its rows are then the presolved ones."""
    from pyscipopt import SCIP_STAGE

    if scip_model.getStage() != SCIP_STAGE.PROBLEM:
        raise InputError(f"{plugin} attaches to a SCIP model before its optimize(): call "
                         "freeTransform() on a solved model first")


def check_var_map(var_map: Any, plugin: str) -> None:
    """Refuse a missing Pyomo<->SCIP variable map by name: the plugin speaks in the Pyomo
    model's variables, which only `coplug.plugins.solve` maps (a None failed later, inside
    SCIP's callbacks)."""
    if not isinstance(var_map, VarMap):
        raise InputError(f"{plugin} needs the VarMap of a Pyomo model, got {var_map!r}: pass "
                         "it to coplug.plugins.solve(model, plugins=[...])")


def solve_free_state(state: dict[str, Any]) -> dict[str, Any]:
    """A plugin's `__dict__` for pickling and copying, without what ties it to a finished
    solve: variable maps and SCIP or HiGHS objects become None, weak references are dropped
    (the class default stands). Used once, a plugin failed to pickle inside PySCIPOpt."""
    def tied(value: Any, depth: int = 0) -> bool:
        if isinstance(value, (list, tuple)):  # rows of SCIP variables, say (OnSolution's)
            ends = value if len(value) <= 8 else (*value[:4], *value[-4:])  # alike throughout
            return depth < 3 and any(tied(item, depth + 1) for item in ends)
        module = type(value).__module__ or ""
        return isinstance(value, VarMap) or module.startswith(("pyscipopt", "highspy"))

    return {key: None if tied(value) else value for key, value in state.items()
            if not isinstance(value, weakref.ReferenceType)}


class UserCallbackPlugin:
    """Base of the plugins that run a user's function inside SCIP's callbacks.

    The first exception that function raises is kept and SCIP asked to stop (raised there,
    it would only become SCIP's "unspecified error"); `raise_failure` re-raises it once SCIP
    has stopped. SCIP's model is held by a weak reference: a plugin kept after its solve
    (for its statistics) must not keep the model alive until the interpreter exits, where
    PySCIPOpt frees it after its plugins and crashed (segmentation fault).
    """

    _failure: BaseException | None = None
    _scip_ref: Callable[[], Any] = staticmethod(lambda: None)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the last solve's SCIP model and variable map."""
        return solve_free_state(self.__dict__)

    def bind(self, scip_model: Any, var_map: Any) -> None:
        """Hold `scip_model` (weakly) for this solve and forget an earlier failure; refuse a
        model past its problem stage or a missing variable map."""
        check_problem_stage(scip_model, type(self).__name__)
        check_var_map(var_map, type(self).__name__)
        self._scip_ref = weakref.ref(scip_model)
        self._failure = None

    @property
    def _scip(self) -> Any:
        """The SCIP model of the solve in progress (None once it is gone)."""
        return self._scip_ref()

    def fail(self, exc: BaseException) -> None:
        """Keep `exc` (the first one only) and interrupt the solve."""
        if self._failure is None:
            self._failure = exc
        self.stop_if_failed()

    def stop_if_failed(self) -> bool:
        """Whether a failure is kept; if so, ask SCIP (again) to stop. SCIP refuses while it
        starts a solve (its INITSOLVE stage checks the start solutions): the error escaped
        the callback with PySCIPOpt's traceback and the model could not be freed."""
        from pyscipopt import SCIP_STAGE

        scip = self._scip
        if self._failure is None or scip is None:
            return self._failure is not None
        if scip.getStage() != SCIP_STAGE.INITSOLVE:  # else the next callback asks again
            scip.interruptSolve()
        return True

    def raise_failure(self) -> None:
        """Re-raise the kept exception, if any, and forget it."""
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure


def raise_plugin_failures(plugins: Any) -> None:
    """Re-raise the first error a plugin caught inside SCIP's callbacks (its `raise_failure`)."""
    for plugin in plugins:
        raise_failure = getattr(plugin, "raise_failure", None)
        if callable(raise_failure):
            raise_failure()


@contextmanager
def plugins_held(plugins: Any) -> Iterator[None]:
    """Within the block the plugins with `held()` (those handing solutions to the user) hand
    on none: a run whose points are not the model's."""
    with ExitStack() as stack:
        for plugin in plugins:
            held = getattr(plugin, "held", None)
            if callable(held):
                stack.enter_context(held())
        yield


def finish_plugins(plugins: Any, result: Any) -> None:
    """Hand the finished solve's result to each plugin with `finish(result)` (its solution is
    loaded into the Pyomo model by then), then take their statistics anew."""
    finishing = [p for p in plugins if callable(getattr(p, "finish", None))]
    for plugin in finishing:
        plugin.finish(result)
    result.plugin_stats.update(plugins_statistics(finishing))


@contextmanager
def released_on_failure(plugins: Any) -> Iterator[None]:
    """Call each plugin's optional `solve_failed()` when the solve raises, to release what
    it holds for the solve (Progress's line and its duplicate of stderr): `finish` is not
    called then, and the kept exception's traceback held them until a full garbage
    collection. The solve's own error stands: one such call that fails does not replace it
    nor keep the others from running."""
    try:
        yield
    except BaseException:
        for plugin in plugins:
            hook = getattr(plugin, "solve_failed", None)
            if callable(hook):
                with suppress(Exception):
                    hook()
        raise


def plugins_statistics(plugins: Any) -> dict[str, dict[str, Any]]:
    """Each plugin's `plugin_statistics` under its name, but for a plugin that keeps no
    report (`reports` False: the live line a command draws, which the caller never asked
    for)."""
    return {plugin_name(p): plugin_statistics(p) for p in plugins
            if getattr(p, "reports", True)}


def stopped_by_plugin(plugins: Any) -> bool:
    """Whether a plugin interrupted SCIP on purpose (`stopped_solve`, as `OnSolution` after
    its callback said stop): SCIP reports that as `userinterrupt`, as it does Ctrl-C."""
    return any(getattr(plugin, "stopped_solve", False) for plugin in plugins)


def calls_back_after_loading(plugins: Any) -> bool:
    """Whether a plugin runs user code once the solution is loaded (`OnSolution.finish`),
    so that a failure there must put back the model's values (`restored_on_failure`)."""
    return any(getattr(plugin, "calls_back_after_loading", False) for plugin in plugins)


def adds_rows(plugins: Any) -> bool:
    """Whether a plugin adds rows of its own (`adds_rows`), making SCIP's model not Pyomo's."""
    return any(getattr(plugin, "adds_rows", False) for plugin in plugins)


def plugin_statistics(plugin: Any) -> dict[str, Any]:
    """The plugin's statistics dictionary, or {} when it keeps none. One that fails (raises,
    or returns no mapping) gives {"error": ...} and a warning: the solve it reports on has
    finished, and its result must not be lost to the report."""
    stats = getattr(plugin, "statistics", None)
    if not callable(stats):
        return {}
    try:
        return dict(stats())
    except Exception as exc:  # a third-party plugin's bug, whatever its type
        error = f"{type(exc).__name__}: {exc}"
        warn_at_caller(f"plugin {plugin_name(plugin)!r}: statistics() failed ({error}); the "
                       "solve's result is kept")
        return {"error": error}


def plugin_name(plugin: Any) -> str:
    """The plugin's declared name, or its class name."""
    return str(getattr(plugin, "name", None) or type(plugin).__name__)
