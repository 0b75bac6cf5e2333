"""The `coplug` command line: a thin argparse front over the library.

Each capability adds its command from its own module (a `register(subparsers)` function,
listed in `COMMANDS`), so this file stays generic and only the chosen command is imported.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import json
import logging
import os
import stat
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

from coplug.plugins.argtypes import native_option, seed_int
from coplug.plugins.errors import CoplugError, InputError
from coplug.plugins.interrupts import interrupts_recorded
from coplug.plugins.results import Result, Status

# Command name -> (module defining register(subparsers), one-line help). Only the module of
# the command being run is imported, so `coplug --help` stays fast.
COMMANDS: dict[str, tuple[str, str]] = {
    "solve": ("coplug.plugins.cli", "solve an MPS/LP file or a registered formulation"),
    "demo": ("coplug.plugins.demo", "run the showcase end to end (offline)"),
    "qubo": (
        "coplug.formulations.qubo_cli",
        "PGD/Adam on a safe or naive relaxed QUBO (knapsack, tsp, openpit) vs SCIP",
    ),
    "lap": (
        "coplug.plugins.lap.cli",
        "exact linear assignment (JV) from a .npy/.csv/assignp*.txt file or generator",
    ),
    "pmvb": (
        "coplug.plugins.pmvb_cli",
        "compare default SCIP with SCIP + PMVB branching on one instance",
    ),
    "fairsc": (
        "coplug.formulations.fair_cli",
        "fair spectral clustering (SC, FairSC, R-FairSC) on an SBM or real graph",
    ),
    "game": (
        "coplug.formulations.games_cli",
        "constrained concave game: log-barrier ascent + SCIP-certified NE gap",
    ),
    "bbo": ("coplug.formulations.bbo.cli", "evolved black-box benchmark programs (EoB)"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """The core `solve` command."""
    p = subparsers.add_parser(
        "solve", help="solve an MPS/LP file or a registered formulation (e.g. knapsack)"
    )
    p.add_argument("target", nargs="?",
                   help="an .mps/.lp file, or a formulation name (see --list)")
    p.add_argument("--list", action="store_true", help="list the formulation names and exit")
    p.add_argument("--size", type=int, default=None,
                   help="instance size for a formulation name (default 30)")
    p.add_argument("--seed", type=seed_int, default=None,
                   help="instance seed for a formulation name (default 0)")
    p.add_argument("--solver", default="scip", help="scip | highs (| lap for assignments)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds")
    p.add_argument("--tee", action="store_true", help="show the solver's log")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--option", type=native_option, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="a solver option by its native name, repeatable "
                        "(limits/nodes=100 for SCIP, solver=ipm for HiGHS)")
    p.add_argument("--solution", metavar="PATH", default=None,
                   help="write the solution to PATH, one 'name value' line per variable")
    p.add_argument("--explain", action="store_true",
                   help="if infeasible, name an irreducible infeasible subsystem (rows and "
                        "bounds), checked by a second solver")
    p.set_defaults(func=_cmd_solve)


def _wants_progress(args: argparse.Namespace) -> bool:
    """A live progress line for a SCIP or HiGHS solve when stderr is a terminal and the
    solver's own log (`--tee`) is not shown."""
    return args.solver.lower() in ("scip", "highs") and not args.tee and sys.stderr.isatty()


def _cmd_solve(args: argparse.Namespace) -> int:
    """Solve a file or a named formulation and print the result."""
    if args.list:
        from coplug.formulations import registry

        if args.json:
            print(json.dumps(registry.names()))
            return 0
        for name, description in registry.names().items():
            print(f"{name:16s} {description}")
        return 0
    if args.target is None:
        raise InputError("give an .mps/.lp file or a formulation name (coplug solve --list)")
    if args.solution is not None:
        _check_solution_path(args.solution, args.target)
    try:
        result, explain = _solve_target(args)
    except (Exception, KeyboardInterrupt) as exc:  # the --solution file must not keep an
        if args.solution is not None:  # earlier run's values (Ctrl-C while building too)
            _write_lines(args.solution, ["# interrupted, no solution"
                                         if isinstance(exc, KeyboardInterrupt) else
                                         f"# error, no solution: {type(exc).__name__}"])
        raise
    if args.solution is not None:
        write_solution(args.solution, result)
    result.values = None  # in the --solution file, not in the printed result
    found, failed = None, None
    if args.explain and result.status is Status.INFEASIBLE:
        try:
            with stdout_to_stderr(args.json):
                found = explain()
        except CoplugError as exc:  # the solve stands; say why there is no explanation
            failed = f"--explain: {exc}"
        except KeyboardInterrupt:
            failed = "--explain: interrupted (Ctrl-C)"
            result.extra["iis"] = {"error": failed}
            print_result(result, as_json=args.json)
            return 130
        result.extra["iis"] = found if failed is None else {"error": failed}
    elif args.explain:
        print(f"coplug: --explain: nothing to explain, the solve ended {result.status.value}",
              file=sys.stderr)
    elif result.status is Status.INFEASIBLE and not args.json:
        print("coplug: hint: --explain names rows and bounds that cannot hold together",
              file=sys.stderr)
    print_result(result, as_json=args.json)
    if found is not None and not args.json:
        print(found["text"])
    if failed is not None:
        print(f"coplug: error: {failed}", file=sys.stderr)
        return 2
    return 130 if result.status is Status.INTERRUPTED else 0


def _solve_target(args: argparse.Namespace) -> tuple[Result, Callable[[], dict[str, Any]]]:
    """Solve `coplug solve`'s file or named formulation: the result (with its values read
    back for a formulation) and the --explain function for it."""
    from pathlib import Path

    from coplug.formulations import registry

    named = args.target in registry.names()  # a folder called "knapsack" is not the file
    if Path(args.target).suffix or (Path(args.target).exists() and not named):
        from coplug.plugins.files import solve_file

        given = [flag for flag, value in (("--size", args.size), ("--seed", args.seed))
                 if value is not None]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise InputError(f"{' and '.join(given)} {verb} to formulation names, not to the "
                             f"file {args.target}")
        with stdout_to_stderr(args.json):
            result = solve_file(args.target, solver=args.solver, time_limit=args.time_limit,
                                tee=args.tee, options=_options(args.option),
                                progress=_wants_progress(args))
        explain = _file_explainer(args.target, args.time_limit)
    else:
        import pyomo.environ as pyo

        from coplug.plugins.bridge import solve
        from coplug.plugins.progress import terminal_progress

        size = 30 if args.size is None else args.size
        with stdout_to_stderr(args.json), construction_quiet():
            model = registry.build(args.target, size, seed=args.seed or 0)
        with stdout_to_stderr(args.json):
            result = solve(model, solver=args.solver, time_limit=args.time_limit, tee=args.tee,
                           options=_options(args.option),
                           plugins=terminal_progress() if _wants_progress(args) else [])
        explain = _model_explainer(model, args.time_limit)
        if result.has_solution:
            result.values = {var.name: var.value for var in model.component_data_objects(
                pyo.Var, descend_into=True) if var.value is not None}
    return result, explain


def _check_solution_path(text: str, target: str) -> None:
    """Refuse, before any solve, a --solution path that cannot be a file to write, or that
    is the model file itself (written over even when the solve fails, it was lost)."""
    from pathlib import Path

    path = Path(text)
    if not text or path.is_dir():
        raise InputError(f"--solution: {text!r} is not a file name")
    if not path.parent.is_dir():
        raise InputError(f"--solution: no folder {str(path.parent)!r} to write into")
    writable = os.access(path, os.W_OK) if path.exists() else os.access(path.parent, os.W_OK)
    if not writable:
        raise InputError(f"--solution: {text!r} cannot be written (permission denied)")
    model = Path(target)
    if path.exists() and model.exists() and path.samefile(model):
        raise InputError(f"--solution: {text!r} is the model file {target!r}; writing the "
                         "solution there would replace the model")


def write_solution(path: str, result: Result) -> None:
    """Write `result.values` to `path`: a '#' line with the status and objective, then one
    'name value' line per variable (values in full precision). Without a solution the file
    holds the '#' line alone (an earlier run's values must not stay there), with a note on
    stderr."""
    if not result.has_solution or result.values is None:
        print(f"coplug: no solution to write to {path} (the solve ended "
              f"{result.status.value})", file=sys.stderr)
        lines = [f"# status {result.status.value}, no solution"]
    else:
        lines = [f"# status {result.status.value}, objective {result.objective!r}"]
        lines += [f"{name} {value!r}" for name, value in result.values.items()]
    _write_lines(path, lines)


# --solution names for the process's own output streams, written through Python's.
_STANDARD_STREAMS = {f"{prefix}{number}": stream
                     for number, stream in (("1", "stdout"), ("2", "stderr"))
                     for prefix in ("/dev/fd/", "/proc/self/fd/")} | {
    "/dev/stdout": "stdout", "/dev/stderr": "stderr"}


def _write_lines(path: str, lines: list[str]) -> None:
    """Write `lines` to the --solution file `path` whole, through a rename (two runs ending
    at once had left one's header over the other's values), or in place where `path` is a
    device, a pipe or a path under /dev or /proc (a rename had replaced the link
    /dev/stdout, or the file the shell sends output to), and through Python's own stream for
    /dev/stdout and /dev/stderr; a link's target is written, the link kept, and a file
    keeps its permissions (a private 0600 file had become 0644). A writable file in a
    folder one may not write is written in place. An InputError naming it."""
    from coplug.learned.checkpoint_io import atomic_write_text

    text = "\n".join(lines) + "\n"
    given = os.path.expanduser(path)
    stream = _STANDARD_STREAMS.get(given)
    if stream is not None:  # Python's own stream: a second handle wrote over its output
        getattr(sys, stream).write(text)
        getattr(sys, stream).flush()
        return
    target = os.path.realpath(given)
    existing = os.path.isfile(target)
    try:
        if given.startswith(("/dev/", "/proc/")) or (
                os.path.exists(given) and not existing and not os.path.isdir(given)) or (
                existing and not os.access(os.path.dirname(target), os.W_OK)):
            with open(given, "w", encoding="utf-8") as out:
                out.write(text)
        else:
            mode = stat.S_IMODE(os.stat(target).st_mode) if existing else None
            atomic_write_text(target, text, mode)
    except InputError as exc:
        raise InputError(f"--solution: {exc}") from None
    except OSError as exc:
        raise InputError(f"--solution: cannot write {path} ({exc.strerror})") from exc


def _file_explainer(path: str, time_limit: float | None) -> Callable[[], dict[str, Any]]:
    """What --explain reports for a file: its IIS by row and column names."""
    def explain() -> dict[str, Any]:
        from coplug.plugins.iis_file import explain_infeasible_file

        found = explain_infeasible_file(path, time_limit=time_limit)
        return {"rows": found.rows, "bounds": [list(b) for b in found.bounds],
                "irreducible": found.irreducible, "notes": found.notes, "text": str(found)}
    return explain


def _model_explainer(model: Any, time_limit: float | None) -> Callable[[], dict[str, Any]]:
    """What --explain reports for a Pyomo model: its IIS by constraint and variable names."""
    def explain() -> dict[str, Any]:
        from coplug.plugins.iis import explain_infeasible

        found = explain_infeasible(model, time_limit=time_limit)
        return {"rows": [con.name for con in found.constraints],
                "bounds": [[var.name, side, var.lb if side == "lower" else var.ub]
                           for var, side in found.bounds],
                "irreducible": found.irreducible, "notes": found.notes, "text": str(found)}
    return explain


def _options(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """--option NAME=VALUE pairs as a dict; a name given twice is an error, not a silent
    last-one-wins."""
    names = [name for name, _ in pairs]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f"--option {', '.join(twice)} given more than once")
    return dict(pairs)


def _flush_c_stdout() -> None:
    """Flush the C library's stdout buffer (SCIP and HiGHS print through it)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def construction_quiet() -> Iterator[None]:
    """Within the block Pyomo logs no "Constructing component ... failed" or "Rule failed
    ..." (on stdout): the error itself comes out as coplug's one line (a Ctrl-C while
    building added Pyomo's two lines, and under --json put them on stdout beside the
    JSON)."""
    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(("Constructing component", "Rule failed"))

    logger = logging.getLogger("pyomo.core")
    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


@contextlib.contextmanager
def stdout_to_stderr(enabled: bool = True) -> Iterator[None]:
    """While `enabled`, point file descriptor 1 at stderr, so that with --json stdout holds
    the JSON object alone: the solver log of --tee and SCIP's "pressed CTRL-C 1 times" line
    are C writes to descriptor 1. (sys.stdout stays the same object, writing to descriptor
    1: Pyomo's tee captures descriptors 1 and 2 and would deadlock writing to sys.stderr.)"""
    if not enabled:
        yield
        return
    if sys.stdout is not None:  # None where the command started with stdout closed (>&-)
        sys.stdout.flush()
    _flush_c_stdout()
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 (stdout closed): nothing to divert
        yield
        return
    try:
        sys.stderr.flush()
        os.dup2(2, 1)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError, AttributeError):  # None: closed
            sys.stdout.flush()
        _flush_c_stdout()
        os.dup2(saved, 1)
        os.close(saved)


def print_result(result: Result, as_json: bool = False) -> None:
    """Print a result as one JSON object or as aligned text lines."""
    if as_json:
        print(json.dumps(result.to_dict()))
        return
    gap = result.gap
    print(f"status     {result.status.value}")
    print(f"objective  {result.objective}")
    print(f"bound      {result.bound}")
    print(f"gap        {gap if gap is None else f'{gap:.2e}'}")
    print(f"nodes      {result.nodes}")
    print(f"time       {result.time:.3f} s  ({result.solver})")
    if "lap_s" in result.extra:
        print(f"           {result.extra['lap_s']:.3f} s in JV, the rest reading the model")
    for name, stats in result.plugin_stats.items():
        print(f"plugin     {name}: {stats}")


class _OneLineParser(argparse.ArgumentParser):
    """A parser whose usage errors are one line, `coplug: error: ...`, exit 2, as every
    other bad input's (argparse printed five lines of usage first)."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("coplug").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"coplug: error: {where}{message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser: full arguments for `command`, a one-line stub for every other command."""
    parser = _OneLineParser(
        prog="coplug", description="Solver plugins and safe formulations for Pyomo + SCIP/HiGHS"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND",
                                       parser_class=_OneLineParser)
    subparsers.required = True
    if command in COMMANDS:
        importlib.import_module(COMMANDS[command][0]).register(subparsers)
    for name, (_, help_text) in COMMANDS.items():
        if name not in subparsers.choices:
            subparsers.add_parser(name, help=help_text)
    return parser


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, file: object = None, line: str | None = None) -> None:
    """Show a warning as `coplug: warning: ...`, not as Python's file, line and source."""
    print(f"coplug: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run one command; CoplugError, an OSError (a path the system refuses) or
    running out of memory prints one line and exits 2. A command during which a solver
    absorbed Ctrl-C (and that printed what it had) exits 130, as one stopped by it does."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stderr is None:  # started with `2>&-`: the solvers' log capture flushes stderr
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the life of the command)
    with _escaped_output():
        return _run(argv)


@contextlib.contextmanager
def _escaped_output() -> Iterator[None]:
    """Print what an ASCII locale cannot (a name) escaped, not as UnicodeEncodeError; the
    streams' own error handling comes back afterwards (main() called from a program had
    left its stdout escaping every later print)."""
    streams = [(stream, stream.errors) for stream in (sys.stdout, sys.stderr)
               if callable(getattr(stream, "reconfigure", None))]
    for stream, _ in streams:
        stream.reconfigure(errors="backslashreplace")
    try:
        yield
    finally:
        for stream, errors in streams:
            with contextlib.suppress(ValueError, OSError):  # a stream closed meanwhile
                stream.reconfigure(errors=errors)


def _run(argv: list[str]) -> int:
    """Parse `argv` and run its command, each failure as main() says."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    before = interrupts_recorded()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            code = int(args.func(args) or 0)
        return 130 if code == 0 and interrupts_recorded() > before else code
    except CoplugError as exc:
        print(f"coplug: error: {exc}", file=sys.stderr)
        return 2
    except (BrokenPipeError, RuntimeError) as exc:  # a CoplugError is caught above
        if not _closed_pipe(exc):
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("coplug: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a path the system refuses: too long a name, no permission, ...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"coplug: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # e.g. --n 200000: a dense 200000^2 matrix
        print(f"coplug: error: out of memory ({exc or 'allocation failed'}); "
              "try a smaller size", file=sys.stderr)
        return 2


def _closed_pipe(exc: BaseException) -> bool:
    """Whether `coplug ... | head` closed the pipe (the command then stops quietly): a
    BrokenPipeError, or the RuntimeError Pyomo's output capture (`--tee` on HiGHS) raises
    in its place, naming it in its text."""
    return isinstance(exc, BrokenPipeError) or str(exc).startswith("BrokenPipeError:")


if __name__ == "__main__":
    sys.exit(main())
