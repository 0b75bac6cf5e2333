"""Open-pit mining: block models on 2-D/3-D grids with slope precedences, the exact MIP
(maximum-weight closure) and a naive and a safe QUBO.

Depth 0 is the surface. A block at depth d > 0 can be mined only if the blocks above it
inside the slope pattern are mined: 3 blocks in 2-D (45 degrees), 5 ("plus") or 9 ("box")
in 3-D.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from coplug.formulations.checks import (
    check_count,
    check_memory,
    check_positive,
    check_seed,
    numeric_array,
    plain_array,
    require_instance,
)
from coplug.formulations.qubo import PENALTY_LIMIT, QUBO, data_scale, symmetric
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

_PATTERNS = {
    2: {"slope": [(-1,), (0,), (1,)]},
    3: {
        "plus": [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)],
        "box": [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)],
    },
}


# How to make the model the builders take, for their type errors.
BLOCK_MODEL_HINT = ("BlockModel(values) with a 2-D or 3-D grid of block values, or "
                    "random_block_model(...)")


@dataclass(frozen=True, eq=False)
class BlockModel(ValueEquality):
    """Block values on a grid (axis 0 = depth) and a slope pattern (default: "slope" in 2-D,
    "plus" in 3-D) that defines the precedence arcs (pred, succ)."""

    values: np.ndarray
    pattern: str = ""

    def __post_init__(self) -> None:
        v = numeric_array(self.values, "block values")
        if v.ndim not in (2, 3):
            raise InputError(f"block values must be a 2-D or 3-D grid, got {v.ndim}-D")
        if min(v.shape) < 1 or v.size < 2:
            raise InputError(f"block grid too small: shape {v.shape}")
        if not np.isfinite(v).all():
            raise InputError("block values contain NaN or infinite entries")
        if isinstance(self.pattern, str | None) and not self.pattern:
            object.__setattr__(self, "pattern", "slope" if v.ndim == 2 else "plus")
        if not isinstance(self.pattern, str) or self.pattern not in _PATTERNS[v.ndim]:
            raise InputError(
                f"slope pattern {self.pattern!r} is not defined in {v.ndim}-D; "
                f"use one of {', '.join(_PATTERNS[v.ndim])}"
            )
        object.__setattr__(self, "values", v)

    @property
    def n(self) -> int:
        """Number of blocks."""
        return int(self.values.size)

    @property
    def flat_values(self) -> np.ndarray:
        """Block values in flat (C order) index."""
        return self.values.reshape(-1)

    @property
    def depth(self) -> np.ndarray:
        """Depth of each block (flat index)."""
        return np.unravel_index(np.arange(self.n), self.values.shape)[0]

    def arcs(self) -> np.ndarray:
        """(pred, succ) pairs: mining succ requires pred, pred one level up in the pattern."""
        shape = self.values.shape
        out = []
        for offset in _PATTERNS[self.values.ndim][self.pattern]:
            grids = np.indices(shape)
            above = [grids[0] - 1] + [g + o for g, o in zip(grids[1:], offset, strict=True)]
            ok = above[0] >= 0
            for ax, g in enumerate(above[1:], start=1):
                ok &= (g >= 0) & (g < shape[ax])
            succ = np.ravel_multi_index(tuple(g[ok] for g in grids), shape)
            pred = np.ravel_multi_index(tuple(g[ok] for g in above), shape)
            out.append(np.stack([pred, succ], axis=1))
        return np.concatenate(out)

    def max_successors(self) -> int:
        """Largest number of blocks directly below any block in the pattern."""
        return len(_PATTERNS[self.values.ndim][self.pattern])

    def is_feasible(self, x: np.ndarray) -> bool:
        """True when the 0/1 selection is closed under the precedences (a valid pit)."""
        x = plain_array(x, "a pit")
        if x.shape != (self.n,) or not np.isin(x, (0, 1)).all():
            return False
        a = self.arcs()
        return bool((x[a[:, 1]] <= x[a[:, 0]]).all())

    def value(self, x: np.ndarray) -> float:
        """Total value of a pit (a vector of length n, else InputError)."""
        x = numeric_array(x, "a pit")
        if x.shape != (self.n,):
            raise InputError(f"a pit must have length {self.n}, got shape {x.shape}")
        return float(self.flat_values @ x)


def random_block_model(
    size: int, seed: int = 0, dims: int = 2, pattern: str | None = None, max_depth: int = 8
) -> BlockModel:
    """About `size` blocks on a shallow grid: waste costs -1, a few Gaussian ore bodies pay.

    Depth is kept <= `max_depth`, since the safe QUBO's penalties grow geometrically
    with depth (see `openpit_qubo_safe`).
    """
    size = check_count(size, "block model size", 4)
    max_depth = check_count(max_depth, "max_depth", 1)
    if pattern is not None and not isinstance(pattern, str):  # an array failed on `or`
        raise InputError(f"pattern must be a name or None, got {pattern!r}")
    if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or dims not in (2, 3):
        raise InputError(f"dims must be 2 or 3, got {dims!r}")
    rng = np.random.default_rng(check_seed(seed))
    if dims == 2:
        nz = int(np.clip(round(size**0.5 / 3), 2, max_depth))
        shape: tuple[int, ...] = (nz, max(2, size // nz))
    else:
        nz = int(np.clip(round(size ** (1 / 3) / 2), 2, max_depth))
        side = max(2, int(round((size / nz) ** 0.5)))
        shape = (nz, side, side)
    check_memory(32.0 * math.prod(shape), f"random_block_model({size})",  # 4 float arrays
                 "use a smaller size")
    grade = np.zeros(shape)
    for _ in range(max(1, int(np.prod(shape[1:])) // 25)):
        centre = [rng.uniform(0.4, 1.0) * shape[0]] + [rng.uniform(0, s) for s in shape[1:]]
        spread = rng.uniform(1.0, 3.0)
        _add_ore_body(grade, centre, spread, rng.uniform(4, 12))
    values = np.round(grade - 1.0 + rng.normal(0, 0.3, size=shape), 1)
    return BlockModel(values, pattern=pattern or ("slope" if dims == 2 else "plus"))


def _add_ore_body(grade: np.ndarray, centre: list[float], spread: float, peak: float) -> None:
    """Add a Gaussian ore body to `grade` within 10 spreads of its centre laterally: farther
    out it adds under exp(-50) of its peak, nothing to a grade rounded to 0.1, and adding it
    over the whole grid made the generator quadratic (one body per 25 columns)."""
    reach = int(np.ceil(10 * spread))
    window = (slice(0, grade.shape[0]),) + tuple(
        slice(max(0, int(c) - reach), min(size, int(c) + reach + 1))
        for c, size in zip(centre[1:], grade.shape[1:], strict=True))
    grids = np.ogrid[window]
    dist2 = sum((g - c) ** 2 for g, c in zip(grids, centre, strict=True))
    grade[window] += peak * np.exp(-dist2 / (2 * spread**2))


def openpit_mip(model: BlockModel) -> pyo.ConcreteModel:
    """Exact MIP: maximize sum v_b x_b subject to x_succ <= x_pred on every arc, x binary."""
    require_instance(model, BlockModel, "openpit_mip", BLOCK_MODEL_HINT)
    m = pyo.ConcreteModel(name="openpit")
    m.B = pyo.RangeSet(0, model.n - 1)
    m.x = pyo.Var(m.B, domain=pyo.Binary)
    arcs = [(int(p), int(s)) for p, s in model.arcs()]
    m.ARCS = pyo.Set(initialize=arcs, dimen=2)
    m.precedence = pyo.Constraint(m.ARCS, rule=_precedence)
    v = model.flat_values
    m.value = pyo.Objective(expr=sum(float(v[b]) * m.x[b] for b in m.B), sense=pyo.maximize)
    return m


def _precedence(m: pyo.ConcreteModel, p: int, s: int) -> Any:
    """Block s is mined only when its predecessor p is."""
    return m.x[s] <= m.x[p]


def _qubo(model: BlockModel, weights: np.ndarray, mu: np.ndarray, margin: float, form: str):
    """-v'x + sum_arcs P_a x_succ (1 - x_pred) + sum_b mu_b x_b (1 - x_b) as a QUBO."""
    n = model.n
    arcs = model.arcs()
    v = model.flat_values
    Q = symmetric(arcs[:, 0], arcs[:, 1], -weights, n) + symmetric(
        np.arange(n), np.arange(n), -mu, n
    )
    c = -v + np.bincount(arcs[:, 1], weights=weights, minlength=n) + mu
    return QUBO(
        Q=Q,
        c=c,
        constant=0.0,
        decode=_rounded,
        is_feasible=model.is_feasible,
        objective=model.value,
        sense=-1,
        margin=margin,
        form=form,
        problem="openpit",
        names=[f"b{b}" for b in range(n)],
    )


def openpit_qubo_naive(model: BlockModel, penalty: float | None = None) -> QUBO:
    """Textbook QUBO: -v'x + P sum_arcs x_succ (1 - x_pred), one P = max|v| + 1.

    Zero diagonal (multilinear) and one uniform P: a mined band whose top row has as many
    unmined predecessors as mined successors is a flat or strict infeasible local minimum.
    """
    require_instance(model, BlockModel, "openpit_qubo_naive", BLOCK_MODEL_HINT)
    P = (float(np.abs(model.flat_values).max()) + 1.0 if penalty is None
         else check_positive(penalty, "penalty"))
    arcs = model.arcs()
    return _qubo(model, np.full(len(arcs), P), np.zeros(model.n), 0.0, "naive")


def openpit_penalties(model: BlockModel) -> np.ndarray:
    """Level weights P_d (arcs into depth d): P_d = 2 (K P_{d+1} + v+), P_{deepest} = 2 v+.

    Removing any mined block with an unmined predecessor at depth d then changes the energy
    by <= v+ - P_d + K P_{d+1} = -P_d / 2 (K = max successors, v+ = max v over the blocks
    below the surface, or `_value_scale` where none is worth anything, so the form scales
    with the values: a surface block has no predecessor and is never the one
    dropped, and its value had set every penalty: a surface block worth 10,000 was left
    unmined by 10 of 50 PGD ends).
    P_0 grows like (2K)^depth, and energies are float64 sums of terms up to P_0, each known
    to about ulp(P_0) = P_0 * 2^-52. Past P_0 > PENALTY_LIMIT * v+ (2^32, so ulp(P_0) >
    2^-20 v+, about a millionth of the largest value) the energy would no longer resolve
    block values, and InputError is raised before any QUBO is built.
    """
    require_instance(model, BlockModel, "openpit_penalties", BLOCK_MODEL_HINT)
    depth = model.values.shape[0]
    K = model.max_successors()
    below = model.values[1:]
    top = float(below.max()) if below.size else 0.0
    vplus = data_scale(top, _value_scale(model))
    levels = [2.0 * vplus]
    for _ in range(depth - 1):
        levels.append(2.0 * (K * levels[-1] + vplus))
    if levels[-1] > PENALTY_LIMIT * vplus:
        raise InputError(
            f"open-pit model of depth {depth} needs the safe-QUBO penalty P_0 = "
            f"{levels[-1]:.3g}, over {PENALTY_LIMIT:.3g} times the largest value of a "
            f"block below the surface, {vplus:g}: float64 energies could no longer resolve "
            "block values; solve the exact MIP openpit_mip(model) instead"
        )
    return np.array(levels[::-1])


def _value_scale(model: BlockModel) -> float:
    """The largest block value's size (1 where every value is 0): v+ where no block below
    the surface is worth anything, as any positive v+ is safe there and this one scales
    with the values."""
    return data_scale(float(np.abs(model.flat_values).max()))


def openpit_qubo_safe(model: BlockModel) -> QUBO:
    """Safe QUBO: every local minimizer of its box relaxation is a feasible pit.

    Arc (pred -> succ at depth d) weighs P_d from `openpit_penalties`, block b gets the
    concavity mu_b = P_{depth(b)} / 4 > 0, so the diagonal is negative and every mined block
    with an unmined predecessor can be dropped for an energy decrease >= P_d / 2 > mu_b
    (proof in README.md). The penalties grow like (2K)^depth: keep pits shallow (too deep
    a pit for float64 is refused, see `openpit_penalties`).
    """
    require_instance(model, BlockModel, "openpit_qubo_safe", BLOCK_MODEL_HINT)
    P = openpit_penalties(model)
    arcs = model.arcs()
    depth = model.depth
    weights = P[depth[arcs[:, 1]]]
    mu = P[depth] / 4.0
    return _qubo(model, weights, mu, float(P.min() / 2.0), "safe")


def registry_model(size: int, seed: int) -> pyo.ConcreteModel:
    """`coplug solve openpit --size N`: closure MIP of a random 2-D block model."""
    return openpit_mip(random_block_model(size, seed=seed))


def _rounded(z: np.ndarray) -> np.ndarray:
    """Every coordinate rounded to 0/1: a pit's decoding (a module function, so a QUBO
    pickles)."""
    return np.round(np.asarray(z)).astype(int)
