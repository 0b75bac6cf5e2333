"""Review s12: integral rows, MIP starts, the SCIP walker, files and the registry, probed
as a demanding Pyomo/SCIP user would."""

from __future__ import annotations

from pathlib import Path

import pytest

from coplug.plugins.errors import InputError
from coplug.plugins.files import solve_file


@pytest.mark.parametrize("text", ["", "\\ only a comment\n", "Minimize\n obj:\nEnd\n"])
def test_a_file_without_variables_is_refused_by_both_solvers(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.lp"
    path.write_text(text)
    for solver in ("scip", "highs"):  # HiGHS answered 'unknown' without a word
        with pytest.raises(InputError, match="defines no variables"):
            solve_file(path, solver=solver)

