"""Certified global optima of emitted programs: the Pyomo model solved by SCIP.

SCIP proves optimality by spatial branch and bound (the bridge keeps a nonlinear objective
as an epigraph), started from the best known or sampled point; a result counts as
certified only with status optimal and a gap near 0,
the numpy evaluator agreeing with SCIP's objective at SCIP's point, a value well inside
the validator's |f| limit, and no point found that beats SCIP's bound: known points (a
BBOB function's x_opt), a Latin hypercube sample of the box and local descents from SCIP's
point and the best samples. SCIP's numerics can close the gap at a wrong value (BBOB f19
in 2-D started without a point: bound -38.47946, f(x_opt) = -38.48), so its word alone is
not taken. Every
uncertified answer names why in `result.extra["error"]`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from scipy.optimize import minimize

from coplug.formulations.bbo.evaluate import check_points, numpy_evaluator
from coplug.formulations.bbo.grammar import Program, check_program
from coplug.formulations.bbo.pyomo_model import scip_model, set_point
from coplug.formulations.bbo.validate import MAX_ABS
from coplug.formulations.checks import check_count, check_positive
from coplug.plugins.arguments import check_flag
from coplug.plugins.bridge import solve
from coplug.plugins.errors import InputError, SolverError, UnsupportedModelError
from coplug.plugins.results import Result, Status
from coplug.plugins.value_equality import ValueEquality


@dataclass(frozen=True, eq=False)
class Certificate(ValueEquality):
    """SCIP's answer for one program: result, point, and whether the optimum is certified."""

    result: Result
    x: np.ndarray | None
    numpy_value: float | None
    certified: bool

    @property
    def objective(self) -> float | None:
        return self.result.objective

    @property
    def bound(self) -> float | None:
        return self.result.bound


# Statuses a box-bounded program that is finite on its box can never have.
_IMPOSSIBLE = (Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)

# Values at least this large in magnitude are not certified: within a factor 1000 of the
# validator's |f| limit, where an optimum is typically a pole's cut-off, not a minimum.
CERTIFY_MAX_ABS = 1e-3 * MAX_ABS


def certify(program: Program, time_limit: float = 10.0, gap_tol: float = 1e-6,
            value_tol: float = 1e-5, known: Sequence[np.ndarray] = (),
            samples: int = 256, start: bool = True, plugins: Sequence[Any] = ()
            ) -> Certificate:
    """Solve the program's Pyomo model with SCIP; certified = optimal, gap <= gap_tol, the
    numpy value at SCIP's point within value_tol (relative) of SCIP's objective, |value|
    below CERTIFY_MAX_ABS, and no known point, sample or local descent below SCIP's bound
    by more than gap_tol (relative). A model SCIP cannot take (e.g. floor, acos) or fails
    on (e.g. LP errors near a pole) comes back uncertified; every uncertified answer
    carries the reason in `result.extra["error"]`. `start=False` leaves SCIP to find its
    own points instead of starting from the best known or sampled one; `plugins` go to the
    solve (a `Progress` line from the CLI)."""
    check_program(program, "certify")
    if isinstance(plugins, (str, bytes)) or not isinstance(plugins, Sequence):
        raise InputError(f"certify plugins must be a list of plugin objects, got {plugins!r}")
    samples = check_count(samples, "samples", 0)
    gap_tol = check_positive(gap_tol, "gap_tol", zero_ok=True)  # NaN passed every check
    value_tol = check_positive(value_tol, "value_tol", zero_ok=True)
    start = check_flag(start, "start")
    known = _known_points(program, known)
    model, obstacle = scip_model(program)
    if obstacle is not None:
        return _failed(obstacle)
    point = _best_point(program, known, samples) if start else None
    if point is not None:
        try:
            set_point(model, point)
        except InputError:  # the start is a hint: one the model cannot evaluate is dropped
            point = None
    try:
        result = solve(model, solver="scip", time_limit=time_limit, warmstart=point is not None,
                       plugins=list(plugins))
    except UnsupportedModelError as exc:
        return _failed(str(exc))
    except SolverError as exc:
        return _failed(f"{exc}: numerical trouble, e.g. a pole or a near-singular point of "
                       "the program on its box")
    if result.status in _IMPOSSIBLE:
        result.extra["error"] = (f"SCIP reports {result.status.value}, which a program finite "
                                 "on its box cannot be: it is undefined somewhere on the box "
                                 "(a pole, log of a negative) or SCIP hit numerical trouble")
    if not result.has_solution:
        result.extra.setdefault("error", f"SCIP stopped ({result.status.value}) without a point")
        return Certificate(result, None, None, False)
    # SCIP's point may lie its feasibility tolerance outside the box (1e-8 below a lower
    # bound), where a program defined on the box can be NaN: judged, and returned, on it
    x = np.clip([pyo.value(model.x[i]) for i in model.I], program.lower, program.upper)
    value = float(numpy_evaluator(program)(x[None])[0])
    reason = _scip_doubt(result, value, gap_tol, value_tol)
    if result.optimal and result.bound is not None and np.isfinite(result.bound):
        reason = _challenge(program, x, float(result.bound), gap_tol, known, samples) or reason
    if reason is not None:
        result.extra.setdefault("error", reason)
    return Certificate(result, x, value, reason is None)


def _known_points(program: Program, known: Sequence[np.ndarray]) -> np.ndarray:
    """`known` as a (k, dim) array of finite points, or an InputError naming its shape."""
    try:
        points = np.asarray(known, dtype=float)
    except (TypeError, ValueError):
        raise InputError("known must be points: a sequence of arrays of numbers") from None
    if points.size == 0:
        return np.empty((0, program.dim))
    if points.ndim == 1:
        points = points[None]
    if points.ndim != 2 or points.shape[1] != program.dim or not np.isfinite(points).all():
        raise InputError(f"known must be finite points of length {program.dim}, got shape "
                         f"{points.shape}")
    return points


def _best_point(program: Program, known: Sequence[np.ndarray], samples: int
                ) -> np.ndarray | None:
    """The best of the known points in the box and the sample: SCIP's starting point, so a
    run that cannot close the gap still returns a point (and prunes with its value)."""
    given = np.asarray(known, dtype=float).reshape(-1, program.dim)
    inside = given[np.all((given >= program.lower) & (given <= program.upper), axis=1)]
    points = np.vstack([inside, check_points(program, samples, seed=1)])
    with np.errstate(all="ignore"):
        values = numpy_evaluator(program)(points)
    values = np.where(np.isfinite(values), values, np.inf)
    k = int(np.argmin(values))
    return points[k] if np.isfinite(values[k]) else None


def _scip_doubt(result: Result, value: float, gap_tol: float, value_tol: float) -> str | None:
    """Why SCIP's own answer is no certificate (status, gap, evaluator, size), or None."""
    if not result.optimal:
        return f"SCIP stopped with status {result.status.value}, not a proven optimum"
    gap = result.gap
    if gap is None or result.bound is None or not np.isfinite(result.bound):
        return f"SCIP gives no finite bound (bound {result.bound}): the program may be unbounded"
    if gap > gap_tol:
        return f"SCIP's gap {gap:.3g} is above the tolerance {gap_tol:g}"
    largest = max(abs(value), abs(result.objective), abs(result.bound))
    if not largest < CERTIFY_MAX_ABS:
        return (f"|f| reaches {largest:.3g} at SCIP's optimum, near the validator's limit "
                f"{MAX_ABS:.0e}: a value this large is a pole's cut-off or beyond SCIP's "
                "tolerances, not a certified minimum")
    if abs(value - result.objective) > value_tol * max(1.0, abs(value)):
        return (f"the numpy value {value:.10g} at SCIP's point differs from SCIP's objective "
                f"{result.objective:.10g}: model and evaluator disagree (ill-conditioned?)")
    return None


def _challenge(program: Program, x: np.ndarray, bound: float, gap_tol: float,
               known: Sequence[np.ndarray], samples: int) -> str | None:
    """A point whose value is below SCIP's bound by more than gap_tol (relative) refutes
    the certificate: look among known points, a sample of the box and local descents."""
    f = numpy_evaluator(program)
    limit = bound - gap_tol * max(1.0, abs(bound))
    given = np.asarray(known, dtype=float).reshape(-1, program.dim)
    inside = given[np.all((given >= program.lower) & (given <= program.upper), axis=1)]
    sample = check_points(program, samples, seed=1)
    sample_values = f(sample)
    finite = np.where(np.isfinite(sample_values), sample_values, np.inf)
    starts = [x, *sample[np.argsort(finite)[:DESCENT_STARTS]]]
    candidates = [*inside, *sample, *(_descend(f, program, s) for s in starts)]
    points = np.vstack(candidates)
    values = f(points)
    values = np.where(np.isfinite(values), values, np.inf)
    k = int(np.argmin(values))
    if values[k] >= limit:
        return None
    return (f"f = {values[k]:.10g} at x = {np.round(points[k], 8).tolist()} is below SCIP's "
            f"bound {bound:.10g} by {bound - values[k]:.3g}: SCIP's certificate is wrong "
            "(numerical trouble, or the program has no minimum on its box)")


# Local descents run from SCIP's point and from this many of the best sample points.
DESCENT_STARTS = 3
# Numbers one descent may evaluate (each gradient: 2 dim + 1 points of dim numbers), and
# points per evaluated batch: the steps were one (2 dim) x dim array, 74.5 GiB at dim
# 100,000 (3.1 GiB and 19 s at dim 8,000). Past this budget a descent takes fewer
# iterations; where not one gradient fits (dim over about 23,000) none is run.
DESCENT_NUMBERS = 1 << 30
DESCENT_BATCH_NUMBERS = 1 << 22


def _descend(f: Callable[[np.ndarray], np.ndarray], program: Program,
             start: np.ndarray) -> np.ndarray:
    """A short bounded L-BFGS-B descent with batched central differences, within
    DESCENT_NUMBERS; its end point (`start` where not one gradient fits)."""
    dim, h = program.dim, 1e-7 * (program.upper - program.lower)
    gradients = DESCENT_NUMBERS // ((2 * dim + 1) * dim)
    if gradients < 1:
        return start
    batch = max(1, DESCENT_BATCH_NUMBERS // dim)

    def at_steps(z: np.ndarray, sign: float) -> np.ndarray:
        """f at z + sign h e_i for every coordinate i, in batches of `batch` points."""
        out = np.empty(dim)
        for lo in range(0, dim, batch):
            idx = np.arange(lo, min(lo + batch, dim))
            points = np.repeat(z[None], idx.size, axis=0)
            points[np.arange(idx.size), idx] += sign * h
            out[idx] = f(np.clip(points, program.lower, program.upper))
        return out

    def value_and_gradient(z: np.ndarray) -> tuple[float, np.ndarray]:
        value = f(z[None])[0]
        up, down = at_steps(z, 1.0), at_steps(z, -1.0)
        if not (np.isfinite(value) and np.all(np.isfinite(up)) and np.all(np.isfinite(down))):
            return float("inf"), np.zeros(dim)
        return float(value), (up - down) / (2 * h)

    with np.errstate(all="ignore"):
        end = minimize(value_and_gradient, start, jac=True, method="L-BFGS-B",
                       bounds=[(program.lower, program.upper)] * dim,
                       options={"maxiter": 200, "maxfun": min(15000, gradients)})
    return np.clip(end.x, program.lower, program.upper)


def _failed(reason: str) -> Certificate:
    """An uncertified answer without a point, carrying why in `result.extra["error"]`."""
    return Certificate(Result(Status.UNKNOWN, "scip", extra={"error": reason}), None, None, False)
