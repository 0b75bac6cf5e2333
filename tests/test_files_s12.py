"""`.mps`/`.lp` files as Pyomo writes them: HiGHS reads an integer without upper bound
(`UI BOUND x 10E20`, a reader warning), both solvers agree; an upper-case `.GZ` is named."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyomo.environ as pyo
import pytest

from coplug.plugins import InputError, Status, solve_file


def _unbounded_integer(tmp_path: Path, name: str) -> Path:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeIntegers)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=2 * m.x + m.y >= 7.5)
    m.o = pyo.Objective(expr=3 * m.x + 2 * m.y)
    written = tmp_path / name.lower()  # Pyomo infers the format from a lower-case suffix
    m.write(str(written))
    return written.rename(tmp_path / name)


@pytest.mark.parametrize("name", ["model.mps", "model.MPS", "model.lp"])
def test_both_solvers_read_pyomos_files(tmp_path: Path, name: str) -> None:
    path = _unbounded_integer(tmp_path, name)
    results = [solve_file(path, solver=s) for s in ("scip", "highs")]
    assert all(r.status is Status.OPTIMAL for r in results)
    best = min(3 * x + 2 * max(0.0, 7.5 - 2 * x) for x in range(5))  # y fills what x leaves
    assert [r.objective for r in results] == pytest.approx([best, best])


def test_an_upper_case_gz_is_named(tmp_path: Path) -> None:
    plain = _unbounded_integer(tmp_path, "model.mps")
    packed = tmp_path / "model.MPS.GZ"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(InputError, match="lower-case .gz"):
        solve_file(packed, solver="scip")
    (tmp_path / "model.MPS.gz").write_bytes(packed.read_bytes())
    assert solve_file(tmp_path / "model.MPS.gz", solver="highs").status is Status.OPTIMAL


def test_a_file_scip_cannot_read_is_named_by_its_reader(tmp_path, capfd) -> None:
    from coplug.plugins import InputError, solve_file

    path = tmp_path / "brackets.lp"
    path.write_text("Minimize\n obj: x\nSubject To\n r[1]: x >= 3\nEnd\n")
    with pytest.raises(InputError, match=r"Syntax error in line 4"):
        solve_file(path, solver="scip")
    assert "reader_lp.c" not in capfd.readouterr().err  # SCIP's raw log stays out of sight
