"""Per-variable features for PMVB predictors, read off SCIP's LP at the root.

Each binary variable gets a scale-free vector: objective coefficient (normalised and
ranked, tied coefficients sharing their mean rank), column statistics over the LP rows
(degree, mean and extreme normalised coefficients, share of positive entries, share of
tight rows, row density), the root LP value, its fractionality and the normalised reduced
cost. Objective and reduced cost are both in SCIP's minimisation form, so a model written
as max c'x or as min -c'x gets the same features; rows with one side are read in <= form
(an equality or ranged row keeps the direction it is written in); no formula depends on the
order of the variables or the scale of a row or the objective. The features of a given root
LP are scale-free and order-free; SCIP's presolve and root cuts are neither, so a row or the
objective scaled by 100, or the variables declared in another order, can reach a different
root LP (other values, other kept binaries) and so other features. The same function runs
inside the branching callback and in the training recorder, so training and inference see
identical features.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pyscipopt import SCIP_EVENTTYPE, SCIP_LPSOLSTAT, SCIP_RESULT, Branchrule, Eventhdlr
from scipy.stats import rankdata

from coplug.plugins.pmvb import is_binary_var
from coplug.plugins.varmap import VarMap

# 2: reduced cost in minimisation form, tied objective ranks averaged, >= rows read in
# <= form, the objective's scale taken from all variables when the binaries have none
FEATURE_VERSION = 2

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
    scale = _objective_scale(scip, obj)
    feats[:, 0] = obj / scale
    feats[:, 1] = (rankdata(obj) - 1.0) / max(n - 1, 1)
    lp = np.clip([v.getLPSol() for v in variables], 0.0, 1.0)
    feats[:, 2] = lp
    feats[:, 3] = lp * (1.0 - lp)
    sense = -1.0 if scip.getObjectiveSense() == "maximize" else 1.0
    feats[:, 4] = [sense * _redcost(scip, v) / scale for v in variables]
    feats[:, 5:] = _column_stats(scip, variables)
    feats[:, 5] /= max(feats[:, 5].max(), 1e-9)
    return feats


def _objective_scale(scip: Any, obj: np.ndarray) -> float:
    """Largest |objective coefficient| of the binaries, else of any variable (an objective on
    the other variables alone), else 1: dividing by it keeps the features scale-free."""
    scale = float(np.abs(obj).max())
    if scale > 0.0:
        return scale
    others = [abs(v.getObj()) for v in scip.getVars(transformed=True)]
    return max(others, default=0.0) or 1.0


def _redcost(scip: Any, var: Any) -> float:
    """Reduced cost of a column variable as PySCIPOpt gives it (negated for a maximisation),
    0 for a loose one or when SCIP has none."""
    if not var.isInLP():
        return 0.0
    try:
        return float(scip.getVarRedcost(var) or 0.0)
    except Warning:
        return 0.0


def _column_stats(scip: Any, variables: list[Any]) -> np.ndarray:
    """Per column: degree, mean/max/min row-scaled coefficient, positive share, tight-row
    share and mean row density, accumulated in one pass over the LP rows (a row with only a
    left-hand side is read in <= form, so a x >= b and -a x <= -b agree)."""
    index = {v.name: i for i, v in enumerate(variables)}
    n_cols = max(scip.getNLPCols(), 1)
    entries: list[list[tuple[float, bool, float]]] = [[] for _ in variables]
    for row in scip.getLPRowsData():
        vals = np.asarray(row.getVals(), dtype=float)
        if vals.size == 0:
            continue
        if scip.isInfinity(row.getRhs()) and not scip.isInfinity(-row.getLhs()):
            vals = -vals  # a >= row read as the <= row it is: -a x <= -b
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
    branching they come from its last optimal root LP. An instance solved before any optimal
    root LP (in presolve, or by a heuristic whose solution stopped the root LP at its
    objective limit) yields none. After the solve, `variables` and `features` hold the rows
    (empty then).
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
