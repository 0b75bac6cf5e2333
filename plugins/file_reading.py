"""Reading an MPS or LP file for the solvers: its bytes (a .gz file unpacked within a
memory budget), its name as the C readers take it, and the checks every read starts with.

The two readers differ on files they both accept (a duplicate entry, a constant on a row's
left, an objective sense spelled one way, an MPS name past 255 bytes), and a misread file
is then solved as if it were the file: the checks here and in `mps_text`, `lp_text`,
`scip_file_read` and `highs_file_read` turn each known misreading into an InputError that
names it."""

from __future__ import annotations

import gzip
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from coplug.plugins.errors import InputError
from coplug.plugins.lp_text import check_lp_text
from coplug.plugins.modeldata import SOLVER_INFINITY
from coplug.plugins.mps_text import check_mps_data, header_at

_MPS_SECTION = re.compile(rb"^(ROWS|COLUMNS|ENDATA)[ \t]*\r?$", re.M)
_MPS_SENSE = re.compile(rb"^OBJSENSE\b[ \t]*(?:\r?\n[ \t]+)?(\w*)", re.M | re.I)
_LP_FIRST_WORD = re.compile(rb"\A(?:[ \t]*(?:\\[^\n]*)?\r?\n)*[ \t]*([A-Za-z]+)")
_LP_MAXIMIZE = {b"max", b"maximize", b"maximise", b"maximum"}
_LP_MINIMIZE = {b"min", b"minimize", b"minimise", b"minimum"}
_BARE_CR = re.compile(rb"\r(?!\n)(?!\Z)")  # one ending the file ends its last line
# Bytes a model's text holds: printable ASCII, tab, line ends, vertical tab and form feed
# (blanks to both readers), and UTF-8's; the rest are control bytes (`_refuse_control`).
_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r\x0b\x0c" + bytes(range(128, 256))
_CONTROL_BYTE = re.compile(rb"[\x01-\x08\x0e-\x1f\x7f]")
_MPS_END = re.compile(rb"^ENDATA", re.M)
_CONTROL_CHUNK = 1 << 16


def checked_text(path: Path) -> bytes:
    """The file's bytes, a .gz file's unpacked (the checks read them once), after the checks
    that an .lp file is no MPS file (`refuse_misnamed`), of its encoding, and of what the two
    readers take apart in an MPS file (`mps_text.check_mps_data`) or an LP file
    (`lp_text.check_lp_text`)."""
    text = file_text(path)
    refuse_misnamed(path, text)
    _refuse_encoding(path, text)
    if is_lp(path):
        check_lp_text(path, text)
    else:
        check_mps_data(path, text)
    return text


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
    _refuse_control(path, text)
    bare = _BARE_CR.search(text) if b"\r" in text else None
    if bare is not None:  # one such line end made both readers drop a bound: -8 for -7
        line = text.count(b"\n", 0, bare.start()) + 1
        raise InputError(f"{path.name}: line {line} ends with a bare carriage return (classic "
                         "Mac OS), which the readers do not take for a line end; save the "
                         "file with \\n or \\r\\n line ends")


def _refuse_control(path: Path, text: bytes) -> None:
    """An InputError for a control byte in the model (one after an MPS file's ENDATA, such
    as a DOS end-of-file mark, is read by neither): the readers split fields on different
    bytes, and `UP bnd\x1fx 2` lost its bound in SCIP (HiGHS refused the line)."""
    chunks = range(0, len(text), _CONTROL_CHUNK)  # translate holds a buffer of its input's size
    if not any(text[k:k + _CONTROL_CHUNK].translate(None, _TEXT_BYTES) for k in chunks):
        return  # the common case, checked in C
    found = _CONTROL_BYTE.search(text)
    end = None if is_lp(path) else _MPS_END.search(text)
    if found is None or (end is not None and found.start() > end.start()):
        return
    line = text.count(b"\n", 0, found.start()) + 1
    raise InputError(f"{path.name}: line {line} holds the control byte {found.group()!r}, "
                     "which the solvers' readers take apart differently (a blank to one, part "
                     "of a name to the other): remove it")


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
def solver_temp_folder(prefix: str = "coplug-") -> Iterator[Path]:
    """A temporary folder for files the solvers' C code opens (a copy to read, a log),
    removed after; a temporary folder whose name is no UTF-8 (TMPDIR in Latin-1) is an
    InputError naming TMPDIR, where highspy had raised a TypeError on the log's name."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        try:
            os.fsencode(folder).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"the temporary folder {folder!r} is not UTF-8, which the "
                             "solvers take file names in: set TMPDIR to another folder"
                             ) from None
        yield Path(folder)


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
    if is_lp(path) and b"ENDATA" in text and _mps_sections(text):
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
    if is_lp(path):
        found = _LP_FIRST_WORD.match(text)
        word = found.group(1).lower() if found else b""
        return True if word in _LP_MAXIMIZE else False if word in _LP_MINIMIZE else None
    found = _MPS_SENSE.search(text, 0, header_at(text, b"COLUMNS"))
    if found is None:  # a section after BOUNDS (HiGHS read its MAX, and was called wrong)
        late = header_at(text, b"OBJSENSE")
        found = _MPS_SENSE.match(text, late + 1) if late < len(text) else None
    if found is None:
        return False
    word = found.group(1).upper()
    return True if word.startswith(b"MAX") else False if word.startswith(b"MIN") else None


def is_lp(path: Path) -> bool:
    """Whether `path` names an LP (not an MPS) file."""
    return path.name.lower().removesuffix(".gz").endswith(".lp")


def check_sense(path: Path, text: bytes, read_maximize: bool, solver: str) -> None:
    """An InputError where the file says one objective sense and `solver` read the other."""
    said = declared_maximize(path, text)
    if said is not None and said != read_maximize:
        words = ("maximize", "minimize") if said else ("minimize", "maximize")
        fix = ("write OBJSENSE on a line of its own and MAX or MIN indented on the next"
               if not is_lp(path) else "spell it Maximize or Minimize")
        raise InputError(f"{path.name} says {words[0]} but {solver}'s reader read "
                         f"{words[1]}: {fix}")


def check_offset(path: Path, offset: float, solver: str) -> None:
    """An InputError for an objective constant the solvers take as infinite."""
    if abs(offset) >= SOLVER_INFINITY:
        raise InputError(f"{path.name}: the objective's constant is {offset:g} as {solver} "
                         f"reads it ({SOLVER_INFINITY:g} or more is infinite to the "
                         "solvers); remove it")


def write_fd1(text: str) -> None:
    """`text` on file descriptor 1, where the solvers' own logs go; on sys.stdout without one."""
    sys.stdout.flush()
    try:
        os.write(1, text.encode())
    except OSError:
        sys.stdout.write(text)
