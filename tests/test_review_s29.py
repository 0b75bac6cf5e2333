"""Session 29 review: k_best on a model unbounded along a ray, the factories' duals over no
rows, SCIP's nonlinear objectives and objective scaling, LAP's variables
of zero coefficients, and HiGHS's QP certificates."""

import warnings

import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, Status, k_best, solve


def _unbounded_on_rows(z_upper: float | None = None) -> pyo.ConcreteModel:
    """On its rows the objective is -3 x1 - 2.4 - 3 z, and z has no upper bound: unbounded
    for each of the three feasible binary assignments (a fuzzing seed of a probe)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.y = pyo.Var()
    m.z = pyo.Var(bounds=(-1, z_upper))
    m.r1 = pyo.Constraint(expr=3 * m.x[0] - 3 * m.x[1] + 3 * m.y + 3 * m.z == -7.2)
    m.r2 = pyo.Constraint(expr=3 * m.x[0] + 3 * m.x[1] + 3 * m.y <= 1)
    m.r3 = pyo.Constraint(expr=-2 * m.x[0] + 3 * m.x[1] + 3 * m.y + 3 * m.z <= -5)
    m.r4 = pyo.Constraint(expr=-3 * m.x[0] - m.x[1] - m.z <= -3)
    m.obj = pyo.Objective(expr=m.x[0] - 4 * m.x[1] + m.y - 2 * m.z)
    return m


def test_the_model_is_unbounded_to_a_plain_solve() -> None:
    assert solve(_unbounded_on_rows(), solver="scip").status is Status.UNBOUNDED


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_k_best_refuses_a_model_unbounded_along_a_ray(solver: str) -> None:
    # SCIP's search had ended "infeasible" (every assignment cut off) and returned objectives
    # -300002.4, -5.4, -2.4 as the proven 3 best
    with pytest.raises(InputError, match="unbounded"):
        k_best(_unbounded_on_rows(), 4, solver=solver)


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_k_best_with_the_ray_bounded_ranks_the_assignments(solver: str) -> None:
    found = k_best(_unbounded_on_rows(z_upper=10), 4, solver=solver)
    assert found.proven
    objectives = [s.objective for s in found.solutions]
    assert objectives == sorted(objectives)
    best = solve(_unbounded_on_rows(z_upper=10), solver="scip")
    assert objectives[0] == pytest.approx(best.objective, abs=1e-6)



def _lp_with_bounds_alone() -> pyo.ConcreteModel:
    """An LP whose one row is deactivated, with the dual and rc Suffixes declared."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, 9))
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.c.deactivate()
    m.o = pyo.Objective(expr=0.5 * m.x, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


@pytest.mark.parametrize("name", ["coplug_highs", "coplug_scip"])
def test_factory_duals_of_an_lp_without_rows_are_empty_not_missing(name: str) -> None:
    from pyomo.contrib.solver.common.factory import SolverFactory

    m = _lp_with_bounds_alone()
    loader = SolverFactory(name).solve(m).solution_loader
    assert loader.get_duals() == {}  # raised NoDualsError: "the solve gave none"
    reduced = loader.get_reduced_costs()
    assert reduced[m.x] == pytest.approx(0.5)  # at its upper bound, maximizing 0.5 x


def test_legacy_factory_loads_a_solution_of_an_lp_without_rows() -> None:
    m = _lp_with_bounds_alone()
    results = pyo.SolverFactory("coplug_highs").solve(m, load_solutions=False)
    assert m.x.value is None
    m.solutions.load_from(results)  # raised NoDualsError
    assert m.x.value == pytest.approx(9.0)


def test_scip_unbounded_linear_part_beside_a_bounded_square() -> None:
    # the linear part sat in Pyomo's epigraph row: SCIP branched on the free epigraph
    # variable to any time limit ('time_limit', objective -299991 after 5 s)
    m = _square_beside_a_line((None, None))
    assert solve(m, solver="scip", time_limit=30).status is Status.UNBOUNDED


def _square_beside_a_line(y_bounds: tuple[float | None, float | None]) -> pyo.ConcreteModel:
    """min 3 y + 2 x**2 + 7 over x in [-1, 1]."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 1))
    m.y = pyo.Var(bounds=y_bounds)
    m.o = pyo.Objective(expr=3 * m.y + 2 * m.x ** 2 + 7)
    return m


def test_scip_nonlinear_objective_start_sets_the_epigraph_of_its_nonlinear_part() -> None:
    # the epigraph variable bounds 2 x**2 alone now: a start valuing it at the whole
    # objective (-8) would violate its row and be refused
    m = _square_beside_a_line((-5, 5))
    best = solve(m, solver="scip")
    assert best.status is Status.OPTIMAL and best.objective == pytest.approx(-8, abs=1e-6)
    again = solve(m, solver="scip", warmstart=True)
    assert again.extra["warmstart"]["accepted"] is True
    assert again.objective == pytest.approx(-8, abs=1e-6)


def test_scip_keeps_a_linear_term_of_the_nonlinear_part_in_its_row() -> None:
    # (x - y)**2 + x + z: z's term leaves the epigraph row; with x's out too SCIP ran to its
    # time limit; inside it SCIP ends at a point the nonlinear checks call unbounded
    m = pyo.ConcreteModel()
    m.x, m.y, m.z = pyo.Var(), pyo.Var(), pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=(m.x - m.y) ** 2 + m.x + m.z)
    with pytest.warns(UserWarning, match="unbounded"):
        assert solve(m, solver="scip", time_limit=60).status is Status.UNBOUNDED


def _assignment_with_an_idle_variable(bounds: tuple[float, float],
                                      domain=pyo.Reals) -> pyo.ConcreteModel:
    """A 3x3 assignment with z in the objective and a row at coefficient 0 only."""
    costs = [[4, 1, 3], [2, 0, 5], [3, 2, 2]]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), range(3), domain=pyo.Binary)
    m.z = pyo.Var(bounds=bounds, domain=domain)
    m.o = pyo.Objective(expr=sum(costs[i][j] * m.x[i, j] for i in range(3) for j in range(3))
                        + 0 * m.z)
    m.r = pyo.Constraint(range(3), rule=lambda m, i: sum(m.x[i, j] for j in range(3))
                         + 0 * m.z == 1)
    m.k = pyo.Constraint(range(3), rule=lambda m, j: sum(m.x[i, j] for i in range(3)) == 1)
    return m


@pytest.mark.parametrize("bounds,domain", [((0, 1), pyo.Reals), ((2.5, 7), pyo.Integers),
                                           ((-3, -1), pyo.Reals)])
def test_lap_gives_a_zero_coefficient_variable_a_value(bounds, domain) -> None:
    # z had no value after an optimal LAP solve: value(m.o) raised, infeasibilities named
    # every row
    from coplug.plugins import infeasibilities

    m = _assignment_with_an_idle_variable(bounds, domain)
    result = solve(m, solver="lap")
    reference = solve(_assignment_with_an_idle_variable(bounds, domain), solver="scip")
    assert result.status is Status.OPTIMAL
    assert pyo.value(m.o) == pytest.approx(reference.objective)
    assert infeasibilities(m) == {}
    assert m.z.lb <= m.z.value <= m.z.ub


def test_lap_calls_an_idle_variable_without_a_value_infeasible() -> None:
    m = _assignment_with_an_idle_variable((2.2, 2.7), pyo.Integers)
    assert solve(m, solver="lap").status is Status.INFEASIBLE
    reference = _assignment_with_an_idle_variable((2.2, 2.7), pyo.Integers)
    assert solve(reference, solver="scip").status is Status.INFEASIBLE


def test_lap_ranking_holds_the_idle_variable() -> None:
    m = _assignment_with_an_idle_variable((0.5, 3))
    ranked = k_best(m, 3, solver="lap")
    assert [s[m.z] for s in ranked.solutions] == [0.5, 0.5, 0.5]
    assert ranked.solutions[0].objective == pytest.approx(5.0)


_HUNG_SCIP = """
import pyomo.environ as pyo
from coplug.plugins import solve
costs = [[2.0**62, 0.5, 3], [2, 0, 5], [3, 2, 2]]
m = pyo.ConcreteModel()
m.x = pyo.Var(range(3), range(3), domain=pyo.Binary)
m.o = pyo.Objective(expr=sum(costs[i][j] * m.x[i, j] for i in range(3) for j in range(3)))
m.r = pyo.Constraint(range(3), rule=lambda m, i: sum(m.x[i, j] for j in range(3)) == 1)
m.k = pyo.Constraint(range(3), rule=lambda m, j: sum(m.x[i, j] for i in range(3)) == 1)
result = solve(m, solver="scip", time_limit=20)
print(result.status.value, result.objective, result.extra.get("objective_scaling"))
"""


def test_scip_objective_scaling_that_meets_2_to_the_63_is_turned_off() -> None:
    # 2**62 beside 0.5: SCIP's objective scaling (by 2) met 2**63 and SCIP never returned,
    # past its own time limit; run apart so that a regression fails instead of hanging
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _HUNG_SCIP], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == ["optimal", "4.5", "off"], done.stderr[-2000:]


def _priced_assignment(top: float) -> pyo.ConcreteModel:
    costs = [[top, 1, 3], [2, 0, 5], [3, 2, 2]]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), range(3), domain=pyo.Binary)
    m.o = pyo.Objective(expr=sum(costs[i][j] * m.x[i, j] for i in range(3) for j in range(3)))
    m.r = pyo.Constraint(range(3), rule=lambda m, i: sum(m.x[i, j] for j in range(3)) == 1)
    m.k = pyo.Constraint(range(3), rule=lambda m, j: sum(m.x[i, j] for i in range(3)) == 1)
    return m


def test_scip_objective_scaling_stays_below_the_risk_and_where_the_caller_set_it() -> None:
    from coplug.plugins.objective_scaling import SCALE_RISK

    assert solve(_priced_assignment(SCALE_RISK), solver="scip").extra == {
        "objective_scaling": "off"}
    assert "objective_scaling" not in solve(_priced_assignment(SCALE_RISK / 2),
                                            solver="scip").extra
    kept = solve(_priced_assignment(SCALE_RISK), solver="scip", **{"misc/scaleobj": True})
    assert kept.status is Status.OPTIMAL and "objective_scaling" not in kept.extra


def _qp_with_a_loose_dual() -> pyo.ConcreteModel:
    """A convex QP (0.5 (B.x)**2 plus a linear part) whose HiGHS duals leave x[3], free
    above, a reduced cost of -2.1e-6 (a probe's seed)."""
    bounds = [(-6, 6), (-1, 2), (-3, 4), (-1, None), (-5, 1), (-4, 5)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), bounds=lambda m, j: bounds[j])
    x = m.x
    m.r0 = pyo.Constraint(expr=5 * x[0] + 2 * x[1] + 5 * x[4] - 2 >= 2)
    m.r1 = pyo.Constraint(expr=x[1] - x[3] + 1 <= 2)
    m.r2 = pyo.Constraint(expr=-x[0] + 0.5 * x[1] + 2 * x[2] - x[3] + 3 * x[4] >= -13)
    u = x[0] + 2 * x[1] - 2 * x[2] + 2 * x[4] + x[5]
    m.o = pyo.Objective(expr=2 * x[0] + 4 * x[1] + x[2] - x[3] - 2 * x[4] - 3 * x[5] + 2.5
                        + 0.5 * u * u)
    return m


def test_highs_qp_optimum_is_certified_by_the_duals_of_its_gradient_lp() -> None:
    # HiGHS's own duals gave an infinite gap: 'feasible', no bound, for the true optimum
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        highs = solve(_qp_with_a_loose_dual(), solver="highs")
    scip = solve(_qp_with_a_loose_dual(), solver="scip")
    assert highs.status is Status.OPTIMAL and "duality_gap" not in highs.extra
    assert highs.objective == pytest.approx(scip.objective, abs=1e-5)
    assert highs.bound == pytest.approx(highs.objective)


def test_highs_unbounded_qp_called_optimal_stays_refused() -> None:
    # the gradient LP of HiGHS's point is unbounded: no duals to certify it with, and a ray
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(), pyo.Var()
    m.o = pyo.Objective(expr=(0.01 * m.x - m.y) ** 2 + 0.01 * m.x)
    with pytest.warns(UserWarning, match="without bound"):
        assert solve(m, solver="highs").status is Status.UNBOUNDED


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_k_best_keeps_a_point_past_the_rounds_box(solver: str) -> None:
    # y = 1e10 lies past the +-1e9 box HiGHS's unbounded rounds use, and was taken for a
    # ray on any solve: SCIP's 3 best came back as [-99998] unproven, HiGHS's as []
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.y <= 1e10 * m.x[0])
    m.c2 = pyo.Constraint(expr=m.x[0] + m.x[1] >= 1)
    m.o = pyo.Objective(expr=m.x[0] + m.x[1] - m.y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SCIP's huge row: solved without its cuts
        found = k_best(m, 3, solver=solver)
    assert found.proven
    assert [s.objective for s in found.solutions] == pytest.approx(
        [-9999999999.0, -9999999998.0, 1.0])


def _quadratic_knapsack() -> pyo.ConcreteModel:
    """30 items, capacity 61, value less a small square of the count (a nonlinear
    objective: SCIP holds it by an epigraph variable)."""
    weights = [3 + (7 * i) % 10 for i in range(30)]
    values = [5 + (5 * i) % 9 for i in range(30)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(30), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(weights[i] * m.x[i] for i in range(30)) <= 61)
    m.o = pyo.Objective(expr=-sum(values[i] * m.x[i] for i in range(30))
                        + 0.01 * (sum(m.x.values()) - 6.5) ** 2)
    return m


def test_user_heuristic_proposal_is_kept_beside_a_nonlinear_objective() -> None:
    # the epigraph variable kept the LP's value, so SCIP found every proposal infeasible:
    # the optimum itself, proposed before SCIP had it, was never kept
    from coplug.plugins import UserHeuristic

    reference = _quadratic_knapsack()
    best = solve(reference, solver="scip")
    chosen = {i: round(reference.x[i].value) for i in range(30)}
    m = _quadratic_knapsack()
    heuristic = UserHeuristic(lambda lp: [(m.x[i], chosen[i]) for i in range(30)],
                              max_calls=1)
    result = solve(m, solver="scip", plugins=[heuristic], **{"presolving/maxrounds": 0,
                                                               "separating/maxroundsroot": 0})
    assert result.objective == pytest.approx(best.objective, abs=1e-6)
    assert result.plugin_stats["user_heuristic"]["accepted"] == 1


def test_user_heuristic_counts_only_proposals_that_improve() -> None:
    # a feasible point worse than the incumbent is stored by SCIP, not kept: it counted
    from coplug.plugins import OnSolution, UserHeuristic

    m = _quadratic_knapsack()
    incumbents, improving = [], []

    def one_item(lp) -> list:
        """Item 7 alone: feasible, worth about -4.7 (the optimum is -119.7)."""
        worth = -(5 + (5 * 7) % 9) + 0.01 * (1 - 6.5) ** 2
        improving.append(not incumbents or worth < incumbents[-1] - 1e-9)
        return [(m.x[i], int(i == 7)) for i in range(30)]

    result = solve(m, solver="scip", plugins=[
        OnSolution(lambda solution, objective: incumbents.append(objective)),
        UserHeuristic(one_item, max_calls=1)])
    stats = result.plugin_stats["user_heuristic"]
    assert stats["proposed"] == 1 and improving == [False]  # SCIP had better by then
    assert stats["accepted"] == 0


def test_two_progress_plugins_are_named_not_a_pyscipopt_error() -> None:
    import io

    from coplug.plugins import Progress

    with pytest.raises(InputError, match="a name of its own"):
        solve(_quadratic_knapsack(), solver="scip",
              plugins=[Progress(file=io.StringIO()), Progress(file=io.StringIO())])


def test_scip_at_a_callers_loose_tolerance_judges_every_integer_row() -> None:
    # x - y == 0.0005 over binaries has no point; at numerics/feastol 1e-3 SCIP took
    # x = y = 0 and coplug called it optimal (HiGHS's rows were judged: 'unknown')
    m = pyo.ConcreteModel()
    m.x, m.y = pyo.Var(domain=pyo.Binary), pyo.Var(domain=pyo.Binary)
    m.c1 = pyo.Constraint(expr=m.x - m.y == 0.0005)
    m.o = pyo.Objective(expr=m.x + m.y)
    with pytest.warns(UserWarning, match="'c1'"):
        result = solve(m, solver="scip", **{"numerics/feastol": 1e-3})
    assert result.status is Status.UNKNOWN
    assert result.extra["violated_rows"] == {"c1": pytest.approx(0.0005)}
    assert solve(m, solver="scip").status is Status.INFEASIBLE


@pytest.mark.parametrize("argv", [["solve", "knapsack", "--json"],
                                  ["bbo", "export", "bbob:1"]])
def test_commands_run_with_stdout_closed(argv: list[str]) -> None:
    # sys.stdout is None there: --json's flush and export's write raised AttributeError
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "coplug.plugins.cli", *argv],
                          stderr=subprocess.PIPE, text=True, timeout=120,
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
