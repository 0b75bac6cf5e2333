"""Session 33 review: defects found by this session's probes, each with the test that
failed before its fix."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from coplug.plugins import lexicographic
from coplug.plugins.errors import InputError


def _huge_objective_model() -> pyo.ConcreteModel:
    """Three objectives, the first with coefficients that `scale_rows` divides, so its bound
    row in the later stages is a divided row that the next stage deletes."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.NonNegativeIntegers, bounds=(0, 5))
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in range(4)) <= 7)
    m.o1 = pyo.Objective(expr=3e7 * m.x[0] + 5e7 * m.x[1] + 1e7 * m.x[2] + 7e6 * m.x[3],
                         sense=pyo.maximize)
    m.o2 = pyo.Objective(expr=m.x[0] - m.x[3] + 2 * m.x[2], sense=pyo.maximize)
    m.o3 = pyo.Objective(expr=m.x[3] + m.x[2], sense=pyo.maximize)
    return m


def test_staged_solve_does_not_rescale_a_row_added_where_a_deleted_one_was():
    """SCIP hands a deleted row's address to the next row added; the divided bound row's
    factor stayed keyed by it, so stage 3 multiplied its new bound row by 2**22 and took a
    second solve to repair the answer."""
    m = _huge_objective_model()
    result = lexicographic(m, [m.o1, m.o2, m.o3], solver="scip")
    assert result.values == [310000000.0, 2.0, 0.0]
    for stage in result.results[1:]:
        assert stage.extra.get("scaled_rows") == 1
        assert "cuts_off" not in stage.extra and "first_solve" not in stage.extra


@pytest.mark.parametrize("argument", ["slope", "intercept", "capacity"])
def test_cournot_takes_a_python_int_past_int64_like_its_float(argument):
    """10**30 and 1e30 are the same number; the int reached numpy as an object array."""
    from coplug.formulations.games import cournot

    as_int = cournot(n_firms=2, **{argument: 10**30})
    as_float = cournot(n_firms=2, **{argument: 1e30})
    assert as_int.players == as_float.players == ["firm0", "firm1"]


@pytest.mark.parametrize("costs", [10**400, [10**400, 1]])
def test_cournot_names_costs_past_floats_range(costs):
    from coplug.formulations.games import cournot

    with pytest.raises(InputError, match="finite costs"):
        cournot(n_firms=2, costs=costs)


@pytest.mark.parametrize("sizes", [(np.int64(2**32), np.int64(2**32)), (4, np.uint64(2**63))])
def test_assignment_memory_guard_does_not_wrap_on_numpy_integer_sizes(sizes):
    """n * m * 8 in numpy integers wrapped past 2**64, so numpy, not the guard, refused."""
    from coplug.formulations.assignment import uniform

    with pytest.raises(InputError, match="GiB"):
        uniform(sizes[0], m=sizes[1])


def _knapsack_with_constant(constant: float, n: int = 8, seed: int | None = None
                            ) -> pyo.ConcreteModel:
    """`n` binaries (fixed data, or drawn from `seed`), three continuous columns,
    `max ... + constant`."""
    if seed is None:
        weights, values = [9, 2, 3, 5, 7, 2, 4, 8], [3, 11, 7, 2, 9, 5, 12, 4]
    else:
        rng = np.random.default_rng(seed)
        weights, values = rng.integers(5, 40, n).tolist(), rng.integers(5, 40, n).tolist()
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.y = pyo.Var(range(3), bounds=(0, 4.3))
    m.cap = pyo.Constraint(expr=sum(w * m.x[j] for j, w in enumerate(weights))
                           + sum(m.y.values()) <= sum(weights) // 2)
    m.link = pyo.Constraint(range(3), rule=lambda m, i: m.y[i] <= 3 * m.x[i] + 0.7)
    m.obj = pyo.Objective(expr=sum(v * m.x[j] for j, v in enumerate(values))
                          + sum((0.3 + 0.2 * i) * m.y[i] for i in range(3)) + constant,
                          sense=pyo.maximize)
    return m


@pytest.mark.parametrize("constant", [0.0, 1e6, 1e9])
def test_k_best_with_highs_ranks_exactly_whatever_the_objective_constant(constant):
    """HiGHS's rounds stopped within its default 1e-4 relative gap, measured with the
    constant: at 1e6 a 20-item knapsack's list came back 0.06-0.09 low, still `proven`."""
    from coplug.plugins import k_best

    reference = k_best(_knapsack_with_constant(constant, n=20, seed=0), k=6, solver="scip")
    found = k_best(_knapsack_with_constant(constant, n=20, seed=0), k=6, solver="highs")
    assert reference.proven and found.proven
    assert [round(p.objective - constant, 6) for p in found.solutions] == \
        [round(p.objective - constant, 6) for p in reference.solutions]


def _fixed_without_value() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.f = pyo.Var()
    m.f.fixed = True
    m.cap = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 2)
    m.obj = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.f, sense=pyo.maximize)
    m.o2 = pyo.Objective(expr=m.x[2] - m.x[0])
    m.o2.deactivate()
    return m


def _param_without_value() -> pyo.ConcreteModel:
    m = _fixed_without_value()
    m.f.fix(1.0)
    m.p = pyo.Param(mutable=True)
    m.o2.expr = m.p * m.x[2] - m.x[0]
    return m


@pytest.mark.parametrize("call", ["k_best", "k_best highs", "pareto_front", "lexicographic"])
def test_staged_and_ranked_solves_name_an_objective_without_data(call):
    """They read the objectives before `solve` checks them: Pyomo's TypeError ('int' * None)
    or ValueError came back instead of the objective's name."""
    from coplug.plugins import k_best, pareto_front

    run = {"k_best": lambda m: k_best(m, k=2),
           "k_best highs": lambda m: k_best(m, k=2, solver="highs"),
           "pareto_front": lambda m: pareto_front(m, m.obj, m.o2),
           "lexicographic": lambda m: lexicographic(m, [m.obj, m.o2])}[call]
    with pytest.raises(InputError, match="objective 'obj': variable 'f' is fixed but has no"):
        run(_fixed_without_value())
    if call.startswith("k_best"):
        return  # ranks the active objective only
    with pytest.raises(InputError, match=r"objective 'o2': cannot evaluate its data.*\(p\)"):
        run(_param_without_value())


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_lexicographic_band_past_the_solvers_infinity_is_no_row(solver):
    """rel_tol=1e308 made the kept objective's side inf: SCIP failed an assertion inside
    PySCIPOpt. Such a band keeps every point, so the second objective is free."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum((j + 2) * m.x[j] for j in range(6)) <= 12)
    m.cost = pyo.Objective(expr=sum((6 - j) * m.x[j] for j in range(6)))
    m.value = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)
    tight = lexicographic(m, [m.value, m.cost], solver=solver)
    assert tight.values == [3.0, 12.0]
    for rel_tol in (1e300, 1e308):
        loose = lexicographic(m, [m.value, m.cost], solver=solver, rel_tol=rel_tol)
        assert loose.values == [0.0, 0.0] and pyo.value(m.cost) == 0.0


def _small_knapsack() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum((j + 2) * m.x[j] for j in range(5)) <= 9)
    m.obj = pyo.Objective(expr=sum((3 + j) * m.x[j] for j in range(5)), sense=pyo.maximize)
    return m


def test_race_takes_a_time_limit_of_months():
    """The wait for answers overflowed the selector's timeout past about 25 days."""
    from coplug.plugins import race, solve

    expected = solve(_small_knapsack()).objective
    result = race(_small_knapsack(), time_limit=1e7)
    assert result.status.value == "optimal" and result.objective == expected == 12.0


def test_flags_take_numpy_bools():
    """warmstart, LazyConstraints' fractional, the LAP's warm and explain_infeasible's
    check_limit refused numpy's bool and integers that other arguments take."""
    from coplug.plugins import LazyConstraints, explain_infeasible, solve

    started = _small_knapsack()
    for j in range(5):
        started.x[j].set_value(float(j < 2))
    assert solve(started, warmstart=np.True_).objective == 12.0
    assert LazyConstraints(lambda s: [], fractional=np.True_).fractional is True
    m = _small_knapsack()
    m.bad = pyo.Constraint(expr=m.x[0] + m.x[1] >= 3)
    assert explain_infeasible(m, check_limit=np.int64(5)).irreducible
    with pytest.raises(InputError, match="check_limit"):
        explain_infeasible(m, check_limit=np.True_)


def test_lap_option_warm_takes_a_numpy_bool():
    from coplug.formulations.assignment import assignment_model, uniform
    from coplug.plugins import solve

    costs = uniform(6, seed=3)
    cold = solve(assignment_model(costs), solver="lap").objective
    assert solve(assignment_model(costs), solver="lap", warm=np.True_).objective == cold


def test_progress_refuses_a_file_that_is_not_a_stream():
    """A path string failed inside tqdm at the first redraw; an array on its truth value."""
    from coplug.plugins import Progress

    for bad in ("progress.log", np.zeros(2), 0):
        with pytest.raises(InputError, match="Progress file"):
            Progress(file=bad)


def test_register_backend_checks_its_arguments_and_reads_names_case_insensitively():
    """A name with capitals was listed but `solve` (which lowercases) never found it; a None
    name broke `available_solvers()` for every later call."""
    from coplug.plugins import available_solvers, register_backend, solve
    from coplug.plugins.bridge import _BACKENDS

    seen = []

    def backend(model, plugins, time_limit, params, tee):
        seen.append(model)
        return solve(model, solver="highs")

    register_backend("Session33Test", backend)
    try:
        assert "session33test" in available_solvers()
        assert solve(_small_knapsack(), solver="SESSION33TEST").objective == 12.0
        assert len(seen) == 1
    finally:
        _BACKENDS.pop("session33test", None)
    for name, value in ((None, backend), ("", backend), ("x", None)):
        with pytest.raises(InputError, match="register_backend"):
            register_backend(name, value)
    assert None not in available_solvers()


@pytest.fixture(scope="module")
def program():
    from coplug.formulations.bbo import load

    return load("sum((x - 1.0) ** 2)", dim=2)


@pytest.mark.parametrize("call", ["numpy_evaluator", "torch_evaluator", "to_pyomo", "certify",
                                  "validate", "program_to_json", "pyomo_script", "to_text",
                                  "write_program"])
def test_bbo_functions_name_a_program_that_is_not_one(call, tmp_path):
    """Text or a Pyomo model failed on `.dim` (Pyomo's method) deep inside."""
    import coplug.formulations.bbo as bbo
    from coplug.formulations.bbo.certify import certify
    from coplug.formulations.bbo.validate import validate

    function = {"validate": validate, "certify": certify}.get(call) or getattr(bbo, call)
    extra = (tmp_path / "p.json",) if call == "write_program" else ()
    for bad in ("sum(x ** 2)", pyo.ConcreteModel()):
        with pytest.raises(InputError, match=f"{call} needs a Program"):
            function(bad, *extra)


def test_bbo_sample_arguments_are_checked(program):
    from coplug.formulations.bbo.evaluate import check_points
    from coplug.formulations.bbo.features import lhs_unit
    from coplug.formulations.bbo.validate import validate

    for kwargs, name in (({"n": -1}, "n"), ({"n": 10.5}, "n"), ({"seed": -1}, "seed"),
                         ({"seed": 0.5}, "seed")):
        with pytest.raises(InputError, match=name):
            validate(program, **kwargs)
        with pytest.raises(InputError, match=name):
            check_points(program, **kwargs)
    for args, name in (((-1, 10), "dim"), ((2, -1), "n"), ((2, 10, -1), "seed")):
        with pytest.raises(InputError, match=name):
            lhs_unit(*args)
    assert check_points(program, n=np.int64(4)).shape == (4 + 1 + 4, 2)  # + center, corners
    assert lhs_unit(np.int64(2), 5, seed=np.int64(1)).shape == (5, 2)


def test_bbo_certify_write_and_evolve_arguments_are_named(program, tmp_path):
    from coplug.formulations.bbo import EvolutionConfig, write_program
    from coplug.formulations.bbo.certify import certify

    with pytest.raises(InputError, match="certify plugins"):
        certify(program, plugins=None)
    with pytest.raises(InputError, match="write_program needs a file path"):
        write_program(program, None)
    for targets, match in ((None, "list of BBOB ids"), ((1, 25), "1..24"), ((3, 3), "twice"),
                           ((True,), "1..24")):
        with pytest.raises(InputError, match=match):
            EvolutionConfig(targets=targets)
    assert EvolutionConfig(targets=[np.int64(3), 1]).targets == (3, 1)
    assert certify(program, samples=0, time_limit=5).certified


def test_pmvb_and_benders_arguments_are_named():
    from coplug.plugins.benders import BendersCuts
    from coplug.plugins.pmvb import PMVBBranching, hoeffding_hyperplanes

    for bad in ("abc", {"x": 0.9}):
        with pytest.raises(InputError, match="PMVB probabilities"):
            hoeffding_hyperplanes(bad)
    with pytest.raises(InputError, match="PMVB mode"):
        PMVBBranching("lp", mode=np.array(["branch", "start"]))
    with pytest.raises(InputError, match="BendersCuts needs a list"):
        BendersCuts(None)


def test_k_best_takes_highs_gap_in_options():
    """`zero_mip_gap` read only the keywords, so a gap in options= was 'given twice'."""
    from coplug.plugins import k_best

    keyword = k_best(_knapsack_with_constant(0.0), k=3, solver="highs", mip_rel_gap=0.0)
    given = k_best(_knapsack_with_constant(0.0), k=3, solver="highs",
                   options={"mip_rel_gap": 0.0})
    assert [p.objective for p in given.solutions] == [p.objective for p in keyword.solutions]


def _raising_on_call(m: pyo.ConcreteModel, n: int, calls: list[int]):
    def separate(solution):
        calls.append(1)
        if len(calls) == n:
            raise RuntimeError(f"boom at call {n}")
        return [m.x[3] + m.x[2] <= 1]
    return separate


def test_highs_lazy_rounds_put_the_values_back_when_separate_raises():
    """The rounds left round 2's point, which `separate` never accepted, in the model."""
    from coplug.plugins import LazyConstraints, solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary, initialize=0)
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 3)
    m.obj = pyo.Objective(expr=sum((i + 1) * m.x[i] for i in range(4)), sense=pyo.maximize)
    calls: list[int] = []
    with pytest.raises(RuntimeError, match="boom at call 2"):
        solve(m, solver="highs", plugins=[LazyConstraints(_raising_on_call(m, 2, calls))])
    assert [m.x[i].value for i in range(4)] == [0, 0, 0, 0]
    assert not hasattr(m, "_coplug_lazy_rows")


RAISE_WHILE_SCIP_STARTS = """
import pyomo.environ as pyo
from coplug.plugins import LazyConstraints, solve
m = pyo.ConcreteModel()
m.x = pyo.Var(range(4), bounds=(0, 10))
m.c1 = pyo.Constraint(expr=sum(m.x.values()) <= 20)
m.obj = pyo.Objective(expr=3*m.x[0] + 2*m.x[1] + m.x[2] + 0.5*m.x[3], sense=pyo.maximize)
calls = []
def separate(solution):
    calls.append(1)
    if len(calls) == 2:
        raise RuntimeError("boom in separate")
    return [m.x[0] <= 4]
try:
    solve(m, solver="scip", plugins=[LazyConstraints(separate)])
except RuntimeError as exc:
    print("raised", exc, "calls", len(calls))
"""


def test_scip_stops_quietly_when_separate_raises_while_it_starts_the_solve():
    """SCIP refuses interruptSolve in its INITSOLVE stage: PySCIPOpt printed tracebacks,
    SCIP its ERROR lines, the model could not be freed, and `separate` was called on."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", RAISE_WHILE_SCIP_STARTS], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip() == "raised boom in separate calls 2"
    assert "ERROR" not in done.stderr + done.stdout and "Traceback" not in done.stderr


def _lp_with_duals_solved() -> pyo.ConcreteModel:
    """max 2x, x <= 3 with m.dual declared, solved by SCIP: m.dual[m.c] is 2."""
    from coplug.plugins import solve

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.c = pyo.Constraint(expr=m.x <= 3)
    m.obj = pyo.Objective(expr=2 * m.x, sense=pyo.maximize)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    solve(m, solver="scip")
    return m


@pytest.mark.parametrize("options", [{"limits/nodes": "x"}, {"no/such/param": 1}])
def test_a_refused_scip_option_leaves_the_duals_of_the_last_solve(options):
    """SCIP's path emptied m.dual before naming the option (HiGHS's did not)."""
    from coplug.plugins import solve

    m = _lp_with_duals_solved()
    assert m.dual[m.c] == pytest.approx(2.0)
    with pytest.raises(InputError, match="SCIP parameter"):
        solve(m, solver="scip", options=options)
    assert m.dual[m.c] == pytest.approx(2.0)


FORK_WHILE_A_THREAD_SOLVES = """
import os, sys, threading, time
import pyomo.environ as pyo
from coplug.plugins import solve
from coplug.plugins.serial import one_solve_at_a_time
holding, release = threading.Event(), threading.Event()
def hold():
    with one_solve_at_a_time():
        holding.set()
        release.wait()
threading.Thread(target=hold, daemon=True).start()
holding.wait()
pid = os.fork()
if pid == 0:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 2)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    os._exit(0 if solve(m, solver="highs").objective == 5.0 else 1)
for _ in range(300):
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.1)
else:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print("child hung")
    sys.exit(1)
release.set()
print("child", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_child_forked_while_a_thread_solves_can_solve():
    """The solve lock went through fork held by a thread the child does not have: the
    child's first solve waited for ever."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FORK_WHILE_A_THREAD_SOLVES],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "child 0", done.stderr[-2000:]


def _row_chain(n: int) -> pyo.ConcreteModel:
    """x[i + 1] >= x[i] + 1 for n rows and x[n] <= n - 1: infeasible, every row needed."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n + 1), bounds=(0, 10 * n))
    m.step = pyo.Constraint(range(n), rule=lambda m, i: m.x[i + 1] >= m.x[i] + 1)
    m.top = pyo.Constraint(expr=m.x[n] <= n - 1)
    m.o = pyo.Objective(expr=m.x[0])
    return m


def test_explain_infeasible_stops_filtering_at_the_time_limit():
    """Each filter check had 10 s of its own whatever the time limit: a set cover with a
    budget row ran past 300 s at time_limit=5. A chain of 200 rows that all take part needs
    hundreds of checks; at 0.3 s the filter stops with the subsystem it has, said to be
    infeasible but not irreducible."""
    import time

    from coplug.plugins import explain_infeasible, solve

    n = 200
    m = _row_chain(n)
    started = time.perf_counter()
    found = explain_infeasible(m, time_limit=0.3)
    assert time.perf_counter() - started < 3.0
    assert found.irreducible is None and "time limit ran out" in " ".join(found.notes)
    assert len(found.constraints) == n + 1  # every row is needed: none could be dropped
    kept = {id(con) for con in found.constraints}
    for con in m.component_data_objects(pyo.Constraint):
        if id(con) not in kept:
            con.deactivate()
    assert solve(m, solver="highs").status.value == "infeasible"


def test_explain_infeasible_file_stops_filtering_at_the_time_limit(tmp_path):
    """The file's filter too gave each check 10 s: 600 chained rows take ~3 s of checks."""
    import time

    from coplug.plugins import explain_infeasible_file

    n = 600
    m = _row_chain(n)
    path = tmp_path / "chain.mps"
    m.write(str(path), io_options={"symbolic_solver_labels": True})
    started = time.perf_counter()
    found = explain_infeasible_file(path, time_limit=0.2)
    assert time.perf_counter() - started < 2.0
    assert found.irreducible is None and "time limit ran out" in " ".join(found.notes)
    assert len(found.rows) == n + 1


def test_game_certify_time_limit_covers_all_players(monkeypatch):
    """Each player's best response had the whole limit: 8 players at 0.5 s took 4 s of
    solving. Now no solve's limit reaches past the call's deadline (the last players get
    MIN_SECONDS)."""
    import time

    import coplug.plugins
    from coplug.formulations.game_solvers import MIN_SECONDS, certify
    from coplug.formulations.games import Game

    rng = np.random.default_rng(0)
    game = Game("hard")
    n = 40
    for p in range(8):
        block = game.add_player(f"p{p}")
        block.x = pyo.Var(range(n), bounds=(0, 1), initialize=0.5)
        q = rng.normal(size=(n, n))
        q = (q + q.T) / 2
        c = rng.normal(size=n)
        block.utility = pyo.Expression(
            expr=sum(float(q[i, j]) * block.x[i] * block.x[j] for i in range(n) for j in range(n))
            + sum(float(c[i]) * block.x[i] for i in range(n)))
    solve, calls = coplug.plugins.solve, []

    def timed_solve(model, **kwargs):
        limit = kwargs["time_limit"]
        try:
            return solve(model, **kwargs)
        finally:
            calls.append((limit, time.perf_counter()))

    monkeypatch.setattr(coplug.plugins, "solve", timed_solve)
    deadline = time.perf_counter() + 0.5
    found = certify(game, time_limit=0.5)
    assert len(calls) == 8
    # what was left when the previous solve returned, or MIN_SECONDS once nothing was
    # (+ the checks before certify takes its deadline); measured at the solve's entry the
    # model's build counted, and a loaded machine built past the 0.1 s allowed
    returned = [deadline - 0.5] + [end for _, end in calls[:-1]]
    for (limit, _), start in zip(calls, returned, strict=True):
        assert limit <= max(deadline - start, MIN_SECONDS) + 0.1
    assert set(found.statuses.values()) == {"time_limit"}
    assert found.epsilon == np.inf  # unproven players bound nothing


def _assignment_with_fixed_integer(value: float) -> pyo.ConcreteModel:
    costs = [[4.0, 1.0], [2.0, 0.0]]
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 1)
    m.x = pyo.Var(m.I, m.I, domain=pyo.Binary)
    m.r = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.I) == 1)
    m.c = pyo.Constraint(m.I, rule=lambda m, j: sum(m.x[i, j] for i in m.I) == 1)
    m.n = pyo.Var(domain=pyo.Integers)
    m.n.fix(value)
    m.obj = pyo.Objective(expr=sum(costs[i][j] * m.x[i, j] for i in m.I for j in m.I)
                          + 3 * m.n + 7.5)
    return m


def test_lap_path_calls_an_integer_fixed_off_a_whole_number_infeasible_as_the_solvers_do():
    """solver='lap' answered 'optimal' 15.0 where SCIP and HiGHS say infeasible."""
    from coplug.plugins import k_best, solve

    for solver in ("scip", "highs", "lap"):
        assert solve(_assignment_with_fixed_integer(1.5), solver=solver).status.value == \
            "infeasible"
        assert solve(_assignment_with_fixed_integer(1.0), solver=solver).objective == 13.5
    ranked = k_best(_assignment_with_fixed_integer(1.5), k=2, solver="lap")
    assert ranked.solutions == [] and ranked.result.status.value == "infeasible"
    results = pyo.SolverFactory("coplug_lap").solve(_assignment_with_fixed_integer(1.5),
                                                    load_solutions=False)
    assert str(results.solver.termination_condition) == "infeasible"


NON_UTF8_NAME = (b"NAME test\nROWS\n N obj\n L c1\nCOLUMNS\n x\xe9 obj -1 c1 1\n y obj -1 c1 1\n"
                 b"RHS\n RHS c1 4\nBOUNDS\n UP BND x\xe9 3\nENDATA\n")
LATIN1_COMMENT = (b"* r\xe9sum\xe9 of the model\nNAME r\xe9sum\xe9\nROWS\n N obj\n L c1\nCOLUMNS\n"
                  b" x obj -1 c1 1\n y obj -2 c1 1\nRHS\n RHS c1 4\nBOUNDS\n UP BND x 3\nENDATA\n")


@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_solve_file_names_a_name_that_is_not_utf8(solver, tmp_path):
    """A Latin-1 column name failed inside PySCIPOpt's and highspy's name decoding; a
    Latin-1 comment or NAME line, which neither decodes, still reads."""
    from coplug.plugins import explain_infeasible_file, solve_file

    path = tmp_path / "latin1.mps"
    path.write_bytes(NON_UTF8_NAME)
    with pytest.raises(InputError, match=r"latin1.mps: the name b'x\\xe9' is not UTF-8"):
        solve_file(path, solver=solver)
    with pytest.raises(InputError, match="not UTF-8"):
        explain_infeasible_file(path)
    commented = tmp_path / "comment.mps"
    commented.write_bytes(LATIN1_COMMENT)
    assert solve_file(commented, solver=solver).objective == -8.0


ASCII_LOCALE = {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
UNDER_ASCII_LOCALE = """
import json, shutil, sys
from pathlib import Path
from coplug.formulations.bbo import load, write_program
import coplug.models
from coplug.learned.rowdualnet import load as load_net
folder = Path(sys.argv[1])
write_program(load("\\u00e9 = x - 1.0\\nsum(\\u00e9 ** 2)", dim=2), folder / "p.py")
source = Path(coplug.models.__file__).parent / "rowdualnet.pt"
shutil.copy(source, folder / "rd.pt")
meta = json.loads(source.with_suffix(".json").read_text(encoding="utf-8"))
meta["note"] = "trained by Ren\\u00e9"
(folder / "rd.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
load_net(folder / "rd.pt")
print("done")
"""


def test_files_are_utf8_whatever_the_locale(tmp_path):
    """Under an ASCII locale a program named with an accent failed to export (an empty .py
    left behind), and a checkpoint's sidecar with an accent was 'unreadable'."""
    import os
    import subprocess
    import sys

    env = {**{k: v for k, v in os.environ.items() if k != "LANG"}, **ASCII_LOCALE}
    done = subprocess.run([sys.executable, "-c", UNDER_ASCII_LOCALE, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "done", done.stderr[-2000:]
    assert "\u00e9 = " in (tmp_path / "p.py").read_text(encoding="utf-8")


def test_cli_prints_names_an_ascii_locale_cannot_show(tmp_path):
    """`coplug solve --explain` crashed printing a UTF-8 row name to an ASCII stdout."""
    import os
    import subprocess
    import sys

    path = tmp_path / "inf.mps"
    path.write_bytes(b"NAME t\nROWS\n N obj\n G caf\xc3\xa9\n L lim\nCOLUMNS\n"
                     b" x obj 1 caf\xc3\xa9 1\n x lim 1\nRHS\n RHS caf\xc3\xa9 5 lim 3\nENDATA\n")
    env = {**{k: v for k, v in os.environ.items() if k != "LANG"}, **ASCII_LOCALE}
    done = subprocess.run([sys.executable, "-m", "coplug.plugins.cli", "solve", str(path),
                           "--explain"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"row caf\\xe9" in done.stdout and b"row lim" in done.stdout


def test_instances_and_results_compare_by_value():
    """Dataclass `==` on an array field raised 'truth value ... ambiguous'; a PoolSolution's
    variables built a Pyomo expression."""
    import copy
    import pickle

    from coplug.formulations.facility import random_facility_instance
    from coplug.formulations.knapsack import KnapsackInstance, random_knapsack
    from coplug.formulations.tsp import random_euclidean
    from coplug.plugins import k_best

    knapsack = random_knapsack(10, seed=3, r=10)
    same = KnapsackInstance(knapsack.values.copy(), knapsack.weights.copy(), knapsack.capacity)
    assert knapsack == same == pickle.loads(pickle.dumps(knapsack))
    assert knapsack != random_knapsack(10, seed=4, r=10)
    assert random_euclidean(6, seed=0) == random_euclidean(6, seed=0)
    assert random_euclidean(6, seed=0) != random_euclidean(6, seed=1)
    assert random_facility_instance(3, 4, 2, seed=0) == random_facility_instance(3, 4, 2, seed=0)
    with pytest.raises(TypeError, match="unhashable"):
        hash(knapsack)
    ranked = k_best(_small_knapsack(), k=3)
    assert ranked.solutions[0] == ranked.solutions[0] != ranked.solutions[1]
    assert ranked == copy.copy(ranked)


def test_a_read_pool_solution_reads_after_pickle_and_deepcopy():
    """Its id -> position cache went along with the old ids: the copy's own variables
    were 'in no active constraint'."""
    import copy
    import pickle

    from coplug.plugins import k_best

    m = _small_knapsack()
    solution = k_best(m, k=2).solutions[1]
    expected = [solution[m.x[j]] for j in range(5)]
    for copied, model in (pickle.loads(pickle.dumps((solution, m))),
                          copy.deepcopy((solution, m))):  # the model too: variables hold
        assert model is not m  # their blocks weakly
        assert [copied[model.x[j]] for j in range(5)] == expected


def test_two_plugins_of_one_name_are_refused_before_the_duals_are_emptied():
    """SCIP refused the second include inside the solve, after m.dual had been emptied."""
    from coplug.plugins import OnSolution, solve

    m = _lp_with_duals_solved()
    with pytest.raises(InputError, match="share the name 'a'.*a name of its own"):
        solve(m, solver="scip", plugins=[OnSolution(lambda s: None, name="a"),
                                         OnSolution(lambda s: None, name="a")])
    assert m.dual[m.c] == pytest.approx(2.0)


@pytest.mark.parametrize(("domain", "value", "miss"), [
    (pyo.RangeSet(0, 10, 2), 3, 1.0), (pyo.RangeSet(0.5, 3.5, 1), 2, 0.5),
    (pyo.RangeSet(0, 10, 2), 4, None), (pyo.RangeSet(0.5, 3.5, 1), 2.5, None)])
def test_infeasibilities_names_a_value_off_a_stepped_domain(domain, value, miss):
    """Only bounds and integrality were checked: 3 in RangeSet(0, 10, 2) passed."""
    from coplug.plugins import infeasibilities

    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=domain)
    m.c = pyo.Constraint(expr=m.x <= 100)
    m.x.set_value(value, skip_validation=True)
    assert infeasibilities(m) == ({} if miss is None else {"x": miss})


def test_infeasibilities_names_a_value_outside_a_finite_domain():
    from coplug.plugins import infeasibilities

    m = pyo.ConcreteModel()
    m.allowed = pyo.Set(initialize=[1, 3, 7])
    m.x = pyo.Var(domain=m.allowed)
    m.c = pyo.Constraint(expr=m.x <= 100)
    m.x.set_value(2, skip_validation=True)
    assert infeasibilities(m) == {"x": 1.0}
    m.x.set_value(7)
    assert infeasibilities(m) == {}


def test_pmvb_takes_given_probabilities_for_an_integer_that_can_only_be_0_or_1():
    """Bounds (-0.5, 1.5) were refused as 'not a binary' while the lp predictor branched."""
    from coplug.plugins import solve
    from coplug.plugins.pmvb import PMVBBranching

    def build():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(4), domain=pyo.Integers, bounds=(-0.5, 1.5))
        m.c = pyo.Constraint(expr=sum((j + 2) * m.x[j] for j in range(4)) <= 6)
        m.o = pyo.Objective(expr=sum((j + 1) * m.x[j] for j in range(4)), sense=pyo.maximize)
        return m

    probabilities = {"x[0]": 0.95, "x[1]": 0.05, "x[2]": 0.95, "x[3]": 0.05}
    result = solve(build(), plugins=[PMVBBranching(probabilities)])
    assert result.objective == solve(build()).objective == 4.0


def _ignore(*args):
    return None


def _no_rows(solution):
    return []


def test_plugins_pickle_and_copy_after_a_solve():
    """After one solve they held the SCIP model and the variable map: pickle and deepcopy
    failed inside PySCIPOpt ('self.scip_var cannot be converted')."""
    import copy
    import pickle

    from coplug.plugins import LazyConstraints, OnSolution, SolutionPool, UserHeuristic, solve
    from coplug.plugins.pmvb import PMVBBranching

    for plugin in (OnSolution(_ignore), LazyConstraints(_no_rows), SolutionPool(3),
                   PMVBBranching("lp"), UserHeuristic(_ignore)):
        expected = solve(_small_knapsack(), plugins=[plugin]).objective
        for again in (pickle.loads(pickle.dumps(plugin)), copy.deepcopy(plugin)):
            assert solve(_small_knapsack(), plugins=[again]).objective == expected == 12.0
    pool = SolutionPool(3)
    solve(_small_knapsack(), plugins=[pool])
    kept = pickle.loads(pickle.dumps(pool))
    assert [s.objective for s in kept.solutions] == [s.objective for s in pool.solutions]


def _press_ctrl_c_at_the_second_set_value(monkeypatch) -> None:
    """SIGINT from within the second `VarData.set_value` call from now on."""
    import signal

    from pyomo.core.base.var import VarData

    set_value, calls = VarData.set_value, []

    def pressed_on_the_second(self, value, skip_validation=False):
        calls.append(1)
        if len(calls) == 2:
            signal.raise_signal(signal.SIGINT)
        return set_value(self, value, skip_validation=skip_validation)

    monkeypatch.setattr(VarData, "set_value", pressed_on_the_second)


@pytest.mark.parametrize("solver", ["scip", "highs", "lap"])
def test_a_ctrl_c_while_the_point_loads_loads_all_of_it_first(solver, monkeypatch):
    """A second Ctrl-C while SCIP's point went into the variables left 35,265 of 100,000
    loaded and the rest as they were; the press now counts once the point is in."""
    from coplug.formulations.assignment import assignment_model, uniform
    from coplug.plugins import solve

    m = assignment_model(uniform(4, seed=1)) if solver == "lap" else _small_knapsack()
    variables = list(m.component_data_objects(pyo.Var))
    for var in variables:
        var.set_value(0.5, skip_validation=True)  # no point of the model has this value
    _press_ctrl_c_at_the_second_set_value(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        solve(m, solver=solver)
    assert all(var.value != 0.5 for var in variables)


def test_a_ctrl_c_while_a_pool_solution_loads_loads_all_of_it_first(monkeypatch):
    from coplug.plugins import k_best

    m = _small_knapsack()
    second = k_best(m, k=2).solutions[1]
    for var in m.x.values():
        var.set_value(0.5, skip_validation=True)
    _press_ctrl_c_at_the_second_set_value(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        second.load()
    assert [var.value for var in m.x.values()] == [second[var] for var in m.x.values()]


def test_coplug_game_counts_the_ascent_on_a_bar(monkeypatch, capsys):
    """The ascent ran for seconds with nothing on the terminal (20,000 iterations)."""
    import coplug.formulations.games_cli as games_cli
    from coplug.formulations.games import example

    bars = []

    class Bar:
        def __init__(self, **kwargs):
            self.kwargs, self.count = kwargs, 0
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n=1):
            self.count += n

    monkeypatch.setattr(games_cli, "progress_bar", Bar)
    result, _ = games_cli.report(example("resource_allocation"), max_iter=300)
    assert len(bars) == 1 and bars[0].kwargs["total"] == 300
    assert bars[0].count == result.iterations == 300
    assert "300 iterations" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["model", "file"])
def test_explain_infeasible_counts_its_halving_checks_on_a_bar(where, monkeypatch, tmp_path):
    """Only the model's one-by-one filter had a bar: the halving chunks and the whole of
    explain_infeasible_file showed nothing for minutes."""
    import coplug.plugins.iis as iis
    import coplug.plugins.iis_file as iis_file
    from coplug.plugins import explain_infeasible, explain_infeasible_file

    updates = []

    class Bar:
        def __init__(self, iterable=None, **kwargs):
            self.iterable = iterable

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def __iter__(self):
            for item in self.iterable:
                updates.append(1)
                yield item

        def update(self, n=1):
            updates.append(n)

    monkeypatch.setattr(iis if where == "model" else iis_file, "progress_bar", Bar)
    m = _row_chain(100)
    if where == "model":
        explain_infeasible(m, check_limit=10)
    else:
        path = tmp_path / "chain.mps"
        m.write(str(path), io_options={"symbolic_solver_labels": True})
        explain_infeasible_file(path, check_limit=10)
    assert len(updates) >= 100  # halving passes over 101 rows: 2 + 4 + ... checks
