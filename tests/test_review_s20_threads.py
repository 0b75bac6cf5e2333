"""Solves from several threads: Pyomo's output capture swaps the process's stdout/stderr, so
concurrent solves crashed ("Captured output ... does not match sys.stdout") and lost output;
they now take turns, and a race's forked racers do not inherit a lock a thread held."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from coplug.formulations.knapsack import knapsack_mip, random_knapsack
from coplug.plugins import serial
from coplug.plugins.bridge import solve
from coplug.plugins.results import Status


def _optimum(job: tuple[int, str]) -> float:
    seed, solver = job
    result = solve(knapsack_mip(random_knapsack(120, seed=seed, kind="strongly_correlated")),
                   solver=solver)
    assert result.status is Status.OPTIMAL
    return result.objective


def test_solves_from_threads_match_the_same_solves_in_turn() -> None:
    jobs = [(seed, solver) for seed in range(4) for solver in ("scip", "highs")]
    in_turn = [_optimum(job) for job in jobs]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(_optimum, jobs))
    assert threaded == pytest.approx(in_turn, rel=1e-9)


def test_a_race_while_another_thread_holds_the_solve_lock() -> None:
    """A racer forked while a thread of the parent was solving got the lock held, and its
    solve waited for good; each racer now starts with a free lock."""
    from coplug.plugins.solver_race import race

    held, done = threading.Event(), threading.Event()

    def solving() -> None:
        with serial._LOCK[0]:
            held.set()
            done.wait(120)

    thread = threading.Thread(target=solving)
    thread.start()
    try:
        assert held.wait(10)
        model = knapsack_mip(random_knapsack(40, seed=3))
        result = race(model, time_limit=20)
        assert result.status is Status.OPTIMAL
    finally:
        done.set()
        thread.join()
    alone = solve(knapsack_mip(random_knapsack(40, seed=3)))
    assert result.objective == pytest.approx(alone.objective, rel=1e-9)


def test_factory_solves_with_a_tee_stream_from_threads() -> None:
    """`SolverFactory(...).solve(m, tee=stream)` took Pyomo's capture lock before the solve
    lock, and `solve` inside took them the other way round: two threads each held one."""
    import io

    import pyomo.environ as pyo

    def teed(job: tuple[int, str]) -> float:
        seed, solver = job
        model = knapsack_mip(random_knapsack(60, seed=seed))
        results = pyo.SolverFactory(f"coplug_{solver}").solve(model, tee=io.StringIO())
        assert results.solver.termination_condition == pyo.TerminationCondition.optimal
        return pyo.value(model.value)

    jobs = [(seed, solver) for seed in range(3) for solver in ("scip", "highs")] * 2
    in_turn = [teed(job) for job in jobs]
    with ThreadPoolExecutor(4) as pool:
        future = pool.map(teed, jobs, timeout=120)
        threaded = list(future)
    assert threaded == pytest.approx(in_turn, rel=1e-9)
