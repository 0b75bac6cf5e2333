"""What an LP file's text says where SCIP's and HiGHS's readers take it apart: a missing
or early End, objective and row text one reader misreads (a second row after a right-hand
side, unsigned terms, a lone trailing sign, `1e+ z`, an unhalved quadratic objective),
Bounds that are no bound statements, binaries bounded outside [0, 1]; and the LP section
and word helpers the solver-specific checks use."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator
from itertools import repeat
from pathlib import Path

from coplug.plugins.errors import InputError
from coplug.plugins.modeldata import SOLVER_INFINITY

# What SCIP's LP reader ends a word at, as byte values
_LP_DELIMITERS = frozenset(b" \t\r\n\f\v+-*^<>=:[]")
LP_COMMENT = re.compile(rb"\\[^\n]*")
LP_SECTION = re.compile(rb"^[ \t]*(subject[ \t]+to|such[ \t]+that|st\.?|s\.t\.|bounds?|"
                         rb"generals?|gen|integers?|int|binary|binaries|bin|semi-continuous|"
                         rb"semis?|sos|lazy[ \t]+constraints|user[ \t]+cuts|end)(?=[ \t\\]|\r?$)",
                         re.M | re.I)  # names may follow
# The section heads whose lines are rows, as `LP_SECTION` finds them (lower case)
_ROW_HEADS = (b"subject", b"such", b"st", b"s.t.", b"lazy", b"user")
# Where `LP_SECTION` may match after a line break: a plain scan, then the match (a regex
# with `^` and re.M took 0.2 s on a 40 MB file)
_MAYBE_SECTION = re.compile(rb"\n[ \t]*[sSbBgGiIlLuUeE]")
_LP_SENSE_WORD = re.compile(rb"\A(?:[ \t]*(?:\\[^\n]*)?\r?\n)*[ \t]*(?i:min|max)\w*")
# Row grammar, as SCIP's LP reader splits tokens (white space and + - : < > = [ ] * ^ end
# one; a value starts with a digit or a point): a name, a value, one SCIP counts as zero
_ROW_NAME = rb"[^\s+\-:<>=\[\]*^\\/0-9.][^\s+\-:<>=\[\]*^\\]*"
_ROW_VALUE = rb"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|(?i:inf(?:inity)?)\b"
# A row's `sense [sign] value` and more than a comment, an indicator's `->` or the next
# row's `name:` after it (SCIP's reader reads `c1: x <= 4 c2: y <= 3` as written; the `>`
# of `->` is no sense). One pattern for each sense character, each opening with it: one
# opening with a plain character is searched several times faster than one opening with a
# class or a look-behind.
_AFTER_SIDE = tuple(re.compile(rb"%s=?\s*+(?:[-+]\s*+)?(?>%s)[ \t]*+(?!->|%s[ \t]*:)[^\s\\]"
                               % (sense, _ROW_VALUE, _ROW_NAME))
                    for sense in (b"<", b">(?<!->)", b"="))
# A term of zero coefficient (SCIP's reader counts none: `c1: 0 y x` read as x, `0 y + 0 w
# x` too, and `1e-30 y x`: it counts 1e-9 and less as zero) with a name or value after it
# and no sign between; opening with the coefficient's first character (a zero, a point) or
# its exponent's `e-` (9 or more), as above. A tiny coefficient is matched by its form (8
# zeros after the point, a fraction with any negative exponent as in 0.1e-8, an exponent of
# -9 or less): a larger one so followed SCIP's reader refuses itself, as HiGHS's refuses
# all. One term is matched, not the run of them: a run searched from each zero took time
# growing as its square (16,000 zero terms: 44 s).
_TINY_EXPONENT = rb"0*+(?:[1-9][0-9]+|9)(?![0-9.])"
_UNSIGNED_AFTER_ZERO = tuple(re.compile(
    rb"%(o)s(?>%(r)s)\s*+(?>%(n)s)\s++(?:%(n)s|[0-9]|\.[0-9])"
    % {b"o": first, b"r": rest, b"n": _ROW_NAME})
    for first, rest in (
        (rb"0(?<![^\s+\-:<>=]0)",
         rb"0*(?:\.[0-9]*[eE]-[0-9]+|(?:\.(?:0{8}[0-9]*|0*))?(?:[eE](?:-%s|[-+]?[0-9]+))?)"
         rb"(?![0-9.])" % _TINY_EXPONENT),
        (rb"\.(?<![^\s+\-:<>=]\.)",
         rb"(?:[0-9]+[eE]-[0-9]+|(?:0{8}[0-9]*|0+)(?:[eE][-+]?[0-9]+)?)(?![0-9.])"),
        (rb"e-(?<=[0-9.]e-)", _TINY_EXPONENT), (rb"E-(?<=[0-9.]E-)", _TINY_EXPONENT)))
# An objective's last term with a number after it and no sign (`obj: x 5`: SCIP's reader
# made 5 the constant), looked for at its end only
_UNSIGNED_CONSTANT = re.compile(rb"(?<![^\s+\-:])(?!(?i:inf(?:inity)?|nan)\s)(?>%s)\s++"
                                rb"(?:[0-9]|\.[0-9])[^\s+\-]*\s*\Z" % _ROW_NAME)
_SLASH_NAME = re.compile(rb"(?<![^\s+\-:<>=\[\]*^])/(?![0-9])")
# A number's exponent sign without digits (`1e+ z`), and what it is looked for as first:
# the text with digits and points as 0, e as e, signs as +, all else a space
_BARE_EXPONENT = re.compile(rb"(?<![^\s+\-:<>=\[\]*^])(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]"
                            rb"(?![0-9])")
_EXPONENT_SHAPES = bytes(
    ord("0") if chr(c) in "0123456789." else ord("e") if chr(c) in "eE" else
    ord("+") if chr(c) in "+-" else ord(" ") for c in range(256))
# A number ending in a point glued to what follows (`3.y`, `3.+y`, `2.>=`: SCIP's reader
# took a column named from the point on, HiGHS's 3 and the rest; `3.e2` is a number to
# both), and what it is looked for as first: the text with digits as 0, points as
# themselves, what may follow the point so as a, all else a space
_POINT_NAME = re.compile(rb"(?<![^\s+\-:<>=\[\]*^])[0-9]+\.[^\s0-9eE]")
_POINT_SHAPES = bytes(
    ord("0") if chr(c) in "0123456789" else ord(".") if chr(c) == "." else
    ord(" ") if chr(c) in " \t\r\n\x0b\x0ceE" else ord("a") for c in range(256))
_GAP = rb"(?:\s|\\[^\n]*)*+"  # white space and comments
_HALVED = re.compile(rb"%s/%s2(?:\.0*)?(?:[eE][-+]?0+)?(?![0-9.])" % (_GAP, _GAP))  # 2.0, 2e0
# A row whose first term is a value before its sense (`c1: 1 <= 3 x <= 10`: a ranged row)
_VALUE_FIRST = re.compile(rb"[ \t]*(?:[^\s:]+[ \t]*:)?[ \t]*[-+]?[ \t]*(?:%s)[ \t]*[<>=]"
                          % _ROW_VALUE)
_LP_CONTENT = re.compile(rb"^[ \t]*[^\s\\]", re.M)  # a line that is no comment
_LP_END = re.compile(rb"^[ \t]*end[ \t]*(\\.*)?\r?$", re.M | re.I)  # a comment may follow
_LP_TOKEN = re.compile(rb"<=|>=|=<|=>|<|>|=|[^\s<>=]+")
_LP_VALUE = re.compile(rb"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|"
                       rb"[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)")
_LP_EQUALS = rb"(?<![<>])=(?![<>])"
_LP_INFINITE_SIDE = re.compile(
    rb"(?:>=|=>|>|%(eq)s)[ \t]*\+?[ \t]*inf|(?:<=|=<|<|%(eq)s)[ \t]*-[ \t]*inf"
    rb"|(?<![-\w.])\+?[ \t]*inf(?:inity)?[ \t]*(?:<=|=<|<|%(eq)s)"
    rb"|-[ \t]*inf(?:inity)?[ \t]*(?:>=|=>|>|%(eq)s)" % {b"eq": _LP_EQUALS})
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


def check_lp_text(path: Path, text: bytes) -> None:
    """InputErrors for what SCIP's and HiGHS's LP readers take apart in an LP file's text:
    no End line, an early End, rows one reader misreads, binaries bounded outside [0, 1],
    stray Bounds words, semi-continuous columns bounded below 0."""
    ends = _LP_END.search(text, max(0, len(text) - 4096)) or _LP_END.search(text)  # tail first
    if _LP_CONTENT.search(text) and not ends:  # empty: no variables
        raise InputError(f"{path.name} has no End line: an LP file ends with one, and one "
                         "cut short was solved by SCIP's reader as the smaller model it "
                         "read (its bounds or integers lost; HiGHS's refuses it)")
    _refuse_early_end(path, text)
    heads = section_heads(text)
    _refuse_misread_rows(path, text, heads)
    sections = lp_sections(text, heads)
    _check_lp_binaries(path, sections)
    _refuse_stray_bound_words(path, sections)
    _refuse_negative_semi(path, sections)


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
        rest = LP_COMMENT.sub(b"", text[end:])
        if rest.strip():
            number = text.count(b"\n", 0, start) + 1
            raise InputError(f"{path.name}:{number}: the word End ends the model for SCIP's "
                             "LP reader, but more of the model follows it (SCIP's reader "
                             "drops it, HiGHS's reads the word otherwise): keep End for the "
                             "last line")
        return


def _refuse_misread_rows(path: Path, text: bytes, heads: list[re.Match[bytes]]) -> None:
    """InputErrors for objective and row text one reader misreads where the other refuses
    it: more after a row's right-hand side on its line (SCIP's reader starts a new row:
    `x + y <= 2 z <= 4` read as `x + y <= 2` and `z <= 4`), a term without a sign after
    zero ones (`0 y x` read as `x`) or after the objective (`obj: x 5`: a constant 5), a
    name starting with `/`, a lone sign ending the objective (dropped), an exponent sign
    without digits (HiGHS read `1e+ z` as `1 e + z`) and an objective's quadratic part
    without `/2` (HiGHS took it unhalved). Each is searched in C (0.3-0.5 s on 25-40 MB
    files SCIP reads in 0.7-1.1 s); a hit in a comment is passed over. `heads`: the file's
    section heads (`section_heads`)."""
    for start, stop, objective in _row_regions(text, heads):
        for pattern in () if objective else _AFTER_SIDE:  # SCIP refuses a sense there
            _refuse_pattern(path, text, start, stop, pattern, "more follows a row's "
                            "right-hand side on its line, where SCIP's LP reader starts a new "
                            "row (`x + y <= 2 z <= 4` read as `x + y <= 2` and `z <= 4`); "
                            "write one row a line")
        for pattern in _UNSIGNED_AFTER_ZERO:
            _refuse_pattern(path, text, start, stop, pattern, "a term follows another "
                            "without a sign, which SCIP's LP reader takes after terms of zero "
                            "coefficient (`0 y x` read as x); put + or - between terms")
        if text.find(b"/", start, stop) >= 0:
            _refuse_pattern(path, text, start, stop, _SLASH_NAME, "a name starts with '/', "
                            "which SCIP's LP reader takes for a column and HiGHS's refuses; "
                            "rename it")
        if _bare_exponent_may_stand(text, start, stop):
            _refuse_pattern(path, text, start, stop, _BARE_EXPONENT, "a number has an "
                            "exponent sign but no exponent digits, which HiGHS's LP reader "
                            "takes for a column `e` (`1e+ z` read as 1 e + z); write the "
                            "exponent")
        shapes = text[start:stop].translate(_POINT_SHAPES)
        if shapes.find(b"0.a") >= 0 or shapes.find(b"0..") >= 0:
            _refuse_pattern(path, text, start, stop, _POINT_NAME, "a number ending in a point "
                            "is glued to what follows, which SCIP's LP reader takes for a "
                            "column named from the point on (`3.y` read as `.y`, `3.+y` as "
                            "`.`) and HiGHS's for 3 and the rest; put a space after the "
                            "number", skip_brackets=False)
        if objective:
            _refuse_objective_tail(path, text, start, stop)


def section_heads(text: bytes) -> list[re.Match[bytes]]:
    """`LP_SECTION`'s match for each section head of an LP file, in order."""
    lines = [0, *(found.start() + 1 for found in _MAYBE_SECTION.finditer(text))]
    return [head for head in map(LP_SECTION.match, repeat(text), lines) if head is not None]


def section_spans(text: bytes, heads: list[re.Match[bytes]]) -> list[tuple[bytes, int, int]]:
    """(section word in lower case, body start, body stop) of each section `heads` opens."""
    stops = [head.start() for head in heads[1:]] + [len(text)] if heads else []
    return [(head.group(1).lower(), head.end(), stop)
            for head, stop in zip(heads, stops, strict=True)]


def _bare_exponent_may_stand(text: bytes, start: int, stop: int) -> bool:
    """Whether text[start:stop] may hold a number's exponent sign without digits: plain
    searches for an exponent sign, then the text's shapes (`_EXPONENT_SHAPES`)."""
    if not any(text.find(sign, start, stop) >= 0 for sign in (b"e+", b"e-", b"E+", b"E-")):
        return False
    shapes = text[start:stop].translate(_EXPONENT_SHAPES)
    return any(shapes.find(bare) >= 0 for bare in (b"0e+ ", b"0e+e", b"0e++")) \
        or shapes.endswith(b"0e+")


def _row_regions(text: bytes, heads: list[re.Match[bytes]]) -> list[tuple[int, int, bool]]:
    """(start, stop, is objective) of the text an LP file's objective and rows stand in: after
    the objective's sense word up to the first section, and each Subject To, Lazy
    Constraints and User Cuts section's body."""
    regions = [(start, stop, False) for word, start, stop in section_spans(text, heads)
               if word.startswith(_ROW_HEADS)]
    sense = _LP_SENSE_WORD.match(text)
    if sense is not None:
        regions.append((sense.end(), heads[0].start() if heads else len(text), True))
    return regions


def _refuse_pattern(path: Path, text: bytes, start: int, stop: int, pattern: re.Pattern[bytes],
                    why: str, skip_brackets: bool = True) -> None:
    """An InputError quoting the line of the first match of `pattern` in text[start:stop]
    that stands in no comment (the search goes on past the comment's line) and, with
    `skip_brackets`, in no quadratic part's brackets and after no `]` (`] / 2`)."""
    brackets = None  # the region's [ ] spans, read at the first hit
    comment = _CommentLines(text)
    at = start
    while (found := pattern.search(text, at, stop)) is not None:
        at = found.start() + (found.group(0)[:1] in (b":", b"\n"))
        if comment.before(at):
            at = comment.line_end + 1
            continue
        if skip_brackets:
            brackets = _bracket_spans(text, start, stop) if brackets is None else brackets
        if skip_brackets and (_inside(brackets, at) or _after_bracket(text, start, at)):
            at += 1
            continue
        line_start, line_end = comment.line_start, comment.line_end
        shown = text[line_start:line_end].strip()
        if pattern in _AFTER_SIDE and _VALUE_FIRST.match(text, line_start) is not None:
            why = ("a row opens with a value and a sense (`1 <= 3 x <= 10`), which the "
                   "readers take otherwise or refuse: write a range as two rows")
        number = text.count(b"\n", 0, at) + 1
        raise InputError(f"{path.name}:{number}: {shown[:80].decode(errors='replace')!r}: "
                         f"{why}")


class _CommentLines:
    """Where the line holding a position starts and ends, and whether a comment (`\\`)
    opens on it before the position; each line is read once however many hits it holds
    (a 10 MB comment line of many hits was read again for each)."""

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.line_start, self.line_end, self.backslash = -1, -1, -1

    def before(self, at: int) -> bool:
        """Whether `at` stands in a comment."""
        if not self.line_start <= at <= self.line_end:
            self.line_start = self.text.rfind(b"\n", 0, at) + 1
            end = self.text.find(b"\n", at)
            self.line_end = len(self.text) if end < 0 else end
            self.backslash = self.text.find(b"\\", self.line_start, self.line_end)
        return 0 <= self.backslash < at


def _bracket_spans(text: bytes, start: int, stop: int) -> list[tuple[int, int]]:
    """The (open, close) positions of the quadratic parts' [ ] in text[start:stop], brackets
    in comments left out (an unclosed `[` in a comment hid every later row's fault)."""
    spans: list[tuple[int, int]] = []
    comment = _CommentLines(text)
    opened = text.find(b"[", start, stop)
    while opened >= 0:
        if comment.before(opened):
            opened = text.find(b"[", comment.line_end, stop)
            continue
        closed = opened
        while (closed := text.find(b"]", closed + 1, stop)) >= 0 and comment.before(closed):
            pass
        spans.append((opened, stop if closed < 0 else closed))
        opened = text.find(b"[", spans[-1][1], stop)
    return spans


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether `at` lies inside one of the (open, close) `spans`, sorted."""
    k = bisect.bisect_right(spans, (at, math.inf)) - 1
    return k >= 0 and spans[k][0] < at < spans[k][1]


def _after_bracket(text: bytes, start: int, at: int) -> bool:
    """Whether the text before `at`, comments left out, ends with a `]` (`] / 2`)."""
    window_start = text.rfind(b"\n", start, max(start, at - 256)) + 1 or start
    return LP_COMMENT.sub(b"", text[max(start, window_start):at]).rstrip().endswith(b"]")


def _refuse_objective_tail(path: Path, text: bytes, start: int, stop: int) -> None:
    """An InputError for an objective ending in a lone sign (SCIP's reader drops it) or in
    a number after its last term with no sign (SCIP's reader made it the constant), or
    holding a quadratic part not closed by `]/2` (HiGHS's reader took it unhalved, SCIP's
    refuses it). Its end is read past comments from its last lines (4 kB or more, whole
    lines: a window opening inside a long comment read the comment as the objective)."""
    tail = _text_tail(text, start, stop)
    number = text.count(b"\n", 0, start) + 1
    if tail.endswith((b"+", b"-")):
        raise InputError(f"{path.name}:{number}: the objective ends with a lone sign, which "
                         "SCIP's LP reader drops (HiGHS's refuses it): finish the term or "
                         "remove the sign")
    if _UNSIGNED_CONSTANT.search(tail[-256:]) is not None:
        raise InputError(f"{path.name}:{number}: the objective ends with a number after its "
                         "last term and no sign, which SCIP's LP reader takes for a constant "
                         "(HiGHS's refuses it): put + or - before the constant")
    closed = text.find(b"]", start, stop)
    while closed >= 0:
        line_start = text.rfind(b"\n", 0, closed) + 1
        if b"\\" not in text[line_start:closed] and _HALVED.match(text, closed + 1) is None:
            line = text.count(b"\n", 0, closed) + 1
            raise InputError(f"{path.name}:{line}: the "
                             "objective's quadratic part [ ... ] is not followed by /2, as "
                             "the LP format halves it (HiGHS's reader takes it unhalved, "
                             "SCIP's refuses it): end it with ]/2 and double its "
                             "coefficients")
        closed = text.find(b"]", closed + 1, stop)


def _text_tail(text: bytes, start: int, stop: int) -> bytes:
    """The last lines of text[start:stop] (4 kB or more, whole lines), comments removed."""
    window = text.rfind(b"\n", start, max(start, stop - 4096)) + 1 or start
    return LP_COMMENT.sub(b"", text[max(start, window):stop]).rstrip()


def objective_tail(text: bytes, heads: list[re.Match[bytes]]) -> bytes:
    """The end of an LP file's objective (`_text_tail`), empty where no sense word opens it."""
    regions = [(start, stop) for start, stop, objective in _row_regions(text, heads) if objective]
    return _text_tail(text, *regions[0]) if regions else b""


def bound_statements(lines: list[bytes]) -> Iterator[tuple[bytes, float | None, float | None]]:
    """(column, lower, upper) each statement of Bounds lines sets, in order (None: a side it
    leaves; a value at or past 1e20 is infinite, as to the solvers); a run of tokens that is
    no statement is passed over (`_refuse_stray_bound_words` refuses it)."""
    tokens = _signed([token for line in lines
                      for token in _LP_TOKEN.findall(line.split(b"\\", 1)[0])])
    k = 0
    while k < len(tokens):
        step = _bound_statement(tokens, k)
        if step:
            yield _statement_effect(tokens[k:k + step])
        k += step or 1


def _statement_effect(words: list[bytes]) -> tuple[bytes, float | None, float | None]:
    """(column, lower, upper) one bound statement sets (`_bound_statement`'s tokens)."""
    if len(words) == 2:  # x free
        return words[0], -math.inf, math.inf
    lower: float | None = None
    upper: float | None = None
    if _LP_VALUE.fullmatch(words[0]):  # a sense x [sense b]
        column, pairs = words[2], [(_flipped(words[1]), words[0])] + (
            [(words[3], words[4])] if len(words) == 5 else [])
    else:  # x sense b
        column, pairs = words[0], [(words[1], words[2])]
    for sense, value in pairs:
        number = _solver_number(value)
        if sense in _LESS or sense == b"=":
            upper = number
        if sense in _GREATER or sense == b"=":
            lower = number
    return column, lower, upper


def _flipped(sense: bytes) -> bytes:
    """The sense read from the column's side (`a <= x`: x >= a)."""
    return b">=" if sense in _LESS else b"<=" if sense in _GREATER else sense


def _solver_number(word: bytes) -> float:
    """A bound's value as the solvers take it: SOLVER_INFINITY (1e20) and past (inf spelt
    too) infinite."""
    number = float(word)
    return math.copysign(math.inf, number) if abs(number) >= SOLVER_INFINITY else number


def section_words(sections: dict[str, list[bytes]], kind: str) -> list[bytes]:
    """The words of the `kind` section's lines (`lp_sections`), comments left out."""
    return [word for line in sections.get(kind, []) for word in line.split(b"\\", 1)[0].split()]


def semi_columns(sections: dict[str, list[bytes]]) -> set[bytes]:
    """The columns an LP file's Semi-continuous sections list (`lp_sections`)."""
    return set(section_words(sections, "semi"))


def _refuse_negative_semi(path: Path, sections: dict[str, list[bytes]]) -> None:
    """An InputError for a semi-continuous column whose last lower bound lies below 0: such
    a column is 0 or within [lower, upper], lower >= 0; SCIP's reader dropped the
    declaration ('optimal' -1 where 0 gives 1) and HiGHS's solver stopped with 'Solve
    error'."""
    semi = semi_columns(sections)
    if not semi:
        return
    lowers: dict[bytes, float] = {}
    for column, lower, _ in bound_statements(sections.get("bounds", [])):
        if column in semi and lower is not None:
            lowers[column] = lower
    negative = next((column for column, lower in lowers.items() if lower < 0), None)
    if negative is not None:
        raise InputError(f"{path.name}: the semi-continuous column "
                         f"{negative.decode(errors='replace')!r} has a lower bound below 0 "
                         "(SCIP's reader drops the declaration, HiGHS's solver fails): a "
                         "semi-continuous column is 0 or within [lower, upper], lower >= 0")


def _lp_word_edge(text: bytes, at: int) -> bool:
    """Whether a word ends before `at` + 1 in an LP file as SCIP's reader delimits words
    (white space, + - * ^ < > = : [ ], or the file's edge)."""
    return at < 0 or at >= len(text) or text[at] in _LP_DELIMITERS


def _check_lp_binaries(path: Path, sections: dict[str, list[bytes]]) -> None:
    """An InputError for an LP file's column listed under Binaries that its Bounds bound
    outside [0, 1], or that Generals lists too: SCIP's reader keeps it within [0, 1],
    HiGHS's keeps the bounds on an integer column (`y <= 10`: 4 against 4.5). Bounds within
    [0, 1] both take alike (Pyomo's writer bounds each binary `0 <= x <= 1`); `sections`
    as `lp_sections` reads them."""
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


def lp_sections(text: bytes, heads: list[re.Match[bytes]]) -> dict[str, list[bytes]]:
    """An LP file's lines by section ("bounds", "general", "binary", "semi"; comments kept), each
    section's name found at the start of a line (`heads`), the rest of that line its first
    (`Binary y` on one line: both readers take y as listed, and the check missed it)."""
    kinds = {b"bound": "bounds", b"gen": "general", b"int": "general", b"bin": "binary",
             b"semi": "semi"}
    found: dict[str, list[bytes]] = {}
    for word, start, stop in section_spans(text, heads):
        kind = next((name for head, name in kinds.items() if word.startswith(head)), None)
        if kind is not None:
            found.setdefault(kind, []).extend(text[start:stop].splitlines())
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


def lp_infinite_side(text: bytes) -> bool:
    """Whether an LP file may bound something by an infinity no point meets (`x >= +inf`,
    `c2: x >= +Infinity`, `inf <= x`, `x <= -inf`)."""
    lower = text.lower()
    return b"inf" in lower and _LP_INFINITE_SIDE.search(lower) is not None


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
