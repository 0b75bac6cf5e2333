"""Duals of a model solved with lazy constraints: those of the LP with the rows they added.

`solve(m, plugins=[LazyConstraints(...)])` on a model that declares `m.dual` / `m.rc` (an
LP, or a MIP with `mip_duals="fixed"`) adds the rows the lazy constraints added during the
solve to the model for a moment (a temporary ConstraintList), solves that LP (for a MIP with
its integers fixed, as in `coplug.plugins.mip_duals`), certifies and loads its duals, and
removes the rows. The solution meets every lazy row and that LP is a relaxation of the model
with all of them, so where its optimum equals the solve's the duals (zero for rows never
added) are optimal for the whole model; else none are loaded, with a warning. The added
rows' own duals go to `result.extra["lazy_duals"]`: a list per LazyConstraints `name`, in
the order of its `cuts`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyomo.environ as pyo
from pyomo.common.modeling import unique_component_name
from pyomo.core.base.block import BlockData
from pyomo.core.base.constraint import ConstraintData

from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.mip_duals import (
    FIXED,
    DualSource,
    declared_duals,
    integers_to_fix,
    load_fixed_duals,
    refuse_duals,
)
from coplug.plugins.results import Result

LP_WITH_ROWS = DualSource("the LP with the rows the lazy constraints added",
                          "the LP with the lazy rows", "the LP", "lazy_lp")
FIXED_WITH_ROWS = DualSource(f"{FIXED.of}, with the rows the lazy constraints added",
                             "the fixed LP with the lazy rows", FIXED.solve, FIXED.key)


def lazy_plugins(plugins: Sequence[Any]) -> list[LazyConstraints]:
    """The LazyConstraints among `plugins`, when they are the only plugins that add rows
    (another's rows could not be put in the model); else none."""
    lazies = [p for p in plugins if isinstance(p, LazyConstraints)]
    others = [p for p in plugins if getattr(p, "adds_rows", False)
              and not isinstance(p, LazyConstraints)]
    return [] if others else lazies


def load_duals_after(model: BlockData, result: Result, lazies: Sequence[LazyConstraints],
                     fixed: bool, resolve: Callable[[], Result]) -> None:
    """The duals `solve` loads after a solve that could not give them itself: the fixed
    LP's (`fixed`: mip_duals="fixed"), with the rows `lazies` added where there are any; a
    MIP with lazy rows and no `mip_duals` says once why it has none."""
    if not lazies:
        load_fixed_duals(model, result, resolve)
    elif fixed or not integers_to_fix(model):
        load_lazy_duals(model, result, lazies, resolve)
    else:
        refuse_mip_duals(model, result)


def refuse_mip_duals(model: BlockData, result: Result) -> None:
    """Say once why a MIP solved with lazy constraints gets no duals, and how it would."""
    refuse_duals(model, result, "the model has integer variables (a MIP has no LP duals); "
                 "mip_duals='fixed' gives those of its fixed LP with the lazy rows",
                 FIXED_WITH_ROWS)


def load_lazy_duals(model: BlockData, result: Result, lazies: Sequence[LazyConstraints],
                    resolve: Callable[[], Result]) -> None:
    """After the solve `result` with `lazies`, fill `m.dual`/`m.rc` from the LP with their
    rows added (`resolve` solves the model as it then stands, without plugins)."""
    source = FIXED_WITH_ROWS if integers_to_fix(model) else LP_WITH_ROWS
    with _rows_added(model, lazies) as added:
        load_fixed_duals(model, result, resolve, source)
        suffix = next((s for s in declared_duals(model) if s.local_name == "dual"), None)
        if suffix is not None and result.extra["duals"]["loaded"]:
            result.extra["lazy_duals"] = {name: [suffix.get(row, 0.0) for row in rows]
                                          for name, rows in added.items()}
        for suffix in declared_duals(model):
            for rows in added.values():
                for row in rows:
                    suffix.pop(row, None)


@contextlib.contextmanager
def _rows_added(model: BlockData, lazies: Sequence[LazyConstraints]
                ) -> Iterator[dict[str, list[ConstraintData]]]:
    """The rows each of `lazies` added in the last solve, as rows of `model` until the block
    ends (by LazyConstraints name, in the order of its `cuts`), with the numbers they were
    added with."""
    rows = pyo.ConstraintList()
    model.add_component(unique_component_name(model, "_coplug_lazy_rows"), rows)
    try:
        yield {lazy.name: [rows.add(row.frozen()) for row in lazy.added_rows]
               for lazy in lazies}
    finally:
        model.del_component(rows)
