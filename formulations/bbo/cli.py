"""`coplug bbo evolve | export | solve`: evolve benchmark programs, write them, certify them."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

from coplug.plugins.argtypes import positive_int
from coplug.plugins.bar import on_terminal
from coplug.plugins.errors import InputError
from coplug.plugins.results import Status


def register(subparsers: argparse._SubParsersAction) -> None:
    """The `bbo` command group."""
    p = subparsers.add_parser("bbo", help="evolved black-box benchmark programs (EoB)")
    sub = p.add_subparsers(dest="bbo_command", metavar="SUBCOMMAND")
    sub.required = True

    e = sub.add_parser("evolve", help="NSGA-II over programs: target similarity x differentiation")
    e.add_argument("--dim", type=int, default=2)
    e.add_argument("--targets", default="1,3,15,21", help="BBOB ids, e.g. 1,3,15 or 1-24")
    e.add_argument("--target-program", action="append", default=[], metavar="FILE",
                   help="extra target: a program .json file (repeatable)")
    e.add_argument("--population", type=positive_int, default=12)
    e.add_argument("--generations", type=positive_int, default=8)
    e.add_argument("--budget", type=positive_int, default=100, help="evaluations per solver run")
    e.add_argument("--seeds", type=int, default=5,
                   help="runs per solver, at least 3: with fewer no solver pair reaches the "
                        "5%% Mann-Whitney significance, so differentiation is always 0")
    e.add_argument("--max-nodes", type=positive_int, default=40)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--run-dir", default="eob_run",
                   help="must be new or empty; written after every generation")
    e.add_argument("--overwrite", action="store_true",
                   help="reuse a non-empty run directory, first deleting an earlier run's files")
    e.add_argument("--proposer", choices=("symbolic", "llm"), default="symbolic")
    e.add_argument("--llm-url", default=None, help="OpenAI-compatible base URL (…/v1)")
    e.add_argument("--llm-model", default=None)
    e.add_argument("--llm-timeout", type=float, default=None)
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=_cmd_evolve)

    x = sub.add_parser("export",
                       help="write a program as a Pyomo script, JSON, .nl, .gms, .bar, .lp")
    _program_args(x)
    x.add_argument("--format", default=None, choices=("py", "json", "nl", "gms", "lp", "bar"),
                   help="default: the output file's suffix, else py (stdout)")
    x.add_argument("--output", "-o", default=None, help="file (default: stdout for py/json)")
    x.set_defaults(func=_cmd_export)

    s = sub.add_parser("solve", help="certify a program's global optimum with SCIP")
    _program_args(s)
    s.add_argument("--time-limit", type=float, default=30.0)
    s.set_defaults(func=_cmd_solve)


def _program_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("program", metavar="PROGRAM_OR_FILE",
                   help="program text, a file (.json program form or text), or bbob:FID; "
                        "a program starting with '-' goes last, after -- (--dim 3 -- '-sum(x)')")
    p.add_argument("--dim", type=int, default=None, help="needed for text programs")
    p.add_argument("--lower", type=float, default=None, help="box lower bound (default -5)")
    p.add_argument("--upper", type=float, default=None, help="box upper bound (default 5)")


def _is_json(spec: str) -> bool:
    """Whether `spec` names a .json program file, in any case (`export -o P.JSON` writes the
    JSON form, as its format follows the suffix whatever its case)."""
    return spec.lower().endswith(".json")


def read_program(spec: str, dim: int | None, lower: float | None = None,
                 upper: float | None = None):
    """A program from `bbob:FID`, a .json program file, a text file or inline text; a
    --dim, --lower or --upper that a bbob: or .json program does not have is refused."""
    from coplug.formulations.bbo.bbob import bbob_problem
    from coplug.formulations.bbo.export import read_program_json
    from coplug.formulations.bbo.validate import load

    if spec.startswith("bbob:"):
        try:
            fid = int(spec[5:])
        except ValueError:
            raise InputError(f"bad BBOB spec {spec!r}; use e.g. bbob:15") from None
        return _agreeing(bbob_problem(fid, 2 if dim is None else dim).program, spec, dim,
                         lower, upper)
    kind = _path_kind(spec)
    if kind == "dir":
        raise InputError(f"program file {spec} is a directory")
    if _is_json(spec) and kind is None:
        raise InputError(f"program file {spec} does not exist")
    if kind == "file":
        path = Path(spec)
        text = _read_text(path)
        if _is_json(spec):
            return _agreeing(read_program_json(text, str(path)), spec, dim, lower, upper)
        spec = text
    elif _looks_like_path(spec):
        missing = f"no program file {spec} (nor is it a program: "
        if dim is None:
            raise InputError(f"{missing}a text program needs --dim)")
        try:
            return load(spec, dim, -5.0 if lower is None else lower,
                        5.0 if upper is None else upper)
        except InputError as error:
            raise InputError(f"{missing}{error})") from None
    if dim is None:
        raise InputError("a text program needs --dim")
    return load(spec, dim, -5.0 if lower is None else lower, 5.0 if upper is None else upper)


def _path_kind(spec: str) -> str | None:
    """"file" or "dir" when `spec` names one, else None (also for program text too long or
    odd to be a file name: os.stat raised ENAMETOOLONG on a 300-character program)."""
    if not spec.strip() or len(spec) >= 4096 or "\n" in spec:  # Path("") is "."
        return None
    try:
        path = Path(spec)
        return "dir" if path.is_dir() else "file" if path.is_file() else None
    except (OSError, ValueError):
        return None


def _read_text(path: Path) -> str:
    """A program file's text (a UTF-8 byte-order mark, as Windows editors write, dropped),
    or a one-line InputError (binary, unreadable)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"program file {path} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise InputError(f"cannot read program file {path}: {error.strerror}") from None


def _looks_like_path(spec: str) -> bool:
    """A file name rather than program text: path characters only, ending in a suffix
    (prog.txt; program text with an attribute is refused anyway), or with spaces too when
    it ends in .txt or .json ("my prog.txt"; no program ends so)."""
    return (re.fullmatch(r"[\w./~-]*\.[A-Za-z]\w*", spec) is not None
            or re.fullmatch(r"[\w./~ -]*\.(txt|json)", spec) is not None)


def _agreeing(program: Any, spec: str, dim: int | None, lower: float | None,
              upper: float | None) -> Any:
    """The program of a bbob: spec or .json file, refused when --dim, --lower or --upper
    asks for another (they were ignored: bbob:3 --lower 0 --upper 1 came on [-5, 5])."""
    for flag, given, own in (("--dim", dim, program.dim), ("--lower", lower, program.lower),
                             ("--upper", upper, program.upper)):
        if given is not None and given != own:
            raise InputError(f"{spec} is a program with {flag[2:]} {own}, not {given}: drop "
                             f"{flag} (a bbob: or .json program brings its own box)")
    return program


def _known_points(spec: str, program: Any) -> list[Any]:
    """Points a certificate must not be beaten by: x_opt of a BBOB function."""
    from coplug.formulations.bbo.bbob import bbob_problem

    if not spec.startswith("bbob:"):
        return []
    return [bbob_problem(int(spec[5:]), program.dim).x_opt]


def _cmd_export(args: argparse.Namespace) -> int:
    from coplug.formulations.bbo.export import (
        json_text,
        program_to_json,
        pyomo_script,
        write_program,
    )

    program = read_program(args.program, args.dim, args.lower, args.upper)
    if args.output is None:
        if args.format not in (None, "py", "json"):
            raise InputError(f"--format {args.format} needs --output FILE")
        print(pyomo_script(program) if args.format in (None, "py")  # a closed stdout:
              else json_text(program_to_json(program)), end="")  # print writes nothing
        return 0
    print(write_program(program, args.output, args.format))
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    from coplug.formulations.bbo.certify import certify
    from coplug.plugins.cli import print_result
    from coplug.plugins.progress import terminal_progress

    program = read_program(args.program, args.dim, args.lower, args.upper)
    cert = certify(program, time_limit=args.time_limit,  # SCIP can take all its 30 s
                   known=_known_points(args.program, program), plugins=terminal_progress())
    print_result(cert.result)
    print(f"x          {None if cert.x is None else cert.x.round(6).tolist()}")
    print(f"certified  {cert.certified}")
    if "error" in cert.result.extra:
        print(f"reason     {cert.result.extra['error']}")
    return 130 if cert.result.status is Status.INTERRUPTED else 0  # Ctrl-C, as coplug solve


def _saved_since(run_dir: str | None, started: float) -> bool:
    """Whether this run (begun at `started`) wrote its history into `run_dir`, not an
    earlier run."""
    history = Path(run_dir or "") / "history.json"
    return run_dir is not None and history.is_file() and history.stat().st_mtime >= started - 1


def _cmd_evolve(args: argparse.Namespace) -> int:
    from coplug.formulations.bbo.bbob import parse_fids
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve
    from coplug.formulations.bbo.llm_proposer import LLMConfig, LLMEndpointError, LLMProposer

    given = [f"--llm-{name}" for name in ("url", "model", "timeout")
             if getattr(args, f"llm_{name}") is not None]
    if given and args.proposer != "llm":
        raise InputError(f"{', '.join(given)} configure the LLM proposer: add --proposer llm")
    config = EvolutionConfig(dim=args.dim, targets=tuple(parse_fids(args.targets)),
                             population=args.population, generations=args.generations,
                             budget=args.budget, seeds=args.seeds, max_nodes=args.max_nodes,
                             seed=args.seed)
    missing = [f for f in args.target_program if not Path(f).is_file()]
    if missing:
        raise InputError(f"--target-program {missing[0]}: no such file")
    extra = {}
    for f in args.target_program:  # a .json program brings its dim: compare it to --dim here
        program = read_program(f, None if _is_json(f) else args.dim)
        if program.dim != args.dim:
            raise InputError(f"--target-program {f} is a program in dim {program.dim}, the "
                             f"evolution runs in --dim {args.dim}: give --dim {program.dim} "
                             "or a target of that dim")
        if Path(f).stem in extra:  # the later one replaced the earlier
            raise InputError(f"--target-program {f}: another target is named "
                             f"{Path(f).stem!r} too; give the files distinct names")
        extra[Path(f).stem] = program
    proposer = None
    if args.proposer == "llm":
        llm = LLMConfig.from_env(base_url=args.llm_url, model=args.llm_model,
                                 timeout=args.llm_timeout)
        proposer = LLMProposer(args.dim, llm, max_nodes=args.max_nodes)
    started = time.time()
    try:
        result = evolve(config, proposer, run_dir=args.run_dir, extra_targets=extra,
                        progress=not args.quiet and on_terminal(), overwrite=args.overwrite)
    except KeyboardInterrupt:
        print(f"run directory {args.run_dir} keeps the finished generations"
              if _saved_since(args.run_dir, started) else
              "interrupted before the first generation finished: nothing was saved",
              file=sys.stderr)
        raise
    except LLMEndpointError as exc:  # an endpoint that died mid-run: say what is kept
        if not _saved_since(args.run_dir, started):
            raise
        raise LLMEndpointError(f"{exc}; run directory {args.run_dir} keeps the finished "
                               "generations") from None
    print(f"programs evaluated  {len(result.candidates)}")
    print(f"hypervolume         {result.hypervolume[0]:.4f} -> {result.hypervolume[-1]:.4f}")
    print(f"proposals           {result.rejections}")
    print("Pareto front (similarity, differentiation, closest target, program):")
    for c in result.front:
        print(f"  {c.similarity:.3f}  {c.differentiation:.3f}  {c.target:24s} "
              f"{c.text.strip().splitlines()[-1][:70]}")
    print(f"run directory       {args.run_dir}")
    return 0
