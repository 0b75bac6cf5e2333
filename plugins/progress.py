"""A live status line while a MIP solves: seconds, nodes, incumbent, bound and gap, redrawn
at most every `every` seconds on stderr (tqdm). SCIP's side is an event handler on node
and LP events (PySCIPOpt's `Eventhdlr`), HiGHS's its MIP interrupt callback; neither changes
the search. `coplug solve` shows it on a terminal unless `--tee` shows the solver's log."""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from pyscipopt import SCIP_EVENTTYPE, Eventhdlr
from tqdm.auto import tqdm

from coplug.plugins.bar import on_terminal
from coplug.plugins.base import check_problem_stage, checked_plugin_name
from coplug.plugins.errors import InputError
from coplug.plugins.results import relative_gap
from coplug.plugins.varmap import VarMap

_EVENTS = SCIP_EVENTTYPE.NODESOLVED | SCIP_EVENTTYPE.BESTSOLFOUND | SCIP_EVENTTYPE.LPSOLVED


class Progress:
    """Show a solve's progress (nodes, incumbent, bound, gap) on one redrawn line.

    `every` is the least number of seconds between two redraws; `file` the stream (stderr
    by default). `statistics()` gives the number of redraws and the last figures shown."""

    reports = True  # its statistics go into `Result.plugin_stats` (see `terminal_progress`)

    def __init__(self, every: float = 0.5, file: TextIO | None = None,
                 name: str = "progress") -> None:
        from coplug.formulations.checks import check_positive  # imports coplug.plugins

        self.every = check_positive(every, "every", zero_ok=True)  # seconds
        if file is not None and not callable(getattr(file, "write", None)):
            raise InputError(f"Progress file must be a text stream (with .write), or None for "
                             f"stderr; got {file!r}")
        self.file = file
        self.name = checked_plugin_name(name)
        self._bar: Any = None
        self._own: TextIO | None = None  # a duplicate of stderr's descriptor, see _open
        self._last = -math.inf
        self._stats: dict[str, Any] = {}

    def attach(self, scip_model: Any, var_map: VarMap | None = None) -> None:
        """Include the event handler that redraws the line on SCIP's node and LP events."""
        check_problem_stage(scip_model, "Progress")
        self._open("scip")
        try:
            scip_model.includeEventhdlr(_ScipEvents(self), f"{self.name}_events",
                                        "redraws the progress line")
        except Exception as exc:  # PySCIPOpt raises a bare Exception for SCIP's error code
            self.close()
            raise InputError(f"SCIP refused the event handler {self.name + '_events'!r} "
                             f"({exc}); give each Progress of a solve a name of its own, "
                             "and no other plugin that name") from exc

    def attach_highs(self, highs: Any, columns: dict[int, int], block: Any,
                     rejects: Callable[[Any], bool] | None = None) -> None:
        """Subscribe to HiGHS's MIP interrupt checks, made often during a MIP solve (an LP
        has none: its line stays at its start)."""
        self._open("highs")

        def check(event: Any) -> None:
            out = event.data_out
            self.show(out.running_time, out.mip_node_count, out.mip_primal_bound,
                      out.mip_dual_bound)

        highs.cbMipInterrupt.subscribe(check)

    def show(self, seconds: float, nodes: int, incumbent: float, bound: float) -> None:
        """Redraw the line when `every` seconds have passed since the last redraw."""
        now = time.perf_counter()
        if self._bar is None or now - self._last < self.every:
            return
        self._last = now
        found = math.isfinite(incumbent) and abs(incumbent) < 1e20
        known = math.isfinite(bound) and abs(bound) < 1e20
        gap = relative_gap(incumbent, bound) if found and known else math.inf
        self._stats.update(redraws=self._stats["redraws"] + 1, nodes=int(nodes),
                           incumbent=incumbent if found else None,
                           bound=bound if known else None, gap=gap)
        try:
            self._bar.set_postfix_str(
                f"{seconds:.1f} s, {int(nodes)} node{'' if int(nodes) == 1 else 's'}, "
                f"incumbent {f'{incumbent:.10g}' if found else '-'}, bound "
                f"{f'{bound:.10g}' if known else '-'}, gap "
                f"{f'{gap:.2%}' if math.isfinite(gap) else '-'}", refresh=True)
        except UNWRITABLE:  # stderr closed, a broken pipe, a full disk: no line, go on
            self._bar = None

    def finish(self, result: Any) -> None:
        """Take the line away once the solve is over (the result is printed after)."""
        self.close()

    def solve_failed(self) -> None:
        """Remove the line of a solve that raised (`coplug.plugins.base.released_on_failure`)."""
        self.close()

    def close(self) -> None:
        """Remove the line (a solve's `finish`, a failed one's `solve_failed`, the next
        attach)."""
        bar, own, self._bar, self._own = self._bar, self._own, None, None
        for stream in (bar, own):
            try:
                if stream is not None:
                    stream.close()
            except UNWRITABLE:
                pass  # the line could not be taken away where it could not be drawn

    def statistics(self) -> dict[str, Any]:
        """Redraws and the last figures shown (None where there was none yet)."""
        return dict(self._stats)

    def _open(self, solver: str) -> None:
        """A fresh line for a new solve."""
        self.close()
        self._last = -math.inf
        self._stats = {"redraws": 0, "nodes": 0, "incumbent": None, "bound": None,
                       "gap": math.inf}
        if self.file is None:
            self._own = _duplicate_stderr()
        stream = self.file if self.file is not None else self._own or sys.stderr
        if stream is None:  # no stderr at all (pythonw, `2>&-`): no line, the solve goes on
            self._bar = None
            return
        try:
            self._bar = tqdm(desc=solver, file=stream, leave=False,
                             bar_format="{desc}{postfix}")
        except UNWRITABLE:
            self._bar = None


# What writing the line may raise where stderr cannot take it (closed: ValueError; a pipe
# whose reader left: BrokenPipeError; /dev/full: OSError): the solve goes on without it.
UNWRITABLE = (OSError, ValueError)


def terminal_progress() -> list[Progress]:
    """A `Progress` plugin where stderr is a terminal (a command's long solve shows its live
    line, as `coplug solve` does), none where it is a file or a pipe; it keeps no report in
    the result (`reports` False), being a line drawn, not a plugin the caller asked for."""
    if not on_terminal():
        return []
    line = Progress()
    line.reports = False
    return [line]


def _duplicate_stderr() -> TextIO | None:
    """A stream on a duplicate of stderr's file descriptor: Pyomo's solver interfaces
    redirect descriptor 2 into a pipe while the solver runs (to capture its log), which
    swallowed every line written to stderr itself. None where stderr has no descriptor."""
    try:
        descriptor = os.dup(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a notebook's or a test's stream
        return None
    return os.fdopen(descriptor, "w", buffering=1)


class _ScipEvents(Eventhdlr):
    """Catches node-solved, new-incumbent and LP-solved events and asks for a redraw."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def eventinit(self) -> None:
        """Catch the events for the whole solve."""
        self.model.catchEvent(_EVENTS, self)

    def eventexit(self) -> None:
        """Stop catching them."""
        self.model.dropEvent(_EVENTS, self)

    def eventexec(self, event: Any) -> None:
        """Hand SCIP's figures to the line (it redraws only every `every` seconds)."""
        scip = self.model
        self.progress.show(scip.getSolvingTime(), scip.getNNodes(), scip.getPrimalbound(),
                           scip.getDualbound())
