"""TSPLIB speed rewrite: the in-place coordinate distance functions give bit for bit the
matrices of the straightforward (n, n, 2) formulas, and the batched EXPLICIT reader fills the
same matrices and names the same lines in its errors as the number-by-number one did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coplug.formulations import tsp
from coplug.formulations.tsp import load_tsplib
from coplug.plugins.errors import InputError


# ---- reference formulas: the (n, n, 2) broadcasting the module used before
def _ref_offsets(c: np.ndarray) -> np.ndarray:
    return np.abs(c[:, None, :] - c[None, :, :])


def _ref_squared(c: np.ndarray) -> np.ndarray:
    return (_ref_offsets(c) ** 2).sum(-1)


def _ref_nint(x: np.ndarray) -> np.ndarray:
    return np.floor(x + 0.5)


def _ref_att(c: np.ndarray) -> np.ndarray:
    r = np.sqrt(_ref_squared(c) / 10.0)
    t = _ref_nint(r)
    return t + (t < r)


def _ref_geo(c: np.ndarray) -> np.ndarray:
    deg = np.trunc(c)
    rad = 3.141592 * (deg + 5.0 * (c - deg) / 3.0) / 180.0
    lat, lon = rad[:, 0], rad[:, 1]
    q1 = np.cos(lon[:, None] - lon[None, :])
    q2 = np.cos(lat[:, None] - lat[None, :])
    q3 = np.cos(lat[:, None] + lat[None, :])
    arc = np.arccos(np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0))
    d = np.floor(6378.388 * arc + 1.0)
    np.fill_diagonal(d, 0.0)
    return d


REFERENCE = {
    "EUC_2D": lambda c: _ref_nint(np.sqrt(_ref_squared(c))),
    "CEIL_2D": lambda c: np.ceil(np.sqrt(_ref_squared(c))),
    "ATT": _ref_att,
    "MAN_2D": lambda c: _ref_nint(_ref_offsets(c).sum(-1)),
    "MAX_2D": lambda c: _ref_nint(_ref_offsets(c)).max(-1),
    "GEO": _ref_geo,
}


def _plane_coords(seed: int) -> np.ndarray:
    """Half-integer grid points (ties, repeated points, offsets and distances k + 0.5 such as
    (1.5, 2) -> 2.5, ATT radicands 10 t^2 such as (30, 10)) mixed with uniform floats."""
    rng = np.random.default_rng(seed)
    grid = rng.integers(-40, 41, (120, 2)) / 2.0
    fixed = np.array([[0, 0], [1.5, 2], [2.5, 0], [30, 10], [0, 0], [-0.5, 0.5], [3, 4]])
    floats = rng.uniform(-1000, 1000, (80, 2))
    return np.vstack([grid, fixed, floats, floats[:5]])


def _geo_coords(seed: int) -> np.ndarray:
    """DDD.MM latitudes and longitudes of both signs, with repeated nodes and the poles."""
    rng = np.random.default_rng(seed)
    sign = rng.choice([-1.0, 1.0], (150, 2))
    ddd = rng.integers(0, [90, 180], (150, 2)) + rng.integers(0, 60, (150, 2)) / 100
    poles = np.array([[90.0, 0.0], [-90.0, 179.59], [0.0, 0.0], [0.0, -180.0]])
    return np.vstack([sign * ddd, poles, ddd[:4]])


@pytest.mark.parametrize("ewt", sorted(REFERENCE))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distance_functions_match_the_broadcast_formulas_bit_for_bit(ewt: str, seed: int) -> None:
    coords = _geo_coords(seed) if ewt == "GEO" else _plane_coords(seed)
    got = tsp._COORD_TYPES[ewt](coords)
    want = REFERENCE[ewt](coords)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    if ewt != "GEO":  # integer coordinates too (TSPLIB files often have them)
        whole = np.round(coords).astype(np.int64)
        assert np.array_equal(tsp._COORD_TYPES[ewt](whole), REFERENCE[ewt](whole))


def test_rounding_boundaries_round_half_up() -> None:
    coords = np.array([[0.0, 0.0], [1.5, 2.0], [2.5, 0.0], [30.0, 10.0]])
    assert tsp.euc_2d(coords)[0].tolist() == [0, 3, 3, 32]  # 2.5 -> 3
    assert tsp.man_2d(coords)[0, 1:].tolist() == [4, 3, 40]  # 3.5 -> 4, 2.5 -> 3
    assert tsp.max_2d(coords)[0, 1:].tolist() == [2, 3, 30]  # nint(1.5) = 2
    assert tsp.att(coords)[0, 3] == 10  # r = 10 exactly: no + 1


def test_load_tsplib_euc_2d_matches_the_reference(tmp_path: Path) -> None:
    coords = _plane_coords(3)
    body = "".join(f"{i + 1} {x!r} {y!r}\n" for i, (x, y) in enumerate(coords.tolist()))
    path = tmp_path / "p.tsp"
    path.write_text(f"DIMENSION: {len(coords)}\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                    f"NODE_COORD_SECTION\n{body}EOF\n")
    np.testing.assert_array_equal(load_tsplib(path).dist, REFERENCE["EUC_2D"](coords))


# ---- EXPLICIT sections
def _numbers_of(d: np.ndarray, fmt: str) -> np.ndarray:
    """The numbers a TSPLIB explicit format lists for the symmetric matrix d, in file order."""
    n = d.shape[0]
    if fmt == "FULL_MATRIX":
        return d.reshape(-1)
    k = {"UPPER_ROW": 1, "LOWER_ROW": -1}.get(fmt, 0)
    rows, cols = (np.triu_indices if fmt.startswith("UPPER") else np.tril_indices)(n, k)
    return d[rows, cols]


def _explicit_file(tmp_path: Path, n: int, fmt: str, body: str, name: str = "x") -> Path:
    path = tmp_path / f"{name}.tsp"
    path.write_text(f"NAME: {name}\nTYPE: TSP\nDIMENSION: {n}\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                    f"EDGE_WEIGHT_FORMAT: {fmt}\nEDGE_WEIGHT_SECTION\n{body}\nEOF\n")
    return path


def _layout(tokens: list[str], per_line: int) -> str:
    """The tokens `per_line` to a line, with a blank line and odd spacing now and then."""
    rows = [" ".join(tokens[i:i + per_line]) for i in range(0, len(tokens), per_line)]
    return "\n".join(f"  {r}\t" if i % 7 == 3 else (f"\n{r}" if i % 11 == 5 else r)
                     for i, r in enumerate(rows))


def _symmetric(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.integers(0, 1000, (n, n)) + rng.choice([0.0, 0.25, 0.5], (n, n))
    d = np.triu(d, 1)
    return d + d.T


@pytest.mark.parametrize("fmt", tsp._EXPLICIT_FORMATS)
@pytest.mark.parametrize("per_line", [1, 10, 10**9])
def test_explicit_formats_parse_to_the_reference_matrix(tmp_path: Path, fmt: str,
                                                       per_line: int) -> None:
    n = 40
    d = _symmetric(n, per_line % 97)
    tokens = [repr(float(v)) if v % 1 else str(int(v)) for v in _numbers_of(d, fmt)]
    path = _explicit_file(tmp_path, n, fmt, _layout(tokens, per_line))
    got = load_tsplib(path).dist
    assert got.dtype == np.float64 and np.array_equal(got, d)


def test_explicit_section_longer_than_a_batch(tmp_path: Path) -> None:
    n = 300  # 90,000 numbers: more than one batch of tsp._BATCH tokens
    assert n * n > tsp._BATCH
    d = _symmetric(n, 7)
    body = "\n".join(" ".join(f"{v:g}" for v in row) for row in d)
    np.testing.assert_array_equal(load_tsplib(_explicit_file(tmp_path, n, "FULL_MATRIX",
                                                             body)).dist, d)


# ---- errors name the same lines as before (the header takes lines 1..6, data starts at 7)
def _bad(tmp_path: Path, n: int, fmt: str, body: str) -> str:
    path = _explicit_file(tmp_path, n, fmt, body)
    with pytest.raises(InputError) as err:
        load_tsplib(path)
    return str(err.value).replace(str(path), "F")


BIG_ROWS = ["1 " * 299 + "1"] * 300  # FULL_MATRIX 300, lines 7..306; the batch ends at line 225


@pytest.mark.parametrize("n, fmt, body, message", [
    (3, "UPPER_ROW", "1 2\n3x", "F:8: not a number: '3x'"),
    (3, "UPPER_ROW", "1 2\n\n3 4,", "F:9: not a number: '4,'"),
    (3, "UPPER_ROW", "1 inf\n3", "F:7: weights must be finite, got 'inf'"),
    (3, "UPPER_ROW", "1 2\n-nan", "F:8: weights must be finite, got '-nan'"),
    (3, "UPPER_ROW", "1 1e400 3", "F:7: weights must be finite, got '1e400'"),
    # the first problem in reading order wins, whichever kind it is
    (3, "UPPER_ROW", "1 nan\n3 x", "F:7: weights must be finite, got 'nan'"),
    (3, "UPPER_ROW", "1 x\n3 nan", "F:7: not a number: 'x'"),
    (3, "UPPER_ROW", "1 x inf", "F:7: not a number: 'x'"),
    (3, "UPPER_ROW", "1 2\n-3", "F:8: negative distance -3.0"),
    (4, "UPPER_ROW", "1 2\n\n3 -0.5\n-2 5", "F:9: negative distance -0.5"),
    (3, "UPPER_ROW", "1 2\n3\n4\n\n", "F: EDGE_WEIGHT_SECTION has 4 numbers, UPPER_ROW with "
                                     "DIMENSION 3 needs 3 (last number on line 9)"),
    (4, "FULL_MATRIX", "0 1 2 3\n\n1 0\n \n", "F: EDGE_WEIGHT_SECTION has 6 numbers, FULL_MATRIX "
                                             "with DIMENSION 4 needs 16 (last number on line 9)"),
    (3, "LOWER_ROW", "", "F: EDGE_WEIGHT_SECTION has 0 numbers, LOWER_ROW with DIMENSION 3 "
                         "needs 3"),
    # past the first batch of tokens: lines 226 on
    (300, "FULL_MATRIX", "\n".join(BIG_ROWS[:250] + ["1 2 bad"] + BIG_ROWS[251:]),
     "F:257: not a number: 'bad'"),
    (300, "FULL_MATRIX", "\n".join(BIG_ROWS[:290] + ["1 -7" + " 1" * 298] + BIG_ROWS[291:]),
     "F:297: negative distance -7.0"),
    (300, "FULL_MATRIX", "\n".join(BIG_ROWS[:299]), "F: EDGE_WEIGHT_SECTION has 89700 numbers, "
     "FULL_MATRIX with DIMENSION 300 needs 90000 (last number on line 305)"),
])
def test_explicit_errors_name_the_line(tmp_path: Path, n: int, fmt: str, body: str,
                                       message: str) -> None:
    assert _bad(tmp_path, n, fmt, body) == message


def test_display_data_section_tokens_are_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "d.tsp"
    path.write_text("DIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\n"
                    "EDGE_WEIGHT_SECTION\n1 2 3\nDISPLAY_DATA_SECTION\n1 0 0\n2 1 zero\nEOF\n")
    with pytest.raises(InputError, match=r"d\.tsp:8: not a number: 'zero'$"):
        load_tsplib(path)


@pytest.mark.parametrize("dtype", [float, np.float32, np.int64])
def test_checked_distances_leave_the_callers_matrix_alone(dtype):
    given = np.arange(16, dtype=dtype).reshape(4, 4) + 1
    kept = given.copy()
    checked = tsp.check_distances(given)
    assert (np.diag(checked) == 0).all() and checked.dtype == float
    assert np.array_equal(given, kept)
