"""Per-variable features for PMVB predictors, read off SCIP's LP at the root.

Each binary variable gets a scale-free vector: objective coefficient (normalised and
ranked, in SCIP's minimisation form), column statistics over the LP rows (degree, mean
and extreme normalised coefficients, share of positive entries, share of tight rows, row
density), the root LP value, its fractionality and the normalised reduced cost. The same
function runs inside the branching callback and in the training recorder, so training and
inference see identical features.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyscipopt import SCIP_EVENTTYPE, SCIP_LPSOLSTAT, SCIP_RESULT, Branchrule, Eventhdlr

from coplug.plugins.pmvb import is_binary_var
from coplug.plugins.varmap import VarMap

FEATURE_NAMES: tuple[str, ...] = (
    "obj_norm",
    "obj_rank",
    "lp_value",
    "lp_fractionality",
    "redcost_norm",
    "degree",
    "coef_mean",
    "coef_max",
    "coef_min",
    "coef_pos_share",
    "tight_share",
    "row_density",
)


def root_features(scip: Any, variables: list[Any]) -> np.ndarray:
    """Feature matrix (len(variables), len(FEATURE_NAMES)) at the current LP solution."""
    n = len(variables)
    feats = np.zeros((n, len(FEATURE_NAMES)))
    if n == 0:
        return feats
    obj = np.array([v.getObj() for v in variables], dtype=float)
    scale = max(np.abs(obj).max(), 1e-9)
    feats[:, 0] = obj / scale
    feats[:, 1] = np.argsort(np.argsort(obj)) / max(n - 1, 1)
    lp = np.clip([v.getLPSol() for v in variables], 0.0, 1.0)
    feats[:, 2] = lp
    feats[:, 3] = lp * (1.0 - lp)
    feats[:, 4] = [_redcost(scip, v) / scale for v in variables]
    feats[:, 5:] = _column_stats(scip, variables)
    feats[:, 5] /= max(feats[:, 5].max(), 1e-9)
    return feats


def _redcost(scip: Any, var: Any) -> float:
    """Reduced cost of a column variable, 0 for a loose one or when SCIP has none."""
    if not var.isInLP():
        return 0.0
    try:
        return float(scip.getVarRedcost(var) or 0.0)
    except Warning:
        return 0.0


def _column_stats(scip: Any, variables: list[Any]) -> np.ndarray:
    """Per column: degree, mean/max/min row-scaled coefficient, positive share, tight-row
    share and mean row density, accumulated in one pass over the LP rows."""
    index = {v.name: i for i, v in enumerate(variables)}
    n_cols = max(scip.getNLPCols(), 1)
    entries: list[list[tuple[float, bool, float]]] = [[] for _ in variables]
    for row in scip.getLPRowsData():
        vals = np.asarray(row.getVals(), dtype=float)
        if vals.size == 0:
            continue
        amax = max(float(np.abs(vals).max()), 1e-9)
        activity = scip.getRowLPActivity(row)
        tight = scip.isFeasEQ(activity, row.getLhs()) or scip.isFeasEQ(activity, row.getRhs())
        density = row.getNNonz() / n_cols
        for col, a in zip(row.getCols(), vals, strict=True):
            i = index.get(col.getVar().name)
            if i is not None:
                entries[i].append((a / amax, bool(tight), density))
    out = np.zeros((len(variables), 7))
    for i, rows in enumerate(entries):
        if rows:
            arr = np.array(rows, dtype=float)
            scaled = arr[:, 0]
            out[i] = (len(rows), scaled.mean(), scaled.max(), scaled.min(),
                      (scaled > 0).mean(), arr[:, 1].mean(), arr[:, 2].mean())
    return out


def binary_variables(scip: Any) -> list[Any]:
    """Active (transformed) variables that are integral within [0, 1]."""
    return [v for v in scip.getVars(transformed=True) if is_binary_var(v)]


class _Recorder(Branchrule):
    """Reads the root features at the first branching and lets SCIP branch as usual."""

    def __init__(self, owner: RootFeatureRecorder) -> None:
        self.owner = owner

    def branchexeclp(self, allowaddcons: bool) -> dict[str, Any]:
        if self.model.getDepth() == 0:
            self.owner._record(self.model)
            self.owner.branched = True
        return {"result": SCIP_RESULT.DIDNOTRUN}

    def branchexecext(self, allowaddcons: bool) -> dict[str, Any]:
        return {"result": SCIP_RESULT.DIDNOTRUN}

    def branchexecps(self, allowaddcons: bool) -> dict[str, Any]:
        return {"result": SCIP_RESULT.DIDNOTRUN}


class _RootLPWatcher(Eventhdlr):
    """Reads the root features after every optimal root LP (the last one wins)."""

    def __init__(self, owner: RootFeatureRecorder) -> None:
        self.owner = owner

    def eventinit(self) -> None:
        self.model.catchEvent(SCIP_EVENTTYPE.LPSOLVED, self)

    def eventexit(self) -> None:
        self.model.dropEvent(SCIP_EVENTTYPE.LPSOLVED, self)

    def eventexec(self, event: Any) -> None:
        scip = self.model
        optimal = scip.getLPSolstat() == SCIP_LPSOLSTAT.OPTIMAL
        if scip.getDepth() == 0 and optimal and not self.owner.branched:
            self.owner._record(scip)


class RootFeatureRecorder:
    """coplug plugin: records root features keyed by Pyomo variable (for training data).

    Features come from the root LP SCIP branches on; when SCIP closes the root without
    branching they come from its last optimal root LP, so every solved instance yields
    data. After the solve, `variables` and `features` hold the rows (empty if no LP).
    """

    name = "pmvb_recorder"

    def __init__(self) -> None:
        self.variables: list[Any] = []
        self.features = np.zeros((0, len(FEATURE_NAMES)))
        self.branched = False
        self._var_map: VarMap | None = None

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        """Include the recording rule with the highest priority, root only."""
        self._var_map = var_map
        scip_model.includeBranchrule(
            _Recorder(self), "pmvb_recorder", "records PMVB root features",
            priority=2_000_000, maxdepth=0, maxbounddist=1.0,
        )
        scip_model.includeEventhdlr(_RootLPWatcher(self), "pmvb_root_lp",
                                    "records PMVB features at root LPs")

    def _record(self, scip: Any) -> None:
        """Keep the features of every binary variable that maps to a Pyomo variable."""
        pairs = [(v, self._var_map.to_pyomo(v)) for v in binary_variables(scip)]
        pairs = [(v, p) for v, p in pairs if p is not None]
        self.variables = [p for _, p in pairs]
        self.features = root_features(scip, [v for v, _ in pairs])
