"""The cost-file loaders read a block of lines at a time into one float64 matrix (a list of
Python floats per token took 4x numpy's time and 5-7x the matrix's memory on a 5000 x 5000
file): the same matrices and the same errors as the per-token float() reading they replace."""

from __future__ import annotations

import functools
import random
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations import assignment
from coplug.formulations.assignment import load_costs, validate_costs
from coplug.plugins.errors import InputError

_FORBID = " (forbid a pair by leaving it out of a scipy.sparse matrix)"


def _reference(path: Path, square: bool = False) -> np.ndarray:
    """`load_costs` on a text file as it was: every line, every token through float()."""
    text = path.read_text(encoding="utf-8-sig")
    # a form feed or vertical tab separates numbers, as float() reads it, not lines
    lines = list(enumerate(text.replace("\f", " ").replace("\v", " ").splitlines(), start=1))
    if _is_orlib(path):
        numbers: list[float] = []
        for lineno, line in lines:
            _underscore(path, lineno, line)
            for token in line.split():
                try:
                    numbers.append(float(token))
                except ValueError:
                    raise InputError(f"{path}:{lineno}: not a number: {token!r}") from None
        if not numbers:
            raise InputError(f"{path}: empty OR-Library assignment file")
        n = numbers[0]
        if not np.isfinite(n) or n != int(n) or n < 1:
            raise InputError(f"{path}:1: first number must be the size n >= 1, got {n}")
        n = int(n)
        if len(numbers) - 1 != n * n:
            raise InputError(
                f"{path}: read as an OR-Library assignment file (name assign<n> or assignp*): "
                f"expected {n}x{n} = {n * n} costs after n = {n}, found {len(numbers) - 1}")
        c = np.array(numbers[1:], dtype=np.float64).reshape(n, n)
        _exact(path, [token for _, line in lines for token in line.split()])
    else:
        data = [(i, line) for i, line in lines
                if line.strip() and not line.lstrip().startswith("#")]
        delimiter = "," if any("," in line for _, line in data) else None
        for lineno, line in data:  # a spreadsheet's blank cell between tabs, before all else
            if "," not in line and re.search(r"^ *\t|\t *\t|\t *$", line):
                raise InputError(f"{path}:{lineno}: empty cell in {line!r} (a tab at the "
                                 "line's start or end, or two tabs in a row); every pair "
                                 "needs a cost")
        rows: list[list[float]] = []
        for lineno, line in data:
            _underscore(path, lineno, line)
            if delimiter and any(not x.strip() for x in line.split(delimiter)):
                raise InputError(f"{path}:{lineno}: empty cell in {line!r}; every pair "
                                 "needs a cost")
            try:
                rows.append([float(x) for x in line.split(delimiter)])
            except ValueError:
                raise InputError(
                    f"{path}:{lineno}: non-numeric entry in {line.strip()!r}") from None
            if len(rows[-1]) != len(rows[0]):
                raise InputError(f"{path}:{lineno}: row has {len(rows[-1])} entries, "
                                 f"the first row has {len(rows[0])}")
        if not rows:
            raise InputError(f"{path}: no cost rows found")
        c = np.array(rows, dtype=np.float64)
        _exact(path, [x.strip() for _, line in data for x in line.split(delimiter)])
    return validate_costs(c, square=square, source=str(path))


def _exact(path: Path, tokens: list[str]) -> None:
    """The reference's refusal of an integer token float64 rounds (past 2**53)."""
    for token in tokens:
        if re.fullmatch(r"[-+]?\d+", token) and abs(int(token)) > 2**53 \
                and int(float(token)) != int(token):
            raise InputError(f"{path}: the integer {token} rounds to {float(token):.0f} in "
                             "float64 (past 2**53); scale the costs down or give them as "
                             "floats")


def _is_orlib(path: Path) -> bool:
    """Whether `load_costs` reads `path` as an OR-Library file."""
    return bool(re.match(r"assign(p|\d)", path.name, re.IGNORECASE))


def _underscore(path: Path, lineno: int, line: str) -> None:
    """The reference's refusal of a line holding an underscore."""
    if "_" in line:
        raise InputError(f"{path}:{lineno}: {line.strip()!r} holds an underscore, which cost "
                         "files do not use in numbers")


def _outcome(load, path: Path, square: bool = False) -> tuple:
    """What a loader gives: the matrix's shape and bytes, or the InputError's message."""
    try:
        c = load(path, square=square)
    except InputError as exc:
        return ("error", str(exc))
    assert c.dtype == np.float64 and c.flags.c_contiguous
    return ("matrix", c.shape, c.tobytes())


@pytest.fixture(params=[None, 7], ids=["blocks", "tiny-blocks"])
def blocks(request, monkeypatch) -> None:
    """Run a test as it is and with 7-character blocks, so lines straddle block cuts."""
    if request.param:
        monkeypatch.setattr(assignment, "_blocks",
                            functools.partial(assignment._blocks, size=request.param))


def _token(rng: random.Random) -> str:
    """A cost as files write it: integer (up to 2**53, or past it and exact in float64),
    float, negative, scientific, signed, bare point."""
    kind = rng.randrange(7)
    if kind == 0:
        return str(rng.randint(0, 10**6))
    if kind == 1:
        return repr(rng.uniform(-1e3, 1e3))
    if kind == 2:
        return f"{rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30):.{rng.randint(0, 17)}e}"
    if kind == 3:
        return rng.choice(["+7", "-0", ".5", "5.", "-.25e+2", "1E5", "007", "+1.5E-3"])
    if kind == 4:
        return str(-rng.randint(0, 10**9))
    if kind == 5:
        return f"{rng.random():.3f}"
    if rng.random() < 0.5:  # past 2**53 only where float64 holds it: others are refused
        return str(rng.randint(-1000, 1000) * 2**60)
    return str(rng.randint(-(2**53), 2**53))


def _layout(rng: random.Random, lines: list[str]) -> str:
    """The lines joined as some file would: LF or CRLF, maybe a last newline, a blank line,
    a comment or a byte-order mark."""
    newline = rng.choice(["\n", "\r\n"])
    text = newline.join(lines) + rng.choice(["", newline])
    return ("\ufeff" if rng.random() < 0.1 else "") + text


def _csv_text(rng: random.Random, rows: int, cols: int) -> str:
    """A random matrix file: comma- or whitespace-separated, with stray spaces and tabs (no
    tab at a line's start: that is a spreadsheet's blank first cell, refused)."""
    sep = rng.choice([",", ", ", " ", "  ", "\t", " \t "])
    lines = []
    for _ in range(rows):
        pad = rng.choice(["", " ", "  "])
        lines.append(pad + sep.join(_token(rng) for _ in range(cols)) + rng.choice(["", " "]))
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "   ", "# a comment, with a comma", "  # x"]))
    return _layout(rng, lines)


def _orlib_text(rng: random.Random, n: int) -> str:
    """A random OR-Library file: n, then n * n costs wrapped at random line lengths."""
    tokens = [_token(rng) for _ in range(n * n)]
    lines = [rng.choice(["", " "]) + str(n)]
    while tokens:
        take = rng.randint(1, 2 * n)
        lines.append(rng.choice(["", " ", "\t"]) + rng.choice([" ", "  ", "\t"]).join(
            tokens[:take]) + rng.choice(["", " "]))
        tokens = tokens[take:]
        if rng.random() < 0.05:
            lines.append("")
    return _layout(rng, lines)


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize("seed", range(40))
def test_random_files_read_exactly_as_float_reads_each_token(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    csv = tmp_path / rng.choice(["costs.csv", "costs.txt", "m.CSV"])
    csv.write_bytes(_csv_text(rng, rng.randint(1, 12), rng.randint(1, 12)).encode())
    orlib = tmp_path / rng.choice(["assignp9.txt", "assign3.txt", "ASSIGNP_X"])
    orlib.write_bytes(_orlib_text(rng, rng.randint(1, 9)).encode())
    for path in (csv, orlib):
        expected = _reference(path)
        got = load_costs(path)
        assert np.array_equal(got, expected) and got.shape == expected.shape
        assert np.array_equal(np.signbit(got), np.signbit(expected))  # -0 stays -0


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize("seed", range(60))
def test_damaged_files_give_the_same_matrix_or_error(tmp_path: Path, seed: int) -> None:
    """A random file with one token or line break changed: the same result either way."""
    rng = random.Random(1000 + seed)
    name = rng.choice(["costs.csv", "costs.txt", "assignp4.txt"])
    n = rng.randint(1, 5)
    text = _orlib_text(rng, n) if name.startswith("assign") else _csv_text(rng, n, n)
    spots = [m.start() for m in re.finditer(r"\S+", text)] or [0]
    at = rng.choice(spots)
    damage = rng.choice(["x", "1_0", "nan", "inf", "-inf", "", "1 2", ",", ",,", "\u0663",
                         "\uff17", "1e999", "nan(1)", "0x1", "1d5", "#", "\r", "\n\n", "\x0c",
                         "\u2028", "\x1c", "\xa0", "\u3000", "\x00", '"1"', "3,",
                         "18014398509481987", "-18014398509481987"])
    end = at + rng.choice([0, 1, len(re.match(r"\S*", text[at:]).group())])
    path = tmp_path / name
    path.write_bytes((text[:at] + damage + text[end:]).encode())
    for square in (False, True):
        assert _outcome(load_costs, path, square) == _outcome(_reference, path, square)


_BIG = int(1e300)


@pytest.mark.usefixtures("blocks")
@pytest.mark.parametrize(("name", "text", "message"), [
    ("c.csv", "1,2\n3\n", ":2: row has 1 entries, the first row has 2"),
    ("c.csv", "1,2\n3,4,5\n", ":2: row has 3 entries, the first row has 2"),
    ("c.csv", "# h, i\n\n1,2\n3,x\n", ":4: non-numeric entry in '3,x'"),
    ("c.csv", "1,2,\n3,4,\n", ":1: empty cell in '1,2,'; every pair needs a cost"),
    ("c.csv", "1,,2\n", ":1: empty cell in '1,,2'; every pair needs a cost"),
    ("c.txt", "1\t2\n3\t4\n\t5\t6\n", ":3: empty cell in '\\t5\\t6' (a tab at the line's "
     "start or end, or two tabs in a row); every pair needs a cost"),
    ("c.txt", "1\t\t3\n", ":1: empty cell in '1\\t\\t3' (a tab at the line's start or end, or "
     "two tabs in a row); every pair needs a cost"),
    ("c.txt", "1 2\n3 4 # note\n", ":2: non-numeric entry in '3 4 # note'"),
    ("c.csv", "1,nan\r\n3,4\r\n", ": entry (0, 1) is nan; costs must be finite" + _FORBID),
    ("c.csv", "1,2\n-inf,4", ": entry (1, 0) is -inf; costs must be finite" + _FORBID),
    ("c.csv", "1,1e999\n3,4\n", ": entry (0, 1) is inf; costs must be finite" + _FORBID),
    ("c.csv", "", ": no cost rows found"),
    ("c.csv", "# only a comment\n \n\t\n", ": no cost rows found"),
    ("c.csv", "1,2\n3,4_0\n", ":2: '3,4_0' holds an underscore, which cost files do not use "
     "in numbers"),
    ("c.txt", "1 2 3\n4 5 6\n", ": need a square matrix, got 2x3"),
    ("assignp2.txt", "", ": empty OR-Library assignment file"),
    ("assignp2.txt", " \n\n", ": empty OR-Library assignment file"),
    ("assignp2.txt", "2\n1 2\n3 x 4\n", ":3: not a number: 'x'"),
    ("assignp2.txt", "2\r\n1 2\r\n3 4 5", ": read as an OR-Library assignment file (name "
     "assign<n> or assignp*): expected 2x2 = 4 costs after n = 2, found 5"),
    ("assign2.txt", "2.5\n1 2\n", ":1: first number must be the size n >= 1, got 2.5"),
    ("assign2.txt", "-1\n1 2\n", ":1: first number must be the size n >= 1, got -1.0"),
    ("assign2.txt", "\n nan\n", ":1: first number must be the size n >= 1, got nan"),
    ("assign2.txt", "1e300\n1\n", ": read as an OR-Library assignment file (name assign<n> or "
     f"assignp*): expected {_BIG}x{_BIG} = {_BIG * _BIG} costs after n = {_BIG}, found 1"),
    ("assign2.txt", "2\n1 2\n3 x\n4_0\n", ":3: not a number: 'x'"),
    ("assign2.txt", "2\n1 2\n3 4_0\nx\n", ":3: '3 4_0' holds an underscore, which cost files "
     "do not use in numbers"),
    ("assign2.txt", "2\n1 nan\n3 4\n", ": entry (0, 1) is nan; costs must be finite" + _FORBID),
])
def test_bad_files_keep_their_messages(tmp_path: Path, name: str, text: str,
                                       message: str) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode())
    with pytest.raises(InputError) as caught:
        load_costs(path, square=True)
    assert str(caught.value) == f"{path}{message}"
    assert _outcome(_reference, path, square=True) == ("error", f"{path}{message}")


def test_numbers_only_float_reads_fall_back_to_the_line_reader(tmp_path: Path) -> None:
    """numpy's C reader refuses non-ASCII digits and spaces, which float() reads: the line
    by line reading gives them as before."""
    path = tmp_path / "c.csv"
    path.write_text("\u0663,\uff17\n1\u3000,\xa02\n", encoding="utf-8")
    assert load_costs(path).tolist() == _reference(path).tolist() == [[3, 7], [1, 2]]
    path = tmp_path / "c.txt"
    path.write_text("1\u30002\n3\x1f4\n", encoding="utf-8")  # both Unicode spaces
    assert load_costs(path).tolist() == _reference(path).tolist() == [[1, 2], [3, 4]]


def test_a_wrong_first_row_or_size_allocates_nothing_big(tmp_path: Path) -> None:
    """The matrix is sized from the first row (or n) only when the file can hold it: a
    100000-wide first row over one-number rows, or n = 100000 before three costs, is
    refused by its message, not a MemoryError for 80 GB."""
    path = tmp_path / "wide.txt"
    path.write_text("1 " * 100_000 + "\n" + "1\n" * 100_000)
    with pytest.raises(InputError, match=r"wide.txt:2: row has 1 entries, the first row has "
                                         r"100000$"):
        load_costs(path)
    path = tmp_path / "assignp_big.txt"
    path.write_text("100000\n1 2 3\n")
    with pytest.raises(InputError, match="expected 100000x100000 = 10000000000 costs after "
                                         "n = 100000, found 3"):
        load_costs(path)


@pytest.mark.parametrize("name", ["costs.csv", "assignp600.txt"])
def test_peak_memory_is_about_the_text_and_the_matrix(tmp_path: Path, name: str) -> None:
    """Reading a 600 x 600 integer file peaks under 3x the matrix (the list of Python floats
    peaked over 5x; numpy's loadtxt about 1.2x)."""
    n = 600
    c = np.random.default_rng(0).integers(0, 1000, (n, n))
    path = tmp_path / name
    if name.endswith(".csv"):
        np.savetxt(path, c, fmt="%d", delimiter=",")
    else:
        body = "\n".join(" ".join(map(str, c.ravel()[i:i + 12])) for i in range(0, n * n, 12))
        path.write_text(f" {n}\n{body}\n")
    tracemalloc.start()
    try:
        got = load_costs(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(got, c)
    assert peak < 3 * c.size * 8
