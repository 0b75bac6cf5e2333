"""What an MPS or LP file says, held against what SCIP's or HiGHS's reader made of it.

The two readers differ on files they both accept (a duplicate entry, a constant on a row's
left, an objective sense spelled one way, a name past 255 characters), and a misread file
is then solved as if it were the file: these checks turn each known misreading into an
InputError that names it."""

from __future__ import annotations

import gzip
import io
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

SCIP_NAME_LIMIT = 255  # SCIP's readers cut a name there and read the rest as a new name
_MPS_SECTION = re.compile(rb"^(ROWS|COLUMNS|ENDATA)[ \t]*\r?$", re.M)
_LONG_WORD = re.compile(rb"\S{%d,}" % (SCIP_NAME_LIMIT + 1))
_LONG_LP_NAME = re.compile(rb"[^\s+\-*/^<>=:\[\]]{%d,}" % (SCIP_NAME_LIMIT + 1))
_MPS_SENSE = re.compile(rb"^OBJSENSE\b[ \t]*(?:\r?\n[ \t]+)?(\w*)", re.M | re.I)
_LP_FIRST_WORD = re.compile(rb"\A(?:[ \t]*(?:\\[^\n]*)?\r?\n)*[ \t]*([A-Za-z]+)")
_LP_MAXIMIZE = {b"max", b"maximize", b"maximise", b"maximum"}
_LP_MINIMIZE = {b"min", b"minimize", b"minimise", b"minimum"}
_FREE_ROW = re.compile(rb"^[ \t]*N[ \t]+(\S+)[ \t]*\r?$", re.M)
_SECTION_HEAD = re.compile(rb"\n(?:RANGES|BOUNDS|SOS|ENDATA|QUADOBJ|QMATRIX|QSECTION|QCMATRIX|"
                           rb"INDICATORS)\b")
_HIGHS_IGNORED = re.compile(r"(?:WARNING: )?([^\n]*has duplicate [^\n]*)")
_SPACED_POWER = re.compile(rb"[ \t]+\^[ \t]*|\^[ \t]+")
_NEGATIVE_UP = re.compile(rb"\n[ \t]*U[PI][ \t]+\S+[ \t]+\S+[ \t]+-")
# A BOUNDS line with no bound-set name: `TYPE COLUMN VALUE`, or `TYPE COLUMN` for the types
# without a value (a `$` comment may follow).
_UNNAMED_BOUND = re.compile(
    rb"^[ \t]*(?:(?:LO|UP|FX|LI|UI)[ \t]+\S+[ \t]+[-+.0-9][^ \t\r\n]*|(?:MI|PL|FR|BV)[ \t]+\S+)"
    rb"[ \t]*(?:\$[^\r\n]*)?\r?$", re.M)
# What each BOUNDS type sets a column's upper bound to (None: the line's value).
_UPPER_OF = {b"UP": None, b"UI": None, b"FX": None, b"SC": None, b"BV": 1.0,
             b"PL": float("inf"), b"FR": float("inf")}


def checked_text(path: Path) -> bytes:
    """The file's bytes, a .gz file's unpacked (the checks read them once), after the check
    that an .lp file is no MPS file (`refuse_misnamed`)."""
    text = file_text(path)
    refuse_misnamed(path, text)
    return text


def file_text(path: Path) -> bytes:
    """The file's bytes, a .gz file's unpacked."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.name.endswith(".gz") else data
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise InputError(f"cannot read {path.name}: {exc}") from exc


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
    if found is None:
        return False
    word = found.group(1).upper()
    return True if word.startswith(b"MAX") else False if word.startswith(b"MIN") else None


@contextmanager
def scip_readable(path: Path, text: bytes) -> Iterator[Path]:
    """`path`, or for an LP file with `x ^ 2` (Pyomo's LP writer puts spaces around the
    power) a temporary copy written `x^2`: SCIP's LP reader refuses the spaced form ("sign
    after value without variable"), so it could not read Pyomo's quadratic LP files."""
    if not _is_lp(path) or b"^" not in text or _SPACED_POWER.search(text) is None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="coplug-lp-") as folder:
        copy = Path(folder) / path.name.removesuffix(".gz")
        copy.write_bytes(_SPACED_POWER.sub(b"^", text))
        yield copy


def check_scip_read(scip: Any, path: Path, text: bytes) -> None:
    """InputErrors for what SCIP reads other than as written: names past 255 characters, an
    objective sense it does not know ('Maximise': it read no objective at all), an
    objective constant at the solvers' infinity, and BOUNDS lines it misreads."""
    long_word = _long_name(text, _is_lp(path))
    if long_word is not None:
        raise InputError(f"{path.name} has a name of more than {SCIP_NAME_LIMIT} characters "
                         f"({long_word[:40].decode(errors='replace')}...): SCIP's "
                         "reader cuts it there and reads the rest as another name; shorten "
                         "it or solve with solver='highs'")
    _check_sense(path, text, scip.getObjectiveSense() == "maximize", "SCIP")
    _check_offset(path, scip.getObjoffset(original=True), "SCIP")
    bounds = _bounds_section(text)
    if _NEGATIVE_UP.search(bounds):
        _refuse_crossed_bounds(scip, path)
        _refuse_lost_upper(scip, path, bounds)
    unnamed = _UNNAMED_BOUND.search(bounds)
    if unnamed is not None and not _is_lp(path):
        raise InputError(f"{path.name}: the BOUNDS line {unnamed.group(0).strip().decode()!r} "
                         "has no bound-set name: SCIP's reader reads its first word as that "
                         "name and drops the bound; give the line a name (` UP BND x 5`) or "
                         "solve with solver='highs'")


def _bounds_section(text: bytes) -> bytes:
    """The BOUNDS section of an MPS file's text (from its header line to the next section:
    QUADOBJ's `UP UP 2`, of a column named UP, is no bound line), empty where none."""
    start = _header_at(text, b"BOUNDS")
    end = _SECTION_HEAD.search(text, start + 1)
    return text[start:end.start() if end else len(text)]


def _refuse_lost_upper(scip: Any, path: Path, bounds: bytes) -> None:
    """An InputError where SCIP read a column given a negative UP (or UI) bound with another
    upper bound than the file's lines give it in order: SCIP dropped `UP -3` of an integer
    column that `LO -5` follows, read [-5, inf], and called `max i` unbounded."""
    uppers = _negative_up_columns(bounds)
    for var in scip.getVars():
        expected = uppers.get(var.name.encode())
        if expected is not None and var.getUbOriginal() != expected:
            raise InputError(f"{path.name}: SCIP read column {var.name!r} with the upper bound "
                             f"{var.getUbOriginal():g} where the BOUNDS lines give it "
                             f"{expected:g} (SCIP drops a negative UP bound of an integer "
                             "column that a LO bound follows): solve with solver='highs'")


def _negative_up_columns(bounds: bytes) -> dict[bytes, float]:
    """The upper bound the BOUNDS lines (`bounds`, the section) give, in order, to each
    column with a negative UP or UI bound (each line `TYPE BOUND_NAME COLUMN [VALUE]`)."""
    uppers: dict[bytes, float] = {}
    negative: set[bytes] = set()
    for line in bounds.splitlines()[1:]:
        words = line.split()
        if len(words) < 3 or words[0] not in _UPPER_OF:
            continue
        upper = _UPPER_OF[words[0]]
        try:
            upper = float(words[3]) if upper is None else upper
        except (IndexError, ValueError):
            continue  # a line SCIP's reader refuses itself
        if words[0] in (b"UP", b"UI") and upper < 0:
            negative.add(words[2])
        uppers[words[2]] = upper
    return {column: uppers[column] for column in negative}


def _refuse_crossed_bounds(scip: Any, path: Path) -> None:
    """An InputError where SCIP read a column with crossed bounds (its "error in input data"
    at the solve): an integer column given only a negative UP bound is binary with bounds
    [0, UP] to its MPS reader."""
    for var in scip.getVars():
        lower, upper = var.getLbOriginal(), var.getUbOriginal()
        if var.vtype() == "BINARY" and lower == 0 and upper < 0:  # the file's own crossed
            # bounds on other columns are left to the solve ("infeasible")
            raise InputError(f"{path.name}: SCIP read column {var.name!r} with bounds "
                             f"[{lower:g}, {upper:g}] (an integer column with a negative UP "
                             "bound and no LO is binary to its MPS reader): give it a LO "
                             "bound")


def highs_read(highs: Any, path: Path, tee: bool) -> Any:
    """`highs.readModel(path)` with the reader's log kept (shown with `tee`), and the
    status; a file read (warnings included) is checked for what HiGHS ignored in it."""
    import highspy

    log = io.StringIO()
    highs.setOptionValue("output_flag", True)
    highs.setOptionValue("log_to_console", True)
    with capture_output(log, capture_fd=True):
        status = highs.readModel(str(path))
    if tee:  # where HiGHS writes its log: descriptor 1 (the CLI's --json points it away)
        _write_fd1(log.getvalue())
    if status != highspy.HighsStatus.kError:
        _refuse_ignored(path, log.getvalue())
        _refuse_dropped_names(highs, path)
    return status


def _write_fd1(text: str) -> None:
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
    _check_sense(path, text, lp.sense_ == highspy.ObjSense.kMaximize, "HiGHS")
    _check_offset(path, lp.offset_, "HiGHS")


def _header_at(text: bytes, name: bytes) -> int:
    """Where MPS section `name`'s header line starts (found by plain search, quick on large
    files), or len(text) where there is none."""
    at = text.find(b"\n" + name)
    while at >= 0 and text[at + 1 + len(name):at + 2 + len(name)] not in b" \t\r\n":
        at = text.find(b"\n" + name, at + 1)
    return at if at >= 0 else len(text)


def _long_name(text: bytes, lp: bool) -> bytes | None:
    """The first name longer than SCIP_NAME_LIMIT: a word of an MPS line, a run of an LP
    line between operators (`x0+x1+...` is many names), comments and MPS's NAME line aside;
    looked for only in lines that long (their lengths from numpy: a regex over every
    position cost 0.35 s on 18 MB)."""
    import numpy as np

    ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == ord("\n"))
    starts = np.concatenate(([0], ends + 1))
    ends = np.concatenate((ends, [len(text)]))
    for k in np.flatnonzero(ends - starts > SCIP_NAME_LIMIT):
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


def _refuse_ignored(path: Path, log: str) -> None:
    """An InputError where HiGHS's reader says it ignored part of the model: a repeated
    entry (SCIP keeps the last, HiGHS the first) or a constant on a row's left side."""
    found = _HIGHS_IGNORED.search(log)
    if found is not None:
        raise InputError(f"{path.name}: {found.group(1).strip()} (HiGHS's reader keeps the "
                         "first entry, SCIP's the last): give each entry once")
    lines = log.splitlines()
    for k, line in enumerate(lines):
        if "constant is ignored" in line:
            row = lines[k - 1].split("|", 1)[-1].strip() if k else ""
            raise InputError(f"{path.name}: HiGHS ignores a constant on the left of a row "
                             f"({row!r}); move it to the right-hand side")


def _refuse_dropped_names(highs: Any, path: Path) -> None:
    """An InputError where two columns (or rows) share a name, as when a column's entries
    are split apart: HiGHS then drops every name and solves the split columns apart."""
    lp = highs.getLp()
    for kind, names, count in (("column", lp.col_names_, lp.num_col_),
                               ("row", lp.row_names_, lp.num_row_)):
        if count and len(names) != count:
            raise InputError(f"{path.name}: two {kind}s share a name (a {kind}'s entries "
                             "split apart?), so HiGHS dropped every name: give each "
                             f"{kind} one name and keep its entries together")
