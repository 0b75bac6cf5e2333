"""LP duals of an assignment-structured Pyomo model from the JV duals, for `m.dual`/`m.rc`.

JV's duals u (rows) and v (columns) meet u_i + v_j <= c_ij with equality on the assignment
(>= when maximizing), which is dual feasibility and complementary slackness of the
assignment LP in all but the signs its `<=` and `>=` constraints need. One shift
(u + t, v - t) changes no reduced cost; t is chosen so every `<=` / `>=` constraint's dual
has its sign and every constraint with slack (a free row of a rectangular model, an
unmatched row of a matching) has dual 0. Each constraint's dual is then divided by its
coefficient (`2 sum(x) == 2` moves twice as slowly as `sum(x) == 1`). Nothing here is
trusted: `coplug.plugins.duals.load_duals` certifies the duals against the model by the
duality gap and, where they fail (a matching whose signs no shift meets, a constraint
fixed variables fill), solves the LP again for them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from coplug.plugins.duals import LinearProgram
from coplug.plugins.lap.solver import LapSolution
from coplug.plugins.linear_terms import LinearTerms

_SLACK = 1e-9  # a constraint whose sum(x) is this far below 1 has slack


def assignment_row_duals(units: list[tuple[Any, str, bool, int]], solution: LapSolution,
                         maximize: bool, lp: LinearProgram) -> list[float]:
    """Pyomo-sign duals of `lp.rows` (0 for rows that are no row/column constraint), or
    [] when no single shift of JV's duals meets the signs."""
    raw = {id(con): (sense, is_row, float(solution.row_duals[k] if is_row
                                          else solution.col_duals[k]))
           for con, sense, is_row, k in units}
    shift = _shift([(*raw[id(con)], _slack(terms))
                    for con, terms, _, _ in lp.rows if id(con) in raw], maximize)
    if shift is None:
        return []
    duals = []
    for con, terms, _, _ in lp.rows:
        if id(con) not in raw or not len(terms.coefs):
            duals.append(0.0)
            continue
        _, is_row, value = raw[id(con)]
        duals.append((value + shift if is_row else value - shift) / float(terms.coefs[0]))
    return duals


def _slack(terms: LinearTerms) -> bool:
    """Whether the constraint's sum(x) stops short of 1 at the loaded point, read off its
    terms: Pyomo keeps `-sum(x) >= -1` by its lower side alone, `2 sum(x) + 1 <= 3` shifted."""
    values = np.fromiter((var.value for var in terms.variables), dtype=float,
                         count=len(terms.variables))
    return abs(1.0 - float(terms.coefs @ values) / float(terms.coefs[0])) > _SLACK


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
