"""The fast paths that cut `solve`'s own overhead refuse exactly what the slow checks refuse:
`check_model_data`'s one-pass constraint check and per-domain variable check against the
one-by-one checks, HiGHS's linearity check against Pyomo's `polynomial_degree`, on tricky
models; and large models still get the answers of Pyomo's own interfaces."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyomo.environ as pyo
import pytest
from bench_loader import bench
from pyomo.common.collections import ComponentMap
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from coplug.plugins import highs_backend, highs_rows, modeldata, solve
from coplug.plugins.bridge import build_instance, contrib_solver
from coplug.plugins.integral_rows import integral_rows
from coplug.plugins.linear_terms import final_linear_terms, final_parts, plainly_linear
from coplug.plugins.varmap import VarMap, snapped

NAN, INF = float("nan"), float("inf")


def _outcome(call: Callable[[], object]) -> tuple[str, str] | None:
    """The exception `call()` raises, as (type name, message), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except Exception as exc:  # every outcome is compared, whatever it is
        return type(exc).__name__, str(exc)
    return None


def _one_by_one(model: pyo.Block) -> None:
    """`check_model_data` as it was: each constraint, then each variable, checked in full."""
    constraints = list(model.component_data_objects(pyo.Constraint, active=True))
    original = modeldata._constraints_plainly_fine, modeldata._check_variables
    modeldata._constraints_plainly_fine = lambda _constraints, _tiny=None: False
    modeldata._check_variables = lambda m: [
        modeldata._check_variable(v) for v in m.component_data_objects(pyo.Var)]
    try:
        modeldata.check_model_data(model)
    finally:
        modeldata._constraints_plainly_fine, modeldata._check_variables = original
    assert constraints == list(model.component_data_objects(pyo.Constraint, active=True))


def _base() -> pyo.ConcreteModel:
    """max x + y on [0, 1]^2 with mutable Params p = 2, q = 0 and u (no value), a fixed z = 3,
    and Expressions e = 2x and f = xy."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.z = pyo.Var()
    m.z.fix(3)
    m.p = pyo.Param(initialize=2, mutable=True, within=pyo.Any)
    m.q = pyo.Param(initialize=0, mutable=True)
    m.u = pyo.Param(mutable=True)
    m.e = pyo.Expression(expr=2 * m.x)
    m.f = pyo.Expression(expr=m.x * m.y)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m


def _nan_param(m: pyo.ConcreteModel) -> object:
    """p = NaN as a coefficient."""
    m.p = NAN
    return m.p * m.x + m.y <= 1


def _nan_range(m: pyo.ConcreteModel) -> object:
    """0 <= x + y <= p with p = NaN (a literal NaN side is refused by Pyomo itself)."""
    m.p = NAN
    return pyo.inequality(0, m.x + m.y, m.p)


def _nan_exponent(m: pyo.ConcreteModel) -> object:
    """x ** p with p = NaN."""
    m.p = NAN
    return m.x ** m.p + m.y <= 1


def _unset_fixed(m: pyo.ConcreteModel) -> object:
    """z fixed without a value, in a linear sum."""
    m.z.fix(None)
    return m.x + m.y + m.z <= 10


def _huge_fixed(m: pyo.ConcreteModel) -> object:
    """z fixed at 1e15 with coefficient 1e10: a constant of 1e25 once folded in."""
    m.z.fix(1e15)
    return m.x + 1e10 * m.z <= 1


def _nan_expression(m: pyo.ConcreteModel) -> object:
    """An Expression component with a NaN coefficient."""
    m.e = NAN * m.x
    return m.e + m.y <= 1


# Each builds one constraint on `_base()`; True: the model passes the check.
DATA_CASES: dict[str, tuple[Callable[[pyo.ConcreteModel], object], bool]] = {
    "plain sum": (lambda m: 2 * m.x + m.y <= 1, True),
    "NaN coefficient": (lambda m: NAN * m.x + m.y <= 1, False),
    "numpy NaN coefficient": (lambda m: np.float64(NAN) * m.x + m.y <= 1, False),
    "inf coefficient": (lambda m: INF * m.x + m.y <= 1, False),
    "huge coefficient": (lambda m: 1e20 * m.x + m.y <= 1, False),
    "huge int coefficient": (lambda m: 10**25 * m.x + m.y <= 1, False),
    "int past float": (lambda m: 10**400 * m.x + m.y <= 1, False),
    "repeated halves of a huge coefficient": (lambda m: 6e19 * m.x + m.y + 6e19 * m.x <= 1,
                                              False),
    "repeated huge coefficients that cancel": (lambda m: 1e30 * m.x + m.y - 1e30 * m.x <= 1,
                                               True),
    "NaN constant": (lambda m: m.x + m.y + NAN <= 1, False),
    "huge constant": (lambda m: m.x + m.y + 1e21 <= 1e22, False),
    "NaN upper side": (lambda m: m.x + m.y <= NAN, False),
    "NaN Param side of a range": (_nan_range, False),
    "NaN equality": (lambda m: m.x + m.y == NAN, False),
    "lower side past infinity": (lambda m: m.x + m.y >= 1e25, False),
    "upper side past -infinity": (lambda m: m.x + m.y <= -1e20, False),
    "sides at infinity the harmless way": (lambda m: pyo.inequality(-1e25, m.x + m.y, 1e25),
                                           True),
    "Param without a value on a side": (lambda m: m.x + m.y <= m.u, False),
    "Param side": (lambda m: m.x + m.y <= m.p, True),
    "Param coefficient": (lambda m: m.p * m.x + m.y <= 1, True),
    "Param coefficient without a value": (lambda m: m.u * m.x + m.y <= 1, False),
    "NaN Param coefficient": (_nan_param, False),
    "division by a Param at 0": (lambda m: m.x / m.q <= 1, False),
    "fixed variable": (lambda m: m.x + m.y + 2 * m.z <= 10, True),
    "fixed variable without a value": (_unset_fixed, False),
    "fixed variable folded past infinity": (_huge_fixed, False),
    "Param exponent": (lambda m: m.x ** m.p + m.y <= 1, True),
    "NaN Param exponent": (_nan_exponent, False),
    "Expression component": (lambda m: m.e + m.y <= 1, True),
    "NaN inside an Expression": (_nan_expression, False),
    "abs": (lambda m: abs(m.x - m.y) <= 0.5, True),
    "NaN inside abs": (lambda m: abs(NAN * m.x) + m.y <= 0.5, False),
    "product": (lambda m: m.x * m.y <= 0.5, True),
    "NaN on a product": (lambda m: NAN * (m.x * m.y) <= 0.5, False),
    # Pyomo's standard repn evaluates a product hidden in a LinearExpression and needs x's
    # value: its numbers are checked without the repn (it had been refused as data that
    # cannot be evaluated; SCIP solves it)
    "product hidden in a LinearExpression": (lambda m: LinearExpression(
        [MonomialTermExpression((2, m.x)), m.x * m.y]) <= 1, True),
    "huge number inside exp": (lambda m: pyo.exp(-1e30 * m.x) + m.y <= 2, True),
    "no variable left": (lambda m: 2 * m.z <= 10, True),
    "a fixed variable alone": (lambda m: pyo.inequality(0, m.z, 5), True),
    "variables on both sides": (lambda m: m.x + 1 <= m.y, True),
    "NaN on the right of variables on both sides": (lambda m: m.x <= NAN * m.y, False),
    "a variable side of a range": (lambda m: pyo.inequality(m.y, m.x, 1), False),
}


def _data_model(name: str, rows: int = 1) -> pyo.ConcreteModel:
    """`_base()` with `rows` plain rows, then the case's constraint, then two plain rows."""
    m = _base()
    m.before = pyo.Constraint(range(rows), rule=lambda m, i: m.x + (i % 5) * m.y <= 1 + i)
    m.c = pyo.Constraint(expr=DATA_CASES[name][0](m))
    m.after = pyo.Constraint(range(2), rule=lambda m, i: m.x - m.y >= -1 - i)
    return m


@pytest.mark.parametrize("name", list(DATA_CASES))
def test_the_one_pass_check_refuses_what_the_one_by_one_check_refuses(name: str) -> None:
    fast_model, slow_model = _data_model(name), _data_model(name)
    fast = _outcome(lambda: modeldata.check_model_data(fast_model))
    assert fast == _outcome(lambda: _one_by_one(slow_model))
    assert (fast is None) is DATA_CASES[name][1], fast


@pytest.mark.parametrize("name", list(DATA_CASES))
def test_the_one_pass_verdict_is_fine_exactly_for_models_that_pass(name: str) -> None:
    """The fast pass says "fine" for every passing model (so it is the path taken) and never
    for a failing one (whose offender the one-by-one check then names)."""
    m = _data_model(name, rows=3)
    constraints = list(m.component_data_objects(pyo.Constraint, active=True))
    assert modeldata._constraints_plainly_fine(constraints) is DATA_CASES[name][1]


def test_the_offender_is_named_among_many_rows() -> None:
    m = _data_model("NaN coefficient", rows=2000)
    m.later = pyo.Constraint(expr=m.x <= NAN)
    with pytest.raises(modeldata.InputError, match="constraint 'c': the coefficient of 'x'"):
        modeldata.check_model_data(m)


# Each changes variable v (one of 100 w's) of `_base()`; True: the model passes the check.
VARIABLE_CASES: dict[str, tuple[Callable[[pyo.ConcreteModel], object], bool]] = {
    "NaN upper bound": (lambda m: m.v.setub(NAN), False),
    "NaN lower bound": (lambda m: m.v.setlb(NAN), False),
    "lower bound past infinity": (lambda m: m.v.setlb(1e21), False),
    "upper bound past -infinity": (lambda m: m.v.setub(-1e20), False),
    "bounds at infinity the harmless way": (lambda m: m.v.setlb(-1e30), True),
    "half-integer domain": (lambda m: setattr(m.v, "domain", pyo.RangeSet(0.5, 3.5, 1)),
                            False),
    "binary": (lambda m: setattr(m.v, "domain", pyo.Binary), True),
    "Param bound": (lambda m: m.v.setub(m.p), True),
    "Param bound without a value": (lambda m: m.v.setub(m.u), False),
    "Param bound past infinity": (lambda m: m.v.setlb(m.p) or m.p.set_value(1e21), False),
}


def _variable_model(name: str, where: int) -> pyo.ConcreteModel:
    """`_base()` with 100 bounded w's and three integers, the case applied to w[where]."""
    m = _base()
    m.w = pyo.Var(range(100), bounds=(0, 1))
    m.k = pyo.Var(range(3), domain=pyo.NonNegativeIntegers)
    m.v = pyo.Reference(m.w[where])
    VARIABLE_CASES[name][0](m)
    return m


@pytest.mark.parametrize("name", list(VARIABLE_CASES))
@pytest.mark.parametrize("where", [0, 5, 99])
def test_the_variable_check_refuses_what_the_full_check_refuses(name: str, where: int) -> None:
    fast_model, slow_model = _variable_model(name, where), _variable_model(name, where)
    fast = _outcome(lambda: modeldata.check_model_data(fast_model))
    assert fast == _outcome(lambda: _one_by_one(slow_model))
    assert (fast is None) is VARIABLE_CASES[name][1], fast


LINEARITY_CASES: dict[str, Callable[[pyo.ConcreteModel], object]] = {
    "plain sum": lambda m: 2 * m.x + m.y + 3,
    "product hidden in a LinearExpression": lambda m: LinearExpression(
        [MonomialTermExpression((2, m.x)), m.x * m.y]),
    "variable as a coefficient": lambda m: LinearExpression(
        [MonomialTermExpression((m.y, m.x))]),
    "monomial of a product": lambda m: LinearExpression(
        [MonomialTermExpression((2, m.x * m.y))]),
    "Expression component": lambda m: LinearExpression([m.e, m.y]),
    "Expression component of a product": lambda m: LinearExpression([m.f, m.y]),
    "Param coefficient": lambda m: m.p * m.x + m.y,
    "Param exponent": lambda m: m.x ** m.p + m.y,
    "Param exponent of one": lambda m: m.x ** (m.p - 1) + m.y,
    "fixed variable times a variable": lambda m: m.z * m.x + m.y,
    "division by a Param": lambda m: m.x / m.p + m.y,
    "division by a variable": lambda m: m.x / m.y,
    "abs": lambda m: abs(m.x) + m.y,
    "square": lambda m: (m.x - 1) ** 2 + m.y,
    "cube": lambda m: m.x ** 3 + m.y,
    "exp": lambda m: pyo.exp(m.x),
    "constant": lambda m: 2 * m.z + 1,
}


@pytest.mark.parametrize("name", list(LINEARITY_CASES))
def test_a_plainly_linear_sum_has_degree_at_most_one(name: str) -> None:
    expr = LINEARITY_CASES[name](_base())
    if plainly_linear(expr):
        assert expr.polynomial_degree() in (0, 1)
    assert highs_backend._degree(expr) in (0, 1) or not plainly_linear(expr)
    assert (highs_backend._degree(expr) in (0, 1)) == (expr.polynomial_degree() in (0, 1))
    assert (highs_backend._degree(expr) == 2) == (expr.polynomial_degree() == 2)


@pytest.mark.parametrize("name", list(LINEARITY_CASES))
@pytest.mark.parametrize("place", ["constraint", "objective"])
def test_highs_refuses_what_polynomial_degree_refuses(name: str, place: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    m = _base()
    m.w = pyo.Var(range(50), bounds=(0, 1))
    m.rows = pyo.Constraint(range(50), rule=lambda m, i: m.w[i] + m.x <= 1)
    expr = LINEARITY_CASES[name](m)
    if place == "constraint":
        m.c = pyo.Constraint(expr=expr <= 10)
    else:
        m.o.expr = expr
    fast = _outcome(lambda: highs_backend.check_linear_for_highs(m))
    monkeypatch.setattr(highs_backend, "plainly_linear", lambda expr: False)
    assert fast == _outcome(lambda: highs_backend.check_linear_for_highs(m))


def test_final_parts_are_the_lists_final_linear_terms_reads() -> None:
    m = _base()
    expr = 2 * m.x + 0.0 * m.y + 3
    parts, terms = final_parts(expr), final_linear_terms(expr)
    assert [v.name for v in parts.variables] == ["x", "y"] and list(parts.coefs) == [2, 0.0]
    assert [v.name for v in terms.variables] == ["x"] and parts.constant == terms.constant == 3
    assert final_parts(m.p * m.x) is None and final_parts(m.x + m.x) is None
    assert final_parts(m.x + m.z) is None and final_parts(m.x * m.y) is None
    assert math.isnan(final_parts(NAN * m.x + m.y).coefs[0])


SNAP_VALUES = [0.0, -0.0, 1.0, 0.9999999, 1.5, None, 2.0000011, -3.0000001, 1e300, 3.0, -2.0,
               -2.0000000001, 0.5, 1e-7, -1e-7, 7.0000009]
# Not floats: `snapped` turns them into floats, so every variable is visited.
SNAP_ODD_VALUES = [*SNAP_VALUES, 3, np.float64(-0.0), np.float64(4.0000001)]


def _snap_model(values: list, fixed_every: int) -> tuple[pyo.ConcreteModel, SimpleNamespace]:
    """Integer and continuous variables holding `values` (every `fixed_every`-th fixed) and
    the part of a Pyomo HiGHS interface `_load_snapped` reads: `_get_primals`, the point
    HiGHS returns (here the values they hold)."""
    m = pyo.ConcreteModel()
    n = len(values)
    m.i = pyo.Var(range(n), domain=pyo.Integers)
    m.r = pyo.Var(range(n), domain=pyo.Reals)
    variables = [m.i[k] for k in range(n)] + [m.r[k] for k in range(n)]
    for k, var in enumerate(variables):
        var.set_value(values[k % n], skip_validation=True)
        if k % fixed_every == 0:
            var.fix()
    point = ComponentMap((v, v.value) for v in variables)
    return m, SimpleNamespace(_get_primals=lambda: point)


def _loop_snap(opt: SimpleNamespace) -> None:
    """`_load_snapped` without its shortcut: every value through `snapped`, then loaded."""
    for var, value in opt._get_primals().items():
        if value is not None and not var.fixed:
            value = snapped(var, value)
        var.set_value(value, skip_validation=True)


def _state(m: pyo.ConcreteModel) -> list[tuple]:
    """Each variable's value with its type and sign bit, and whether it is stale."""
    return [(repr(v.value), type(v.value).__name__, v.stale)
            for v in m.component_data_objects(pyo.Var)]


@pytest.mark.parametrize("values", [SNAP_VALUES, SNAP_ODD_VALUES])
@pytest.mark.parametrize("fixed_every", [1000, 3])
def test_snapping_only_the_snappable_values_leaves_what_the_full_loop_leaves(
        values: list, fixed_every: int) -> None:
    fast_model, fast_opt = _snap_model(values, fixed_every)
    slow_model, slow_opt = _snap_model(values, fixed_every)
    highs_backend._load_snapped(fast_opt)
    fast = _state(fast_model)  # read now: the next load makes these values stale
    _loop_snap(slow_opt)
    assert fast == _state(slow_model)
    assert fast != _state(_snap_model(values, fixed_every)[0])


@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_a_nan_or_infinite_integer_value_fails_as_before(value: float) -> None:
    fast, slow = (_snap_model([1.0, value], 1000)[1] for _ in range(2))
    assert _outcome(lambda: highs_backend._load_snapped(fast)) == _outcome(
        lambda: _loop_snap(slow)) is not None


def test_highs_solves_without_pyomo_rereading_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pyomo's `update` before each solve runs with its checks off: the model was built just
    before and nothing changes between solves."""
    from pyomo.contrib.solver.solvers.highs import Highs

    seen = []
    pyomo_update = Highs.update

    def update(self, *args, **kwargs):
        seen.append(dict(self._active_config.auto_updates.items()))
        return pyomo_update(self, *args, **kwargs)

    monkeypatch.setattr(Highs, "update", update)
    m = _base()
    m.c = pyo.Constraint(expr=m.x + 2 * m.y <= 2)
    assert solve(m, solver="highs").objective == pytest.approx(1.5)
    assert seen and not any(any(flags.values()) for flags in seen)


def _misjudged_highs(kind: str) -> Any:
    """A HiGHS model built by Pyomo and solved once, whose answer its tolerance misjudges:
    the trickle flow through a closed arc (x <= 1e8 y), or a large all-integer equality."""
    m = pyo.ConcreteModel()
    if kind == "trickle":
        m.x = pyo.Var(range(2), bounds=lambda _, a: (0, (1e8, 1000.0)[a]))
        m.y = pyo.Var(range(2), domain=pyo.Binary)
        m.link = pyo.Constraint(range(2), rule=lambda m, a: m.x[a] <= 1e8 * m.y[a])
        m.demand = pyo.Constraint(expr=m.x[0] + m.x[1] >= 50.0)
        m.o = pyo.Objective(expr=m.x[0] + 10 * m.x[1] + 100 * m.y[0])
    else:
        boxes = [(1, 3), (-1, 0), (-1, 1), (-2, -1)]
        m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=lambda _, i: boxes[i])
        m.row = pyo.Constraint(expr=15000000 * m.x[0] + 10000000 * m.x[1] - 4999999 * m.x[2]
                               - 5000001 * m.x[3] == 45000000)
        m.o = pyo.Objective(expr=5 * m.x[0] - 2 * m.x[1] - m.x[2] + m.x[3])
    opt = contrib_solver("highs", "HiGHS", "highspy")
    build_instance(opt, m, "HiGHS")
    highs_backend._run(opt, m, None, {}, False)
    return opt._solver_model


@pytest.mark.parametrize("kind", ["trickle", "equality"])
def test_a_row_view_gives_every_row_check_the_answers_of_fresh_reads(kind: str) -> None:
    highs = _misjudged_highs(kind)
    fresh_rows = highs_rows.highs_integral_rows(highs, 1e-6)
    reads = []
    get_lp = highs.getLp
    highs.getLp = lambda: reads.append(1) or get_lp()
    view = highs_rows.RowView(highs)
    rows = highs_rows.highs_integral_rows(highs, 1e-6, view)
    assert rows == fresh_rows
    assert highs_rows.rounded_row_violations(highs, view) == (
        highs_rows.rounded_row_violations(highs))
    assert highs_rows.solution_violations(highs, rows, view) == (
        highs_rows.solution_violations(highs, rows)) != {}
    assert highs_rows.misjudged(highs, rows, view) is highs_rows.misjudged(highs, rows) is True
    assert highs_rows.tightened_tolerance(highs, rows, 1e-6, view) == (
        highs_rows.tightened_tolerance(highs, rows, 1e-6)) < 1e-6
    reads.clear()
    for _ in range(3):
        highs_rows.solution_violations(highs, rows, view)
        highs_rows.tightened_tolerance(highs, rows, 1e-6, view)
    assert not reads  # every part was read once, before


def test_the_var_map_reads_scip_names_only_when_asked() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 2)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    build_instance(opt, m, "SCIP")
    var_map = VarMap(opt._pyomo_var_to_solver_var_map)
    assert "_by_name" not in vars(var_map)
    for var, scip_var in var_map.items():
        assert var_map.to_pyomo(scip_var) is var
        assert var_map.to_pyomo(SimpleNamespace(name="t_" + scip_var.name)) is var
    assert var_map.to_pyomo(SimpleNamespace(name="t_other")) is None
    assert len(var_map._by_name) == 3


# Quadratic objectives on x, y, w in [-1, 2]; True: Gershgorin's discs settle it (convex).
QUADRATIC_CASES: dict[str, tuple[Callable[[pyo.ConcreteModel], object], str, bool]] = {
    "separable": (lambda m: m.x ** 2 + 2 * m.y ** 2 - m.w, "min", True),
    "separable, one concave": (lambda m: m.x ** 2 - m.y ** 2, "min", False),
    "concave, maximized": (lambda m: -m.x ** 2 - 3 * m.y ** 2 + m.w, "max", True),
    "convex, maximized": (lambda m: m.x ** 2 + m.y, "max", False),
    "a square of a difference": (lambda m: (m.x - m.y) ** 2 + m.w ** 2, "min", True),
    "dominant coupling": (lambda m: 3 * m.x ** 2 + 2 * m.x * m.y + 3 * m.y ** 2, "min", True),
    "indefinite coupling": (lambda m: m.x ** 2 + 3 * m.x * m.y + m.y ** 2, "min", False),
    "PSD, not dominant": (lambda m: (m.x + m.y + m.w) ** 2 + 0.1 * m.x ** 2, "min", False),
    "a bare product": (lambda m: m.x * m.y, "min", False),
    "negative curvature below round-off": (lambda m: m.x ** 2 - 1e-14 * m.y ** 2, "min",
                                           False),
    "negligible negative curvature": (lambda m: m.x ** 2 - 1e-11 * m.y ** 2, "min", False),
    "cancelling coupling": (lambda m: m.x ** 2 + m.x * m.y - m.y * m.x, "min", True),
}


@pytest.mark.parametrize("name", list(QUADRATIC_CASES))
def test_the_gershgorin_shortcut_agrees_with_the_eigenvalues(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    build, sense, settled = QUADRATIC_CASES[name]
    m = pyo.ConcreteModel()
    m.x, m.y, m.w = (pyo.Var(bounds=(-1, 2)) for _ in range(3))
    m.o = pyo.Objective(expr=build(m), sense=pyo.maximize if sense == "max" else pyo.minimize)
    taken = []
    shortcut = highs_backend._diagonally_dominant
    monkeypatch.setattr(highs_backend, "_diagonally_dominant",
                        lambda h: taken.append(shortcut(h)) or taken[-1])
    fast = highs_backend._convex_quadratic(m.o)
    assert taken == [settled]
    monkeypatch.setattr(highs_backend, "_diagonally_dominant", lambda h: False)
    assert fast is highs_backend._convex_quadratic(m.o)


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--cases", "bogus=3"], "need SHAPE=SIZE"),
    (["--cases", "rows"], "need SHAPE=SIZE"),
    (["--cases", "setcover=3"], "setcover at least 5"),
    (["--cases", "qp=0"], "need SHAPE=SIZE"),
    (["--solvers", "gurobi"], "--solvers"),
    (["--repeat", "0"], "--repeat"),
    (["--time-limit", "0"], "--time-limit"),
])
def test_the_benchmark_refuses_bad_arguments_up_front(capsys, argv: list[str],
                                                      fragment: str) -> None:
    with pytest.raises(SystemExit) as exc:
        bench("solve_overhead").main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and fragment in captured.err.strip().splitlines()[-1]


def test_the_benchmark_times_both_interfaces_and_ends_with_its_summary(capsys) -> None:
    code = bench("solve_overhead").main(["--cases", "transport=4,knapsack=8,qp=5",
                                          "--repeat", "1"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert len([line for line in lines if line.startswith("| transport | 4 | 32 | 12 |")]) == 2
    assert lines[-1].startswith("SUMMARY solve_overhead:") and "same objective 6/6" in lines[-1]
    assert len(lines) == 2 + 6 + 1


def test_an_interrupted_benchmark_prints_what_it_has(capsys, monkeypatch) -> None:
    module = bench("solve_overhead")
    finished = []

    def run_case(*args):
        if finished:
            raise KeyboardInterrupt
        finished.append(module.Row("rows", 3, 6, 6, "scip", 0.2, 0.1, 0.15, 0.05, True))
        return finished[-1]

    monkeypatch.setattr(module, "run_case", run_case)
    monkeypatch.setattr(module, "warm_up", lambda names: None)
    assert module.main(["--cases", "rows=3,qp=3"]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err
    assert ("| rows | 3 | 6 | 6 | scip | 0.20 | 0.10 | 2.00 | +0.10 | 0.15 | +0.05 | 0.05 | yes |"
            in captured.out)
    assert captured.out.strip().splitlines()[-1].startswith("SUMMARY solve_overhead: coplug/")


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize(("shape", "size"), [("transport", 40), ("rows", 2000),
                                             ("assignment", 40), ("qp", 200)])
def test_large_models_get_the_objective_of_pyomos_own_interface(shape: str, size: int,
                                                                 solver: str) -> None:
    module = bench("solve_overhead")
    build, kind, _ = module.SHAPES[shape]
    ours, _ = module.coplug_run(build(size), solver, 60.0)
    assert ours is not None
    for interface in module.INTERFACES[solver]:
        assert module.agree(ours, module.pyomo_run(build(size), interface, 60.0), kind)


@pytest.mark.parametrize("integer", [False, True])
def test_scip_rows_are_read_only_when_an_integer_variable_exists(integer: bool) -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Integers if integer else pyo.Reals, bounds=(0, 10))
    m.big = pyo.Constraint(expr=3 * 10**6 * m.x[0] + 2 * m.x[1] <= 2 * 10**7)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    opt = contrib_solver("scip_persistent", "SCIP", "pyscipopt")
    build_instance(opt, m, "SCIP")
    reads = []

    class Counting:
        """SCIP's model, counting the reads of its constraint list."""

        def __getattr__(self, name: str) -> Any:
            if name == "getConss":
                reads.append(name)
            return getattr(opt._solver_model, name)

    found = integral_rows(Counting(), 1e-6)
    assert [row.coefs for row in found] == ([[3 * 10**6, 2]] if integer else [])
    assert bool(reads) is integer
