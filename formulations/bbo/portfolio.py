"""A portfolio of black-box solvers on fixed evaluation budgets, and how well it separates.

Solvers: random search, scipy differential evolution, Nelder-Mead and L-BFGS-B with
restarts, CMA-ES (`cma`), and a Lipschitz certificate-guided pruning method. The
differentiation score of a landscape is the mean normalized distance between solvers'
mean ranks over all runs, counting only pairs a Mann-Whitney test separates (p < alpha);
`min_runs_for_significance` is the fewest runs per solver for which that can happen.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import differential_evolution, minimize
from scipy.stats import mannwhitneyu, rankdata

from coplug.formulations.bbo.features import BoxFunction
from coplug.formulations.checks import check_choice, check_count, check_positive, check_seed
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

SOLVERS = ("random", "de", "nelder_mead", "lbfgsb", "cmaes", "lipschitz")
RANDOM_BATCH = 65_536  # points random search evaluates at once


class _Exhausted(Exception):
    """Raised inside a solver when the evaluation budget is spent."""


class _Budget:
    """Counts evaluations of a BoxFunction, tracks the best value, stops at the budget."""

    def __init__(self, fn: BoxFunction, budget: int) -> None:
        self.fn, self.budget, self.used = fn, budget, 0
        self.best = np.inf

    @property
    def left(self) -> int:
        return self.budget - self.used

    def batch(self, X: np.ndarray) -> np.ndarray:
        """Evaluate a batch (clipped to the box); raise _Exhausted once nothing is left."""
        X = np.clip(np.atleast_2d(X), self.fn.lower, self.fn.upper)
        if self.left <= 0:
            raise _Exhausted
        take = min(len(X), self.left)
        y = self.fn(X[:take])
        y = np.where(np.isfinite(y), y, np.inf)
        self.used += take
        k = int(np.argmin(y))
        if y[k] < self.best:
            self.best = float(y[k])
        if take < len(X):
            raise _Exhausted
        return y

    def one(self, x: np.ndarray) -> float:
        return float(self.batch(np.asarray(x, dtype=float)[None])[0])

    def random(self, rng: np.random.Generator, n: int = 1) -> np.ndarray:
        return self.fn.lower + rng.random((n, self.fn.dim)) * (self.fn.upper - self.fn.lower)


def _random_search(b: _Budget, rng: np.random.Generator) -> None:
    """Uniform points in batches of at most RANDOM_BATCH (a budget of 10**12 took the
    memory in one batch)."""
    while True:
        b.batch(b.random(rng, min(b.left, RANDOM_BATCH)))


class _Carried(Exception):
    """The function's own TypeError or ValueError, carried past scipy's differential
    evolution, which replaces those with a RuntimeError about map-like callables."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _differential_evolution(b: _Budget, rng: np.random.Generator) -> None:
    bounds = list(zip(b.fn.lower, b.fn.upper, strict=True))
    popsize = max(4, min(15, b.budget // (10 * b.fn.dim)))

    def energies(X: np.ndarray) -> np.ndarray:
        try:
            return b.batch(X.T)
        except (TypeError, ValueError) as exc:
            raise _Carried(exc) from None

    try:
        differential_evolution(energies, bounds, vectorized=True, updating="deferred",
                               popsize=popsize, maxiter=10**6, tol=0.0, polish=False,
                               seed=int(rng.integers(2**31)))
    except _Carried as carried:
        raise carried.error from None


def _restarts(method: str) -> Callable[[_Budget, np.random.Generator], None]:
    """A local scipy method restarted from uniform random points until the budget is spent."""

    def run(b: _Budget, rng: np.random.Generator) -> None:
        bounds = list(zip(b.fn.lower, b.fn.upper, strict=True))
        options = {"maxfev": b.budget, "xatol": 1e-8, "fatol": 1e-10} if method == (
            "Nelder-Mead") else {"maxfun": b.budget}
        while b.left > 0:
            before = b.used
            minimize(b.one, b.random(rng)[0], method=method, bounds=bounds, options=options)
            if b.used == before:
                return

    return run


def _cmaes(b: _Budget, rng: np.random.Generator) -> None:
    """CMA-ES restarted until the budget is spent; the caller's global numpy stream is left
    as it was (cma seeds numpy's global generator with its `seed` option)."""
    state = np.random.get_state()
    try:
        _cma_restarts(b, rng)
    finally:
        np.random.set_state(state)


def _cma_restarts(b: _Budget, rng: np.random.Generator) -> None:
    """`_cmaes`'s runs, each from a uniform random point."""
    import cma

    span = b.fn.upper - b.fn.lower
    while b.left > 0:
        opts = {"bounds": [list(b.fn.lower), list(b.fn.upper)], "seed": int(rng.integers(1, 2**30)),
                "verbose": -9, "verb_log": 0, "verb_disp": 0, "maxfevals": b.left,
                "CMA_stds": list(span / span.max())}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            es = cma.CMAEvolutionStrategy(list(b.random(rng)[0]), 0.3 * float(span.max()), opts)
            while not es.stop():
                X = np.array(es.ask())
                es.tell(list(X), list(b.batch(X)))


def _lipschitz(b: _Budget, rng: np.random.Generator) -> None:
    """Trisect the box with the lowest Lipschitz lower bound f(c) - L r; drop boxes whose
    bound exceeds the incumbent (certified under the running slope estimate L, 1.5x the
    steepest observed slope). Deterministic: every seed gives the same run."""
    lo, hi = b.fn.lower.astype(float), b.fn.upper.astype(float)
    points: list[np.ndarray] = []
    values: list[float] = []
    slope = 0.0

    def evaluate(X: np.ndarray) -> np.ndarray:
        nonlocal slope
        y = b.batch(X)
        for x, v in zip(X, y, strict=True):
            if points and np.isfinite(v):
                P, V = np.array(points), np.array(values)
                d = np.maximum(np.linalg.norm(P - x, axis=1), 1e-12)
                fin = np.isfinite(V)
                if fin.any():
                    slope = max(slope, 1.5 * float(np.max(np.abs(V[fin] - v) / d[fin])))
            points.append(x)
            values.append(float(v))
        return y

    boxes = [(lo, hi, float(evaluate(((lo + hi) / 2)[None])[0]))]
    while True:
        bounds = np.array([fc - slope * 0.5 * np.linalg.norm(h - l) for l, h, fc in boxes])
        keep = bounds <= b.best + 1e-12
        boxes = [box for box, k in zip(boxes, keep, strict=True) if k]
        l, h, fc = boxes.pop(int(np.argmin(bounds[keep])))
        axis = int(np.argmax(h - l))
        third = (h[axis] - l[axis]) / 3.0
        new = np.array([(l + h) / 2, (l + h) / 2])
        new[0, axis] -= third
        new[1, axis] += third
        y = evaluate(new)
        for part, fv in enumerate((y[0], fc, y[1])):
            nl, nh = l.copy(), h.copy()
            nl[axis], nh[axis] = l[axis] + part * third, l[axis] + (part + 1) * third
            boxes.append((nl, nh, float(fv)))


_RUNNERS: dict[str, Callable[[_Budget, np.random.Generator], None]] = {
    "random": _random_search,
    "de": _differential_evolution,
    "nelder_mead": _restarts("Nelder-Mead"),
    "lbfgsb": _restarts("L-BFGS-B"),
    "cmaes": _cmaes,
    "lipschitz": _lipschitz,
}


def _listed(values: object, name: str) -> list:
    """`values` (any iterable but a string) as a list, else an InputError naming it."""
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise InputError(f"{name} must be a sequence, got {values!r}")
    return list(values)


def run_solver(name: str, fn: BoxFunction, budget: int, seed: int = 0) -> float:
    """Best value solver `name` finds on `fn` within `budget` evaluations."""
    check_choice(name, "solver", SOLVERS)
    check_count(budget, "budget (evaluations)", 2)
    seed = check_seed(seed)
    b = _Budget(fn, budget)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            _RUNNERS[name](b, np.random.default_rng([seed, SOLVERS.index(name)]))
    except _Exhausted:
        pass
    return b.best


@dataclass(frozen=True, eq=False)
class PortfolioResult(ValueEquality):
    """Best values found: `values[s, k]` for solver s and seed k, and the overall best."""

    solvers: tuple[str, ...]
    values: np.ndarray
    best_value: float

    def best_by_solver(self) -> dict[str, float]:
        return {s: float(v) for s, v in zip(self.solvers, self.values.min(axis=1), strict=True)}


def run_portfolio(fn: BoxFunction, budget: int = 200, seeds: Sequence[int] = range(5),
                  solvers: Sequence[str] = SOLVERS) -> PortfolioResult:
    """Run every solver on every seed with the same budget."""
    check_count(budget, "budget", 2)
    seeds = [check_seed(seed) for seed in _listed(seeds, "seeds")]
    solvers = [check_choice(s, "solver", SOLVERS) for s in _listed(solvers, "solvers")]
    if not seeds or not solvers:
        raise InputError(f"run_portfolio needs at least one seed and one solver, got "
                         f"{len(seeds)} seeds and {len(solvers)} solvers")
    values = np.array([[run_solver(s, fn, budget, seed) for seed in seeds] for s in solvers])
    return PortfolioResult(tuple(solvers), values, float(values.min()))


@dataclass(frozen=True)
class Differentiation:
    """How well the portfolio's ranks separate on one landscape."""

    score: float
    mean_ranks: dict[str, float]
    significant_pairs: int
    pairs: int


def differentiation(result: PortfolioResult, alpha: float = 0.05,
                    resolution: float = 1e-6) -> Differentiation:
    """Mean over solver pairs of |mean rank difference| / runs, for pairs with MWU p < alpha.

    Values closer than `resolution` times the value range count as ties. `alpha` lies in
    (0, 1), as for `min_runs_for_significance`; `resolution` is a finite number > 0 (NaN
    made every rank NaN).
    """
    if check_positive(alpha, "alpha") >= 1:
        raise InputError(f"alpha is a significance level in (0, 1), got {alpha!r}")
    check_positive(resolution, "resolution")
    v = result.values
    span = float(np.ptp(v[np.isfinite(v)])) if np.isfinite(v).any() else 0.0
    q = np.round((np.where(np.isfinite(v), v, np.nanmax(v[np.isfinite(v)], initial=0) + span + 1)
                  - np.nanmin(v[np.isfinite(v)], initial=0)) / max(span, 1e-300) / resolution)
    ranks = rankdata(q.reshape(-1)).reshape(q.shape)
    mean = ranks.mean(axis=1)
    pairs = list(itertools.combinations(range(len(v)), 2))
    differ = [(a, b) for a, b in pairs
              if span > 0 and not np.array_equal(np.sort(q[a]), np.sort(q[b]))]
    total, sig = 0.0, 0
    if differ:
        left, right = zip(*differ, strict=True)
        pvalues = _pvalues(q[list(left)], q[list(right)])
        for (a, b), p in zip(differ, pvalues, strict=True):
            if p < alpha:
                sig += 1
                total += abs(mean[a] - mean[b]) / q.size
    score = total / len(pairs) if pairs else 0.0
    return Differentiation(score, dict(zip(result.solvers, mean.tolist(), strict=True)), sig,
                           len(pairs))


def _pvalues(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two-sided Mann-Whitney p-values of the rows of `a` against the rows of `b`."""
    return np.atleast_1d(mannwhitneyu(a, b, axis=1, alternative="two-sided").pvalue)


# Search cap for min_runs_for_significance: 200 runs already reach p ~ 1e-80.
MAX_RUNS = 200


def min_runs_for_significance(alpha: float = 0.05) -> int:
    """Fewest runs per solver at which `differentiation` can find a pair significant.

    The smallest p-value n against n runs can give is at complete separation, either all
    values distinct (exact test) or tied within each side (asymptotic test, ties shrink
    its variance); below the returned n even that p is >= alpha, so the score is always 0.
    """
    if not 0.0 < alpha < 1.0:
        raise InputError(f"significance level alpha must be in (0, 1), got {alpha}")
    for n in range(2, MAX_RUNS + 1):
        distinct = np.arange(2.0 * n).reshape(2, 1, n)
        tied = np.repeat([[0.0], [1.0]], n, axis=1).reshape(2, 1, n)
        if min(_pvalues(*distinct)[0], _pvalues(*tied)[0]) < alpha:
            return n
    raise InputError(f"alpha={alpha} needs more than {MAX_RUNS} runs per solver")
