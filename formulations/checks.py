"""Argument checks shared by the instance generators and formulation builders: seeds,
counts, positive numbers, numeric arrays and memory, each refused with an InputError naming
the argument before numpy, torch or the OOM killer act deep inside."""

from __future__ import annotations

import math
import numbers
import re
from pathlib import Path

import numpy as np

from coplug.plugins.arguments import check_exact_integers, detached, refuse_masked
from coplug.plugins.errors import InputError

SEED_LIMIT = 2**63


def check_seed(seed: object, name: str = "seed") -> int:
    """A seed as an int in [0, 2**63), the range numpy and torch both take; else InputError."""
    if not _is_int(seed) or not 0 <= int(seed) < SEED_LIMIT:
        raise InputError(f"{name} must be a non-negative integer below 2**63, got {seed!r}")
    return int(seed)


def check_count(value: object, name: str, minimum: int, maximum: int | None = None) -> int:
    """A whole number >= minimum (and <= maximum if given; bools refused), else InputError."""
    top = "" if maximum is None else f" and <= {maximum}"
    if not _is_int(value) or int(value) < minimum or (maximum is not None and value > maximum):
        raise InputError(f"{name} must be an integer >= {minimum}{top}, got {value!r}")
    return int(value)


def check_positive(value: object, name: str, zero_ok: bool = False,
                   inf_ok: bool = False) -> float:
    """A number > 0 (>= 0 if zero_ok; inf allowed if inf_ok; bools refused), else
    InputError naming it."""
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    try:  # an int past float's range (10**400) overflowed math.isnan with a traceback
        number = float(value) if real else math.nan
    except OverflowError:
        number = math.nan
    ok = not math.isnan(number) and (inf_ok or math.isfinite(number)) and (
        number > 0 or (zero_ok and number == 0))
    if not ok:
        bound = ">= 0" if zero_ok else "> 0"
        shown = (f"an integer of {len(str(abs(value)))} digits" if isinstance(value, int)
                 and not isinstance(value, bool) and math.isnan(number) else repr(value))
        raise InputError(f"{name} must be a {'' if inf_ok else 'finite '}number {bound}, "
                         f"got {shown}")
    return number


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    """`value` if it is one of the strings `choices`, else an InputError listing them (an
    array in its place failed on numpy's "truth value ... is ambiguous", a list on hashing)."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def plain_array(data: object, what: str) -> np.ndarray:
    """`data` as a numpy array of any dtype, or an InputError naming `what` (ragged data, a
    masked array, whose masked entries np.asarray would use); a torch tensor's values."""
    refuse_masked(data, what)
    try:
        return np.asarray(detached(data, what))
    except ValueError:
        raise InputError(f"{what} must be a rectangular array") from None


def numeric_array(data: object, what: str, booleans: bool = True) -> np.ndarray:
    """`data` as a float array, or an InputError naming `what` (strings, objects, ragged;
    booleans too unless `booleans`; masked arrays; integers float64 would round); a torch
    tensor is read as its values."""
    refuse_masked(data, what)
    data = detached(data, what)
    try:
        array = np.asarray(data)
    except ValueError:
        raise InputError(f"{what} must be a rectangular array of numbers") from None
    if array.dtype.kind not in ("biuf" if booleans else "iuf"):
        raise InputError(f"{what} must be numeric, got {array.dtype} data")
    check_exact_integers(array.reshape(-1), what)  # 2**53 + 1 became 2**53 with no word
    return array.astype(float)


# str.splitlines' line ends but form feed and vertical tab, which float() reads as spaces
_LINE_END = re.compile("\r\n|[\n\r\x1c\x1d\x1e\x85\u2028\u2029]")


def text_lines(text: str) -> list[str]:
    """The lines of `text` as `str.splitlines` gives them, but not broken at form feeds and
    vertical tabs: float() reads those as spaces, and a 3 x 3 matrix with form feeds
    between its numbers read as 9 x 1."""
    lines = _LINE_END.split(text)
    if lines and not lines[-1]:
        lines.pop()
    return lines


def read_text_file(path: Path, what: str) -> str:
    """The file's text (a UTF-8 byte-order mark dropped: Windows editors write one, and it
    hid a TSPLIB file's first keyword), or an InputError naming it when it is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} {path} is not UTF-8 text (byte {exc.start}: "
                         f"{exc.object[exc.start:exc.start + 1]!r})") from None


def available_memory() -> int | None:
    """MemAvailable from /proc/meminfo in bytes, or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_memory(needed: float, what: str, hint: str) -> None:
    """Refuse work needing more memory than the machine has available (the OS would kill
    the process without a message); skipped where /proc/meminfo is not readable."""
    available = available_memory()
    if available is not None and needed > available:
        raise InputError(f"{what} needs about {needed / 2**30:.1f} GiB of memory, this machine "
                         f"has {available / 2**30:.1f} GiB available: {hint}")


def require_instance(value: object, cls: type, what: str, hint: str) -> None:
    """Refuse anything but a `cls` for `what` by name (a list or grid failed on a missing
    attribute deep inside the builder); `hint` says how to make one."""
    if not isinstance(value, cls):
        raise InputError(f"{what} takes a {cls.__name__}, got {type(value).__name__} ({hint})")


def _is_int(value: object) -> bool:
    """True for Python and numpy integers, False for bools, floats and anything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
