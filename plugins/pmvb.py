"""PMVB: probabilistic multi-variable branching (arXiv 2305.12352) as a SCIP branching rule.

A predictor gives, for each binary variable, the probability p_j that it is 1 in an
optimal solution. At the root PMVB branches on two cardinality hyperplanes instead of one
variable: with U = {j : p_j >= t} and L = {j : p_j <= 1 - t},

    likely child   sum_U x >= r_U  and  sum_L x <= r_L
    r_U = ceil(sum_U p - sqrt(|U| ln(1/(1-q)) / 2))
    r_L = floor(sum_L p + sqrt(|L| ln(1/(1-q)) / 2))

(Hoeffding: each hyperplane holds an optimum with probability >= q when the p_j are
calibrated and independent). Two complementary children, ``sum_U x <= r_U - 1`` and
``sum_U x >= r_U, sum_L x >= r_L + 1``, cover the rest of the region, so the three
children partition the feasible set exactly once and the optimum never changes, however
bad the prediction. The likely child gets the highest node selection priority; below the
root SCIP's own rules take over (or PMVB branches again on still-free variables while
``depth > 0``, leaving out each hyperplane that those added on the path to the node already
decide, i.e. imply it or its negation, so that a static prediction does not add the same
hyperplanes at every depth).

Predictors: ``"lp"`` (data-free: the root LP values), a fitted predictor from
`coplug.learned.pmvb_predictors` (or a path to its checkpoint), or probabilities keyed by
Pyomo variable (a `ComponentMap`, or a dict keyed by variable name such as ``"x[3]"``; a
bare sequence is refused, since a Pyomo model has no variable order it could follow).

With ``"lp"`` the root LP optimum x* satisfies both likely-child hyperplanes whenever the
Hoeffding slack is at least one (r_U <= sum_U x*, r_L >= sum_L x*), so the likely child
starts from the root's LP bound: PMVB then gains only through what the cardinality
constraints propagate and how fast the complementary children are pruned.

``mode="prefix"`` is the paper's reference scheme: solve the likely region as its own SCIP
model, then the two complementary regions with the incumbent as objective limit. It needs
several SCIP models, so it runs through `coplug.plugins.pmvb_prefix.solve_pmvb_prefix`,
not as a plugin.
``mode="start"`` uses PMVB as a primal heuristic (`coplug.plugins.pmvb_start`): a short
search of the likely region, then the whole model warm-started from its best solution.
"""

from __future__ import annotations

import math
import numbers
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pyomo.common.collections import ComponentMap
from pyomo.core.base.var import VarData
from pyscipopt import SCIP_RESULT, Branchrule, quicksum

from coplug.plugins.base import check_problem_stage, check_var_map, solve_free_state
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError
from coplug.plugins.limits import SCIP_INT_MAX, checked_scip_int
from coplug.plugins.varmap import VarMap

LIKELY_PRIORITY = 1e6
OTHER_PRIORITY = -1e6
_MODES = ("branch", "prefix", "start")
_MULTI_MODEL = {"prefix": "coplug.plugins.pmvb_prefix.solve_pmvb_prefix",
                "start": "coplug.plugins.pmvb_start.solve_pmvb_start"}
# (t, q) when neither the caller nor a checkpoint's tuning gives them: the paper's defaults.
DEFAULT_T_Q = (0.9, 0.99)
# How far outside [0, 1] a predictor's probability may round (then clipped); beyond, refused.
PROB_SLACK = 1e-9
# Step 1 of prefix mode gives the root one child, which SCIP then treats as its root: an
# in-tree restart there would keep that child's fixings globally and drop its hyperplanes.
_NO_RESTARTS = {"estimation/restarts/restartlimit": 0}
EMPTY_PREDICTOR = "PMVB predictor is an empty string: give 'lp' or a checkpoint path"


@dataclass(frozen=True)
class Hyperplanes:
    """The two PMVB cardinality hyperplanes over `upper` (U) and `lower` (L) index lists.

    ``rhs_upper`` is None when the U-hyperplane is absent (U empty or trivially true),
    likewise ``rhs_lower``.
    """

    upper: tuple[int, ...]
    lower: tuple[int, ...]
    rhs_upper: int | None
    rhs_lower: int | None

    @property
    def empty(self) -> bool:
        """True when neither hyperplane restricts anything (no branching)."""
        return self.rhs_upper is None and self.rhs_lower is None

    def likely_holds(self, x: np.ndarray) -> bool:
        """Whether a 0/1 vector (indexed like the probabilities) lies in the likely child."""
        x = np.asarray(x, dtype=float)
        return planes_hold(x[list(self.upper)].sum(), x[list(self.lower)].sum(),
                           self.rhs_upper, self.rhs_lower)

    def tightness(self, n: int) -> float:
        """Share of the n variables pinned by the hyperplanes in the worst case (0..1)."""
        pinned = (self.rhs_upper or 0) + (
            len(self.lower) - self.rhs_lower if self.rhs_lower is not None else 0
        )
        return pinned / max(n, 1)


def planes_hold(sum_upper: float, sum_lower: float, rhs_upper: int | None,
                rhs_lower: int | None) -> bool:
    """Whether sums over U and L satisfy the likely child (sum_U >= r_U, sum_L <= r_L, up
    to 1e-6); an absent hyperplane (rhs None) always holds."""
    ok_u = rhs_upper is None or sum_upper >= rhs_upper - 1e-6
    ok_l = rhs_lower is None or sum_lower <= rhs_lower + 1e-6
    return bool(ok_u and ok_l)


def hoeffding_hyperplanes(
    probs: np.ndarray, threshold: float = 0.9, confidence: float = 0.99
) -> Hyperplanes:
    """U, L and the Hoeffding right-hand sides for probabilities `probs` (the PMVB rule)."""
    check_pmvb_params(threshold, confidence)
    try:
        p = np.asarray(probs, dtype=float)
    except (TypeError, ValueError):  # text, a dict: numpy's float() message named nothing
        p = np.full((0, 0), np.nan)
    if p.ndim != 1 or np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise InputError("PMVB probabilities must be a 1-D array of numbers in [0, 1]")
    log_term = math.log(1.0 / (1.0 - confidence))
    upper = np.flatnonzero(p >= threshold)
    lower = np.flatnonzero(1.0 - p >= threshold)  # as U's test: 1 - 0.9 is 0.0999...98
    rhs_u = rhs_l = None
    if upper.size:
        slack = math.sqrt(upper.size * log_term / 2.0)
        rhs_u = math.ceil(p[upper].sum() - slack - 1e-9)
        rhs_u = rhs_u if rhs_u > 0 else None
    if lower.size:
        slack = math.sqrt(lower.size * log_term / 2.0)
        rhs_l = math.floor(p[lower].sum() + slack + 1e-9)
        rhs_l = rhs_l if rhs_l < lower.size else None
    return Hyperplanes(
        upper=tuple(int(i) for i in upper) if rhs_u is not None else (),
        lower=tuple(int(i) for i in lower) if rhs_l is not None else (),
        rhs_upper=rhs_u,
        rhs_lower=rhs_l,
    )


def check_pmvb_params(threshold: float, confidence: float) -> None:
    """t in (0.5, 1] keeps U and L disjoint; q in (0, 1) keeps the log finite."""
    for name, value in (("threshold t", threshold), ("confidence q", confidence)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InputError(f"PMVB {name} must be a number, got {value!r}")
    if not 0.5 < _as_float(threshold) <= 1.0:
        raise InputError(f"PMVB threshold t must lie in (0.5, 1], got {threshold}")
    if not 0.0 < _as_float(confidence) < 1.0:
        raise InputError(f"PMVB confidence q must lie in (0, 1), got {confidence}")


def _as_float(value: numbers.Real) -> float:
    """`value` as a float, an integer past float range as an infinity of its sign (float()
    raised OverflowError on 10**400)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_binary_var(var: Any) -> bool:
    """A SCIP variable that is integral with global bounds inside [0, 1]."""
    return var.vtype() in ("BINARY", "INTEGER", "IMPLINT") and (
        var.getLbGlobal() > -0.5 and var.getUbGlobal() < 1.5
    )


class _PMVBRule(Branchrule):
    """The SCIP callback object; all logic and counters live in its owner `PMVBBranching`."""

    def __init__(self, owner: PMVBBranching) -> None:
        self.owner = owner

    def branchinit(self) -> None:
        """A new transformed problem (each optimize after freeTransform, as coplug's second
        solves of a model do): the previous one's nodes and variables are gone."""
        self.owner._new_transformed_problem()

    def branchexeclp(self, allowaddcons: bool) -> dict[str, Any]:
        return {"result": self.owner._branch(self.model, allowaddcons)}

    def branchexecext(self, allowaddcons: bool) -> dict[str, Any]:
        return {"result": SCIP_RESULT.DIDNOTRUN}

    def branchexecps(self, allowaddcons: bool) -> dict[str, Any]:
        return {"result": SCIP_RESULT.DIDNOTRUN}


@dataclass(frozen=True)
class _Cardinality:
    """One node hyperplane ``sum(variables) sense rhs`` over SCIP variables, kept so that
    deeper nodes can tell whether it already implies the hyperplanes they would add."""

    variables: tuple[Any, ...]
    sense: str  # ">=" or "<="
    rhs: int

    @property
    def keys(self) -> frozenset[int]:
        """The variables' SCIP pointers (PySCIPOpt variables are not hashable)."""
        return frozenset(v.ptr() for v in self.variables)

    def implies(self, other: _Cardinality) -> bool:
        """Whether this hyperplane, at the current node's local bounds, implies `other`, a
        hyperplane over free variables only.

        With k of our variables fixed to 1, our free ones sum to at least (at most) rhs - k;
        a ">=" over a superset of our free variables then sums to at least that, a "<=" over
        a subset of ours to at most that.
        """
        if other.sense != self.sense:
            return False
        ones = sum(1 for v in self.variables if v.getLbLocal() > 0.5)
        free = frozenset(v.ptr() for v in self.variables if v.getLbLocal() < v.getUbLocal() - 0.5)
        if self.sense == ">=":
            return free <= other.keys and self.rhs - ones >= other.rhs
        return other.keys <= free and self.rhs - ones <= other.rhs


@dataclass
class _Stats:
    calls: int = 0
    branchings: int = 0
    root_branched: bool = False
    n_upper: int = 0
    n_lower: int = 0
    rhs_upper: int | None = None
    rhs_lower: int | None = None
    n_candidates: int = 0
    seconds: float = 0.0
    error: str | None = None
    likely_held: bool | None = None  # recorded at finish, while SCIP's model is there
    root_bound: float | None = None
    children: list[list[dict[str, Any]]] = field(default_factory=list)

    def forget_root(self) -> None:
        """Drop what describes a root branching (counters and errors stay)."""
        self.root_branched, self.n_upper, self.n_lower = False, 0, 0
        self.rhs_upper = self.rhs_lower = self.root_bound = None
        self.children = []


class PMVBBranching:
    """Probabilistic multi-variable branching plugin for `coplug.plugins.solve`.

    ``PMVBBranching("lp")`` is the data-free variant; pass a fitted predictor, a
    checkpoint path or per-variable probabilities for the learned one. ``threshold`` (t)
    and ``confidence`` (q) are the paper's hyperparameters: left as None they are the
    values train_pmvb tuned for a checkpoint path (its JSON), else 0.9 and 0.99.
    ``depth`` > 0 also branches at nodes down to that depth on their still-free variables.
    """

    name = "pmvb"
    _scip_ref: weakref.ReferenceType[Any] | None = None  # also for a copy, which drops it
    _failure: BaseException | None = None

    def __init__(
        self,
        predictor: Any = "lp",
        threshold: float | None = None,
        confidence: float | None = None,
        mode: str = "branch",
        depth: int = 0,
        priority: int = 1_000_000,
    ) -> None:
        resolved = checked_predictor(predictor)
        threshold, confidence = _tuned_or_default(predictor, threshold, confidence)  # checked
        if not isinstance(mode, str) or mode not in _MODES:
            raise InputError(f"PMVB mode must be one of {_MODES}, got {mode!r}")
        self.predictor = resolved
        self.threshold = float(threshold)
        self.confidence = float(confidence)
        self.mode = mode
        self.depth = checked_scip_int("PMVB depth", depth, 0)
        self.priority = checked_scip_int("PMVB priority", priority, -SCIP_INT_MAX)
        self.only_likely = False
        self._stats = _Stats()
        self._var_map: VarMap | None = None
        self._probs: ComponentMap | None = None
        self.root_planes: tuple[list[Any], list[Any], int | None, int | None] | None = None
        self._root_scip: tuple[list[Any], list[Any]] | None = None
        self._node_planes: dict[tuple[int, int], list[_Cardinality]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the last solve's SCIP model, variable map and SCIP
        variables (a rule that had branched failed to copy inside PySCIPOpt)."""
        return {**solve_free_state(self.__dict__), "_root_scip": None, "_node_planes": {},
                "_failure": None}

    def attach(self, scip_model: Any, var_map: VarMap) -> None:
        """Include the branching rule (highest priority, down to `depth`) into SCIP."""
        if self.mode in _MULTI_MODEL:
            raise InputError(
                f"PMVB mode={self.mode!r} solves several SCIP models: call "
                f"{_MULTI_MODEL[self.mode]}(model, ...) instead of solve()"
            )
        check_problem_stage(scip_model, "PMVBBranching")
        check_var_map(var_map, "PMVBBranching")
        self._scip_ref, self._var_map, self._stats = weakref.ref(scip_model), var_map, _Stats()
        self._failure = None
        self.root_planes = self._root_scip = None
        self._node_planes = {}
        self._probs = _static_probabilities(self.predictor, var_map)
        try:
            scip_model.includeBranchrule(
                _PMVBRule(self), "pmvb", "probabilistic multi-variable branching",
                priority=self.priority, maxdepth=self.depth, maxbounddist=1.0,
            )
        except Exception as exc:  # PySCIPOpt raises a bare Exception for SCIP's error code
            raise InputError(f"SCIP refused the PMVB branching rule ({exc}); pass one "
                             "PMVBBranching per solve") from exc

    def _new_transformed_problem(self) -> None:
        """SCIP transformed the problem anew (a second optimize of the same model): the
        hyperplanes of the previous root and its nodes' record name variables SCIP freed, and
        prefix and start mode's step 1 must branch again at this solve's root."""
        self.root_planes = self._root_scip = None
        self._node_planes = {}
        self._stats.forget_root()

    @property
    def adds_rows(self) -> bool:
        """Whether SCIP searches the likely region only (prefix and start mode's step 1), so
        that its "infeasible" is the region's and its LP not the model's."""
        return self.only_likely

    @property
    def _scip(self) -> Any:
        """The SCIP model of the latest solve, held weakly (None once it is gone): a rule
        kept for its statistics kept every solve's model alive (5 MB each)."""
        return None if self._scip_ref is None else self._scip_ref()

    def finish(self, result: Any) -> None:
        """Record whether the likely child held the optimum, while SCIP's model is there."""
        self._stats.likely_held = self._likely_held()

    def raise_failure(self) -> None:
        """Re-raise what stopped the solve from inside the predictor (a KeyboardInterrupt or
        SystemExit; its exceptions are recorded as `error` instead), and forget it."""
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def statistics(self) -> dict[str, Any]:
        """Counters, the root hyperplanes, and whether the likely child held the optimum."""
        s = self._stats
        return {
            "predictor": _predictor_label(self.predictor),
            "threshold": self.threshold,
            "confidence": self.confidence,
            "calls": s.calls,
            "branchings": s.branchings,
            "root_branched": s.root_branched,
            "candidates": s.n_candidates,
            "n_upper": s.n_upper,
            "n_lower": s.n_lower,
            "rhs_upper": s.rhs_upper,
            "rhs_lower": s.rhs_lower,
            "likely_held": self._likely_held(),
            "seconds": round(s.seconds, 4),
            "error": s.error,
        }

    @property
    def children(self) -> list[list[dict[str, Any]]]:
        """Per child of the (latest, after an in-tree restart) root branching: its
        constraints as read back from SCIP."""
        return self._stats.children

    def _branch(self, scip: Any, allowaddcons: bool) -> Any:
        """One call of the rule: build the hyperplanes at this node and create the children."""
        start = time.perf_counter()
        self._stats.calls += 1
        try:
            if not allowaddcons or (self.only_likely and self.root_planes is not None):
                return SCIP_RESULT.DIDNOTRUN  # prefix step 1 branches once, at the first root
            node_depth = scip.getDepth()
            if node_depth == 0:  # the first root, or a new one after an in-tree restart
                self._node_planes = {}
            try:
                variables, probs = self._candidates(scip, free_only=node_depth > 0)
            except Exception as exc:  # a failing predictor must not abort SCIP's search
                if self._stats.error is None:  # once per solve: it fails alike at each node
                    warn_at_caller(f"PMVB predictor failed, SCIP branches as usual: {exc}",
                                   RuntimeWarning)
                self._stats.error = f"{type(exc).__name__}: {exc}"
                return SCIP_RESULT.DIDNOTRUN
            except BaseException as exc:  # KeyboardInterrupt: raised once SCIP has stopped
                self._failure = exc  # raised here it became SCIP's "unspecified error"
                scip.interruptSolve()
                return SCIP_RESULT.DIDNOTRUN
            planes = hoeffding_hyperplanes(probs, self.threshold, self.confidence)
            inherited = self._path_planes(scip) if node_depth > 0 else []
            planes = _without_implied(planes, variables, inherited)
            if planes.empty:
                return SCIP_RESULT.DIDNOTRUN
            if node_depth == 0:  # a root again after an in-tree restart: report the latest
                self._stats.children = []
                self._stats.root_bound = scip.getDualbound()
            self._create_children(scip, variables, planes, inherited, record=node_depth == 0)
            self._stats.branchings += 1
            if node_depth == 0:
                self._record_root(scip, variables, planes)
            return SCIP_RESULT.BRANCHED
        finally:
            self._stats.seconds += time.perf_counter() - start

    def _path_planes(self, scip: Any) -> list[_Cardinality]:
        """The hyperplanes PMVB added at the current node and its ancestors (nodes below a
        PMVB child that SCIP's own rules made inherit those of their nearest PMVB ancestor)."""
        run, node = scip.getNRuns(), scip.getCurrentNode()
        while node is not None:
            found = self._node_planes.get((run, node.getNumber()))
            if found is not None:
                return found
            node = node.getParent()
        return []

    def _candidates(self, scip: Any, free_only: bool) -> tuple[list[Any], np.ndarray]:
        """Active binary variables with a prediction, and their probabilities."""
        to_pyomo = self._var_map.to_pyomo
        pairs = [(v, to_pyomo(v)) for v in scip.getVars(transformed=True) if is_binary_var(v)]
        pairs = [(v, pv) for v, pv in pairs if pv is not None]  # not the binaries SCIP made
        if free_only:
            pairs = [(v, pv) for v, pv in pairs if v.getLbLocal() < v.getUbLocal() - 0.5]
        if self._probs is not None:
            pairs = [(v, pv) for v, pv in pairs if pv in self._probs]
        variables = [v for v, _ in pairs]
        if not variables:  # nothing to predict: a scikit-learn model would refuse zero rows
            probs = np.zeros(0)
        elif self._probs is not None:
            probs = np.array([self._probs[pv] for _, pv in pairs], dtype=float)
        elif self.predictor == "lp":
            probs = np.array([v.getLPSol() for v in variables], dtype=float)
        else:
            raw = np.asarray(self.predictor.predict_variables(scip, variables))
            if raw.shape != (len(variables),):
                raise InputError(f"predict_variables returned shape {raw.shape} for "
                                 f"{len(variables)} variables")
            probs = _real_array(raw)
            _check_probabilities(probs)
        probs = np.clip(np.nan_to_num(probs, nan=0.5), 0.0, 1.0)  # LP values within 1e-9
        self._stats.n_candidates = max(self._stats.n_candidates, len(variables))
        return variables, probs

    def _create_children(
        self, scip: Any, variables: list[Any], planes: Hyperplanes,
        inherited: list[_Cardinality], record: bool,
    ) -> None:
        """Likely child first (highest priority), then the complementary children; each
        child remembers its hyperplanes and its ancestors' for deeper calls."""
        upper = tuple(variables[i] for i in planes.upper)
        lower = tuple(variables[i] for i in planes.lower)
        ru, rl = planes.rhs_upper, planes.rhs_lower
        keep_u = [_Cardinality(upper, ">=", ru)] if ru is not None else []
        specs = [(LIKELY_PRIORITY,
                  keep_u + ([_Cardinality(lower, "<=", rl)] if rl is not None else []))]
        if not self.only_likely:
            if ru is not None:
                specs.append((OTHER_PRIORITY, [_Cardinality(upper, "<=", ru - 1)]))
            if rl is not None:
                specs.append((OTHER_PRIORITY, keep_u + [_Cardinality(lower, ">=", rl + 1)]))
        estimate, run = scip.getLocalEstimate(), scip.getNRuns()
        for k, (prio, conss) in enumerate(specs):
            child = scip.createChild(prio, estimate)
            added = [scip.addConsNode(child, _linear(c), name=f"pmvb_{k}_{j}")
                     for j, c in enumerate(conss)]
            self._node_planes[(run, child.getNumber())] = inherited + conss
            if record:
                self._stats.children.append([_read_linear(scip, c) for c in added])

    def _record_root(self, scip: Any, variables: list[Any], planes: Hyperplanes) -> None:
        """Keep the root hyperplanes (SCIP and Pyomo variables) for statistics and prefix."""
        s = self._stats
        s.root_branched = True
        s.n_upper, s.n_lower = len(planes.upper), len(planes.lower)
        s.rhs_upper, s.rhs_lower = planes.rhs_upper, planes.rhs_lower
        self._root_scip = (
            [variables[i] for i in planes.upper], [variables[i] for i in planes.lower]
        )
        to_pyomo = self._var_map.to_pyomo
        self.root_planes = (
            [to_pyomo(variables[i]) for i in planes.upper],
            [to_pyomo(variables[i]) for i in planes.lower],
            planes.rhs_upper,
            planes.rhs_lower,
        )

    def _likely_held(self) -> bool | None:
        """Whether SCIP's best solution lies in the likely child (None before/without one;
        once SCIP's model is gone, what `finish` recorded)."""
        scip = self._scip
        if scip is None:
            return self._stats.likely_held
        if self._root_scip is None or scip.getNSols() == 0:
            return None
        best = scip.getBestSol()
        upper, lower = self._root_scip
        s = self._stats
        try:
            sum_u = sum(scip.getSolVal(best, v) for v in upper)
            sum_l = sum(scip.getSolVal(best, v) for v in lower)
        except Exception:  # the transformed problem may already be freed
            return None
        return planes_hold(sum_u, sum_l, s.rhs_upper, s.rhs_lower)


def _linear(plane: _Cardinality) -> Any:
    """The PySCIPOpt constraint expression of a cardinality hyperplane."""
    total = quicksum(plane.variables)
    return total >= plane.rhs if plane.sense == ">=" else total <= plane.rhs


def _without_implied(
    planes: Hyperplanes, variables: list[Any], inherited: list[_Cardinality]
) -> Hyperplanes:
    """`planes` less each hyperplane that the inherited ones already decide (imply it or
    its negation): branching on it would give a child equal to its parent and an empty one,
    over and over down to `depth`."""
    def decided(indices: tuple[int, ...], sense: str, rhs: int | None) -> bool:
        if rhs is None or not inherited:
            return False
        scip_vars = tuple(variables[i] for i in indices)
        plane = _Cardinality(scip_vars, sense, rhs)
        negation = (_Cardinality(scip_vars, "<=", rhs - 1) if sense == ">="
                    else _Cardinality(scip_vars, ">=", rhs + 1))
        return any(a.implies(plane) or a.implies(negation) for a in inherited)

    drop_u = decided(planes.upper, ">=", planes.rhs_upper)
    drop_l = decided(planes.lower, "<=", planes.rhs_lower)
    if not (drop_u or drop_l):
        return planes
    return Hyperplanes(upper=() if drop_u else planes.upper,
                       lower=() if drop_l else planes.lower,
                       rhs_upper=None if drop_u else planes.rhs_upper,
                       rhs_lower=None if drop_l else planes.rhs_lower)


def _real_array(raw: np.ndarray) -> np.ndarray:
    """A predictor's answer as a float array; complex or non-numeric output is refused (numpy
    would drop an imaginary part with only a warning)."""
    if raw.dtype.kind not in "biuf":
        raise InputError(f"predict_variables must return real numbers, got {raw.dtype} values")
    return raw.astype(float)


def _check_probabilities(probs: np.ndarray) -> None:
    """A predictor's answer must be probabilities: NaN, inf or values outside [0, 1] name
    the first offender (the rule then records the error and lets SCIP branch as usual)."""
    bad = ~np.isfinite(probs) | (probs < -PROB_SLACK) | (probs > 1.0 + PROB_SLACK)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"predict_variables returned {float(probs[k])} for variable {k} "
                         f"({int(bad.sum())} of {probs.size} not in [0, 1])")


def _read_linear(scip: Any, cons: Any) -> dict[str, Any]:
    """A node constraint as SCIP stores it: {var name: coefficient}, lhs, rhs."""
    return {
        "coefs": dict(scip.getValsLinear(cons)),
        "lhs": scip.getLhs(cons),
        "rhs": scip.getRhs(cons),
    }


def _tuned_or_default(
    predictor: Any, threshold: float | None, confidence: float | None
) -> tuple[float, float]:
    """Fill an unset t or q from a checkpoint path's tuned values, else DEFAULT_T_Q."""
    meta: dict[str, Any] = {}
    if (threshold is None or confidence is None) and (
        (isinstance(predictor, str) and predictor != "lp") or hasattr(predictor, "__fspath__")
    ):
        from coplug.learned.pmvb_predictors import checkpoint_metadata

        meta = checkpoint_metadata(predictor)
        check_metadata(meta, Path(predictor).with_suffix(".json"), threshold, confidence)
    return tuned_t_q(meta, threshold, confidence)


def check_metadata(meta: Any, where: Path, threshold: float | None = None,
                   confidence: float | None = None) -> None:
    """A checkpoint's JSON must be an object whose tuned t and q, where present and not
    given by the caller (`threshold`, `confidence`), are numbers in range; the error names
    the file, since the user never typed these values (a t the caller overrode was refused
    as the file's)."""
    if not isinstance(meta, Mapping):
        raise InputError(f"PMVB checkpoint metadata {where} must be a JSON object, got "
                         f"{type(meta).__name__}")
    try:
        check_pmvb_params(
            meta.get("threshold", DEFAULT_T_Q[0]) if threshold is None else DEFAULT_T_Q[0],
            meta.get("confidence", DEFAULT_T_Q[1]) if confidence is None else DEFAULT_T_Q[1])
    except InputError as exc:
        raise InputError(f"PMVB checkpoint metadata {where}: {exc}") from None


def tuned_t_q(
    meta: Mapping[str, Any], threshold: float | None, confidence: float | None
) -> tuple[float, float]:
    """t and q as given, else a checkpoint's tuned "threshold"/"confidence", else DEFAULT_T_Q."""
    t = meta.get("threshold", DEFAULT_T_Q[0]) if threshold is None else threshold
    q = meta.get("confidence", DEFAULT_T_Q[1]) if confidence is None else confidence
    check_pmvb_params(t, q)
    return float(t), float(q)


def checked_predictor(predictor: Any) -> Any:
    """Validate the predictor argument; load a checkpoint given by path (and check that it
    fits the rule's features and 0/1 labels)."""
    if isinstance(predictor, str) and predictor == "lp":
        return "lp"
    if isinstance(predictor, str) and not predictor.strip():
        raise InputError(EMPTY_PREDICTOR)
    if isinstance(predictor, str) or hasattr(predictor, "__fspath__"):
        from coplug.learned.pmvb_predictors import load_predictor

        loaded = load_predictor(predictor)
        _check_fitted(loaded)  # a checkpoint fitted on other features than the rule computes
        return loaded
    if isinstance(predictor, bytes):  # a Sequence too, but meant as a path
        raise InputError("PMVB checkpoint paths must be str or os.PathLike, not bytes "
                         f"({predictor!r}); decode it (os.fsdecode)")
    if isinstance(predictor, type):  # its unbound predict_variables fails at every root
        raise InputError(f"PMVB predictor {predictor.__name__} is a class: pass a fitted "
                         "instance (or load_predictor(path))")
    if callable(getattr(predictor, "predict_variables", None)):
        _check_fitted(predictor)
        return predictor
    if isinstance(predictor, (Mapping, ComponentMap)):
        return predictor
    if isinstance(predictor, (Sequence, np.ndarray)):
        raise InputError(
            "PMVB probabilities need their variables: give a dict keyed by variable name "
            "({'x[3]': 0.9}) or a ComponentMap keyed by Pyomo variable, not a bare sequence "
            "(the model has no variable order a list could follow)"
        )
    raise InputError(
        "PMVB predictor must be 'lp', a fitted coplug.learned predictor, a checkpoint "
        f"path, or probabilities keyed by Pyomo variable; got {type(predictor).__name__}"
    )


def _check_fitted(predictor: Any) -> None:
    """A scikit-learn style predictor must be fitted, on the features PMVB computes (and a
    PMVBPredictor on 0/1 labels), so a misfit one is refused here, not at every solve."""
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from coplug.learned.pmvb_features import FEATURE_NAMES
    from coplug.learned.pmvb_predictors import PMVBPredictor, _column_of_one

    if not isinstance(predictor, BaseEstimator):
        return
    try:
        check_is_fitted(predictor)
    except NotFittedError:
        raise InputError(f"PMVB predictor {type(predictor).__name__} is not fitted: call "
                         "fit(X, y) or load a checkpoint") from None
    if isinstance(predictor, PMVBPredictor):
        _column_of_one(predictor)  # other labels than 0/1 would fail at every root
    width = getattr(predictor, "n_features_in_", len(FEATURE_NAMES))
    if width != len(FEATURE_NAMES):
        raise InputError(f"PMVB predictor was fitted on {width} features; the rule computes "
                         f"{len(FEATURE_NAMES)} (coplug.learned.pmvb_features.FEATURE_NAMES)")


def _is_pyomo_binary(var: Any) -> bool:
    """A Pyomo variable PMVB can branch on: integer with bounds that, rounded inward, lie
    inside [0, 1] (as SCIP's side reads it: (-0.5, 1.5) holds only 0 and 1)."""
    lb, ub = var.bounds
    return (var.is_integer() and lb is not None and ub is not None
            and math.ceil(lb - 1e-9) >= 0 and math.floor(ub + 1e-9) <= 1)


def _probability(var: Any, p: Any) -> float:
    """One given probability as a float in [0, 1], naming the variable otherwise."""
    name = getattr(var, "name", var)
    if isinstance(p, np.ndarray) and p.ndim == 0:
        p = p.item()
    try:
        if not isinstance(p, numbers.Real) or isinstance(p, (bool, np.bool_)):
            raise TypeError
        value = float(p)
    except (TypeError, ValueError):
        raise InputError(f"PMVB probability for {name} must be a number, got {p!r}") from None
    if not 0.0 <= value <= 1.0:
        raise InputError(f"PMVB probability for {name} is {value}, not in [0, 1]")
    return value


def _static_probabilities(predictor: Any, var_map: VarMap) -> ComponentMap | None:
    """Probabilities given up front, keyed by Pyomo variable (None for lp/learned)."""
    if isinstance(predictor, str) or callable(getattr(predictor, "predict_variables", None)):
        return None
    by_name: dict[str, Any] = {}
    for var in var_map:
        by_name.setdefault(var.name, []).append(var)
    items = []
    for key, p in predictor.items():
        known = key in by_name if isinstance(key, str) else key in var_map
        if not known and _unused_variable(key, var_map.block, var_map):
            continue  # no SCIP column: nothing to branch on, as for a fixed variable
        if isinstance(key, str) and key not in by_name:
            raise InputError(f"PMVB probability given for {key!r}, not the name of a variable "
                             "of this model's active constraints or objective")
        if isinstance(key, str) and len(by_name[key]) > 1:
            raise InputError(f"PMVB probability given for {key!r}, the name of "
                             f"{len(by_name[key])} variables (x[None] and x['None'] print "
                             "alike): key the probabilities by variable (a ComponentMap)")
        if not isinstance(key, str) and key not in var_map:
            raise InputError(f"PMVB probability key {getattr(key, 'name', key)!r} is not a "
                             f"variable of the model solved{_key_hint(key)}")
        items.append((by_name[key][0] if isinstance(key, str) else key, p))
    probs = ComponentMap()
    for var, p in items:
        if not _is_pyomo_binary(var):
            raise InputError(f"PMVB branches on binaries; {var.name} (bounds {var.bounds}, "
                             f"domain {var.domain.name}) is not one")
        probs[var] = _probability(var, p)
    return probs


def _key_hint(key: Any) -> str:
    """Why a probability key is no variable of the model solved, where it can be told."""
    if getattr(key, "is_indexed", lambda: False)():
        return " (an indexed variable: key each of its entries, m.x[i])"
    if isinstance(key, VarData):
        return " (a variable of another model, or outside the block solved)"
    return ""


def _unused_variable(key: Any, block: Any, var_map: VarMap) -> bool:
    """Whether `key` (a variable or its name) is a variable of the solved `block` that no
    active row or objective uses (none of `var_map`): a probability over every binary the
    model declares had refused the solve over one left unused."""
    if block is None:
        return False
    try:  # names are full names, read from the top model (a sub-block may be solved)
        found = block.model().find_component(key) if isinstance(key, str) else key
    except (AssertionError, IndexError, KeyError, TypeError, ValueError):
        return False  # no name Pyomo can read (`x[`, `]`): refused as any unknown name
    if not isinstance(found, VarData) or found in var_map or (
            isinstance(key, str) and found.name != key):
        return False  # `x[01]` finds x[1] but is not its name: refused as before
    try:
        parent = found.parent_block()
    except AttributeError:  # its model is gone (Pyomo holds components weakly)
        return False
    while parent is not None and parent is not block:
        parent = parent.parent_block()
    return parent is block


def _predictor_label(predictor: Any) -> str:
    """Short name of the predictor for statistics."""
    if isinstance(predictor, str):
        return predictor
    if callable(getattr(predictor, "predict_variables", None)):
        return str(getattr(predictor, "kind", type(predictor).__name__))
    return "given"


def steps_options(caller: str, time_limit: float | None, params: dict[str, Any]
                  ) -> tuple[float | None, dict[str, Any]]:
    """The checked `time_limit` and SCIP options of a PMVB call made of several SCIP solves
    (`solve_pmvb_prefix`, `solve_pmvb_start`): `solver` must name SCIP (any case, as in
    `solve`), and a native `limits/time` (or `options=`) covers the whole call, as
    `time_limit` does; it gave every step its full limit, and 10**400 seconds raised
    OverflowError after step 1."""
    from coplug.plugins.bridge import refuse_sibling_keywords, whole_call_options

    refuse_sibling_keywords(params, caller, {"plugins": "it runs its own",
                                             "progress": "its steps draw no progress line"})
    solver = params.get("solver", "scip")
    if not isinstance(solver, str) or solver.lower() != "scip":
        raise InputError(f"{caller} runs SCIP (PMVB branches inside it); got "
                         f"solver={solver!r}")
    rest = {key: value for key, value in params.items() if key != "solver"}
    return whole_call_options("scip", time_limit, rest)
