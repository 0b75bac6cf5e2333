"""Eighth-session review fixes outside the LAP path: Ctrl-C during HiGHS and the qubo
command's SCIP step, the qubo report on a SCIP stop, knapsack 64-bit arithmetic and file
round trips, the demo's --only and oversized QUBO batches."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations.knapsack import (
    KnapsackInstance,
    knapsack_qubo_safe,
    load_knapsack,
    random_knapsack,
    save_knapsack,
)
from coplug.formulations.qubo_solvers import minimize
from coplug.plugins import InputError
from coplug.plugins.cli import main

COPLUG = str(Path(sys.executable).parent / "coplug")


def _interrupt_after(args: list[str], marker: str, grace: float) -> tuple[int, str, float]:
    """Run coplug, send SIGINT `grace` seconds after `marker` shows on stdout; return the exit
    code, the whole output and the seconds from SIGINT to exit."""
    proc = subprocess.Popen([COPLUG, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1)
    out = []
    for line in proc.stdout:
        out.append(line)
        if marker in line:
            break
    time.sleep(grace)
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    return proc.returncode, "".join(out) + rest, time.perf_counter() - sent


_PYOMO_HIGHS = """
import json
from coplug.formulations.tsp import random_euclidean, tsp_mip
from coplug.plugins import solve
model = tsp_mip(random_euclidean(60, seed=0).dist)
print("ready", flush=True)
result = solve(model, solver="highs")
print(json.dumps({"status": result.status.value, "bound": result.bound}), flush=True)
"""


def _interrupted_status(command: list[str], marker: str, code: int = 0) -> str:
    """Send SIGINT 3 s after `marker` (the model is built), check the exit code and return
    the last output line."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1)
    for line in proc.stdout:
        if marker in line:
            break
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    return out.strip().splitlines()[-1] if out.strip() else ""


def test_ctrl_c_stops_highs_with_status_interrupted(tmp_path) -> None:
    """The Pyomo path used to end in "HiGHS stopped with no answer ('Solve error')"; a file
    solve ignored SIGINT until HiGHS finished (228 s on this 60-city MTZ model)."""
    from coplug.formulations.tsp import random_euclidean, tsp_mip

    line = _interrupted_status([sys.executable, "-c", _PYOMO_HIGHS], "ready")
    assert '"status": "interrupted"' in line
    path = tmp_path / "tsp60.mps"
    tsp_mip(random_euclidean(60, seed=0).dist).write(
        str(path), io_options={"symbolic_solver_labels": False})
    status = _interrupted_status([sys.executable, "-u", "-c",
                                  "import sys; from coplug.plugins.cli import main; "
                                  "import coplug.plugins.files; print('ready', flush=True); "
                                  f"sys.exit(main(['solve', {str(path)!r}, '--solver', 'highs', "
                                  "'--json']))"], "ready", code=130)
    assert '"status": "interrupted"' in status


def test_ctrl_c_in_qubo_stops_scip_and_keeps_the_qubo_report() -> None:
    code, out, waited = _interrupt_after(
        ["qubo", "tsp", "--size", "60", "--method", "pgd", "--starts", "4"],
        "SCIP on the exact MIP", 6.0)
    assert code == 130 and waited < 30
    assert "best objective" in out and "SCIP stopped (interrupted)" in out


def test_qubo_names_a_scip_time_limit() -> None:
    out = subprocess.run([COPLUG, "qubo", "tsp", "--size", "45", "--time-limit", "0.3",
                          "--method", "pgd", "--starts", "4"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0
    assert "SCIP stopped (time_limit)" in out.stdout and "bound" in out.stdout


def test_knapsack_feasibility_is_exact_near_two_to_the_63() -> None:
    """weights @ x wrapped in int64: [2**62, 2**62] "fit" a capacity of 2**62."""
    inst = KnapsackInstance(np.array([1.0, 1.0]), np.array([2**62, 2**62]), 2**62)
    assert not inst.is_feasible([1, 1]) and inst.is_feasible([1, 0])
    with pytest.raises(InputError, match="n \\* r = 8 \\* 4611686018427387904 is too large"):
        random_knapsack(8, r=2**62)
    inst = random_knapsack(8, r=2**59, seed=1)
    assert inst.capacity == sum(int(w) for w in inst.weights) // 2
    # the r // 10 value offset belongs to strongly correlated instances only
    assert random_knapsack(15, kind="uncorrelated", r=2**59).n == 15
    with pytest.raises(InputError, match="too large"):
        random_knapsack(15, kind="strongly_correlated", r=2**59)


def test_knapsack_files_refuse_what_cannot_round_trip(tmp_path) -> None:
    with pytest.raises(InputError, match=r"values\[0\] = 1e\+20 does not fit"):
        save_knapsack(KnapsackInstance(np.array([1e20, 3.0]), np.array([1, 2]), 3),
                      tmp_path / "k.txt")
    path = tmp_path / "big.txt"
    path.write_text(f"2 3\n{2**64} 1\n3 2\n")
    with pytest.raises(InputError, match=rf"{path.name}:2: value and weight must fit"):
        load_knapsack(path)
    path.write_text(f"2 {2**63}\n1 1\n3 2\n")
    with pytest.raises(InputError, match="capacity must be a non-negative 64-bit integer"):
        load_knapsack(path)


def test_demo_only_must_name_a_section(capsys) -> None:
    assert main(["demo", "--only", "nosuch"]) == 2
    assert "sections: knapsack, lazy_tsp, benders, alternatives, qubo" in capsys.readouterr().err


def test_a_qubo_batch_larger_than_memory_is_refused_up_front() -> None:
    q = knapsack_qubo_safe(random_knapsack(8, seed=0))
    with pytest.raises(InputError, match="use fewer starts"):
        minimize(q, starts=10**12)


def test_stalled_starts_are_counted_apart_from_converged_ones() -> None:
    """Ties at exactly mu: 3 kicks left starts at degenerate vertices, all counted as
    converged; now they are "stalled", and more kicks certify them."""
    rng = np.random.default_rng(0)
    for _ in range(5):
        v, w = rng.choice([2.0, 1.0], 15), rng.integers(1, 4, 15)
    q = knapsack_qubo_safe(KnapsackInstance(v, w, int(w.sum() // 2)))
    few = minimize(q, method="adam", starts=100, seed=4, kicks=3)
    assert few.stats["stalled"] > 0
    assert few.stats["converged"] + few.stats["stalled"] == 100
    certified = sum(c.ok for c in few.certificates)
    assert certified >= few.stats["converged"] and certified < 100
    many = minimize(q, method="adam", starts=100, seed=4, kicks=10)
    assert many.stats == {**many.stats, "converged": 100, "stalled": 0}
    assert all(c.ok for c in many.certificates)
