"""The plugin protocol: what `coplug.plugins.solve` needs from a SCIP plugin."""

from __future__ import annotations

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
    """The plugin's statistics dictionary, or {} when it keeps none."""
    stats = getattr(plugin, "statistics", None)
    return dict(stats()) if callable(stats) else {}


def plugin_name(plugin: Any) -> str:
    """The plugin's declared name, or its class name."""
    return str(getattr(plugin, "name", None) or type(plugin).__name__)
