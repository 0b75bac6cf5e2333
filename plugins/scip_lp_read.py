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

from coplug.plugins.errors import InputError
from coplug.plugins.file_reading import is_lp
from coplug.plugins.lp_text import (
    LP_COMMENT,
    bound_statements,
    lp_sections,
    objective_tail,
    section_heads,
    section_spans,
    section_words,
    semi_columns,
)

# The words SCIP's reader opens a section at, wherever they stand (a `:` after one makes it
# a name); the two-word ones by their first word where the second follows
_SECTION_WORDS = frozenset({
    b"min", b"minimum", b"minimize", b"max", b"maximum", b"maximize", b"st", b"st.", b"s.t.",
    b"bound", b"bounds", b"gen", b"int", b"general", b"integer", b"generals", b"integers",
    b"bin", b"binary", b"binaries", b"semi", b"semis", b"semi-continuous", b"sos", b"end"})
_TWO_WORD_SECTIONS = {b"subject": b"to", b"such": b"that", b"lazy": b"constraints",
                      b"user": b"cuts"}
_LAST_WORD = re.compile(rb"(?<![^\s+\-*^<>=:\[\]])([^\s+\-*^<>=:\[\]]+)\s*\Z")
_LEADING_NUMBER = re.compile(rb"\A(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
# An SOS section as SCIP's reader takes it: sets `[name:] S1:: column:weight ...`
_SOS_VALUE = rb"[-+]?(?:[0-9]++(?:\.[0-9]*+)?|\.[0-9]++)(?:[eE][-+]?[0-9]++)?+"
# (possessive throughout: a weight's digits read more than one way made a failing match
# take time doubling with each member)
_SOS_BODY = re.compile(rb"\s*(?:(?:[^\s:]+\s*:\s*)?[sS][12]\s*::(?:\s*[^\s:]+\s*:\s*%s)+\s*)*"
                       % _SOS_VALUE)
# A name in Bounds lines (a token that is no value, sense or sign), and the words no column
_BOUND_NAME = re.compile(rb"(?<![^\s<>=])([^\s<>=:\\0-9.+\-][^\s<>=:\\]*)")
_BOUND_WORDS = frozenset({b"free", b"inf", b"infinity"})


def check_scip_lp_text(path: Path, text: bytes) -> None:
    """InputErrors, before SCIP reads an LP file, for what its reader takes apart from the
    file: a section word ending the objective or inside a Generals, Binaries or
    Semi-continuous line, an SOS section of other lines than its sets, a semi-continuous
    column given a lower bound after its declaration, and a column bounded again by a
    bound of 0 or +inf, which it skips."""
    if not is_lp(path):
        return
    heads = section_heads(text)
    sections = lp_sections(text, heads)
    _refuse_section_words(path, text, heads, sections)
    _refuse_odd_sos(path, text, heads)
    _refuse_semi_bounds(path, text, heads, sections)
    _refuse_skipped_bounds(path, sections)


def _refuse_section_words(path: Path, text: bytes, heads: list[re.Match[bytes]],
                          sections: dict[str, list[bytes]]) -> None:
    """An InputError for a section word SCIP's reader opens a section at where the file
    has a column: the objective's last term (`obj: 2 x + int`: its cost dropped, 2 for 4)
    or a word of a Generals, Binaries or Semi-continuous line (` x bin z` made z binary);
    HiGHS's reader takes them as columns, and a section's name opens its own line."""
    last = _LAST_WORD.search(objective_tail(text, heads))
    name = _LEADING_NUMBER.sub(b"", last.group(1)) if last else b""  # `2int`: 2 int to both
    found = [name] if name.lower() in _SECTION_WORDS else []
    for kind in ("general", "binary", "semi"):
        words = [word.lower() for word in section_words(sections, kind)]
        found += [word for word in words if word in _SECTION_WORDS]
        found += [word for word, after in zip(words, words[1:], strict=False)
                  if _TWO_WORD_SECTIONS.get(word) == after]
    if found:
        word = found[0]
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
        body = LP_COMMENT.sub(b"", text[start:stop])
        if _SOS_BODY.fullmatch(body) is None:
            raise InputError(f"{path.name}: the SOS section is no run of sets `name: S1:: "
                             "x:1 y:2` (a stray ':' or a priority after the weights crashed "
                             "SCIP's reader); write each set so")


def _refuse_semi_bounds(path: Path, text: bytes, heads: list[re.Match[bytes]],
                        sections: dict[str, list[bytes]]) -> None:
    """An InputError for a semi-continuous column given a lower bound in a Bounds section
    after its declaration: SCIP's reader applied the declaration with the lower bound read
    so far and dropped it ([2, 4] without 0: 'optimal' 4 for 3); a later upper bound it
    reads as written, and a later lower bound of 0 it skips (harmless: such a column is
    continuous from 0)."""
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
                       if column in semi and lower is not None and lower > 0), None)
        if column is not None:
            raise InputError(f"{path.name}: the semi-continuous column "
                             f"{column.decode(errors='replace')!r} is given a lower bound "
                             "after its Semi-continuous declaration, which SCIP's reader "
                             "applies with the lower bound read before it (it dropped the "
                             "declaration): put the Bounds section first")


def _refuse_skipped_bounds(path: Path, sections: dict[str, list[bytes]]) -> None:
    """An InputError for a column several Bounds statements bound that SCIP's reader bounds
    otherwise than the last statements: it skips a lower bound of 0 and an upper bound of
    +inf, so `x >= 2` then `x = 0` read as [2, 0] ('infeasible') and `x >= 3` then `x >= 0`
    as [3, inf] (binaries and semi-continuous columns alike); HiGHS's reader takes the last.
    Names are counted by one regex first: statements are read only where one repeats."""
    lines = sections.get("bounds", [])
    names = [name for name in _BOUND_NAME.findall(b"\n".join(lines))
             if name.lower() not in _BOUND_WORDS]
    if len(set(names)) == len(names):
        return  # each column bounded once: SCIP's reader takes each as written
    repeated = {name for name, count in Counter(names).items() if count > 1}
    last: dict[bytes, list[float]] = {}
    scip: dict[bytes, list[float]] = {}
    for column, lower, upper in bound_statements(lines):
        if column not in repeated:
            continue
        wanted = last.setdefault(column, [0.0, math.inf])
        read = scip.setdefault(column, [0.0, math.inf])
        if lower is not None:
            wanted[0] = lower
            read[0] = read[0] if lower == 0 else lower
        if upper is not None:
            wanted[1] = upper
            read[1] = read[1] if upper == math.inf else upper
    column = next((column for column in last if last[column] != scip[column]), None)
    if column is not None:
        (lower, upper), (got_lower, got_upper) = last[column], scip[column]
        raise InputError(f"{path.name}: the Bounds statements of "
                         f"{column.decode(errors='replace')!r} end at [{lower:g}, {upper:g}], "
                         f"which SCIP's reader reads as [{got_lower:g}, {got_upper:g}] (it "
                         "skips a later bound of 0 or +inf); give each column one bound "
                         "statement, or solve with solver='highs'")
