"""What an LP file's text says where SCIP's and HiGHS's readers take it apart: a missing
or early End, Bounds that are no bound statements, binaries bounded outside [0, 1]; and
the LP section and word helpers the solver-specific checks use."""

from __future__ import annotations

import math
import re
from pathlib import Path

from coplug.plugins.errors import InputError

# What SCIP's LP reader ends a word at, as byte values
_LP_DELIMITERS = frozenset(b" \t\r\n\f\v+-*^<>=:[]")
_LP_COMMENT = re.compile(rb"\\[^\n]*")
LP_SECTION = re.compile(rb"^[ \t]*(subject[ \t]+to|such[ \t]+that|st|s\.t\.|bounds?|"
                         rb"generals?|gen|integers?|binary|binaries|bin|semi-continuous|"
                         rb"semis?|sos|end)(?=[ \t]|\r?$)", re.M | re.I)  # names may follow
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
    no End line, an early End, binaries bounded outside [0, 1], stray Bounds words."""
    if _LP_CONTENT.search(text) and not _LP_END.search(text):  # empty: no variables
        raise InputError(f"{path.name} has no End line: an LP file ends with one, and one "
                         "cut short was solved by SCIP's reader as the smaller model it "
                         "read (its bounds or integers lost; HiGHS's refuses it)")
    _refuse_early_end(path, text)
    sections = _lp_sections(text)
    _check_lp_binaries(path, sections)
    _refuse_stray_bound_words(path, sections)


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


def _check_lp_binaries(path: Path, sections: dict[str, list[bytes]]) -> None:
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
    heads = list(LP_SECTION.finditer(text))
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
