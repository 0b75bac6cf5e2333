"""What HiGHS's MPS and LP readers make of a file, held against what it says: its read
log (what it ignored or cannot read), a free row's right-hand side taken for the
objective's constant, OBJNAME ignored, semi-integer columns, and names dropped."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError
from coplug.plugins.file_reading import (
    check_offset,
    check_sense,
    is_lp,
    native_name,
    solver_temp_folder,
    write_fd1,
)
from coplug.plugins.interrupts import capture_output
from coplug.plugins.mps_text import SECTION_HEAD, header_at, section_lines

_FREE_ROW = re.compile(rb"^[ \t]*N[ \t]+(\S+)[ \t]*\r?$", re.M)
_LOG_PLACE = re.compile(r"^\s*--> .*:(\d+):\d+\s*$")  # where a parse error is
_EMPTY_LINE = re.compile(rb"^(?=\r?\n)", re.M)
_HIGHS_IGNORED = re.compile(r"(?:WARNING: )?([^\n]*has duplicate [^\n]*)")
_HIGHS_UNDEFINED = re.compile(r'((?:Row|Column) name "[^\n]*" in \w+ section is not defined)')
_HIGHS_SECTION_IGNORED = re.compile(
    r"(\w+)\s+section entries contain\s+(\d+) with (row|col) not in (\w+)\s+section: ignored")


def highs_read(highs: Any, path: Path, text: bytes, tee: bool) -> Any:
    """`highs.readModel(path)` (its text `text`) with the reader's log kept (shown with
    `tee`), and the status; a file read (warnings included) is checked for what HiGHS
    ignored in it. The log goes through a file: HiGHS printed raw memory for a line it
    misread, and captured from the console those bytes stopped the decoding of the warnings
    after them."""
    import highspy

    highs.setOptionValue("output_flag", True)
    highs.setOptionValue("log_to_console", False)
    with solver_temp_folder() as folder:
        kept = folder / "read.log"
        readable = _without_empty_lines(path, text, folder)
        highs.setOptionValue("log_file", native_name(kept))
        try:
            with capture_output(io.StringIO(), capture_fd=True):  # anything past its log
                status = highs.readModel(native_name(readable))
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
        _refuse_unread(path, log)
    return status


def _without_empty_lines(path: Path, text: bytes, folder: Path) -> Path:
    """`path`, or for an MPS file with empty lines a copy in `folder` with each made a
    comment line (same line numbers): HiGHS's fixed-format reader, which takes over when
    the free one fails (a COLUMNS entry for an undeclared row), never returned from a
    96-byte file with one empty line."""
    if is_lp(path) or (b"\n\n" not in text and b"\n\r\n" not in text
                       and not text.startswith((b"\n", b"\r\n"))):
        return path
    copy = folder / (path.name[:-3] if path.name.endswith(".gz") else path.name)
    copy.write_bytes(_EMPTY_LINE.sub(b"*", text))
    return copy


def _refuse_unread(path: Path, log: str) -> None:
    """An InputError quoting HiGHS's reader where its log says why it could not read the file
    (what it does not support, such as an SOS section, or a parse error and where): the
    callers' own message could only guess."""
    lines = log.splitlines()
    errors = [k for k, line in enumerate(lines) if line.startswith("ERROR:")]
    if not errors:
        return
    first = next((k for k in errors if "not supported by HiGHS" in lines[k]), errors[0])
    said = lines[first].split("ERROR:", 1)[1].strip()
    where = _LOG_PLACE.match(lines[first + 1]) if first + 1 < len(lines) else None
    at = f" (line {where.group(1)})" if where else ""
    raise InputError(f"HiGHS cannot read {path.name}{at}: {said}")


def check_highs_read(highs: Any, path: Path, text: bytes) -> None:
    """InputErrors for what HiGHS reads other than as written: a right-hand side on a free
    row (HiGHS makes it the objective's constant; MPS and SCIP ignore it), an objective
    sense it missed ('OBJSENSE MAXIMIZE' on one line) and an objective constant at the
    solvers' infinity."""
    import highspy

    lp = highs.getLp()
    if not is_lp(path):
        _refuse_free_row_rhs(path, text)
        _refuse_other_objective(path, text)
    check_sense(path, text, lp.sense_ == highspy.ObjSense.kMaximize, "HiGHS")
    check_offset(path, lp.offset_, "HiGHS")
    if not is_lp(path):
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
    for _, words in section_lines(text, b"COLUMNS"):
        if len(words) >= 3 and words[1].strip(b"'\"").upper() == b"MARKER":
            inside = words[2].strip(b"'\"").upper() == b"INTORG"
        elif inside:
            names.add(words[0])
    return names


def _refuse_free_row_rhs(path: Path, text: bytes) -> None:
    """An InputError for a right-hand side on a free (N) row other than the first (the
    objective): HiGHS read 7 on such a row as an objective constant of -7."""
    free_rows = set(_FREE_ROW.findall(text, 0, header_at(text, b"COLUMNS"))[1:])
    start = header_at(text, b"RHS")
    if not free_rows or start == len(text):
        return
    end = (found.start() if (found := SECTION_HEAD.search(text, start + 1)) else len(text))
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
    at = header_at(text, b"OBJNAME")
    if at == len(text):
        return
    words = text[at + 1:at + 1 + 4096].split(b"\n", 2)
    named = (words[0].split()[1:] or (words[1].split() if len(words) > 1 else []))[:1]
    free_rows = _FREE_ROW.findall(text, 0, header_at(text, b"COLUMNS"))
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
