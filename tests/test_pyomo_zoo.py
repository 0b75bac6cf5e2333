"""A zoo of small, real Pyomo models through `coplug.plugins.solve` on SCIP and HiGHS.

Each model's answer is computed independently of coplug: in closed form, by enumerating
the tiny discrete part, or (for a transportation LP and LP duals) by Pyomo's own contrib
HiGHS interface. Besides status and objective, the point loaded into the Pyomo variables
is checked against every active constraint, bound, integrality and SOS condition.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.common.enums import ObjectiveSense
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.gdp import Disjunction

from coplug.plugins import InputError, Status, UnsupportedModelError, solve

SOLVERS = ("scip", "highs")
TOL = 1e-5


def violations(m: pyo.Block, tol: float = TOL) -> list[tuple]:
    """Active constraints, variable bounds, integrality and SOS conditions the loaded point
    breaks (relative tolerance on sides)."""
    bad: list[tuple] = []
    for con in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        for side, sign in ((con.lower, -1), (con.upper, 1)):
            if side is not None:
                limit = pyo.value(side)
                if sign * (body - limit) > tol * max(1.0, abs(limit)):
                    bad.append((con.name, body, limit))
    for var in m.component_data_objects(pyo.Var):
        if var.value is None:
            continue
        lb, ub = var.bounds
        if (lb is not None and var.value < lb - tol) or (ub is not None and var.value > ub + tol):
            bad.append((var.name, var.value, lb, ub))
        if var.is_integer() and var.value != round(var.value):  # coplug snaps integers
            bad.append((var.name, var.value, "integer"))
    for sos in m.component_data_objects(pyo.SOSConstraint, active=True):
        nonzero = [k for k, (v, _) in enumerate(sos.get_items()) if abs(v.value or 0) > tol]
        if len(nonzero) > sos.level or (len(nonzero) == 2 and nonzero[1] - nonzero[0] != 1):
            bad.append((sos.name, nonzero))
    return bad


def close(a: float | None, b: float | None, rel: float = TOL) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= rel * max(1.0, abs(b))


def solved(m: pyo.Block, solver: str, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return solve(m, solver=solver, **kwargs)


# ---------------------------------------------------------------------------- the zoo

def nested_blocks():
    m = pyo.ConcreteModel()
    m.P = pyo.Set(initialize=["a", "b", "c"])
    cap, profit = {"a": 7, "b": 5, "c": 9}, {"a": 3, "b": 4, "c": 2}

    def plant(b, p):
        b.open = pyo.Var(domain=pyo.Binary)
        b.line = pyo.Block()
        b.line.q = pyo.Var(bounds=(0, None))
        b.line.cap = pyo.Constraint(expr=b.line.q <= cap[p] * b.open)

    m.plant = pyo.Block(m.P, rule=plant)
    m.top = pyo.Block()
    m.top.inner = pyo.Block()
    m.top.inner.budget = pyo.Constraint(expr=sum(m.plant[p].open for p in m.P) <= 2)
    m.demand = pyo.Constraint(expr=sum(m.plant[p].line.q for p in m.P) <= 12)
    m.o = pyo.Objective(expr=sum(profit[p] * m.plant[p].line.q - 5 * m.plant[p].open
                                 for p in m.P), sense=pyo.maximize)
    return m


def nested_blocks_truth():
    cap, profit = {"a": 7, "b": 5, "c": 9}, {"a": 3, "b": 4, "c": 2}
    best = 0.0
    for k in range(3):
        for chosen in itertools.combinations("abc", k):
            left, value = 12, -5 * len(chosen)
            for p in sorted(chosen, key=lambda p: -profit[p]):  # fill the best plants first
                q = min(cap[p], left)
                left -= q
                value += profit[p] * q
            best = max(best, value)
    return Status.OPTIMAL, best


def named_expressions():
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, bounds=(0, 4))
    m.ld = pyo.Expression(m.I, rule=lambda m, i: i * m.x[i])
    m.total = pyo.Expression(expr=sum(m.ld[i] for i in m.I))
    m.cost = pyo.Expression(expr=sum((4 - i) * m.x[i] for i in m.I) + 1)
    m.c = pyo.Constraint(expr=m.total >= 10)
    m.o = pyo.Objective(expr=m.cost)
    return m


def deactivated_parts():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint(expr=m.x + m.y <= 8)
    m.off = pyo.Constraint(expr=m.x <= 1)
    m.off.deactivate()
    m.b = pyo.Block()
    m.b.tight = pyo.Constraint(expr=m.y <= 0.5)
    m.b.o = pyo.Objective(expr=m.y)  # in a deactivated block: not a second objective
    m.b.deactivate()
    m.objs = pyo.Objective([1, 2, 3], rule=lambda m, k: -(m.x + 2 * m.y) if k == 2 else k * m.x)
    m.objs[1].deactivate()
    m.objs[3].deactivate()
    m.spare = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.spare.deactivate()
    return m


def fixed_variables():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 5))
    m.z = pyo.Var(domain=pyo.Integers, bounds=(0, 9))
    m.x[1].fix(2.5)
    m.z.fix(3)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 6)
    m.d = pyo.Constraint(expr=m.x[0] - m.z <= 0)
    m.o = pyo.Objective(expr=2 * m.x[0] + m.x[2] + m.z * m.x[1], sense=pyo.maximize)
    return m


def domains():
    m = pyo.ConcreteModel()
    m.r = pyo.Var(domain=pyo.Reals, bounds=(-3, 4))
    m.nni = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.b = pyo.Var(domain=pyo.Binary)
    m.bo = pyo.Var(domain=pyo.Boolean)
    m.pr = pyo.Var(domain=pyo.PositiveReals)
    m.i = pyo.Var(domain=pyo.Integers, bounds=(-7, -2))
    m.bi = pyo.Var(domain=pyo.Integers, bounds=(-2.5, 3.7))
    m.npr = pyo.Var(domain=pyo.NonPositiveReals)
    m.ni = pyo.Var(domain=pyo.NegativeIntegers, bounds=(-4, None))
    m.c1 = pyo.Constraint(expr=m.nni + m.b + m.bo <= 3.5)
    m.c2 = pyo.Constraint(expr=m.pr + m.r <= 6.5)
    m.c3 = pyo.Constraint(expr=m.npr >= -1.25)
    m.c4 = pyo.Constraint(expr=2 * m.i + m.bi >= -9.3)
    m.o = pyo.Objective(expr=m.nni + 2 * m.b + 1.5 * m.bo + m.pr + 0.5 * m.r - m.npr
                        - 3 * m.i - m.bi + m.ni, sense=pyo.maximize)
    return m


def domains_truth():
    ints = max(n + 2 * b + 1.5 * o for n in range(4) for b in (0, 1) for o in (0, 1)
               if n + b + o <= 3.5)
    reals = 9.5 + 0.5 * -3  # pr + r <= 6.5 with r at -3
    negative = max(-3 * i - bi for i in range(-7, -1) for bi in range(-2, 4)
                   if 2 * i + bi >= -9.3)
    return Status.OPTIMAL, ints + reals + 1.25 + negative - 1


SOS1_VALUE, SOS1_WEIGHT = {1: 3, 2: 5, 3: 4, 4: 1}, {1: 1, 2: 3, 3: 2, 4: 0.5}


def sos1():
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I, bounds=(0, 10))
    m.cap = pyo.Constraint(expr=sum(SOS1_WEIGHT[i] * m.x[i] for i in m.I) <= 12)
    m.s = pyo.SOSConstraint(var=m.x, sos=1)
    m.o = pyo.Objective(expr=sum(SOS1_VALUE[i] * m.x[i] for i in m.I), sense=pyo.maximize)
    return m


def sos1_truth():  # one variable nonzero: fill it up to its bound or the capacity
    return Status.OPTIMAL, max(SOS1_VALUE[i] * min(10, 12 / SOS1_WEIGHT[i]) for i in SOS1_VALUE)


SOS2_X, SOS2_F = [0, 1, 2, 3, 4], [0, 3, 1, 5, 2]


def sos2():
    m = pyo.ConcreteModel()
    m.K = pyo.RangeSet(0, 4)
    m.lam = pyo.Var(m.K, bounds=(0, 1))
    m.conv = pyo.Constraint(expr=sum(m.lam[k] for k in m.K) == 1)
    m.x = pyo.Var(bounds=(0, 4))
    m.f = pyo.Var()
    m.dx = pyo.Constraint(expr=m.x == sum(SOS2_X[k] * m.lam[k] for k in m.K))
    m.df = pyo.Constraint(expr=m.f == sum(SOS2_F[k] * m.lam[k] for k in m.K))
    m.lim = pyo.Constraint(expr=m.x <= 2.5)
    m.s = pyo.SOSConstraint(var=m.lam, index=list(m.K), weights=[1, 2, 3, 4, 5], sos=2)
    m.o = pyo.Objective(expr=m.f, sense=pyo.maximize)
    return m


def sos2_truth():  # the interpolant is linear between breakpoints: check them and x = 2.5
    values = [f for x, f in zip(SOS2_X, SOS2_F, strict=True) if x <= 2.5]
    values.append(SOS2_F[2] + 0.5 * (SOS2_F[3] - SOS2_F[2]))
    return Status.OPTIMAL, max(values)


def pw_points(repn):
    return [-2, -1, 0, 1, 2] if repn == "LOG" else [-2, -1, 0, 1, 2, 3]


def pw_f(x):
    return (x - 0.4) ** 2 if x != 3 else 1.0


def piecewise(repn):
    def build():
        pts = pw_points(repn)
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(pts[0], pts[-1]))
        m.y = pyo.Var()
        m.pw = pyo.Piecewise(m.y, m.x, pw_pts=pts, pw_constr_type="EQ", pw_repn=repn,
                             f_rule=lambda m, x: pw_f(x))
        m.c = pyo.Constraint(expr=m.x >= -1.7)
        m.o = pyo.Objective(expr=m.y + 0.1 * m.x)
        return m
    return build


def piecewise_truth(repn):
    def truth():  # linear between breakpoints: the breakpoints in range and x = -1.7
        pts = pw_points(repn)
        values = [pw_f(x) + 0.1 * x for x in pts if x >= -1.7]
        values.append(pw_f(-2) + 0.3 * (pw_f(-1) - pw_f(-2)) - 0.17)
        return Status.OPTIMAL, min(values)
    return truth


JOB_TIME, JOB_RELEASE = [3, 2, 4], [0, 1, 2]


def gdp_schedule(transformation):
    def build():
        m = pyo.ConcreteModel()
        jobs = range(3)
        m.s = pyo.Var(jobs, bounds=(0, 20))
        m.T = pyo.Var(bounds=(0, 40))
        m.rel = pyo.Constraint(jobs, rule=lambda m, j: m.s[j] >= JOB_RELEASE[j])
        m.end = pyo.Constraint(jobs, rule=lambda m, j: m.T >= m.s[j] + JOB_TIME[j])
        m.pairs = Disjunction(
            [(i, j) for i in jobs for j in jobs if i < j],
            rule=lambda m, i, j: [[m.s[i] + JOB_TIME[i] <= m.s[j]],
                                  [m.s[j] + JOB_TIME[j] <= m.s[i]]])
        m.o = pyo.Objective(expr=m.T + 0.01 * sum(m.s[j] for j in jobs))
        pyo.TransformationFactory(transformation).apply_to(m)
        return m
    return build


def gdp_truth():  # every order, each job as early as possible
    best = math.inf
    for order in itertools.permutations(range(3)):
        t, starts = 0, []
        for j in order:
            starts.append(max(t, JOB_RELEASE[j]))
            t = starts[-1] + JOB_TIME[j]
        best = min(best, t + 0.01 * sum(starts))
    return Status.OPTIMAL, best


LOGIC_VALUE = [3, 2, 2.5, 1.2]


def logical():
    m = pyo.ConcreteModel()
    m.Y = pyo.BooleanVar([1, 2, 3, 4])
    m.x = pyo.Var([1, 2, 3, 4], bounds=(0, 1))
    m.lc = pyo.LogicalConstraint(expr=pyo.atmost(2, m.Y[1], m.Y[2], m.Y[3], m.Y[4]))
    m.lc2 = pyo.LogicalConstraint(expr=m.Y[1].implies(~m.Y[3]))
    m.lc3 = pyo.LogicalConstraint(expr=m.Y[2].equivalent_to(m.Y[4]))
    pyo.TransformationFactory("core.logical_to_linear").apply_to(m)
    m.link = pyo.Constraint([1, 2, 3, 4],
                            rule=lambda m, i: m.x[i] <= m.Y[i].get_associated_binary())
    m.o = pyo.Objective(expr=sum(LOGIC_VALUE[i - 1] * m.x[i] for i in range(1, 5)),
                        sense=pyo.maximize)
    return m


def logical_truth():
    best = 0.0
    for y in itertools.product((0, 1), repeat=4):
        if sum(y) <= 2 and not (y[0] and y[2]) and y[1] == y[3]:
            best = max(best, float(np.dot(LOGIC_VALUE, y)))
    return Status.OPTIMAL, best


def convex_qp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.y = pyo.Var(bounds=(-10, 10))
    m.c = pyo.Constraint(expr=m.x + m.y >= 4)
    m.o = pyo.Objective(expr=(m.x - 1) ** 2 + (m.y - 2) ** 2 + 0.5 * m.x * m.y + 3)
    return m


def convex_qp_truth():
    # the unconstrained minimizer has x + y < 4, so the row is active: y = 4 - x gives 3x = 4
    x = 4 / 3
    return Status.OPTIMAL, (x - 1) ** 2 + (4 - x - 2) ** 2 + 0.5 * x * (4 - x) + 3


def concave_qp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 2))
    m.y = pyo.Var(bounds=(-2, 1))
    m.c = pyo.Constraint(expr=m.x + m.y <= 1.5)
    m.o = pyo.Objective(expr=-(m.x - 1) ** 2 - (m.y + 0.5) ** 2 + m.x * m.y)
    return m


def concave_qp_truth():  # Hessian [[-2, 1], [1, -2]] is negative definite: a vertex wins
    def f(x, y):
        return -(x - 1) ** 2 - (y + 0.5) ** 2 + x * y
    vertices = [(-1, -2), (-1, 1), (2, -2), (2, -0.5), (0.5, 1)]
    return Status.OPTIMAL, min(f(*v) for v in vertices)


def quadratic_constraint():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.disk = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 4)
    m.o = pyo.Objective(expr=m.x + 2 * m.y)
    return m


def nonlinear():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 5), initialize=1)
    m.y = pyo.Var(bounds=(-3, 3))
    m.z = pyo.Var(bounds=(0, 4))
    m.e = pyo.Constraint(expr=pyo.exp(m.x) <= 10)
    m.l = pyo.Constraint(expr=pyo.log(m.x) + m.z >= 1)
    m.s = pyo.Constraint(expr=pyo.sqrt(m.z) <= 1.5)
    m.cube = pyo.Constraint(expr=m.y ** 3 >= -8)
    m.o = pyo.Objective(expr=-m.x - m.y + 0.5 * m.z)
    return m


def nonlinear_truth():
    x = math.log(10)
    return Status.OPTIMAL, -x - 3 + 0.5 * max(0.0, 1 - math.log(x))


def nonlinear_objective():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var(bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x + m.y <= 4)
    m.o = pyo.Objective(expr=pyo.log(1 + m.x) + pyo.sqrt(m.y + 1) + 7,
                        sense=ObjectiveSense.maximize)
    return m


def nonlinear_objective_truth():
    # increasing in both: x + y = 4, and the 1-D function is concave
    xs = np.linspace(1, 3, 200_001)
    return Status.OPTIMAL, float(np.max(np.log(1 + xs) + np.sqrt(5 - xs) + 7))


def constraint_list():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.NonNegativeIntegers, bounds=(0, 5))
    m.cl = pyo.ConstraintList()
    m.cl.add(m.x[0] + m.x[1] <= 6)
    m.cl.add(m.x[1] + m.x[2] <= 5)
    m.cl.add(pyo.inequality(1, m.x[2] + m.x[3], 7))
    m.cl.add(m.x[0] - m.x[3] == 1)
    m.cl[2].deactivate()
    m.o = pyo.Objective(expr=2 * m.x[0] + 3 * m.x[1] + m.x[2] + 2 * m.x[3], sense=pyo.maximize)
    return m


def constraint_list_truth():
    best = max(2 * a + 3 * b + c + 2 * d for a, b, c, d in itertools.product(range(6), repeat=4)
               if a + b <= 6 and 1 <= c + d <= 7 and a - d == 1)
    return Status.OPTIMAL, best


ARC_COST = {("s1", 1): 2, ("s1", 2): 4, ("s2", 2): 1, ("s2", 3): 3, ("s1", 3): 7}


def transport():
    m = pyo.ConcreteModel()
    m.S = pyo.Set(initialize=["s1", "s2"])
    m.D = pyo.RangeSet(1, 3)
    m.A = pyo.Set(within=m.S * m.D, initialize=list(ARC_COST))
    supply, demand = {"s1": 20, "s2": 15}, {1: 8, 2: 12, 3: 10}
    m.f = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    m.sup = pyo.Constraint(m.S, rule=lambda m, s: sum(m.f[a] for a in m.A if a[0] == s)
                           <= supply[s])
    m.dem = pyo.Constraint(m.D, rule=lambda m, d: sum(m.f[a] for a in m.A if a[1] == d)
                           >= demand[d])
    m.o = pyo.Objective(expr=sum(ARC_COST[a] * m.f[a] for a in m.A))
    return m


def contrib_highs_truth(build):
    def truth():
        r = SolverFactory("highs").solve(build())
        return Status.OPTIMAL, r.incumbent_objective
    return truth


def empty_model():
    return pyo.ConcreteModel()


def constant_objective():
    m = pyo.ConcreteModel()
    m.o = pyo.Objective(expr=5.5, sense=pyo.maximize)
    return m


def all_fixed(rhs):
    def build():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 10))
        m.y = pyo.Var(domain=pyo.Binary)
        m.x.fix(4)
        m.y.fix(1)
        m.c = pyo.Constraint(expr=m.x + 3 * m.y <= rhs)
        m.o = pyo.Objective(expr=2 * m.x - m.y + 1)
        return m
    return build


def infeasible_lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.c1 = pyo.Constraint(expr=m.x + m.y <= 1)
    m.c2 = pyo.Constraint(expr=m.x - m.y >= 2)
    m.o = pyo.Objective(expr=m.x + m.y)
    return m


def infeasible_mip():  # LP-feasible, but 2x + 4y is even
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(-10, 10))
    m.y = pyo.Var(domain=pyo.Integers, bounds=(-10, 10))
    m.c = pyo.Constraint(expr=2 * m.x + 4 * m.y == 3)
    m.o = pyo.Objective(expr=m.x)
    return m


def unbounded_lp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x - m.y <= 1)
    m.o = pyo.Objective(expr=m.x + m.y + 3, sense=pyo.maximize)
    return m


def unbounded_mip():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.c = pyo.Constraint(expr=2 * m.x - 3 * m.y <= 1)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m


def with_sense(sense):
    def build():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 3))
        m.k = pyo.Var(domain=pyo.Integers, bounds=(-4, 4))
        m.c = pyo.Constraint(expr=m.x + m.k <= 2.5)
        m.o = pyo.Objective(expr=2 * m.x - m.k + 10, sense=sense)
        return m
    return build


def with_sense_truth(maximize):
    def truth():
        values = [2 * x - k + 10 for k in range(-4, 5) for x in (0, min(3, 2.5 - k))
                  if 0 <= min(3, 2.5 - k) and x + k <= 2.5]
        return Status.OPTIMAL, max(values) if maximize else min(values)
    return truth


def const(status, objective):
    return lambda: (status, objective)


BOTH, SCIP = SOLVERS, ("scip",)
ZOO = [
    ("nested_indexed_blocks", nested_blocks, nested_blocks_truth, BOTH),
    ("named_expressions", named_expressions, const(Status.OPTIMAL, 1 + 10 / 3), BOTH),
    ("deactivated_parts", deactivated_parts, const(Status.OPTIMAL, -16.0), BOTH),
    ("fixed_variables", fixed_variables, const(Status.OPTIMAL, 6 + 0.5 + 7.5), BOTH),
    ("domains", domains, domains_truth, BOTH),
    ("sos1", sos1, sos1_truth, SCIP),
    ("sos2", sos2, sos2_truth, SCIP),
    ("piecewise_sos2", piecewise("SOS2"), piecewise_truth("SOS2"), SCIP),
    ("piecewise_inc", piecewise("INC"), piecewise_truth("INC"), BOTH),
    ("piecewise_dcc", piecewise("DCC"), piecewise_truth("DCC"), BOTH),
    ("piecewise_cc", piecewise("CC"), piecewise_truth("CC"), BOTH),
    ("piecewise_log", piecewise("LOG"), piecewise_truth("LOG"), BOTH),
    ("gdp_bigm", gdp_schedule("gdp.bigm"), gdp_truth, BOTH),
    ("gdp_hull", gdp_schedule("gdp.hull"), gdp_truth, BOTH),
    ("logical_to_linear", logical, logical_truth, BOTH),
    ("convex_qp", convex_qp, convex_qp_truth, BOTH),
    ("nonconvex_qp", concave_qp, concave_qp_truth, SCIP),
    ("quadratic_constraint", quadratic_constraint, const(Status.OPTIMAL, -2 * math.sqrt(5)),
     SCIP),
    ("exp_log_sqrt_cube", nonlinear, nonlinear_truth, SCIP),
    ("nonlinear_objective_max_constant", nonlinear_objective, nonlinear_objective_truth, SCIP),
    ("constraint_list", constraint_list, constraint_list_truth, BOTH),
    ("tuple_indexed_transport", transport, contrib_highs_truth(transport), BOTH),
    ("empty_model", empty_model, const(Status.OPTIMAL, None), BOTH),
    ("constant_objective", constant_objective, const(Status.OPTIMAL, 5.5), BOTH),
    ("only_fixed_feasible", all_fixed(8), const(Status.OPTIMAL, 8.0), BOTH),
    ("only_fixed_infeasible", all_fixed(6), const(Status.INFEASIBLE, None), BOTH),
    ("infeasible_lp", infeasible_lp, const(Status.INFEASIBLE, None), BOTH),
    ("infeasible_mip", infeasible_mip, const(Status.INFEASIBLE, None), BOTH),
    ("unbounded_lp", unbounded_lp, const(Status.UNBOUNDED, None), BOTH),
    ("unbounded_mip", unbounded_mip, const(Status.UNBOUNDED, None), SCIP),
    ("maximize_constant", with_sense(pyo.maximize), with_sense_truth(True), BOTH),
    ("maximize_enum", with_sense(ObjectiveSense.maximize), with_sense_truth(True), BOTH),
    ("minimize_int_sense", with_sense(1), with_sense_truth(False), BOTH),
]


@pytest.mark.parametrize(("build", "truth", "solver"), [
    pytest.param(build, truth, solver, id=f"{name}-{solver}")
    for name, build, truth, solvers in ZOO for solver in solvers])
def test_zoo(build, truth, solver):
    status, objective = truth()
    m = build()
    result = solved(m, solver)
    assert result.status is status
    assert close(result.objective, objective), (result.objective, objective)
    if status is Status.OPTIMAL:
        assert result.has_solution
        assert violations(m) == []
    else:
        assert not result.has_solution


def test_fixed_values_stay():
    m = fixed_variables()
    for solver in SOLVERS:
        solved(m, solver)
        assert m.x[1].value == 2.5 and m.z.value == 3 and m.x[1].fixed
        assert close(m.x[0].value, 3.0) and close(m.x[2].value, 0.5)


# ------------------------------------------------- one model, changed between solves

def params_model():
    m = pyo.ConcreteModel()
    m.a = pyo.Param(mutable=True, initialize=2)
    m.rhs = pyo.Param(mutable=True, initialize=12)
    m.w = pyo.Param(mutable=True, initialize=3)
    m.lo = pyo.Param(mutable=True, initialize=1)
    m.hi = pyo.Param(mutable=True, initialize=10)
    m.x = pyo.Var(bounds=(m.lo, m.hi))
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 8))
    m.c = pyo.Constraint(expr=m.a * m.x + m.y <= m.rhs)
    m.r = pyo.Constraint(expr=pyo.inequality(m.lo, m.x + m.y, m.rhs))
    m.o = pyo.Objective(expr=m.a * m.x + m.w * m.y + m.a, sense=pyo.maximize)
    return m


def params_truth(a, rhs, w, lo, hi):
    best = None
    for y in range(9):  # for each y, x as large as both rows and its bound allow
        x = min(hi, (rhs - y) / a, rhs - y)
        if x >= lo and lo + y <= rhs:
            value = a * x + w * y + a
            best = value if best is None else max(best, value)
    return best


PARAM_SETS = [dict(a=2, rhs=12, w=3, lo=1, hi=10), dict(a=5, rhs=12, w=3, lo=2, hi=10),
              dict(a=1, rhs=4, w=0.5, lo=0, hi=3)]


@pytest.mark.parametrize("solver", SOLVERS)
def test_mutable_params_between_solves(solver):
    m = params_model()
    for values in PARAM_SETS:
        for name, value in values.items():
            getattr(m, name).set_value(value)
        result = solved(m, solver)
        assert result.status is Status.OPTIMAL
        assert close(result.objective, params_truth(**values))
        assert violations(m) == []


def test_mutable_params_in_nonlinear_constraint_scip():
    m = pyo.ConcreteModel()
    m.p = pyo.Param(mutable=True, initialize=1.0)
    m.q = pyo.Param(mutable=True, initialize=4.0)
    m.x = pyo.Var(bounds=(-10, 10))
    m.y = pyo.Var(bounds=(-10, 10))
    m.c = pyo.Constraint(expr=m.p * m.x ** 2 + m.y ** 2 <= m.q)
    m.o = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    for p, q in [(1, 4), (4, 1), (0.25, 9)]:
        m.p, m.q = p, q
        result = solved(m, "scip")
        assert result.status is Status.OPTIMAL
        assert close(result.objective, math.sqrt(q * (1 / p + 1)))  # Lagrange, closed form
        assert violations(m) == []


@pytest.mark.parametrize("solver", SOLVERS)
def test_mutable_param_in_quadratic_objective(solver):
    m = pyo.ConcreteModel()
    m.w = pyo.Param(mutable=True, initialize=1.0)
    m.x = pyo.Var(bounds=(-5, 5))
    m.o = pyo.Objective(expr=m.w * (m.x - 2) ** 2 + m.x)
    for w in (1.0, 0.1, 0.05):
        m.w = w
        x = max(-5.0, 2 - 1 / (2 * w))
        assert close(solved(m, solver).objective, w * (x - 2) ** 2 + x)
        assert close(m.x.value, x, rel=1e-4)


@pytest.mark.parametrize("solver", SOLVERS)
def test_fix_unfix_activate_between_solves(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 4))
    m.c = pyo.Constraint(expr=m.x + m.y <= 5)
    m.d = pyo.Constraint(expr=m.x <= 1)
    m.o = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.maximize)
    m.y.fix(0)
    assert solved(m, solver).objective == pytest.approx(1.0)
    assert m.y.value == 0
    m.y.unfix()
    assert solved(m, solver).objective == pytest.approx(9.0)
    m.c.deactivate()
    m.d.deactivate()
    assert solved(m, solver).objective == pytest.approx(12.0)
    m.c.activate()
    assert solved(m, solver).objective == pytest.approx(9.0)
    assert violations(m) == []


@pytest.mark.parametrize("solver", SOLVERS)
def test_indexed_param_bounds_and_reference(solver):
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[(1, "a"), (2, "b"), (3, "a")], dimen=2)
    m.lo = pyo.Param(m.I, initialize={(1, "a"): 1, (2, "b"): -2, (3, "a"): 0}, mutable=True)
    m.x = pyo.Var(m.I, bounds=lambda m, i, j: (m.lo[i, j], m.lo[i, j] + 3))
    m.ra = pyo.Reference(m.x[:, "a"])
    m.c = pyo.Constraint(expr=sum(m.ra[k] for k in m.ra) <= 4)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    assert solved(m, solver).objective == pytest.approx(4 + 1)
    m.lo[2, "b"] = 5
    assert solved(m, solver).objective == pytest.approx(4 + 8)
    assert m.x[2, "b"].value == pytest.approx(8)


# ------------------------------------------------------------- what comes back besides

@pytest.mark.parametrize("solver", SOLVERS)
def test_gdp_indicator_values_loaded(solver):
    m = gdp_schedule("gdp.bigm")()
    solved(m, solver)
    for disjunction in m.pairs.values():
        chosen = [d.indicator_var.value for d in disjunction.disjuncts]
        assert sorted(chosen) == [False, True]
        first, second = disjunction.disjuncts
        for disjunct in (first, second):  # the chosen side's constraint holds
            if disjunct.indicator_var.value:
                for con in disjunct.component_data_objects(pyo.Constraint):
                    assert pyo.value(con.body) <= pyo.value(con.upper) + TOL


@pytest.mark.parametrize("solver", SOLVERS)
def test_solve_one_block_of_a_model(solver):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 5))
    m.b = pyo.Block([1, 2])
    for k in (1, 2):
        m.b[k].y = pyo.Var(bounds=(0, 10))
        m.b[k].c = pyo.Constraint(expr=m.b[k].y + m.x <= 3 * k)
        m.b[k].o = pyo.Objective(expr=m.b[k].y + 2 * m.x, sense=pyo.maximize)
    m.o = pyo.Objective(expr=m.x)
    result = solved(m.b[2], solver)  # max y + 2x, y + x <= 6, x <= 5
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(11.0)
    assert (m.x.value, m.b[2].y.value) == pytest.approx((5.0, 1.0))
    with pytest.raises(InputError, match=r"indexed Block 'b'"):
        solved(m.b, solver)
    with pytest.raises(UnsupportedModelError, match="3 active objectives"):
        solved(m, solver)


def lp_with_duals(sense):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, 3))
    m.z = pyo.Var()
    m.b = pyo.Block()
    m.b.c1 = pyo.Constraint(expr=m.x + 2 * m.y + m.z <= 14)
    m.c2 = pyo.Constraint(expr=3 * m.x - m.y >= 0)
    m.c3 = pyo.Constraint(expr=pyo.inequality(-2, m.x - m.y + 1, 2))
    m.c4 = pyo.Constraint(expr=m.z - m.x == 1)
    sign = 1 if sense == pyo.minimize else -1
    m.o = pyo.Objective(expr=sign * (-3 * m.x - 4 * m.y - m.z) + 2, sense=sense)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
@pytest.mark.parametrize("solver", SOLVERS)
def test_lp_duals_match_pyomo_contrib_highs(solver, sense):
    reference = lp_with_duals(sense)
    ref = SolverFactory("highs").solve(reference)
    ref_duals = {c.name: v for c, v in ref.solution_loader.get_duals().items()}
    ref_rc = {v.name: r for v, r in ref.solution_loader.get_reduced_costs().items()}
    m = lp_with_duals(sense)
    result = solved(m, solver)
    assert close(result.objective, ref.incumbent_objective)
    assert {c.name: v for c, v in m.dual.items()} == pytest.approx(ref_duals, abs=1e-7)
    assert {v.name: r for v, r in m.rc.items()} == pytest.approx(ref_rc, abs=1e-7)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("literals", [False, True])
def test_units_on_vars_and_params(solver, literals):
    """Units on Vars and Params, and unit literals in the expressions (`50 * u.m`), which
    failed inside Pyomo's SCIP interface until coplug took them (scip_walker)."""
    pytest.importorskip("pint")
    u = pyo.units
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 100), units=u.m)
    m.t = pyo.Var(bounds=(0, 50), units=u.s)
    m.v = pyo.Param(initialize=2.0, units=u.m / u.s, mutable=True)
    m.c = pyo.Constraint(expr=m.x <= m.v * m.t)
    m.c2 = pyo.Constraint(expr=m.x <= (50 * u.m if literals else 50))
    speed = 0.1 * u.m / u.s if literals else 0.1
    m.o = pyo.Objective(expr=m.x - speed * m.t, sense=pyo.maximize)
    result = solved(m, solver)  # x = 50 needs t = 25
    assert result.objective == pytest.approx(47.5)
    assert (m.x.value, m.t.value) == pytest.approx((50.0, 25.0))


# ------------------------------------------------------- refusals: one clear line each

def miqp():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=sum(m.x.values()) == 4)
    m.o = pyo.Objective(expr=sum((m.x[i] - 0.3 * i) ** 2 for i in range(3)))
    return m


def test_miqp_on_scip():
    m = miqp()
    result = solved(m, "scip")
    best = min(sum((x[i] - 0.3 * i) ** 2 for i in range(3))
               for x in itertools.product(range(-5, 6), repeat=3) if sum(x) == 4)
    assert result.status is Status.OPTIMAL and close(result.objective, best)
    assert violations(m) == []


def untransformed_gdp():
    m = pyo.ConcreteModel()
    m.s = pyo.Var([1, 2], bounds=(0, 10))
    m.d = Disjunction(expr=[[m.s[1] + 3 <= m.s[2]], [m.s[2] + 4 <= m.s[1]]])
    m.o = pyo.Objective(expr=m.s[1] + m.s[2])
    return m


def untransformed_logic():
    m = pyo.ConcreteModel()
    m.Y = pyo.BooleanVar([1, 2])
    m.x = pyo.Var(bounds=(0, 1))
    m.lc = pyo.LogicalConstraint(expr=m.Y[1].lor(m.Y[2]))
    m.o = pyo.Objective(expr=m.x)
    return m


REFUSED = [
    ("highs", sos1, "'s' (SOSConstraint)"),
    ("highs", piecewise("SOS2"), "SOSConstraint"),
    ("highs", concave_qp, "non-convex quadratic objective 'o'"),
    ("highs", quadratic_constraint, "nonlinear constraint 'disk'"),
    ("highs", nonlinear, "nonlinear constraint"),
    ("highs", nonlinear_objective, "nonlinear objective 'o'"),
    ("highs", miqp, "(MIQP)"),
    ("scip", untransformed_gdp, "gdp.bigm"),
    ("highs", untransformed_gdp, "gdp.bigm"),
    ("scip", untransformed_logic, "core.logical_to_linear"),
    ("highs", untransformed_logic, "core.logical_to_linear"),
]


@pytest.mark.parametrize(("solver", "build", "words"), [
    pytest.param(s, b, w, id=f"{b.__name__}-{s}") for s, b, w in REFUSED])
def test_refusals_are_one_line(solver, build, words):
    with pytest.raises(UnsupportedModelError) as info:
        solved(build(), solver)
    message = str(info.value)
    assert words in message and "\n" not in message
