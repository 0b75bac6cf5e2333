"""What an MPS file's text says where SCIP's and HiGHS's readers take it apart: fields
that are no `type name`, `set row value` or `TYPE set column value`, values that are no
plain number, second sets, sections out of order, bounds MPS readers part on; and the
section helpers the solver-specific checks read MPS text with."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError

SECTION_HEAD = re.compile(rb"\n(?:RANGES|BOUNDS|SOS|ENDATA|QUADOBJ|QMATRIX|QSECTION|QCMATRIX|"
                           rb"INDICATORS)\b")
_LONG_ROW_TYPE = re.compile(rb"^[ \t]+([^\s$]{2,})[ \t]+[^\s$]", re.M)
_NEGATIVE_UP = re.compile(rb"\n[ \t]*U[PI][ \t]+\S+[ \t]+(?:\S+[ \t]+)?-")
# What each BOUNDS type sets (lower, upper): "value" the line's value, None untouched.
BOUND_EFFECT: dict[bytes, tuple[Any, Any]] = {
    b"UP": (None, "value"), b"UI": (None, "value"), b"LO": ("value", None),
    b"LI": ("value", None), b"FX": ("value", "value"), b"FR": (-math.inf, math.inf),
    b"MI": (-math.inf, None), b"PL": (None, math.inf), b"BV": (0.0, 1.0)}
# A number as MPS files write it (what both readers take alike): no Fortran D exponent
# (SCIP read 1D2 as 1, HiGHS as 100), no digit groups, no trailing letters (both read
# `2.0x` as 2 and `abc` as 0).
_MPS_NUMBER = re.compile(rb"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
                         rb"|(?i:inf(?:inity)?))")
_MPS_NUMBERS = re.compile(rb"(?:%s)(?:\n(?:%s))*" % (_MPS_NUMBER.pattern, _MPS_NUMBER.pattern))
_COMMENT_LINE = re.compile(rb"(?<=\n)\*[^\n]*\n")  # opening with \n: searched fast
_NEXT_HEADER = re.compile(rb"\n[^ \t\r\n*]")
# BOUNDS types with a value, and those whose value is optional or absent.
_VALUED_BOUNDS = {b"UP", b"LO", b"FX", b"LI", b"UI"}
_BARE_BOUNDS = {b"FR", b"MI", b"PL", b"BV", b"SC", b"SI"}
VALUELESS_BOUNDS = {b"FR", b"MI", b"PL", b"BV"}  # `MI BND 7`: column 7 of set BND


def check_mps_data(path: Path, text: bytes) -> None:
    """InputErrors for the RHS, RANGES and BOUNDS lines SCIP's and HiGHS's readers take
    apart: a value that is no plain number, a line whose fields are no (row, value) pairs
    (` RHS c1 4 c2`: SCIP read 0 for c1, HiGHS 4), and a second RHS, RANGES or BOUNDS set
    (SCIP reads the first set only, HiGHS every set: 40 against 15). COLUMNS values are not
    read here: a Python pass over them cost a third of the readers' own time."""
    _refuse_dollar_names(path, text)
    _refuse_odd_fields(path, text)
    _refuse_section_order(path, text)
    if _NEGATIVE_UP.search(bounds_section(text)):
        _refuse_negative_upper_alone(path, text)
    for name in (b"RHS", b"RANGES", b"BOUNDS"):
        if _plain_section(name, section_body(text, name)):
            continue  # the common form, checked in bulk: the lines below name a fault
        sets: dict[bytes | None, int] = {}
        for number, words in section_lines(text, name):
            if name == b"BOUNDS":
                bound_set, values = _bound_fields(path, number, words)
                if words[0].upper() == b"SC" and not values:
                    raise InputError(f"{path.name}:{number}: the SC bound of "
                                     f"{words[-1].decode(errors='replace')!r} has no value "
                                     "(SCIP's reader fixed the column at 0, HiGHS's refuses "
                                     "it): give its upper bound")
            else:
                bound_set, values = _pair_fields(path, number, words, name)
            sets.setdefault(bound_set, number)
            for entry, value in values:
                if _MPS_NUMBER.fullmatch(value) is None:
                    what = "bound" if name == b"BOUNDS" else name.decode()
                    raise InputError(f"{path.name}:{number}: the {what} of "
                                     f"{entry.decode(errors='replace')!r} is "
                                     f"{value.decode(errors='replace')!r}, not a number as "
                                     "MPS writes one (the solvers' readers take it as another "
                                     "number, or not at all)")
        if len(sets) > 1:
            first, second = list(sets)[:2]
            raise InputError(f"{path.name}:{sets[second]}: a second {name.decode()} set "
                             f"({_set_name(second)} after {_set_name(first)}): SCIP's reader "
                             "takes the first set only, HiGHS's every set; keep one")


def _refuse_odd_fields(path: Path, text: bytes) -> None:
    """An InputError for a ROWS line that is no `type name` pair or a COLUMNS line of other
    than 3 or 5 fields: SCIP's reader crashed the process on ` E` (no name), took
    ` N obj x` for a row 'obj_x' (the objective's entries were dropped: 'optimal' 0) and
    ` y obj c1 1` for another entry, where HiGHS's switched to fixed-format MPS."""
    for name, fields, form in ((b"ROWS", (2,), "`type name`"),
                               (b"COLUMNS", (3, 5), "`column row value [row value]`")):
        start, stop = _section_span(text, name)
        head = text.find(b"\n", start, stop)
        if head < 0:
            continue
        odd = _odd_line(text, head + 1, stop, fields)
        if odd is not None:
            index, line = odd
            number = text.count(b"\n", 0, head + 1) + index + 1
            raise InputError(f"{path.name}:{number}: the {name.decode()} line "
                             f"{line.strip().decode(errors='replace')!r} is no {form} (the "
                             "solvers' readers take it apart differently, SCIP's crashed on "
                             "a row without a name; names with spaces are not read alike)")
    start, stop = header_at(text, b"ROWS"), header_at(text, b"COLUMNS")
    long_type = _LONG_ROW_TYPE.search(text, start, stop) if start < stop else None
    if long_type is not None:
        number = text.count(b"\n", 0, long_type.start()) + 1
        raise InputError(f"{path.name}:{number}: the row type "
                         f"{long_type.group(1).decode(errors='replace')!r} is no N, E, L or G "
                         "(SCIP's reader reads its first letter, or crashed on one such as "
                         "'1e30')")


def _refuse_negative_upper_alone(path: Path, text: bytes) -> None:
    """An InputError for a column given a negative UP (or UI) bound and no lower bound: MPS
    readers part on its lower bound (CPLEX's -inf; SCIP's and HiGHS's 0, which makes the
    model infeasible, and SCIP's an integer column binary, "error in input data")."""
    last_upper: dict[bytes, tuple[float | None, list[bytes]]] = {}  # each column's last UP/UI
    lowered: set[bytes] = set()
    for number, words in section_lines(text, b"BOUNDS"):
        kind = words[0].upper()
        _, entries = _bound_fields(path, number, words)
        column = entries[0][0] if entries else words[-1]
        if kind in (b"UP", b"UI") and entries:
            last_upper[column] = (float_or_none(entries[0][1]), words)
        elif BOUND_EFFECT.get(kind, (None, None))[0] is not None:  # it sets a lower bound
            lowered.add(column)
    alone = next((words for column, (value, words) in last_upper.items()
                  if (value or 0.0) < 0 and column not in lowered), None)
    if alone is not None:
        raise InputError(f"{path.name}: the bound {b' '.join(alone).decode(errors='replace')!r} "
                         "is negative and the column has no lower bound: MPS readers part on "
                         "it (CPLEX's -inf; SCIP's and HiGHS's 0, [0, UP], which no point "
                         "meets); give the lower bound (MI for none)")


def _refuse_section_order(path: Path, text: bytes) -> None:
    """An InputError for RANGES before RHS (HiGHS's reader applied the ranges to right-hand
    sides of 0: 'optimal' 3 for 2 <= x <= 3; SCIP's refuses the order) and for a data line
    before ROWS other than OBJSENSE's or OBJNAME's (HiGHS's reader ignored it)."""
    ranges, rhs = header_at(text, b"RANGES"), header_at(text, b"RHS")
    if ranges < rhs < len(text):
        number = text.count(b"\n", 0, ranges) + 2
        raise InputError(f"{path.name}:{number}: RANGES comes before RHS (HiGHS's reader "
                         "applied the ranges to right-hand sides of 0, SCIP's refuses the "
                         "order): put RHS first")
    rows = header_at(text, b"ROWS")
    head = text[:rows] if rows < len(text) else b""
    allowed = False  # a data line may follow OBJSENSE or OBJNAME only
    for number, line in enumerate(head.splitlines(), start=1):
        words = line.split()
        if not words or line.startswith(b"*"):
            continue
        if not line[:1].isspace():
            allowed = words[0].upper() in (b"OBJSENSE", b"OBJSENS", b"OBJSEN", b"OBJNAME") \
                and len(words) == 1
            continue
        if not allowed:
            raise InputError(f"{path.name}:{number}: the line "
                             f"{line.strip().decode(errors='replace')!r} stands before ROWS "
                             "outside any section (HiGHS's reader ignored it, SCIP's refuses "
                             "it): move it to its section")
        allowed = False


ODD_LINE_CHUNK = 1 << 23  # bytes of whole lines counted at a time (`_odd_line`)
PLAIN_CHUNK = 1 << 20  # bytes of whole lines whose words are checked at a time


def _odd_line(text: bytes, begin: int, end: int,
              fields: tuple[int, ...]) -> tuple[int, bytes] | None:
    """(index, text) of the first line of `text[begin:end]` whose count of fields is not
    in `fields` (comment lines left out), else None. Counted in numpy, a chunk of whole
    lines at a time: a Python pass over COLUMNS cost 40% of SCIP's reading time, this one
    about 15%, and the arrays over a whole section had peaked at 3.5 times its size."""
    if text.find(b"$", begin, end) >= 0:  # `$` comments: the plain line reader strips them
        body = text[begin:end]
        lines = body.splitlines()
        return next(((k, lines[k]) for k, words in _data_lines(body)
                     if len(words) not in fields), None)
    first_line = 0
    for start, stop in line_chunks(text, begin, end, ODD_LINE_CHUNK):
        chunk = text[start:stop]
        odd = _odd_line_in_chunk(chunk, fields)
        if odd is not None:
            return first_line + odd[0], odd[1]
        first_line += chunk.count(b"\n")
    return None


def line_chunks(text: bytes, begin: int, end: int, size: int) -> Iterator[tuple[int, int]]:
    """Spans of `text[begin:end]` of whole lines, each ending just past the first line end
    `size` bytes or more after its start (the last at `end`): large sections are checked a
    chunk at a time, so their arrays and word lists stay small."""
    start = begin
    while start < end:
        stop = min(text.find(b"\n", start + size, end) + 1 or end, end)
        yield start, stop
        start = stop


def _odd_line_in_chunk(body: bytes, fields: tuple[int, ...]) -> tuple[int, bytes] | None:
    """`_odd_line` on a body with no `$`, counted as one numpy array (`_field_counts`)."""
    import numpy as np

    chars, counts, ends = _field_counts(body)
    firsts = np.concatenate(([0], ends + 1))[:counts.size]
    comment = chars[np.minimum(firsts, chars.size - 1)] == ord("*")
    for k in np.flatnonzero(~np.isin(counts, (0, *fields)) & ~comment).tolist():
        line = body[firsts[k]:ends[k] if k < ends.size else len(body)]
        if len(_before_comment(line.split())) not in fields:
            return k, line
    return None


def _field_counts(body: bytes) -> tuple[Any, Any, Any]:
    """(bytes, fields on each line, line-end offsets) of a non-empty body, in numpy: a
    line's fields are the starts of non-blank runs before its line end."""
    import numpy as np

    chars = np.frombuffer(body, dtype=np.uint8)
    blank = chars <= ord(" ")  # space, tab, CR, LF
    starts = np.flatnonzero(~blank[1:] & blank[:-1]) + 1
    if not blank[0]:
        starts = np.concatenate(([0], starts))
    ends = np.flatnonzero(chars == ord("\n"))
    return chars, np.bincount(np.searchsorted(ends, starts), minlength=ends.size + 1), ends


def _before_comment(words: list[bytes]) -> list[bytes]:
    """A data line's fields before a trailing comment: a later field opening with `*` or
    `$` (SCIP's reader reads ` G R1 *note` as ` G R1`)."""
    return next((words[:at] for at in range(1, len(words)) if words[at][:1] in (b"*", b"$")),
                words)


def _data_lines(body: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """(index, fields) of each line of a section's body that is no comment, a trailing
    comment (`$ note`, `* note`: `_before_comment`) left out, as `section_lines` reads
    them."""
    for k, line in enumerate(body.splitlines()):
        words = line.split()
        if words and not words[0].startswith((b"*", b"$")):
            yield k, _before_comment(words)


_DOLLAR_ROW = re.compile(rb"^[ \t]+\S+[ \t]+(\$\S*)", re.M)
_DOLLAR_COLUMN = re.compile(rb"^[ \t]+(\$\S*)", re.M)


def _refuse_dollar_names(path: Path, text: bytes) -> None:
    """An InputError for a row or column whose name starts with `$`: SCIP's MPS reader
    takes such a field for a comment, and crashed the process on a row named `$c2` (HiGHS
    read it)."""
    if b"$" not in text:
        return
    for name, pattern in ((b"ROWS", _DOLLAR_ROW), (b"COLUMNS", _DOLLAR_COLUMN)):
        body = section_body(text, name)
        found = pattern.search(body) if b"$" in body else None
        if found is not None:
            raise InputError(f"{path.name}: the {name.decode().lower()[:-1]} name "
                             f"{found.group(1).decode(errors='replace')!r} starts with $, which "
                             "SCIP's MPS reader takes for a comment (it crashed on such a "
                             "row); rename it")


def _set_name(name: bytes | None) -> str:
    """A set's name as an error gives it."""
    return "lines without a set name" if name is None else repr(name.decode(errors="replace"))


def _plain_section(name: bytes, body: bytes) -> bool:
    """Whether an RHS, RANGES or BOUNDS section's data lines (`body`) all take the common
    form, with one set name and plain numbers: `set row value` on every line (or `set row
    value row value`, the last line maybe shorter), `TYPE set column value` on every line;
    checked on the words of a chunk of lines at a time in bulk (a line at a time took 1.4 s
    on 750,000 lines, against 3.5 s for HiGHS to read and solve the file; a whole section's
    words at once held about ten times its size)."""
    if b"*" in body:  # comment lines left out in bulk (any one sent every line the slow way)
        body = _COMMENT_LINE.sub(b"", b"\n" + body)[1:]
    if b"$" in body or b"*" in body:  # comments, or names holding them: line by line
        return False
    sets: set[bytes] = set()
    for start, stop in line_chunks(body, 0, len(body), PLAIN_CHUNK):
        chunk_sets = _plain_chunk(name, body[start:stop])
        if chunk_sets is None:
            return False
        sets |= chunk_sets
        if len(sets) > 1:
            return False
    return True


def _plain_chunk(name: bytes, body: bytes) -> set[bytes] | None:
    """The set names of `_plain_section`'s lines `body` (whole lines, the last maybe one
    pair shorter), or None where they are not in the common form. Each line's fields are
    counted (`_field_counts`): a count over the whole chunk let a 2-field line and a 4-field
    one pass as two of 3."""
    words = body.split()
    if not words:
        return set()
    counts = _field_counts(body)[1]
    counts = counts[counts > 0]  # blank lines left out
    if name == b"BOUNDS":
        if not (counts == 4).all() or not set(words[0::4]) <= _VALUED_BOUNDS:
            return None
        return _one_set(set(words[1::4]), words[3::4])
    if (counts == 3).all():
        return _one_set(set(words[0::3]), words[2::3])
    if (counts[:-1] == 5).all() and counts[-1] in (3, 5):
        return _one_set(set(words[0::5]), words[2::5] + words[4::5])
    return None


def _one_set(sets: set[bytes], values: list[bytes]) -> set[bytes] | None:
    """`sets` where it is one set name and `values` are plain numbers, else None."""
    return sets if len(sets) == 1 and _plain_numbers(values) else None


def _plain_numbers(values: list[bytes]) -> bool:
    """Whether every word of `values` is a number as MPS writes one (`_MPS_NUMBER`): where
    they hold digits, points, signs and exponents alone (bytes checked as one numpy array),
    numpy's float parse decides, a tenth of the regular expression's time; else (`Inf`, a
    word of more than 32 bytes) the expression, on each distinct word once."""
    import numpy as np

    if max(map(len, values)) <= 32:
        array = np.array(values)  # fixed-width bytes, zero-padded
        if _NUMBER_BYTES[np.frombuffer(array.tobytes(), dtype=np.uint8)].all():
            try:
                array.astype(np.float64)
            except ValueError:
                return False
            return True
    return _MPS_NUMBERS.fullmatch(b"\n".join(set(values))) is not None


def _number_bytes() -> Any:
    """A lookup table of the bytes a plain number is made of (and numpy's padding, 0)."""
    import numpy as np

    table = np.zeros(256, dtype=bool)
    table[list(b"0123456789.eE+-")] = True
    table[0] = True
    return table


_NUMBER_BYTES = _number_bytes()


def _section_span(text: bytes, name: bytes) -> tuple[int, int]:
    """Where MPS section `name`'s header line starts and where the section ends (the next
    line starting in column one, as section headers do); (len, len) without one."""
    start = header_at(text, name)
    found = _NEXT_HEADER.search(text, start + 1) if start < len(text) else None
    return start + (start < len(text)), found.start() if found else len(text)


def section_body(text: bytes, name: bytes) -> bytes:
    """The data lines of MPS section `name`, its header line left out (empty without one)."""
    start, stop = _section_span(text, name)
    return text[start:stop].partition(b"\n")[2]


def section_lines(text: bytes, name: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, fields) of each data line of MPS section `name` (none without one);
    comment lines (`*`) and `$` comments left out."""
    start, stop = _section_span(text, name)
    head = text.find(b"\n", start, stop)
    if head < 0:
        return
    first = text.count(b"\n", 0, start) + 1  # the header's line
    for k, words in _data_lines(text[head + 1:stop]):
        yield first + k + 1, words


Entries = list[tuple[bytes, bytes]]  # (row or column, value) pairs of one MPS line


def _pair_fields(path: Path, number: int, words: list[bytes], name: bytes
                 ) -> tuple[bytes | None, Entries]:
    """An RHS or RANGES line's set name (None where it has none) and (row, value) pairs:
    `[set] row value [row value]`; an InputError for a line of other fields."""
    if len(words) in (3, 5):
        return words[0], list(zip(words[1::2], words[2::2], strict=True))
    if len(words) in (2, 4) and _MPS_NUMBER.fullmatch(words[1]):
        return None, list(zip(words[0::2], words[1::2], strict=True))
    raise InputError(f"{path.name}:{number}: the {name.decode()} line "
                     f"{b' '.join(words).decode(errors='replace')!r} is no `[set] row value "
                     "[row value]` (the solvers' readers take it apart differently)")


def _bound_fields(path: Path, number: int, words: list[bytes]
                  ) -> tuple[bytes | None, Entries]:
    """A BOUNDS line's set name and (column, value): `TYPE set column [value]` (a line
    without a set name is `check_scip_read`'s to refuse; here its set is None)."""
    kind = words[0].upper()
    named = len(words) == 4 or kind in _BARE_BOUNDS and len(words) == 3 and (
        kind in VALUELESS_BOUNDS or _MPS_NUMBER.fullmatch(words[2]) is None)
    if kind in _VALUED_BOUNDS or kind in _BARE_BOUNDS:
        bound_set, *rest = words[1:] if named else [None, *words[1:]]
        return bound_set, [(rest[0], value) for value in rest[1:2]]
    raise InputError(f"{path.name}:{number}: {words[0].decode(errors='replace')!r} is no "
                     "BOUNDS type (UP, LO, FX, FR, MI, PL, BV, LI, UI, SC, SI)")


def bounds_section(text: bytes) -> bytes:
    """The BOUNDS section of an MPS file's text (from its header line to the next section:
    QUADOBJ's `UP UP 2`, of a column named UP, is no bound line), empty where none."""
    start = header_at(text, b"BOUNDS")
    end = SECTION_HEAD.search(text, start + 1)
    return text[start:end.start() if end else len(text)]


def float_or_none(word: bytes) -> float | None:
    """`word` as a number (inf and its spellings too), None where it is none."""
    try:
        return float(word)
    except ValueError:
        return None


def header_at(text: bytes, name: bytes) -> int:
    """Where MPS section `name`'s header line starts (found by plain search, quick on large
    files), or len(text) where there is none."""
    at = text.find(b"\n" + name)
    while at >= 0 and text[at + 1 + len(name):at + 2 + len(name)] not in b" \t\r\n":
        at = text.find(b"\n" + name, at + 1)
    return at if at >= 0 else len(text)
