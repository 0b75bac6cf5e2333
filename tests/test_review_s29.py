"""Session 29 review: k_best on an unbounded model with a ray SCIP's search never reports."""

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
