"""Session 26's probes: multiobjective fronts with large objective values, and bad
arguments to the calls beyond `solve` refused by name."""

from __future__ import annotations

import itertools
import math

import pyomo.environ as pyo
import pytest

from coplug.plugins import (
    InputError,
    SolutionPool,
    k_best,
    lexicographic,
    pareto_front,
    race,
    solve,
)


def _two_objectives(constant: float, form: str = "constant") -> pyo.ConcreteModel:
    """min constant + 5x, max y, y <= x, y binary: the front (c, 0), (c + 5, 1). `form`:
    x binary and the constant written as such; x continuous in [0, 1] (the objective has no
    step); or the constant carried by a binary z that a row holds at 1 (a term, not a
    constant, with the step gcd(c, 5) = 5)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.UnitInterval if form == "continuous" else pyo.Binary)
    m.y = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.y <= m.x)
    if form == "term":
        m.z = pyo.Var(domain=pyo.Binary)
        m.z_on = pyo.Constraint(expr=m.z >= 1)
        m.cost = pyo.Objective(expr=constant * m.z + 5 * m.x)
    else:
        m.cost = pyo.Objective(expr=constant + 5 * m.x)
    m.value = pyo.Objective(expr=m.y, sense=pyo.maximize)
    m.value.deactivate()
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("constant, form", [(0.0, "constant"), (1e7, "constant"),
                                            (-3e9, "constant"), (1e7, "continuous"),
                                            (1e7, "term")])
def test_front_points_are_kept_beside_a_large_constant(solver: str, constant: float,
                                                       form: str) -> None:
    """A room of 1e-6 of the value (10 at 1e7) took the point 5 away as no worse and
    dropped the one before it: [(1e7 + 5, 1)] called complete."""
    m = _two_objectives(constant, form)
    front = pareto_front(m, m.cost, m.value, solver=solver)
    points = {(constant + 5 * x, y) for x, y in itertools.product((0, 1), repeat=2) if y <= x}
    expected = sorted(p for p in points if not any(
        q != p and q[0] <= p[0] and q[1] >= p[1] for q in points))
    assert front.complete
    assert [v for p in front.points for v in p.values] == pytest.approx(
        [v for p in expected for v in p], rel=0, abs=1e-6)


def test_an_indexed_objective_is_not_taken_for_one() -> None:
    """m.o (two members) as `first` made a front over o[1], o[2], `second` a tie-break."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.Binary)
    m.o = pyo.Objective([1, 2], rule=lambda m, i: m.x[i - 1])
    m.p = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    m.o.deactivate()
    m.p.deactivate()
    with pytest.raises(InputError, match="takes two objectives.*got 3"):
        pareto_front(m, m.o, m.p)
    front = pareto_front(m, m.o[1], m.p)
    assert [v for p in front.points for v in p.values] == pytest.approx([0, 1, 1, 2])


@pytest.mark.parametrize("call, name", [
    (lambda m: k_best(m, 2), "k_best"),
    (lambda m: lexicographic(m, []), "lexicographic"),
    (lambda m: pareto_front(m, None, None), "pareto_front"),
    (lambda m: race(m), "race"),
])
@pytest.mark.parametrize("model", [None, "model", pyo.Var()])
def test_calls_refuse_what_is_not_a_model(call, name: str, model) -> None:
    with pytest.raises(InputError, match=rf"{name}\(\) needs a Pyomo model \(a Block\)"):
        call(model)


def test_k_best_and_stages_refuse_keywords_they_set() -> None:
    m = _two_objectives(0.0)
    m.value.activate()
    m.cost.deactivate()
    with pytest.raises(InputError, match="k_best.. takes no plugins"):
        k_best(m, 2, plugins=[SolutionPool()])
    with pytest.raises(InputError, match="warmstart is set by the stages"):
        lexicographic(m, [m.value], warmstart=True)


def test_a_pooled_solution_names_a_variable_the_solver_never_saw() -> None:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)  # x[2] is in no row and not in the objective
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1], sense=pyo.maximize)
    pool = SolutionPool(3)
    solve(m, plugins=[pool])
    assert pool.solutions[0][m.x[1]] == 1.0
    with pytest.raises(InputError, match="'x\\[2\\]' is in no active constraint"):
        pool.solutions[0][m.x[2]]
    with pytest.raises(InputError, match="is not a Pyomo variable"):
        pool.solutions[0]["x[2]"]


def _lazy_capacity(weights: tuple[int, int], capacity: int, solver: str,
                   lazy: bool) -> tuple[pyo.ConcreteModel, object]:
    """max x0 + x1 over binaries with the row weights @ x <= capacity, lazy or written."""
    from coplug.plugins import LazyConstraints

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    row = weights[0] * m.x[0] + weights[1] * m.x[1] <= capacity
    if not lazy:
        m.cap = pyo.Constraint(expr=row)
        return m, solve(m, solver=solver)
    return m, solve(m, solver=solver, plugins=[LazyConstraints(lambda s: [row])])


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("weights, capacity", [((1_000_000, 1_000_001), 2_000_000),
                                               ((100_000_000, 100_000_150), 200_000_000)])
def test_a_lazy_whole_number_row_is_judged_as_a_written_one(solver: str, weights, capacity
                                                            ) -> None:
    """Both solvers' tolerance relative to the side (1e-6 of 2e6 is 2) let x = (1, 1)
    pass 1 over (150 over 2e8) and called it optimal; the row written in the model is
    judged exactly, and the lazy one now is too."""
    _, written = _lazy_capacity(weights, capacity, solver, lazy=False)
    m, result = _lazy_capacity(weights, capacity, solver, lazy=True)
    assert result.status is written.status
    assert result.objective == written.objective == 1.0
    assert weights[0] * round(m.x[0].value) + weights[1] * round(m.x[1].value) <= capacity


def test_lazy_big_m_rows_over_integers_get_a_solve_without_cuts() -> None:
    """Lazy `x <= 1e9 y` over integer flows: SCIP's cuts led to "optimal" 303 for 302 (the
    rows written give 302, with SCIP's cuts off up front)."""
    from coplug.plugins import LazyConstraints

    fixed, unit = [26.0, 46.0, 89.0, 13.0], [[5.0, 10, 5, 8], [7, 2, 1, 2]]
    demand, capacity = [33.0, 49.0], [18600000.0, 10000000.0, 11900000.0, 13500000.0]

    def build(lazy: bool) -> tuple[pyo.ConcreteModel, list]:
        m = pyo.ConcreteModel()
        m.y = pyo.Var(range(4), domain=pyo.Binary)
        m.x = pyo.Var(range(2), range(4), domain=pyo.NonNegativeIntegers)
        m.meet = pyo.Constraint(range(2), rule=lambda m, i: sum(m.x[i, j] for j in range(4))
                                >= demand[i])
        m.o = pyo.Objective(expr=sum(fixed[j] * m.y[j] for j in range(4))
                            + sum(unit[i][j] * m.x[i, j] for i in range(2) for j in range(4)))
        rows = [m.x[i, j] <= 1e9 * m.y[j] for i in range(2) for j in range(4)]
        rows += [sum(m.x[i, j] for i in range(2)) <= capacity[j] * m.y[j] for j in range(4)]
        if not lazy:
            m.rows = pyo.ConstraintList()
            for row in rows:
                m.rows.add(row)
        return m, rows

    written, _ = build(False)
    m, rows = build(True)
    result = solve(m, solver="scip", plugins=[LazyConstraints(lambda s: rows,
                                                              fractional=True)])
    assert result.objective == pytest.approx(solve(written, solver="scip").objective)
    assert result.objective == pytest.approx(302.0) and "cuts_off" in result.extra


def test_scip_retries_only_for_lazy_rows_its_tolerance_cannot_judge() -> None:
    _, result = _lazy_capacity((1_000_000, 1_000_001), 2_000_000, "scip", lazy=True)
    assert result.extra["feastol"] < 1e-7 and result.extra["runs"] == 2
    _, small = _lazy_capacity((1_000, 1_001), 2_000, "scip", lazy=True)
    assert small.objective == 1.0 and "feastol" not in small.extra


def test_highs_rounds_add_a_lazy_row_missed_by_half_near_1e6() -> None:
    """Judged relative to the side, x = 1000000.5 met x <= 1e6."""
    from coplug.plugins import LazyConstraints

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1_000_000.5))
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    result = solve(m, solver="highs", plugins=[LazyConstraints(lambda s: [m.x <= 1e6])])
    assert result.objective == pytest.approx(1e6, abs=1e-9) and m.x.value <= 1e6 + 1e-9
    assert result.extra["lazy_rounds"] == 2


def _one_player(utility, upper: float = 10.0, start: float = 1.0):
    """A game of one player a with x in [0, upper], x = start, and `utility(a)`."""
    from coplug.formulations.games import Game

    game = Game("g")
    a = game.add_player("a")
    a.x = pyo.Var(bounds=(0, upper), initialize=start)
    a.p = pyo.Param(initialize=float("nan"), mutable=True, within=pyo.Any)
    a.utility = pyo.Expression(expr=utility(a))
    return game


@pytest.mark.parametrize("utility", [lambda a: -(a.x - a.p) ** 2, lambda a: a.p * a.x])
def test_a_nan_utility_is_refused_not_converged(utility) -> None:
    """sympy folded the NaN utility to the constant nan, whose gradient is 0: 'converged'
    after one iteration at utility nan."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent

    with pytest.raises(InputError, match="utility of player 'a' is NaN"):
        barrier_gradient_ascent(_one_player(utility))


def test_a_utility_undefined_at_the_profile_is_named() -> None:
    """log(x - 2) at x = 1: a 12-frame 'math domain error' from certify, and an ascent
    standing still for all of max_iter."""
    from coplug.formulations.game_solvers import barrier_gradient_ascent, certify

    game = _one_player(lambda a: pyo.log(a.x - 2))
    with pytest.raises(InputError, match="utility of player 'a' is undefined at the profile"):
        certify(game)
    with pytest.raises(InputError, match="not finite at the start profile"):
        barrier_gradient_ascent(game, max_iter=100)
    game.set_profile({"a": [5.0]})
    assert certify(game).gaps["a"] == pytest.approx(math.log(8) - math.log(3), abs=1e-6)


def test_nan_bounds_and_sides_of_a_game_are_input_errors() -> None:
    from coplug.formulations.game_solvers import barrier_gradient_ascent, certify

    game = _one_player(lambda a: -(a.x - 3) ** 2, upper=float("nan"))
    for call in (certify, barrier_gradient_ascent):
        with pytest.raises(InputError, match="non-finite upper bound"):
            call(game)
    game = _one_player(lambda a: -(a.x - 3) ** 2)
    game.model.cap = pyo.Constraint(expr=game.model.a.x <= game.model.a.p)
    for call in (certify, barrier_gradient_ascent):
        with pytest.raises(InputError, match="'cap'.*non-finite upper bound"):
            call(game)


def test_a_qubo_variable_in_no_term_reads_as_zero_after_a_solve() -> None:
    """An item of value and weight 0 is in no term of the naive QUBO: the solve gave it no
    value, and from_pyomo said 'solve it first' of a model solved to optimality."""
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_naive

    qubo = knapsack_qubo_naive(KnapsackInstance([0, 5], [0, 1], 1))
    model = qubo.to_pyomo()
    with pytest.raises(InputError, match="solve it first"):
        qubo.from_pyomo(model)
    result = solve(model, solver="scip")
    point = qubo.from_pyomo(model)
    assert point[0] == 0.0 and qubo.energy(point) == pytest.approx(result.objective)


@pytest.mark.parametrize("fractional", [True, False])
def test_benders_on_data_near_1e5_matches_the_extensive_form(fractional: bool) -> None:
    """Capacities, demands and unit costs 1e5 times the generator's: Benders cuts with
    coefficients near 1e12 led SCIP's cutting planes to call the master infeasible (its
    optimum is 4.9e11). Such a verdict is checked by a solve without them."""
    import dataclasses

    from coplug.formulations.facility import (
        benders_models,
        extensive_model,
        random_facility_instance,
    )
    from coplug.plugins import LazyConstraints
    from coplug.plugins.benders import BendersCuts

    inst = random_facility_instance(facilities=4, customers=6, scenarios=3, seed=0)
    fields = {f.name: getattr(inst, f.name) for f in dataclasses.fields(inst)}
    for key in ("capacity", "demand", "cost"):
        fields[key] = fields[key] * 1e5
    inst = type(inst)(**fields)
    whole = solve(extensive_model(inst), solver="highs")
    master, subproblems = benders_models(inst)
    result = solve(master, solver="scip",
                   plugins=[LazyConstraints(BendersCuts(subproblems), fractional=fractional)])
    assert result.status.value == "optimal"
    assert result.objective == pytest.approx(whole.objective, rel=1e-6)


def test_lazy_rows_with_huge_coefficients_reach_scip_divided() -> None:
    """One of these rows lazy (the others written) took SCIP 11 s over 2 nodes: SoPlex on
    rows near 1e10, which the model's own rows escape by `row_scaling`. Lazy rows are now
    divided the same way; the verdict stays the written model's."""
    import time

    from coplug.plugins import LazyConstraints

    rows = [([3, 1], [8748508343.5, 8079845351.0], None, 11675327512),
            ([3, 0], [-41899571036.20034, 20796796998.789207], None, 35371493127),
            ([1, 4, 2, 0], [-4444348042, 1501825834, 2526407627, -2041016406],
             -11946147103, -11946147103),
            ([0], [55917921755.13545], None, -33742487747)]

    def build(lazy: int) -> tuple[pyo.ConcreteModel, list]:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(5), domain=pyo.Integers, bounds=(-2, 2))
        m.r = pyo.ConstraintList()
        m.o = pyo.Objective(expr=-3 * m.x[0] + 3 * m.x[1] + 2 * m.x[2] + 7 * m.x[3] - m.x[4])

        def expr(cols, coefs, lower, upper):
            body = sum(a * m.x[j] for j, a in zip(cols, coefs, strict=True))
            if lower is not None:
                return body == lower if lower == upper else body >= lower
            return body <= upper

        for k, row in enumerate(rows):
            if k != lazy:
                m.r.add(expr(*row))
        return m, [expr(*rows[lazy])] if lazy >= 0 else []

    written, _ = build(-1)
    m, hidden = build(2)
    start = time.perf_counter()
    result = solve(m, solver="scip", plugins=[LazyConstraints(lambda s: hidden)])
    assert time.perf_counter() - start < 4.0
    assert result.status is solve(written, solver="scip").status


@pytest.mark.parametrize("text, dim", [
    ("x[0] ** 2 + 0.0 ** ((x[0] - 0.3) ** 2 - 1e-6)", 1),  # a constant base of 0
    ("x[0] ** 2 + (1.0 - 1.0) ** ((x[0] - 0.3) ** 2 - 1e-6)", 1),  # the same, unfolded
    ("abs(x[0] - 0.3) ** (0.0 * x[1] - 1e-10)", 2),  # an exponent in (-1e-9, 0)
])
def test_bbo_programs_with_a_pole_behind_a_power_are_refused(text: str, dim: int) -> None:
    """Each is infinite near x[0] = 0.3 and loaded as valid: a constant base was never
    checked, and an exponent down to -1e-9 counted as non-negative."""
    import numpy as np

    from coplug.formulations.bbo import ProgramError, load, numpy_evaluator
    from coplug.formulations.bbo.grammar import parse

    with np.errstate(all="ignore"):
        values = numpy_evaluator(parse(text, dim))(np.array([[0.3] + [0.0] * (dim - 1)]))
    assert not np.isfinite(values).all()
    with pytest.raises(ProgramError, match="denominator"):
        load(text, dim)


def test_bbo_exponents_reaching_exactly_zero_still_load() -> None:
    """x / 5 + 1 on [-5, 5] reaches 0 at a bound: outward rounding puts its interval a few
    ulps below 0, and 0 ** 0 = 1 is no pole."""
    from coplug.formulations.bbo import load

    assert load("abs(x[0]) ** (x[0] / 5 + 1)", 1).dim == 1


@pytest.mark.parametrize("limit", [float("inf"), 1e20])
def test_scip_takes_an_infinite_memory_limit_as_no_limit(limit: float) -> None:
    """SCIP's memory limit tops out at 8796093022207 MB, its own 'no limit': inf was refused
    where every other real limit takes it."""
    m = _two_objectives(0.0)
    m.value.deactivate()
    assert solve(m, solver="scip", **{"limits/memory": limit}).status.value == "optimal"


def test_highs_takes_a_quadratic_objective_whose_param_is_zero() -> None:
    """`p * ((x - y)**2 + x*x) - 2y` at p = 0 is linear: Pyomo's degree said 1, so it was
    not folded, and Pyomo's HiGHS interface refused it as "degree None". A constraint that
    is linear only at its Params' values is named."""
    from coplug.plugins import UnsupportedModelError

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 5))
    m.y = pyo.Var(bounds=(0, 5))
    m.p = pyo.Param(initialize=0.0, mutable=True)
    m.o = pyo.Objective(expr=m.p * ((m.x - m.y) ** 2 + m.x * m.x) - 2 * m.y)
    assert solve(m, solver="highs").objective == pytest.approx(-10.0)
    assert m.x.value is not None  # in the zeroed-out terms only: still a column
    m.c = pyo.Constraint(expr=m.p * m.x * m.x + m.x <= 3)
    with pytest.raises(UnsupportedModelError, match="constraint 'c': it is nonlinear as written"):
        solve(m, solver="highs")
    assert solve(m, solver="scip").objective == pytest.approx(-10.0)


def _no_integer_point() -> pyo.ConcreteModel:
    """One row with no integer point (its left side is a multiple of 1e9, its right side
    is not): HiGHS stops on it with "Solve error", SCIP decides it at once."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Integers, bounds=(-10, 10))
    m.c = pyo.Constraint(expr=2e9 * m.x[0] + 1e9 * m.x[1] - 5e9 * m.x[2] - 1e9 * m.x[5]
                         == 11000000001)
    m.o = pyo.Objective(expr=0)
    return m


def test_a_check_highs_stops_on_goes_to_scip(tmp_path) -> None:
    """HiGHS's "Solve error" on the row ended both explanations with a SolverError."""
    from coplug.plugins import explain_infeasible, explain_infeasible_file

    found = explain_infeasible(_no_integer_point())
    assert [con.name for con in found.constraints] == ["c"] and found.irreducible
    path = tmp_path / "row.mps"
    _no_integer_point().write(str(path), io_options={"symbolic_solver_labels": True})
    assert explain_infeasible_file(path).rows == ["c_e_c_"]


def test_a_file_whose_feasibility_stays_undecided_is_named_within_the_limit(tmp_path) -> None:
    """A 4 x 34 market split: the checks took 10 s each whatever the time limit, and the
    undecided verdict went on as 'infeasible' to a SolverError naming SCIP's own rows."""
    import random
    import time

    from coplug.plugins import SolverError, explain_infeasible_file

    rng = random.Random(1)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(34), domain=pyo.Binary)
    m.c = pyo.ConstraintList()
    for _ in range(4):
        a = [rng.randint(0, 99) for _ in range(34)]
        m.c.add(sum(a[j] * m.x[j] for j in range(34)) == sum(a) // 2)
    m.o = pyo.Objective(expr=0)
    path = tmp_path / "split.mps"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    start = time.perf_counter()
    with pytest.raises(SolverError, match="decided within 0.5 s whether split.mps is feasible"):
        explain_infeasible_file(path, time_limit=0.5)
    assert time.perf_counter() - start < 5.0


def test_ctrl_c_in_a_file_check_is_an_interrupt() -> None:
    """Ctrl-C while HiGHS decided a check read as its "Solve error": a SolverError, exit 2."""
    import os
    import signal

    from coplug.plugins.iis_file import _Highs

    cancelled: list[bool] = []

    class PressedDuringRun:
        HandleUserInterrupt = True

        def setOptionValue(self, name: str, value: object) -> None:
            pass

        def clearSolver(self) -> None:
            pass

        def cancelSolve(self) -> None:
            cancelled.append(True)

        def run(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)

    checks = _Highs.__new__(_Highs)
    checks.highs = PressedDuringRun()
    with pytest.raises(KeyboardInterrupt):
        checks.infeasible()
    assert cancelled == [True]


def test_infeasibilities_leave_out_a_deactivated_blocks_own_variables() -> None:
    """A stale 0.5 on an integer of a switched-off block was reported after an optimal
    solve, whose solver never saw it; one that an active row uses still counts."""
    from coplug.plugins.feasibility import infeasibilities

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.cap = pyo.Constraint(expr=m.x <= 3)
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.alt = pyo.Block()
    m.alt.k = pyo.Var(domain=pyo.Integers, bounds=(0, 1))
    m.alt.k.set_value(0.5, skip_validation=True)
    m.alt.deactivate()
    solve(m)
    assert infeasibilities(m) == {}
    m.uses = pyo.Constraint(expr=m.alt.k <= 1)
    assert infeasibilities(m) == {"alt.k": pytest.approx(0.5)}


@pytest.mark.parametrize("kind, optimum", [("square", 1.0), ("row", 0.75)])
def test_a_zero_coefficient_inside_a_power_on_a_fresh_model(kind: str, optimum: float,
                                                            capfd) -> None:
    """Pyomo's walk evaluates `0*x` inside a power and needs x's value: SCIP's objective
    setup raised a raw ValueError on `(0*x)**2 + y`. SCIP now solves it quietly; HiGHS,
    whose build walks such a row too, says why it cannot."""
    from coplug.plugins import UnsupportedModelError

    def model() -> pyo.ConcreteModel:
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(0, 1))
        m.y = pyo.Var(bounds=(0 if kind == "row" else 1, 2))
        if kind == "square":
            m.o = pyo.Objective(expr=(0 * m.x) ** 2 + m.y)
        else:
            m.c = pyo.Constraint(expr=(0 * m.x + 0.5) ** 2 + m.y >= 1)
            m.o = pyo.Objective(expr=m.y)
        return m

    assert solve(model(), solver="scip").objective == pytest.approx(optimum)
    assert "ERROR" not in capfd.readouterr().err
    if kind != "square":
        with pytest.raises(UnsupportedModelError, match="give the variables values first"):
            solve(model(), solver="highs")


def test_tsp_by_rounds_is_exact_with_highs() -> None:
    """Each round ran HiGHS at its default relative gap of 1e-4: on 8 cities near 1e6 the
    tour came back 206 over the optimum."""
    import itertools

    import numpy as np

    from coplug.formulations.tsp import solve_tsp_rounds, tour_length

    rng = np.random.default_rng(0)
    d = 1e6 + rng.integers(0, 100, (8, 8)).astype(float)
    np.fill_diagonal(d, 0)
    best = min(tour_length(d, (0, *p)) for p in itertools.permutations(range(1, 8)))
    assert tour_length(d, solve_tsp_rounds(d)) == best


def test_the_lap_heuristic_takes_no_block_whose_missing_pairs_repeat_a_row() -> None:
    """Missing (0, 0), (1, 1), (1, 2): row 1 twice, row 2 never, so one partner stayed
    uninitialised memory and the heuristic failed with an index out of bounds."""
    import numpy as np

    from coplug.plugins.lap.heuristic import Block, _missing_diagonal

    block = Block(n=3, m=3, rows=np.array([0, 0, 1, 2, 2, 2]),
                  cols=np.array([1, 2, 0, 0, 1, 2]), costs=np.zeros(6), vars=[None] * 6)
    assert _missing_diagonal(block) is None
    diagonal = Block(n=3, m=3, rows=np.array([0, 0, 1, 1, 2, 2]),
                     cols=np.array([1, 2, 0, 2, 0, 1]), costs=np.zeros(6), vars=[None] * 6)
    assert _missing_diagonal(diagonal).tolist() == [0, 1, 2]


def test_progress_and_the_cli_run_without_stderr(monkeypatch, tmp_path) -> None:
    """With no stderr (pythonw, `2>&-`) Progress crashed in tqdm, and `coplug solve` exited
    1 printing nothing."""
    import subprocess
    import sys

    from coplug.plugins import Progress

    m = _two_objectives(0.0)
    m.value.deactivate()
    monkeypatch.setattr(sys, "stderr", None)
    assert solve(m, solver="scip", plugins=[Progress()]).status.value == "optimal"
    monkeypatch.undo()
    path = tmp_path / "t.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n c1: x >= 2\nEnd\n")
    done = subprocess.run(f"{sys.executable} -m coplug.plugins.cli solve {path} 2>&-",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "optimal" in done.stdout


def test_scip_refuses_a_memory_limit_of_minus_infinity() -> None:
    from coplug.plugins import InputError

    m = _two_objectives(0.0)
    m.value.deactivate()
    with pytest.raises(InputError, match="limits/memory"):
        solve(m, solver="scip", **{"limits/memory": float("-inf")})


def test_infeasibilities_count_a_variable_the_objective_uses() -> None:
    from coplug.plugins.feasibility import infeasibilities

    m = pyo.ConcreteModel()
    m.alt = pyo.Block()
    m.alt.k = pyo.Var(domain=pyo.Integers, bounds=(0, 1))
    m.alt.k.set_value(0.5, skip_validation=True)
    m.alt.deactivate()
    m.o = pyo.Objective(expr=m.alt.k)
    assert infeasibilities(m) == {"alt.k": pytest.approx(0.5)}


def test_a_check_scip_errs_on_keeps_its_member() -> None:
    """HiGHS stopped on a check with "Solve error" and SCIP with "error in LP solver": the
    explanation ended with a SolverError instead of keeping the member."""
    from coplug.plugins import explain_infeasible

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5))
    x = m.x
    x[0].setub(-2)
    x[1].domain = pyo.Integers
    x[1].setlb(-3)
    x[1].setub(4)
    x[2].setlb(5)
    x[3].setlb(0)
    x[3].setub(1)
    m.c0 = pyo.Constraint(expr=0.5 * x[3] + 3e9 * x[0] - 3e9 * x[2] == 10000000001.0)
    m.c1 = pyo.Constraint(expr=1e9 * x[0] - 3e9 * x[3] - 2e9 * x[4] + x[2] + 1e9 * x[1]
                          == 16000000001.0)
    m.c2 = pyo.Constraint(expr=-3e9 * x[0] + 1e9 * x[4] - 3 * x[1] == 16000000000.0)
    m.o = pyo.Objective(expr=sum(x.values()))
    found = explain_infeasible(m, time_limit=5)
    assert found.constraints or found.bounds


def test_a_file_iis_leaves_out_scips_own_rows(tmp_path) -> None:
    """With a quadratic objective SCIP's subsystem held its objective row 'qmatrix', which
    is no row of the file: "names rows HiGHS does not read"."""
    from coplug.plugins import explain_infeasible_file

    m = _no_integer_point()
    m.d = pyo.Constraint(expr=m.x[3] + m.x[4] <= 5)
    m.o.set_value(m.x[3] + m.x[4] ** 2)
    path = tmp_path / "miqp.mps"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    assert explain_infeasible_file(path).rows == ["c_e_c_"]


def test_explain_infeasible_asks_highs_where_scip_leaves_feasibility_open() -> None:
    """3e9 x0 + 3000000001 x1 >= 6000000002 over binaries: SCIP's answer, refused by the
    exact row check, left the status `unknown`, and the explanation gave up even at 60 s;
    HiGHS decides the model at once."""
    from coplug.plugins import explain_infeasible

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=3e9 * m.x[0] + 3000000001 * m.x[1] >= 6000000002)
    m.o = pyo.Objective(expr=0)
    assert [con.name for con in explain_infeasible(m).constraints] == ["c"]
