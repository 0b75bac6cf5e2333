"""Travelling salesman: seeded Euclidean instances, a TSPLIB reader, the exact MIP (MTZ) and
a naive and a safe position-based QUBO.

QUBO variables x[i, t] (city i in 1..n-1 at tour position t in 1..n-1); city 0 is fixed at
position 0, which removes the rotation symmetry and keeps n - 1 one-hot rows and columns.
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo

from coplug.formulations.checks import (
    check_choice,
    check_count,
    check_memory,
    check_positive,
    check_seed,
    numeric_array,
    plain_array,
    read_text_file,
    text_lines,
)
from coplug.formulations.qubo import QUBO, data_scale, multilinear_pairs, symmetric
from coplug.plugins.errors import InputError, SolverError
from coplug.plugins.interrupts import stops_on_interrupt
from coplug.plugins.value_equality import ValueEquality

# The position QUBOs have (n-1)^2 variables and about 2 n^3 stored nonzeros; past this many
# (about 100 cities, some 100 MB while building) tsp_qubo_safe and tsp_qubo_naive refuse
# and point to the exact MIP.
MAX_NONZEROS = 2_000_000
# Peak bytes per city pair of building an instance's distance matrix, measured with tracemalloc
# for every coordinate type and random_*: three n x n float arrays, held while TSPInstance
# validates (the matrix, its float copy and the checked copy) and by GEO's in-place buffers;
# the other distance functions need two.
MATRIX_BYTES_PER_PAIR = 24

@dataclass(frozen=True, eq=False)
class TSPInstance(ValueEquality):
    """A square non-negative distance matrix (zero diagonal), optional coordinates."""

    dist: np.ndarray
    coords: np.ndarray | None = None
    name: str = "tsp"
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        d = check_distances(self.dist)
        object.__setattr__(self, "dist", d)

    @property
    def n(self) -> int:
        """Number of cities."""
        return int(self.dist.shape[0])


def check_distances(dist: np.ndarray) -> np.ndarray:
    """Validate a distance matrix: numeric, square, >= 3 cities, finite, non-negative."""
    d = numeric_array(dist, "distance matrix")
    if d.ndim != 2 or d.shape[0] != d.shape[1]:
        raise InputError(f"distance matrix must be square, got shape {d.shape}")
    if d.shape[0] < 3:
        raise InputError(f"a TSP needs at least 3 cities, got {d.shape[0]}")
    if not np.isfinite(d).all():
        raise InputError("distance matrix contains NaN or infinite entries")
    if (d < 0).any():
        raise InputError("distances must be non-negative")
    np.fill_diagonal(d, 0.0)  # numeric_array's astype made d a copy: the caller's is kept
    return d


def _check_matrix_memory(n: int) -> None:
    """Refuse n cities whose dense distance matrix cannot be built in this machine's memory
    (numpy's MemoryError traceback, or the OOM killer, would come first)."""
    check_memory(MATRIX_BYTES_PER_PAIR * n * n, f"the {n} x {n} TSP distance matrix",
                 "use fewer cities")


def random_euclidean(n: int, seed: int = 0, scale: float = 100.0) -> TSPInstance:
    """n uniform points in a square, TSPLIB EUC_2D distances (rounded to nearest integer)."""
    n = check_count(n, "TSP size n", 3)
    _check_matrix_memory(n)
    seed = check_seed(seed)
    scale = check_positive(scale, "scale")
    coords = np.random.default_rng(seed).uniform(0, scale, size=(n, 2))
    return TSPInstance(euc_2d(coords), coords=coords, name=f"rand{n}_{seed}")


def random_asymmetric(n: int, seed: int = 0, high: int = 99) -> TSPInstance:
    """Asymmetric TSP: arc lengths uniform integers in 1..high, zero diagonal. Its assignment
    relaxation is tight, the case the LAP heuristic is built for."""
    n = check_count(n, "TSP size n", 3)
    _check_matrix_memory(n)
    seed = check_seed(seed)
    high = check_count(high, "largest arc length", 1, 2**53)  # whole floats above 2**53 skip
    dist = np.random.default_rng(seed).integers(1, high + 1, (n, n)).astype(float)
    return TSPInstance(dist, name=f"atsp{n}_{seed}")


# TSPLIB 95 distance functions (Reinelt, "TSPLIB 95", section 2); each returns the n x n matrix.
# They work in place on n x n buffers: (n, n, 2) temporaries peaked at 760 MiB for n = 5000.
def _nint(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """TSPLIB nint as (int)(x + 0.5), exact for the non-negative values it rounds here;
    written into `out` (which may be x) to spare an n x n temporary."""
    out = np.add(x, 0.5, out=out)
    return np.floor(out, out=out)


def _coordinates(coords: object) -> np.ndarray:
    """Node coordinates as an n x 2 float array, the TSPLIB distance functions' input, or an
    InputError naming the shape or the entry that is wrong (a third column was dropped)."""
    c = numeric_array(coords, "TSP node coordinates", booleans=False)
    if c.ndim != 2 or c.shape[1] != 2 or c.shape[0] == 0:
        raise InputError(f"TSP node coordinates must be an n x 2 array (one x, y pair per "
                         f"node), got shape {c.shape}")
    bad = np.flatnonzero(~np.isfinite(c).all(axis=1))
    if bad.size:
        raise InputError(f"TSP node {bad[0] + 1} has coordinates {tuple(c[bad[0]].tolist())}: "
                         "they must be finite")
    _check_matrix_memory(c.shape[0])
    return c


def _deltas(coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x_i - x_j and y_i - y_j for every pair, two n x n float arrays the callers work in."""
    c = _coordinates(coords)
    return np.subtract.outer(c[:, 0], c[:, 0]), np.subtract.outer(c[:, 1], c[:, 1])


def _abs_deltas(coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|x_i - x_j| and |y_i - y_j| for every pair, in place in the two n x n arrays."""
    dx, dy = _deltas(coords)
    return np.abs(dx, out=dx), np.abs(dy, out=dy)


def _squared(coords: np.ndarray) -> np.ndarray:
    """xd^2 + yd^2 for every pair, the radicand of the Euclidean types (squaring drops the
    sign exactly, so no abs is needed)."""
    dx, dy = _deltas(coords)
    np.square(dx, out=dx)
    dx += np.square(dy, out=dy)
    return dx


def euc_2d(coords: np.ndarray) -> np.ndarray:
    """TSPLIB EUC_2D: nint of the Euclidean distance."""
    d = _squared(coords)
    return _nint(np.sqrt(d, out=d), out=d)


def ceil_2d(coords: np.ndarray) -> np.ndarray:
    """TSPLIB CEIL_2D: the Euclidean distance rounded up."""
    d = _squared(coords)
    return np.ceil(np.sqrt(d, out=d), out=d)


def att(coords: np.ndarray) -> np.ndarray:
    """TSPLIB ATT pseudo-Euclidean: r = sqrt((xd^2 + yd^2) / 10), t = nint(r), t + 1 if t < r
    (att48, att532)."""
    r = _squared(coords)
    r /= 10.0
    np.sqrt(r, out=r)
    t = _nint(r)
    t += t < r
    return t


def man_2d(coords: np.ndarray) -> np.ndarray:
    """TSPLIB MAN_2D: nint(xd + yd)."""
    dx, dy = _abs_deltas(coords)
    dx += dy
    return _nint(dx, out=dx)


def max_2d(coords: np.ndarray) -> np.ndarray:
    """TSPLIB MAX_2D: max(nint(xd), nint(yd))."""
    dx, dy = _abs_deltas(coords)
    return np.maximum(_nint(dx, out=dx), _nint(dy, out=dy), out=dx)


def _refuse_geo_rows(coords: np.ndarray, bad: np.ndarray, why: str) -> None:
    """InputError naming the first GEO node whose row of `bad` has a True."""
    rows = np.flatnonzero(bad.any(1))
    if rows.size:
        k = int(rows[0])
        raise InputError(f"GEO node {k + 1} coordinates {tuple(coords[k].tolist())} {why}")


def _geo_radians(coords: np.ndarray) -> np.ndarray:
    """DDD.MM (degrees.minutes) to radians with the spec's PI = 3.141592; degrees are (int) x,
    the TSPLIB FAQ's correction of the nint printed in the 1995 text (published optima use it)."""
    coords = _coordinates(coords)
    deg = np.trunc(coords)
    minutes = coords - deg
    _refuse_geo_rows(coords, np.round(np.abs(minutes) * 100, 6) >= 60,
                     "are not DDD.MM (degrees.minutes): minutes must be below 60; decimal degrees?")
    degrees = deg + 5.0 * minutes / 3.0
    _refuse_geo_rows(coords, np.abs(degrees) > (90.0, 180.0),
                     "are outside latitude -90..90, longitude -180..180")
    return 3.141592 * degrees / 180.0


def _cos_outer(op: np.ufunc, a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """cos(a_i op a_j) for every pair, in one n x n buffer (`out` when given)."""
    q = op.outer(a, a, out=out)
    return np.cos(q, out=q)


def geo(coords: np.ndarray) -> np.ndarray:
    """TSPLIB GEO: km on the sphere of radius RRR = 6378.388, (int)(RRR * acos(...) + 1.0), from
    latitude x and longitude y in DDD.MM (burma14, ulysses16/22, gr96); zero diagonal."""
    rad = _geo_radians(coords)
    lat, lon = rad[:, 0], rad[:, 1]
    # 0.5 ((1 + q1) q2 - (1 - q1) q3) in three n x n buffers (products commute exactly)
    q1 = _cos_outer(np.subtract, lon)
    d = _cos_outer(np.subtract, lat)
    side = np.add(1.0, q1)
    d *= side
    np.subtract(1.0, q1, out=side)
    q3 = _cos_outer(np.add, lat, out=q1)
    d -= np.multiply(side, q3, out=q3)
    d *= 0.5
    # clip: rounding may push the cosine of a zero-length arc just past 1 (acos -> NaN)
    np.arccos(np.clip(d, -1.0, 1.0, out=d), out=d)
    d *= 6378.388
    d += 1.0
    np.floor(d, out=d)
    np.fill_diagonal(d, 0.0)
    return d


def tour_length(dist: np.ndarray, tour: list[int] | np.ndarray) -> float:
    """Length of the closed tour visiting `tour` in order; a city that is not a whole number
    in 0..n-1 is an InputError (numpy would truncate 1.7 to 1 and wrap -1 to n - 1)."""
    d = numeric_array(dist, "tour_length's distance matrix")  # float64: float16 sums overflowed
    t = plain_array(tour, "tour_length's tour")
    if d.ndim != 2 or d.shape[0] != d.shape[1] or t.ndim != 1 or t.size == 0:
        raise InputError(f"tour_length needs a square matrix and a non-empty 1-D tour, got "
                         f"shapes {d.shape} and {t.shape}")
    whole = t.dtype.kind in "iu" or (t.dtype.kind == "f" and bool((t == np.round(t)).all()))
    if not whole or t.min() < 0 or t.max() >= d.shape[0]:
        raise InputError(f"tour cities must be whole numbers in 0..{d.shape[0] - 1}, got "
                         f"{t.tolist()}")
    t = t.astype(int)
    return float(d[t, np.roll(t, -1)].sum())


def is_tour(tour: list[int] | np.ndarray | None, n: int) -> bool:
    """True when `tour` visits each of the n cities exactly once (whole-number indices: 1.5
    is no city, nor is True)."""
    n = check_count(n, "is_tour's n", 0)
    if tour is None:
        return False
    cities = np.asarray(tour)
    if cities.size != n:  # before list(range(n)): n = 10**12 took the memory
        return False
    if isinstance(tour, (list, tuple)) and any(isinstance(c, (bool, np.bool_)) for c in tour):
        return False
    if cities.dtype.kind not in "iuf" or cities.ndim != 1 or not np.isfinite(cities).all() \
            or (cities != np.round(cities)).any():
        return False
    return sorted(int(c) for c in cities) == list(range(n))


# ---------------------------------------------------------------- TSPLIB
_EXPLICIT_FORMATS = (
    "FULL_MATRIX",
    "UPPER_ROW",
    "LOWER_ROW",
    "UPPER_DIAG_ROW",
    "LOWER_DIAG_ROW",
)


# EDGE_WEIGHT_TYPEs computed from NODE_COORD_SECTION
_COORD_TYPES = {
    "EUC_2D": euc_2d,
    "CEIL_2D": ceil_2d,
    "ATT": att,
    "GEO": geo,
    "MAN_2D": man_2d,
    "MAX_2D": max_2d,
}


def load_tsplib(path: str | Path) -> TSPInstance:
    """Read a TSPLIB `.tsp` file (2-D coordinates of a type in _COORD_TYPES, or EXPLICIT).

    The distance functions are hand-written from the TSPLIB 95 text: `tsplib95` is not
    installable here (no network, not on the local package index).

    Errors name the file and line: unknown keywords, non-numeric data, short sections.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError(f"TSPLIB file not found: {path}")
    lines = text_lines(read_text_file(path, "TSPLIB file"))
    spec: dict[str, str] = {}
    k = 0
    coords = None
    weights = _Numbers()
    weights_line = 0  # where the EDGE_WEIGHT_SECTION starts
    seen: set[str] = set()
    while k < len(lines):
        raw = lines[k].strip()
        no = k + 1
        k += 1
        if not raw:
            continue
        if raw == "EOF":
            break
        section = raw.split(":")[0].strip()
        if section.endswith("_SECTION"):
            if section in seen:  # the second one had replaced the first without a word
                raise InputError(f"{path}:{no}: a second {section}; a file gives each once")
            seen.add(section)
            n = _dimension(path, spec, no)
            _refuse_other_weights(path, no, section, spec.get("EDGE_WEIGHT_TYPE", ""))
            if section == "NODE_COORD_SECTION":
                coords, k = _read_coords(path, lines, k, n)
            elif section == "EDGE_WEIGHT_SECTION":
                weights, k, weights_line = *_read_numbers(path, lines, k), no
            elif section == "DISPLAY_DATA_SECTION":  # for drawing only
                _, k = _read_numbers(path, lines, k)
            elif section == "FIXED_EDGES_SECTION":
                raise InputError(f"{path}:{no}: FIXED_EDGES_SECTION is not supported: its "
                                 "edges must be in every tour, which the models here do not "
                                 "impose (linhp318 would solve as lin318)")
            else:
                raise InputError(f"{path}:{no}: unsupported section {section}")
            continue
        if ":" not in raw:
            raise InputError(f"{path}:{no}: expected 'KEY : VALUE', got {raw!r}")
        key, value = (s.strip() for s in raw.split(":", 1))
        if key.upper() == "COMMENT" and "COMMENT" in spec:  # national instances give two
            spec["COMMENT"] += "\n" + value
            continue
        if key.upper() in spec:  # the last one had won, after data the first one shaped
            raise InputError(f"{path}:{no}: a second {key.upper()}; a file gives each once")
        spec[key.upper()] = value
    if not spec and not seen:
        raise InputError(f"{path}: no TSPLIB keywords (an empty file?)")
    n = _dimension(path, spec, len(lines))
    if "EDGE_WEIGHT_SECTION" in seen:  # the type may come after the sections
        _refuse_other_weights(path, weights_line, "EDGE_WEIGHT_SECTION",
                              spec.get("EDGE_WEIGHT_TYPE", ""))
    kind = spec.get("TYPE", "TSP").upper()
    if kind not in ("TSP", "ATSP"):
        raise InputError(f"{path}: TYPE {kind} is not a TSP")
    ewt = spec.get("EDGE_WEIGHT_TYPE", "").upper()
    name = spec.get("NAME", path.stem)
    if ewt in _COORD_TYPES:
        if coords is None:
            raise InputError(f"{path}: {ewt} needs a NODE_COORD_SECTION")
        _check_matrix_memory(n)
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # named below, not warned
                dist = _COORD_TYPES[ewt](coords)
            return TSPInstance(dist, coords=coords, name=name, meta=spec)
        except InputError as err:
            raise InputError(f"{path}: {err}") from None
    if ewt == "EXPLICIT":
        fmt = spec.get("EDGE_WEIGHT_FORMAT", "").upper()
        if fmt not in _EXPLICIT_FORMATS:
            raise InputError(
                f"{path}: EDGE_WEIGHT_FORMAT {fmt or '(missing)'} not supported; "
                f"use one of {', '.join(_EXPLICIT_FORMATS)}"
            )
        dist = _explicit_matrix(path, weights, n, fmt)
        if spec.get("TYPE", "").upper() == "TSP":  # a file without TYPE may be either
            _refuse_asymmetric(path, dist)
        return TSPInstance(dist, name=name, meta=spec)
    raise InputError(_unsupported_type(path, ewt))


def _unsupported_type(path: Path, ewt: str) -> str:
    """The refusal of an EDGE_WEIGHT_TYPE this reader does not compute."""
    return (f"{path}: EDGE_WEIGHT_TYPE {ewt or '(missing)'} not supported "
            f"(use {', '.join(_COORD_TYPES)} or EXPLICIT)")


def _refuse_other_weights(path: Path, no: int, section: str, ewt: str) -> None:
    """Refuse, at the section's line, data the EDGE_WEIGHT_TYPE given before it does not
    use or this reader cannot: an EDGE_WEIGHT_SECTION beside coordinates was read and
    dropped, and EUC_3D coordinates were called malformed 'id x y' lines."""
    ewt = ewt.strip().upper()
    if ewt and ewt != "EXPLICIT" and ewt not in _COORD_TYPES:
        raise InputError(_unsupported_type(path, ewt))
    if section == "EDGE_WEIGHT_SECTION" and ewt in _COORD_TYPES:
        raise InputError(f"{path}:{no}: an EDGE_WEIGHT_SECTION beside EDGE_WEIGHT_TYPE {ewt}, "
                         "whose weights come from the NODE_COORD_SECTION: keep one (EXPLICIT "
                         "for given weights)")


def _refuse_asymmetric(path: Path, dist: np.ndarray) -> None:
    """Refuse TYPE: TSP (symmetric, by TSPLIB) over an asymmetric matrix, naming a pair: it
    was solved as an asymmetric TSP without a word."""
    i, j = np.nonzero(dist != dist.T)
    if i.size:
        a, b = int(i[0]), int(j[0])
        raise InputError(f"{path}: TYPE TSP is symmetric, but the weight from node {a + 1} to "
                         f"{b + 1} is {dist[a, b]:g} and back {dist[b, a]:g}: give TYPE: ATSP")


def _dimension(path: Path, spec: dict[str, str], line_no: int) -> int:
    """The DIMENSION entry as an int, or an error naming the line."""
    if "DIMENSION" not in spec:
        raise InputError(f"{path}:{line_no}: DIMENSION must come before the data sections")
    try:
        n = int(spec["DIMENSION"])
    except ValueError:
        raise InputError(f"{path}: DIMENSION {spec['DIMENSION']!r} is not an integer") from None
    if n < 3:
        raise InputError(f"{path}: DIMENSION must be >= 3, got {n}")
    return n


def _read_coords(path: Path, lines: list[str], k: int, n: int) -> tuple[np.ndarray, int]:
    """n lines 'id x y' from line index k; nothing of size n is allocated before they are
    read (a huge DIMENSION over a short section is named, not a MemoryError)."""
    found: dict[int, tuple[float, float]] = {}
    read = 0
    repeated: tuple[int, int] | None = None  # (line, id) of the first id given twice
    while read < n:
        toks, no = (lines[k].split(), k + 1) if k < len(lines) else (["EOF"], len(lines))
        k += 1
        if not toks:
            continue
        if toks[0][0].isalpha():  # a keyword, EOF or the end of the file
            raise InputError(f"{path}:{no}: NODE_COORD_SECTION ends after {read} nodes, "
                             f"DIMENSION says {n}")
        if len(toks) != 3:
            raise InputError(f"{path}:{no}: expected 'id x y', got {lines[k - 1].strip()!r}")
        try:
            if "_" in toks[0]:  # int() takes "1_0" as 10 too
                raise ValueError(toks[0])
            idx, x, y = int(toks[0]), _number(toks[1]), _number(toks[2])
        except ValueError:
            raise InputError(f"{path}:{no}: non-numeric coordinate line {lines[k - 1]!r}") from None
        if not 1 <= idx <= n:
            raise InputError(f"{path}:{no}: node id {idx} outside 1..{n}")
        if not (math.isfinite(x) and math.isfinite(y)):
            raise InputError(f"{path}:{no}: coordinates must be finite")
        if idx - 1 in found and repeated is None:
            repeated = (no, idx)
        found[idx - 1] = (x, y)
        read += 1
    if len(found) < n:
        raise InputError(f"{path}:{repeated[0]}: node id {repeated[1]} given a second time "
                         "(NODE_COORD_SECTION then misses another)")
    _refuse_extra_node(path, lines, k, n)
    return np.array([found[i] for i in range(n)], dtype=float), k


def _refuse_extra_node(path: Path, lines: list[str], k: int, n: int) -> None:
    """After n coordinate lines the next non-blank line must be a keyword or EOF: a further
    'id x y' line means DIMENSION undercounts the nodes (not a misplaced keyword)."""
    rest = (line.strip() for line in lines[k:])
    nxt = next((line for line in rest if line), "EOF")
    if not nxt[0].isalpha():
        raise InputError(f"{path}: NODE_COORD_SECTION has more than DIMENSION {n} nodes "
                         f"(next line {nxt!r})")


@dataclass(frozen=True)
class _Numbers:
    """The numbers of a TSPLIB data section and, per line from `first_line` on, the count
    read up to its end: errors name a number's line without a tuple per number."""

    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ends: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    first_line: int = 1

    def line_of(self, k: int) -> int:
        """The line number of values[k] (lines without numbers end where the line before did)."""
        return self.first_line + int(np.searchsorted(self.ends, k, side="right"))


# Tokens converted to floats at a time: amortizes the call, and keeps the strings a few MB.
_BATCH = 1 << 16


def _read_numbers(
    path: Path, lines: list[str], k: int
) -> tuple[_Numbers, int]:
    """All numbers until the next keyword line, converted a batch of lines at a time."""
    start, first, total = k, k, 0
    chunks: list[np.ndarray] = []
    batch: list[str] = []
    ends = array("q")
    while k < len(lines):
        raw = lines[k].strip()
        if raw and (raw == "EOF" or raw[0].isalpha()):
            break
        toks = raw.split()
        batch += toks
        total += len(toks)
        ends.append(total)
        k += 1
        if len(batch) >= _BATCH:
            chunks.append(_batch_floats(path, lines, first, k, batch))
            first, batch = k, []
    chunks.append(_batch_floats(path, lines, first, k, batch))
    return _Numbers(np.concatenate(chunks), np.frombuffer(ends, dtype=np.int64), start + 1), k


def _batch_floats(path: Path, lines: list[str], first: int, last: int, batch: list[str]
                  ) -> np.ndarray:
    """The tokens of lines[first:last] as floats by Python's float(); a bad or non-finite one
    sends the lines to `_floats_by_token`, whose error names its line."""
    try:
        values = np.fromiter(map(float, batch), dtype=float, count=len(batch))
        if np.isfinite(values).all() and not any("_" in tok for tok in batch):
            return values
    except ValueError:
        pass
    return _floats_by_token(path, lines, first, last)


def _floats_by_token(path: Path, lines: list[str], first: int, last: int) -> np.ndarray:
    """The numbers of lines[first:last] one token at a time, raising at the first that is not
    a finite number with its line."""
    out: list[float] = []
    for k in range(first, last):
        for tok in lines[k].split():
            try:
                val = _number(tok)
            except ValueError:
                raise InputError(f"{path}:{k + 1}: not a number: {tok!r}") from None
            if not math.isfinite(val):
                raise InputError(f"{path}:{k + 1}: weights must be finite, got {tok!r}")
            out.append(val)
    return np.array(out, dtype=float)


def _number(token: str) -> float:
    """A TSPLIB number as float(); a ValueError for what Python reads but TSPLIB does not
    write: "1_0" (float() and int() take it as 10)."""
    if "_" in token:
        raise ValueError(token)
    return float(token)


def _explicit_cells(n: int, fmt: str) -> tuple[int, int]:
    """How many numbers a TSPLIB explicit format holds for n cities (arithmetic, nothing
    allocated) and the diagonal offset of its triangle (for np.triu_indices/np.tril_indices)."""
    if fmt == "FULL_MATRIX":
        return n * n, 0
    if fmt in ("UPPER_ROW", "LOWER_ROW"):
        return n * (n - 1) // 2, 1 if fmt == "UPPER_ROW" else -1
    return n * (n + 1) // 2, 0


def _explicit_matrix(path: Path, weights: _Numbers, n: int, fmt: str) -> np.ndarray:
    """Fill an n x n matrix from a TSPLIB explicit weight list; the count is checked first,
    so a short section with a huge DIMENSION is refused before anything n x n exists."""
    count, offset = _explicit_cells(n, fmt)
    values = weights.values
    if values.size != count:
        where = f" (last number on line {weights.line_of(values.size - 1)})" if values.size else ""
        raise InputError(
            f"{path}: EDGE_WEIGHT_SECTION has {values.size} numbers, {fmt} with "
            f"DIMENSION {n} needs {count}{where}"
        )
    negative = np.flatnonzero(values < 0)
    if negative.size:
        k = int(negative[0])
        raise InputError(f"{path}:{weights.line_of(k)}: negative distance {values[k]}")
    if fmt == "FULL_MATRIX":
        return values.reshape(n, n)
    rows, cols = (np.triu_indices if fmt.startswith("UPPER") else np.tril_indices)(n, offset)
    d = np.zeros((n, n))
    d[rows, cols] = values
    d[cols, rows] = values
    return d


# ---------------------------------------------------------------- exact MIP
def tsp_mip(dist: np.ndarray, subtour: str = "mtz") -> pyo.ConcreteModel:
    """Exact TSP MIP: binary x[i,j] (i != j), `out_degree[i]`, `in_degree[j]`, MTZ order u.

    `subtour="mtz"` adds Miller-Tucker-Zemlin constraints; `subtour="none"` leaves only the
    assignment constraints (the relaxation `solve_tsp_lazy` tightens with subtour cuts).
    """
    d = check_distances(dist)
    check_choice(subtour, "subtour elimination", ("mtz", "none"))
    n = d.shape[0]
    m = pyo.ConcreteModel(name="tsp")
    m.N = pyo.RangeSet(0, n - 1)
    m.A = pyo.Set(initialize=[(i, j) for i in range(n) for j in range(n) if i != j], dimen=2)
    m.x = pyo.Var(m.A, domain=pyo.Binary)
    m.out_degree = pyo.Constraint(m.N, rule=functools.partial(_out_degree, n))
    m.in_degree = pyo.Constraint(m.N, rule=functools.partial(_in_degree, n))
    if subtour == "mtz":
        m.U = pyo.RangeSet(1, n - 1)
        m.u = pyo.Var(m.U, bounds=(1, n - 1))
        m.mtz = pyo.Constraint(
            [(i, j) for i in range(1, n) for j in range(1, n) if i != j],
            rule=functools.partial(_mtz_row, n),
        )
    m.length = pyo.Objective(expr=sum(float(d[i, j]) * m.x[i, j] for i, j in m.A))
    return m


def _out_degree(n: int, m: pyo.ConcreteModel, i: int) -> Any:
    """City i is left exactly once."""
    return sum(m.x[i, j] for j in range(n) if j != i) == 1


def _in_degree(n: int, m: pyo.ConcreteModel, j: int) -> Any:
    """City j is entered exactly once."""
    return sum(m.x[i, j] for i in range(n) if i != j) == 1


def _mtz_row(n: int, m: pyo.ConcreteModel, i: int, j: int) -> Any:
    """Miller-Tucker-Zemlin order: arc (i, j) taken puts j after i."""
    return m.u[i] - m.u[j] + (n - 1) * m.x[i, j] <= n - 2


def tour_from_model(model: pyo.ConcreteModel) -> list[int]:
    """Follow the chosen arcs x[i,j] from city 0 into a city order. An unsolved model, or
    arcs whose cycle through city 0 misses cities (subtours), is an InputError rather than
    a partial order such as [0]."""
    _check_tsp_model(model)
    if all(model.x[a].value is None for a in model.A):
        raise InputError("the TSP model holds no solution values; solve it first")
    succ = {i: j for (i, j) in model.A if (model.x[i, j].value or 0) > 0.5}
    tour, city = [0], succ.get(0)
    while city is not None and city != 0 and len(tour) <= len(succ):
        tour.append(city)
        city = succ.get(city)
    n = len(model.N)
    if city != 0 or not is_tour(tour, n):
        raise InputError(f"the chosen arcs do not form one tour: from city 0 they visit "
                         f"{len(tour)} of {n} cities (subtours remain)")
    return tour


def _check_tsp_model(model: Any) -> None:
    """Refuse a model `tsp_mip` did not build (cities N, arcs A, arc variables x), naming
    what it lacks, rather than an AttributeError."""
    missing = [name for name in ("N", "A", "x") if getattr(model, name, None) is None]
    if missing:
        raise InputError(f"expected a model from tsp_mip (cities N, arcs A, arc variables x); "
                         f"this one has no {', '.join(missing)}")


def subtour_separator(model: pyo.ConcreteModel, tol: float = 1e-6) -> Callable[[Any], list[Any]]:
    """Subtour cuts for `tsp_mip(..., subtour="none")` as a `LazyConstraints` function.

    Each set S of cities gets sum of x[i,j] inside S <= |S| - 1, violated exactly when less
    than one unit of flow leaves S. The arcs with x[i,j] > `tol` split the cities into
    weakly connected groups: when there are several, each group of two or more gives a row
    (an integral solution's groups are its cycles; `tol` must lie in [0, 1)). When there is
    one, the minimum cut of the support graph weighted by x[i,j] + x[j,i] (networkx's
    Stoer-Wagner) is below 2 exactly when a fractional solution violates some row, and its
    smaller side gives it.
    """
    import networkx as nx

    _check_tsp_model(model)
    if check_positive(tol, "subtour_separator tol", zero_ok=True) >= 1.0:
        raise InputError(f"subtour_separator tol must be below 1 (a tour's arcs are 1), got "
                         f"{tol!r}")
    cities = list(model.N)
    arcs = [(a, model.x[a]) for a in model.A]

    def row(group: Any) -> Any:
        return sum(model.x[i, j] for i in group for j in group if i != j) <= len(group) - 1

    def separate(solution: Any) -> list[Any]:
        graph = nx.Graph()
        graph.add_nodes_from(cities)
        for (i, j), x in arcs:
            value = solution[x]
            if value > tol:
                weight = graph.get_edge_data(i, j, {"weight": 0.0})["weight"]
                graph.add_edge(i, j, weight=weight + value)
        groups = list(nx.connected_components(graph))
        if len(groups) > 1:
            return [row(group) for group in groups if len(group) > 1]  # no row for 1 city
        cut, (side, other) = nx.stoer_wagner(graph)
        if cut >= 2.0 - 1e-6:
            return []
        return [row(min(side, other, key=len))]

    return separate


def solve_tsp_lazy(dist: np.ndarray, solver: str = "scip", max_rounds: int = 200) -> list[int]:
    """Exact TSP by lazy subtour cuts on the assignment model: with SCIP one solve that adds
    them wherever a solution has a subtour (`coplug.plugins.lazy`, fractional LP solutions
    included); with HiGHS, which takes no plugins, `solve_tsp_rounds`."""
    max_rounds = check_count(max_rounds, "max_rounds", 1)  # checked for SCIP too, unused there
    if not isinstance(solver, str) or solver.lower() != "scip":  # solve() names a bad one
        return solve_tsp_rounds(dist, solver, max_rounds)
    from coplug.plugins.bridge import solve
    from coplug.plugins.lazy import LazyConstraints

    m = tsp_mip(dist, subtour="none")
    with stops_on_interrupt():  # a Ctrl-C SCIP caught: raised, not a tour 6x the optimum
        result = solve(m, solver="scip",
                       plugins=[LazyConstraints(subtour_separator(m), fractional=True)])
    _proven(result)
    return tour_from_model(m)


def _proven(result: Any) -> None:
    """Refuse a solve that did not prove its tour optimal: these functions promise the
    exact TSP, and return only the tour."""
    if not result.has_solution:
        raise InputError(f"TSP model has no solution ({result.status.value})")
    if not result.optimal:
        raise SolverError(f"the TSP solve ended {result.status.value}, with no proven "
                          "optimal tour")


def solve_tsp_rounds(dist: np.ndarray, solver: str = "highs", max_rounds: int = 200
                     ) -> list[int]:
    """Exact TSP by rounds: solve the assignment model, cut every subtour, solve again (at
    most `max_rounds` solves); the way without a lazy-constraint callback. HiGHS runs at no
    relative gap: at its default 1e-4 it called tours 206 over the optimum optimal."""
    from coplug.plugins.bridge import solve
    from coplug.plugins.limits import zero_mip_gap

    d = check_distances(dist)
    max_rounds = check_count(max_rounds, "max_rounds", 1)
    if isinstance(solver, str) and solver.lower() == "lap":
        raise InputError("the TSP needs a MIP solver ('scip' or 'highs'): its subtour cuts "
                         "leave the assignment structure solver='lap' reads (round 2 failed)")
    n = d.shape[0]
    m = tsp_mip(d, subtour="none")
    m.cuts = pyo.ConstraintList()
    for _ in range(max_rounds):
        with stops_on_interrupt():  # a Ctrl-C a solver caught ends the rounds
            result = solve(m, solver=solver, **zero_mip_gap(solver, {}))
        _proven(result)
        succ = {i: j for (i, j) in m.A if m.x[i, j].value > 0.5}
        cycles = _cycles(succ, n)
        if len(cycles) == 1:
            return cycles[0]
        for cyc in cycles:
            inside = set(cyc)
            m.cuts.add(sum(m.x[i, j] for i in inside for j in inside if i != j) <= len(cyc) - 1)
    raise InputError(f"no tour after {max_rounds} rounds of subtour cuts")


def _cycles(succ: dict[int, int], n: int) -> list[list[int]]:
    """Split a successor map (a permutation) into its cycles."""
    seen, out = set(), []
    for s in range(n):
        if s in seen:
            continue
        cyc, c = [], s
        while c not in seen:
            seen.add(c)
            cyc.append(c)
            c = succ[c]
        out.append(cyc)
    return out


# ---------------------------------------------------------------- QUBOs
def _positions(n: int) -> tuple[int, np.ndarray, list[np.ndarray]]:
    """m = n - 1, index grid idx[i-1, t-1] and the 2m one-hot groups (cities, positions)."""
    m = n - 1
    idx = np.arange(m * m).reshape(m, m)
    groups = [idx[i] for i in range(m)] + [idx[:, t] for t in range(m)]
    return m, idx, groups


def _tour_terms(d: np.ndarray, idx: np.ndarray) -> tuple[list, np.ndarray]:
    """Quadratic (rows, cols, vals) and linear terms of the tour length in x[i, t]: one
    product x[i, t] x[j, t + 1] per position t and ordered pair i != j with d_ij != 0."""
    m = idx.shape[0]
    inner = d[1:, 1:]
    a, b = np.nonzero(inner * (1 - np.eye(m)))
    t = np.arange(m - 1)[:, None]
    rows = idx[a[None, :], t].reshape(-1)
    cols = idx[b[None, :], t + 1].reshape(-1)
    vals = np.broadcast_to(inner[a, b], (m - 1, a.size)).reshape(-1)
    cities = np.arange(1, m + 1)
    lin = np.zeros(m * m)
    lin[idx[:, 0]] += d[0, cities]
    lin[idx[:, m - 1]] += d[cities, 0]
    return [rows, cols, vals], lin


def qubo_nonzeros(dist: np.ndarray, form: str = "safe") -> int:
    """Stored nonzeros of the TSP QUBO `form` ("safe" or "naive": tour products twice, as Q
    is symmetric, the 2(n-1) one-hot rows, and the safe form's diagonal), counted from the
    distances before anything is built."""
    if form not in ("safe", "naive"):
        raise InputError(f"form must be 'safe' or 'naive', got {form!r}")
    return _qubo_nonzeros(check_distances(dist), form)


def _qubo_nonzeros(dist: np.ndarray, form: str) -> int:
    """`qubo_nonzeros` of a checked distance matrix (the naive form stores no diagonal: its
    count had included one, and a naive QUBO that fit `max_nonzeros` was refused)."""
    m = dist.shape[0] - 1
    pairs = int(np.count_nonzero(dist[1:, 1:])) - int(np.count_nonzero(np.diag(dist)[1:]))
    return 2 * (m - 1) * pairs + (m * m if form == "safe" else 0) + 2 * m * m


def _check_size(d: np.ndarray, max_nonzeros: int, builder: str) -> None:
    """Refuse a QUBO over `max_nonzeros` stored nonzeros before allocating it."""
    max_nonzeros = check_count(max_nonzeros, "max_nonzeros", 1)
    nonzeros = _qubo_nonzeros(d, builder)
    if nonzeros > max_nonzeros:
        n = d.shape[0]
        raise InputError(
            f"the {builder} QUBO of {n} cities would have {(n - 1) ** 2} variables and "
            f"{nonzeros} nonzeros, over the limit {max_nonzeros} (raise it with "
            "max_nonzeros=, --max-nonzeros on the command line); it grows as n^3, so solve "
            "the exact MIP tsp_mip(dist) with SCIP instead (from the command line: coplug "
            "solve tsp)"
        )


def _decode_tour(z: np.ndarray, n: int) -> list[int] | None:
    """Decode x[i, t] into a city order starting at 0 (None unless a permutation matrix);
    a module function bound with functools.partial, so a QUBO pickles."""
    m = n - 1
    X = np.asarray(z).reshape(m, m) > 0.5
    if not ((X.sum(0) == 1).all() and (X.sum(1) == 1).all()):
        return None
    return [0] + [int(np.flatnonzero(X[:, t])[0]) + 1 for t in range(m)]


def _qubo(d: np.ndarray, Q, c, constant, A, weights, margin: float, form: str) -> QUBO:
    """Wrap TSP QUBO data with its decoder, feasibility test and tour length."""
    n = d.shape[0]
    return QUBO(
        Q=Q,
        c=c,
        constant=constant,
        A=A,
        weights=weights,
        decode=functools.partial(_decode_tour, n=n),
        is_feasible=functools.partial(is_tour, n=n),
        objective=functools.partial(tour_length, d),
        sense=1,
        margin=margin,
        form=form,
        problem="tsp",
        names=[f"x{i}@{t}" for i in range(1, n) for t in range(1, n)],
    )


def tsp_qubo_naive(
    dist: np.ndarray, penalty: float | None = None, max_nonzeros: int = MAX_NONZEROS
) -> QUBO:
    """Textbook QUBO: length + A sum_rows (1 - sum x)^2 + A sum_cols (1 - sum x)^2, A = 2 d_max.

    The squared one-hot penalties keep x^2 on the diagonal (positive), so the relaxation is
    convex along each coordinate and has fractional minimizers (e.g. near x = J/m).
    Past `max_nonzeros` stored nonzeros it raises InputError before building.
    """
    d = check_distances(dist)
    _check_size(d, max_nonzeros, "naive")
    n = d.shape[0]
    m, idx, groups = _positions(n)
    A = 2.0 * max(d.max(), 1.0) if penalty is None else check_positive(penalty, "penalty")
    (r, cc, v), lin = _tour_terms(d, idx)
    Q = symmetric(r, cc, v, m * m)
    rows = multilinear_pairs(groups, m * m)
    c = lin - 4.0 * A
    return _qubo(d, Q, c, 2.0 * m * A, rows, np.full(2 * m, A), 0.0, "naive")


def tsp_qubo_safe(dist: np.ndarray, max_nonzeros: int = MAX_NONZEROS) -> QUBO:
    """Safe QUBO: every local minimizer of its box relaxation is a tour.

    Per one-hot group (a city row or a position column) with count k the penalty is
    a * k(k-1)/2 - b * k + b (zero iff k = 1), multilinear, with b = 2 d_max and a = 6 d_max,
    plus mu * sum x(1 - x), mu = d_max. Every non-tour binary point has a flip lowering the
    energy by >= 2 d_max (README.md): drop a city from an overfull group (<= 2b - a) or, when
    all groups hold <= 1, put an unplaced city on a free position (<= -2b + 2 d_max).
    Past `max_nonzeros` stored nonzeros (default MAX_NONZEROS) it raises InputError before
    building.
    """
    d = check_distances(dist)
    _check_size(d, max_nonzeros, "safe")
    n = d.shape[0]
    m, idx, groups = _positions(n)
    dmax = data_scale(float(d.max()))
    a, b, mu = 6.0 * dmax, 2.0 * dmax, dmax
    (r, cc, v), lin = _tour_terms(d, idx)
    N = m * m
    rows = multilinear_pairs(groups, N)
    # a * pairs = (a/2) [(sum x)^2 - sum x^2]: each variable lies in two groups.
    Q = symmetric(r, cc, v, N) + symmetric(np.arange(N), np.arange(N), np.full(N, -a - mu), N)
    c = lin - 2.0 * b + mu
    return _qubo(d, Q, c, 2.0 * m * b, rows, np.full(2 * m, a / 2), 2.0 * dmax, "safe")


def registry_model(size: int, seed: int) -> pyo.ConcreteModel:
    """`coplug solve tsp --size N`: MTZ model of a random Euclidean instance."""
    return tsp_mip(random_euclidean(size, seed=seed).dist)
