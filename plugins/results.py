"""The results object every coplug solve returns, whatever the backend."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from coplug.plugins.value_equality import ValueEquality

# `result.extra["stopped_at"]` where the solve stopped at an objective limit the caller set
# (SCIP's limits/primal or limits/dual, HiGHS's objective_target or objective_bound): the
# status stays `feasible` (or `unknown` without a point), Pyomo's factories say objectiveLimit.
OBJECTIVE_LIMIT = "objective_limit"


class Status(str, Enum):
    """Why a solve stopped; `has_solution` says whether a point was loaded."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    TIME_LIMIT = "time_limit"
    NODE_LIMIT = "node_limit"
    ITERATION_LIMIT = "iteration_limit"
    MEMORY_LIMIT = "memory_limit"
    INTERRUPTED = "interrupted"
    UNKNOWN = "unknown"


@dataclass(eq=False)
class Result(ValueEquality):
    """Outcome of one solve: status, objective, bound, gap, nodes, time and plugin statistics.

    `time` is the solver's own seconds (SCIP's solving time, HiGHS's run time; for 'lap'
    from reading the model's assignment structure on; for HiGHS's lazy rounds their wall
    time; for `race` the race's), not the model's translation; `nodes` counts SCIP's over
    its restarts. `values` is the solution by variable name where there are no Pyomo
    variables to load it into (`solve_file`); None otherwise, and without a solution."""

    status: Status
    solver: str
    objective: float | None = None
    bound: float | None = None
    nodes: int = 0
    time: float = 0.0
    has_solution: bool = False
    plugin_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    values: dict[str, float] | None = None

    @property
    def gap(self) -> float | None:
        """Relative gap |objective - bound| / max(|objective|, 1e-9); None without both."""
        if self.objective is None or self.bound is None:
            return None
        return relative_gap(self.objective, self.bound)

    @property
    def optimal(self) -> bool:
        """True when the solver proved optimality."""
        return self.status is Status.OPTIMAL

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (infinite numbers become strings; `values` only where set)."""
        data = asdict(self)
        data["status"] = self.status.value
        data["gap"] = self.gap
        if self.values is None:
            del data["values"]
        return _json_safe(data)


def relative_gap(objective: float, bound: float) -> float:
    """|objective - bound| / max(|objective|, 1e-9): 0 within 1e-12, inf unless both are
    finite (the gap `Result` reports and the progress line shows)."""
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return math.inf
    diff = abs(objective - bound)
    return 0.0 if diff <= 1e-12 else diff / max(abs(objective), 1e-9)


def _json_safe(value: Any) -> Any:
    """Replace non-finite floats by strings so `json.dumps` stays strict."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value
