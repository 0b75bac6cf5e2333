"""Linear assignment instances: seeded generators, file loaders and the Pyomo model.

Generators return dense cost matrices (float64 by default, float32 on request for big N):
uniform, geometric (tracking: the same points one noisy frame later, shuffled),
low-rank plus noise, and transport-like (shortest-path costs on a sparse road graph).
`gated` returns the sparse tracking frame, each track gated to its nearest detections.
"""

from __future__ import annotations

import functools
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from tokenize import TokenError
from typing import Any

import networkx as nx
import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

from coplug.formulations.checks import check_count, check_memory, check_seed, text_lines
from coplug.plugins.arguments import check_exact_integers, check_flag, detached, refuse_masked
from coplug.plugins.errors import InputError


def uniform(n: int, seed: int = 0, m: int | None = None, dtype: type = np.float64) -> np.ndarray:
    """Costs i.i.d. uniform on [0, 1)."""
    n, m = _check_args(n, m, seed, dtype)
    return np.random.default_rng(seed).random((n, m or n), dtype=dtype)


def geometric(
    n: int, seed: int = 0, m: int | None = None, noise: float = 0.2, dtype: type = np.float64
) -> np.ndarray:
    """Tracking: n points in the unit square, observed again after a move of `noise`
    times the typical spacing (plus m - n clutter points), shuffled; cost = distance."""
    n, m = _check_args(n, m, seed, dtype)
    _check_noise(noise, dtype)
    rng = np.random.default_rng(seed)
    a = rng.random((n, 2))
    step = noise / np.sqrt(n)
    b = np.vstack([a + rng.normal(scale=step, size=a.shape), rng.random(((m or n) - n, 2))])
    b = b[rng.permutation(len(b))]
    return _by_rows(n, len(b), dtype, lambda rows: _distances(a[rows], b))


def gated(n: int, gate: int = 8, seed: int = 0, noise: float = 0.2) -> sp.csr_matrix:
    """Sparse tracking frame: the `geometric` points (n tracks, their detections moved by
    `noise` times the typical spacing, shuffled), each track allowed only its `gate`
    nearest detections and its own (so an assignment exists); cost = distance. About
    gate * n stored pairs (the own detection is nearly always among the nearest), however
    large n."""
    from scipy.spatial import cKDTree

    n, _ = _check_args(n, None, seed, np.float64, dense=False)
    gate = check_count(gate, "gate", 1)
    check_memory(n * (64.0 + 48.0 * (min(gate, n) + 1)), f"a gated {n} x {n} frame",
                 "use a smaller n or gate")
    _check_noise(noise)
    rng = np.random.default_rng(seed)
    tracks = rng.random((n, 2))
    own = rng.permutation(n)
    detections = np.empty_like(tracks)
    detections[own] = tracks + rng.normal(scale=noise / np.sqrt(n), size=tracks.shape)
    _, near = cKDTree(detections).query(tracks, k=min(gate, n))
    cols = np.column_stack([np.asarray(near).reshape(n, -1), own])
    rows = np.repeat(np.arange(n), cols.shape[1])
    pattern = sp.csr_matrix((np.ones(rows.size), (rows, cols.ravel())), shape=(n, n))
    pattern.data[:] = 1.0  # the own detection is often among the nearest: one entry
    r = np.repeat(np.arange(n), np.diff(pattern.indptr))
    pattern.data = np.sqrt(((tracks[r] - detections[pattern.indices]) ** 2).sum(axis=1))
    return pattern


def low_rank(
    n: int, seed: int = 0, m: int | None = None, rank: int = 4, noise: float = 0.1,
    dtype: type = np.float64,
) -> np.ndarray:
    """Low-rank plus noise: C = A B^T / sqrt(rank) + noise, shifted to be non-negative."""
    n, m = _check_args(n, m, seed, dtype)
    rank = check_count(rank, "rank", 1)
    check_memory(8.0 * (n + (m or n)) * rank, f"the rank-{rank} factors of the {n} x {m or n} "
                 "matrix", "use a smaller rank")
    _check_noise(noise, dtype)
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, rank))
    b = rng.normal(size=(m or n, rank))
    c = _by_rows(
        n, len(b), dtype,
        lambda rows: (a[rows] @ b.T) / np.sqrt(rank)
        + noise * rng.normal(size=(len(a[rows]), len(b))),
    )
    c -= c.min()
    return c


def transport(
    n: int, seed: int = 0, m: int | None = None, nodes: int | None = None,
    dtype: type = np.float64,
) -> np.ndarray:
    """Transport network: sources and sinks placed on a random geometric road graph
    (networkx); cost = access distance + shortest road path + egress distance."""
    n, m = _check_args(n, m, seed, dtype)
    if nodes is not None:
        nodes = check_count(nodes, "nodes", 1)
    m = m or n
    rng = np.random.default_rng(seed)
    k = nodes or int(min(max(64, (n + m) // 4), 3000))
    check_memory(8.0 * k * k, f"the {k} x {k} road distances of a transport instance",
                 "use fewer nodes")
    graph = nx.random_geometric_graph(k, radius=np.sqrt(6.0 / k), seed=int(seed))
    graph = graph.subgraph(max(nx.connected_components(graph), key=len)).copy()
    order = list(graph.nodes)
    pos = np.array([graph.nodes[v]["pos"] for v in order])
    for u, w in graph.edges:
        graph.edges[u, w]["weight"] = float(np.hypot(*(graph.nodes[u]["pos"] - np.array(
            graph.nodes[w]["pos"]))))
    road = dijkstra(nx.to_scipy_sparse_array(graph, nodelist=order, weight="weight"))
    src, src_access = _attach(rng.random((n, 2)), pos)
    dst, dst_access = _attach(rng.random((m, 2)), pos)
    return _by_rows(
        n, m, dtype,
        lambda rows: src_access[rows, None] + road[np.ix_(src[rows], dst)] + dst_access[None, :],
    )


GENERATORS: dict[str, Callable[..., np.ndarray]] = {
    "uniform": uniform,
    "geometric": geometric,
    "low_rank": low_rank,
    "transport": transport,
}


def generate(name: str, n: int, seed: int = 0, **kwargs) -> np.ndarray:
    """Cost matrix from the generator called `name`."""
    if not isinstance(name, str) or name not in GENERATORS:
        raise InputError(f"unknown generator {name!r}; choose one of {', '.join(GENERATORS)}")
    return GENERATORS[name](n, seed=seed, **kwargs)


def load_costs(path: str | Path, square: bool = False) -> np.ndarray | sp.csr_matrix:
    """Dense costs from .npy, .csv/.txt matrix, or an OR-Library file (assign100.txt to
    assign800.txt, assignp800.txt to assignp5000.txt: names `_ORLIB_NAME` matches, whose
    first line holds n alone); sparse costs (stored entries allowed, the rest forbidden)
    from a scipy.sparse .npz file."""
    square = check_flag(square, "square")
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(f"cost file not found: {path}")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return _load_npz(path, square)
    if suffix == ".npy":
        c = _load_npy(path)
    elif _ORLIB_NAME.match(path.name) and suffix in (".txt", "") and _orlib_header(path):
        c = _exact_integers(path, load_orlib(path), orlib=True)
    elif suffix in (".csv", ".txt"):
        c = _exact_integers(path, _load_csv(path))
    else:
        raise InputError(
            f"{path}: unknown cost file type {suffix!r}; use .npy, .npz (sparse), .csv or "
            "assign<n>.txt"
        )
    return validate_costs(c, square=square, source=str(path))


# OR-Library's file names: assign100 ... assign800 and assignp800 ... assignp5000 (any
# assignp* name too); assignment_costs.txt and the like stay plain matrices.
_ORLIB_NAME = re.compile(r"assign(p|\d)", re.IGNORECASE)


def _orlib_header(path: Path) -> bool:
    """Whether the file's first non-blank line holds one token, as an OR-Library file's n
    does: a 5 x 10 matrix named assignproblem.txt was read as n = 7 (its first cost) and
    the next 49 costs, with no word."""
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as lines:  # as _read_text
            for line in (part for read in lines for part in text_lines(read)):  # U+2028 too
                if line.strip():  # a comma-separated first row is a matrix's too
                    return len(line.split()) == 1 and sum(
                        1 for cell in line.split(",") if cell.strip()) <= 1
    except OSError:
        pass  # load_orlib names it
    return True


def load_orlib(path: str | Path) -> np.ndarray:
    """OR-Library assignment file: n, then the n x n costs row by row (any line breaks), read
    a block of lines at a time into one float64 buffer (a Python float per cost took 5x the
    matrix's memory)."""
    path = Path(path).expanduser()
    text = _read_text(path)
    size: float | None = None
    costs = np.empty(0)
    found = 0
    for start, block in _blocks(text):
        values = _orlib_numbers(path, text, start, block)
        if size is None and values.size:
            size, values = float(values[0]), values[1:]
            slots = _orlib_size(size) ** 2
            costs = np.empty(slots if _fits(slots, text) else 0)
        if found < costs.size:
            part = values[:costs.size - found]
            costs[found:found + part.size] = part
        found += values.size
    if size is None:
        raise InputError(f"{path}: empty OR-Library assignment file")
    n = _orlib_size(size)
    if not n:
        raise InputError(f"{path}:1: first number must be the size n >= 1, got {size}")
    if found != n * n:
        raise InputError(
            f"{path}: read as an OR-Library assignment file (name assign<n> or assignp*): "
            f"expected {n}x{n} = {n * n} costs after n = {n}, found {found}"
        )
    return costs.reshape(n, n)


def _orlib_numbers(path: Path, text: str, start: int, block: str) -> np.ndarray:
    """The numbers of one block of an OR-Library file (at `start` in its text), all its tokens
    at once; line by line where that fails, to name the first bad line and token."""
    if "_" not in block:
        try:
            return np.array(block.split(), dtype=np.float64)
        except ValueError:
            pass
    first = len(text_lines(text[:start])) + 1
    lines = []
    for lineno, line in enumerate(text_lines(block), start=first):
        _refuse_underscore(line, f"{path}:{lineno}")
        try:
            lines.append(_floats(line.split()))
        except ValueError as exc:
            raise InputError(f"{path}:{lineno}: not a number: {exc.args[0]!r}") from None
    return np.concatenate(lines)


def _orlib_size(size: float) -> int:
    """The n an OR-Library file's first number gives, 0 when it is no integer >= 1."""
    return int(size) if np.isfinite(size) and size == int(size) and size >= 1 else 0


_EMPTY_TAB_CELL = re.compile(r"^ *\t|\t *\t|\t *\r?\n?$")
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def _load_npy(path: Path) -> np.ndarray:
    """The array in a .npy file; an .npz archive under that name is named as such. The file
    is mapped first, so a header declaring more data than the file holds is refused before
    anything is allocated (a 144-byte file asked numpy for 74.5 GiB)."""
    if not _starts_with(path, (_NPY_MAGIC, _ZIP_MAGIC)):  # numpy would offer to unpickle it
        raise InputError(f"{path}: not an .npy array (no NumPy header; save one with np.save)")
    try:
        mapped = np.load(path, allow_pickle=False, mmap_mode="r")
    except (ValueError, OSError, EOFError, TokenError, zipfile.BadZipFile, OverflowError,
            SyntaxError, TypeError) as exc:  # the last three: shape 2**64, descr ',i4', True
        raise InputError(f"{path}: not a readable .npy array ({exc})") from exc
    if isinstance(mapped, np.lib.npyio.NpzFile):
        names = list(mapped.files)
        mapped.close()
        raise InputError(f"{path}: an .npz archive (arrays {names}), not an .npy array; "
                         "save one matrix with np.save")
    check_memory(mapped.nbytes, f"the {mapped.shape} array in {path}", "use a smaller matrix")
    return np.array(mapped)


def _load_npz(path: Path, square: bool) -> sp.csr_matrix:
    """The sparse matrix `scipy.sparse.save_npz` wrote, as the canonical CSR `solve_lap`
    reads from it (`sparse.as_csr`: a DIA's stored zeros kept, a repeated pair refused, not
    summed as scipy's conversion does); a plain `np.savez` archive or an .npy file is named
    as such."""
    from coplug.plugins.lap.sparse import as_csr

    try:
        loaded = sp.load_npz(path)
    except (ValueError, OSError, KeyError, TypeError, EOFError, TokenError, OverflowError,
            SyntaxError, NotImplementedError, AttributeError, zipfile.BadZipFile,
            zlib.error) as exc:  # empty, truncated, corrupted, of format lil or format 3
        raise InputError(f"{path}: not a scipy.sparse .npz matrix (save one with "
                         f"scipy.sparse.save_npz; {exc or type(exc).__name__})") from None
    except MemoryError:  # a 1,293-byte archive declared 1e10 entries
        raise InputError(f"{path}: its arrays declare more data than fits in memory") from None
    if loaded.ndim != 2 or min(loaded.shape) == 0:
        raise InputError(f"{path}: need a non-empty 2-D sparse matrix, got shape "
                         f"{loaded.shape}")
    if square and loaded.shape[0] != loaded.shape[1]:
        raise InputError(f"{path}: need a square cost matrix, got {loaded.shape[0]}x"
                         f"{loaded.shape[1]}")
    _refuse_converted_indices(path, loaded)
    try:
        return as_csr(loaded)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


_INDEX_ARRAYS = {"csr": ("indices", "indptr"), "csc": ("indices", "indptr"),
                 "bsr": ("indices", "indptr"), "coo": ("coords", "row", "col"),
                 "dia": ("offsets",)}


def _refuse_converted_indices(path: Path, loaded: sp.spmatrix) -> None:
    """An InputError where scipy read an index array of the archive as other numbers than it
    stores: it casts float indices (column 1.5 read as 1) and wraps int64 ones into int32
    (DIA offset 2**32 read as the main diagonal). Entries past the index pointer's end,
    which scipy drops, are not compared."""
    with np.load(path, allow_pickle=False) as raw:
        for key in _INDEX_ARRAYS.get(loaded.format, ()):
            stored = raw[key] if key in raw.files else None
            if stored is not None and not _read_as_stored(stored, _read_back(loaded, key)):
                raise InputError(f"{path}: its {key!r} array ({stored.dtype}) holds other "
                                 "numbers than scipy reads from it: index arrays must hold "
                                 "integers within the matrix's shape")


def _read_back(loaded: sp.spmatrix, key: str) -> np.ndarray:
    """The index array `key` as scipy read it into `loaded` (a COO's `coords` as one array,
    one row per axis)."""
    if key == "coords":
        return np.asarray(loaded.coords if hasattr(loaded, "coords") else
                          (loaded.row, loaded.col))
    return np.asarray(getattr(loaded, key))


def _read_as_stored(stored: np.ndarray, read: np.ndarray) -> bool:
    """Whether integer `stored` holds `read`'s numbers (in its first entries where scipy
    trimmed it)."""
    if stored.dtype.kind not in "iu" or stored.ndim != read.ndim or \
            stored.shape[:-1] != read.shape[:-1] or stored.shape[-1] < read.shape[-1]:
        return False
    return bool(np.array_equal(stored[..., :read.shape[-1]], read))


def _starts_with(path: Path, magics: tuple[bytes, ...]) -> bool:
    """Whether the file begins with one of `magics` (False when it cannot be read: the
    loader then says why)."""
    try:
        with path.open("rb") as f:
            head = f.read(max(map(len, magics)))
    except OSError:
        return True
    return head.startswith(magics)


def _read_text(path: Path) -> str:
    """The file's text (a UTF-8 byte-order mark, as spreadsheet exports write, dropped), or
    InputError when it cannot be read as text."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable text file ({exc})") from exc


def _refuse_underscore(line: str, where: str) -> None:
    """Refuse by name a line with an underscore: float() reads "1_0" as 10 (PEP 515), which
    no cost file means."""
    if "_" in line:
        raise InputError(f"{where}: {line.strip()!r} holds an underscore, which cost files "
                         "do not use in numbers")


# float64 holds every integer up to 2**53 exactly; a larger one written in a text file may
# round (18014398509481987 reads as ...88), so the matrix solved would not be the file's.
_EXACT_INTEGERS = 2**53
_INTEGER_TOKEN = re.compile(r"[-+]?\d+")


def _exact_integers(path: Path, costs: np.ndarray, orlib: bool = False) -> np.ndarray:
    """`costs` read from the text file `path`, after an InputError naming the first integer
    token of its data that float64 rounds (as arrays with such int64 entries are refused).
    The text is read again only where a value reaches 2**53."""
    if not costs.size or not max(costs.max(), -costs.min()) >= _EXACT_INTEGERS:
        return costs  # (no |costs| copy: the file's text is still held)
    text = _read_text(path)
    lines = text_lines(text) if orlib else (line for _, line in _data_lines(text))
    for line in lines:
        for token in re.split(r"[,\s]+", line.strip()):
            if _INTEGER_TOKEN.fullmatch(token) and abs(int(token)) > _EXACT_INTEGERS \
                    and int(float(token)) != int(token):
                raise InputError(f"{path}: the integer {token} rounds to {float(token):.0f} "
                                 "in float64 (past 2**53); scale the costs down or give them "
                                 "as floats")
    return costs


def _load_csv(path: Path) -> np.ndarray:
    """A comma- or whitespace-separated matrix, errors naming the line: numpy's C reader into
    one float64 matrix (a list of Python float rows took 5-7x its memory; it parses a token
    as float() does, refusing more: non-ASCII digits, underscores), read again line by line
    where it refuses the file. A tab at a line's start or end, or two in a row, is a
    spreadsheet's blank cell and is refused: split on whitespace it vanished and the row's
    later costs moved one column left."""
    text = _read_text(path)
    rows, delimiter = 0, None
    for lineno, line in _data_lines(text):
        rows += 1
        if "," in line:
            delimiter = ","
        elif "\t" in line and _EMPTY_TAB_CELL.search(line):
            raise InputError(f"{path}:{lineno}: empty cell in {line.rstrip(chr(10) + chr(13))!r}"
                             " (a tab at the line's start or end, or two tabs in a row); every "
                             "pair needs a cost")
    if not rows:
        raise InputError(f"{path}: no cost rows found")
    try:
        costs = np.loadtxt((line for _, line in _data_lines(text)), delimiter=delimiter,
                           comments=None, ndmin=2)
    except ValueError:
        return _csv_by_lines(path, text, rows, delimiter)
    return costs


def _csv_by_lines(path: Path, text: str, rows: int, delimiter: str | None) -> np.ndarray:
    """The matrix of `rows` data lines read one at a time, each token as float() reads it
    (non-ASCII digits too), into one float64 matrix; InputError names the first bad line."""
    costs: np.ndarray | None = None
    for row, (lineno, line) in enumerate(_data_lines(text)):
        _refuse_underscore(line, f"{path}:{lineno}")
        cells = line.split(delimiter)
        if delimiter and any(not cell.strip() for cell in cells):
            raise InputError(f"{path}:{lineno}: empty cell in {line.rstrip(chr(10) + chr(13))!r}"
                             "; every pair needs a cost")
        try:
            values = _floats(cells)
        except ValueError:
            raise InputError(f"{path}:{lineno}: non-numeric entry in {line.strip()!r}") from None
        if costs is None:
            costs = np.empty((rows if _fits(rows * values.size, text) else 0, values.size))
        if values.size != costs.shape[1]:
            raise InputError(
                f"{path}:{lineno}: row has {values.size} entries, "
                f"the first row has {costs.shape[1]}"
            )
        if row < len(costs):
            costs[row] = values
    return costs


def _data_lines(text: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of a matrix file that hold costs: not blank, not a # comment."""
    for lineno, line in enumerate(_lines(text), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield lineno, line


def _lines(text: str) -> Iterator[str]:
    """The lines `text_lines(text)` gives, a block at a time (the list of all lines held a
    second copy of a big file)."""
    for _, block in _blocks(text):
        yield from text_lines(block)


def _blocks(text: str, size: int = 1 << 16) -> Iterator[tuple[int, str]]:
    """Pieces of `text` of about `size` characters, each ending with a newline (or the text)
    and so with whole lines, with where each starts."""
    start = 0
    while start < len(text):
        cut = text.find("\n", start + size)
        end = len(text) if cut < 0 else cut + 1
        yield start, text[start:end]
        start = end


def _floats(tokens: list[str]) -> np.ndarray:
    """The tokens as float64, each read as float() reads it (numpy converts a str with
    float(), a whole line at once); ValueError(token) names the first one float() refuses."""
    try:
        return np.array(tokens, dtype=np.float64)
    except ValueError:
        return np.array([_float(token) for token in tokens], dtype=np.float64)


def _float(token: str) -> float:
    """float(token), its ValueError carrying just the token for the caller's message."""
    try:
        return float(token)
    except ValueError:
        raise ValueError(token) from None


def _fits(count: int, text: str) -> bool:
    """Whether `text` can hold `count` numbers (a character each and one between), so that
    a matrix sized from a file's first row or size n is never bigger than the file allows."""
    return count <= (len(text) + 1) // 2


def validate_costs(c: np.ndarray, square: bool = False, source: str = "cost matrix") -> np.ndarray:
    """A finite numeric 2-D matrix (square if asked), else InputError naming the defect."""
    square = check_flag(square, "square")
    if sp.issparse(c):  # np.asarray made it a 0-d object array: "got shape ()"
        raise InputError(f"{source}: need a dense 2-D matrix, got a scipy sparse "
                         f"{c.shape[0]}x{c.shape[1]} matrix (its missing entries are not costs)")
    refuse_masked(c, source)
    c = detached(c, source)
    try:
        c = np.asarray(c)
    except ValueError:  # numpy's "inhomogeneous shape" for ragged rows
        raise InputError(f"{source}: rows of different lengths; need a 2-D matrix") from None
    if c.ndim != 2 or c.size == 0:
        raise InputError(f"{source}: need a non-empty 2-D matrix, got shape {c.shape}")
    if c.dtype.kind not in "iuf":  # numpy counts complex and timedelta64 as numbers
        raise InputError(f"{source}: costs must be real numbers, got dtype {c.dtype}")
    if square and c.shape[0] != c.shape[1]:
        raise InputError(f"{source}: need a square matrix, got {c.shape[0]}x{c.shape[1]}")
    bad = ~np.isfinite(c)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"{source}: entry ({i}, {j}) is {c[i, j]}; costs must be finite "
                         "(forbid a pair by leaving it out of a scipy.sparse matrix)")
    return c


def assignment_model(cost: Any, maximize: bool = False) -> pyo.ConcreteModel:
    """Pyomo model: x[i,j] binary, linear objective, each line of the shorter side assigned
    once (== 1) and each of the longer side at most once (<= 1; all == 1 when square).
    A scipy.sparse `cost` allows its stored pairs alone (x over them: a missing pair is
    forbidden, as `solve_lap` reads one); a line of the shorter side with no pair is refused
    (no assignment exists). `maximize` must be a bool (a truthy "no" would flip the sense)
    and integer costs exact in float64 (the objective's floats)."""
    maximize = check_flag(maximize, "maximize")
    if sp.issparse(cost):
        model = _sparse_assignment_model(cost)
    else:
        c = validate_costs(cost)
        check_exact_integers(c.reshape(-1), "cost matrix")
        model = _assignment_lines(*c.shape)
        model.x = pyo.Var(model.I, model.J, domain=pyo.Binary)
        model.cost = pyo.Objective(expr=sum(
            float(c[i, j]) * model.x[i, j] for i in model.I for j in model.J))
        _once_each(model, {i: list(model.J) for i in model.I},
                   {j: list(model.I) for j in model.J})
    model.cost.sense = pyo.maximize if maximize else pyo.minimize
    return model


def _assignment_lines(n: int, m: int) -> pyo.ConcreteModel:
    """An empty assignment model with its row and column sets."""
    model = pyo.ConcreteModel(name="assignment")
    model.I = pyo.RangeSet(0, n - 1)
    model.J = pyo.RangeSet(0, m - 1)
    return model


def _sparse_assignment_model(cost: Any) -> pyo.ConcreteModel:
    """`assignment_model` over the stored pairs of a scipy.sparse matrix (canonical CSR as
    `solve_lap` reads it: finite, no repeated pair)."""
    from coplug.plugins.lap.sparse import as_csr

    csr = as_csr(cost)  # integers float64 rounds refused there too
    n, m = csr.shape
    if n == 0 or m == 0:
        raise InputError(f"cost matrix: need a non-empty 2-D matrix, got shape {csr.shape}")
    rows = np.repeat(np.arange(n), np.diff(csr.indptr))
    pairs = list(zip(rows.tolist(), csr.indices.tolist(), strict=True))
    model = _assignment_lines(n, m)
    model.P = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    model.x = pyo.Var(model.P, domain=pyo.Binary)
    model.cost = pyo.Objective(expr=sum(
        float(v) * model.x[p] for p, v in zip(pairs, csr.data.tolist(), strict=True)))
    by_row: dict[int, list[int]] = {i: [] for i in range(n)}
    by_col: dict[int, list[int]] = {j: [] for j in range(m)}
    for i, j in pairs:
        by_row[i].append(j)
        by_col[j].append(i)
    _once_each(model, by_row, by_col)
    return model


def _once_each(model: pyo.ConcreteModel, by_row: dict[int, list[int]],
               by_col: dict[int, list[int]]) -> None:
    """model.row and model.col: the lines of the shorter side (rows when square) == 1, the
    others <= 1 (those with no pair left out); a line that must be assigned and has no pair
    is refused by name."""
    rows_once = len(by_row) <= len(by_col)
    cols_once = len(by_col) <= len(by_row)
    for name, lines, once in (("row", by_row, rows_once), ("column", by_col, cols_once)):
        empty = next((k for k, others in lines.items() if not others), None)
        if once and empty is not None:
            raise InputError(f"cost matrix: {name} {empty} has no allowed pair, so no "
                             "assignment exists")
    model.row = pyo.Constraint(model.I, rule=functools.partial(_row, by_row, rows_once))
    model.col = pyo.Constraint(model.J, rule=functools.partial(_column, by_col, cols_once))


def _row(by_row: dict[int, list[int]], once: bool, mdl: pyo.ConcreteModel, i: int) -> Any:
    """Row i's constraint (a partial, not a lambda: the model pickles)."""
    return _line([mdl.x[i, j] for j in by_row[i]], once)


def _column(by_col: dict[int, list[int]], once: bool, mdl: pyo.ConcreteModel, j: int) -> Any:
    """Column j's constraint."""
    return _line([mdl.x[i, j] for i in by_col[j]], once)


def _line(terms: list[Any], once: bool) -> Any:
    """One row's or column's constraint: assigned once, or at most once (none: skipped)."""
    if not terms:
        return pyo.Constraint.Skip
    return sum(terms) == 1 if once else sum(terms) <= 1


def _check_args(n: int, m: int | None, seed: int, dtype: type, dense: bool = True
                ) -> tuple[int, int | None]:
    """Arguments every generator takes, checked before numpy sees them (it raises raw
    errors, or a negative seed's long traceback), n and m as plain ints (numpy integers
    wrap, and a uint8 n made `noise / sqrt(n)` a float16); a `dense` n x m matrix that
    cannot fit in the available memory is refused (numpy's MemoryError or the OOM killer
    came first)."""
    n = check_count(n, "n", 1)  # a plain int: numpy integers wrap in the size product below
    if m is not None:
        m = check_count(m, "m", 1)
    if m is not None and m < n:
        raise InputError(f"need 1 <= n <= m for an assignment instance, got n={n}, m={m}")
    check_seed(seed)
    try:
        kind = np.dtype(dtype)
    except TypeError:
        kind = None
    if kind not in (np.float32, np.float64):
        shown = dtype if kind is None else kind
        raise InputError(f"dtype must be float32 or float64, got {shown}")
    if dense:
        check_memory(n * (m or n) * kind.itemsize, f"a dense {n} x {m or n} {kind} cost matrix",
                     "use a smaller n, or the sparse gated() frame")
    return n, m


MAX_NOISE = {np.dtype(np.float64): 1e100, np.dtype(np.float32): 1e30}


def _check_noise(noise: float, dtype: type = np.float64) -> None:
    """Noise is a non-negative scale (a negative one is not a standard deviation) of at most
    MAX_NOISE for the costs' dtype: past about 1e154 squared distances overflow float64 to
    inf (and gated()'s neighbour search to a scipy error), past about 1e37 the costs
    overflow float32; far beyond any scale the generators mean."""
    limit = MAX_NOISE[np.dtype(dtype)]
    if isinstance(noise, bool) or not isinstance(noise, int | float | np.number) or not (
        0 <= noise <= limit
    ):
        raise InputError(f"noise must be a number in [0, {limit:g}] for {np.dtype(dtype)} "
                         f"costs, got {noise!r}")


def _by_rows(
    n: int, m: int, dtype: type, block: Callable[[slice], np.ndarray], rows: int = 1024
) -> np.ndarray:
    """Fill an n x m matrix of `dtype` block by block (bounded float64 temporaries)."""
    out = np.empty((n, m), dtype=dtype)
    for start in range(0, n, rows):
        sl = slice(start, min(start + rows, n))
        out[sl] = block(sl)
    return out


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distance matrix between two point sets (float64)."""
    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.sqrt(np.maximum(sq, 0.0))


def _attach(points: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest graph node of each point and the straight-line access distance to it."""
    from scipy.spatial import cKDTree

    dist, idx = cKDTree(nodes).query(points)
    return idx, dist


def registry_model(size: int, seed: int = 0) -> pyo.ConcreteModel:
    """`coplug solve assignment --size N`: a geometric (tracking) N x N assignment model."""
    return assignment_model(geometric(size, seed=seed))
