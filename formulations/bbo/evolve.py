"""Evolution of benchmarks: NSGA-II over programs on (similarity to targets, differentiation).

Similarity = 1 / (1 + d), d the normalized ELA-feature distance to the closest target;
differentiation = portfolio rank separation (see `portfolio.differentiation`). Each run
can write a directory with every program and score, the Pareto front (JSON, Pyomo
scripts, PNG plot) and the hypervolume per generation, rewritten after each generation.
"""

from __future__ import annotations

import errno
import json
import os
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: runs on one directory are not kept apart
    fcntl = None  # type: ignore[assignment]

from coplug.formulations.bbo.bbob import bbob_problem
from coplug.formulations.bbo.export import json_text, program_to_json, pyomo_script
from coplug.formulations.bbo.features import (
    FEATURE_NAMES,
    as_box_function,
    ela_features,
    feature_distance,
    normalize,
)
from coplug.formulations.bbo.grammar import Program, check_program, to_text
from coplug.formulations.bbo.portfolio import (
    SOLVERS,
    differentiation,
    min_runs_for_significance,
    run_portfolio,
)
from coplug.formulations.bbo.proposers import Proposer, Scored, SymbolicProposer
from coplug.formulations.checks import check_seed
from coplug.plugins.arguments import check_flag
from coplug.plugins.bar import progress_bar
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

# Smallest value of each integer setting of EvolutionConfig (sample 0: 50 * dim).
COUNT_MINIMA = {"dim": 2, "population": 2, "generations": 0, "budget": 2, "seeds": 1,
                "sample": 0, "max_nodes": 1}
# Counts whose whole range is built up front: generations feed a progress bar's len() (past
# 2**63 an OverflowError), seeds a list (10**18 of them ran out of memory).
COUNT_MAXIMA = {"generations": 10**6, "seeds": 10**4}


@dataclass
class EvolutionConfig:
    """Sizes of one evolution run (defaults: the benchmark's); `alpha` is the significance
    at which the portfolio's solver pairs count as separated."""

    dim: int = 2
    targets: tuple[int, ...] = (1, 3, 15, 21)
    population: int = 12
    generations: int = 8
    budget: int = 100
    seeds: int = 5
    sample: int = 0
    max_nodes: int = 40
    seed: int = 0
    lower: float = -5.0
    upper: float = 5.0
    alpha: float = 0.05

    def __post_init__(self) -> None:
        """Refuse each bad setting by name (a float count failed deep inside numpy)."""
        for name, least in COUNT_MINIMA.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) \
                    or value < least:
                raise InputError(f"need an integer {name} >= {least}, got {value!r}")
            if value > COUNT_MAXIMA.get(name, value):
                raise InputError(f"{name} must be at most {COUNT_MAXIMA[name]:,}, got {value!r}")
        self.targets = _target_ids(self.targets)
        check_seed(self.seed)  # numpy and torch take [0, 2**63)
        need = min_runs_for_significance(self.alpha)
        if self.seeds < need:
            raise InputError(f"seeds={self.seeds} is too few: with fewer than {need} runs per "
                             "solver no Mann-Whitney p-value can fall below "
                             f"alpha={self.alpha}, so every differentiation score would be 0; "
                             f"use seeds >= {need}")
        self.sample = self.sample or 50 * self.dim


def _target_ids(targets: Any) -> tuple[int, ...]:
    """BBOB ids 1..24, each once, as a tuple (a None failed on iterating it; an id twice
    gave two targets one name)."""
    if isinstance(targets, (str, bytes)) or not isinstance(targets, Iterable):
        raise InputError(f"targets must be a list of BBOB ids 1..24 (--targets), got {targets!r}")
    ids = tuple(targets)
    for fid in ids:
        if isinstance(fid, bool) or not isinstance(fid, int | np.integer) or not 1 <= fid <= 24:
            raise InputError(f"targets must be BBOB ids 1..24 (--targets), got {fid!r}")
    if len(set(ids)) < len(ids):
        raise InputError(f"targets lists a BBOB id twice: {ids}")
    return tuple(int(fid) for fid in ids)


@dataclass(eq=False)
class Candidate(ValueEquality):
    """One evaluated program and its scores."""

    id: int
    generation: int
    text: str
    similarity: float
    differentiation: float
    distance: float
    target: str
    features: list[float]
    best_value: float
    solver_best: dict[str, float]
    parents: list[int] = field(default_factory=list)
    program: Program | None = field(default=None, repr=False, compare=False)

    @property
    def objectives(self) -> tuple[float, float]:
        return self.similarity, self.differentiation

    def scored(self) -> Scored:
        return Scored(self.program, self.similarity, self.differentiation, self.target,
                      tuple(self.features))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("program")
        return data


@dataclass(eq=False)
class EvolutionResult(ValueEquality):
    """All candidates, the final population, the Pareto front and hypervolume history."""

    candidates: list[Candidate]
    population: list[Candidate]
    front: list[Candidate]
    hypervolume: list[float]
    rejections: dict[str, int]
    target_features: dict[str, list[float]]


def target_features(config: EvolutionConfig,
                    extra: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Normalized features of the BBOB targets (and extra callables/Pyomo models)."""
    out = {}
    for fid in config.targets:
        problem = bbob_problem(fid, config.dim)
        out[f"f{fid}_{problem.name}"] = _features(as_box_function(problem), config)
    for name, target in (extra or {}).items():
        if name in out:  # it replaced that target's features
            raise InputError(f"target {name!r} is named like a BBOB target of the run: "
                             "rename it")
        fn = as_box_function(target, dim=config.dim, lower=config.lower, upper=config.upper,
                             name=name)
        if fn.dim != config.dim:
            raise InputError(f"target {name!r} has {fn.dim} variables, evolution uses {config.dim}")
        out[name] = _features(fn, config)
    if not out:
        raise InputError("evolution needs at least one target")
    return out


def _features(fn: Any, config: EvolutionConfig) -> np.ndarray:
    return normalize(ela_features(fn, config.sample, seed=config.seed), config.sample)


def score_program(program: Program, targets: dict[str, np.ndarray], config: EvolutionConfig,
                  ident: int = 0, generation: int = 0, parents: Sequence[int] = ()) -> Candidate:
    """Features, closest target and portfolio differentiation of one program."""
    fn = as_box_function(program)
    feats = _features(fn, config)
    dists = {name: feature_distance(feats, f) for name, f in targets.items()}
    target = min(dists, key=dists.get)
    portfolio = run_portfolio(fn, config.budget, range(config.seeds), SOLVERS)
    diff = differentiation(portfolio, alpha=config.alpha)
    return Candidate(ident, generation, to_text(program), 1.0 / (1.0 + dists[target]),
                     diff.score, dists[target], target, feats.tolist(), portfolio.best_value,
                     portfolio.best_by_solver(), list(parents), program)


def non_dominated_sort(points: np.ndarray) -> list[list[int]]:
    """Fronts (lists of indices) of points to maximize, best front first."""
    n = len(points)
    ge = np.all(points[:, None] >= points[None], axis=-1)
    gt = np.any(points[:, None] > points[None], axis=-1)
    dominates = ge & gt
    count = dominates.sum(axis=0)
    fronts, current = [], [i for i in range(n) if count[i] == 0]
    while current:
        fronts.append(current)
        nxt = []
        for i in current:
            for j in np.flatnonzero(dominates[i]):
                count[j] -= 1
                if count[j] == 0:
                    nxt.append(int(j))
        current = sorted(nxt)
    return fronts


def crowding_distance(points: np.ndarray) -> np.ndarray:
    """NSGA-II crowding distance within one front."""
    n, m = points.shape
    dist = np.zeros(n)
    if n <= 2:
        return np.full(n, np.inf)
    for k in range(m):
        order = np.argsort(points[:, k], kind="stable")
        span = points[order[-1], k] - points[order[0], k]
        dist[order[0]] = dist[order[-1]] = np.inf
        if span > 0:
            dist[order[1:-1]] += (points[order[2:], k] - points[order[:-2], k]) / span
    return dist


def hypervolume(points: np.ndarray, ref: tuple[float, float] = (0.0, 0.0)) -> float:
    """Area dominated by 2-D points (maximized) above the reference point."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    pts = pts[np.all(pts > ref, axis=1)]
    if not len(pts):
        return 0.0
    pts = pts[np.argsort(-pts[:, 0], kind="stable")]
    area, best_y = 0.0, ref[1]
    for x, y in pts:
        if y > best_y:
            area += (x - ref[0]) * (y - best_y)
            best_y = y
    return float(area)


def select(pool: list[Candidate], size: int) -> list[Candidate]:
    """NSGA-II survival: whole fronts first, the last one cut by crowding distance."""
    points = np.array([c.objectives for c in pool])
    chosen: list[int] = []
    for front in non_dominated_sort(points):
        if len(chosen) + len(front) <= size:
            chosen += front
            continue
        crowd = crowding_distance(points[front])
        order = np.argsort(-crowd, kind="stable")
        chosen += [front[i] for i in order[: size - len(chosen)]]
        break
    return [pool[i] for i in chosen]


def _tournament(pop: list[Candidate], k: int, rng: np.random.Generator) -> list[Candidate]:
    """k parents by binary tournament on (front rank, crowding)."""
    points = np.array([c.objectives for c in pop])
    rank = np.zeros(len(pop), dtype=int)
    crowd = np.zeros(len(pop))
    for r, front in enumerate(non_dominated_sort(points)):
        rank[front] = r
        crowd[front] = crowding_distance(points[front])
    out = []
    for _ in range(k):
        i, j = rng.integers(len(pop), size=2)
        better = i if (rank[i], -crowd[i]) <= (rank[j], -crowd[j]) else j
        out.append(pop[int(better)])
    return out


def pareto_front(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Non-dominated candidates (shortest program per objective point), by decreasing similarity."""
    if not candidates:
        return []
    points = np.array([c.objectives for c in candidates])
    first = non_dominated_sort(points)[0]
    best: dict[tuple[float, float], Candidate] = {}
    for i in first:
        key = tuple(np.round(points[i], 9))
        if key not in best or len(candidates[i].text) < len(best[key].text):
            best[key] = candidates[i]
    return sorted(best.values(), key=lambda c: -c.similarity)


def evolve(config: EvolutionConfig, proposer: Proposer | None = None,
           run_dir: str | Path | None = None, extra_targets: dict[str, Any] | None = None,
           progress: bool = False,
           callback: Callable[[int, list[Candidate]], None] | None = None,
           overwrite: bool = False) -> EvolutionResult:
    """Run NSGA-II: random initial programs, then `generations` rounds of proposals. The
    run directory is checked first (see `RunWriter`) and written after every proposal
    round (and on an interrupt, or an LLM endpoint that stops the run after answering), so
    an interrupted run leaves the generations it finished; a run whose endpoint never
    answered leaves no directory.
    `progress` draws a bar of the generations on stderr."""
    progress = check_flag(progress, "progress")
    overwrite = check_flag(overwrite, "overwrite")
    writer = RunWriter(Path(run_dir), overwrite) if run_dir is not None else None
    rng = np.random.default_rng(config.seed)
    targets = target_features(config, extra_targets)
    seeder = SymbolicProposer(config.dim, config.lower, config.upper, config.max_nodes)
    proposer = proposer or seeder
    everyone: list[Candidate] = []
    seen: set[str] = set()
    duplicates = Counter()
    history: list[float] = []

    def admit(programs: Sequence[Program], gen: int, parents: Sequence[int]) -> list[Candidate]:
        out = []
        for program in programs:
            text = to_text(program)
            if text in seen:
                duplicates["rejected_duplicate"] += 1
                continue
            seen.add(text)
            cand = score_program(program, targets, config, len(everyone), gen, parents)
            everyone.append(cand)
            out.append(cand)
        return out

    def counts() -> dict[str, int]:
        return dict(proposer.stats) | dict(duplicates)

    def snapshot(population: list[Candidate], finished: bool = False,
                 tally: dict[str, int] | None = None) -> EvolutionResult:
        result = EvolutionResult(everyone, population, pareto_front(everyone), list(history),
                                 counts() if tally is None else tally,
                                 {k: v.tolist() for k, v in targets.items()})
        if writer is not None:
            writer.write(result, config, proposer.name, finished)
        return result

    population: list[Candidate] = []
    # candidates, hypervolumes and proposal counts of the finished generations: an
    # interrupted one is not saved
    done, rounds, tally = 0, 0, counts()
    try:
        population = admit([seeder.random_program(rng) for _ in range(config.population)], 0,
                           [])
        history.append(hypervolume(np.array([c.objectives for c in everyone])))
        done, rounds, tally = len(everyone), len(history), counts()
        bar = progress_bar(range(1, config.generations + 1), desc="evolve",
                           disable=not progress, leave=False)
        for gen in bar:
            parents = _tournament(population, config.population, rng)
            context = {"targets": {k: v.tolist() for k, v in targets.items()},
                       "feature_names": FEATURE_NAMES}
            programs = proposer.propose([p.scored() for p in parents], config.population, rng,
                                        context)
            children = admit(_checked_proposals(programs, config, proposer.name), gen,
                             [p.id for p in parents])
            population = select(population + children, config.population)
            history.append(hypervolume(np.array([c.objectives for c in everyone])))
            done, rounds, tally = len(everyone), len(history), counts()
            snapshot(population)
            bar.set_postfix(hv=f"{history[-1]:.4f}", front=len(pareto_front(everyone)))
            if callback:
                callback(gen, population)
        return snapshot(population, finished=True)
    except (KeyboardInterrupt, ConnectionError) as exc:
        # Ctrl-C, or an endpoint that answered before and now stops the run (a refused key):
        # the finished generations are kept; one dead from its first request keeps none
        if isinstance(exc, KeyboardInterrupt) or getattr(proposer, "answered", False):
            del everyone[done:]  # scored programs of the generation cut short
            del history[rounds:]
            if everyone:
                snapshot(population, tally=tally)
        raise
    finally:  # the directory's lock, taken at the first write
        if writer is not None:
            writer.release()


def _checked_proposals(programs: Any, config: EvolutionConfig, name: str) -> list[Program]:
    """A proposer's programs, each over the run's dimension and box, else an InputError
    naming the first that is not (a user's proposer had a 3-D program join a 2-D run and
    top its front, and None failed inside the run)."""
    if isinstance(programs, (str, bytes)) or not isinstance(programs, Iterable):
        raise InputError(f"proposer {name!r} must return a list of Programs, got "
                         f"{type(programs).__name__}")
    programs = list(programs)
    for program in programs:
        check_program(program, f"proposer {name!r}'s proposals")
        if (program.dim, program.lower, program.upper) != (config.dim, config.lower,
                                                           config.upper):
            raise InputError(
                f"proposer {name!r} proposed a program over [{program.lower!r}, "
                f"{program.upper!r}]^{program.dim}; this run evolves programs over "
                f"[{config.lower!r}, {config.upper!r}]^{config.dim}: {to_text(program)!r}")
    return programs


RUN_FILES = ("config.json", "programs.jsonl", "pareto_front.json", "pareto_front.png",
             "history.json")


class RunWriter:
    """A run directory, checked before any work and rewritten after every generation.

    A path that is a file (or lies under one) or cannot be created is refused; so is a
    non-empty directory unless `overwrite`, which removes an earlier run's files (RUN_FILES
    and front/program_*.py; other files stay) at the first write. Each file is replaced
    atomically, so an interrupt never leaves half of one. From its first write to `release`
    the run holds a lock on the directory: a second run on it is refused then (two runs
    started together had both passed the check and mixed their files).
    """

    def __init__(self, run_dir: Path, overwrite: bool = False) -> None:
        self.dir, self.front_dir, self.overwrite = run_dir, run_dir / "front", overwrite
        self._unlock: weakref.finalize | None = None  # closes the locked descriptor, once
        existing = next(p for p in (run_dir, *run_dir.absolute().parents) if p.exists())
        if not existing.is_dir():
            raise InputError(f"run directory {run_dir}: {existing} is a file; name a directory")
        if existing == run_dir and any(run_dir.iterdir()) and not overwrite:
            raise InputError(f"run directory {run_dir} is not empty: name a new or empty "
                             "one, or pass --overwrite to replace an earlier run's files")
        if not os.access(existing, os.W_OK):
            raise InputError(f"cannot write run directory {run_dir}: {existing} is read-only")
        self._prepare()
        self.started = False  # the directory is made, an earlier run's files removed
        self.front_files: set[Path] = set()
        self._lines: list[str] = []  # programs.jsonl's lines so far

    def _prepare(self) -> None:
        """Prove the directory can be created and written, and refuse entries in the way of
        the run's files (a folder named config.json), all before any generation's work;
        folders made for the proof are removed again, so a run stopped early leaves none."""
        for name in RUN_FILES:
            if (self.dir / name).exists() and not (self.dir / name).is_file():
                raise InputError(f"run directory {self.dir}: {name} exists and is not a file")
        if self.front_dir.exists() and not self.front_dir.is_dir():
            raise InputError(f"run directory {self.dir}: front exists and is not a directory")
        made = [p for p in (self.front_dir, self.dir, *self.dir.absolute().parents)
                if not p.exists()]
        try:
            self.front_dir.mkdir(parents=True, exist_ok=True)
            probe = self.front_dir / ".coplug_write_test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            raise InputError(f"cannot write run directory {self.dir}: "
                             f"{exc.strerror or exc}") from None
        finally:
            for folder in made:
                if folder.is_dir():
                    folder.rmdir()

    def _start(self) -> None:
        """Create the directory, removing the files an earlier run wrote there."""
        try:
            self.front_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create run directory {self.dir}: "
                             f"{exc.strerror or exc}") from None
        self._claim()
        for name in RUN_FILES:
            path = self.dir / name
            if path.is_file():
                path.unlink()
        for path in self.front_dir.glob("program_*.py"):
            path.unlink()
        self.started = True

    def _claim(self) -> None:
        """Lock the directory for this run (released by `release` or at exit), refusing it
        where another run holds it or, without `overwrite`, wrote there since the check."""
        if fcntl is None or self._unlock is not None:  # held already: a retried start
            return
        lock = os.open(self.dir, os.O_RDONLY)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(lock)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                return  # no locks there (NFS refuses one on a folder): runs are not kept apart
            raise InputError(f"run directory {self.dir} is being written by another run; "
                             "name another one") from None
        self._unlock = weakref.finalize(self, os.close, lock)
        others = [p.name for p in self.dir.iterdir() if p != self.front_dir]
        if not self.overwrite and (others or any(self.front_dir.iterdir())):
            self.release()
            raise InputError(f"run directory {self.dir} is not empty: another run wrote "
                             f"there since this one started ({sorted(others)[:3]}); name a "
                             "new or empty one")

    def release(self) -> None:
        """Let other runs have the directory (at the end of the run)."""
        if self._unlock is not None:
            self._unlock()
            self._unlock = None

    def write(self, result: EvolutionResult, config: EvolutionConfig, proposer: str,
              finished: bool) -> None:
        """Programs so far (JSONL, appended), the front (JSON + Pyomo scripts), history;
        the plot once the run is finished."""
        if not self.started:
            self._start()
            _replace_text(self.dir / "config.json",
                          json.dumps(asdict(config) | {"proposer": proposer}, indent=1))
        self._lines += [json.dumps(cand.to_json()) + "\n"
                        for cand in result.candidates[len(self._lines):]]
        del self._lines[len(result.candidates):]  # an interrupted generation's, dropped
        # replaced whole, never appended to: an interrupt mid-append doubled rows
        _replace_text(self.dir / "programs.jsonl", "".join(self._lines))
        self._write_front(result.front)
        if finished:  # before history.json says finished: a Ctrl-C between left no plot
            plot = self.dir / "pareto_front.png"
            tmp = plot.with_name(".pareto_front.tmp.png")
            try:
                plot_front(result, tmp)
                os.replace(tmp, plot)
            finally:
                tmp.unlink(missing_ok=True)
        _replace_text(self.dir / "history.json", json.dumps({
            "hypervolume": result.hypervolume, "rejections": result.rejections,
            "targets": result.target_features, "feature_names": FEATURE_NAMES,
            "generations_done": len(result.hypervolume) - 1, "finished": finished}, indent=1))

    def _write_front(self, front: list[Candidate]) -> None:
        """pareto_front.json and one Pyomo script per front program (dropped ones removed)."""
        paths = {cand.id: self.front_dir / f"program_{cand.id:04d}.py" for cand in front}
        for cand in front:
            if paths[cand.id] not in self.front_files:
                _replace_text(paths[cand.id], pyomo_script(cand.program, name=f"eob_{cand.id}"))
        for stale in self.front_files - set(paths.values()):
            stale.unlink(missing_ok=True)
        self.front_files = set(paths.values())
        _replace_text(self.dir / "pareto_front.json", json_text(
            [cand.to_json() | {"program": program_to_json(cand.program)} for cand in front]))


def _replace_text(path: Path, text: str) -> None:
    """Write a file through a temporary sibling and an atomic rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def plot_front(result: EvolutionResult, path: Path) -> None:
    """Scatter of all candidates with the Pareto front highlighted (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.6))
    pts = np.array([c.objectives for c in result.candidates])
    gens = [c.generation for c in result.candidates]
    sc = ax.scatter(pts[:, 0], pts[:, 1], c=gens, cmap="viridis", s=14, alpha=0.7)
    front = np.array([c.objectives for c in result.front[::-1]])
    ax.step(front[:, 0], front[:, 1], where="pre", color="crimson", lw=1.5)
    ax.scatter(front[:, 0], front[:, 1], color="crimson", s=22, label="Pareto front")
    ax.set_xlabel("similarity to target")
    ax.set_ylabel("portfolio differentiation")
    ax.legend(loc="best", fontsize=8)
    fig.colorbar(sc, ax=ax, label="generation")
    bx.plot(range(len(result.hypervolume)), result.hypervolume, marker="o")
    bx.set_xlabel("generation")
    bx.set_ylabel("hypervolume")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
