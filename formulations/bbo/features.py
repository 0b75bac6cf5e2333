"""Exploratory-landscape-analysis features on a Latin-hypercube sample, and distances.

Features (all invariant to y -> a y + b, a > 0, down to float64 rounding: a large b rounds
the values, and the basin search stops sooner): skewness and excess kurtosis of y,
fitness-distance correlation, dispersion of the best 10%, number of basins reached by a
batched compass local search from every sample point, and R^2 of linear and quadratic
meta-models. Targets may be programs, BBOB problems, Python callables on
(n, dim) arrays, or Pyomo models with box-bounded variables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from scipy.spatial.distance import pdist
from scipy.stats import kurtosis, qmc, skew
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from coplug.formulations.bbo.evaluate import numpy_evaluator
from coplug.formulations.bbo.grammar import Program, check_box
from coplug.formulations.bbo.pyomo_model import auxiliary_definitions, update_auxiliaries
from coplug.formulations.checks import check_count, check_memory, check_seed
from coplug.plugins.arguments import refuse_masked
from coplug.plugins.errors import InputError

MIN_SAMPLE = 10  # points the features need at least (nearest neighbours, a regression)

FEATURE_NAMES = ("y_skewness", "y_kurtosis", "fdc", "dispersion", "basins", "lin_r2", "quad_r2")


@dataclass(frozen=True)
class BoxFunction:
    """A black-box objective `f((n, dim)) -> (n,)` on the box [lower, upper]."""

    f: Callable[[np.ndarray], np.ndarray]
    dim: int
    lower: np.ndarray
    upper: np.ndarray
    name: str = "f"

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.f(np.atleast_2d(X)), dtype=float).reshape(-1)

    def scale(self, unit: np.ndarray) -> np.ndarray:
        """Map points of the unit cube into the box."""
        return self.lower + unit * (self.upper - self.lower)


def as_box_function(target: Any, dim: int | None = None, lower: float = -5.0,
                    upper: float = 5.0, name: str | None = None) -> BoxFunction:
    """Wrap a Program, BBOBProblem, Pyomo model or callable (needs `dim`) as a BoxFunction."""
    if name is not None and not isinstance(name, str):  # an array failed on `name or ...`
        raise InputError(f"name must be a string or None, got {name!r}")
    if isinstance(target, BoxFunction):
        return target
    if hasattr(target, "program") and isinstance(target.program, Program):
        name = name or getattr(target, "name", None)
        target = target.program
    if isinstance(target, Program):
        return BoxFunction(numpy_evaluator(target), target.dim, np.full(target.dim, target.lower),
                           np.full(target.dim, target.upper), name or "program")
    if isinstance(target, pyo.Block):
        return _pyomo_function(target, name or target.name)
    if callable(target):
        if dim is None:
            raise InputError("a callable target needs dim=<number of variables>")
        dim = check_count(dim, "dim", 1)
        check_box(dim, lower, upper)  # finite lower < upper the samplers and solvers can use
        return BoxFunction(_Batched(target), dim, np.full(dim, float(lower)),
                           np.full(dim, float(upper)), name or getattr(target, "__name__", "f"))
    raise InputError(f"cannot use {type(target).__name__} as a target: give a program, BBOB "
                     "problem, Pyomo model or callable")


class _Batched:
    """A user's function of one point or of a batch of points, called on whole batches
    once its first call showed it takes them, else point by point (a first call of one
    point decides only for single points: the first larger batch is tried again). Decided
    so, not per call: retrying every failed batch point by point had swallowed the
    function's own errors (a failure on its third call vanished) or replaced them (its
    ValueError became an IndexError)."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        # None: unknown; "one": took a batch of one point, which a function of one point
        # does too; True / False: takes batches / one point at a time
        self.vectorized: bool | str | None = None

    def __call__(self, X: np.ndarray) -> np.ndarray:
        if X.shape[0] == 0:
            return np.zeros(0)
        if self.vectorized is None or (self.vectorized == "one" and X.shape[0] > 1):
            return self._first(X)
        if self.vectorized:
            out = _batch_values(self.func(X), X.shape[0])
            if out is not None:
                return out
            self.vectorized = False  # one value for many: a 1-point first batch misled us
        return self._rows(X)

    def _first(self, X: np.ndarray) -> np.ndarray:
        """The first call (or the first of several points): the whole batch, or point by point
        where the batch fails and a single point does not (where both fail, the batch's error
        is the function's)."""
        try:
            out = _batch_values(self.func(X), X.shape[0])
        except Exception as batch_error:
            try:
                first = _point_value(self.func(X[0]))
            except Exception:
                raise batch_error from None
            self.vectorized = False
            return np.array([first, *self._rows(X[1:])])
        self.vectorized = (out is not None) if X.shape[0] > 1 or out is None else "one"
        return out if out is not None else self._rows(X)

    def _rows(self, X: np.ndarray) -> np.ndarray:
        return np.array([_point_value(self.func(row)) for row in X], dtype=float)


def _batch_values(value: Any, n: int) -> np.ndarray | None:
    """One number per point as a float vector, or None when the shape is not (n,) or (n, 1)
    (a function of one point handed a batch)."""
    out = _numbers(value, f"the function returned {type(value).__name__} for a batch of {n} points")
    return out.reshape(-1) if out.size == n and out.ndim <= 2 else None


def _point_value(value: Any) -> float:
    """A single number, or an InputError saying what the function returned for one point."""
    out = _numbers(value, f"the function returned {type(value).__name__} for one point")
    if out.size != 1:
        raise InputError(f"the function returned {out.size} values for one point; it must "
                         "return one number")
    return float(out.reshape(-1)[0])


def _numbers(value: Any, what: str) -> np.ndarray:
    """`value` as a float array, or an InputError naming `what` when it holds no numbers."""
    refuse_masked(value, what)
    try:
        out = np.asarray(value)
        # complex would lose its imaginary part, text ("1.5"), dates and records be read as
        # numbers
        if out.dtype.kind in "cSUmMV" or (out.dtype.kind == "O" and any(
                isinstance(v, (str, bytes)) for v in out.flat)):
            raise TypeError
        return out.astype(float)
    except (TypeError, ValueError, OverflowError, RuntimeError):  # 10**400; a tensor in a graph
        raise InputError(f"{what}; it must return real numbers") from None


def _pyomo_function(model: pyo.Block, name: str) -> BoxFunction:
    """Objective of a Pyomo model with bounded continuous variables, as a BoxFunction
    (the auxiliary variables of `to_pyomo` follow x through their definitions)."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        raise InputError(f"Pyomo target needs exactly one active objective, has {len(objectives)}")
    defined = {id(var) for var, _ in auxiliary_definitions(model)}
    variables = [v for v in model.component_data_objects(pyo.Var)
                 if not v.fixed and id(v) not in defined]
    if not variables:
        raise InputError("Pyomo target has no free variables")
    unbounded = [v.name for v in variables if v.lb is None or v.ub is None]
    if unbounded:
        raise InputError(f"Pyomo target variables need finite bounds: {', '.join(unbounded[:5])}")
    discrete = [v.name for v in variables if not v.is_continuous()]
    if discrete:
        raise InputError(f"Pyomo target variables must be continuous (a box function takes "
                         f"any point of its box): {', '.join(discrete[:5])}")
    definitions = model.component("aux_def")
    rows = [c.name for c in model.component_data_objects(pyo.Constraint, active=True)
            if definitions is None or c.parent_component() is not definitions]
    if rows:
        raise InputError(f"Pyomo target has constraints ({', '.join(rows[:3])}); a box "
                         "function is the objective alone over its variables' bounds")
    obj = objectives[0]
    sign = -1.0 if obj.sense == pyo.maximize else 1.0

    def f(X: np.ndarray) -> np.ndarray:
        out = np.empty(X.shape[0])
        for k, row in enumerate(X):
            for var, value in zip(variables, row, strict=True):
                var.set_value(float(value), skip_validation=True)
            try:
                update_auxiliaries(model)
                out[k] = sign * pyo.value(obj.expr)
            except (ValueError, ZeroDivisionError, OverflowError):
                out[k] = np.nan
        return out

    return BoxFunction(f, len(variables), np.array([float(v.lb) for v in variables]),
                       np.array([float(v.ub) for v in variables]), name)


def lhs_unit(dim: int, n: int, seed: int = 0) -> np.ndarray:
    """A Latin-hypercube sample of n points in [0, 1]^dim."""
    dim, n = check_count(dim, "dim", 1), check_count(n, "n (sample points)", 1)
    return qmc.LatinHypercube(d=dim, seed=check_seed(seed)).random(n)


def ela_features(fn: BoxFunction, n: int | None = None, seed: int = 0) -> np.ndarray:
    """Raw feature vector (order FEATURE_NAMES) from an LHS sample of n points (50*dim)."""
    n = 50 * fn.dim if n is None else check_count(n, "n (sample size)", MIN_SAMPLE)
    check_memory(4.0 * n * n + 32.0 * n * fn.dim, f"ELA features of {n} sample points",
                 "use a smaller n (the dispersion feature compares every pair)")
    unit = lhs_unit(fn.dim, n, check_seed(seed))
    y = fn(fn.scale(unit))
    if not np.all(np.isfinite(y)):
        raise InputError(f"{fn.name}: objective is not finite on the sample")
    return features_from_sample(unit, y, basins=basin_count(fn, unit, y))


def features_from_sample(unit: np.ndarray, y: np.ndarray, basins: int = 1) -> np.ndarray:
    """Features of a sample given in unit-cube coordinates (basin count computed apart)."""
    n = len(y)
    if np.ptp(y) <= FLAT_SHARE * np.abs(y).max():  # flat, at any scale (no floor of 1)
        return np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    best = int(np.argmin(y))
    dist = np.linalg.norm(unit - unit[best], axis=1)
    fdc = float(np.corrcoef(y, dist)[0, 1]) if np.ptp(dist) > 0 else 0.0
    top = np.argsort(y, kind="stable")[: max(2, n // 10)]
    dispersion = float(pdist(unit[top]).mean() / pdist(unit).mean())
    return np.array([float(skew(y)), float(kurtosis(y)), fdc, dispersion, float(basins),
                     _r2(unit, y, 1), _r2(unit, y, 2)])


def basin_count(fn: BoxFunction, unit: np.ndarray, y: np.ndarray, iterations: int = 40,
                step: float = 0.1, radius: float = 0.02) -> int:
    """Distinct end points of a batched compass local search started from every sample point.

    Each iteration tries +-step along every axis for all points at once (one vectorized
    call), moves improved points and halves the step of the others; end points closer
    than `radius` (unit-cube units) are one basin.
    """
    n, d = unit.shape
    pos, val = unit.copy(), np.where(np.isfinite(y), y, np.inf)
    finite = y[np.isfinite(y)]
    spread = RELATIVE_STEP * float(np.ptp(finite)) if finite.size else 0.0
    steps = np.full(n, step)
    moves = np.vstack([np.eye(d), -np.eye(d)])
    for _ in range(iterations):
        trial = np.clip(pos[:, None, :] + steps[:, None, None] * moves[None], 0.0, 1.0)
        tv = fn(fn.scale(trial.reshape(-1, d))).reshape(n, 2 * d)
        tv = np.where(np.isfinite(tv), tv, np.inf)
        k = np.argmin(tv, axis=1)
        better = tv[np.arange(n), k] < val - np.maximum(spread, _rounding(np.abs(val)))
        pos[better] = trial[np.arange(n), k][better]
        val[better] = tv[np.arange(n), k][better]
        steps[~better] *= 0.5
        if steps.max() < radius / 8:
            break
    pairs = cKDTree(pos).query_pairs(radius, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return int(connected_components(graph, directed=False)[0])


# An improvement counts in `basin_count` past this share of the sample's range of y (or
# past rounding): relative to the range, so the basins of a*f + b are those of f (an
# absolute 1e-12 had made every start its own basin on f scaled by 1e-13).
RELATIVE_STEP = 1e-12
ROUNDING_ULPS = 64
# A sample is flat where its range of y is at most this share of its largest |y|: what the
# rounding of a program's intermediate values leaves of a constant (one written as
# (x + 100) ** 2 - x ** 2 - 200 x - 9990 varies by 3.6e-12 around 10). Relative to y alone,
# so a*f + b keeps f's features; a constant far below its terms' rounding (the same with
# - 10000, 0 +- 3.6e-12) cannot be told from a tiny landscape and is read as one.
FLAT_SHARE = 1e-12


def _rounding(size: Any) -> Any:
    """What float64 rounding can move values of this size by (ROUNDING_ULPS ulps)."""
    return ROUNDING_ULPS * np.finfo(float).eps * size


def _r2(unit: np.ndarray, y: np.ndarray, degree: int) -> float:
    """In-sample R^2 of a polynomial least-squares meta-model."""
    model = make_pipeline(PolynomialFeatures(degree, include_bias=False), LinearRegression())
    return float(model.fit(unit, y).score(unit, y))


def normalize(raw: np.ndarray, n: int) -> np.ndarray:
    """Squash raw features into comparable ranges (about [-1, 1]) for distances."""
    s, k, fdc, disp, basins, lin, quad = np.asarray(raw, dtype=float)
    k = np.sign(k) * np.log1p(abs(k))
    return np.array([s / (1 + abs(s)), k / (1 + abs(k)), fdc, min(disp, 1.5),
                     np.log1p(basins) / np.log1p(n), np.clip(lin, 0, 1), np.clip(quad, 0, 1)])


def feature_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Root-mean-square difference of two normalized feature vectors."""
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if first.shape != second.shape or first.ndim != 1:
        raise InputError(f"feature vectors must be two 1-D arrays of one length, got shapes "
                         f"{first.shape} and {second.shape}")
    return float(np.sqrt(np.mean((first - second) ** 2)))


def normalized_features(target: Any, n: int | None = None, seed: int = 0,
                        dim: int | None = None) -> np.ndarray:
    """Normalized features of any target (see `as_box_function`)."""
    fn = as_box_function(target, dim=dim)
    n = 50 * fn.dim if n is None else check_count(n, "n (sample size)", MIN_SAMPLE)
    return normalize(ela_features(fn, n, seed), n)
