"""The QUBO object: f(z) = z'Qz + c'z + constant + sum_r w_r (a_r'z)^2, on {0,1}^n or [0,1]^n.

Penalties of the form w_r (a_r'z)^2 are kept factored (sparse rows A, weights w) so that
large one-hot or packing penalties never materialise a dense Q; `dense_Q()` expands them
for small problems. Each QUBO knows how to decode a binary point into a problem solution,
whether that solution is feasible, and its objective, so that on every feasible binary
point whose penalty vanishes ``energy(z) == sense * objective(decode(z))``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from coplug.formulations.checks import numeric_array, plain_array
from coplug.plugins.arguments import check_exact_integers, detached, refuse_masked
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

# A safe QUBO's penalties may reach at most this many times its largest value: ulp of the
# penalty then stays below 2^-20 of that value, so float64 keeps the values beside it.
PENALTY_LIMIT = 2.0**32
# The smallest data scale (v+, d+) the safe forms take: their penalties stay normal floats
# with full precision (values of 5e-324 made the diagonal round to 0)
SMALLEST_SCALE = 2.0**-960


def data_scale(largest: float, otherwise: float = 1.0) -> float:
    """A safe form's data scale (v+, d+) from its largest relevant value: at least
    SMALLEST_SCALE, and `otherwise` where nothing is positive (any positive scale is safe
    there)."""
    return max(largest, SMALLEST_SCALE) if largest > 0 else otherwise


@dataclass(eq=False)
class QUBO(ValueEquality):
    """A quadratic pseudo-Boolean energy with its link back to the original problem.

    `sense` is +1 when the problem minimizes its objective (TSP) and -1 when it maximizes
    (knapsack value, pit value). `margin` is the proven size of an improving single flip at
    every binary point with positive penalty (0 when no such guarantee holds, e.g. naive).
    `form` labels the construction: "safe" and "naive" are set by the packaged builders, a
    hand-built QUBO is "custom" (no safety is implied).
    """

    Q: sp.csr_matrix
    c: np.ndarray
    constant: float
    # The problem's own functions: equal QUBOs built twice hold distinct closures, so `==`
    # compares the energy's data and labels only.
    decode: Callable[[np.ndarray], Any] = field(compare=False)
    is_feasible: Callable[[Any], bool] = field(compare=False)
    objective: Callable[[Any], float] = field(compare=False)
    sense: int = 1
    A: sp.csr_matrix | None = None
    weights: np.ndarray | None = None
    margin: float = 0.0
    form: str = "custom"
    problem: str = ""
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.Q is None:
            raise InputError("Q must be a square matrix, got None")
        for name in ("Q", "c", "A", "weights"):
            setattr(self, name, _plain_field(getattr(self, name), name))
        # copies throughout: the caller's arrays, edited after this check, reached the QUBO
        self.Q = _as_floats(lambda: sp.csr_matrix(self.Q, dtype=float, copy=True), self.Q, "Q")
        n = self.Q.shape[0]
        if self.Q.shape != (n, n):
            raise InputError(f"Q must be square, got shape {self.Q.shape}")
        if n == 0:
            raise InputError("a QUBO needs at least one variable, got a 0x0 Q")
        _require_finite(self.Q.data, "Q")
        if abs(self.Q - self.Q.T).max() > 1e-9 * max(1.0, abs(self.Q).max()):
            raise InputError("Q must be symmetric")
        self.c = _as_floats(lambda: np.array(self.c, dtype=float).reshape(-1), self.c, "c")
        if self.c.shape != (n,):
            raise InputError(f"c must have length {n}, got {self.c.shape}")
        _require_finite(self.c, "c")
        if np.ndim(self.constant) != 0 or not isinstance(self.constant, (int, float, np.number)):
            raise InputError(f"QUBO constant must be one number, got {self.constant!r}")
        self.constant = float(self.constant)
        _require_finite(np.array([self.constant]), "constant")
        if self.A is None:
            if self.weights is not None and np.size(self.weights):
                raise InputError("QUBO weights need penalty rows A (one weight per row); "
                                 "got weights and no A")
            self.A = sp.csr_matrix((0, n))
            self.weights = np.zeros(0)
        self.A = _as_floats(lambda: sp.csr_matrix(self.A, dtype=float, copy=True), self.A, "A")
        if self.weights is None:
            raise InputError(f"QUBO penalty rows A ({self.A.shape[0]} rows) need weights, "
                             "one per row")
        self.weights = _as_floats(lambda: np.array(self.weights, dtype=float).reshape(-1),
                                  self.weights, "weights")
        if self.A.shape[1] != n or self.weights.shape != (self.A.shape[0],):
            raise InputError(
                f"penalty rows must be (m, {n}) with m weights, got {self.A.shape} "
                f"and {self.weights.shape}"
            )
        _require_finite(self.A.data, "A")
        _require_finite(self.weights, "weights")
        if (isinstance(self.sense, (bool, np.bool_))
                or not isinstance(self.sense, (int, float, np.number))
                or self.sense not in (1, -1)):
            raise InputError(f"QUBO sense must be 1 (minimize) or -1 (maximize), got "
                             f"{self.sense!r}")
        self.sense = int(self.sense)
        self._check_labels(n)
        for name in ("decode", "is_feasible", "objective"):
            if not callable(getattr(self, name)):
                raise InputError(f"QUBO {name} must be callable, got "
                                 f"{type(getattr(self, name)).__name__}")
        with np.errstate(over="ignore", invalid="ignore"):
            largest = self.magnitude(np.ones(n))
        if not math.isfinite(largest):
            raise InputError("QUBO energies overflow float64 on [0,1]^n (the sum of the "
                             "absolute values of its terms is infinite): rescale the data "
                             "toward 1")

    def _check_labels(self, n: int) -> None:
        """Refuse a margin that is no finite real number >= 0 (a proven flip size) and names
        that are not one string per variable (3 names for 2 variables were kept)."""
        real = isinstance(self.margin, numbers.Real) and not isinstance(
            self.margin, (bool, np.bool_))
        try:
            margin = float(self.margin) if real else math.nan
        except OverflowError:  # an int past float's range
            margin = math.inf
        if not math.isfinite(margin) or margin < 0:
            shown = (f"an integer of {len(str(abs(self.margin)))} digits"
                     if isinstance(self.margin, int) and math.isinf(margin) else repr(self.margin))
            raise InputError(f"QUBO margin must be a finite number >= 0 (0: no proven flip "
                             f"size), got {shown}")
        self.margin = margin
        if isinstance(self.names, (str, bytes)) or not isinstance(
                self.names, (list, tuple, np.ndarray)):
            raise InputError(f"QUBO names must be a list of {n} strings, got "
                             f"{type(self.names).__name__}")
        names = list(self.names)
        odd = next((k for k, name in enumerate(names) if not isinstance(name, str)), None)
        if odd is not None:
            raise InputError(f"QUBO names must be strings, got {names[odd]!r} "
                             f"({type(names[odd]).__name__}) at {odd}")
        if names and len(names) != n:
            raise InputError(f"QUBO names must be one string per variable ({n}), got "
                             f"{len(names)} names")
        self.names = names

    @property
    def n(self) -> int:
        """Number of binary variables."""
        return int(self.Q.shape[0])

    def diagonal(self) -> np.ndarray:
        """Diagonal of the full quadratic form (Q plus the expanded penalty rows)."""
        A2 = self.A.multiply(self.A)
        return self.Q.diagonal() + np.asarray(A2.T @ self.weights).reshape(-1)

    def dense_Q(self) -> np.ndarray:
        """The full symmetric Q with penalty rows expanded (small problems only)."""
        if self.n > 6000:
            raise InputError(f"refusing to expand a dense {self.n}x{self.n} Q; use matvecs")
        return self.Q.toarray() + (self.A.T @ sp.diags(self.weights) @ self.A).toarray()

    def energy(self, z: np.ndarray) -> np.ndarray:
        """f(z) for one point (n,) or a batch (B, n)."""
        Z = np.atleast_2d(numeric_array(z, "a QUBO point"))
        if Z.ndim != 2 or Z.shape[1] != self.n:
            raise InputError(f"energy needs points of length {self.n}, got shape {np.shape(z)}")
        _require_finite_point(Z)
        AZ = (self.A @ Z.T).T
        quad = np.einsum("bi,bi->b", Z, (self.Q @ Z.T).T) + (AZ**2) @ self.weights
        out = quad + Z @ self.c + self.constant
        return out if np.ndim(z) == 2 else out[0]

    def _point(self, z: np.ndarray) -> np.ndarray:
        """One point as a float vector of length n, or an InputError naming its shape (not
        scipy's matmul dimension mismatch)."""
        z = numeric_array(z, "a QUBO point")
        if z.shape != (self.n,):
            raise InputError(f"a point must have length {self.n}, got shape {z.shape}")
        _require_finite_point(z)  # NaN > 0.5 is False: decoded as "take nothing"
        return z

    def magnitude(self, z: np.ndarray) -> float:
        """Sum of the absolute values of the energy's terms at one point: the scale of the
        float64 rounding error in `energy(z)` (large cancelling penalties make it large)."""
        a = np.abs(self._point(z))
        pen = np.abs(self.weights) @ (abs(self.A) @ a) ** 2
        return float(a @ (abs(self.Q) @ a) + np.abs(self.c) @ a + abs(self.constant) + pen)

    def gradient(self, z: np.ndarray) -> np.ndarray:
        """grad f(z) = 2 Q z + 2 A' W A z + c."""
        z = self._point(z)
        return 2 * (self.Q @ z) + 2 * (self.A.T @ (self.weights * (self.A @ z))) + self.c

    def hessian_block(self, idx: np.ndarray) -> np.ndarray:
        """The Hessian 2(Q + A'WA) restricted to coordinates `idx` (dense); a boolean mask
        of length n selects its True coordinates (read as indices it gave 1, 0, 1)."""
        idx = plain_array(idx, "hessian_block's coordinates")
        if idx.dtype.kind == "b" and idx.shape == (self.n,):
            idx = np.flatnonzero(idx)
        if idx.size == 0 or (idx.dtype.kind == "f" and np.all(idx == np.round(idx))):
            idx = idx.astype(int)  # [] reads as float64; whole floats are coordinates
        if idx.dtype.kind not in "iu":
            raise InputError(f"hessian_block needs whole-number coordinates or a boolean mask "
                             f"of length {self.n}, got {idx.tolist()}")
        if idx.ndim != 1 or idx.size and not (0 <= idx.min() and idx.max() < self.n):
            raise InputError(f"hessian_block needs coordinates in 0..{self.n - 1}, got "
                             f"{idx.tolist()}")
        Qs = self.Q[idx][:, idx].toarray()
        As = self.A[:, idx]
        return 2 * (Qs + (As.T @ sp.diags(self.weights) @ As).toarray())

    def flip_deltas(self, z: np.ndarray) -> np.ndarray:
        """Energy change of flipping each single bit of a binary point (exact)."""
        z = self._point(z)
        d = 1.0 - 2.0 * z
        return d * self.gradient(z) + self.diagonal()

    def solution_objective(self, z: np.ndarray) -> float | None:
        """Problem objective of the decoded point, or None when it is infeasible."""
        sol = self.decode(self._point(z))
        return float(self.objective(sol)) if self.is_feasible(sol) else None

    def to_pyomo(self) -> pyo.ConcreteModel:
        """Binary quadratic Pyomo model minimizing f, so SCIP can solve the QUBO exactly."""
        m = pyo.ConcreteModel(name=f"qubo_{self.problem}_{self.form}")
        m.I = pyo.RangeSet(0, self.n - 1)
        m.z = pyo.Var(m.I, domain=pyo.Binary)
        Qu = sp.triu(self.Q).tocoo()
        quad = sum(
            (float(v) if i == j else 2.0 * float(v)) * m.z[int(i)] * m.z[int(j)]
            for i, j, v in zip(Qu.row, Qu.col, Qu.data, strict=True)
            if v != 0
        )
        lin = sum(float(self.c[i]) * m.z[i] for i in range(self.n) if self.c[i] != 0)
        pens = 0
        for r in range(self.A.shape[0]):
            row = self.A.getrow(r)
            form = sum(float(v) * m.z[int(j)] for j, v in zip(row.indices, row.data, strict=True))
            pens = pens + float(self.weights[r]) * form * form
        m.energy = pyo.Objective(expr=quad + lin + pens + float(self.constant))
        return m

    def from_pyomo(self, model: pyo.ConcreteModel) -> np.ndarray:
        """Read the binary point out of a solved `to_pyomo()` model. A variable in no term
        (an item of value and weight 0) reaches no solver and has no value: it reads as 0,
        which leaves f unchanged."""
        z = model.component("z") if hasattr(model, "component") else None
        if not isinstance(z, pyo.Var) or len(z) != self.n or set(z.keys()) != set(range(self.n)):
            size = len(z) if isinstance(z, pyo.Var) else "no"
            raise InputError(f"from_pyomo needs this QUBO's to_pyomo() model: it has {size} "
                             f"z variables, this QUBO has {self.n} (z[0..{self.n - 1}])")
        values = [pyo.value(z[i], exception=False) for i in range(self.n)]
        used = self._used()
        if any(v is None and used[i] for i, v in enumerate(values)):
            raise InputError("the to_pyomo() model has no value for z; solve it first")
        return np.array([0.0 if v is None else round(v) for v in values], dtype=float)

    def _used(self) -> np.ndarray:
        """Which variables appear in a term of f (Q, c or a penalty row)."""
        q = abs(sp.csr_matrix(self.Q))
        touched = np.asarray(q.sum(axis=0)).ravel() + np.asarray(q.sum(axis=1)).ravel()
        rows = np.asarray(abs(sp.csr_matrix(self.A)).sum(axis=0)).ravel()
        return (touched != 0) | (np.asarray(self.c) != 0) | (rows != 0)


def _plain_field(data: Any, field: str) -> Any:
    """A QUBO field as numpy or scipy converts it: a tensor's values (one that requires
    grad raised torch's error), a DOK matrix as COO (it has no data array to check); a
    masked array or an integer float64 rounds (2**62 + 1) is an InputError."""
    refuse_masked(data, f"QUBO {field}")
    data = detached(data, f"QUBO {field}")
    if sp.issparse(data) and not hasattr(data, "data"):
        data = data.tocoo()
    try:
        values = np.asarray(data.data if sp.issparse(data) else data).view(np.ndarray)
        if isinstance(data, list | tuple) and values.dtype.kind == "f":  # ints and floats
            values = np.array(data, dtype=object)  # mixed: numpy had made them floats
    except (ValueError, TypeError):
        return data  # ragged or no numbers: the float conversion names it
    check_exact_integers(values.reshape(-1), f"QUBO {field}")
    return data


def _as_floats(convert: Callable[[], Any], data: Any, field: str) -> Any:
    """Run a float conversion of a QUBO field; a non-number in it is an InputError naming
    the field and the first bad value, not numpy's bare ValueError."""
    if _is_complex(data):
        raise InputError(f"QUBO {field} must hold real numbers, got complex data")
    try:
        return convert()
    except (ValueError, TypeError):
        values = data.data if sp.issparse(data) else np.asarray(data, dtype=object).ravel()
        bad = next((v for v in values if not _is_real(v)), None)
        what = f"(first bad entry: {bad!r})" if bad is not None else "(not a numeric array)"
        raise InputError(f"QUBO {field} must hold real numbers {what}") from None


def _is_complex(data: Any) -> bool:
    """Whether `data` is a complex array: float conversion would drop its imaginary part
    with only a warning."""
    try:
        return bool(np.iscomplexobj(data.data if sp.issparse(data) else data))
    except (ValueError, TypeError):  # ragged or odd data: the conversion names it
        return False


def _is_real(value: Any) -> bool:
    """Whether float() takes `value`."""
    try:
        float(value)
    except (ValueError, TypeError):
        return False
    return True


def _require_finite_point(z: np.ndarray) -> None:
    """Refuse a point with NaN or inf: its energy is NaN and its decoding arbitrary."""
    if not np.isfinite(z).all():
        raise InputError("a QUBO point must be finite, got NaN or inf entries")


def _require_finite(values: np.ndarray, field: str) -> None:
    """Refuse NaN or infinite coefficients, naming the field: they poison every energy."""
    bad = ~np.isfinite(values)
    if bad.any():
        first = float(values[np.flatnonzero(bad)[0]])
        hint = "" if math.isnan(first) else (
            "; built from finite data this means its penalties overflowed float64: rescale "
            "the data toward 1")
        raise InputError(f"QUBO {field} has NaN or infinite entries (first: {first}){hint}")


def multilinear_pairs(groups: list[np.ndarray], n: int) -> sp.csr_matrix:
    """0/1 incidence rows (one per group of variable indices) for pair-count penalties."""
    rows = np.concatenate([np.full(len(g), r) for r, g in enumerate(groups)]) if groups else []
    cols = np.concatenate(groups) if groups else []
    return sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(groups), n))


def symmetric(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int) -> sp.csr_matrix:
    """Symmetric sparse Q holding the products vals[k] * z_rows[k] * z_cols[k]."""
    rows, cols, vals = np.asarray(rows), np.asarray(cols), np.asarray(vals, dtype=float)
    off = rows != cols
    r = np.concatenate([rows[off], cols[off], rows[~off]])
    c = np.concatenate([cols[off], rows[off], cols[~off]])
    v = np.concatenate([vals[off] / 2, vals[off] / 2, vals[~off]])
    return sp.csr_matrix((v, (r, c)), shape=(n, n))
