"""SCIP primal heuristic: solve assignment-structured blocks of any MIP by warm-started JV.

At attach time it finds blocks generically: binary variables that sit in exactly two
set-partitioning rows (sum x = 1) whose rows split into a row and a column family. At each
LP node it solves the block's LAP on LP-guided costs (warm-started from the previous
call's duals), repairs the assignment (for diagonal-free square blocks, a permutation:
cycles are patched into one), fixes the block in probing mode, completes the other
variables by the probing LP, and hands the result to SCIP's `trySol`.
"""

from __future__ import annotations

import functools
import math
import numbers
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from pyscipopt import SCIP_HEURTIMING, SCIP_LPSOLSTAT, SCIP_RESULT, Heur

from coplug.plugins.base import check_problem_stage, solve_free_state
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError, TimeLimitError
from coplug.plugins.lap import bipartite
from coplug.plugins.lap.solver import solve_lap
from coplug.plugins.limits import SCIP_INT_MAX, checked_scip_int
from coplug.plugins.varmap import VarMap


@dataclass
class Block:
    """One assignment block: pair k joins row rows[k] to column cols[k] through vars[k];
    `costs` are its objective coefficients in the minimizing sense (negated for max)."""

    n: int
    m: int
    rows: np.ndarray
    cols: np.ndarray
    costs: np.ndarray
    vars: list[Any]
    partner: np.ndarray | None = None
    duals: np.ndarray | None = None
    tvars: list[Any] = field(default_factory=list)

    def dense(self, values: np.ndarray, fill: float = np.inf) -> np.ndarray:
        """n x m matrix of per-pair `values`, `fill` where no pair exists."""
        out = np.full((self.n, self.m), fill)
        out[self.rows, self.cols] = values
        return out


def find_blocks(scip: Any, min_size: int = 2) -> list[Block]:
    """Assignment blocks among the linear set-partitioning constraints of a SCIP model.
    Variables are told apart by SCIP's pointer, not their name (SCIP lets two share one)."""
    by_ptr: dict[int, Any] = {}
    unit: list[list[int]] = []
    for cons in scip.getConss():
        if cons.getConshdlrName() != "linear":
            continue
        if abs(scip.getRhs(cons) - 1) > 1e-9 or abs(scip.getLhs(cons) - 1) > 1e-9:
            continue
        variables = scip.getConsVars(cons)
        if all(abs(a - 1) <= 1e-9 for a in scip.getConsVals(cons)) and all(
            v.vtype() == "BINARY" for v in variables
        ):
            by_ptr.update((v.ptr(), v) for v in variables)
            unit.append([v.ptr() for v in variables])
    where: dict[int, list[int]] = {}
    for k, ptrs in enumerate(unit):
        for ptr in ptrs:
            where.setdefault(ptr, []).append(k)
    linked = [(name, ks) for name, ks in where.items() if len(ks) == 2]
    ends = np.array([ks for _, ks in linked], dtype=np.int64).reshape(-1, 2)
    sign = -1.0 if scip.getObjectiveSense() == "maximize" else 1.0  # LAP costs minimize
    blocks = []
    for part in bipartite.split(len(unit), ends):
        if not part.bipartite:
            continue
        side_a, side_b = part.side_a, part.side_b
        if min(len(side_a), len(side_b)) < min_size:
            continue
        if len(side_a) > len(side_b):
            side_a, side_b = side_b, side_a
        row_of = {k: i for i, k in enumerate(sorted(side_a))}
        col_of = {k: j for j, k in enumerate(sorted(side_b))}
        rows, cols, variables = [], [], []
        for e in part.edges.tolist():
            a, b = ends[e].tolist()
            r, c = (a, b) if a in row_of else (b, a)
            rows.append(row_of[r])
            cols.append(col_of[c])
            variables.append(by_ptr[linked[e][0]])
        block = Block(
            n=len(row_of), m=len(col_of), rows=np.array(rows), cols=np.array(cols),
            costs=sign * np.array([v.getObj() for v in variables], dtype=float), vars=variables,
        )
        block.partner = _missing_diagonal(block)
        blocks.append(block)
    return blocks


def _missing_diagonal(block: Block) -> np.ndarray | None:
    """If each row lacks exactly one column and those form a bijection, the block is a
    permutation of one set (row r ~ column partner[r]): cycles can then be patched."""
    if block.n != block.m or len(block.rows) != block.n * (block.n - 1):
        return None
    present = np.zeros((block.n, block.m), dtype=bool)
    present[block.rows, block.cols] = True
    missing = np.argwhere(~present)
    if len(missing) != block.n or len(set(missing[:, 0].tolist())) != block.n or \
            len(set(missing[:, 1].tolist())) != block.n:  # a row missing two: no bijection
        return None
    partner = np.empty(block.n, dtype=np.int64)
    partner[missing[:, 0]] = missing[:, 1]
    return partner


def _cheapest_per_pair(block: Block, guided: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Indices of the allowed variables that stand for their (row, column) pair: the one of
    least guided cost where several variables join the same two rows (summed as one sparse
    entry, the LAP saw their total, and every parallel variable of a chosen pair was set)."""
    index = np.flatnonzero(allowed)
    pair = block.rows[index] * block.m + block.cols[index]
    order = np.lexsort((guided[index], pair))
    first = np.ones(len(order), dtype=bool)
    first[1:] = pair[order][1:] != pair[order][:-1]
    return index[order[first]]


def _time_left(scip: Any) -> float | None:
    """Seconds left before SCIP's own time limit (None when it has none), so the heuristic
    never runs SCIP past it."""
    limit = scip.getParam("limits/time")
    if limit >= scip.infinity():
        return None
    return max(limit - scip.getSolvingTime(), 1e-9)


def successor_cycles(col_of_row: np.ndarray, partner: np.ndarray) -> list[list[int]]:
    """Cycles of the permutation r -> row identified with the column assigned to r."""
    row_of_col = np.empty_like(partner)
    row_of_col[partner] = np.arange(len(partner))
    succ = row_of_col[col_of_row]
    seen = np.zeros(len(succ), dtype=bool)
    cycles = []
    for start in range(len(succ)):
        if seen[start]:
            continue
        cycle, r = [], start
        while not seen[r]:
            seen[r] = True
            cycle.append(r)
            r = int(succ[r])
        cycles.append(cycle)
    return cycles


def patch_cycles(col_of_row: np.ndarray, cost: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """Merge permutation cycles into one (Karp patching): repeatedly swap the columns of two
    rows in different cycles, the cheapest swap touching the smallest cycle first."""
    cols = col_of_row.copy()
    while True:
        cycles = successor_cycles(cols, partner)
        if len(cycles) == 1:
            return cols
        smallest = min(cycles, key=len)
        inside = np.zeros(len(cols), dtype=bool)
        inside[smallest] = True
        a = np.array(smallest)
        b = np.flatnonzero(~inside)
        delta = (cost[a[:, None], cols[b][None, :]] + cost[b[None, :], cols[a][:, None]]
                 - cost[a, cols[a]][:, None] - cost[b, cols[b]][None, :])
        k = int(np.argmin(delta))
        if not np.isfinite(delta.flat[k]):
            return cols
        ia, ib = a[k // len(b)], b[k % len(b)]
        cols[ia], cols[ib] = cols[ib], cols[ia]


# Variable statuses SCIP lets probing change bounds of (not fixed, aggregated or negated).
_ACTIVE = ("LOOSE", "COLUMN")


def _fresh_stats() -> dict[str, Any]:
    """Zeroed counters for one solve."""
    return {"blocks": 0, "calls": 0, "lap_solves": 0, "warm_solves": 0, "augmentations": 0,
            "patched_cycles": 0, "candidates": 0, "completed": 0, "cut_off": 0,
            "accepted": 0, "lap_time": 0.0, "time": 0.0, "error": None}


class _Heur(Heur):
    """The PySCIPOpt heuristic one model includes, with that model's blocks and counters
    (one LapHeuristic attached to two models had the first probe the second's variables:
    a segmentation fault); all logic lives in LapHeuristic."""

    def __init__(self, owner: LapHeuristic, blocks: list[Block], stats: dict[str, Any]) -> None:
        super().__init__()
        self.owner, self.blocks, self.stats = owner, blocks, stats

    def heurinit(self) -> None:
        """A new transformed problem (each optimize after freeTransform, as coplug's second
        solves of a model do): the previous one's variables are freed."""
        for block in self.blocks:
            block.tvars = []

    def heurexec(self, heurtiming: Any, nodeinfeasible: bool) -> dict[str, Any]:
        try:
            return {"result": self.owner.run(self.model, self)}
        except Exception as exc:  # a failing heuristic must not abort SCIP's search
            self.owner.record_error(exc, self.stats)
            return {"result": SCIP_RESULT.DIDNOTRUN}


class LapHeuristic:
    """Primal heuristic plugin: warm-started LAP on assignment blocks, repaired, trySol'd.

    `guidance` weights LP values in the LAP costs (cost - guidance * scale * x_lp);
    `max_calls` bounds the work per solve.
    """

    name = "lap_heuristic"

    def __init__(self, guidance: float = 1.0, max_calls: int = 200, freq: int = 1,
                 priority: int = -1000) -> None:
        if isinstance(guidance, bool) or not isinstance(guidance, numbers.Real) \
                or not math.isfinite(guidance):
            raise InputError(f"LapHeuristic guidance must be a finite number, got {guidance!r}")
        self.guidance = float(guidance)
        self.max_calls = checked_scip_int("LapHeuristic max_calls", max_calls, 1)
        self.freq = checked_scip_int("LapHeuristic freq", freq, 0)
        self.priority = checked_scip_int("LapHeuristic priority", priority, -SCIP_INT_MAX)
        self._stats = _fresh_stats()

    _heur_ref: Any = staticmethod(lambda: None)  # the latest model's _Heur, held weakly

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the latest solve's heuristic (it holds SCIP variables)."""
        return solve_free_state(self.__dict__)

    def attach(self, scip_model: Any, var_map: VarMap | None = None) -> None:
        """Find the assignment blocks and include the heuristic (no-op when there are none);
        counters start from zero for each solve, and `statistics` reads the latest one."""
        check_problem_stage(scip_model, "LapHeuristic")
        blocks = find_blocks(scip_model)
        self._stats = _fresh_stats()
        self._stats["blocks"] = len(blocks)
        self.__dict__.pop("_heur_ref", None)  # the previous model's heuristic: not this one's
        if not blocks:
            return
        _load_kernels()
        heur = _Heur(self, blocks, self._stats)
        try:
            scip_model.includeHeur(
                heur, self.name, "warm-started JV on assignment blocks", "L",
                priority=self.priority, freq=self.freq, freqofs=0, maxdepth=-1,
                timingmask=SCIP_HEURTIMING.AFTERLPNODE,
            )
        except Exception as exc:  # PySCIPOpt raises a bare Exception for SCIP's error code
            raise InputError(f"SCIP refused the LAP heuristic ({exc}); pass one LapHeuristic "
                             "per solve") from exc
        self._heur_ref = weakref.ref(heur)

    def finish(self, result: Any) -> None:
        """Drop the blocks once the solve is over: their SCIP variables die with the model
        (read afterwards, one crashed the interpreter)."""
        heur = self._heur_ref()
        if heur is not None:
            heur.blocks = []

    def solve_failed(self) -> None:
        """Drop the blocks of a solve that raised, as `finish` does."""
        self.finish(None)

    def statistics(self) -> dict[str, Any]:
        """Counters: calls, LAP solves, augmentations, candidates (assignments tried), completed
        (their probing LP solved), cut off (probing LP infeasible or no better than the
        incumbent), accepted solutions, time, and the first error a call hit (None)."""
        return dict(self._stats)

    def record_error(self, exc: Exception, stats: dict[str, Any]) -> None:
        """Keep the first error a call raised; SCIP goes on without the heuristic's answer."""
        if stats["error"] is None:
            stats["error"] = f"{type(exc).__name__}: {exc}"
            warn_at_caller(f"LapHeuristic failed, SCIP goes on without it: {exc}",
                           RuntimeWarning)

    def run(self, scip: Any, heur: Any) -> Any:
        """One heuristic call: every block of `heur`'s model gives a candidate; returns a
        SCIP_RESULT."""
        if heur.stats["calls"] >= self.max_calls:
            return SCIP_RESULT.DIDNOTRUN
        if scip.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
            return SCIP_RESULT.DIDNOTRUN
        start = time.perf_counter()
        heur.stats["calls"] += 1
        found = False
        for block in heur.blocks:
            found |= self._run_block(scip, heur, block)
        heur.stats["time"] += time.perf_counter() - start
        return SCIP_RESULT.FOUNDSOL if found else SCIP_RESULT.DIDNOTFIND

    def _run_block(self, scip: Any, heur: Any, block: Block) -> bool:
        """Solve, repair and try one block; True when SCIP accepted a new solution."""
        if not block.tvars:
            block.tvars = [scip.getTransformedVar(v) for v in block.vars]
        lb = np.array([v.getLbLocal() for v in block.tvars])
        ub = np.array([v.getUbLocal() for v in block.tvars])
        x_lp = np.array([v.getLPSol() for v in block.tvars])
        scale = float(np.median(np.abs(block.costs))) or 1.0
        guided = block.costs - self.guidance * scale * x_lp - 1e6 * scale * (lb > 0.5)
        pick = _cheapest_per_pair(block, guided, ub > 0.5)
        cost = sp.csr_matrix(
            (guided[pick], (block.rows[pick], block.cols[pick])), shape=(block.n, block.m)
        )
        duals = block.duals if block.duals is not None and block.n <= block.m else None
        t0 = time.perf_counter()
        try:
            solution = solve_lap(cost, row_duals=duals, time_limit=_time_left(scip))
        except (InputError, TimeLimitError):
            return False
        finally:
            heur.stats["lap_time"] += time.perf_counter() - t0
        heur.stats["lap_solves"] += 1
        heur.stats["warm_solves"] += duals is not None
        heur.stats["augmentations"] += solution.augmentations
        block.duals = solution.row_duals
        cols = np.empty(block.n, dtype=np.int64)
        cols[solution.row_ind] = solution.col_ind
        if block.partner is not None:
            true_cost = np.full((block.n, block.m), np.inf)
            true_cost[block.rows[pick], block.cols[pick]] = block.costs[pick]
            n_cycles = len(successor_cycles(cols, block.partner))
            if n_cycles > 1:
                heur.stats["patched_cycles"] += n_cycles - 1
                cols = patch_cycles(cols, true_cost, block.partner)
        chosen = np.zeros(len(block.vars), dtype=bool)
        chosen[pick[cols[block.rows[pick]] == block.cols[pick]]] = True
        return self._try(scip, heur, block, chosen, lb, ub)

    def _try(self, scip: Any, heur: Any, block: Block, chosen: np.ndarray, lb: np.ndarray,
             ub: np.ndarray) -> bool:
        """Fix the block's `chosen` variables to 1 and the rest to 0 in probing, complete by
        LP, and trySol it."""
        if np.any(chosen & (ub < 0.5)) or np.any(~chosen & (lb > 0.5)):
            return False
        heur.stats["candidates"] += 1
        scip.startProbing()
        try:
            for var, one in zip(block.tvars, chosen, strict=True):
                if var.getLbLocal() == var.getUbLocal() or var.getStatus() not in _ACTIVE:
                    continue  # fixed, or (multi-)aggregated by presolve: set through others
                if one:
                    scip.chgVarLbProbing(var, 1.0)
                else:
                    scip.chgVarUbProbing(var, 0.0)
            lperror, cutoff = scip.solveProbingLP()
            if lperror or cutoff or scip.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
                heur.stats["cut_off"] += 1
                return False
            values = [(v, v.getLPSol()) for v in scip.getVars(transformed=True)]
        finally:
            scip.endProbing()
        heur.stats["completed"] += 1
        sol = scip.createSol(heur)
        for var, value in values:
            if var.vtype() != "CONTINUOUS" and abs(value - round(value)) <= 1e-6:
                value = float(round(value))
            scip.setSolVal(sol, var, value)
        accepted = bool(scip.trySol(sol, printreason=False))
        heur.stats["accepted"] += accepted
        return accepted


@functools.cache
def _load_kernels() -> None:
    """Load the compiled JV kernels before SCIP's clock starts (once per process): their first
    call takes about 0.25 s, which a short time limit would otherwise pay inside the search."""
    solve_lap(np.eye(2))
