"""SCIP's objective scaling, turned off where it would hang.

With `misc/scaleobj` on (its default) SCIP looks for a scale, up to 1e6, that makes the
objective's coefficients whole, and where one times a coefficient is exactly 2**63 it never
returns, past its own time limit: an assignment with one cost of 2**63, or 2**62 beside a
cost of 0.5, hung. Where the largest objective coefficient reaches SCALE_RISK (below
2**63 / 1e6) the scaling is turned off: it only tells SCIP that the objective takes whole
values, a deduction its tolerances cannot use at that size anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Objective coefficients this large can meet 2**63 under SCIP's scales of up to 1e6.
SCALE_RISK = 2.0**63 / 2.0**20


def guard_objective_scaling(scip: Any, params: Mapping[str, Any]) -> bool:
    """Turn SCIP's objective scaling off where an objective coefficient reaches SCALE_RISK,
    unless the caller set `misc/scaleobj`; whether it did."""
    if "misc/scaleobj" in params or not scip.getParam("misc/scaleobj"):
        return False
    if not any(abs(var.getObj()) >= SCALE_RISK for var in scip.getVars(transformed=False)):
        return False
    scip.setParam("misc/scaleobj", False)
    return True
