"""What an MPS or LP file says, held against what SCIP's or HiGHS's reader made of it.

The two readers differ on files they both accept (a duplicate entry, a constant on a row's
left, an objective sense spelled one way, an MPS name past 255 bytes), and a misread file
is then solved as if it were the file: these checks turn each known misreading into an
InputError that names it."""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError
from coplug.plugins.interrupts import capture_output
from coplug.plugins.modeldata import SOLVER_INFINITY

SCIP_NAME_LIMIT = 255  # SCIP's MPS reader cuts a name there and reads the rest as a new name
# SCIP's LP reader reads longer names whole, but one of 65,536 bytes or more overran its
# buffer (glibc: "free(): invalid next size").
SCIP_LP_NAME_LIMIT = 65535
_MPS_SECTION = re.compile(rb"^(ROWS|COLUMNS|ENDATA)[ \t]*\r?$", re.M)
_LONG_WORD = re.compile(rb"\S{%d,}" % (SCIP_NAME_LIMIT + 1))
# SCIP's LP reader ends a name at white space and - + : < > = [ ] * ^ only ('/' is a name's)
_LONG_LP_NAME = re.compile(rb"[^\s+\-*^<>=:\[\]]{%d,}" % (SCIP_LP_NAME_LIMIT + 1))
_MPS_SENSE = re.compile(rb"^OBJSENSE\b[ \t]*(?:\r?\n[ \t]+)?(\w*)", re.M | re.I)
_LP_FIRST_WORD = re.compile(rb"\A(?:[ \t]*(?:\\[^\n]*)?\r?\n)*[ \t]*([A-Za-z]+)")
_INFINITE_BOUND = re.compile(rb"(?i)[ \t][-+]?inf(?:inity)?[ \t]*\r?$", re.M)
# The columns SCIP's LP and MPS readers add for a quadratic objective (its epigraph).
SCIP_READER_COLUMNS = frozenset({"quadobjvar", "qmatrixvar"})
# A User Cuts header, a comment or the first cut may follow on its line
_USER_CUTS = re.compile(rb"^[ \t]*user[ \t]*cuts?\b", re.M | re.I)
_SCIP_READER_NAMES = re.compile(rb"(?<![\w.])(%s)(?![\w.])" % "|".join(
    sorted(SCIP_READER_COLUMNS)).encode())
_LP_FIRST_TOKEN = re.compile(rb"\A(?:[ \t]*(?:\\[^\n]*)?\r?\n)*[ \t]*([^\s\\]+)")
_LP_MAXIMIZE = {b"max", b"maximize", b"maximise", b"maximum"}
_LP_MINIMIZE = {b"min", b"minimize", b"minimise", b"minimum"}
_SCIP_LP_SENSES = {b"min", b"minimize", b"minimum", b"max", b"maximize", b"maximum"}
_FREE_ROW = re.compile(rb"^[ \t]*N[ \t]+(\S+)[ \t]*\r?$", re.M)
_SECTION_HEAD = re.compile(rb"\n(?:RANGES|BOUNDS|SOS|ENDATA|QUADOBJ|QMATRIX|QSECTION|QCMATRIX|"
                           rb"INDICATORS)\b")
_HIGHS_IGNORED = re.compile(r"(?:WARNING: )?([^\n]*has duplicate [^\n]*)")
_BARE_CR = re.compile(rb"\r(?!\n)(?!\Z)")  # one ending the file ends its last line
_HIGHS_UNDEFINED = re.compile(r'((?:Row|Column) name "[^\n]*" in \w+ section is not defined)')
_HIGHS_SECTION_IGNORED = re.compile(
    r"(\w+)\s+section entries contain\s+(\d+) with (row|col) not in (\w+)\s+section: ignored")
# SCIP's MPS reader says so only at display/verblevel 5 (for COLUMNS entries; RHS and RANGES
# ones at the default level, which coplug keeps quiet).
SCIP_VERBLEVEL_FULL = 5
_SCIP_IGNORED = re.compile(
    r'^Warning line (\d+): (Column|RHS|Range) "(.*)" for row "(.*)" ignored$', re.M)
_SCIP_FREE_ROW = re.compile(r'^Warning line \d+: row "(.*)" for objective function "N" ignored$',
                            re.M)
_SCIP_SECTION = {"Column": "COLUMNS", "RHS": "RHS", "Range": "RANGES"}
_SPACED_POWER = re.compile(rb"[ \t]+\^[ \t]*|\^[ \t]+")
# A ROWS (USERCUTS, LAZYCONS) line `type name` indented four blanks or more, `$` comment too
_INDENTED_ROW = re.compile(rb"^[ \t]{4,}([^\s$]+)[ \t]+([^\s$]+)[ \t]*(?:\$[^\r\n]*)?(\r?)$", re.M)
_LONG_ROW_TYPE = re.compile(rb"^[ \t]+([^\s$]{2,})[ \t]+[^\s$]", re.M)
_NEGATIVE_UP = re.compile(rb"\n[ \t]*U[PI][ \t]+\S+[ \t]+(?:\S+[ \t]+)?-")
# A BOUNDS line with no bound-set name: `TYPE COLUMN VALUE`, or `TYPE COLUMN` for the types
# without a value (a `$` comment may follow).
_UNNAMED_BOUND = re.compile(
    rb"^[ \t]*(?:(?:LO|UP|FX|LI|UI)[ \t]+\S+[ \t]+[-+.0-9][^ \t\r\n]*|(?:MI|PL|FR|BV)[ \t]+\S+)"
    rb"[ \t]*(?:\$[^\r\n]*)?\r?$", re.M)
# What each BOUNDS type sets (lower, upper): "value" the line's value, None untouched.
_BOUND_EFFECT: dict[bytes, tuple[Any, Any]] = {
    b"UP": (None, "value"), b"UI": (None, "value"), b"LO": ("value", None),
    b"LI": ("value", None), b"FX": ("value", "value"), b"FR": (-math.inf, math.inf),
    b"MI": (-math.inf, None), b"PL": (None, math.inf), b"BV": (0.0, 1.0)}
# A BOUNDS line's type and up to three fields after it (b"" for none): `_column_and_value`
_BOUND_LINE = re.compile(rb"^[ \t]*([A-Za-z]{2})[ \t]+([^\s$]+)(?:[ \t]+([^\s$]+))?"
                         rb"(?:[ \t]+([^\s$]+))?", re.M)
_SETS_UPPER = {b"UP", b"UI", b"FX", b"BV"}
_SETS_LOWER = {b"LO", b"LI", b"MI"}


def checked_text(path: Path) -> bytes:
    """The file's bytes, a .gz file's unpacked (the checks read them once), after the checks
    that an .lp file is no MPS file (`refuse_misnamed`) and of what the two readers take
    differently in an MPS file's RHS, RANGES and BOUNDS lines (`check_mps_data`) or in an
    LP file's Binaries (`check_lp_binaries`)."""
    text = file_text(path)
    refuse_misnamed(path, text)
    _refuse_encoding(path, text)
    if _is_lp(path):
        if _LP_CONTENT.search(text) and not _LP_END.search(text):  # empty: no variables
            raise InputError(f"{path.name} has no End line: an LP file ends with one, and one "
                             "cut short was solved by SCIP's reader as the smaller model it "
                             "read (its bounds or integers lost; HiGHS's refuses it)")
        _refuse_early_end(path, text)
        sections = _lp_sections(text)
        check_lp_binaries(path, sections)
        _refuse_stray_bound_words(path, sections)
    else:
        check_mps_data(path, text)
    return text


def _refuse_early_end(path: Path, text: bytes) -> None:
    """An InputError for a word End (no `End:` row name) with more of the model after it:
    SCIP's LP reader stops there, wherever on a line it stands (`c2: x - y >= -2 end` lost
    every later row and bound: 'unbounded' for 2), and HiGHS's reads such files otherwise."""
    lower = text.lower()  # found by plain search: a regex took a third of SCIP's read
    at = lower.find(b"end")
    while at >= 0:
        start, end = at, at + 3
        at = lower.find(b"end", end)
        if not (_lp_word_edge(lower, start - 1) and _lp_word_edge(lower, end)) \
                or lower[end:end + 64].lstrip(b" \t").startswith(b":"):
            continue  # part of a name, or a row named end
        line_start = text.rfind(b"\n", 0, start) + 1
        if b"\\" in text[line_start:start]:
            continue  # in a comment
        rest = _LP_COMMENT.sub(b"", text[end:])
        if rest.strip():
            number = text.count(b"\n", 0, start) + 1
            raise InputError(f"{path.name}:{number}: the word End ends the model for SCIP's "
                             "LP reader, but more of the model follows it (SCIP's reader "
                             "drops it, HiGHS's reads the word otherwise): keep End for the "
                             "last line")
        return


def _lp_word_edge(text: bytes, at: int) -> bool:
    """Whether a word ends before `at` + 1 in an LP file as SCIP's reader delimits words
    (white space, + - * ^ < > = : [ ], or the file's edge)."""
    return at < 0 or at >= len(text) or text[at] in _LP_DELIMITERS


def _spells_past_infinity(text: bytes) -> bool:
    """Whether the text may write a number at or past 1e20: an exponent of two digits or
    more, or 20 digits in a row (read with the digits made one, by plain search: a regex
    took as long as SCIP's read of the file). False triggers only cost a check."""
    digits = text.translate(_DIGITS_AS_ZERO)
    return any(digits.find(spelling) >= 0 for spelling in _LONG_EXPONENTS)


def _refuse_encoding(path: Path, text: bytes) -> None:
    """InputErrors for bytes the readers take other than as text lines: a UTF-8 byte-order
    mark (SCIP's LP reader dropped the objective, HiGHS's MPS reader the first section: an
    OBJSENSE MAX minimized), NUL bytes (a UTF-16 file) and lines ended by a bare carriage
    return (each reader saw one line)."""
    if text.startswith(b"\xef\xbb\xbf"):
        raise InputError(f"{path.name} starts with a byte-order mark (UTF-8 BOM), which the "
                         "readers take for part of its first line (HiGHS's MPS reader then "
                         "drops that section); save it without one")
    if b"\0" in text:
        raise InputError(f"{path.name} holds NUL bytes: UTF-16 or binary, not a text file; "
                         "save it as UTF-8")
    bare = _BARE_CR.search(text) if b"\r" in text else None
    if bare is not None:  # one such line end made both readers drop a bound: -8 for -7
        line = text.count(b"\n", 0, bare.start()) + 1
        raise InputError(f"{path.name}: line {line} ends with a bare carriage return (classic "
                         "Mac OS), which the readers do not take for a line end; save the "
                         "file with \\n or \\r\\n line ends")


def native_name(path: Path) -> str:
    """`path` as the solvers' C readers must get it: its bytes on disk as UTF-8 text (in a
    non-UTF-8 locale Python holds a UTF-8 name with surrogates, which highspy refused with
    a TypeError); a name that is no UTF-8 is an InputError."""
    try:
        return os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"the file name {str(path)!r} is not UTF-8, which the solvers take "
                         "file names in: rename the file") from None


@contextmanager
def names_in_utf8(path: Path) -> Iterator[None]:
    """Name a row or column name that is not UTF-8 (InputError): both solvers hand names
    back as UTF-8, and a Latin-1 one failed inside PySCIPOpt's and highspy's decoding. Only
    names they decode are refused: a Latin-1 NAME line or comment reads as before."""
    try:
        yield
    except UnicodeDecodeError as exc:
        name = bytes(exc.object)[:80] if isinstance(exc.object, (bytes, bytearray)) else b""
        raise InputError(f"{path.name}: the name {name!r} is not UTF-8 text, which both "
                         "solvers read names as; save the file as UTF-8") from None


# A number as MPS files write it (what both readers take alike): no Fortran D exponent
# (SCIP read 1D2 as 1, HiGHS as 100), no digit groups, no trailing letters (both read
# `2.0x` as 2 and `abc` as 0).
_MPS_NUMBER = re.compile(rb"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
                         rb"|(?i:inf(?:inity)?))")
_MPS_NUMBERS = re.compile(rb"(?:%s)(?:\n(?:%s))*" % (_MPS_NUMBER.pattern, _MPS_NUMBER.pattern))
_NEXT_HEADER = re.compile(rb"\n[^ \t\r\n*]")
# BOUNDS types with a value, and those whose value is optional or absent.
_VALUED_BOUNDS = {b"UP", b"LO", b"FX", b"LI", b"UI"}
_BARE_BOUNDS = {b"FR", b"MI", b"PL", b"BV", b"SC", b"SI"}
_VALUELESS_BOUNDS = {b"FR", b"MI", b"PL", b"BV"}  # `MI BND 7`: column 7 of set BND


def check_mps_data(path: Path, text: bytes) -> None:
    """InputErrors for the RHS, RANGES and BOUNDS lines SCIP's and HiGHS's readers take
    apart: a value that is no plain number, a line whose fields are no (row, value) pairs
    (` RHS c1 4 c2`: SCIP read 0 for c1, HiGHS 4), and a second RHS, RANGES or BOUNDS set
    (SCIP reads the first set only, HiGHS every set: 40 against 15). COLUMNS values are not
    read here: a Python pass over them cost a third of the readers' own time."""
    _refuse_dollar_names(path, text)
    _refuse_odd_fields(path, text)
    _refuse_section_order(path, text)
    if _NEGATIVE_UP.search(_bounds_section(text)):
        _refuse_negative_upper_alone(path, text)
    for name in (b"RHS", b"RANGES", b"BOUNDS"):
        if _plain_section(name, _section_body(text, name)):
            continue  # the common form, checked in bulk: the lines below name a fault
        sets: dict[bytes | None, int] = {}
        for number, words in _section_lines(text, name):
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
        odd = _odd_line(text[head + 1:stop], fields)
        if odd is not None:
            index, line = odd
            number = text.count(b"\n", 0, head + 1) + index + 1
            raise InputError(f"{path.name}:{number}: the {name.decode()} line "
                             f"{line.strip().decode(errors='replace')!r} is no {form} (the "
                             "solvers' readers take it apart differently, SCIP's crashed on "
                             "a row without a name; names with spaces are not read alike)")
    start, stop = _header_at(text, b"ROWS"), _header_at(text, b"COLUMNS")
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
    for number, words in _section_lines(text, b"BOUNDS"):
        kind = words[0].upper()
        _, entries = _bound_fields(path, number, words)
        column = entries[0][0] if entries else words[-1]
        if kind in (b"UP", b"UI") and entries:
            last_upper[column] = (_float_or_none(entries[0][1]), words)
        elif _BOUND_EFFECT.get(kind, (None, None))[0] is not None:  # it sets a lower bound
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
    ranges, rhs = _header_at(text, b"RANGES"), _header_at(text, b"RHS")
    if ranges < rhs < len(text):
        number = text.count(b"\n", 0, ranges) + 2
        raise InputError(f"{path.name}:{number}: RANGES comes before RHS (HiGHS's reader "
                         "applied the ranges to right-hand sides of 0, SCIP's refuses the "
                         "order): put RHS first")
    rows = _header_at(text, b"ROWS")
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


def _odd_line(body: bytes, fields: tuple[int, ...]) -> tuple[int, bytes] | None:
    """(index, text) of the first line of `body` whose count of fields is not in `fields`
    (comment lines left out), else None. Counted in numpy: a Python pass over COLUMNS cost
    40% of SCIP's reading time, this one about 15%."""
    import numpy as np

    if b"$" in body:  # `$` comments: the plain line reader strips them
        lines = body.splitlines()
        return next(((k, lines[k]) for k, words in _data_lines(body)
                     if len(words) not in fields), None)
    chars = np.frombuffer(body, dtype=np.uint8)
    if chars.size == 0:
        return None
    blank = chars <= ord(" ")  # space, tab, CR, LF
    starts = np.flatnonzero(~blank[1:] & blank[:-1]) + 1
    if not blank[0]:
        starts = np.concatenate(([0], starts))
    ends = np.flatnonzero(chars == ord("\n"))
    counts = np.bincount(np.searchsorted(ends, starts), minlength=ends.size + 1)
    firsts = np.concatenate(([0], ends + 1))[:counts.size]
    comment = chars[np.minimum(firsts, chars.size - 1)] == ord("*")
    for k in np.flatnonzero(~np.isin(counts, (0, *fields)) & ~comment).tolist():
        line = body[firsts[k]:ends[k] if k < ends.size else len(body)]
        if len(_before_comment(line.split())) not in fields:
            return k, line
    return None


def _before_comment(words: list[bytes]) -> list[bytes]:
    """A data line's fields before a trailing comment: a later field opening with `*` or
    `$` (SCIP's reader reads ` G R1 *note` as ` G R1`)."""
    return next((words[:at] for at in range(1, len(words)) if words[at][:1] in (b"*", b"$")),
                words)


def _data_lines(body: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """(index, fields) of each line of a section's body that is no comment, a trailing
    comment (`$ note`, `* note`: `_before_comment`) left out, as `_section_lines` reads
    them."""
    for k, line in enumerate(body.splitlines()):
        words = line.split()
        if words and not words[0].startswith((b"*", b"$")):
            yield k, _before_comment(words)


# What SCIP's LP reader ends a word at, as byte values
_LP_DELIMITERS = frozenset(b" \t\r\n\f\v+-*^<>=:[]")
_LP_COMMENT = re.compile(rb"\\[^\n]*")
_LP_SECTION = re.compile(rb"^[ \t]*(subject[ \t]+to|such[ \t]+that|st|s\.t\.|bounds?|"
                         rb"generals?|gen|integers?|binary|binaries|bin|semi-continuous|"
                         rb"semis?|sos|end)(?=[ \t]|\r?$)", re.M | re.I)  # names may follow
_LP_CONTENT = re.compile(rb"^[ \t]*[^\s\\]", re.M)  # a line that is no comment
_LP_END = re.compile(rb"^[ \t]*end[ \t]*(\\.*)?\r?$", re.M | re.I)  # a comment may follow
_LP_TOKEN = re.compile(rb"<=|>=|=<|=>|<|>|=|[^\s<>=]+")
_LP_VALUE = re.compile(rb"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|"
                       rb"[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)")
# An MPS bound with a value spelled inf or infinity (LO x inf: a bound no point meets)
_INFINITE_WORD = re.compile(rb"^[ \t]*(?:FX|LO|LI|UP|UI)[ \t]+\S+[ \t]+\S+[ \t]+[-+]?inf",
                            re.M | re.I)
_LP_EQUALS = rb"(?<![<>])=(?![<>])"
_LP_INFINITE_SIDE = re.compile(
    rb"(?:>=|=>|>|%(eq)s)[ \t]*\+?[ \t]*inf|(?:<=|=<|<|%(eq)s)[ \t]*-[ \t]*inf"
    rb"|(?<![-\w.])\+?[ \t]*inf(?:inity)?[ \t]*(?:<=|=<|<|%(eq)s)"
    rb"|-[ \t]*inf(?:inity)?[ \t]*(?:>=|=>|>|%(eq)s)" % {b"eq": _LP_EQUALS})
_SIDE_INFINITE_WORD = re.compile(rb"[ \t][-+]?inf(?:inity)?\b", re.I)
# A BV line: after one SCIP's reader holds a column binary, as it holds integer columns
# (MARKER ones) with bounds within [0, 1]
_BINARY_HELD = re.compile(rb"^[ \t]*BV[ \t]", re.M | re.I)
# `_spells_past_infinity`: every digit read as 0, then these spellings looked for
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_EXPONENTS = (b"e00", b"E00", b"e+00", b"E+00", b"0" * 20)
# One bound statement a line (`a <= x <= b`, `x >= a`, `a >= x`, `x = v`, `x free`), or a
# blank or comment line: `_refuse_stray_bound_words` reads other lines token by token.
_BOUND_VALUE = rb"[-+]?[ \t]*(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf(?:inity)?)"
_BOUND_SENSE = rb"(?:<=|>=|=<|=>|<|>|=)"
_BOUND_NAME = rb"[^\s<>=:\\0-9.+\-][^\s<>=:\\]*"
_PLAIN_BOUND_LINE = re.compile(
    rb"(?i)[ \t]*(?:(?:%(v)s[ \t]*%(s)s[ \t]*%(n)s(?:[ \t]*%(s)s[ \t]*%(v)s)?"
    rb"|%(n)s[ \t]*%(s)s[ \t]*%(v)s|%(n)s[ \t]+free)[ \t]*)?(?:\\.*)?\r?"
    % {b"v": _BOUND_VALUE, b"s": _BOUND_SENSE, b"n": _BOUND_NAME})
_LESS = {b"<=", b"=<", b"<"}
_GREATER = {b">=", b"=>", b">"}
_LP_SENSES = _LESS | _GREATER | {b"="}


def check_lp_binaries(path: Path, sections: dict[str, list[bytes]]) -> None:
    """An InputError for an LP file's column listed under Binaries that its Bounds bound
    outside [0, 1], or that Generals lists too: SCIP's reader keeps it within [0, 1],
    HiGHS's keeps the bounds on an integer column (`y <= 10`: 4 against 4.5). Bounds within
    [0, 1] both take alike (Pyomo's writer bounds each binary `0 <= x <= 1`); `sections`
    as `_lp_sections` reads them."""
    binaries = {word for line in sections.get("binary", []) for word in line.split()}
    if not binaries:
        return
    generals = {word for line in sections.get("general", []) for word in line.split()}
    both = binaries & generals
    if both:
        name = min(both).decode(errors="replace")
        raise InputError(f"{path.name}: {name!r} is listed under both Generals and Binaries "
                         "(SCIP's reader makes it 0/1, HiGHS's an integer column with its "
                         "bounds); list it once")
    for line in sections.get("bounds", []):
        tokens = _LP_TOKEN.findall(line.split(b"\\", 1)[0])
        named = [t for t in tokens if t in binaries]
        if named and _binary_bound_broken(tokens, named[0]):
            raise InputError(f"{path.name}: the bound {line.strip().decode(errors='replace')!r} "
                             f"of {named[0].decode(errors='replace')!r}, which Binaries lists, "
                             "lies outside [0, 1]: SCIP's reader keeps the column within [0, 1], "
                             "HiGHS's keeps the bound on an integer column; drop one of the two")


def _lp_sections(text: bytes) -> dict[str, list[bytes]]:
    """An LP file's lines by section ("bounds", "general", "binary"; comments kept), each
    section's name found at the start of a line, the rest of that line its first (`Binary
    y` on one line: both readers take y as listed, and the check missed it)."""
    kinds = {b"bound": "bounds", b"gen": "general", b"integer": "general", b"bin": "binary"}
    found: dict[str, list[bytes]] = {}
    heads = list(_LP_SECTION.finditer(text))
    if not heads:
        return found
    for head, after in zip(heads, [*heads[1:], None], strict=True):
        word = head.group(1).lower()
        kind = next((name for start, name in kinds.items() if word.startswith(start)), None)
        if kind is not None:
            body = text[head.end():after.start() if after else len(text)]
            found.setdefault(kind, []).extend(body.splitlines())
    return found


def _binary_bound_broken(tokens: list[bytes], name: bytes) -> bool:
    """Whether a Bounds line (`tokens`: `a <= x <= b`, `x >= a`, `b >= x`, `x = v`, `x
    free`) bounds `name` outside [0, 1], where the readers part: SCIP's keeps a binary in
    [0, 1] (and within it takes the bound: `x <= 0`, `1 <= x <= 1` as PySCIPOpt writes a
    fixed binary), HiGHS's keeps the bound (`x >= -1`: [-1, 1])."""
    k = tokens.index(name)
    before, after = tokens[max(k - 2, 0):k], tokens[k + 1:k + 3]
    if after[:1] and after[0].lower() == b"free":
        return True
    values = [before[0]] if len(before) == 2 else []
    if len(after) == 2:
        values.append(after[1])
    for value in values:
        try:
            number = float(value)
        except ValueError:
            return True
        if not 0.0 <= number <= 1.0 and number != math.inf:  # HiGHS keeps a -inf lower
            return True
    return False


_DOLLAR_ROW = re.compile(rb"^[ \t]+\S+[ \t]+(\$\S*)", re.M)
_DOLLAR_COLUMN = re.compile(rb"^[ \t]+(\$\S*)", re.M)


def _refuse_dollar_names(path: Path, text: bytes) -> None:
    """An InputError for a row or column whose name starts with `$`: SCIP's MPS reader
    takes such a field for a comment, and crashed the process on a row named `$c2` (HiGHS
    read it)."""
    if b"$" not in text:
        return
    for name, pattern in ((b"ROWS", _DOLLAR_ROW), (b"COLUMNS", _DOLLAR_COLUMN)):
        body = _section_body(text, name)
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
    checked on the section's words in bulk (a line at a time took 1.4 s on 750,000 lines,
    against 3.5 s for HiGHS to read and solve the file)."""
    if b"$" in body or b"*" in body:  # comments, or names holding them: line by line
        return False
    words = body.split()
    lines = body.count(b"\n") + (not body.endswith(b"\n"))
    if not words:
        return True
    if name == b"BOUNDS":
        if len(words) != 4 * lines or not set(words[0::4]) <= _VALUED_BOUNDS:
            return False
        sets, values = set(words[1::4]), words[3::4]
    elif len(words) == 3 * lines:
        sets, values = set(words[0::3]), words[2::3]
    elif len(words) in (5 * lines, 5 * lines - 2):
        sets, values = set(words[0::5]), words[2::5] + words[4::5]
    else:
        return False
    return len(sets) == 1 and _plain_numbers(values)


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
    start = _header_at(text, name)
    found = _NEXT_HEADER.search(text, start + 1) if start < len(text) else None
    return start + (start < len(text)), found.start() if found else len(text)


def _section_body(text: bytes, name: bytes) -> bytes:
    """The data lines of MPS section `name`, its header line left out (empty without one)."""
    start, stop = _section_span(text, name)
    return text[start:stop].partition(b"\n")[2]


def _section_lines(text: bytes, name: bytes) -> Iterator[tuple[int, list[bytes]]]:
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
        kind in _VALUELESS_BOUNDS or _MPS_NUMBER.fullmatch(words[2]) is None)
    if kind in _VALUED_BOUNDS or kind in _BARE_BOUNDS:
        bound_set, *rest = words[1:] if named else [None, *words[1:]]
        return bound_set, [(rest[0], value) for value in rest[1:2]]
    raise InputError(f"{path.name}:{number}: {words[0].decode(errors='replace')!r} is no "
                     "BOUNDS type (UP, LO, FX, FR, MI, PL, BV, LI, UI, SC, SI)")


GZ_CHUNK = 1 << 24  # bytes unpacked at a time, so a budget is checked as a file unpacks


def file_text(path: Path) -> bytes:
    """The file's bytes, a .gz file's unpacked within the memory budget (`_gunzip`)."""
    try:
        return _gunzip(path) if path.name.endswith(".gz") else path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise InputError(f"cannot read {path.name}: {exc}") from exc
    except MemoryError:
        raise InputError(f"cannot read {path.name}: it does not fit in memory") from None


def _gunzip(path: Path) -> bytes:
    """A .gz file unpacked chunk by chunk, refused once it passes half the memory available
    (the solver reads the file too): a 1 MB file packing 1 GiB took 2.2 GB before any check,
    and a 10 MB one would have had the OS kill the process without a message."""
    from coplug.formulations.checks import available_memory  # imports coplug.plugins

    budget = available_memory()
    chunks, size = [], 0
    with gzip.open(path, "rb") as packed:
        while chunk := packed.read(GZ_CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            if budget is not None and 2 * size > budget:
                raise InputError(f"{path.name} unpacks to more than {size / 2**30:.2f} GiB, "
                                 f"over half the {budget / 2**30:.2f} GiB of memory available "
                                 "(the solver reads the file too)")
    return b"".join(chunks)


def refuse_misnamed(path: Path, text: bytes) -> None:
    """An InputError for an MPS file named .lp: SCIP's LP reader skipped to its BOUNDS line,
    read the words after it as variables and called the model optimal at 0."""
    if _is_lp(path) and b"ENDATA" in text and _mps_sections(text):
        raise InputError(f"{path.name} has MPS sections (ROWS, COLUMNS) but an .lp name: "
                         "name it .mps")


def _mps_sections(text: bytes) -> bool:
    """Whether `text` has MPS's ROWS, COLUMNS and ENDATA lines in that order (an LP file
    may have variables named ROWS and COLUMNS, each alone on its line under Generals)."""
    first: dict[bytes, int] = {}
    for found in _MPS_SECTION.finditer(text):
        first.setdefault(found.group(1), found.start())
    return len(first) == 3 and first[b"ROWS"] < first[b"COLUMNS"] < first[b"ENDATA"]


def declared_maximize(path: Path, text: bytes) -> bool | None:
    """Whether the file's own words say maximize (True) or minimize (False); None where it
    says neither (MPS minimizes by default, so an MPS file without OBJSENSE says False)."""
    if _is_lp(path):
        found = _LP_FIRST_WORD.match(text)
        word = found.group(1).lower() if found else b""
        return True if word in _LP_MAXIMIZE else False if word in _LP_MINIMIZE else None
    found = _MPS_SENSE.search(text, 0, _header_at(text, b"COLUMNS"))
    if found is None:  # a section after BOUNDS (HiGHS read its MAX, and was called wrong)
        late = _header_at(text, b"OBJSENSE")
        found = _MPS_SENSE.match(text, late + 1) if late < len(text) else None
    if found is None:
        return False
    word = found.group(1).upper()
    return True if word.startswith(b"MAX") else False if word.startswith(b"MIN") else None


@contextmanager
def scip_readable(path: Path, text: bytes) -> Iterator[Path]:
    """`path`, or a temporary copy of the file in a form SCIP reads as written
    (`_scip_text`)."""
    rewritten = _scip_text(path, text)
    if rewritten is None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="coplug-read-") as folder:
        copy = Path(folder) / path.name.removesuffix(".gz")
        copy.write_bytes(rewritten)
        yield copy


def _scip_text(path: Path, text: bytes) -> bytes | None:
    """The file's text rewritten where SCIP's readers misread it, else None: an LP file's
    `x ^ 2` (Pyomo's LP writer spaces the power; SCIP's LP reader refused it, "sign after
    value without variable") as `x^2`, and an MPS row line indented four blanks or more as
    ` L name` (SCIP's reader took ` L c1` there for a fixed-format field, joined type and
    name into one and crashed the process)."""
    if _is_lp(path):
        if b"^" not in text or _SPACED_POWER.search(text) is None:
            return None
        return _SPACED_POWER.sub(b"^", text)
    start, stop = _header_at(text, b"ROWS"), _header_at(text, b"COLUMNS")
    if start >= stop or _INDENTED_ROW.search(text, start, stop) is None:
        return None
    return text[:start] + _INDENTED_ROW.sub(rb" \1 \2\3", text[start:stop]) + text[stop:]


def check_scip_names(path: Path, text: bytes) -> None:
    """An InputError, before SCIP reads the file, for a name past 255 bytes in an MPS file
    (its reader cuts it) or past 65,535 in an LP file (its reader overran a buffer)."""
    long_word = _long_name(text, _is_lp(path))
    if long_word is not None:
        why = ("LP reader overruns its buffer on one" if _is_lp(path) else
               "MPS reader cuts it there and reads the rest as another name")
        limit = SCIP_LP_NAME_LIMIT if _is_lp(path) else SCIP_NAME_LIMIT
        raise InputError(f"{path.name} has a name of more than {limit:,} bytes "
                         f"({long_word[:40].decode(errors='ignore')}...): SCIP's {why}; "
                         "shorten it or solve with solver='highs'")


def check_scip_read(scip: Any, path: Path, text: bytes) -> None:
    """InputErrors for what SCIP reads other than as written: an objective sense it does
    not know ('Maximise': it read no objective at all), an objective constant at the
    solvers' infinity, and BOUNDS lines it misreads."""
    if _is_lp(path):
        _refuse_unknown_sense(path, text)
    own = _SCIP_READER_NAMES.search(text)
    if own is not None and _quadratic_objective(path, text):
        raise InputError(f"{path.name} names a column {own.group(1).decode()!r}, the name "
                         "SCIP's reader gives the variable it adds for a quadratic objective "
                         "(it took one for the other): rename it")
    _check_sense(path, text, scip.getObjectiveSense() == "maximize", "SCIP")
    _check_offset(path, scip.getObjoffset(original=True), "SCIP")
    bounds = _bounds_section(text)
    if _INFINITE_BOUND.search(bounds):  # the one case: no pass over every column otherwise
        _integer_past_binary(scip)
    # plain searches first: each regex over a 20 MB file's bounds took 0.1 s
    lowered = bounds.lower()
    if b"INTORG" in text or b"bv" in lowered and _BINARY_HELD.search(bounds):
        _refuse_reset_bounds(scip, path, bounds)  # only SCIP's binary columns are reset
    if not _is_lp(path):
        _refuse_value_as_column(scip, path, bounds)
    if _spells_past_infinity(text) or b"inf" in lowered and _INFINITE_WORD.search(bounds) \
            or (_lp_infinite_side(text) if _is_lp(path) else _infinite_side_word(text)):
        _refuse_infinite_sides(scip, path)


def _lp_infinite_side(text: bytes) -> bool:
    """Whether an LP file may bound something by an infinity no point meets (`x >= +inf`,
    `c2: x >= +Infinity`, `inf <= x`, `x <= -inf`)."""
    lower = text.lower()
    return b"inf" in lower and _LP_INFINITE_SIDE.search(lower) is not None


def _infinite_side_word(text: bytes) -> bool:
    """Whether an MPS file's RHS or RANGES section spells a value as inf or infinity."""
    bodies = (_section_body(text, name) for name in (b"RHS", b"RANGES"))
    return any(b"inf" in body.lower() and _SIDE_INFINITE_WORD.search(body) is not None
               for body in bodies)


def _refuse_stray_bound_words(path: Path, sections: dict[str, list[bytes]]) -> None:
    """An InputError for an LP file's Bounds that are no run of bound statements (`a <= x`,
    `x <= b`, `a <= x <= b`, `x = v`, `x free`, either direction): SCIP's reader read the
    number's head of `x <= 1,5` or `1d2` and made a column of the rest, and a column of a
    misspelt header (`Generales`), dropping what followed ('optimal' 1.5 for an integer
    x's 1); HiGHS's refuses such files."""
    lines = sections.get("bounds", [])
    if all(map(_PLAIN_BOUND_LINE.fullmatch, lines)):
        return  # the common form, one statement a line, matched in C
    tokens = _signed([token for line in lines
                      for token in _LP_TOKEN.findall(line.split(b"\\", 1)[0])])
    k = 0
    while k < len(tokens):
        step = _bound_statement(tokens, k)
        if not step:
            shown = b" ".join(tokens[max(k - 2, 0):k + 3]).decode(errors="replace")
            raise InputError(f"{path.name}: the Bounds entry near {shown!r} is no bound "
                             "(`a <= x <= b`, `x >= a`, `x = v`, `x free`): SCIP's reader "
                             "makes a column of a stray word or of a number's tail (`1,5`, "
                             "`1d2`); write plain numbers and section names")
        k += step


def _signed(tokens: list[bytes]) -> list[bytes]:
    """The tokens with a lone sign joined to the number after it (`x >= - 5`)."""
    out: list[bytes] = []
    for token in tokens:
        if out and out[-1] in (b"-", b"+") and _LP_VALUE.fullmatch(token):
            out[-1] += token
        else:
            out.append(token)
    return out


def _bound_statement(tokens: list[bytes], k: int) -> int:
    """How many tokens from `k` one bound statement takes (0: none starts there)."""
    def value(at: int) -> bool:
        return at < len(tokens) and _LP_VALUE.fullmatch(tokens[at]) is not None

    def sense(at: int) -> bool:
        return at < len(tokens) and tokens[at] in _LP_SENSES

    def name(at: int) -> bool:
        return at < len(tokens) and not value(at) and not sense(at)

    if value(k) and sense(k + 1) and name(k + 2):
        return 5 if sense(k + 3) and value(k + 4) else 3
    if name(k) and k + 1 < len(tokens) and tokens[k + 1].lower() == b"free":
        return 2
    if name(k) and sense(k + 1) and value(k + 2):
        return 3
    return 0


def _refuse_infinite_sides(scip: Any, path: Path) -> None:
    """An InputError for a bound or row side at or past 1e20 (SCIP's infinity) that no point
    meets (`x >= 1e25`, `c1: x >= 1e25`): SCIP's reader takes it for infinite, 'optimal'
    1e20 or 'infeasible' for a feasible model; as a loose side (`x <= 1e30`) it means no
    bound, as on the Pyomo path."""
    for var in scip.getVars():
        if scip.isInfinity(var.getLbOriginal()) or scip.isInfinity(-var.getUbOriginal()):
            raise InputError(f"{path.name}: a bound of {var.name!r} lies at or past 1e20, "
                             "where no point meets it (the solvers' infinity: SCIP's reader "
                             "took it for infinite); rescale the model")
    for cons in scip.getConss():
        if cons.getConshdlrName() == "linear" and (
                scip.isInfinity(scip.getLhs(cons)) or scip.isInfinity(-scip.getRhs(cons))):
            raise InputError(f"{path.name}: a side of row {cons.name!r} lies at or past 1e20, "
                             "where no point meets it (the solvers' infinity: SCIP's reader "
                             "took it for infinite); rescale the model")


def _refuse_value_as_column(scip: Any, path: Path, bounds: bytes) -> None:
    """An InputError for a BOUNDS line with no bound-set name whose value SCIP's reader took
    for a column (` LO x -5`: it read x as the set name and made a column '-5', leaving x
    at [0, inf]; a value such as 5 or .5 it reads as written, so that line is kept)."""
    lines = _UNNAMED_BOUND.findall(bounds)
    names = {var.name for var in scip.getVars()} if lines else set()
    for line in lines:
        words = line.split()
        if len(words) >= 3 and words[2].decode(errors="replace") in names:
            raise InputError(f"{path.name}: the BOUNDS line {line.strip().decode()!r} has no "
                             "bound-set name: SCIP's reader took its value for a column and "
                             "dropped the bound; give the line a name (` UP BND x 5`) or "
                             "solve with solver='highs'")


def enforce_user_cuts(scip: Any, path: Path, text: bytes) -> None:
    """Check and enforce every row of an LP file with a User Cuts section: SCIP's reader
    gives the row before that header the cuts' flags (neither checked nor enforced), and
    `c1: x + y <= 10` followed by User Cuts came back 'optimal' 100 at a point breaking
    it. User cuts must be valid, so enforcing them too keeps the optimum."""
    if not _is_lp(path) or _USER_CUTS.search(text) is None:
        return
    for cons in scip.getConss():
        scip.setCheck(cons, True)
        scip.setEnforced(cons, True)


def _quadratic_objective(path: Path, text: bytes) -> bool:
    """Whether the file gives its objective a quadratic part, for which SCIP's reader adds a
    column (`quadobjvar`, `qmatrixvar`); a file SCIP wrote from such a model holds that
    column and its row as its own, and reads back as written."""
    if _is_lp(path):
        first = _LP_SECTION.search(text)
        return b"[" in text[:first.start() if first else len(text)]
    return any(_header_at(text, name) < len(text) for name in (b"QUADOBJ", b"QMATRIX",
                                                                b"QSECTION"))


def reader_columns(scip: Any) -> set[int]:
    """The columns (as `Variable.ptr()`) SCIP's readers add that the file does not hold: a
    quadratic objective's epigraph variable and each indicator row's slack (`indslack_c1`
    had joined the solution)."""
    slacks = {scip.getSlackVarIndicator(cons).ptr() for cons in scip.getConss()
              if cons.getConshdlrName() == "indicator"}
    return slacks | {var.ptr() for var in scip.getVars() if var.name in SCIP_READER_COLUMNS}


def _integer_past_binary(scip: Any) -> None:
    """Make a column SCIP's reader left binary with a bound past [0, 1] the integer column
    the file declares: a MARKER integer with `UP ... inf` stayed binary with bounds [0, inf],
    and SCIP stopped with "error in input data"."""
    for var in scip.getVars():
        if var.vtype() == "BINARY" and (var.getUbOriginal() > 1 or var.getLbOriginal() < 0):
            scip.chgVarType(var, "INTEGER")


def _refuse_unknown_sense(path: Path, text: bytes) -> None:
    """An InputError for an LP file opening with a word that is neither an objective sense
    SCIP's reader knows nor a section (`maxim`, `minimise`, `Minimize:`): it dropped the
    objective and solved the rest ('optimal' 0 at x = 100000 for `min x`)."""
    found = _LP_FIRST_TOKEN.match(text)
    if found is None:  # nothing but blank lines and comments
        return
    token = found.group(1)
    line = text.rfind(b"\n", 0, found.start(1)) + 1
    if token.lower() in _SCIP_LP_SENSES or _LP_SECTION.match(text, line):
        return
    shown = token[:20].decode(errors="replace")
    raise InputError(f"{path.name} opens with {shown!r}, which SCIP's LP reader does not take "
                     "for an objective sense (it dropped the objective); begin with Maximize "
                     "or Minimize")


def _bounds_section(text: bytes) -> bytes:
    """The BOUNDS section of an MPS file's text (from its header line to the next section:
    QUADOBJ's `UP UP 2`, of a column named UP, is no bound line), empty where none."""
    start = _header_at(text, b"BOUNDS")
    end = _SECTION_HEAD.search(text, start + 1)
    return text[start:end.start() if end else len(text)]


def _refuse_reset_bounds(scip: Any, path: Path, bounds: bytes) -> None:
    """An InputError where SCIP read a column whose BOUNDS lines set a lower bound after an
    upper one (or hold a BV line) with other bounds than those lines give it in order: it
    reset the upper bound of a column it held binary (`UP 0` of an integer column, or `BV`)
    when a LO, LI or MI line followed, and called `max x` 1000 for the file's 0 (a negative
    `UP` that `LO -5` follows: unbounded)."""
    expected = _bounds_in_order(bounds)
    if not expected:
        return
    for var in scip.getVars():
        wanted = expected.get(var.name.encode())
        if wanted is None:
            continue
        read = (_as_float(var.getLbOriginal()), _as_float(var.getUbOriginal()))
        for side, want, got in zip(("lower", "upper"), wanted, read, strict=True):
            if want is not None and got != _as_float(want):  # 1e30 in the file is inf too
                raise InputError(f"{path.name}: SCIP read column {var.name!r} with the {side} "
                                 f"bound {got:g} where its BOUNDS lines give it {want:g} in "
                                 "order (SCIP's reader resets a bound of a column it holds "
                                 "binary when a LO, LI or MI line follows): solve with "
                                 "solver='highs', or give each bound once")


def _as_float(value: float) -> float:
    """A bound SCIP read, its infinity (1e20) as inf."""
    return math.inf if value >= SOLVER_INFINITY else -math.inf if value <= -SOLVER_INFINITY \
        else value


def _bounds_in_order(bounds: bytes) -> dict[bytes, tuple[float | None, float | None]]:
    """(lower, upper) the BOUNDS lines (`bounds`, the section) give in order to each column
    SCIP's reader may take otherwise: a lower bound set after an upper one, or a BV line
    (None: a side no line sets; SC columns left out, their meaning differs by reader). The
    lines' types and columns are read by one regex, and values only for those columns
    (reading every line cost 0.9 s on 400,000 lines)."""
    lines = [(kind.upper(), *_column_and_value(kind.upper(), fields))
             for kind, *fields in _BOUND_LINE.findall(bounds)]
    uppered: set[bytes] = set()
    chosen: set[bytes] = set()
    for kind, column, _ in lines:
        if kind in _SETS_LOWER and column in uppered or kind in (b"BV", b"SC"):
            chosen.add(column)
        if kind in _SETS_UPPER:
            uppered.add(column)
    if not chosen:
        return {}
    sides: dict[bytes, list[float | None]] = {}
    kinds: dict[bytes, list[bytes]] = {}
    for kind, column, value in lines:
        if column not in chosen:
            continue
        lower, upper = _BOUND_EFFECT.get(kind, (None, None))
        number = _float_or_none(value) if value else None
        side = sides.setdefault(column, [None, None])
        side[0] = number if lower == "value" else side[0] if lower is None else lower
        side[1] = number if upper == "value" else side[1] if upper is None else upper
        kinds.setdefault(column, []).append(kind)
    return {column: (sides[column][0], sides[column][1]) for column, order in kinds.items()
            if b"SC" not in order
            and (b"BV" in order and len(order) > 1 or _lower_after_upper(order))}


def _column_and_value(kind: bytes, fields: list[bytes]) -> tuple[bytes, bytes]:
    """A BOUNDS line's column and value (b"" for none) from the fields after its type, with
    or without a bound-set name, as `_bound_fields` reads them (` UP x 0` names no set)."""
    first, second, third = fields
    if third or kind in _VALUELESS_BOUNDS and second:
        return second, third
    return first, second


def _lower_after_upper(order: list[bytes]) -> bool:
    """Whether a line setting a lower bound follows one setting an upper bound."""
    first_upper = next((k for k, kind in enumerate(order) if kind in _SETS_UPPER), None)
    return first_upper is not None and any(kind in _SETS_LOWER for kind in order[first_upper + 1:])


def _float_or_none(word: bytes) -> float | None:
    """`word` as a number (inf and its spellings too), None where it is none."""
    try:
        return float(word)
    except ValueError:
        return None


def highs_read(highs: Any, path: Path, tee: bool) -> Any:
    """`highs.readModel(path)` with the reader's log kept (shown with `tee`), and the
    status; a file read (warnings included) is checked for what HiGHS ignored in it. The log
    goes through a file: HiGHS printed raw memory for a line it misread, and captured from
    the console those bytes stopped the decoding of the warnings after them."""
    import highspy

    highs.setOptionValue("output_flag", True)
    highs.setOptionValue("log_to_console", False)
    with tempfile.TemporaryDirectory() as folder:
        kept = Path(folder) / "read.log"
        highs.setOptionValue("log_file", str(kept))
        try:
            with capture_output(io.StringIO(), capture_fd=True):  # anything past its log
                status = highs.readModel(native_name(path))
        finally:
            highs.setOptionValue("log_file", "")
        log = kept.read_bytes().decode(errors="replace")
    highs.setOptionValue("log_to_console", True)
    if tee:  # where HiGHS writes its log: descriptor 1 (the CLI's --json points it away)
        write_fd1(log)
    if status != highspy.HighsStatus.kError:
        _refuse_ignored(path, log)
        _refuse_dropped_names(highs, path)
    else:
        _refuse_unsupported(path, log)
    return status


def _refuse_unsupported(path: Path, log: str) -> None:
    """An InputError quoting HiGHS's reader where it names what HiGHS does not support (an
    SOS section): the callers' own message could only guess."""
    for line in log.splitlines():
        if "not supported by HiGHS" in line:
            said = line.split("ERROR:", 1)[-1].strip()
            raise InputError(f"HiGHS cannot read {path.name}: {said}")


def write_fd1(text: str) -> None:
    """`text` on file descriptor 1, as HiGHS's own log would be; on sys.stdout without one."""
    sys.stdout.flush()
    try:
        os.write(1, text.encode())
    except OSError:
        sys.stdout.write(text)


def check_highs_read(highs: Any, path: Path, text: bytes) -> None:
    """InputErrors for what HiGHS reads other than as written: a right-hand side on a free
    row (HiGHS makes it the objective's constant; MPS and SCIP ignore it), an objective
    sense it missed ('OBJSENSE MAXIMIZE' on one line) and an objective constant at the
    solvers' infinity."""
    import highspy

    lp = highs.getLp()
    if not _is_lp(path):
        _refuse_free_row_rhs(path, text)
        _refuse_other_objective(path, text)
    _check_sense(path, text, lp.sense_ == highspy.ObjSense.kMaximize, "HiGHS")
    _check_offset(path, lp.offset_, "HiGHS")
    if not _is_lp(path):
        _semi_integer_columns(highs, text)


def _semi_integer_columns(highs: Any, text: bytes) -> None:
    """Make the MPS columns HiGHS read as semi-continuous semi-integer where the file
    declares them integer (an `SC` bound on a MARKER integer column): HiGHS dropped their
    integrality and answered 2.5 where the optimum is 3."""
    import highspy
    import numpy as np

    lp = highs.getLp()
    semi = [j for j, kind in enumerate(lp.integrality_)
            if kind == highspy.HighsVarType.kSemiContinuous]
    if not semi:
        return
    integers = _marker_integers(text)
    fix = [j for j in semi if lp.col_names_[j].encode() in integers]
    if fix:
        kinds = np.array([highspy.HighsVarType.kSemiInteger] * len(fix))
        highs.changeColsIntegrality(len(fix), np.array(fix, dtype=np.int32), kinds)


def _marker_integers(text: bytes) -> set[bytes]:
    """The columns an MPS file's COLUMNS section declares between INTORG and INTEND
    markers."""
    names: set[bytes] = set()
    inside = False
    for _, words in _section_lines(text, b"COLUMNS"):
        if len(words) >= 3 and words[1].strip(b"'\"").upper() == b"MARKER":
            inside = words[2].strip(b"'\"").upper() == b"INTORG"
        elif inside:
            names.add(words[0])
    return names


def _header_at(text: bytes, name: bytes) -> int:
    """Where MPS section `name`'s header line starts (found by plain search, quick on large
    files), or len(text) where there is none."""
    at = text.find(b"\n" + name)
    while at >= 0 and text[at + 1 + len(name):at + 2 + len(name)] not in b" \t\r\n":
        at = text.find(b"\n" + name, at + 1)
    return at if at >= 0 else len(text)


def _long_name(text: bytes, lp: bool) -> bytes | None:
    """The first name longer than SCIP's limit (SCIP_NAME_LIMIT in an MPS file,
    SCIP_LP_NAME_LIMIT in an LP file): a word of an MPS line, a run of an LP line between
    operators (`x0+x1+...` is many names), comments and MPS's NAME line aside;
    looked for only in lines that long (their lengths from numpy: a regex over every
    position cost 0.35 s on 18 MB)."""
    import numpy as np

    ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord("\n"))
    starts = np.concatenate(([0], ends + 1))
    ends = np.concatenate((ends, [len(text)]))
    limit = SCIP_LP_NAME_LIMIT if lp else SCIP_NAME_LIMIT
    for k in np.flatnonzero(ends - starts > limit):
        line = text[int(starts[k]):int(ends[k])]
        if lp:
            line = line.split(b"\\", 1)[0]  # a backslash starts a comment
        elif line.startswith(b"NAME") or line.lstrip().startswith(b"*"):
            continue
        found = (_LONG_LP_NAME if lp else _LONG_WORD).search(line)
        if found is not None:
            return found.group(0)
    return None


def _is_lp(path: Path) -> bool:
    """Whether `path` names an LP (not an MPS) file."""
    return path.name.lower().removesuffix(".gz").endswith(".lp")


def _check_sense(path: Path, text: bytes, read_maximize: bool, solver: str) -> None:
    """An InputError where the file says one objective sense and `solver` read the other."""
    said = declared_maximize(path, text)
    if said is not None and said != read_maximize:
        words = ("maximize", "minimize") if said else ("minimize", "maximize")
        fix = ("write OBJSENSE on a line of its own and MAX or MIN indented on the next"
               if not _is_lp(path) else "spell it Maximize or Minimize")
        raise InputError(f"{path.name} says {words[0]} but {solver}'s reader read "
                         f"{words[1]}: {fix}")


def _check_offset(path: Path, offset: float, solver: str) -> None:
    """An InputError for an objective constant the solvers take as infinite."""
    if abs(offset) >= SOLVER_INFINITY:
        raise InputError(f"{path.name}: the objective's constant is {offset:g} as {solver} "
                         f"reads it ({SOLVER_INFINITY:g} or more is infinite to the "
                         "solvers); remove it")


def _refuse_free_row_rhs(path: Path, text: bytes) -> None:
    """An InputError for a right-hand side on a free (N) row other than the first (the
    objective): HiGHS read 7 on such a row as an objective constant of -7."""
    free_rows = set(_FREE_ROW.findall(text, 0, _header_at(text, b"COLUMNS"))[1:])
    start = _header_at(text, b"RHS")
    if not free_rows or start == len(text):
        return
    end = (found.start() if (found := _SECTION_HEAD.search(text, start + 1)) else len(text))
    for line in text[start:end].splitlines()[1:]:
        words = line.split()
        if not words or line.lstrip().startswith(b"*"):
            continue
        rows = words[1::2] if len(words) % 2 else words[0::2]
        hit = next((row for row in rows if row in free_rows), None)
        if hit is not None:
            raise InputError(f"{path.name} gives free row {hit.decode(errors='replace')!r}, "
                             "which is not the objective, a right-hand side: HiGHS reads it "
                             "as the objective's constant (SCIP and the MPS format ignore "
                             "it); remove it or solve with solver='scip'")


def _refuse_other_objective(path: Path, text: bytes) -> None:
    """An InputError for an OBJNAME section naming another free row than the first: HiGHS's
    reader ignores it and optimizes the first (4 where the named row's optimum is 3)."""
    at = _header_at(text, b"OBJNAME")
    if at == len(text):
        return
    words = text[at + 1:at + 1 + 4096].split(b"\n", 2)
    named = (words[0].split()[1:] or (words[1].split() if len(words) > 1 else []))[:1]
    free_rows = _FREE_ROW.findall(text, 0, _header_at(text, b"COLUMNS"))
    if named and free_rows and named[0] != free_rows[0]:
        raise InputError(f"{path.name}: OBJNAME names {named[0].decode(errors='replace')!r} "
                         "as the objective, but HiGHS's reader ignores OBJNAME and optimizes "
                         f"the first free row, {free_rows[0].decode(errors='replace')!r}; put "
                         "the objective's row first or solve with solver='scip'")


def _refuse_ignored(path: Path, log: str) -> None:
    """An InputError where HiGHS's reader says it ignored part of the model: a repeated
    entry (HiGHS keeps the first; SCIP adds up a repeated coefficient and applies repeated
    bounds in order), an entry naming a row or column not declared (dropped), or a constant
    on a row's left side."""
    undefined = _HIGHS_UNDEFINED.search(log)
    if undefined is not None:
        raise InputError(f"{path.name}: {undefined.group(1)} (HiGHS's reader drops the entry, "
                         "as SCIP's does): declare the row in ROWS, or the column in COLUMNS, "
                         "under the very name used (the same letters and accents)")
    section = _HIGHS_SECTION_IGNORED.search(log)
    if section is not None:
        name, count, kind, declared = section.groups()
        switched = (", after switching to its fixed-format parser (a line it could not read "
                    "as free format, such as an entry for a row ROWS does not declare)," if
                    "fixed format" in log else "")
        raise InputError(f"{path.name}: HiGHS's reader{switched} ignored {count} {name} "
                         f"entries whose {'column' if kind == 'col' else kind} is not in "
                         f"{declared}: declare every row and column under the very name used")
    found = _HIGHS_IGNORED.search(log)
    if found is not None:
        raise InputError(f"{path.name}: {found.group(1).strip()} (HiGHS's reader keeps the "
                         "first entry; SCIP's adds up a repeated coefficient and applies "
                         "repeated bounds in order): give each entry once")
    lines = log.splitlines()
    for k, line in enumerate(lines):
        if "constant is ignored" in line:
            row = lines[k - 1].split("|", 1)[-1].strip() if k else ""
            raise InputError(f"{path.name}: HiGHS ignores a constant on the left of a row "
                             f"({row!r}); move it to the right-hand side")


def refuse_scip_ignored(path: Path, log: str) -> None:
    """An InputError where SCIP's MPS reader dropped a COLUMNS, RHS or RANGES entry for a
    row ROWS does not declare (it solved the rest: 'optimal' -4 with the row's coefficient
    gone); entries for free rows past the objective are dropped as MPS says, and kept."""
    free_rows = set(_SCIP_FREE_ROW.findall(log))  # as SCIP names them
    for found in _SCIP_IGNORED.finditer(log):
        line, kind, _, row = found.groups()
        if row not in free_rows:
            raise InputError(f"{path.name}:{line}: row {row!r} in the {_SCIP_SECTION[kind]} "
                             "section is not declared in ROWS (SCIP's reader drops the "
                             "entry): declare the row under the very name used (the same "
                             "letters and accents)")


def _refuse_dropped_names(highs: Any, path: Path) -> None:
    """An InputError where two columns (or rows) share a name, as when a column's entries
    are split apart: HiGHS then drops every name and solves the split columns apart."""
    lp = highs.getLp()
    for kind, names, count in (("column", lp.col_names_, lp.num_col_),
                               ("row", lp.row_names_, lp.num_row_)):
        if count and len(names) != count:
            own = (", or a row named like HiGHS's names for unnamed rows, HiGHS_R1, "
                   "HiGHS_R2, ..." if kind == "row" else "")
            raise InputError(f"{path.name}: two {kind}s share a name (a {kind}'s entries "
                             f"split apart{own}?), so HiGHS dropped every name: give each "
                             f"{kind} one name and keep its entries together")
