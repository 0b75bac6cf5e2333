"""All-integer rows whose sides are too large for SCIP's relative feasibility tolerance.

SCIP accepts a row when (activity - side) / max(|activity|, |side|, 1) <= numerics/feastol
(1e-6 by default), so a knapsack row with a capacity of 2e6 let a packing 1 over it pass
and the answer came back "optimal". A coefficient past 1 / feastol does the same through
presolve: from `2999997 x <= -1` SCIP derives x <= -3.3e-7, rounds that bound to 0 within
its tolerance, and x = 0 came back optimal. A row whose variables are all integer and whose
coefficients are whole numbers has a whole-number activity at every integral point, so it
can be judged exactly. The rows are read off the SCIP model itself, where a constant in the
body is already on the sides (Pyomo models and `.mps`/`.lp` files alike).

`optimize_checked` solves at SCIP's tolerance first: SCIP's region then contains the exact
one, so its bound holds and a best solution that meets every such row exactly is exactly
optimal, as long as SCIP's cuts are valid. On such a row with a coefficient of CUT_COEF or
more they are not always (knapsacks with weights near 1e10: 26 of 240 wrong "optimal"
answers), so `cuts_off` turns separation off for those models first. Only when the best
solution misses such a row is the model solved again, from scratch, at the tolerance that
refuses an overshoot of 0.1 on every such row, 0.1 over its largest side or coefficient
(not below 1e-9: SoPlex will not go under 1e-10 without GMP). A lower tolerance up front was
no faster overall (`benchmarks/integral_rows.py`) and set SoPlex printing notes on stdout.
`check_integral_rows` then judges the final solution in exact integer arithmetic, which
catches what a tolerance at that floor still lets through.

HiGHS has the same gap through its absolute mip_feasibility_tolerance (1e-6): with a
coefficient of 1.5e7 a value 1e-7 off a whole number misses a row by about one, and the
integers it loaded, rounded, missed an equality by 1 at a wrong "optimal" 9 (the optimum is
17). `coplug.plugins.highs_rows` reads the same rows off a HiGHS model for the same check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, NamedTuple

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.objective_scaling import guard_objective_scaling
from coplug.plugins.results import Result, Status
from coplug.plugins.row_scaling import scale_rows, unscale_rows

# The smallest overshoot an integral row must refuse: a whole-number activity over a
# whole-number side is over by at least 1, over a fractional side by its fraction.
STEP = 0.1
# The lowest numerics/feastol set on the user's behalf; SoPlex (SCIP's LP solver) clamps
# anything under 1e-10 and says so on stdout.
FEASTOL_FLOOR = 1e-9
# A row is violated when its exact activity misses a side by more than this.
INTEGRAL_TOL = 1e-6
# A solution value this close to a whole number is judged as that number; a row with a value
# further off gets no exact verdict. SCIP's integrality tolerance is numerics/feastol, and it
# took 0.999999 (1.0000000000287557e-06 off) as integral: judged at 1, that row was missed by
# 2, which a cut-off at INTEGRAL_TOL let pass as "optimal".
ROUND_TOL = 1e-3
# Relative slack of a row with fractional coefficients: far above float64's 1.1e-16 a term,
# far below any miss worth a verdict.
ROUNDOFF = 1e-12
# Coefficients over a power-of-two denominator this small are exact as written: with halves
# near 6e11 the allowance ROUNDOFF * sum|terms| let a row missed by 4 pass ("optimal" for a
# model with no integer point).
EXACT_DENOMINATOR = 2**10
# SCIP's cutting planes on an all-integer row with a coefficient this large cut off
# whole-number optima that fit with room to spare: knapsacks with weights near 1e10 and 1e11
# came back "optimal" below the optimum on 26 of 240 random instances, 0 with separation off
# and no slower (SCIP 10, benchmarks/cut_guard.py). Where a model has such a row, SCIP solves
# it without cuts.
CUT_COEF = 1e8
# The linear constraints' presolve rounds of the tightened retry: 0. At feastol 1e-9 it
# turned a ranged row with coefficients near 2.5e9 into a wrong "optimal" 22 (the optimum
# is 1) or, with one harmless row more, "infeasible"; without it SCIP found 1 both times.
RETRY_PRESOLVE = "constraints/linear/maxprerounds"
NO_CUTS = {"separating/maxrounds": 0, "separating/maxroundsroot": 0}
_INTEGER_TYPES = ("BINARY", "INTEGER")


class IntegralRow(NamedTuple):
    """lhs <= (coefs / denominator) @ variables <= rhs in SCIP, every variable integer: the
    coefficients' floats exactly, as ints over a power of two (1 where all are whole
    numbers, so integer sums judge them); an absent side is None."""

    name: str
    variables: Sequence[Any]
    coefs: Sequence[int]
    lhs: float | None
    rhs: float | None
    denominator: int = 1
    integer: Sequence[bool] | None = None  # which variables are integer (None: all)


# A row mixing integer and continuous variables is broken when rounding its integer values
# (as coplug loads them) moves it this much further past a side, absolutely plus relative
# to the side: SCIP's integrality tolerance took y = 5e-7 as 0, and in x <= 1e8 y that let
# x = 50 through a closed arc ("optimal" 10.000002 for a true 30). Below 1e-3 a move is
# what integrality tolerances leak through ordinary coefficients (1e3 at 1e-6), not a verdict.
ROUNDING_ABS = 1e-3
ROUNDING_REL = 1e-9


def integral_rows(scip: Any, feastol: float, every: bool = False) -> list[IntegralRow]:
    """The linear all-integer rows of a SCIP model (before its solve) that `feastol` cannot
    judge: those with a side or a coefficient of at least STEP / feastol. A large side admits
    an overshoot of STEP or more; a large coefficient `a` makes SCIP's presolve derive a
    bound k / a that its tolerance rounds to the wrong whole number (`2999997 x <= -1` gave
    x <= -3.3e-7, taken as x <= 0, and x = 0 came back optimal). With `every` (a caller's
    tolerance looser than SCIP's default) every row with an integer variable: at 1e-3, SCIP
    took x = y = 0 for `x - y == 0.0005` and called it optimal."""
    if scip.getNBinVars() + scip.getNIntVars() == 0:  # no row is all-integer: no loop over
        return []  # the rows (0.06 s of reads on 40,000 rows of an LP)
    threshold, infinity = (0.0 if every else STEP / feastol), scip.infinity()
    rows = []
    for cons in scip.getConss():
        if cons.getConshdlrName() != "linear":
            continue
        lhs, rhs = _sides(scip, cons, infinity)
        coefs = scip.getConsVals(cons)
        if max(abs(lhs or 0.0), abs(rhs or 0.0), *map(abs, coefs), 0.0) < threshold:
            continue
        variables = scip.getConsVars(cons)
        integer = [var.vtype() in _INTEGER_TYPES for var in variables]
        row = judged_row(cons.name, variables, coefs, integer, lhs, rhs, threshold)
        if row is not None:
            rows.append(row)
    return rows


def _sides(scip: Any, cons: Any, infinity: float) -> tuple[float | None, float | None]:
    """A linear row's (lhs, rhs), an infinite side as None."""
    lhs, rhs = scip.getLhs(cons), scip.getRhs(cons)
    return None if lhs <= -infinity else lhs, None if rhs >= infinity else rhs


def large_value_rows(scip: Any, feastol: float) -> list[IntegralRow]:
    """The linear rows with an integer variable that SCIP's best solution puts at STEP /
    feastol or beyond, as exact rows (`judged_row` at threshold 0): with values near 5e6,
    SCIP's presolve left a ranged row 0 <= ... <= 8 (coefficients under 1e4) at 24.4 and
    called the point optimal, 2,415 better than the optimum. Read only when there is such a
    value (the rows are walked then, not otherwise), and not for an unbounded verdict: its
    point lies far out on a ray, where float64 misses rows of truly unbounded models."""
    if scip.getNSols() == 0 or scip.getStatus() in ("unbounded", "inforunbd"):
        return []  # the model's own variables are read below: presolve may leave no integer
    best, large = scip.getBestSol(), STEP / feastol
    if not any(var.vtype() in _INTEGER_TYPES and abs(scip.getSolVal(best, var)) >= large
               for var in scip.getVars()):
        return []
    infinity, rows = scip.infinity(), []
    for cons in scip.getConss(transformed=False):  # presolve may have removed them all
        if cons.getConshdlrName() != "linear":
            continue
        variables = scip.getConsVars(cons)
        integer = [var.vtype() in _INTEGER_TYPES for var in variables]
        if not any(whole and abs(scip.getSolVal(best, var)) >= large
                   for var, whole in zip(variables, integer, strict=True)):
            continue
        row = judged_row(cons.name, variables, scip.getConsVals(cons), integer,
                         *_sides(scip, cons, infinity), 0.0)
        if row is not None:
            rows.append(row)
    return rows


def judged_row(name: str, variables: Sequence[Any], coefs: Sequence[float],
               integer: Sequence[bool], lhs: float | None, rhs: float | None,
               threshold: float) -> IntegralRow | None:
    """A row for the exact check where the tolerance cannot judge it (`threshold`, STEP /
    feastol): all-integer with a side or coefficient that large (its coefficients exact),
    or mixed with an integer variable's coefficient that large (judged by what rounding its
    integers moves); None for any other row."""
    if variables and all(integer) and max(abs(lhs or 0.0), abs(rhs or 0.0),
                                          *map(abs, coefs)) >= threshold:
        numerators, denominator = exact_coefficients(coefs)
        return IntegralRow(name, variables, numerators, lhs, rhs, denominator)
    if any(abs(c) >= threshold for c, whole in zip(coefs, integer, strict=True) if whole):
        return IntegralRow(name, variables, list(coefs), lhs, rhs, 1, integer)
    return None


def exact_coefficients(coefs: Sequence[float]) -> tuple[list[int], int]:
    """The coefficients' floats exactly, as int numerators over one power-of-two
    denominator. Rows with fractional coefficients are judged too: one with 249008244.5 was
    left unchecked, and SCIP's integers 1e-9 off a whole number missed its side of -2 by
    all of it ("optimal" for a model with no solution)."""
    if all(float(c).is_integer() for c in coefs):
        return [int(c) for c in coefs], 1
    exact = [Fraction(float(c)) for c in coefs]
    denominator = max(f.denominator for f in exact)  # powers of two: the largest holds all
    return [int(f * denominator) for f in exact], denominator


def _scale(row: IntegralRow) -> float:
    """The largest side or coefficient of an all-integer row; of a mixed row, its largest
    integer variable's coefficient (what a value off a whole number is multiplied by)."""
    if row.integer is not None:
        return max(abs(c) for c, whole in zip(row.coefs, row.integer, strict=True) if whole)
    return max(abs(row.lhs or 0.0), abs(row.rhs or 0.0),
               *(abs(c) / row.denominator for c in row.coefs))


def tightened_feastol(rows: Sequence[IntegralRow], feastol: float) -> float:
    """The feastol that refuses an overshoot of STEP on every row and rounds no bound k / a
    that SCIP derives from a coefficient `a` to the wrong whole number (at least
    FEASTOL_FLOOR, at most `feastol`)."""
    largest = float(max((_scale(row) for row in rows), default=0.0))
    if largest <= 0.0:
        return feastol
    return min(feastol, max(FEASTOL_FLOOR, STEP / largest))


def optimize_checked(scip: Any, params: Mapping[str, Any], optimize: Callable[[], None],
                     late: Callable[[float], list[IntegralRow]] = lambda feastol: [],
                     ) -> tuple[list[IntegralRow], dict[str, Any]]:
    """Run `optimize` (SCIP's solve) and, when its best solution violates an integral row
    or it found the model infeasible, and the caller left numerics/feastol alone, run it
    again at the tightened tolerance with what remains of limits/time. Returns the rows (for
    `check_integral_rows`) and what to add to `result.extra`: the tolerance used and the
    discarded runs (`first_solve`: their time and nodes, the first one's objective, None
    after an infeasible one; `runs`: SCIP's runs in all; `scaled_rows`: how many rows with
    huge coefficients `coplug.plugins.row_scaling` divided first). `late(feastol)` gives the
    rows known only once a run has ended (lazy constraints'), judged with the model's.

    The retry runs without the linear constraints' presolve (RETRY_PRESOLVE), which went
    wrong at that tolerance on ranged rows; where that answer is refuted in turn, once more
    with it (a knapsack overshot its capacity by 2 without it, and with it came out right).
    An infeasible verdict is checked too: SCIP's presolve at its tolerance called models
    with a large-coefficient row infeasible that have whole-number solutions (`15000000 x0 -
    5000001 x1 + 4999999 x2 - 4999998 x3 == 14999995` on small boxes), and at the tightened
    tolerance found them. Rows over integer variables the run put at STEP / feastol or
    beyond are judged too (`large_value_rows`); where only they are missed, the retry keeps
    the tolerance."""
    feastol = float(scip.getParam("numerics/feastol"))
    unscale_rows(scip)  # a staged solve's earlier stage divided them
    loosened = "numerics/feastol" in params and feastol > SCIP_FEASTOL
    rows = integral_rows(scip, feastol, every=loosened)  # as written: before `scale_rows`
    cuts = cuts_off(scip, rows, params)
    scaled = scale_rows(scip)
    if scaled:
        cuts = {**cuts, "scaled_rows": scaled}
    if guard_objective_scaling(scip, params):
        cuts = {**cuts, "objective_scaling": "off"}
    limit = float(scip.getParam("limits/time"))
    written = rows
    optimize()
    rows = written + late(feastol)
    misled = _solved_without_cuts(scip, params, cuts, rows[len(written):], limit, optimize)
    if misled is not None:
        rows = written + late(feastol)
        cuts = {**cuts, "cuts_off": misled["row"]}
    values = large_value_rows(scip, feastol)  # a run without presolve may mend these
    tightened = tightened_feastol(rows, feastol)
    if "numerics/feastol" in params or not _refuted(scip, rows + values) or (
            tightened >= feastol and not _refuted(scip, values)):
        if misled is None:
            return rows + values, cuts
        return rows + values, {**cuts, "first_solve": misled["first_solve"], "runs": 2}
    discarded = {"time": 0.0, "nodes": 0,
                 "objective": float(scip.getObjVal()) if scip.getNSols() else None}
    extra = {**cuts, "feastol": tightened, "first_solve": discarded, "runs": 1}
    if misled is not None:
        discarded.update(misled["first_solve"])  # the first run's objective, not this one's
        extra["runs"] = 2
    own = RETRY_PRESOLVE not in params  # else the caller's setting holds for every run
    for k, linear_presolve in enumerate([False, True] if own else [True]):
        if k and not _refuted(scip, rows + values):
            break
        remaining = limit - discarded["time"] - float(scip.getSolvingTime())
        if remaining <= 0.0:
            break
        discarded["time"] += float(scip.getSolvingTime())
        discarded["nodes"] += int(scip.getNTotalNodes())
        _free_without_solutions(scip)
        unscale_rows(scip)  # whole-number rows again, which SCIP judges exactly
        scip.setParam("numerics/feastol", tightened)
        scip.setParam("limits/time", remaining)
        if own and linear_presolve:
            scip.resetParam(RETRY_PRESOLVE)
        elif own:
            scip.setParam(RETRY_PRESOLVE, 0)
        optimize()
        rows = written + late(feastol)
        values = large_value_rows(scip, feastol)
        extra["runs"] += 1
    return rows + values, extra if extra["runs"] > 1 else cuts


def _solved_without_cuts(scip: Any, params: Mapping[str, Any], cuts: Mapping[str, Any],
                         late: Sequence[IntegralRow], limit: float,
                         optimize: Callable[[], None]) -> dict[str, Any] | None:
    """Solve again without SCIP's cutting planes (NO_CUTS) where it gave a verdict after
    rows known only during the solve (lazy constraints') gave an integer variable a
    coefficient of CUT_COEF or more, as `cuts_off` does up front for the model's rows:
    Benders cuts with coefficients near 1e12 led SCIP's separators to call a facility
    master with optimum 4.9e11 infeasible, and lazy rows `x <= 1e9 y` over integers gave
    "optimal" 303 for 302. Returns the first run's figures and the row's name, or None
    where no such run was needed (or no time is left)."""
    if scip.getStatus() not in ("optimal", "infeasible", "inforunbd", "unbounded") or \
            "cuts_off" in cuts or any(key in params for key in NO_CUTS):
        return None
    row = next((row for row in late if _integer_coefficient(row) >= CUT_COEF), None)
    spent = float(scip.getSolvingTime())
    if row is None or limit - spent <= 0.0:
        return None
    first = {"time": spent, "nodes": int(scip.getNTotalNodes()),
             "objective": float(scip.getObjVal()) if scip.getNSols() else None}
    _free_without_solutions(scip)
    for key, value in NO_CUTS.items():
        scip.setParam(key, value)
    scip.setParam("limits/time", limit - spent)
    optimize()
    return {"row": row.name, "first_solve": first}


def _integer_coefficient(row: IntegralRow) -> float:
    """The largest coefficient of an integer variable in `row` (its sides left out)."""
    if row.integer is None:
        return max((abs(c) for c in row.coefs), default=0) / row.denominator
    return _scale(row)


def _free_without_solutions(scip: Any) -> None:
    """freeTransform, dropping the refuted run's solutions: SCIP keeps them as candidates for
    the next run, and a whole-number point 2 over a capacity of 2.3e9 passes feastol 1e-9
    (relative), so it came back "optimal" again."""
    kept = scip.getParam("limits/maxorigsol")
    scip.setParam("limits/maxorigsol", 0)
    scip.freeTransform()
    scip.setParam("limits/maxorigsol", kept)


def _refuted(scip: Any, rows: Sequence[IntegralRow]) -> bool:
    """Whether SCIP's verdict calls for another run: "infeasible", or a best solution that
    misses an integral row in exact arithmetic (an interrupt stands)."""
    status = scip.getStatus()
    if status == "userinterrupt":
        return False
    if status in ("infeasible", "inforunbd"):  # presolve's doing on all-integer rows only:
        return any(row.integer is None for row in rows)  # a big-M model was solved 3 times
    return bool(best_violations(scip, rows))


def cuts_off(scip: Any, rows: Sequence[IntegralRow], params: Mapping[str, Any]
             ) -> dict[str, Any]:
    """Turn SCIP's separation off (NO_CUTS) where an integral row has a coefficient of
    CUT_COEF or more, unless the caller set those options; what to add to `result.extra`
    (`cuts_off`: that row's name)."""
    row = next((row for row in rows if row.integer is None
                and _integer_coefficient(row) >= CUT_COEF), None)
    if row is None or any(key in params for key in NO_CUTS):
        return {}
    for key, value in NO_CUTS.items():
        scip.setParam(key, value)
    return {"cuts_off": row.name}


def record_first_solve(result: Result, extra: Mapping[str, Any]) -> None:
    """Put `optimize_checked`'s report into `result.extra` and add a discarded first solve's
    time and nodes to the result's totals."""
    result.extra.update(extra)
    first = extra.get("first_solve")
    if first:
        result.time += first["time"]
        result.nodes += first["nodes"]


def best_violations(scip: Any, rows: Sequence[IntegralRow]) -> dict[str, float]:
    """`violations` of SCIP's best solution ({} without rows or solution)."""
    if not rows or scip.getNSols() == 0:
        return {}
    best = scip.getBestSol()
    return violations(rows, lambda var: scip.getSolVal(best, var))


def violations(rows: Sequence[IntegralRow], value: Callable[[Any], float]) -> dict[str, float]:
    """Row name -> amount by which the values `value(var)` violate it, computed exactly
    (Python integers; float64 rounds 1e16 + 1) at the values rounded to whole numbers, for
    every row violated by more than INTEGRAL_TOL; rows with a value further than ROUND_TOL
    off a whole number are skipped."""
    found = {}
    for row in rows:
        values = [value(var) for var in row.variables]
        if row.integer is not None:
            over = _rounding_break(row, values)
            if over:
                found[row.name] = over
            continue
        if any(abs(v - round(v)) > ROUND_TOL for v in values):
            continue
        terms = [c * round(v) for c, v in zip(row.coefs, values, strict=True)]
        activity = Fraction(sum(terms), row.denominator)
        over = max(activity - Fraction(row.rhs) if row.rhs is not None else 0,
                   Fraction(row.lhs) - activity if row.lhs is not None else 0)
        if over > _allowed(row, terms):
            found[row.name] = float(over)
    return found


def _rounding_break(row: IntegralRow, values: list[float]) -> float:
    """How far a mixed row misses a side once its integer values are rounded, when rounding
    alone moved it past ROUNDING_ABS + ROUNDING_REL of the side (0.0 otherwise): the solver's
    own point met it within its tolerance."""
    rounded = [round(v) if whole else v for v, whole in zip(values, row.integer, strict=True)]

    def missed(point: list[float]) -> float:
        activity = math.fsum(c * v for c, v in zip(row.coefs, point, strict=True))
        return max(activity - row.rhs if row.rhs is not None else 0.0,
                   row.lhs - activity if row.lhs is not None else 0.0, 0.0)

    over = missed(rounded)
    side = max(abs(row.lhs or 0.0), abs(row.rhs or 0.0), 1.0)
    return over if rounding_moved(over, missed(values), side) else 0.0


def rounding_moved(over: Any, over_raw: Any, scale: Any) -> Any:
    """Whether rounding the integer values alone moved a row past a side (`over` against
    `over_raw` at the solver's own values) by more than ROUNDING_ABS plus ROUNDING_REL of
    `scale`, max(1, |side|): numbers or numpy arrays of them (SCIP's rows, HiGHS's)."""
    return over - over_raw > ROUNDING_ABS + ROUNDING_REL * scale


def _allowed(row: IntegralRow, terms: Sequence[int]) -> float:
    """How far `row` may miss: INTEGRAL_TOL for coefficients that are whole numbers or
    fractions over at most EXACT_DENOMINATOR (halves, quarters: the numbers written, judged
    exactly), plus ROUNDOFF of the terms' size where a coefficient's float may stand for a
    decimal it only rounds (0.1 is a fraction over 2**55)."""
    if row.denominator <= EXACT_DENOMINATOR:
        return INTEGRAL_TOL
    return INTEGRAL_TOL + ROUNDOFF * sum(abs(t) for t in terms) / row.denominator


def check_integral_rows(scip: Any, result: Result, rows: Sequence[IntegralRow],
                        names: Callable[[str], str] = str) -> None:
    """Refuse to call SCIP's best solution optimal (or feasible) when it violates an
    all-integer row: status `unknown`, the rows (named by `names`) in
    `result.extra["violated_rows"]`, and a warning."""
    if not result.has_solution:
        return
    violated = {names(name): amount for name, amount in best_violations(scip, rows).items()}
    if not violated:
        return
    what = ("all-integer constraint(s)" if all(row.integer is None for row in rows
                                               if names(row.name) in violated)
            else "constraint(s) with integer variables")
    flag_violations(result, violated, "SCIP", "relative", what)


def flag_violations(result: Result, violated: Mapping[str, float], solver: str, kind: str,
                    what: str = "all-integer constraint(s)") -> None:
    """Status `unknown`, the violated rows in `result.extra["violated_rows"]`, a warning."""
    name, amount = max(violated.items(), key=lambda item: item[1])
    warn_at_caller(f"{solver}'s solution violates {len(violated)} {what}, "
                   f"{name!r} by {amount:g}: its feasibility tolerance is {kind} and cannot "
                   "judge sides or coefficients this large; the status is 'unknown' (rescale "
                   "the rows)")
    result.status = Status.UNKNOWN
    result.extra["violated_rows"] = dict(violated)


# SCIP's default numerics/feastol: a caller's looser one has every integer row judged.
SCIP_FEASTOL = 1e-6
# An integer variable this far from a whole number was accepted only by a caller's looser
# feasibility tolerance (HiGHS's and SCIP's defaults, 1e-6, keep them closer).
FRACTIONAL = 1e-5


def pyomo_integers(variables: Iterable[Any]) -> Iterator[tuple[str, float]]:
    """(name, value) of the unfixed integer Pyomo variables among `variables` with a value."""
    return ((var.name, var.value) for var in variables
            if var.is_integer() and not var.fixed and var.value is not None)


def flag_fractional(result: Result, integers: Iterable[tuple[str, float]], solver: str,
                    option: str, params: Mapping[str, Any]) -> None:
    """Status `unknown`, with a warning and `result.extra["fractional_integers"]`, where the
    caller's tolerance `option`, looser than FRACTIONAL, let the solver accept integer
    variables (`integers`: name, value) that far from whole numbers: its 'optimal' was then
    of a relaxed problem (HiGHS at mip_feasibility_tolerance 0.05: a binary at 0.0417, the
    objective past the true optimum)."""
    if not float(params.get(option, 0.0)) > FRACTIONAL:
        return
    off = {name: abs(value - round(value)) for name, value in integers
           if abs(value - round(value)) > FRACTIONAL}
    if off:
        name, amount = max(off.items(), key=lambda item: item[1])
        warn_at_caller(f"{solver}'s solution has {len(off)} integer variable(s) off a whole "
                       f"number, {name!r} by {amount:g}, within the {option} given "
                       f"({params[option]:g}); the status is 'unknown' (tighten it)")
        result.status = Status.UNKNOWN
        result.extra["fractional_integers"] = off
