"""The plugin protocol: what `coplug.plugins.solve` needs from a SCIP plugin."""

from __future__ import annotations

import warnings
from typing import Any, Protocol, runtime_checkable

from coplug.plugins.varmap import VarMap


@runtime_checkable
class Plugin(Protocol):
    """A SCIP plugin that includes itself into a model before the solve.

    `attach` receives the PySCIPOpt model (problem stage) and the Pyomo<->SCIP variable
    map; it includes branching rules, heuristics or event handlers. `statistics` is
    optional and returns the plugin's own counters, copied into `Result.plugin_stats`.
    """

    name: str

    def attach(self, scip_model: Any, var_map: VarMap) -> None: ...


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
        warnings.warn(f"plugin {plugin_name(plugin)!r}: statistics() failed ({error}); the "
                      "solve's result is kept", UserWarning, stacklevel=2)
        return {"error": error}


def plugin_name(plugin: Any) -> str:
    """The plugin's declared name, or its class name."""
    return str(getattr(plugin, "name", None) or type(plugin).__name__)
