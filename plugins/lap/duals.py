"""LP duals of an assignment-structured Pyomo model from the JV duals, for `m.dual`/`m.rc`.

JV's duals u (rows) and v (columns) meet u_i + v_j <= c_ij with equality on the assignment
(>= when maximizing), which is dual feasibility and complementary slackness of the
assignment LP in all but the signs its `<=` and `>=` constraints need. One shift
(u + t, v - t) changes no reduced cost; t is chosen so every `<=` / `>=` constraint's dual
has its sign and every constraint with slack (a free row of a rectangular model, an
unmatched row of a matching) has dual 0. Where no single t fits, each component of the
model (constraints linked by shared variables; a block-diagonal model has several) takes
its own. Each constraint's dual is then divided by its
coefficient (`2 sum(x) == 2` moves twice as slowly as `sum(x) == 1`). A constraint fixed
variables fill (its other x forced to 0) is priced last, low enough that none of those x
has a reduced cost pulling it up (an LP re-solve for such a model took 251 s at 1000 x
1000). Nothing here is trusted: `coplug.plugins.duals.load_duals` certifies the duals
against the model by the duality gap and, where they fail (signs no shift meets), solves
the LP again for them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from coplug.plugins.duals import LinearProgram
from coplug.plugins.lap.solver import LapSolution
from coplug.plugins.linear_terms import LinearTerms

_SLACK = 1e-9  # a constraint whose sum(x) is this far below 1 has slack


def assignment_row_duals(units: list[tuple[Any, str, bool, int]], solution: LapSolution,
                         maximize: bool, lp: LinearProgram) -> list[float]:
    """Pyomo-sign duals of `lp.rows` (0 for rows that are no row/column constraint), or
    [] when no shift of JV's duals (one per component) meets the signs."""
    raw = {id(con): (sense, is_row, float(solution.row_duals[k] if is_row
                                          else solution.col_duals[k]))
           for con, sense, is_row, k in units}
    members = [k for k, row in enumerate(lp.rows) if id(row[0]) in raw]
    facts = [(*raw[id(lp.rows[k][0])], _slack(lp.rows[k][1])) for k in members]
    shifts = _shifts(facts, [lp.rows[k][1] for k in members], maximize)
    if shifts is None:
        return []
    duals = [0.0] * len(lp.rows)
    for k, (_, is_row, value, _), shift in zip(members, facts, shifts, strict=True):
        coefs = lp.rows[k][1].coefs
        if len(coefs):
            duals[k] = (value + shift if is_row else value - shift) / float(coefs[0])
    filled = [k for k, (con, terms, _, _) in enumerate(lp.rows)
              if id(con) not in raw and len(terms.coefs) and not _slack_side(lp.rows[k])]
    if filled:
        _price_filled(lp, filled, duals, maximize)
    return duals


def _slack_side(row: tuple[Any, LinearTerms, float | None, float | None]) -> bool:
    """Whether a row outside the assignment (one fixed variables fill, or one whose every
    variable they force to 0) has slack at the side that caps its sum(x)."""
    _, terms, lower, upper = row
    a = float(terms.coefs[0])
    side = upper if a > 0 else lower
    if side is None:
        return True
    return abs((side - terms.constant - _activity(terms)) / a) > _SLACK


def _price_filled(lp: LinearProgram, filled: list[int], duals: list[float],
                  maximize: bool) -> None:
    """Duals, in place, for the rows fixed variables fill (sum of the others capped at 0,
    every one of them at its bound 0): in minimization form each takes the least reduced
    cost its variables have without it, capped at 0, so every one stays >= 0; a row
    priced later sees the earlier ones, and since each is <= 0 none undoes another."""
    sign = -1.0 if maximize else 1.0
    wanted = {id(var) for k in filled for var in lp.rows[k][1].variables}
    reduced = dict.fromkeys(wanted, 0.0)
    if lp.objective is not None:
        for var, coef in zip(lp.objective.variables, lp.objective.coefs.tolist(), strict=True):
            if id(var) in reduced:
                reduced[id(var)] = sign * coef
    for k, (_, terms, _, _) in enumerate(lp.rows):
        if duals[k]:
            for var, coef in zip(terms.variables, terms.coefs.tolist(), strict=True):
                if id(var) in reduced:
                    reduced[id(var)] -= coef * sign * duals[k]
    for k in filled:
        terms = lp.rows[k][1]
        price = min(0.0, min(reduced[id(var)] for var in terms.variables))
        for var in terms.variables:
            reduced[id(var)] -= price
        duals[k] = sign * price / float(terms.coefs[0])


def _shifts(facts: list[tuple[str, bool, float, bool]], terms: list[LinearTerms],
            maximize: bool) -> list[float] | None:
    """Each constraint's shift: one for all where one fits, else one per component of
    constraints linked by shared variables (no pair joins two components, so each may
    shift alone); None when some component has none."""
    shift = _shift(facts, maximize)
    if shift is not None:
        return [shift] * len(facts)
    labels = _components(terms)
    shifts = [0.0] * len(facts)
    for label in np.unique(labels).tolist():
        inside = np.flatnonzero(labels == label).tolist()
        shift = _shift([facts[k] for k in inside], maximize)
        if shift is None:
            return None
        for k in inside:
            shifts[k] = shift
    return shifts


def _components(terms: list[LinearTerms]) -> np.ndarray:
    """The component label of each constraint in the graph linking constraints through
    the variables they share."""
    ids = np.fromiter((id(var) for t in terms for var in t.variables), dtype=np.int64)
    owner = np.repeat(np.arange(len(terms)), [len(t.variables) for t in terms])
    _, var_index = np.unique(ids, return_inverse=True)
    size = len(terms) + int(var_index.max(initial=-1)) + 1
    graph = sp.coo_matrix((np.ones(len(ids)), (owner, len(terms) + var_index.ravel())),
                          shape=(size, size))
    return connected_components(graph, directed=False)[1][:len(terms)]


def _slack(terms: LinearTerms) -> bool:
    """Whether the constraint's sum(x) stops short of 1 at the loaded point, read off its
    terms: Pyomo keeps `-sum(x) >= -1` by its lower side alone, `2 sum(x) + 1 <= 3` shifted."""
    return abs(1.0 - _activity(terms) / float(terms.coefs[0])) > _SLACK


def _activity(terms: LinearTerms) -> float:
    """The terms' sum at the loaded point, without their constant."""
    values = np.fromiter((var.value for var in terms.variables), dtype=float,
                         count=len(terms.variables))
    return float(terms.coefs @ values)


def _shift(units: list[tuple[str, bool, float, bool]], maximize: bool) -> float | None:
    """The t for which every dual (u_i + t for rows, v_j - t for columns) has its sign and
    is 0 where its constraint has slack; None when none does."""
    lo, hi, exact = -math.inf, math.inf, []
    for sense, is_row, value, slack in units:
        if slack:
            exact.append(-value if is_row else value)
            continue
        want = {"<=": -1, ">=": 1}.get(sense, 0) * (-1 if maximize else 1)  # dual's sign
        if want == 0:
            continue
        at_least = (want > 0) == is_row  # row: d = value + t >= 0 -> t >= -value
        bound = -value if is_row else value
        lo, hi = (max(lo, bound), hi) if at_least else (lo, min(hi, bound))
    if exact:
        t = float(np.median(exact))
        scale = max(1.0, *(abs(e) for e in exact))
        if any(abs(e - t) > 1e-9 * scale for e in exact):
            return None
        return t if lo - 1e-9 * scale <= t <= hi + 1e-9 * scale else None
    if lo > hi:
        return None
    return lo if lo > -math.inf else (hi if hi < math.inf else 0.0)
