"""0/1 knapsack: seeded generators, the classic text format, the exact MIP and two QUBOs."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from coplug.formulations.checks import (
    check_choice,
    check_count,
    check_memory,
    check_positive,
    check_seed,
    plain_array,
    read_text_file,
    require_instance,
    text_lines,
)
from coplug.formulations.qubo import PENALTY_LIMIT, QUBO, data_scale
from coplug.formulations.qubo_solvers import PENALTY_RTOL
from coplug.plugins.arguments import check_exact_integers, detached, refuse_masked
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

# The safe placement QUBO has about n * C variables and n * C * w nonzeros; past this many
# nonzeros (about 60 MB while building) knapsack_qubo_safe refuses and points to the MIP.
SAFE_MAX_NONZEROS = 1_000_000
_INTEGER = re.compile(r"[-+]?[0-9]+")  # ASCII digits: what knapsack files write


# How to make the instance the builders take, for their type errors.
KNAPSACK_HINT = ("KnapsackInstance(values, weights, capacity), random_knapsack(n) or "
                 "load_knapsack(path)")


@dataclass(frozen=True, eq=False)
class KnapsackInstance(ValueEquality):
    """Item values (finite, >= 0), integer item weights and an integer capacity (>= 0).

    Whole-number floats are accepted for weights and capacity and stored as integers.
    """

    values: np.ndarray
    weights: np.ndarray
    capacity: int

    def __post_init__(self) -> None:
        values = _finite_nonnegative(self.values, "values")
        weights = _nonnegative_ints(self.weights, "weights")
        if values.ndim != 1 or weights.shape != values.shape:
            raise InputError(
                f"values and weights must be 1-D of one length, got shapes "
                f"{values.shape} and {weights.shape}"
            )
        if values.size == 0:
            raise InputError("a knapsack instance needs at least one item")
        if isinstance(self.capacity, (bool, np.bool_)):  # True was a capacity of 1
            raise InputError(f"capacity must be a non-negative integer, got {self.capacity!r}")
        capacity = _nonnegative_ints(self.capacity, "capacity")
        if capacity.ndim != 0:
            raise InputError(f"capacity must be one number, got shape {capacity.shape}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "capacity", int(capacity))

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.values.size)

    def is_feasible(self, x: np.ndarray) -> bool:
        """True when a 0/1 vector of length n fits the capacity (False for any other shape,
        as `BlockModel.is_feasible`)."""
        x = plain_array(x, "a knapsack selection")
        if x.shape != (self.n,) or not np.isin(x, (0, 1)).all():
            return False
        return sum(int(w) for w in self.weights[x == 1]) <= self.capacity  # exact: no wrap

    def value(self, x: np.ndarray) -> float:
        """Total value of a selection (a vector of length n, else InputError)."""
        x = plain_array(x, "a knapsack selection")
        if x.shape != (self.n,):
            raise InputError(f"a knapsack selection must have length {self.n}, got shape "
                             f"{x.shape}")
        if self.values.dtype.kind in "iu" and np.isin(x, (0, 1)).all() and \
                float(np.abs(self.values).max(initial=0)) * self.n >= 2.0**62:
            return float(sum(int(v) for v in self.values[x == 1]))  # int64 would wrap
        return float(self.values @ x)


def _as_numbers(data: object, field: str) -> np.ndarray:
    """A copy of `data` as real numbers (booleans and integers kept exact; a copy, so the
    caller's later edits cannot reach a checked instance), or an error naming the field."""
    refuse_masked(data, f"knapsack {field}")
    data = detached(data, f"knapsack {field}")
    try:
        array = np.array(data)
    except ValueError:  # ragged: [1, [2, 3]]
        raise InputError(f"knapsack {field} must be a flat list of numbers") from None
    if array.dtype.kind == "O":  # Python numbers held as objects (a pandas object column)
        array = _from_objects(array, field)
    too_big = array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max
    if too_big:
        raise InputError(f"knapsack {field} must fit in 64-bit integers (|value| < 2**63)")
    if array.dtype.kind in "biu":
        return array.astype(np.int64)
    if array.dtype.kind != "f":
        raise InputError(f"knapsack {field} must be numeric, got {array.dtype} data")
    return array


def _from_objects(array: np.ndarray, field: str) -> np.ndarray:
    """An object array of integers as int64, of real numbers as float64 (any other object
    is left for the numeric check to name); integers past int64 are refused, as numpy keeps
    them as objects (small ones in an object array had been refused as too big)."""
    values = list(array.flat)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
           for v in values):
        if any(not -(2**63) <= int(v) < 2**63 for v in values):
            raise InputError(f"knapsack {field} must fit in 64-bit integers (|value| < 2**63)")
        return array.astype(np.int64)
    if all(isinstance(v, (int, float, np.integer, np.floating))
           and not isinstance(v, (bool, np.bool_)) for v in values):
        return array.astype(np.float64)
    return array


def _first_bad(bad: np.ndarray, array: np.ndarray, field: str, want: str) -> None:
    """Raise an error naming the first flagged entry of `array` (its index when it has one)."""
    if bad.any():
        index = tuple(int(k) for k in np.argwhere(bad)[0])
        where = field if array.ndim == 0 else f"{field}[{', '.join(map(str, index))}]"
        raise InputError(f"knapsack {where} must be {want}, got {array[index].item()!r}")


def _finite_nonnegative(data: object, field: str) -> np.ndarray:
    """Finite non-negative numbers, checked entry by entry so the error names the index."""
    array = _as_numbers(data, field)
    _first_bad(~np.isfinite(array) | (array < 0), array, field, "a finite number >= 0")
    return array


def _nonnegative_ints(data: object, field: str) -> np.ndarray:
    """Non-negative integers; whole-number floats become int64, anything else is named."""
    array = _as_numbers(data, field)
    want = "a non-negative integer"
    if array.dtype.kind == "f":
        whole = np.isfinite(array) & (np.floor(array) == array) & (np.abs(array) < 2.0**63)
        _first_bad(~whole, array, field, want)
        array = array.astype(np.int64)
    _first_bad(array < 0, array, field, want)
    return array


def random_knapsack(
    n: int, seed: int = 0, kind: str = "uncorrelated", r: int = 100
) -> KnapsackInstance:
    """Pisinger-style instance: `uncorrelated` or `strongly_correlated` (v = w + r/10),
    weights (and uncorrelated values) drawn from 1..r."""
    n = check_count(n, "knapsack size n", 1)
    kind = check_choice(kind, "knapsack kind", ("uncorrelated", "strongly_correlated"))
    r = check_count(r, "knapsack weight range r", 1, 2**62)
    if n * (r + (r // 10 if kind == "strongly_correlated" else 0)) >= 2**63:
        raise InputError(f"knapsack n * r = {n} * {r} is too large: the total weight and value "
                         "must fit in 64-bit integers (below 2**63)")
    check_memory(24.0 * n, f"random_knapsack(n={n})", "use a smaller n")  # 3 int64 arrays
    rng = np.random.default_rng(check_seed(seed))
    weights = rng.integers(1, r + 1, size=n)
    if kind == "uncorrelated":
        values = rng.integers(1, r + 1, size=n)
    else:
        values = weights + r // 10
    capacity = sum(int(w) for w in weights) // 2  # Python ints: an int64 sum could wrap
    return KnapsackInstance(values=values, weights=weights, capacity=capacity)


def knapsack_mip(instance: KnapsackInstance) -> pyo.ConcreteModel:
    """Exact MIP: maximize sum v_i x_i subject to sum w_i x_i <= C, x binary. Data at or above
    2**53 is refused: solvers read coefficients as float64, which rounds such integers (a
    weight 2**53 + 1 fit a capacity 2**53)."""
    require_instance(instance, KnapsackInstance, "knapsack_mip", KNAPSACK_HINT)
    _check_float_exact(instance)
    m = pyo.ConcreteModel(name="knapsack")
    m.I = pyo.RangeSet(0, instance.n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.capacity = pyo.Constraint(
        expr=sum(float(instance.weights[i]) * m.x[i] for i in m.I) <= instance.capacity
    )
    m.value = pyo.Objective(
        expr=sum(float(instance.values[i]) * m.x[i] for i in m.I), sense=pyo.maximize
    )
    return m


FLOAT_EXACT = 2**53


def _numbers(instance: KnapsackInstance) -> tuple[tuple[str, np.ndarray], ...]:
    """The instance's values, weights and capacity by name, each as an array."""
    return (("values", instance.values), ("weights", instance.weights),
            ("capacity", np.asarray([instance.capacity])))


def _check_float_exact(instance: KnapsackInstance) -> None:
    """Refuse values, weights or a capacity float64 cannot hold exactly."""
    for name, data in _numbers(instance):
        big = np.flatnonzero(np.abs(np.asarray(data, dtype=object)) >= FLOAT_EXACT)
        if big.size:
            where = "" if name == "capacity" else f"[{int(big[0])}]"
            raise InputError(f"knapsack {name}{where} is at or above 2**53: the MIP's float64 "
                             "coefficients would round it; scale the instance down")


def _check_exact_integers(instance: KnapsackInstance) -> None:
    """Refuse integer values, weights or a capacity float64 rounds: the QUBO forms are
    solved in float64, and values 2**53 + 1 and 2**53 gave two placements one coefficient."""
    for name, data in _numbers(instance):
        check_exact_integers(np.asarray(data), f"knapsack {name}")


def load_knapsack(path: str | Path) -> KnapsackInstance:
    """Read a classic knapsack text file; errors name the offending line.

    Two layouts are accepted: ``n capacity`` then n lines ``value weight`` (the usual
    teaching format), or Pisinger's ``n`` then n lines ``id value weight`` then ``capacity``.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError(f"knapsack file not found: {path}")
    lines = [
        (k + 1, line.split())
        for k, line in enumerate(text_lines(read_text_file(path, "knapsack file")))
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError(f"{path}: empty knapsack file")
    head_no, head = lines[0]
    header = _ints(path, head_no, head, (1, 2))
    n = header[0]
    if n < 1:
        raise InputError(f"{path}:{head_no}: item count must be >= 1, got {n}")
    body = lines[1 : n + 1]
    if len(body) < n:
        raise InputError(f"{path}: header on line {head_no} announces {n} items, found {len(body)}")
    width = 2 if len(header) == 2 else 3
    rows = [_ints(path, no, toks, (width,)) for no, toks in body]
    values = np.array([r[-2] for r in rows])
    weights = np.array([r[-1] for r in rows])
    for (no, _), v, w in zip(body, values, weights, strict=True):
        if v < 0 or w < 0:
            raise InputError(f"{path}:{no}: value and weight must be non-negative")
        if max(v, w) >= 2**63:
            raise InputError(f"{path}:{no}: value and weight must fit in 64-bit integers "
                             "(below 2**63)")
    if len(header) == 2:
        capacity, extra, cap_no = header[1], lines[n + 1 :], head_no
    else:
        if len(lines) < n + 2:
            raise InputError(f"{path}: missing capacity line after the {n} items")
        cap_no, cap = lines[n + 1]
        capacity, extra = _ints(path, cap_no, cap, (1,))[0], lines[n + 2 :]
    if extra:
        raise InputError(f"{path}:{extra[0][0]}: unexpected content after the items")
    if not 0 <= capacity < 2**63:
        raise InputError(f"{path}:{cap_no}: capacity must be a non-negative 64-bit integer, "
                         f"got {capacity}")
    return KnapsackInstance(values=values, weights=weights, capacity=int(capacity))


def save_knapsack(instance: KnapsackInstance, path: str | Path) -> None:
    """Write an instance in the ``n capacity`` / ``value weight`` layout (integers only, as
    the reader takes; a fractional value is refused, never truncated)."""
    require_instance(instance, KnapsackInstance, "save_knapsack", KNAPSACK_HINT)
    fractional = np.flatnonzero(np.asarray(instance.values) != np.round(instance.values))
    if fractional.size:
        i = int(fractional[0])
        raise InputError(f"the knapsack file layout holds integers; values[{i}] is "
                         f"{float(instance.values[i])!r}")
    values = np.asarray(instance.values)
    too_big = (np.flatnonzero(values.astype(float) >= 2.0**63) if values.dtype.kind == "f"
               else np.empty(0, dtype=np.int64))  # integer dtypes fit by construction
    if too_big.size:
        i = int(too_big[0])
        raise InputError(f"values[{i}] = {float(instance.values[i])!r} does not fit the file's "
                         "64-bit integers (below 2**63), so it could not be read back")
    lines = [f"{instance.n} {instance.capacity}"]
    lines += [f"{int(v)} {int(w)}" for v, w in zip(instance.values, instance.weights, strict=True)]
    path = Path(path).expanduser()
    try:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:  # a missing folder, a folder by that name, a read-only place
        raise InputError(f"cannot write knapsack file {path}: {exc.strerror or exc}") from None


def _ints(path: Path, line_no: int, tokens: list[str], widths: tuple[int, ...]) -> list[int]:
    """Parse one line of integers with an expected token count, or name the line."""
    if len(tokens) not in widths:
        want = " or ".join(str(w) for w in widths)
        raise InputError(f"{path}:{line_no}: expected {want} numbers, got {len(tokens)}")
    if not all(_INTEGER.fullmatch(t) for t in tokens):  # int() takes "1_0" and "١٠" as 10
        raise InputError(f"{path}:{line_no}: not an integer in {' '.join(tokens)!r}")
    return [int(t) for t in tokens]


def knapsack_qubo_naive(instance: KnapsackInstance) -> QUBO:
    """Textbook QUBO: -v'x + P (w'x + a'y - C)^2, binary slack y, x_i^2 kept, P = max v + 1.

    Violates both structural conditions: the squared penalty has positive diagonal (so the
    relaxation has fractional minimizers, e.g. the LP-like point w'x = C) and its single
    flips change the residual by w_i, so overweight points with small residual are traps.
    """
    require_instance(instance, KnapsackInstance, "knapsack_qubo_naive", KNAPSACK_HINT)
    _check_exact_integers(instance)
    n, C = instance.n, int(instance.capacity)
    slack = _slack_coefficients(C)
    a = np.concatenate([instance.weights.astype(float), slack])
    P = float(instance.values.max()) + 1.0
    N = a.size
    c = np.zeros(N)
    c[:n] = -instance.values
    c -= 2 * P * C * a
    return QUBO(
        Q=sp.csr_matrix((N, N)),
        c=c,
        constant=P * C * C,
        A=sp.csr_matrix(a[None, :]),
        weights=np.array([P]),
        decode=functools.partial(_rounded_prefix, n=n),
        is_feasible=instance.is_feasible,
        objective=instance.value,
        sense=-1,
        margin=0.0,
        form="naive",
        problem="knapsack",
        names=[f"x{i}" for i in range(n)] + [f"s{k}" for k in range(slack.size)],
    )


def _slack_coefficients(C: int) -> np.ndarray:
    """Bounded binary expansion 1, 2, 4, ..., r with sum exactly C (empty when C = 0)."""
    coeffs, total, k = [], 0, 1
    while total + k <= C:
        coeffs.append(k)
        total += k
        k *= 2
    if total < C:
        coeffs.append(C - total)
    return np.array(coeffs, dtype=float)


def safe_qubo_size(instance: KnapsackInstance) -> tuple[int, int]:
    """Variables and stored nonzeros (penalty rows plus diagonal) of the safe QUBO, exactly.

    Computed from the weights alone, in Python integers, so a size check never allocates
    (or overflows) what it is meant to refuse. An instance where nothing fits gets the
    one placeholder variable of `knapsack_qubo_safe`.
    """
    require_instance(instance, KnapsackInstance, "safe_qubo_size", KNAPSACK_HINT)
    C = int(instance.capacity)
    variables, nonzeros = 0, 0
    for w in instance.weights.tolist():
        if w <= C:
            placements = C - w + 1 if w > 0 else 1
            variables += placements
            nonzeros += placements * (w + 2)  # w slot rows, the item row, the diagonal
    return (variables, nonzeros) if variables else (1, 1)


def knapsack_qubo_safe(
    instance: KnapsackInstance,
    margin: float | None = None,
    max_nonzeros: int = SAFE_MAX_NONZEROS,
) -> QUBO:
    """Placement QUBO whose every local minimizer on [0,1]^n is binary and feasible.

    Variable y[i,p] puts item i on the capacity slots [p, p + w_i) of a line of C slots.
    Energy: -sum v_i y[i,p] + P * (pairs sharing a slot, counted per shared slot)
    + P * (pairs of placements of one item) + mu * sum y(1 - y), with the squares of the
    pair counts multilinearised. Feasible packings are exactly the knapsack solutions
    (non-overlapping intervals in [0, C) have total length <= C and conversely). Every
    infeasible binary point has a placement whose removal changes the energy by at most
    v+ - P = -margin, v+ the largest value a conflict may force out (`_conflict_value_max`;
    the default margin is v+); the diagonal is -mu < 0 with mu = margin / 2 (README.md).
    The size is pseudo-polynomial (about n * C variables): past `max_nonzeros` stored
    nonzeros (default SAFE_MAX_NONZEROS) it raises InputError before allocating anything.
    When no item fits, the empty selection is the only solution and the QUBO is one
    placeholder variable with energy mu * y(1 - y), zero on both binary values.
    """
    require_instance(instance, KnapsackInstance, "knapsack_qubo_safe", KNAPSACK_HINT)
    _check_exact_integers(instance)
    C = int(instance.capacity)
    vmax = _conflict_value_max(instance)
    if margin is None:  # v+ itself rises to the floor where far larger values set it
        vmax = max(vmax, smallest_margin(instance))
    delta = vmax if margin is None else check_positive(margin, "margin")
    max_nonzeros = check_count(max_nonzeros, "max_nonzeros", 1)
    variables, nonzeros = safe_qubo_size(instance)
    if nonzeros > max_nonzeros:
        raise InputError(
            f"the safe knapsack QUBO would have {variables} variables and {nonzeros} "
            f"nonzeros ({instance.n} items, capacity {C}), over the limit {max_nonzeros} "
            "(raise it with max_nonzeros=, --max-nonzeros on the command line); its size "
            "grows with the capacity, so solve the exact MIP knapsack_mip(instance) with SCIP "
            "or HiGHS instead (from the command line: coplug qubo knapsack --file F --form "
            "naive)"
        )
    _check_margin(instance, vmax, delta, margin)
    P = vmax + delta
    mu = delta / 2
    item_of, start_of = [], []
    for i, w in enumerate(instance.weights):
        if w <= C:
            starts = np.arange(C - w + 1) if w > 0 else np.zeros(1, dtype=int)
            item_of.append(np.full(starts.size, i))
            start_of.append(starts)
    if not item_of:
        return _empty_knapsack_qubo(instance, delta)
    item = np.concatenate(item_of)
    start = np.concatenate(start_of)
    N = item.size
    wv = instance.weights[item]
    rows_r, rows_c = [], []
    for k in range(N):
        rows_r.append(np.arange(start[k], start[k] + wv[k]))
        rows_c.append(np.full(wv[k], k))
    slot_rows = np.concatenate(rows_r) if rows_r else np.zeros(0, dtype=int)
    slot_cols = np.concatenate(rows_c) if rows_c else np.zeros(0, dtype=int)
    A_slots = sp.csr_matrix((np.ones(slot_rows.size), (slot_rows, slot_cols)), shape=(C, N))
    A_items = sp.csr_matrix((np.ones(N), (item, np.arange(N))), shape=(instance.n, N))
    A = sp.vstack([A_slots, A_items]).tocsr()
    count = np.asarray(A.sum(axis=0)).reshape(-1)
    Q = sp.diags(-(P / 2) * count - mu).tocsr()
    c = -instance.values[item].astype(float) + mu

    qubo = QUBO(
        Q=Q,
        c=c,
        constant=0.0,
        A=A,
        weights=np.full(A.shape[0], P / 2),
        decode=functools.partial(_placed_items, item=item, n=instance.n),
        names=[f"y{i}@{p}" for i, p in zip(item, start, strict=True)],
        **_safe_fields(instance, delta),
    )
    if not qubo.diagonal().max() < 0:  # the margin check above should make this unreachable
        raise InputError(f"margin {delta!r} is lost to float64 rounding: the safe QUBO's "
                         "diagonal is not negative; use a larger margin")
    return qubo


# A margin is kept only when it is this many float64 ulps of the largest penalty sum a
# variable's terms reach (P times its row count): smaller ones vanish from the diagonal or
# drown in the energy's rounding error, and the QUBO is no longer safe.
MARGIN_ULPS = 2**16
# ... and this many times certify's zero-penalty allowance (PENALTY_RTOL of a point's
# magnitude) at a point that decodes to a feasible packing with one placement too many:
# its penalty is the margin, its magnitude up to about 2 v_max (n + C + 1).
MARGIN_OVER_ALLOWANCE = 4


def smallest_margin(instance: KnapsackInstance) -> float:
    """The smallest margin `knapsack_qubo_safe` keeps: MARGIN_ULPS ulps of P * (largest row
    count of a placement, w_i + 1) with P about v_max, and MARGIN_OVER_ALLOWANCE
    times what `certify` takes for a zero penalty at a point of up to n + C + 1 placements
    and slots (past 12 items a margin at the ulps floor was called zero)."""
    require_instance(instance, KnapsackInstance, "smallest_margin", KNAPSACK_HINT)
    C = int(instance.capacity)
    fits = instance.weights[instance.weights <= C]
    count = int(fits.max()) + 1 if fits.size else 1
    vmax = _placed_value_max(instance)
    rounding = MARGIN_ULPS * float(np.finfo(float).eps) * vmax * count
    allowance = PENALTY_RTOL * 2.0 * vmax * (instance.n + C + 1)
    return max(rounding, MARGIN_OVER_ALLOWANCE * allowance)


def _placed_value_max(instance: KnapsackInstance) -> float:
    """v_max over the items that fit (w_i <= C; 1 where none is worth anything): the size
    of a point's terms, which sets `smallest_margin` (an item heavier than the capacity has
    no placement)."""
    fits = instance.values[instance.weights <= int(instance.capacity)]
    return data_scale(float(fits.max()) if fits.size else 0.0)


def _conflict_value_max(instance: KnapsackInstance) -> float:
    """v+ = v*, the largest value C2 may have to drop (else `_placed_value_max`, as any
    positive value is safe there, so the form scales with the values): an item's with two or
    more placements (0 < w_i < C: two of them conflict), or the smaller of two items of
    positive weight that fit (their placements can share a slot; the cheaper one is
    dropped). An item heavier than the capacity has no placement and one of weight 0 or
    of weight C alone conflicts with nothing of its own; their values had set the
    penalties (a value of 100 next to ones up to 6 sent every Adam start to the empty
    knapsack, or to that item alone)."""
    C = int(instance.capacity)
    values, weights = instance.values.astype(float), instance.weights
    several = values[(weights > 0) & (weights < C)]
    sized = np.sort(values[(weights > 0) & (weights <= C)])
    drops = [0.0]
    if several.size:
        drops.append(float(several.max()))
    if sized.size >= 2:
        drops.append(float(sized[-2]))
    return data_scale(max(drops), _placed_value_max(instance))


def _check_margin(
    instance: KnapsackInstance, vmax: float, delta: float, margin: float | None
) -> None:
    """Refuse a margin float64 rounds away next to the penalties, or `certify` could not
    tell from zero (see `smallest_margin`), and one so large that the penalties round the
    item values away (PENALTY_LIMIT: margin 1e20 on values up to 10 left one distinct linear
    term, every start at the empty knapsack)."""
    floor = smallest_margin(instance)
    if delta < floor or not (vmax + delta) - vmax > 0:
        given = "the default margin max(v_max, 1)" if margin is None else f"margin {delta!r}"
        raise InputError(
            f"{given} is lost to float64 rounding next to penalties of about "
            f"{vmax:.3g} on up to {instance.n + int(instance.capacity) + 1} "
            f"placements and slots: the QUBO would not be safe; use margin >= {floor:.3g}"
        )
    if delta > PENALTY_LIMIT * vmax:
        raise InputError(
            f"margin {delta!r} is over {PENALTY_LIMIT:.3g} times the largest item value a "
            f"conflict can force out, {vmax:.3g}: penalties that large round the item "
            "values away in float64 (at 1e20 every start ended at the empty knapsack); use a "
            "smaller margin"
        )


def _empty_knapsack_qubo(instance: KnapsackInstance, delta: float) -> QUBO:
    """The safe QUBO of a knapsack where no item fits: one placeholder y, energy mu y(1 - y).

    Both binary values decode to the empty selection (feasible, value 0) and have energy 0;
    the diagonal is -mu < 0, so the only local minimizers of the relaxation are y = 0, 1.
    """
    mu = delta / 2
    return QUBO(
        Q=sp.csr_matrix(np.array([[-mu]])),
        c=np.array([mu]),
        constant=0.0,
        decode=functools.partial(_no_items, n=instance.n),
        names=["empty"],
        **_safe_fields(instance, delta),
    )


def _safe_fields(instance: KnapsackInstance, delta: float) -> dict:
    """The QUBO fields every safe knapsack form shares: feasibility, value, sense, margin."""
    return {"is_feasible": instance.is_feasible, "objective": instance.value, "sense": -1,
            "margin": delta, "form": "safe", "problem": "knapsack"}


# The QUBOs' decoders, module functions bound with functools.partial so a QUBO pickles (a
# closure made pickle fail: "Can't pickle local object 'knapsack_qubo_safe.<locals>...'").
def _rounded_prefix(z: np.ndarray, n: int) -> np.ndarray:
    """The first n coordinates rounded to 0/1 (the item variables before any slack)."""
    return np.round(np.asarray(z)[:n]).astype(int)


def _placed_items(z: np.ndarray, item: np.ndarray, n: int) -> np.ndarray:
    """The items with a placement variable at 1 (the safe form's y[i, p])."""
    x = np.zeros(n, dtype=int)
    x[np.unique(item[np.asarray(z) > 0.5])] = 1
    return x


def _no_items(z: np.ndarray, n: int) -> np.ndarray:
    """The empty selection: the decoding of a QUBO with no variables to place."""
    return np.zeros(n, dtype=int)
