"""Fair spectral clustering as a scikit-learn estimator: SC, FairSC and R-FairSC.

* ``unnormalized`` / ``normalized``: plain spectral clustering (scipy Lanczos on the sparse
  Laplacian, on each connected component's own block when the graph is disconnected, since
  Lanczos finds a repeated eigenvalue only once), no fairness.
* ``nullspace``: FairSC of Kleindessner et al. (2019): a dense orthonormal basis Z of the
  null space of the fairness constraints F^T H = 0 (full QR), then the k smallest
  eigenvectors of the dense Z^T L Z. O(n^2) memory and O(n^3) time, the baseline.
* ``riemannian``: R-FairSC: min tr(X^T L X) over the Stiefel manifold X^T X = I with the
  fairness constraints split off (X = G, F^T G = 0) and solved by a linearized Riemannian
  ADMM. Each iteration costs one sparse product L X, a polar retraction of an n x k matrix
  and a rank-(h-1) projection: O(nnz k + n k^2) time and O(n k) memory. When k exceeds
  half the fair dimension n - h + 1 (where n k is no smaller than n^2 / 2 and the ADMM may
  stall), it falls back to ``nullspace`` and says so in ``admm_info_["fallback"]``. The
  ADMM stops when the objective's change is below `tol` relative to the objective, or to
  OBJECTIVE_FLOOR * lambda_max * k when the objective is near 0 (a disconnected graph); when
  it reaches `max_iter` instead it warns (UserWarning) and sets ``converged=False``.

Every method then runs scikit-learn's KMeans on the embedding rows. ``laplacian`` picks the
ratio-cut (``unnormalized``, L = D - A) or normalized-cut (``normalized``, the default)
relaxation for the fair methods; for ``normalized`` both work in X = D^{1/2} H with L_sym
and the constraints D^{-1/2} F, and return H = D^{-1/2} X.

It lives in `learned/` because it is a scikit-learn estimator (fit / labels_), not a Pyomo
formulation; its exact counterpart is `coplug.formulations.fair_clustering_mip`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans

from coplug.formulations.checks import check_choice
from coplug.formulations.fair_graphs import check_n_clusters, validate_fair_graph
from coplug.learned.fit_state import unfitted_on_failure
from coplug.plugins.arguments import finite_real
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError

METHODS = ("riemannian", "nullspace", "unnormalized", "normalized")
# Objectives below OBJECTIVE_FLOOR * lambda_max * k count as 0 for the ADMM's stopping test.
OBJECTIVE_FLOOR = 1e-3
NOT_CONVERGED = "R-FairSC's ADMM did not converge"


class DenseMemoryError(InputError):
    """FairSC's dense matrices would not fit in the memory allowed; `needed` is in bytes."""

    def __init__(self, needed: float, n: int, hint: str = "use method='riemannian'") -> None:
        self.needed, self.n = needed, n
        super().__init__(
            f"FairSC (nullspace) needs about {needed / 2**30:.1f} GiB of dense matrices at "
            f"n={n}; {hint}"
        )


def nullspace_bytes(n: int) -> float:
    """Memory of FairSC's dense n x n matrices (basis, projected Laplacian, workspace)."""
    return 3 * 8.0 * n * n


def laplacian(adjacency: sp.csr_matrix, normalized: bool) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse L = D - A (or I - D^-1/2 A D^-1/2) and the degree vector."""
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    if not normalized:
        return sp.csr_matrix(sp.diags(degree) - adjacency), degree
    scale = sp.diags(1.0 / np.sqrt(degree))
    return sp.csr_matrix(sp.identity(degree.size) - scale @ adjacency @ scale), degree


def fairness_matrix(groups: np.ndarray) -> np.ndarray:
    """F (n x (h-1)): columns 1[group s] - |V_s|/n; F^T H = 0 asks proportional clusters."""
    h = int(groups.max()) + 1
    indicator = (groups[:, None] == np.arange(h - 1)[None, :]).astype(float)
    return indicator - indicator.mean(axis=0, keepdims=True)


def largest_eigenvalue(matrix: sp.spmatrix, seed: int = 0) -> float:
    """lambda_max of a sparse symmetric PSD matrix, to 1% (a few Lanczos steps)."""
    v0 = np.random.default_rng(seed).standard_normal(matrix.shape[0])
    value = spla.eigsh(matrix, k=1, which="LA", tol=1e-2, v0=v0, return_eigenvectors=False)
    return float(value[0])


def smallest_eigenvectors(
    lap: sp.spmatrix, k: int, seed: int = 0, tol: float = 1e-8
) -> np.ndarray:
    """k eigenvectors of the smallest eigenvalues of a sparse Laplacian (Lanczos on c I - L),
    gathered component by component when the graph is disconnected."""
    n_components, labels = csgraph.connected_components(lap, directed=False)
    if n_components > 1:
        return componentwise_eigenvectors(lap, k, labels, seed, tol)
    n = lap.shape[0]
    if k >= n - 1:
        return la.eigh(lap.toarray(), subset_by_index=[0, k - 1])[1]
    shift = 1.01 * largest_eigenvalue(lap, seed)
    operator = spla.LinearOperator((n, n), matvec=lambda x: shift * x - lap @ x, dtype=float)
    v0 = np.random.default_rng(seed).standard_normal(n)
    values, vectors = spla.eigsh(operator, k=k, which="LA", tol=tol, v0=v0)
    return vectors[:, np.argsort(-values)]


def componentwise_eigenvectors(
    lap: sp.spmatrix, k: int, labels: np.ndarray, seed: int = 0, tol: float = 1e-8
) -> np.ndarray:
    """The k smallest eigenvectors of a disconnected graph's block-diagonal Laplacian, chosen
    among each component's own (larger components first at equal eigenvalues).

    Lanczos on the whole matrix finds a repeated eigenvalue only once, so it returned one
    null vector where each component has its own, and plain SC split components apart."""
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    ends = np.cumsum(sizes)
    permuted = sp.csr_matrix(lap)[order][:, order]
    values, blocks, found = [], [], []
    for c, (start, end) in enumerate(zip(ends - sizes, ends, strict=True)):
        block = permuted[start:end, start:end]
        found.append(smallest_eigenvectors(block, min(k, end - start), seed, tol))
        values.append(np.sum(found[-1] * (block @ found[-1]), axis=0))
        blocks.append(np.full(found[-1].shape[1], c))
    value, block_of = np.concatenate(values), np.concatenate(blocks)
    column = np.concatenate([np.arange(f.shape[1]) for f in found])
    value[np.abs(value) <= 1e-10 * max(np.abs(value).max(), 1e-300)] = 0.0  # rounding of 0
    chosen = np.lexsort((-sizes[block_of], value))[:k]
    out = np.zeros((lap.shape[0], chosen.size))
    for j, i in enumerate(chosen):
        c = block_of[i]
        out[order[ends[c] - sizes[c]:ends[c]], j] = found[c][:, column[i]]
    return out


def nullspace_embedding(
    lap: sp.spmatrix, constraint: np.ndarray, k: int, max_bytes: float = 8e9
) -> np.ndarray:
    """FairSC: H = Z Y with Z the dense null-space basis of constraint^T, Y the k smallest
    eigenvectors of the dense Z^T L Z (the normalized variant passes L_sym and D^-1/2 F,
    which is Kleindessner et al.'s generalized problem in the variable X = D^1/2 H)."""
    n = lap.shape[0]
    if nullspace_bytes(n) > max_bytes:
        raise DenseMemoryError(nullspace_bytes(n), n)
    q = la.qr(constraint, mode="full")[0]
    basis = q[:, constraint.shape[1]:]
    del q
    projected = basis.T @ (lap @ basis)
    projected = (projected + projected.T) / 2
    _, vectors = la.eigh(projected, subset_by_index=[0, k - 1], overwrite_a=True)
    return basis @ vectors


def fair_dimension(constraint: np.ndarray) -> int:
    """Dimension n - (h-1) of the fair subspace {C^T x = 0} (C has full column rank)."""
    return constraint.shape[0] - constraint.shape[1]


def orthonormal_range(matrix: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Orthonormal basis of the numerical range (SVD, rank cut at rtol * largest singular
    value), so dependent columns never turn into junk directions as QR would make them."""
    left, values, _ = np.linalg.svd(matrix, full_matrices=False)
    if not values.size or values[0] == 0.0:
        return left[:, :0]
    return left[:, values > rtol * values[0]]


def fair_projector(constraint: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Orthogonal projection y -> y - C (C^T C)^-1 C^T y onto the fair subspace {C^T x = 0}."""
    gram_inv = np.linalg.inv(constraint.T @ constraint)
    return lambda y: y - constraint @ (gram_inv @ (constraint.T @ y))


def component_null_vectors(lap: sp.spmatrix, kernel: np.ndarray, count: int) -> np.ndarray:
    """Null vectors of L on its `count` largest connected components: `kernel` (ones for
    L = D - A, sqrt(degree) for L_sym) restricted to each, normalized; n x 0 if connected.

    Lanczos finds a repeated eigenvalue only once, so it misses most of the null space of a
    disconnected graph's Laplacian; these vectors span that part of it exactly."""
    n_components, labels = csgraph.connected_components(lap, directed=False)
    if n_components < 2:
        return np.zeros((lap.shape[0], 0))
    sizes = np.bincount(labels)
    chosen = np.argsort(-sizes, kind="stable")[:count]
    vectors = np.where(labels[:, None] == chosen[None, :], kernel[:, None], 0.0)
    return vectors / np.linalg.norm(vectors, axis=0)


def spectral_start(
    lap: sp.spmatrix,
    constraint: np.ndarray,
    k: int,
    seed: int = 0,
    kernel: np.ndarray | None = None,
) -> np.ndarray:
    """Warm start: the 2k + h - 1 smallest Lanczos eigenvectors of L (at most the fair
    dimension), plus as many null vectors of L's connected components when the graph is
    disconnected (`kernel` as in `component_null_vectors`, default ones), projected onto
    the fair subspace, then the best k directions of that span (Rayleigh-Ritz). The span is
    cut to its numerical rank and, if that leaves fewer than k directions, topped up with
    random fair ones. Sparse products only; a loose Lanczos tolerance suffices since the
    ADMM refines it."""
    n, dimension = lap.shape[0], fair_dimension(constraint)
    if not 1 <= k <= dimension:
        raise InputError(f"n_clusters={k} must lie in 1..{dimension}, the fair dimension")
    count = min(2 * k + constraint.shape[1], dimension, n - 1)
    project = fair_projector(constraint)
    kernel = np.ones(n) if kernel is None else kernel
    vectors = np.hstack([component_null_vectors(lap, kernel, count),
                         smallest_eigenvectors(lap, count, seed, tol=1e-3)])
    basis = orthonormal_range(project(vectors))
    if basis.shape[1] < k:
        extra = project(np.random.default_rng(seed).standard_normal((n, k - basis.shape[1])))
        extra -= basis @ (basis.T @ extra)
        basis = np.hstack([basis, orthonormal_range(extra)])
    _, ritz = np.linalg.eigh(basis.T @ (lap @ basis))
    return basis @ ritz[:, :k]


def polar(matrix: np.ndarray, rcond: float = 1e-6) -> np.ndarray:
    """The nearest matrix with orthonormal columns (polar factor), via the k x k Gram.

    Refuses a (numerically) rank-deficient matrix, whose polar factor is not unique and
    whose Gram-based formula would blow up the null directions: singular values below
    `rcond` times the largest. The factor does not change with the matrix's scale, so the
    Gram is taken of the matrix divided by its largest entry (weights of 1e4 and more, or
    near 1e-200, had overflowed or underflowed it)."""
    if not matrix.size:
        return matrix
    scale = float(np.abs(matrix).max())
    unit = matrix / scale if 0.0 < scale < np.inf else matrix
    values, vectors = np.linalg.eigh(unit.T @ unit)
    if not np.isfinite(values).all() or values[0] <= rcond**2 * max(values[-1], 0.0) \
            or values[-1] <= 0.0:
        raise InputError(
            f"polar factor of a rank-deficient {matrix.shape[0]} x {matrix.shape[1]} matrix "
            f"(singular values {np.sqrt(max(values[0], 0.0)) * scale:.1e} .. "
            f"{np.sqrt(max(values[-1], 0.0)) * scale:.1e}): its columns are not independent"
        )
    return unit @ ((vectors / np.sqrt(values)) @ vectors.T)


# rho as a multiple of the Laplacian's largest eigenvalue: outside this span ADMM's steps
# lose their digits (rho 1e-20: residual 70 after 200 iterations; 5e-324: numpy's
# LinAlgError) or barely move (1e10: the first step met the tolerance at the start, objective
# 50.5 where the optimum is 8.3; 1e4 still moves 0.001 a step).
RHO_SPAN = (1e-6, 1e4)


def riemannian_admm_embedding(
    lap: sp.spmatrix,
    constraint: np.ndarray,
    k: int,
    rho: float | None = None,
    max_iter: int = 1000,
    tol: float = 1e-7,
    seed: int = 0,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """R-FairSC: min tr(X^T L X), X^T X = I, C^T X = 0, by linearized Riemannian ADMM.

    Splitting X = G with G in the subspace {C^T G = 0}: the X-step minimizes the linearized
    augmented Lagrangian plus (tau/2)||X - X_k||^2 over the Stiefel manifold (a polar
    retraction), the G-step is the rank-(h-1) orthogonal projection, then a dual ascent step.
    Only sparse products with L touch the graph. Stops when the objective's change falls
    below `tol` times max(|objective|, OBJECTIVE_FLOOR lambda_max k) (`objective_settled`)
    and the split residual ||X - G|| / sqrt(k) below sqrt(tol); warns (UserWarning) when
    `max_iter` comes first. The last X is then projected and retracted once more, so the
    result satisfies C^T X = 0 exactly. `start`
    (n x k) is the initial point; default random. The multiplier starts at its least-squares
    estimate -(I - P) 2 L X (P the fair projection), so an optimal start is a fixed point
    instead of being pushed away while the multiplier is learned.
    """
    n = lap.shape[0]
    lam_max = largest_eigenvalue(lap, seed)
    rho = 0.5 * lam_max if rho is None else float(rho)
    if not RHO_SPAN[0] * lam_max <= rho <= RHO_SPAN[1] * lam_max:
        raise InputError(f"rho {rho:g} is out of scale with the Laplacian's largest "
                         f"eigenvalue {lam_max:.3g}: give rho within {RHO_SPAN[0]:g} .. "
                         f"{RHO_SPAN[1]:g} times it (default 0.5 times it)")
    tau = 2.02 * lam_max + rho
    project = fair_projector(constraint)
    if start is None:
        start = np.random.default_rng(seed).standard_normal((n, k))
    x = polar(project(start))
    lx = lap @ x
    g, dual = x.copy(), project(2.0 * lx) - 2.0 * lx
    objective = float(np.sum(x * lx))
    history = [objective]
    residual, iterations, converged = 0.0, 0, False
    while iterations < max_iter:
        iterations += 1
        x = polar(tau * x - 2.0 * lx - dual - rho * (x - g))
        g = project(x + dual / rho)
        dual += rho * (x - g)
        lx = lap @ x
        new_objective = float(np.sum(x * lx))
        residual = float(np.linalg.norm(x - g) / np.sqrt(k))
        settled = objective_settled(objective, new_objective, tol, lam_max * k)
        objective = new_objective
        history.append(objective)
        if settled and residual < np.sqrt(tol):
            converged = True
            break
    x = polar(project(x))
    objective = float(np.sum(x * (lap @ x)))
    if not converged:
        warn_at_caller(
            f"{NOT_CONVERGED} in max_iter={max_iter} iterations (objective {objective:.4g}, "
            f"split residual {residual:.1e}): raise max_iter or use method='nullspace'"
        )
    info = {"method": "riemannian", "iterations": iterations, "converged": converged,
            "objective": objective, "residual": residual, "history": history}
    return x, info


def objective_settled(old: float, new: float, tol: float, scale: float) -> bool:
    """The ADMM's stopping test on the objective: |new - old| < tol * max(|new|, floor), the
    floor OBJECTIVE_FLOOR * scale (scale = lambda_max * k, the largest the objective can be)
    so an optimum at 0 - a disconnected graph - is not chased down to rounding noise."""
    return abs(new - old) < tol * max(abs(new), OBJECTIVE_FLOOR * scale)


def check_random_state_param(random_state: object) -> None:
    """Refuse a random_state that KMeans (or numpy's seeding) would refuse only after the
    whole embedding was computed: None, an integer in [0, 2**32) or a RandomState pass."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer) \
            or not 0 <= random_state < 2**32:
        raise InputError(f"random_state must be None, an integer in [0, 2**32) or a "
                         f"numpy RandomState, got {random_state!r}")


class FairSpectralClustering(ClusterMixin, BaseEstimator):
    """Spectral clustering whose clusters keep each group at its graph-wide proportion.

    Parameters: n_clusters; groups (one label per node, or a node-attribute name for a
    networkx graph); method in METHODS; laplacian "unnormalized" (ratio cut) or
    "normalized" (normalized cut, default) for the fair methods; ADMM settings (rho,
    max_iter, tol, init = "spectral" warm start or "random") for "riemannian";
    n_init and random_state for KMeans.
    Attributes after fit: labels_, embedding_, fit_time_, kmeans_time_, admm_info_.
    """

    def __init__(
        self,
        n_clusters: int = 2,
        groups: Any = None,
        method: str = "riemannian",
        laplacian: str = "normalized",
        rho: float | None = None,
        max_iter: int = 1000,
        tol: float = 1e-7,
        init: str = "spectral",
        n_init: int = 10,
        random_state: int = 0,
    ) -> None:
        self.n_clusters = n_clusters
        self.groups = groups
        self.method = method
        self.laplacian = laplacian
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, graph: Any, y: Any = None) -> FairSpectralClustering:
        """Embed the graph by the chosen method, then cluster the embedding with KMeans; a
        failure leaves the estimator unfitted (a refused refit kept the old graph's labels_
        beside an emptied admm_info_)."""
        with unfitted_on_failure(self):
            return self._fit(graph)

    def _fit(self, graph: Any) -> FairSpectralClustering:
        """`fit`'s work, on a graph not yet checked."""
        check_choice(self.method, "method", METHODS)
        check_choice(self.init, "init", ("spectral", "random"))
        check_choice(self.laplacian, "laplacian", ("unnormalized", "normalized"))
        self._check_admm_settings()
        check_random_state_param(self.random_state)
        if self.groups is None and self.method in ("riemannian", "nullspace"):
            raise InputError(f"method={self.method!r} needs groups (one label per node)")
        k = check_n_clusters(self.n_clusters)
        adjacency, codes = validate_fair_graph(graph, self.groups, k)
        start = time.perf_counter()
        self.embedding_ = self._embed(adjacency, codes, k)
        self.fit_time_ = time.perf_counter() - start
        start = time.perf_counter()
        kmeans = KMeans(k, n_init=self.n_init, random_state=self.random_state)
        self.labels_ = kmeans.fit_predict(self.embedding_)
        self.kmeans_time_ = time.perf_counter() - start
        self.group_codes_ = codes
        return self

    def _check_admm_settings(self) -> None:
        """Reject a non-positive rho, max_iter < 1, a tol that is not a finite number > 0 (NaN
        or -1 would run every iteration) and n_init < 1 here, not deep inside the ADMM loop
        or KMeans."""
        rho = self.rho
        number = isinstance(rho, int | float | np.number) and finite_real(rho)
        if rho is not None and not (number and rho > 0):
            raise InputError(f"rho must be a finite number > 0 (or None for 0.5 lambda_max), "
                             f"got {rho!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, int | np.integer) \
                or self.max_iter < 1:
            raise InputError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        tol = self.tol
        if not (isinstance(tol, int | float | np.number) and finite_real(tol) and tol > 0):
            raise InputError(f"tol must be a finite number > 0, got {tol!r}")
        n_init = self.n_init
        integer = isinstance(n_init, int | np.integer) and not isinstance(n_init, bool)
        if not (n_init == "auto" if isinstance(n_init, str) else integer and n_init >= 1):
            raise InputError(f"n_init (KMeans restarts) must be an integer >= 1 or 'auto', got "
                             f"{n_init!r}")

    def _embed(self, adjacency: sp.csr_matrix, codes: np.ndarray, k: int) -> np.ndarray:
        """The n x k spectral embedding of the chosen method."""
        self.admm_info_: dict[str, Any] = {}
        if self.method in ("unnormalized", "normalized"):
            normalized = self.method == "normalized"
            lap, degree = laplacian(adjacency, normalized)
            vectors = smallest_eigenvectors(lap, k, self.random_state)
            return vectors / np.sqrt(degree)[:, None] if normalized else vectors
        normalized = self.laplacian == "normalized"
        lap, degree = laplacian(adjacency, normalized)
        constraint = fairness_matrix(codes)
        if k > codes.size - constraint.shape[1]:
            raise InputError(f"n_clusters={k} exceeds the {codes.size - constraint.shape[1]} "
                             "dimensions left by the fairness constraints")
        if normalized:
            constraint = constraint / np.sqrt(degree)[:, None]
        if self.method == "nullspace" or 2 * k > fair_dimension(constraint):
            x = nullspace_embedding(lap, constraint, k)
            if self.method == "riemannian":
                self.admm_info_ = {"method": "nullspace", "fallback": (
                    f"n_clusters={k} is over half the {fair_dimension(constraint)} fair "
                    "dimensions, where the ADMM is no cheaper and may not converge: used the "
                    "exact nullspace method"), "fair_dimension": fair_dimension(constraint),
                    "objective": float(np.sum(x * (lap @ x)))}
        else:
            start = None
            if self.init == "spectral":
                kernel = np.sqrt(degree) if normalized else np.ones(degree.size)
                start = spectral_start(lap, constraint, k, self.random_state, kernel)
            x, self.admm_info_ = riemannian_admm_embedding(
                lap, constraint, k, self.rho, self.max_iter, self.tol, self.random_state, start
            )
        return x / np.sqrt(degree)[:, None] if normalized else x

