"""Projected gradient descent and Adam on [0,1]^n for a QUBO, many random starts batched in
one torch tensor, and a per-point certificate (local minimizer, binary, feasible).

PGD scales the gradient by D_i >= sum_j |H_ij| (a bound on the Hessian row sums), so the
unit projected step always descends; it doubles the step while the energy keeps falling
and falls back towards the unit step otherwise (monotone in energy). Adam runs on the
gradient scaled by S_i = max(D_i, |c_i|) (its step is invariant to a fixed per-coordinate
scale, and |g_i / S_i| <= 2 keeps its squared moments finite). Both methods stop a
start once its scaled projected-gradient residual max_i |x_i - clip(x_i - g_i / D_i)| is
below `tol` at a binary point with no zero-slope coordinate; any other stationary point
(fractional, or a vertex with a zero partial derivative) gets up to `kicks` random
perturbations (randomised rounding of the fractional coordinates, an inward push of one
zero-slope coordinate) before it is accepted as final.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

from coplug.formulations.checks import (
    check_choice,
    check_count,
    check_memory,
    check_seed,
    numeric_array,
)
from coplug.formulations.qubo import QUBO
from coplug.plugins.arguments import check_flag
from coplug.plugins.bar import progress_bar
from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import record_interrupt
from coplug.plugins.serial import warning_filters
from coplug.plugins.value_equality import ValueEquality

METHODS = ("pgd", "adam")
# Adam's default learning rate (PGD takes a Jacobi-scaled step instead).
ADAM_LR = 0.3
# The most CPU threads `minimize` hands torch (past 2**31 torch overflowed with a raw error).
MAX_THREADS = 1024
# A binary point counts as feasible only when its penalty, energy - sense * objective, is
# zero to this fraction of the size of the energy's terms there (see `_exact_objective`).
PENALTY_RTOL = 1e-12
# At a vertex, a slope or curvature counts as zero only when it is within this fraction of
# the size of its own terms (their float64 rounding error), never relative to the Hessian
# row bound D_i, which large couplings elsewhere in the row make huge.
ROUNDOFF_RTOL = 1e-12


@dataclass(frozen=True)
class Certificate:
    """What a final point is: KKT on the box, second order on free coordinates, binary,
    encodes a feasible solution with zero penalty; `strict` when binary with all multipliers
    nonzero. `objective` is that solution's objective (None unless feasible)."""

    kkt: bool
    second_order: bool
    binary: bool
    feasible: bool
    strict: bool
    objective: float | None
    reason: str = ""

    @property
    def local_min(self) -> bool:
        """First- and second-order conditions hold (sufficient for a QP on the box)."""
        return self.kkt and self.second_order

    @property
    def ok(self) -> bool:
        """A certified binary, feasible local minimizer."""
        return self.local_min and self.binary and self.feasible


@dataclass(eq=False)
class RunReport(ValueEquality):
    """Final points of all starts, their certificates and the wall time; `stats` counts the
    starts that ended at a strict binary vertex ("converged"), those accepted at another
    stationary point once their kicks ran out ("stalled"), those `max_iter` (or Ctrl-C) left
    at neither ("unfinished"), and the kicks used.
    `interrupted` is True when Ctrl-C stopped the run: the points are where the starts stood
    then, each certified as usual (an unfinished start is rarely binary or KKT). `sense` is
    the QUBO's (1: its objective minimized, -1: maximized), which `best_objective` ranks by."""

    points: np.ndarray
    energies: np.ndarray
    certificates: list[Certificate]
    iterations: int
    seconds: float
    method: str
    stats: dict = field(default_factory=dict)
    interrupted: bool = False
    sense: int | None = None  # the QUBO's (1 minimized, -1 maximized); None: not recorded

    @property
    def fraction_ok(self) -> float | None:
        """Fraction of starts ending binary, feasible and certified locally minimal.

        None when the points were not certified (`minimize(..., certify_points=False)`).
        """
        return _fraction([c.ok for c in self.certificates])

    @property
    def fraction_binary_feasible(self) -> float | None:
        """Fraction of starts ending at a binary point that encodes a feasible solution exactly.

        None when the points were not certified (`minimize(..., certify_points=False)`).
        """
        return _fraction([c.binary and c.feasible for c in self.certificates])

    def best_objective(self, sense: int | None = None) -> float | None:
        """Best problem objective over feasible binary end points (None if there is none),
        in the QUBO's own sense (`minimize` records it); a `sense` given (1 or pyo.minimize,
        -1 or pyo.maximize) must be that one: the other gave the worst value found, with no
        word. A report that records no sense (built by hand) needs it given."""
        own = _checked_sense(sense, self.sense)
        vals = [c.objective for c in self.certificates if c.binary and c.feasible]
        if not vals:
            return None
        return float(min(vals) if own > 0 else max(vals))

    def __repr__(self) -> str:
        """A summary: the points and certificates of 2000 starts made a 236,000-character
        repr."""
        best = float(self.energies.min()) if self.energies.size else None
        return (f"RunReport(method={self.method!r}, starts={len(self.points)}, "
                f"iterations={self.iterations}, seconds={self.seconds:.3g}, "
                f"best_energy={best!r}, fraction_ok={self.fraction_ok!r}, "
                f"stats={self.stats!r}, interrupted={self.interrupted}, "
                f"sense={self.sense!r})")


def _checked_sense(sense: object, own: int | None) -> int:
    """The sense to rank by: `own` (the QUBO's, when recorded) or `sense`, which must be 1 or
    -1 and agree with `own`; else an InputError."""
    if sense is None:
        if own is None:
            raise InputError("this report records no QUBO sense (it was not made by "
                             "minimize): call best_objective(qubo.sense)")
        return own
    if isinstance(sense, bool) or not isinstance(sense, (int, np.integer)) or int(sense) not in (
            1, -1):
        raise InputError(f"sense must be 1 (minimize) or -1 (maximize), got {sense!r}")
    if own is not None and int(sense) != own:
        raise InputError(f"this QUBO's objective is {'minimized' if own > 0 else 'maximized'} "
                         f"(sense {own}); best_objective({int(sense)}) would give the worst "
                         "value found: call best_objective() for the best")
    return int(sense)


def _fraction(flags: list[bool]) -> float | None:
    """Share of true flags, or None for no flags (an empty mean is not a fraction)."""
    return sum(flags) / len(flags) if flags else None


def gradient_scale(qubo: QUBO) -> np.ndarray:
    """D_i >= sum_j |H_ij| for H = 2(Q + A'WA): per-coordinate Lipschitz bound, at least
    1e-12 of the largest bound or linear term (a coordinate without curvature still takes a
    finite step; an absolute floor stalled every start of a QUBO whose terms were all below
    it)."""
    absA = abs(qubo.A)
    row = np.asarray(abs(qubo.Q).sum(axis=1)).reshape(-1)
    pen = absA.T @ (np.abs(qubo.weights) * np.asarray(absA.sum(axis=1)).reshape(-1))
    bound = 2 * (row + np.asarray(pen).reshape(-1))
    largest = max(float(bound.max()) if bound.size else 0.0,
                  float(np.abs(qubo.c).max()) if qubo.c.size else 0.0)
    return np.maximum(bound, 1e-12 * largest if largest > 0 else 1.0)


def adam_scale(qubo: QUBO, D: np.ndarray) -> np.ndarray:
    """S_i = max(D_i, |c_i|) >= |g_i| / 2 on the box: Adam's moments of g / S cannot overflow."""
    return np.maximum(D, np.abs(qubo.c))


def certify(
    qubo: QUBO, z: np.ndarray, tol: float = 1e-6, scale: np.ndarray | None = None
) -> Certificate:
    """Check a final point: KKT on the box, PSD Hessian on free and degenerate coordinates,
    binary, feasible (decodes to a feasible solution with zero penalty).

    A point within `tol` of a vertex is that vertex, computed exactly: its slopes and
    curvatures are tested only against their float64 rounding error (ROUNDOFF_RTOL times
    the size of their own terms), so a slope of -5 next to penalties of 10^7 is a descent
    direction, not noise. A fractional point is an approximate stationary point: there the
    slope tolerances are `tol` relative to the per-coordinate scale D_i (`scale`, from
    `gradient_scale`, may be passed in when certifying many points); its curvature, the
    QUBO's own data, is held to rounding error as at a vertex. A point outside [0,1]^n
    beyond `tol` is refused."""
    if not isinstance(qubo, QUBO):
        raise InputError(f"certify needs a QUBO, got {type(qubo).__name__}")
    z = numeric_array(z, "point")
    if z.shape != (qubo.n,):
        raise InputError(f"point must have length {qubo.n}, got shape {z.shape}")
    _check_certify_options(qubo, tol, scale)
    _require_in_box(z, tol)
    at0, at1 = np.abs(z) <= tol, np.abs(z - 1) <= tol
    free = ~(at0 | at1)
    binary = not free.any()
    if binary:
        z = np.round(z)
        slack = ROUNDOFF_RTOL * _gradient_magnitude(qubo, z)
        g = qubo.gradient(z)
    else:
        slack = np.full(qubo.n, tol)
        g = qubo.gradient(z) / (gradient_scale(qubo) if scale is None else scale)
    kkt = bool((g[at0] >= -slack[at0]).all() and (g[at1] <= slack[at1]).all()
               and (np.abs(g[free]) <= slack[free]).all())
    degenerate = (at0 | at1) & (np.abs(g) <= slack)
    idx = np.flatnonzero(free | degenerate)
    second = True
    if kkt and idx.size:
        second = _curvature_ok(qubo, idx)
    objective = _exact_objective(qubo, z) if binary else None
    feasible = objective is not None
    reason = (
        "not KKT"
        if not kkt
        else "negative curvature on free coordinates"
        if not second
        else "fractional"
        if not binary
        else "infeasible or positive penalty"
        if not feasible
        else ""
    )
    return Certificate(
        kkt=kkt,
        second_order=second,
        binary=binary,
        feasible=feasible,
        strict=kkt and binary and not degenerate.any(),
        objective=objective,
        reason=reason,
    )


def _check_certify_options(qubo: QUBO, tol: float, scale: np.ndarray | None) -> None:
    """Refuse a `tol` outside (0, 1/2) (from 1/2 on, a coordinate of 0.5 counts as both
    bounds and a fractional point passes as binary) and a `scale` not of length n or not
    positive and finite (a negative one turned every slope's sign)."""
    real = isinstance(tol, (int, float, np.number)) and not isinstance(tol, (bool, np.bool_))
    if not (real and 0 < tol < 0.5):
        raise InputError(f"tol must be a number in (0, 0.5), got {tol!r}")
    if scale is not None:
        values = numeric_array(scale, "scale")  # first: np.shape of a ragged list raised
        if values.shape != (qubo.n,):
            raise InputError(f"scale must have length {qubo.n} (from gradient_scale), got "
                             f"shape {values.shape}")
        if not (np.isfinite(values).all() and (values > 0).all()):
            raise InputError(f"scale must be finite and > 0 (from gradient_scale), got "
                             f"{values[~(np.isfinite(values) & (values > 0))][0].item()!r}")


def _gradient_magnitude(qubo: QUBO, z: np.ndarray) -> np.ndarray:
    """Per coordinate, the sum of the absolute terms of grad f(z) = 2Qz + 2A'WAz + c: the
    scale of its float64 rounding error (large cancelling penalties make it large)."""
    a = np.abs(z)
    absA = abs(qubo.A)
    pen = absA.T @ (np.abs(qubo.weights) * (absA @ a))
    return 2 * (abs(qubo.Q) @ a) + 2 * np.asarray(pen).reshape(-1) + np.abs(qubo.c)


def _curvature_ok(qubo: QUBO, idx: np.ndarray) -> bool:
    """Hessian block on `idx` PSD to its rounding error (ROUNDOFF_RTOL times the largest row
    sum of its absolute terms). The Hessian is the QUBO's data, the same at every point, so
    a fractional point is held to it as a vertex is: relative to the scale D_i, a curvature
    of -1.76 beside D_i near 1e9 passed, and a strict local maximum was called a minimum."""
    H = qubo.hessian_block(idx)
    absA = abs(qubo.A[:, idx])
    size = 2 * (abs(qubo.Q[idx][:, idx]) + absA.T @ sp.diags(np.abs(qubo.weights)) @ absA)
    slack = ROUNDOFF_RTOL * float(np.asarray(size.sum(axis=1)).max())
    return bool(np.linalg.eigvalsh(H).min() >= -slack)


def _require_in_box(z: np.ndarray, tol: float) -> None:
    """Refuse a point outside [0,1]^n (beyond `tol`) or with NaN: it is no relaxation point."""
    outside = ~((z >= -tol) & (z <= 1 + tol))
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(f"point z[{i}] = {z[i]} lies outside the box [0, 1] (tolerance {tol})")


def _exact_objective(qubo: QUBO, z: np.ndarray) -> float | None:
    """Objective of a binary point that encodes a feasible solution exactly, else None.

    Exactly means zero penalty: energy(z) == sense * objective up to PENALTY_RTOL times the
    sum of the absolute terms of the energy at z (`QUBO.magnitude`), which bounds its float64
    rounding error (a sum of n terms is off by about sqrt(n) ulp of that size, far less).
    Relative only, as the safe forms scale with their data: a floor of 1 let a knapsack
    point placing an item of value 1e-13 twice (penalty 2e-13) pass as feasible.
    """
    objective = qubo.solution_objective(z)
    if objective is None:
        return None
    size = max(qubo.magnitude(z), abs(objective))
    penalty = float(qubo.energy(z)) - qubo.sense * objective
    return objective if abs(penalty) <= PENALTY_RTOL * size else None


def _torch_csr(M: sp.csr_matrix, dtype: torch.dtype, device: str) -> torch.Tensor:
    """A scipy CSR matrix as a torch sparse CSR tensor."""
    M = sp.csr_matrix(M)
    with warning_filters():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(
            torch.from_numpy(M.indptr.astype(np.int64)),
            torch.from_numpy(M.indices.astype(np.int64)),
            torch.from_numpy(M.data.astype(np.float64)),
            size=M.shape,
            dtype=dtype,
            device=device,
            check_invariants=True,
        )


# The dense product costs n^2 per start, the sparse one nnz(Q) + 2 nnz(A) + n; BLAS's dense
# product is faster per entry, and measured per iteration (200 starts, one thread) it won
# only up to about this ratio: tsp 15 cities 0.97x at 6.5, knapsack 0.91x at 12.1, open pit
# 60 blocks 1.23x at 10.2; at 2,500 blocks (ratio 345) it was 14x slower than sparse.
DENSE_WORK_RATIO = 8


def uses_dense(qubo: QUBO, dense_limit: int) -> bool:
    """Whether the expanded dense Q pays: at most `dense_limit` variables and n^2 within
    DENSE_WORK_RATIO times the sparse product's work."""
    work = qubo.Q.nnz + 2 * qubo.A.nnz + qubo.n
    return qubo.n <= dense_limit and qubo.n * qubo.n <= DENSE_WORK_RATIO * work


class _Operator:
    """Batched gradient and energy of a QUBO in torch; X is (n, B), one column per start.

    Nearly dense problems up to `dense_limit` variables use the expanded Q (BLAS); the others
    keep Q and the penalty rows A sparse: G = 2 Q X + 2 A'(w * (A X)) + c.
    """

    def __init__(self, qubo: QUBO, dtype: torch.dtype, device: str, dense_limit: int) -> None:
        self.dense = uses_dense(qubo, dense_limit)
        self.c = torch.as_tensor(qubo.c, dtype=dtype, device=device)[:, None]
        self.constant = float(qubo.constant)
        if self.dense:
            self.H = torch.as_tensor(qubo.dense_Q(), dtype=dtype, device=device)
            return
        self.Q = _torch_csr(qubo.Q, dtype, device)
        self.has_pen = qubo.A.shape[0] > 0
        if self.has_pen:
            self.A = _torch_csr(qubo.A, dtype, device)
            self.At = _torch_csr(qubo.A.T.tocsr(), dtype, device)
            self.w = torch.as_tensor(qubo.weights, dtype=dtype, device=device)[:, None]

    def grad(self, X: torch.Tensor) -> torch.Tensor:
        """2 Q_full X + c."""
        if self.dense:
            return 2 * (self.H @ X) + self.c
        G = 2 * (self.Q @ X) + self.c
        if self.has_pen:
            G = G + 2 * (self.At @ (self.w * (self.A @ X)))
        return G

    def energy(self, X: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
        """f(X) per column from its gradient: x'Qx + c'x = x'(G + c) / 2."""
        return 0.5 * (X * (G + self.c)).sum(dim=0) + self.constant


# float64 tensors of shape (starts, n) a run holds at once (points, gradients, Adam moments,
# masks and scratch), for the up-front memory check.
BATCH_TENSORS = 8


def _check_memory(n: int, starts: int) -> None:
    """Refuse a batch that cannot fit in this machine's memory before torch tries to
    allocate it (its failure is a long RuntimeError traceback, or the OOM killer)."""
    check_memory(BATCH_TENSORS * 8 * n * starts,
                 f"{starts} starts of {n} variables ({BATCH_TENSORS} float64 tensors of "
                 f"starts x n)", "use fewer starts")


def minimize(
    qubo: QUBO,
    method: str = "adam",
    starts: int = 200,
    seed: int = 0,
    max_iter: int = 3000,
    tol: float = 1e-7,
    lr: float | None = None,
    device: str = "cpu",
    progress: bool = False,
    certify_points: bool = True,
    dense_limit: int = 3000,
    kicks: int = 3,
    threads: int | None = 1,
) -> RunReport:
    """Run PGD or Adam from `starts` uniform random points in [0,1]^n, batched in one tensor.

    A start stops when its scaled projected-gradient residual is <= `tol` at a binary point
    (fractional ones are kicked first, see module docstring) or at `max_iter`; each end point
    then gets a `Certificate`. `threads` sets torch's CPU threads for the run (one is
    fastest for these many small batched products on a shared machine; None keeps torch's).
    `dense_limit` caps the size at which a nearly dense QUBO is multiplied as a dense matrix
    (`uses_dense`). `lr` is Adam's learning rate (default ADAM_LR); PGD takes its own
    Jacobi-scaled step, which keeps every step a descent, and refuses an `lr` it would ignore.
    """
    _check_arguments(qubo, method, lr, tol, device)
    lr = ADAM_LR if lr is None else lr
    starts = check_count(starts, "starts", 1)
    seed = check_seed(seed)
    max_iter = check_count(max_iter, "max_iter", 1)
    dense_limit = check_count(dense_limit, "dense_limit", 0)
    kicks = check_count(kicks, "kicks", 0)
    progress = check_flag(progress, "progress")
    certify_points = check_flag(certify_points, "certify_points")
    if threads is not None:
        threads = check_count(threads, "threads", 1, MAX_THREADS)
    if device == "cpu":
        _check_memory(qubo.n, starts)
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _run(
            qubo,
            method,
            starts,
            seed,
            max_iter,
            tol,
            lr,
            device,
            progress,
            certify_points,
            dense_limit,
            kicks,
        )
    finally:
        torch.set_num_threads(previous_threads)


def _check_arguments(qubo: object, method: str, lr: float | None, tol: float,
                     device: str) -> None:
    """Refuse a non-QUBO, an unknown method, a non-finite or non-positive lr or tol, and a
    device torch cannot use (or that holds no values: meta), each with a message naming the
    argument."""
    if not isinstance(qubo, QUBO):
        raise InputError(f"minimize needs a QUBO, got {type(qubo).__name__}")
    check_choice(method, "method", METHODS)
    if method == "pgd" and lr is not None:
        raise InputError("lr is Adam's learning rate: method='pgd' takes a Jacobi-scaled step "
                         "(a descent by construction) and would ignore it; leave lr unset")
    for name, value in (("lr", ADAM_LR if lr is None else lr), ("tol", tol)):
        number = isinstance(value, (int, float, np.number)) and not isinstance(
            value, (bool, np.bool_))
        if not (number and 0 < value < math.inf):
            raise InputError(f"{name} must be a finite positive number, got {value!r}")
    try:
        kind = torch.empty(0, device=device).device.type
    except (RuntimeError, AssertionError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"device {device!r} is not usable here: {reason}") from None
    if kind == "meta":
        raise InputError(f"device {device!r} is not usable here: meta tensors hold no values")


def _vertex_test(X: torch.Tensor, G: torch.Tensor, D: torch.Tensor, tol: float
                 ) -> tuple[torch.Tensor, ...]:
    """Per start: the projected-gradient residual, which coordinates sit at a bound, which
    of those have zero slope there (with a concave diagonal such a vertex is no minimizer),
    and whether the point is a strict binary vertex (stationary, binary, no zero slope)."""
    residual = (X - (X - G / D).clamp(0.0, 1.0)).abs().amax(dim=0)
    at_bound = (X == 0) | (X == 1)
    flat = at_bound & ((G / D).abs() <= tol)
    strict_vertex = (residual <= tol) & at_bound.all(dim=0) & ~flat.any(dim=0)
    return residual, at_bound, flat, strict_vertex


@dataclass
class _Batch:
    """The starts' points X (n, B), gradients G, energies F, Adam moments m and v, PGD step
    factors, per-start flags and the iterations begun, updated in place as the run goes."""

    X: torch.Tensor
    G: torch.Tensor
    F: torch.Tensor
    m: torch.Tensor
    v: torch.Tensor
    step: torch.Tensor
    done: torch.Tensor
    kicked: torch.Tensor
    gave_up: torch.Tensor
    iterations: int = 0


@dataclass(frozen=True)
class _Settings:
    """What stays fixed during a run: the operator, the two gradient scalings (D for PGD and
    the vertex test, S for Adam), the random generator and the stopping options."""

    op: _Operator
    D: torch.Tensor
    S: torch.Tensor
    gen: torch.Generator
    method: str
    tol: float
    lr: float
    kicks: int

    def rand(self, like: torch.Tensor) -> torch.Tensor:
        """Uniform [0,1) numbers shaped like `like`, drawn on the CPU for reproducibility."""
        return torch.rand(like.shape, generator=self.gen, dtype=like.dtype).to(like.device)


# Adam's moment decay rates and denominator guard.
ADAM_BETA1, ADAM_BETA2, ADAM_EPS = 0.9, 0.999, 1e-12


def _settings(qubo: QUBO, method: str, seed: int, tol: float, lr: float, device: str,
              dense_limit: int, kicks: int) -> tuple[_Settings, np.ndarray]:
    """The run's fixed parts, and the Hessian row bound D as numpy for the certificates."""
    dtype = torch.float64
    op = _Operator(qubo, dtype, device, dense_limit)
    scale = gradient_scale(qubo)
    if not np.isfinite(scale).all():
        raise InputError("QUBO coefficients too large: the Hessian row sums overflow float64")
    D = torch.as_tensor(scale, dtype=dtype, device=device)[:, None]
    S = torch.as_tensor(adam_scale(qubo, scale), dtype=dtype, device=device)[:, None]
    gen = torch.Generator(device="cpu").manual_seed(int(seed))
    return _Settings(op, D, S, gen, method, tol, lr, kicks), scale


def _start(cfg: _Settings, n: int, starts: int) -> _Batch:
    """`starts` uniform random points of [0,1]^n with their gradients and energies."""
    dtype, device = cfg.D.dtype, cfg.D.device
    X = torch.rand((n, starts), generator=cfg.gen, dtype=dtype).to(device)
    G = cfg.op.grad(X)
    flags = torch.zeros(starts, dtype=torch.bool, device=device)
    return _Batch(X=X, G=G, F=cfg.op.energy(X, G), m=torch.zeros_like(X),
                  v=torch.zeros_like(X), step=torch.ones(starts, dtype=dtype, device=device),
                  done=flags, kicked=torch.zeros(starts, dtype=torch.int64, device=device),
                  gave_up=flags.clone())


def _kick(cfg: _Settings, b: _Batch, stalled: torch.Tensor, at_bound: torch.Tensor,
          flat: torch.Tensor) -> torch.Tensor:
    """Perturb the stalled starts that have kicks left and return the stalled ones left.

    At a stationary point the fractional coordinates are rounded at random (x_i -> 1 with
    probability x_i) and one zero-slope bound coordinate is pushed inwards (along it alone
    the energy is concave): a saddle is left, a true minimum found again."""
    kick = stalled & (b.kicked < cfg.kicks)
    noise = cfg.rand(b.X) * 0.1
    frac = ~at_bound & kick[None, :]
    pick = (flat * noise).argmax(dim=0)
    inward = torch.zeros_like(flat)
    inward[pick, torch.arange(b.X.shape[1], device=b.X.device)] = True
    inward &= flat & kick[None, :]
    coin = cfg.rand(b.X)
    X = torch.where(frac, (coin < b.X).to(b.X.dtype), b.X)
    b.X = torch.where(inward, (X + (1 - 2 * X) * (0.1 + noise)).clamp(0.0, 1.0), X)
    b.G = cfg.op.grad(b.X)
    b.F = cfg.op.energy(b.X, b.G)
    b.m.zero_()
    b.v.zero_()
    b.kicked += kick.to(b.kicked.dtype)
    return stalled & ~kick


def _trial(cfg: _Settings, b: _Batch, it: int) -> torch.Tensor:
    """The next point of every start: a projected PGD or Adam step.

    Random per-coordinate step factors in [1/2, 1] break exact symmetries (twin variables
    clamped to the same bound would otherwise move in lockstep forever); the scaled step
    stays below the Jacobi bound, so PGD still descends."""
    jitter = 0.5 + 0.5 * cfg.rand(b.X)
    if cfg.method == "pgd":
        return (b.X - b.step * jitter * b.G / cfg.D).clamp(0.0, 1.0)
    GS = b.G / cfg.S
    b.m.mul_(ADAM_BETA1).add_((1 - ADAM_BETA1) * GS)
    b.v.mul_(ADAM_BETA2).add_((1 - ADAM_BETA2) * GS * GS)
    mhat = b.m / (1 - ADAM_BETA1**it)
    vhat = b.v / (1 - ADAM_BETA2**it)
    return (b.X - cfg.lr * jitter * mhat / (vhat.sqrt() + ADAM_EPS)).clamp(0.0, 1.0)


def _descend(cfg: _Settings, b: _Batch, it: int) -> None:
    """Move the unfinished starts to their trial points (PGD: only where it descends)."""
    Y = _trial(cfg, b, it)
    GY = cfg.op.grad(Y)
    FY = cfg.op.energy(Y, GY)
    accept = ~b.done
    if cfg.method == "pgd":
        # Jacobi step (step = 1) always descends; longer steps are kept only if they
        # strictly do (accepting ties let two equal-energy vertices swap forever).
        accept = accept & ((FY < b.F) | (b.step <= 1.0))
        b.step = torch.where(accept, (b.step * 2).clamp(max=1024.0), (b.step / 4).clamp(min=1.0))
    b.X = torch.where(accept[None, :], Y, b.X)
    b.G = torch.where(accept[None, :], GY, b.G)
    b.F = torch.where(accept, FY, b.F)


def _settle(cfg: _Settings, b: _Batch) -> torch.Tensor:
    """Test the starts at their points, kicking stalled ones, and mark the finished:
    strict vertices, and stationary points with their kicks spent. Returns the newly done."""
    residual, at_bound, flat, strict_vertex = _vertex_test(b.X, b.G, cfg.D, cfg.tol)
    stalled = (residual <= cfg.tol) & ~strict_vertex & ~b.done
    if cfg.kicks and bool(stalled.any()):
        stalled = _kick(cfg, b, stalled, at_bound, flat)
    newly = (strict_vertex | stalled) & ~b.done
    b.gave_up |= stalled & ~b.done  # stationary, not a strict vertex, kicks used up
    b.done |= newly
    return newly


def _settle_last(cfg: _Settings, b: _Batch) -> None:
    """Test the last step's points, which the loop did not, without kicking them."""
    residual, _, _, strict_vertex = _vertex_test(b.X, b.G, cfg.D, cfg.tol)
    stalled = (residual <= cfg.tol) & ~strict_vertex & ~b.done & (b.kicked >= cfg.kicks)
    b.gave_up |= stalled
    b.done |= strict_vertex | stalled


def _show_done(bar: object | None, b: _Batch) -> None:
    """Put the count of finished starts on the progress bar, if there is one."""
    if bar is not None:
        bar.set_postfix_str(f"{int(b.done.sum())}/{b.done.numel()} starts done", refresh=False)


def _iterate(cfg: _Settings, b: _Batch, max_iter: int, bar: object | None) -> None:
    """Settle and descend until every start is done or `max_iter` iterations have begun."""
    with torch.no_grad():
        for it in range(1, max_iter + 1):
            b.iterations = it
            if bar is not None:
                bar.update(1)
            if _settle(cfg, b).any():
                _show_done(bar, b)
            if bool(b.done.all()):
                if bar is not None:
                    bar.total = it  # finished early: show a full bar
                return
            _descend(cfg, b, it)
    if not b.done.all():
        _settle_last(cfg, b)
        _show_done(bar, b)


def _run(
    qubo: QUBO,
    method: str,
    starts: int,
    seed: int,
    max_iter: int,
    tol: float,
    lr: float,
    device: str,
    progress: bool,
    certify_points: bool,
    dense_limit: int,
    kicks: int,
) -> RunReport:
    """The batched iteration behind `minimize`; Ctrl-C keeps and certifies the points
    reached so far."""
    t0 = time.perf_counter()
    cfg, scale = _settings(qubo, method, seed, tol, lr, device, dense_limit, kicks)
    b = _start(cfg, qubo.n, starts)
    bar = None
    if progress:
        bar = progress_bar(total=max_iter, desc=f"{qubo.problem} {qubo.form} {method}", unit="it")
        _show_done(bar, b)
    interrupted = False
    try:
        _iterate(cfg, b, max_iter, bar)
    except KeyboardInterrupt:
        record_interrupt()
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    points = b.X.T.cpu().numpy().copy()
    if not np.isfinite(points).all():
        raise InputError(f"{method} produced non-finite points; the QUBO is badly scaled")
    seconds = time.perf_counter() - t0
    certs = [certify(qubo, p, scale=scale) for p in points] if certify_points else []
    return RunReport(
        points=points,
        energies=qubo.energy(points),
        certificates=certs,
        iterations=b.iterations,
        seconds=seconds,
        method=method,
        stats={"converged": int((b.done & ~b.gave_up).sum().item()),
               "stalled": int(b.gave_up.sum().item()), "starts": starts,
               "kicks": int(b.kicked.sum()), "unfinished": int((~b.done).sum().item())},
        interrupted=interrupted,
        sense=qubo.sense,
    )
