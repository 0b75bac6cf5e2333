"""What SCIP's LP reader makes of an LP file's sections other than its rows, held against
what the file says: section words it takes for a new section wherever they stand, SOS
lines it crashed on, semi-continuous declarations it applies with the bounds read before
them, and later bounds of 0 or +inf it skips. HiGHS's reader reads each of these files as
written, or refuses it."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError
from coplug.plugins.file_reading import is_lp
from coplug.plugins.lp_text import (
    bound_statements,
    lp_sections,
    objective_tail,
    section_heads,
    section_spans,
    semi_columns,
)
from coplug.plugins.modeldata import SOLVER_INFINITY

# The words SCIP's reader opens a section at, wherever they stand (a `:` after one makes it
# a name); the two-word ones by their first word where the second follows
_SECTION_WORDS = frozenset({
    b"min", b"minimum", b"minimize", b"max", b"maximum", b"maximize", b"st", b"st.", b"s.t.",
    b"bound", b"bounds", b"gen", b"int", b"general", b"integer", b"generals", b"integers",
    b"bin", b"binary", b"binaries", b"semi", b"semis", b"semi-continuous", b"sos", b"end"})
_TWO_WORD_SECTIONS = {b"subject": b"to", b"such": b"that", b"lazy": b"constraints",
                      b"user": b"cuts"}
_LAST_WORD = re.compile(rb"(?<![^\s+\-*^<>=:\[\]])([^\s+\-*^<>=:\[\]]+)\s*\Z")
# An SOS section as SCIP's reader takes it: sets `[name:] S1:: column:weight ...`
_SOS_VALUE = rb"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_SOS_BODY = re.compile(rb"\s*(?:(?:[^\s:]+\s*:\s*)?[sS][12]\s*::(?:\s*[^\s:]+\s*:\s*%s)+\s*)*"
                       % _SOS_VALUE)
_LP_COMMENT = re.compile(rb"\\[^\n]*")


def check_scip_lp_text(path: Path, text: bytes) -> None:
    """InputErrors, before SCIP reads an LP file, for what its reader takes apart from the
    file: a section word ending the objective or inside a Generals, Binaries or
    Semi-continuous line, an SOS section of other lines than its sets, and a
    semi-continuous column bounded after its declaration."""
    if not is_lp(path):
        return
    heads = section_heads(text)
    sections = lp_sections(text, heads)
    _refuse_section_words(path, text, heads, sections)
    _refuse_odd_sos(path, text, heads)
    _refuse_semi_bounds(path, text, heads, sections)


def _refuse_section_words(path: Path, text: bytes, heads: list[re.Match[bytes]],
                          sections: dict[str, list[bytes]]) -> None:
    """An InputError for a section word SCIP's reader opens a section at where the file
    has a column: the objective's last term (`obj: 2 x + int`: its cost dropped, 2 for 4)
    or a word of a Generals, Binaries or Semi-continuous line (` x bin z` made z binary);
    HiGHS's reader takes them as columns, and a section's name opens its own line."""
    last = _LAST_WORD.search(objective_tail(text, heads))
    found = [last.group(1)] if last else []
    for kind in ("general", "binary", "semi"):
        words = [word.lower() for line in sections.get(kind, [])
                 for word in line.split(b"\\", 1)[0].split()]
        found += [word for word in words if word in _SECTION_WORDS]
        found += [word for word, after in zip(words, words[1:], strict=False)
                  if _TWO_WORD_SECTIONS.get(word) == after]
    word = next((word for word in found if word.lower() in _SECTION_WORDS
                 or word.lower() in _TWO_WORD_SECTIONS), None)
    if word is not None:
        raise InputError(f"{path.name}: the column {word.decode(errors='replace')!r} is "
                         "named like an LP section, which SCIP's reader opens a section at "
                         "where it stands (it dropped the column's cost or read the next "
                         "names as another section); rename it or solve with solver='highs'")


def _refuse_odd_sos(path: Path, text: bytes, heads: list[re.Match[bytes]]) -> None:
    """An InputError for an SOS section that is no run of sets `[name:] S1:: x:1 y:2`: a
    stray `:` or a priority after the weights crashed the process in SCIP's reader."""
    for word, start, stop in section_spans(text, heads):
        if word != b"sos":
            continue
        body = _LP_COMMENT.sub(b"", text[start:stop])
        if _SOS_BODY.fullmatch(body) is None:
            raise InputError(f"{path.name}: the SOS section is no run of sets `name: S1:: "
                             "x:1 y:2` (a stray ':' or a priority after the weights crashed "
                             "SCIP's reader); write each set so")


def _refuse_semi_bounds(path: Path, text: bytes, heads: list[re.Match[bytes]],
                        sections: dict[str, list[bytes]]) -> None:
    """An InputError for a semi-continuous column given a lower bound in a Bounds section
    after its declaration: SCIP's reader applied the declaration with the lower bound read
    so far and dropped it ([2, 4] without 0: 'optimal' 4 for 3); a later upper bound it
    reads as written."""
    semi = semi_columns(sections)
    if not semi:
        return
    spans = section_spans(text, heads)
    declared = next(start for word, start, _ in spans if word.startswith(b"semi"))
    for word, start, stop in spans:
        if start < declared or not word.startswith(b"bound"):
            continue
        lines = text[start:stop].splitlines()
        column = next((column for column, lower, _ in bound_statements(lines)
                       if column in semi and lower is not None), None)
        if column is not None:
            raise InputError(f"{path.name}: the semi-continuous column "
                             f"{column.decode(errors='replace')!r} is given a lower bound "
                             "after its Semi-continuous declaration, which SCIP's reader "
                             "applies with the lower bound read before it (it dropped the "
                             "declaration): put the Bounds section first")


def check_scip_lp_bounds(scip: Any, path: Path, text: bytes) -> None:
    """An InputError where SCIP read a column that Bounds statements bound more than once
    with other bounds than the last statements give it: its reader skips a lower bound of
    0 and an upper bound of +inf, so `x >= 2` then `x = 0` read as [2, 0] ('infeasible')
    and `x >= 3` then `x >= 0` as [3, inf]; HiGHS's reader takes the last."""
    if not is_lp(path):
        return
    sections = lp_sections(text, section_heads(text))
    lines = sections.get("bounds", [])
    if not lines:
        return
    statements = list(bound_statements(lines))
    columns = [column for column, _, _ in statements]
    if len(set(columns)) == len(columns):
        return  # each column bounded once: SCIP's reader takes each as written
    binary = semi_columns(sections) | {word for line in sections.get("binary", [])
                                       for word in line.split(b"\\", 1)[0].split()}
    expected: dict[bytes, list[float | None]] = {}
    for column, lower, upper in statements:
        sides = expected.setdefault(column, [None, None])
        sides[0] = sides[0] if lower is None else lower
        sides[1] = sides[1] if upper is None else upper
    counts = Counter(columns)
    for var in scip.getVars():
        name = var.name.encode()
        if counts.get(name, 0) < 2 or name in binary:
            continue
        read = (_as_float(var.getLbOriginal()), _as_float(var.getUbOriginal()))
        for side, want, got in zip(("lower", "upper"), expected[name], read, strict=True):
            if want is not None and not _same_bound(want, got, var.vtype()):
                raise InputError(f"{path.name}: SCIP read column {var.name!r} with the "
                                 f"{side} bound {got:g} where its last Bounds statement gives "
                                 f"{want:g} (SCIP's reader skips a later bound of 0 or +inf); "
                                 "give each column one bound statement, or solve with "
                                 "solver='highs'")


def _as_float(value: float) -> float:
    """A bound SCIP read, its infinity (1e20) as inf."""
    return math.inf if value >= SOLVER_INFINITY else -math.inf if value <= -SOLVER_INFINITY \
        else value


def _same_bound(want: float, got: float, vtype: str) -> bool:
    """Whether SCIP's bound `got` is the statement's `want` (rounded inward on an integer
    column, as SCIP rounds it)."""
    if want == got:
        return True
    if vtype in ("INTEGER", "IMPLINT") and math.isfinite(want):
        return got in (math.floor(want), math.ceil(want))
    return math.isclose(want, got, rel_tol=1e-12, abs_tol=1e-12)
