"""The suite's per-test time limit (tests/conftest.py) stops a compiled loop that never
returns, which holds the GIL and so escapes any Python-level timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_test_stuck_in_a_compiled_loop_fails_by_name(tmp_path: Path) -> None:
    (tmp_path / "test_spin.py").write_text(textwrap.dedent("""
        import numba

        @numba.njit
        def spin(n):
            i = 0
            while n > 0:
                i += 1
            return i

        def test_spin():
            spin(1)
    """))
    env = dict(os.environ, PYTHONPATH=str(HERE), COPLUG_TEST_TIME_LIMIT_S="3")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider",
         "-n", "1", str(tmp_path / "test_spin.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "crashed while running 'test_spin.py::test_spin'" in run.stdout
