"""Session 30 review: timedelta64 cost matrices (NaT) and generator noise past overflow."""

import numpy as np
import pytest

from coplug.formulations.assignment import gated
from coplug.plugins import InputError
from coplug.plugins.lap import ranked_assignments, solve_lap


def _with_nat() -> np.ndarray:
    return np.array([[np.timedelta64("NaT"), 1, 3], [1, 1, 2], [5, 5, 5]], "m8[s]")


def test_nat_in_a_timedelta_matrix_is_refused_by_position() -> None:
    # cast to float NaT became -2**63, and the pair (0, 0) was assigned at cost -9.2e18
    with pytest.raises(InputError, match=r"cost\[0, 0\] is NaT"):
        solve_lap(_with_nat())
    with pytest.raises(InputError, match=r"cost\[0, 0\] is NaT"):
        ranked_assignments(_with_nat(), k=2)


def test_timedelta_costs_are_counts_of_their_unit_and_checked_as_integers() -> None:
    minutes = np.array([[4, 1, 3], [2, 0, 5], [3, 2, 2]], "m8[m]")[:, ::-1]
    assert solve_lap(minutes).cost == solve_lap(minutes.astype(np.int64)).cost == 5
    big = np.array([[2**53 + 1, 0], [0, 2**53 + 1]], "m8[ns]")
    with pytest.raises(InputError, match="9007199254740993"):  # had rounded silently
        solve_lap(big, maximize=True)


def test_gated_noise_past_overflow_is_named() -> None:
    # a scipy ValueError from inside the neighbour search had been the answer
    with pytest.raises(InputError, match="noise must be a number in"):
        gated(5, noise=1e160)


def _two_player_game():
    """Two players on [0, 4] sharing x + y <= 4, both at 1."""
    import pyomo.environ as pyo

    from coplug.formulations.games import Game

    game = Game("g")
    a, b = game.add_player("a"), game.add_player("b")
    a.x = pyo.Var(bounds=(0, 4), initialize=1.0)
    b.y = pyo.Var(bounds=(0, 4), initialize=1.0)
    a.utility = pyo.Expression(expr=-((a.x - 3) ** 2))
    b.utility = pyo.Expression(expr=-((b.y - 3) ** 2))
    game.model.shared = pyo.Constraint(expr=a.x + b.y <= 4)
    return game


@pytest.mark.parametrize(
    ("profile", "message"),
    [({"a": [5.0], "b": [1.0]}, "profile is infeasible"),
     ({"a": [3.0], "b": [1.0, 2.0]}, "player 'b' has 1 variables, got 2 values")],
)
def test_a_refused_profile_leaves_the_game_as_it_was(profile: dict, message: str) -> None:
    from coplug.formulations.game_solvers import certify

    game = _two_player_game()
    with pytest.raises(InputError, match=message):
        certify(game, profile=profile)
    # a = 5 (or a = 3, half a profile) had stayed loaded
    assert {p: v.tolist() for p, v in game.profile().items()} == {"a": [1.0], "b": [1.0]}


def test_set_profile_loads_nothing_when_a_later_player_is_wrong() -> None:
    game = _two_player_game()
    with pytest.raises(InputError, match="must be numbers"):
        game.set_profile({"a": [3.0], "b": ["x"]})
    assert game.profile()["a"].tolist() == [1.0]


def _knapsack_qubo(values: list[int], weights: list[int], capacity: int):
    from coplug.formulations.knapsack import KnapsackInstance, knapsack_qubo_safe

    return knapsack_qubo_safe(KnapsackInstance(values, weights, capacity))


def test_from_pyomo_refuses_a_model_of_another_qubo() -> None:
    import pyomo.environ as pyo

    big, small = _knapsack_qubo([3, 4, 5], [1, 2, 2], 3), _knapsack_qubo([3], [1], 1)
    # the bigger model's values had been cut to the first one without a word
    with pytest.raises(InputError, match=f"has {big.n} z variables, this QUBO has 1"):
        small.from_pyomo(big.to_pyomo())
    with pytest.raises(InputError, match=f"has 1 z variables, this QUBO has {big.n}"):
        big.from_pyomo(small.to_pyomo())  # a raw KeyError
    with pytest.raises(InputError, match="has no z variables"):
        big.from_pyomo(pyo.ConcreteModel())  # a raw AttributeError


def test_a_hand_built_qubo_needs_callables() -> None:
    import numpy as np

    from coplug.formulations.qubo import QUBO

    # decode=None had run the whole descent and ended in "'NoneType' is not callable"
    with pytest.raises(InputError, match="QUBO decode must be callable, got NoneType"):
        QUBO(np.eye(2), np.zeros(2), 0.0, decode=None, is_feasible=bool, objective=sum)
    with pytest.raises(InputError, match="QUBO objective must be callable, got str"):
        QUBO(np.eye(2), np.zeros(2), 0.0, decode=list, is_feasible=bool, objective="value")


def test_a_nan_point_is_refused_not_read_as_taking_nothing() -> None:
    import numpy as np

    qubo = _knapsack_qubo([3, 4], [1, 2], 3)
    point = np.full(qubo.n, np.nan)
    for method in (qubo.solution_objective, qubo.energy, qubo.gradient):
        with pytest.raises(InputError, match="a QUBO point must be finite"):
            method(point)  # solution_objective had said 0.0 (feasible), energy NaN


def test_an_empty_qubo_file_argument_is_named(capsys: pytest.CaptureFixture) -> None:
    from coplug.plugins.cli import main

    assert main(["qubo", "knapsack", "--file", ""]) == 2
    # it said "--file  is a directory" (Path("") is the current folder)
    assert "--file is empty" in capsys.readouterr().err


def _two_modes_per_pair(n: int = 8, seed: int = 0):
    """An assignment in which every (row, column) pair has two binaries (two modes) and a
    side row makes the LP fractional: the block's pairs are each joined by two variables."""
    import pyomo.environ as pyo

    rng = np.random.default_rng(seed)
    cost = rng.integers(1, 100, (2, n, n)).astype(float)
    weight = rng.integers(1, 20, (2, n, n)).astype(float)
    keys = [(k, i, j) for k in range(2) for i in range(n) for j in range(n)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(keys, domain=pyo.Binary)
    m.row = pyo.Constraint(range(n), rule=lambda m, r: sum(m.x[k, i, j] for k, i, j in keys
                                                          if i == r) == 1)
    m.col = pyo.Constraint(range(n), rule=lambda m, c: sum(m.x[k, i, j] for k, i, j in keys
                                                          if j == c) == 1)
    m.side = pyo.Constraint(expr=sum(weight[key] * m.x[key] for key in keys)
                            <= weight.min(0).sum() / n * 0.9)
    m.obj = pyo.Objective(expr=sum(cost[key] * m.x[key] for key in keys))
    return m


def test_lap_heuristic_sets_one_variable_per_chosen_pair() -> None:
    from coplug.plugins import solve
    from coplug.plugins.lap import LapHeuristic

    heuristic = LapHeuristic()
    result = solve(_two_modes_per_pair(), plugins=[heuristic], time_limit=60,
                   **{"presolving/maxrounds": 0})
    stats = heuristic.statistics()
    # both binaries of every chosen pair had been set to 1 (two per row): the probing LP was
    # infeasible on every candidate ('cut_off' 1, 'completed' 0)
    assert stats["candidates"] >= 1 and stats["completed"] == stats["candidates"]
    assert result.objective == solve(_two_modes_per_pair(), time_limit=60).objective


def test_lap_heuristic_keeps_no_scip_variables_after_the_solve() -> None:
    from coplug.plugins import solve
    from coplug.plugins.lap import LapHeuristic

    heuristic = LapHeuristic()
    solve(_two_modes_per_pair(4), plugins=[heuristic], time_limit=60)
    # a public `blocks` held the freed model's variables; reading one crashed the interpreter
    assert not hasattr(heuristic, "blocks") and not hasattr(heuristic, "_blocks")
    heur = heuristic._heur_ref()  # the model's own heuristic, held weakly
    assert heur is None or heur.blocks == []
    assert heuristic.statistics()["blocks"] == 1


def test_lazy_rounds_on_highs_stop_at_the_time_limit() -> None:
    import time
    import warnings

    import pyomo.environ as pyo

    from coplug.plugins import LazyConstraints, Status, solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 5000))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)

    def one_step_down(values):
        return [m.x <= values[m.x] - 1] if values[m.x] > 1 else []

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = solve(m, solver="highs", plugins=[LazyConstraints(one_step_down)],
                       time_limit=0.5)
    # each round got max(left, 1e-3) s and answered "optimal": 5000 rounds, status optimal
    assert result.status is Status.TIME_LIMIT and not result.has_solution
    assert time.perf_counter() - start < 5 and result.extra["lazy_rounds"] < 5000


def test_benders_links_given_as_an_iterator_are_kept() -> None:
    import pyomo.environ as pyo

    from coplug.plugins import LazyConstraints, solve
    from coplug.plugins.benders import BendersCuts, Subproblem

    m = pyo.ConcreteModel()
    m.y = pyo.Var(range(2), domain=pyo.Binary)
    m.eta = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.y[0] + 1.5 * m.y[1] + m.eta)
    sub = pyo.ConcreteModel()
    sub.z = pyo.Var(range(2), bounds=(0, 1))
    sub.f = pyo.Var(domain=pyo.NonNegativeReals)
    sub.c = pyo.Constraint(expr=sub.f >= 3 - 2 * sub.z[0] - 2 * sub.z[1])
    sub.obj = pyo.Objective(expr=sub.f)
    # a zip was used up by the first check: "subproblem 0 has no links to the master"
    links = zip(m.y.values(), sub.z.values(), strict=True)
    cuts = BendersCuts([Subproblem(sub, links, m.eta)])
    result = solve(m, plugins=[LazyConstraints(cuts)])
    assert result.objective == pytest.approx(2.0)  # y0 = 1, eta = 1 (brute force: 2.0)
    with pytest.raises(InputError, match="links must be .* pairs, got int"):
        Subproblem(sub, 3, m.eta)


def test_a_miqp_file_on_highs_is_named(tmp_path) -> None:
    import pyomo.environ as pyo

    from coplug.plugins import UnsupportedModelError, solve, solve_file

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.y = pyo.Var(bounds=(-5, 5), domain=pyo.Integers)
    m.c = pyo.Constraint(expr=m.x + m.y >= 1.3)
    m.obj = pyo.Objective(expr=(m.x - 0.7) ** 2 + 2 * (m.y + 0.4) ** 2 + m.x * m.y + 3)
    path = tmp_path / "miqp.lp"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    # HiGHS stopped with "model status 'Not Set'", a SolverError
    with pytest.raises(UnsupportedModelError, match="MIQP"):
        solve_file(path, solver="highs")
    assert solve_file(path, solver="scip").objective == pytest.approx(
        solve(m, solver="scip").objective, abs=1e-6)


def test_a_repeated_tsplib_section_is_named(tmp_path) -> None:
    from coplug.formulations.tsp import load_tsplib

    head = "NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n"
    path = tmp_path / "twice.tsp"
    path.write_text(head + "NODE_COORD_SECTION\n1 0 0\n2 1 1\n3 2 2\n"
                    "NODE_COORD_SECTION\n1 5 5\n2 1 1\n3 2 2\nEOF\n")
    # the second section had replaced the first: d(0, 1) = 6, not 1
    with pytest.raises(InputError, match=r"twice.tsp:9: a second NODE_COORD_SECTION"):
        load_tsplib(path)


@pytest.mark.parametrize("free_variable", [False, True])
def test_highs_judges_a_row_of_fixed_variables_one_way(free_variable: bool) -> None:
    import pyomo.environ as pyo

    from coplug.plugins import Status, solve

    m = pyo.ConcreteModel()
    m.f = pyo.Var()
    m.f.fix(1e12)
    m.c = pyo.Constraint(expr=m.f <= 1e12 - 900)
    if free_variable:  # HiGHS itself then judges the row (empty, side moved by 1e12)
        m.x = pyo.Var(bounds=(0, 1))
    m.obj = pyo.Objective(expr=m.x if free_variable else m.f)
    # with no free variable, a tolerance of 1e-9 x 1e12 had called it optimal at 1e12
    assert solve(m, solver="highs").status is Status.INFEASIBLE
    m.c.set_value(m.f <= 1e12)
    assert solve(m, solver="highs").status is Status.OPTIMAL


def _negative_to_a_half(kind: str):
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    if kind == "fixed":
        m.f = pyo.Var()
        m.f.fix(-4)
        m.r = pyo.Constraint(expr=m.x + m.f**0.5 <= 3)
    else:
        m.p = pyo.Param(mutable=True, initialize=-4)
        m.r = pyo.Constraint(expr=m.x * m.p**0.5 <= 3)
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m


@pytest.mark.parametrize("solver", ["scip", "highs"])
@pytest.mark.parametrize("kind", ["fixed", "param"])
def test_a_negative_number_to_a_fractional_power_is_named(kind: str, solver: str) -> None:
    from coplug.plugins import solve

    # Python's (-4)**0.5 is complex: float() raised TypeError, Pyomo's repn AttributeError
    with pytest.raises(InputError, match="constraint 'r': .*complex number"):
        solve(_negative_to_a_half(kind), solver=solver)


def _zero_times_unvalued_in_a_power(power: int):
    """`(f x + 2)**power + y <= 12`, f fixed at 0 and x never given a value: linear in y."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 20))
    m.f = pyo.Var()
    m.f.fix(0)
    m.c = pyo.Constraint(expr=(m.f * m.x + 2) ** power + m.y <= 12)
    m.obj = pyo.Objective(expr=m.y, sense=pyo.maximize)
    return m


def test_scip_takes_a_power_of_zero_times_an_unvalued_variable() -> None:
    import warnings

    import pyomo.environ as pyo

    from coplug.plugins import solve

    # the data check expanded the cube and needed x's value: "cannot evaluate its data"
    assert solve(_zero_times_unvalued_in_a_power(3), solver="scip").objective == \
        pytest.approx(4.0, abs=1e-6)
    m = _zero_times_unvalued_in_a_power(2)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # reading the LP for its duals raised Pyomo's ValueError (no value for x)
        assert solve(m, solver="scip").objective == pytest.approx(8.0, abs=1e-6)


def test_scip_solves_a_product_hidden_in_a_linear_expression() -> None:
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.y = pyo.Var(bounds=(0, 2))
    m.c = pyo.Constraint(expr=LinearExpression([MonomialTermExpression((2, m.x)), m.x * m.y])
                         <= 1)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    # refused before, x having no value: max x + y with 2x + xy <= 1 is 2.25 (y = 2, x = 1/4)
    assert solve(m, solver="scip").objective == pytest.approx(2.25, abs=1e-5)


def test_ctrl_c_between_pareto_stages_keeps_the_points_found(monkeypatch) -> None:
    import pyomo.environ as pyo

    from coplug.plugins import Status, multiobjective, pareto_front

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=2 * m.x[0] + 3 * m.x[1] + 4 * m.x[2] + 5 * m.x[3] <= 9)
    m.value = pyo.Objective(expr=3 * m.x[0] + 4 * m.x[1] + 6 * m.x[2] + 7 * m.x[3],
                            sense=pyo.maximize)
    m.count = pyo.Objective(expr=sum(m.x.values()))
    m.count.deactivate()
    whole = pareto_front(m, m.value, m.count)
    assert whole.complete and len(whole.points) >= 3
    real, calls = multiobjective._lexicographic, []

    def interrupted_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:  # Ctrl-C landing in Python between two stages
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(multiobjective, "_lexicographic", interrupted_third)
    front = pareto_front(m, m.value, m.count)  # had raised KeyboardInterrupt, points lost
    assert front.status is Status.INTERRUPTED and not front.complete
    assert [p.values for p in front.points] == [p.values for p in whole.points[:2]]
    assert pyo.value(m.value) == front.points[-1].values[0]  # the last point is loaded
    assert not [c for c in m.component_objects() if c.name.startswith("_coplug")]


def test_ctrl_c_while_saving_rowdualnet_waits_for_both_files(tmp_path, monkeypatch) -> None:
    import os
    import signal

    from coplug.learned import rowdualnet

    model = rowdualnet.RowDualNet()
    path = tmp_path / "net.pt"
    rowdualnet.save(model, path, {"run": 1})
    real = rowdualnet.atomic_write

    def pressed_while_writing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C after the weights, before the JSON
        return real(*args, **kwargs)

    monkeypatch.setattr(rowdualnet, "atomic_write", pressed_while_writing)
    with pytest.raises(KeyboardInterrupt):
        rowdualnet.save(model, path, {"run": 2})
    # the new weights had stood beside the old JSON, whose sha256 load() then refused
    assert '"run": 2' in path.with_suffix(".json").read_text()
    rowdualnet.load(path)


def test_ctrl_c_while_writing_pmvb_checkpoints_waits_for_every_kind(tmp_path) -> None:
    import os
    import signal

    from coplug.learned.train_pmvb import write_checkpoints

    class Saved:
        def __init__(self, press: bool) -> None:
            self.press = press

        def save(self, path) -> None:
            path.write_text("weights")
            if self.press:  # Ctrl-C after the first kind's weights
                os.kill(os.getpid(), signal.SIGINT)

    fitted = [(Saved(kind == "logreg"), {"family": "setcover", "kind": kind})
              for kind in ("logreg", "gbt")]
    with pytest.raises(KeyboardInterrupt):
        write_checkpoints(fitted, tmp_path)
    # the second kind, and the first one's JSON, had not been written
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"pmvb_setcover_{kind}.{ext}" for kind in ("logreg", "gbt") for ext in ("joblib", "json"))


def test_big_endian_timedelta_costs_are_read_as_numbers() -> None:
    big_endian = np.array([[1, 256], [256, 1]], dtype=">m8[s]")
    # read as native ints (a view) the costs were 2**56 and 1: col_ind [1, 0] at 5.6e14
    solution = solve_lap(big_endian)
    assert solution.cost == 2 and solution.col_ind.tolist() == [0, 1]


def test_from_pyomo_names_a_z_of_other_keys() -> None:
    import pyomo.environ as pyo

    qubo = _knapsack_qubo([3, 4], [1, 2], 3)
    m = pyo.ConcreteModel()
    m.z = pyo.Var(["a", *range(qubo.n - 1)], domain=pyo.Binary)
    with pytest.raises(InputError, match="this QUBO has"):  # sorting mixed keys: TypeError
        qubo.from_pyomo(m)


def test_a_held_ctrl_c_goes_to_the_handler_it_would_have_met() -> None:
    import os
    import signal

    from coplug.plugins.interrupts import sigint_deferred

    saved = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with sigint_deferred():  # had raised KeyboardInterrupt where SIGINT was ignored
            os.kill(os.getpid(), signal.SIGINT)
        presses: list[int] = []
        signal.signal(signal.SIGINT, lambda _signum, _frame: presses.append(1))
        with sigint_deferred():  # the caller's own handler had never run
            os.kill(os.getpid(), signal.SIGINT)
        assert presses == [1] and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, saved)


def test_certify_restores_the_profile_when_a_utility_is_undefined() -> None:
    import pyomo.environ as pyo

    from coplug.formulations.game_solvers import certify

    game = _two_player_game()
    game.block("a").del_component("utility")
    game.block("a").utility = pyo.Expression(expr=pyo.log(game.block("a").x) - game.block("a").x)
    with pytest.raises(InputError, match="undefined"):
        certify(game, {"a": [0.0], "b": [2.0]})  # log(0): the profile had stayed loaded
    assert {p: v.tolist() for p, v in game.profile().items()} == {"a": [1.0], "b": [1.0]}


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_numbers_beside_a_term_that_needs_a_value_are_still_checked(solver: str) -> None:
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = _zero_times_unvalued_in_a_power(3)
    m.z = pyo.Var()
    m.z.fix(float("nan"))
    m.d = pyo.Constraint(expr=m.z * m.y + (0 * m.x + 1) ** 3 <= 5)
    # SCIP had answered optimal 10 with the NaN coefficient
    with pytest.raises(InputError, match="constraint 'd': the coefficient of 'y' is nan"):
        solve(m, solver=solver)


def test_a_tiny_coefficient_beside_a_term_that_needs_a_value() -> None:
    import warnings

    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = _zero_times_unvalued_in_a_power(3)
    m.w = pyo.Var(bounds=(0, 1e12))
    m.tiny = pyo.Constraint(expr=1e-12 * m.w + m.y <= 100)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = solve(m, solver="scip")  # the dropped-term warning raised a ValueError
    assert result.objective == pytest.approx(4.0, abs=1e-6)
    assert any("solvers' zero" in str(w.message) for w in caught)


_THREADS_SCRIPT = r'''
import sys, threading, warnings
from concurrent.futures import ThreadPoolExecutor
import pyomo.environ as pyo
from coplug.learned import rowdualnet
from coplug.plugins import explain_infeasible, k_best, pareto_front, solve
from coplug.plugins.benders import BendersCuts
from coplug.formulations.facility import benders_models, random_facility_instance

def lp(seed):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 4))
    m.c = pyo.Constraint(expr=sum((i + seed % 3 + 1) * m.x[i] for i in range(3)) <= 7)
    m.o = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    return m

def knapsack(seed):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum((i + seed % 4 + 1) * m.x[i] for i in range(5)) <= 8)
    m.o = pyo.Objective(expr=sum((5 - i) * m.x[i] for i in range(5)), sense=pyo.maximize)
    return m

stop, errors = threading.Event(), []
def solving():
    k = 0
    while not stop.is_set():
        solve(lp(k), solver="highs")
        k += 1

def building():
    try:
        for seed in range(8):
            BendersCuts(benders_models(random_facility_instance(3, 4, 2, seed=seed))[1])
            m = knapsack(seed)
            m.p = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
            pareto_front(m, m.o, m.p, solver="highs")
            m.p.deactivate()
            m.no = pyo.Constraint(expr=m.x[0] + m.x[1] >= 3)
            explain_infeasible(m)
    except BaseException as exc:
        errors.append(repr(exc))

background = threading.Thread(target=solving)
background.start()
building()
stop.set()
background.join()
before = list(warnings.filters)
def searching_or_loading(seed):
    if seed % 3 == 2:
        rowdualnet.load()
    else:
        k_best(knapsack(seed), 3, solver=["scip", "highs"][seed % 2])

with ThreadPoolExecutor(4) as pool:
    list(pool.map(searching_or_loading, range(12)))
left = [f for f in warnings.filters if f not in before]
print("errors", errors, "left", left)
sys.exit(1 if errors or left else 0)
'''


def test_threads_building_and_searching_beside_solves(tmp_path) -> None:
    import subprocess
    import sys

    script = tmp_path / "threads.py"
    script.write_text(_THREADS_SCRIPT)
    # a Benders subproblem, a staged HiGHS model or explain_infeasible's HiGHS model built
    # in one thread deadlocked a HiGHS solve in another; k_best and RowDualNet's load from
    # threads left their "ignore" filters behind
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_a_highs_option_of_no_type_highs_takes_is_named() -> None:
    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(0, 1))
    m.obj = pyo.Objective(expr=m.y)
    # `params={...}` (options= was meant) raised highspy's TypeError from setOptionValue
    with pytest.raises(InputError, match="unknown HiGHS option 'params'"):
        solve(m, solver="highs", params={"primal_feasibility_tolerance": 1e-6})


def test_a_provisional_value_where_the_switched_off_part_is_undefined() -> None:
    import warnings

    import pyomo.environ as pyo

    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var(bounds=(0, 20))
    m.f = pyo.Var()
    m.f.fix(0)
    m.c = pyo.Constraint(expr=(m.f * pyo.log(m.x - 1) + 2) ** 3 + m.y <= 12)
    m.low = pyo.Constraint(expr=m.x >= 2)
    m.obj = pyo.Objective(expr=m.y, sense=pyo.maximize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # expanded at x = 0, log(-1) made the data check call the model unevaluable
        assert solve(m, solver="scip").objective == pytest.approx(4.0, abs=1e-6)


def test_a_script_ending_in_a_coplug_error_exits_2_with_one_line(capsys) -> None:
    from coplug.plugins.interrupts import exit_on_interrupt

    def main() -> int:
        raise InputError("setcover size must be an integer >= 5, got 1")

    # benchmarks given a size below a family's minimum ended in the InputError's traceback
    with pytest.raises(SystemExit) as stop:
        exit_on_interrupt(main)
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().endswith(
        "error: setcover size must be an integer >= 5, got 1")


def test_benchmark_arguments_past_what_the_instances_hold_are_refused() -> None:
    import argparse

    from coplug.plugins.argtypes import ints_at_least

    # exponent 19 ended in numpy's "high is out of bounds for int64" inside cut_guard
    with pytest.raises(argparse.ArgumentTypeError, match="at most 18"):
        ints_at_least(8, 18)("10,19")
    assert ints_at_least(8, 18)("10,18") == [10, 18]


def test_benchmark_ratios_of_two_times_that_round_to_nothing_tie() -> None:
    from bench_loader import bench

    # the default row's speedup against itself printed nan on tiny runs
    for name in ("pmvb_vs_scip", "lap_heuristic"):
        ratio = bench(name)._ratio
        assert ratio(0.0, 0.0) == 1.0 and ratio(3.0, 2.0) == 1.5
        assert ratio(1.0, 0.0) != ratio(1.0, 0.0)  # nan: a time against none
