"""Export a program: a standalone Pyomo script, a JSON form (read back by
`program_from_json`), or any format Pyomo's `model.write` knows (.nl, .gms, .lp when linear).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from coplug.formulations.bbo.grammar import (
    Program,
    check_program,
    node_from_json,
    node_to_json,
    same_tree,
    to_text,
)
from coplug.formulations.bbo.pyomo_model import (
    Scalarizer,
    build_pyomo,
    build_pyomo_algebra,
    pyomo_abs,
)
from coplug.formulations.bbo.validate import load
from coplug.plugins.errors import InputError, UnsupportedModelError

# Python's parser takes at most 200 nested parentheses: a text nesting deeper than this is
# written to a local name first (a sum over 300 dimensions did not compile).
TEXT_DEPTH = 100


class _TextAlgebra:
    """Builds Python source text of Pyomo expressions (for the exported script); the
    auxiliary variables get the bounds and shifts `to_pyomo` gave them, in the same order.
    Sums and products are written flat, `(a + b - c)`, and a text nesting past TEXT_DEPTH
    parentheses goes to a local name."""

    def __init__(self, records: list[tuple[tuple[float | None, float | None], float]],
                 zero_reaching: list[bool] | None = None) -> None:
        self.lines: list[str] = []
        self.records = records
        self.zero_reaching = iter(zero_reaching or [])
        self.aux = 0
        self.depth: dict[str, int] = {}  # parentheses nesting of each text written
        self.chain: dict[str, str] = {}  # a flat sum's or product's text: "+" or "*"
        self.temps = 0

    def _depth(self, a: Any) -> int:
        """How deep a text nests its parentheses (0 for names and constants)."""
        return self.depth.get(a, 0) if isinstance(a, str) else 0

    def _kept(self, text: str, depth: int, chain: str | None = None) -> str:
        """`text`, or a local name it is assigned to where it nests past TEXT_DEPTH."""
        if depth > TEXT_DEPTH:
            self.temps += 1
            self.lines.append(f"_t{self.temps} = {text}")
            return f"_t{self.temps}"
        self.depth[text] = depth
        if chain is not None:
            self.chain[text] = chain
        return text

    def lit(self, a: Any) -> str:
        """Source text of a float constant or an expression's text; a negative constant is
        parenthesised, since (-2.0) ** y written bare parses as -(2.0 ** y)."""
        if not isinstance(a, float):
            return a
        if not math.isfinite(a):
            raise InputError(f"cannot write the constant {a!r} into a Pyomo script: a "
                             "constant subexpression of the program is not finite")
        return f"({a!r})" if math.copysign(1.0, a) < 0 else repr(a)

    def var(self, i: int) -> str:
        return f"m.x[{i}]"

    def may_reach_zero(self, base: Any) -> bool:
        """What the Pyomo model's algebra answered for this base (text has no bounds to
        read: guessing True bound a variable the model had not, past `records`)."""
        return next(self.zero_reaching)

    def bind(self, value: Any, exponent: Any = None) -> str:
        """Emit the next auxiliary variable with its defining constraint; return its name."""
        name = f"m.aux[{self.aux + 1}]"
        bounds, shift = self.records[self.aux]
        defined = f"{self.lit(value)} + {shift!r}" if shift else self.lit(value)
        self.lines.append(f"m.aux_def.add(m.aux.add() == {defined})")
        self.lines.append(f"{name}.bounds = {bounds!r}")
        self.aux += 1
        return name

    def define(self, name: str, value: Any) -> Any:
        if isinstance(value, list):
            items = ",\n    ".join(f"{i}: {self.lit(v)}" for i, v in enumerate(value))
            self.lines.append(f"m.e_{name} = pyo.Expression(m.I, initialize={{\n    {items},\n}})")
            return [f"m.e_{name}[{i}]" for i in range(len(value))]
        self.lines.append(f"m.e_{name} = pyo.Expression(expr={self.lit(value)})")
        return f"m.e_{name}"

    def neg(self, a: str) -> str:
        return self._kept(f"(-{a})", 1 + self._depth(a))

    def binary(self, op: str, a: Any, b: Any) -> str:
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}[op]
        chain = {"add": "+", "sub": "+", "mul": "*", "div": "*"}.get(op)
        left, right = self.lit(a), self.lit(b)
        if chain is not None and self.chain.get(left) == chain:  # Python reads left to right
            return self._kept(f"{left[:-1]} {sym} {right})",
                              max(self._depth(left), 1 + self._depth(right)), chain)
        return self._kept(f"({left} {sym} {right})",
                          1 + max(self._depth(left), self._depth(right)), chain)

    def unary(self, op: str, a: Any) -> str:
        text = f"_abs({a})" if op == "abs" else f"pyo.{op}({a})"
        return self._kept(text, 1 + self._depth(a))


def pyomo_script(program: Program, name: str = "bbo_program") -> str:
    """A standalone Python script that builds the same Pyomo model (`model = build()`)."""
    check_program(program, "pyomo_script")
    built = build_pyomo_algebra(program, name, pyomo_abs)[1]
    alg = _TextAlgebra(built.records, built.zero_reaching)
    objective = alg.lit(Scalarizer(program, alg).run())
    center = 0.5 * (program.lower + program.upper)
    source = "\n".join(f"# {line}" for line in to_text(program).splitlines()[:50])
    declare = ["m.aux = pyo.VarList()", "m.aux_def = pyo.ConstraintList()"] if alg.aux else []
    lines = [*declare, *alg.lines]
    body = "\n".join(["    " + line for block in lines for line in block.splitlines()])
    return f'''"""Pyomo model of a coplug.formulations.bbo benchmark program (dim={program.dim}).

Generated by `coplug bbo export`; the program text (first lines):
{source}
"""

import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import UnaryFunctionExpression


def _abs(a):
    """Exact |a| as a function node Pyomo's SCIP interface takes (abs() builds another)."""
    return UnaryFunctionExpression((a,), "abs", abs)


def build():
    m = pyo.ConcreteModel(name={name!r})
    m.I = pyo.RangeSet(0, {program.dim - 1})
    m.x = pyo.Var(m.I, bounds=({program.lower!r}, {program.upper!r}), initialize={center!r})
{body}
    m.obj = pyo.Objective(expr={objective}, sense=pyo.minimize)
    return m


model = build()

if __name__ == "__main__":
    model.pprint()
'''


JSON_FORMAT = "coplug-bbo-program"


def program_to_json(program: Program) -> dict[str, Any]:
    """JSON form: box, dimension, canonical text and the expression trees."""
    check_program(program, "program_to_json")
    return {
        "format": JSON_FORMAT,
        "version": 1,
        "dim": program.dim,
        "lower": program.lower,
        "upper": program.upper,
        "text": to_text(program),
        "lets": [[name, node_to_json(node)] for name, node in program.lets],
        "body": node_to_json(program.body),
    }


def program_from_json(data: Any) -> Program:
    """Read the JSON form back (text is authoritative; the trees must agree with it); a
    missing or mistyped field is an InputError naming it."""
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        raise InputError(f"not a {JSON_FORMAT} JSON document")
    for name, kinds, what in (("text", str, "text"), ("dim", int, "an integer"),
                              ("lower", (int, float), "a number"),
                              ("upper", (int, float), "a number")):
        if name not in data:
            raise InputError(f"program JSON lacks field {name!r}")
        if not isinstance(data[name], kinds) or isinstance(data[name], bool):
            raise InputError(f"program JSON: field {name!r} must be {what}, "
                             f"got {data[name]!r}")
    try:
        lower, upper = float(data["lower"]), float(data["upper"])
    except OverflowError:
        raise InputError("program JSON: 'lower' or 'upper' is too large for a float") from None
    program = load(data["text"], data["dim"], lower, upper)
    if "body" in data:
        lets = data.get("lets", [])
        if not isinstance(lets, list) or not all(
                isinstance(item, list) and len(item) == 2 for item in lets):
            raise InputError("program JSON: 'lets' must be a list of [name, tree] pairs")
        trees = tuple((name, node_from_json(node)) for name, node in lets)
        body = node_from_json(data["body"])
        if len(trees) != len(program.lets) or not same_tree(body, program.body) or not all(
                name == mine and same_tree(tree, my_tree)
                for (name, tree), (mine, my_tree) in zip(trees, program.lets, strict=True)):
            raise InputError("program JSON: trees disagree with the text")
    return program


# Recursion limit while JSON is encoded or decoded: the C codec counts each nesting level
# against it, and the JSON of the deepest tree `load` accepts (a ~500-term sum, or ~1000
# nested minus signs) nests two levels per tree level, past Python's default of 1000.
JSON_RECURSION_LIMIT = 10_000


@contextmanager
def _json_depth() -> Iterator[None]:
    """Room for the JSON codec to nest as deep as a program tree can (JSON_RECURSION_LIMIT)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, JSON_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def json_text(data: Any) -> str:
    """JSON text (indent 1) of data holding program trees, however deep `load` let them be."""
    with _json_depth():
        return json.dumps(data, indent=1) + "\n"


def read_program_json(text: str, where: str) -> Program:
    """A program from its JSON text; text that is not JSON or nests beyond what any program
    can is an InputError naming `where`."""
    try:
        with _json_depth():
            data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply for a program") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise InputError(f"{where}: a number too long to read ({exc})") from None
    try:
        with _json_depth():
            return program_from_json(data)
    except RecursionError:  # a tree nested past any program's, in a field json let through
        raise InputError(f"{where}: a program tree nested too deeply") from None


WRITE_FORMATS = ("py", "json", "nl", "gms", "lp", "bar")


def write_program(program: Program, path: str | Path, fmt: str | None = None) -> Path:
    """Write the program as a Pyomo script (py), JSON form (json) or via `model.write`; the
    format is `fmt`, else the file's suffix."""
    check_program(program, "write_program")
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"write_program needs a file path, got {path!r}")
    path = Path(path).expanduser()
    fmt = export_format(path, fmt)
    try:
        if fmt == "py":
            path.write_text(pyomo_script(program), encoding="utf-8")
        elif fmt == "json":
            path.write_text(json_text(program_to_json(program)), encoding="utf-8")
        else:
            _write_pyomo(program, path, fmt)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def export_format(path: Path, fmt: str | None = None) -> str:
    """The format to write `path` in: `fmt`, else its suffix; a suffix naming another
    format is refused, so f.json never silently holds a Pyomo script."""
    suffix = path.suffix.lstrip(".").lower()
    if fmt is None and suffix not in WRITE_FORMATS:
        raise InputError(f"unknown export format for {path}: its suffix is none of "
                         f".{', .'.join(WRITE_FORMATS)}; name one or give a format (--format)")
    fmt = (fmt or suffix).lower()
    if fmt not in WRITE_FORMATS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(WRITE_FORMATS)}")
    if suffix in WRITE_FORMATS and suffix != fmt:
        raise InputError(f"{path} ends in .{suffix} but the export format is {fmt}: name a "
                         f".{fmt} file or choose format {suffix} (--format {suffix})")
    return fmt


# Files Pyomo's .nl writer puts beside the model with symbolic labels (names of x and rows).
_SIDECARS = (".row", ".col")


def _exp_log_power(base: Any, exponent: Any) -> Any:
    """base ** exponent as exp(exponent log base), for BARON: Pyomo's BARON writer turned
    x ** y into exp(x log y), x[1] ** x[0] in effect."""
    return pyo.exp(exponent * pyo.log(base))


def _write_pyomo(program: Program, path: Path, fmt: str) -> None:
    """`model.write` in one of Pyomo's formats (|a| as Pyomo's AbsExpression, which the
    writers know; BARON's writes it as (a^2)^0.5); a construct it cannot write is named.
    Written to a hidden sibling and renamed, so a failed write leaves no truncated file."""
    model = build_pyomo(program, "bbo_program", abs, _exp_log_power if fmt == "bar" else None)
    partial = path.with_name(f".{path.stem}.partial.{fmt}")  # Pyomo reads the format off it
    sidecars = [(partial.with_suffix(s), path.with_suffix(s)) for s in _SIDECARS]
    partial.touch()  # an unwritable place is named here, not inside Pyomo's writer
    try:
        model.write(str(partial), io_options={"symbolic_solver_labels": True})
        os.replace(partial, path)
        for written, final in sidecars:
            if written.exists():
                os.replace(written, final)
    except (ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise UnsupportedModelError(f"Pyomo cannot write this program as .{fmt}: "
                                    f"{str(exc).splitlines()[0]}") from None
    finally:
        for leftover in (partial, *(written for written, _ in sidecars)):
            leftover.unlink(missing_ok=True)

