"""LP duals and reduced costs into Pyomo's import Suffixes (`m.dual`, `m.rc`), certified.

Pyomo's own SCIP interface loads no duals. `solve` fills `m.dual` and `m.rc` when the model
declares them (`m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)`) and is a linear program:
continuous variables, linear rows and objective (for HiGHS also a convex quadratic
objective: its gradient at the optimum takes the place of `c`). Signs follow Pyomo's
convention: a dual is the derivative of the optimal objective with respect to the row's
side, a reduced cost that of the variable's bound (so for a minimization a `>=` row has a
dual >= 0).

The row duals come from the solver (SCIP solves such an LP without presolving and
propagation, whose reductions would leave the final LP's duals to a different model); the
reduced costs are computed from them, `c - A'y`. Before anything is loaded the pair is
checked as an optimality certificate against the model itself: the duality gap it leaves
with the loaded primal point (`coplug.plugins.lp_certificate`). Duals that fail it are not
loaded, with a warning naming the row or variable that leaves most of the gap, so an empty
Suffix never reads as "all duals zero" and a wrong one never reaches the user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.linear_terms import LinearTerms, expanded_repn, linear_terms
from coplug.plugins.lp_certificate import certify
from coplug.plugins.modeldata import SOLVER_INFINITY
from coplug.plugins.results import Result, Status
from coplug.plugins.row_scaling import dual_scale

DUAL_SUFFIXES = ("dual", "rc")


# Why `solve` loads no LP duals with lazy constraints.
ADDED_ROWS = "a plugin added rows the Pyomo model does not hold"


@dataclass
class LinearProgram:
    """The rows, bounds and objective of a Pyomo LP, with values computed."""

    rows: list[tuple[Any, LinearTerms, float | None, float | None]]
    objective: LinearTerms | None
    maximize: bool
    quadratic: list[tuple[Any, Any, float]] = field(default_factory=list)  # HiGHS's convex QPs
    variables: list[Any] = field(default_factory=list)  # each once, in order of appearance


@dataclass
class DualRequest:
    """The Suffixes to fill and the LP to certify them on (None: `reason` says why not)."""

    suffixes: dict[str, pyo.Suffix]
    lp: LinearProgram | None
    reason: str = ""
    row_duals: list[float] = field(default_factory=list)
    sos: str | None = None  # an active SOS constraint's name: no LP row, so no dual proves it


def dual_request(model: pyo.Block, quadratic_ok: bool = False, read: bool = True,
                 known_terms: Mapping[int, LinearTerms] | None = None) -> DualRequest | None:
    """The `dual`/`rc` import Suffixes of `model`, emptied for this solve, with the model
    read as an LP (or, with `quadratic_ok`, a QP; `known_terms` by constraint id where a
    backend read them already, `read=False` to only empty them); None when it declares
    neither."""
    suffixes = {s.local_name: s for s in _import_suffixes(model, descend=False)
                if s.local_name in DUAL_SUFFIXES}
    if not suffixes:
        return None
    for suffix in suffixes.values():
        suffix.clear()
    if not read:
        return DualRequest(suffixes, None, "not read")
    lp, reason = _read_lp(model, quadratic_ok, known_terms or {})
    sos = next(model.component_data_objects(pyo.SOSConstraint, active=True), None)
    return DualRequest(suffixes, lp, reason, sos=None if sos is None else sos.name)


def other_import_suffixes(model: pyo.Block, fills_duals: bool) -> list[str]:
    """Names of the import Suffixes `solve` leaves empty: all of them for a backend that
    gives no duals, else all but `dual` and `rc` on the model itself (those on sub-blocks
    are not filled, as in Pyomo's appsi solvers)."""
    return [s.name for s in unfilled_import_suffixes(model, fills_duals)]


def unfilled_import_suffixes(model: pyo.Block, fills_duals: bool) -> list[pyo.Suffix]:
    """The import Suffixes `solve` leaves empty (see `other_import_suffixes`)."""
    filled = set(map(id, _import_suffixes(model, descend=False))) if fills_duals else set()
    return [s for s in _import_suffixes(model, descend=True)
            if not (id(s) in filled and s.local_name in DUAL_SUFFIXES)]


def _import_suffixes(model: pyo.Block, descend: bool) -> list[pyo.Suffix]:
    """Active import Suffixes on `model` (and its sub-blocks with `descend`)."""
    return [s for s in model.component_objects(pyo.Suffix, active=True, descend_into=descend)
            if s.import_enabled()]


def read_lp(model: pyo.Block) -> tuple[LinearProgram | None, str]:
    """`model` as an LP (values computed), or None and why it is not one."""
    return _read_lp(model, False, {})


def read_qp(model: pyo.Block) -> tuple[LinearProgram | None, str]:
    """`model` as a continuous QP (quadratic objective, linear rows) or LP, or None and why
    it is neither."""
    return _read_lp(model, True, {})


def _read_lp(model: pyo.Block, quadratic_ok: bool, known_terms: Mapping[int, LinearTerms]
             ) -> tuple[LinearProgram | None, str]:
    """The model as an LP (a QP with `quadratic_ok`), or None and why it is not one."""
    rows = []
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        terms = known_terms.get(id(con))
        if terms is None:
            terms = linear_terms(con.body)
        if terms is None:
            return None, f"constraint {con.name!r} is nonlinear"
        rows.append((con, terms, _side(con.lb), _side(con.ub)))
    objective = next(model.component_data_objects(pyo.Objective, active=True), None)
    obj_terms, quadratic = None, []
    if objective is not None:
        obj_terms = linear_terms(objective.expr)
        if obj_terms is None and quadratic_ok:
            obj_terms, quadratic = _quadratic_terms(objective.expr)
        if obj_terms is None:
            return None, "the objective is nonlinear"
    lp = LinearProgram(rows, obj_terms, objective is not None and objective.sense == pyo.maximize,
                       quadratic)
    lp.variables = _variables(lp)
    for var in lp.variables:
        if not var.is_continuous():
            return None, (f"variable {var.name!r} is integer (a MIP has no LP duals; with "
                          "solver='scip' or 'highs', mip_duals='fixed' gives those of its "
                          "fixed LP)")
    return lp, ""


def _quadratic_terms(expr: Any) -> tuple[LinearTerms | None, list[tuple[Any, Any, float]]]:
    """The linear part and the (x, y, coef) terms of a quadratic objective (None when it is
    not quadratic)."""
    repn = expanded_repn(expr, quadratic=True)
    if repn.nonlinear_expr is not None:
        return None, []
    linear = LinearTerms(list(repn.linear_vars), np.asarray(repn.linear_coefs, dtype=float),
                         float(repn.constant))
    return linear, [(x, y, float(c)) for (x, y), c in zip(repn.quadratic_vars,
                                                          repn.quadratic_coefs, strict=True)]


def _side(value: float | None) -> float | None:
    """A row side or bound as a float, None where it is absent or infinite."""
    if value is None or abs(value) >= SOLVER_INFINITY:
        return None
    return float(value)


def _variables(lp: LinearProgram) -> list[Any]:
    """Each unfixed variable of the rows and objective once, in order of appearance."""
    seen: dict[int, Any] = {}
    groups = [t.variables for _, t, _, _ in lp.rows]
    groups += [lp.objective.variables] if lp.objective else []
    groups += [(x, y) for x, y, _ in lp.quadratic]
    for variables in groups:
        for var in variables:
            seen.setdefault(id(var), var)
    return list(seen.values())


def prepare_scip(scip: Any) -> None:
    """Solve the LP as given: presolving and propagation would change the rows and bounds
    whose duals SCIP's final LP holds (a row presolve removes has none at all), and SoPlex's
    own presolving (`lp/presolving`) returned all-zero row duals, with reduced costs that
    did not match them, for an LP its equality rows pin to one point."""
    from pyscipopt import SCIP_PARAMSETTING

    scip.setPresolve(SCIP_PARAMSETTING.OFF)
    scip.disablePropagation()
    scip.setParam("lp/presolving", False)


def soplex_duals(lp: LinearProgram, costs: np.ndarray | None = None) -> list[float]:
    """Row duals (Pyomo's sign) of the LP solved once more by SCIP's LP solver alone: after
    some SCIP solves the final LP is no longer in a solved state and `getDualSolVal` gives
    stale values or 1e99 (4 of 300 probe LPs); optimal duals certify any optimal point.
    SoPlex's own presolving is off, as in `prepare_scip`. `costs` (minimization form)
    replace the objective's, as `gradient_duals` does."""
    from pyscipopt import LP
    from pyscipopt.scip import PY_SCIP_LPPARAM

    form = min_form(lp)
    costs = form.costs if costs is None else costs
    solver = LP("duals", sense="minimize")
    solver.setIntParam(PY_SCIP_LPPARAM.PRESOLVING, 0)  # its duals can be wrong (prepare_scip)
    infinity = solver.infinity()
    solver.addCols([[] for _ in form.variables], objs=np.asarray(costs).tolist(),
                   lbs=np.maximum(form.col_lower, -infinity).tolist(),
                   ubs=np.minimum(form.col_upper, infinity).tolist())
    rows = form.matrix
    solver.addRows([list(zip(rows.indices[rows.indptr[i]:rows.indptr[i + 1]].tolist(),
                             rows.data[rows.indptr[i]:rows.indptr[i + 1]].tolist(), strict=True))
                    for i in range(rows.shape[0])],
                   lhss=np.maximum(form.lower, -infinity).tolist(),
                   rhss=np.minimum(form.upper, infinity).tolist())
    solver.solve()
    return [form.sign * float(y) for y in solver.getDual()] if solver.isOptimal() else []


def gradient_duals(lp: LinearProgram) -> list[float]:
    """Row duals of the LP over `lp`'s rows and bounds with the objective's gradient at the
    loaded point as costs (`soplex_duals`): a point optimal for a convex QP is optimal for
    that LP, so they certify it where the QP solver's own are too loose (HiGHS's left a
    reduced cost of -1.2e-6 on a column with no upper bound: an infinite gap, no duals)."""
    form = min_form(lp)
    return soplex_duals(lp, qp_gradient(lp, form, _values(form.variables))[0])


NO_PRESOLVE_FAILED = ("SCIP's LP solver failed on the LP without presolving (numerical "
                      "trouble); it was solved again with presolving, which leaves no duals")


def read_scip_duals(request: DualRequest, scip: Any, con_map: Any) -> None:
    """Read SCIP's row duals (in Pyomo's sign; for a row SCIP keeps as a variable bound,
    the dual it recovers from the reduced cost)."""
    duals = []
    for con, _, _, _ in request.lp.rows:
        scip_con = con_map.get(con)
        if scip_con is None:  # no variables left once values are in: nothing to price
            duals.append(0.0)
            continue
        try:
            duals.append(float(scip.getDualSolVal(scip_con)) * dual_scale(scip, scip_con))
        except Exception as exc:  # PySCIPOpt raises a bare Exception or Warning
            request.reason = f"SCIP gave no dual for constraint {con.name!r} ({exc})"
            return
    request.row_duals = duals


def load_duals(request: DualRequest, result: Result,
               fallback: Callable[[LinearProgram], list[float]] | None = None) -> None:
    """Certify the row duals against the loaded primal point and fill the Suffixes, or warn
    why they stay empty; `result.extra["duals"]` says which. Duals the solver did not give,
    or that fail, are replaced by `fallback(lp)`'s where one is given, and certified alike."""
    if not request.reason and result.status is not Status.OPTIMAL:
        request.reason = f"the solve ended {result.status.value}, not optimal"
    if not request.reason and not request.row_duals and request.lp.rows:
        request.reason = "the solver returned no duals"
    optimal_lp = result.status is Status.OPTIMAL and request.lp is not None
    reduced = None if request.reason else _certified_reduced_costs(request)
    if reduced is None and fallback is not None and optimal_lp:
        first = request.reason
        request.row_duals, request.reason = fallback(request.lp), ""
        if request.lp.rows and not request.row_duals:  # its LP solver found no optimum
            request.reason = "the LP solver found no optimum"
        else:
            reduced = _certified_reduced_costs(request)
        if reduced is None:
            request.reason = f"{first}; a second LP solve for duals: {request.reason}"
        else:
            result.extra["duals_from"] = "lp"
    names = ", ".join(s.name for s in request.suffixes.values())
    if reduced is None:
        result.extra["duals"] = {"loaded": False, "reason": request.reason}
        warn_at_caller(f"{names} left empty: {request.reason}")
        return
    if "dual" in request.suffixes:
        for (con, _, _, _), dual in zip(request.lp.rows, request.row_duals, strict=True):
            request.suffixes["dual"][con] = dual
    if "rc" in request.suffixes:
        for var, cost in reduced:
            request.suffixes["rc"][var] = cost
    result.extra["duals"] = {"loaded": True, "rows": len(request.lp.rows),
                             "variables": len(reduced)}


def _certified_reduced_costs(request: DualRequest) -> list[tuple[Any, float]] | None:
    """Reduced costs c - A'y when (y, c - A'y) certify the loaded point optimal (see
    `coplug.plugins.lp_certificate`), else None with `request.reason` set; the certified
    duals (signs made feasible) replace `request.row_duals`."""
    lp = request.lp
    form = min_form(lp)
    x = _values(form.variables)
    gradient, size, hessian = qp_gradient(lp, form, x)
    found = certify(gradient, x, form.matrix, form.lower, form.upper, form.col_lower,
                    form.col_upper, form.sign * np.asarray(request.row_duals, dtype=float),
                    quadratic=(size, hessian) if lp.quadratic else None)
    if not found.holds:
        kind, k = found.worst
        where = (f"constraint {lp.rows[k][0].name!r}" if kind == "row"
                 else f"variable {form.variables[k].name!r}")
        request.reason = (f"the duals do not prove the point optimal: they leave a duality "
                          f"gap of {found.gap:.3g} ({found.gap / found.scale:.1e} of the "
                          f"objective's scale), most of it at {where}")
        if request.sos is not None:
            request.reason += (f"; the SOS constraint {request.sos!r}, which no dual prices, "
                               "may be what holds the point")
        return None
    huge = np.flatnonzero(np.abs(found.duals) >= SOLVER_INFINITY)
    if huge.size:  # an equality row at a vertex takes any dual: SCIP's placeholder passes
        k = int(huge[0])
        request.reason = (f"the dual of constraint {lp.rows[k][0].name!r} is "
                          f"{form.sign * found.duals[k]:g}, a solver's placeholder, not a price")
        return None
    request.row_duals = (form.sign * found.duals).tolist()
    return [(var, form.sign * float(cost))
            for var, cost in zip(form.variables, found.reduced, strict=True)]


def qp_gradient(lp: LinearProgram, form: MinForm, x: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """The objective's gradient at `x` in minimization form, the size of the terms summing
    to each entry (|c| + |H||x|) and the Hessian H (an LP's is zero)."""
    gradient, size = form.costs.copy(), np.abs(form.costs)
    entries: list[tuple[int, int, float]] = []
    for a, b, coef in lp.quadratic:  # the gradient of coef * a * b at the point
        for one, other in ((a, b), (b, a)):
            term = form.sign * coef * x[form.index[id(other)]]
            gradient[form.index[id(one)]] += term
            size[form.index[id(one)]] += abs(term)
            entries.append((form.index[id(one)], form.index[id(other)], form.sign * coef))
    hessian = sp.csr_matrix(([v for _, _, v in entries], ([i for i, _, _ in entries],
                             [j for _, j, _ in entries])), shape=(len(x), len(x)))
    return gradient, size, hessian


@dataclass
class MinForm:
    """An LP's arrays in minimization form (costs times `sign`; sides less the body's
    constant; +-inf where a side or bound is absent)."""

    sign: float
    variables: list[Any]
    index: dict[int, int]
    costs: np.ndarray
    matrix: Any
    lower: np.ndarray
    upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray


def min_form(lp: LinearProgram) -> MinForm:
    """The arrays both the certificate and the LP-solver fallback read."""
    sign = -1.0 if lp.maximize else 1.0
    variables = lp.variables or _variables(lp)
    index = {id(var): k for k, var in enumerate(variables)}
    costs = np.zeros(len(variables))
    if lp.objective is not None:
        np.add.at(costs, _columns(lp.objective, index), sign * lp.objective.coefs)
    matrix, lower, upper = _rows(lp, index)
    bounds = [tuple(map(_side, v.bounds)) for v in variables]  # one bounds read per variable
    col_lower = np.array([-np.inf if lo is None else lo for lo, _ in bounds])
    col_upper = np.array([np.inf if hi is None else hi for _, hi in bounds])
    return MinForm(sign, variables, index, costs, matrix, lower, upper, col_lower, col_upper)


def _rows(lp: LinearProgram, index: dict[int, int]) -> tuple[Any, np.ndarray, np.ndarray]:
    """The rows as a CSR matrix over `index`'s columns, with their sides less the body's
    constant (+-inf where absent)."""
    import scipy.sparse as sp

    cols = [_columns(terms, index) for _, terms, _, _ in lp.rows]
    starts = np.cumsum([0] + [len(c) for c in cols])
    data = np.concatenate([terms.coefs for _, terms, _, _ in lp.rows] or [np.empty(0)])
    matrix = sp.csr_matrix((data, np.concatenate(cols or [np.empty(0, np.int64)]), starts),
                           shape=(len(lp.rows), len(index)))
    constant = np.array([terms.constant for _, terms, _, _ in lp.rows])
    lower = np.array([-np.inf if lo is None else lo for _, _, lo, _ in lp.rows]) - constant
    upper = np.array([np.inf if hi is None else hi for _, _, _, hi in lp.rows]) - constant
    return matrix, lower, upper


def _columns(terms: LinearTerms, index: dict[int, int]) -> np.ndarray:
    """Column numbers of the terms' variables."""
    return np.fromiter((index[id(v)] for v in terms.variables), dtype=np.int64,
                       count=len(terms.variables))


def _values(variables: Any) -> np.ndarray:
    """The loaded values of `variables`."""
    return np.fromiter((float(v.value) for v in variables), dtype=float, count=len(variables))
