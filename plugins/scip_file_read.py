"""What SCIP's MPS and LP readers make of a file, held against what it says: names past
its limits, text it misreads (rewritten in a temporary copy where a plain rewrite reads as
written), and the model read checked for dropped entries, reset bounds, sides taken for
infinite and columns it adds of its own."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError
from coplug.plugins.file_reading import check_offset, check_sense, is_lp, solver_temp_folder
from coplug.plugins.lp_text import LP_SECTION, lp_infinite_side, section_heads, section_spans
from coplug.plugins.modeldata import HUGE_BOUND_WHY, SOLVER_INFINITY, huge_scip_bound
from coplug.plugins.mps_text import (
    BOUND_EFFECT,
    VALUELESS_BOUNDS,
    bounds_section,
    float_or_none,
    header_at,
    section_body,
)

SCIP_NAME_LIMIT = 255  # SCIP's MPS reader cuts a name there and reads the rest as a new name
# SCIP's LP reader reads longer names whole, but one of 65,536 bytes or more overran its
# buffer (glibc: "free(): invalid next size").
SCIP_LP_NAME_LIMIT = 65535
_LONG_WORD = re.compile(rb"\S{%d,}" % (SCIP_NAME_LIMIT + 1))
# SCIP's LP reader ends a name at white space and - + : < > = [ ] * ^ only ('/' is a name's)
_LONG_LP_NAME = re.compile(rb"[^\s+\-*^<>=:\[\]]{%d,}" % (SCIP_LP_NAME_LIMIT + 1))
_INFINITE_BOUND = re.compile(rb"(?i)[ \t][-+]?inf(?:inity)?[ \t]*\r?$", re.M)
# The columns SCIP's LP and MPS readers add for a quadratic objective (its epigraph).
SCIP_READER_COLUMNS = frozenset({"quadobjvar", "qmatrixvar"})
# A User Cuts header, a comment or the first cut may follow on its line
_SCIP_READER_NAMES = re.compile(rb"(?<![\w.])(%s)(?![\w.])" % "|".join(
    sorted(SCIP_READER_COLUMNS)).encode())
_LP_FIRST_TOKEN = re.compile(rb"\A(?:[ \t]*(?:\\[^\n]*)?\r?\n)*[ \t]*([^\s\\]+)")
_SCIP_LP_SENSES = {b"min", b"minimize", b"minimum", b"max", b"maximize", b"maximum"}
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
# A BOUNDS line with no bound-set name: `TYPE COLUMN VALUE`, or `TYPE COLUMN` for the types
# without a value (a `$` comment may follow).
_UNNAMED_BOUND = re.compile(
    rb"^[ \t]*(?:(?:LO|UP|FX|LI|UI)[ \t]+\S+[ \t]+[-+.0-9][^ \t\r\n]*|(?:MI|PL|FR|BV)[ \t]+\S+)"
    rb"[ \t]*(?:\$[^\r\n]*)?\r?$", re.M)
# A BOUNDS line's type and up to three fields after it (b"" for none): `_column_and_value`
_BOUND_LINE = re.compile(rb"^[ \t]*([A-Za-z]{2})[ \t]+([^\s$]+)(?:[ \t]+([^\s$]+))?"
                         rb"(?:[ \t]+([^\s$]+))?", re.M)
_SETS_UPPER = {b"UP", b"UI", b"FX", b"BV"}
_SETS_LOWER = {b"LO", b"LI", b"MI"}
# An MPS bound with a value spelled inf or infinity (LO x inf: a bound no point meets)
_INFINITE_WORD = re.compile(rb"^[ \t]*(?:FX|LO|LI|UP|UI)[ \t]+\S+[ \t]+\S+[ \t]+[-+]?inf",
                            re.M | re.I)
_SIDE_INFINITE_WORD = re.compile(rb"[ \t][-+]?inf(?:inity)?\b", re.I)
# A BV line: after one SCIP's reader holds a column binary, as it holds integer columns
# (MARKER ones) with bounds within [0, 1]
_BINARY_HELD = re.compile(rb"^[ \t]*BV[ \t]", re.M | re.I)
# `_spells_past_infinity`: every digit read as 0, then these spellings looked for
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_EXPONENTS = (b"e00", b"E00", b"e+00", b"E+00", b"0" * 20)


def _spells_past_infinity(text: bytes) -> bool:
    """Whether the text may write a number at or past 1e20: an exponent of two digits or
    more, or 20 digits in a row (read with the digits made one, by plain search: a regex
    took as long as SCIP's read of the file). False triggers only cost a check."""
    digits = text.translate(_DIGITS_AS_ZERO)
    return any(digits.find(spelling) >= 0 for spelling in _LONG_EXPONENTS)


@contextmanager
def scip_readable(path: Path, text: bytes) -> Iterator[Path]:
    """`path`, or a temporary copy of the file in a form SCIP reads as written
    (`_scip_text`)."""
    rewritten = _scip_text(path, text)
    if rewritten is None:
        yield path
        return
    with solver_temp_folder("coplug-read-") as folder:
        copy = folder / path.name.removesuffix(".gz")
        copy.write_bytes(rewritten)
        yield copy


def _scip_text(path: Path, text: bytes) -> bytes | None:
    """The file's text rewritten where SCIP's readers misread it, else None: an LP file's
    `x ^ 2` (Pyomo's LP writer spaces the power; SCIP's LP reader refused it, "sign after
    value without variable") as `x^2`, and an MPS row line indented four blanks or more as
    ` L name` (SCIP's reader took ` L c1` there for a fixed-format field, joined type and
    name into one and crashed the process)."""
    if is_lp(path):
        if b"^" not in text or _SPACED_POWER.search(text) is None:
            return None
        return _SPACED_POWER.sub(b"^", text)
    start, stop = header_at(text, b"ROWS"), header_at(text, b"COLUMNS")
    if start >= stop or _INDENTED_ROW.search(text, start, stop) is None:
        return None
    return text[:start] + _INDENTED_ROW.sub(rb" \1 \2\3", text[start:stop]) + text[stop:]


def check_scip_names(path: Path, text: bytes) -> None:
    """An InputError, before SCIP reads the file, for a name past 255 bytes in an MPS file
    (its reader cuts it) or past 65,535 in an LP file (its reader overran a buffer)."""
    long_word = _long_name(text, is_lp(path))
    if long_word is not None:
        why = ("LP reader overruns its buffer on one" if is_lp(path) else
               "MPS reader cuts it there and reads the rest as another name")
        limit = SCIP_LP_NAME_LIMIT if is_lp(path) else SCIP_NAME_LIMIT
        raise InputError(f"{path.name} has a name of more than {limit:,} bytes "
                         f"({long_word[:40].decode(errors='ignore')}...): SCIP's {why}; "
                         "shorten it or solve with solver='highs'")


# A number of 1e15 or more short of 1e20 as a file writes it (an exponent of 15 to 19, or
# 16 digits in a row): the quick test before `_refuse_huge_bounds` reads every column
_HUGE_NUMBER = re.compile(rb"[eE]\+?0*1[5-9](?![0-9])|[0-9]{16}")


def _refuse_huge_bounds(scip: Any, path: Path, text: bytes) -> None:
    """An InputError for a column bound past SCIP's numerics/hugeval short of 1e20
    (`huge_scip_bound`), as on the Pyomo path (`bridge.refuse_huge_bounds`); the columns
    are read only where the file's bounds spell such a number."""
    if is_lp(path):
        bounds = b"".join(text[start:stop] for word, start, stop in
                          section_spans(text, section_heads(text)) if word.startswith(b"bound"))
    else:
        bounds = bounds_section(text)
    if _HUGE_NUMBER.search(bounds) is None:
        return
    for var in scip.getVars():
        found = huge_scip_bound(var)
        if found is not None:
            raise InputError(f"{path.name}: the {found[0]} bound {found[1]:g} of {var.name!r} "
                             f"{HUGE_BOUND_WHY}")


def check_scip_read(scip: Any, path: Path, text: bytes) -> None:
    """InputErrors for what SCIP reads other than as written: an objective sense it does
    not know ('Maximise': it read no objective at all), an objective constant at the
    solvers' infinity, and BOUNDS lines it misreads."""
    if is_lp(path):
        _refuse_unknown_sense(path, text)
    own = _SCIP_READER_NAMES.search(text) if _quadratic_objective(path, text) else None
    if own is not None:  # the regex after the quick test (1.4 s on a 104 MB file)
        raise InputError(f"{path.name} names a column {own.group(1).decode()!r}, the name "
                         "SCIP's reader gives the variable it adds for a quadratic objective "
                         "(it took one for the other): rename it")
    check_sense(path, text, scip.getObjectiveSense() == "maximize", "SCIP")
    check_offset(path, scip.getObjoffset(original=True), "SCIP")
    _refuse_huge_bounds(scip, path, text)
    bounds = bounds_section(text)
    if _INFINITE_BOUND.search(bounds):  # the one case: no pass over every column otherwise
        _integer_past_binary(scip)
    # plain searches first: each regex over a 20 MB file's bounds took 0.1 s
    lowered = bounds.lower()
    if b"INTORG" in text or b"bv" in lowered and _BINARY_HELD.search(bounds):
        _refuse_reset_bounds(scip, path, bounds)  # only SCIP's binary columns are reset
    if not is_lp(path):
        _refuse_value_as_column(scip, path, bounds)
    if _spells_past_infinity(text) or b"inf" in lowered and _INFINITE_WORD.search(bounds) \
            or (lp_infinite_side(text) if is_lp(path) else _infinite_side_word(text)):
        _refuse_infinite_sides(scip, path)


def _infinite_side_word(text: bytes) -> bool:
    """Whether an MPS file's RHS or RANGES section spells a value as inf or infinity."""
    bodies = (section_body(text, name) for name in (b"RHS", b"RANGES"))
    return any(b"inf" in body.lower() and _SIDE_INFINITE_WORD.search(body) is not None
               for body in bodies)


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
    if not is_lp(path) or not any(word.startswith(b"user") for word, _, _
                                  in section_spans(text, section_heads(text))):
        return
    for cons in scip.getConss():
        scip.setCheck(cons, True)
        scip.setEnforced(cons, True)


def _quadratic_objective(path: Path, text: bytes) -> bool:
    """Whether the file gives its objective a quadratic part, for which SCIP's reader adds a
    column (`quadobjvar`, `qmatrixvar`); a file SCIP wrote from such a model holds that
    column and its row as its own, and reads back as written."""
    if is_lp(path):
        first = LP_SECTION.search(text)
        return b"[" in text[:first.start() if first else len(text)]
    return any(header_at(text, name) < len(text) for name in (b"QUADOBJ", b"QMATRIX",
                                                                b"QSECTION"))


def reader_columns(scip: Any, path: Path, text: bytes) -> set[int]:
    """The columns (as `Variable.ptr()`) SCIP's readers add that the file does not hold: a
    quadratic objective's epigraph variable and each indicator row's slack (`indslack_c1`
    had joined the solution); looked for only in a file that may hold either (a pass over
    every column and row took 1.8 s on a 104 MB file)."""
    indicators = b"->" in text if is_lp(path) else header_at(text, b"INDICATORS") < len(text)
    if not indicators and not _quadratic_objective(path, text):
        return set()
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
    if token.lower() in _SCIP_LP_SENSES or LP_SECTION.match(text, line):
        return
    shown = token[:20].decode(errors="replace")
    raise InputError(f"{path.name} opens with {shown!r}, which SCIP's LP reader does not take "
                     "for an objective sense (it dropped the objective); begin with Maximize "
                     "or Minimize")


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
    (None: a side no line sets; SC columns left out, their meaning differs by reader); an
    upper bound of 2 or more makes SCIP's column integer, so only one below 2 counts (walking
    every such column took 4.5 times SCIP's read). The lines' types and columns are read by
    one regex, and values only for those columns (every line cost 0.9 s on 400,000)."""
    lines = [(kind.upper(), *_column_and_value(kind.upper(), fields))
             for kind, *fields in _BOUND_LINE.findall(bounds)]
    uppered: set[bytes] = set()
    chosen: set[bytes] = set()
    for kind, column, value in lines:
        if kind in _SETS_LOWER and column in uppered or kind in (b"BV", b"SC"):
            chosen.add(column)
        if kind in _SETS_UPPER and (kind == b"BV" or _keeps_binary(value)):
            uppered.add(column)
    if not chosen:
        return {}
    sides: dict[bytes, list[float | None]] = {}
    kinds: dict[bytes, list[bytes]] = {}
    for kind, column, value in lines:
        if column not in chosen:
            continue
        lower, upper = BOUND_EFFECT.get(kind, (None, None))
        number = float_or_none(value) if value else None
        side = sides.setdefault(column, [None, None])
        side[0] = number if lower == "value" else side[0] if lower is None else lower
        side[1] = number if upper == "value" else side[1] if upper is None else upper
        kinds.setdefault(column, []).append(kind)
    return {column: (sides[column][0], sides[column][1]) for column, order in kinds.items()
            if b"SC" not in order
            and (b"BV" in order and len(order) > 1 or _lower_after_upper(order))}


def _keeps_binary(value: bytes) -> bool:
    """Whether an upper bound of `value` may leave a column SCIP holds binary (below 2: SCIP
    took 1.000001 for 1, within its tolerance; or a value that is no number)."""
    number = float_or_none(value) if value else None
    return number is None or number < 2


def _column_and_value(kind: bytes, fields: list[bytes]) -> tuple[bytes, bytes]:
    """A BOUNDS line's column and value (b"" for none) from the fields after its type, with
    or without a bound-set name, as `_bound_fields` reads them (` UP x 0` names no set)."""
    first, second, third = fields
    if third or kind in VALUELESS_BOUNDS and second:
        return second, third
    return first, second


def _lower_after_upper(order: list[bytes]) -> bool:
    """Whether a line setting a lower bound follows one setting an upper bound."""
    first_upper = next((k for k, kind in enumerate(order) if kind in _SETS_UPPER), None)
    return first_upper is not None and any(kind in _SETS_LOWER for kind in order[first_upper + 1:])


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
