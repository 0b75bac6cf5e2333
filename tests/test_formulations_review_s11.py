"""Review round 11 of formulations/: TSPLIB reading, OR-Library names, QUBO CLI gaps."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from coplug.formulations.tsp import load_tsplib, tour_length
from coplug.plugins.errors import InputError

HEAD = "NAME : five\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EUC_2D\n"
NODES = "NODE_COORD_SECTION\n1 0 0\n2 3 4\n3 6 0\n4 3 -4\n5 0.5 0.5\n"


def _brute_force(dist: np.ndarray) -> float:
    """Shortest closed tour by enumerating every order of cities 1..n-1 after city 0."""
    n = dist.shape[0]
    return min(tour_length(dist, [0, *p]) for p in itertools.permutations(range(1, n)))


def test_comment_naming_a_section_is_a_comment(tmp_path: Path) -> None:
    """A COMMENT line ending in '..._SECTION' was taken for a data section (the file was
    refused with 'DIMENSION must come before the data sections')."""
    path = tmp_path / "five.tsp"
    path.write_text("COMMENT : coordinates in the NODE_COORD_SECTION\n" + HEAD.format(n=5)
                    + NODES + "EOF\n")
    inst = load_tsplib(path)
    assert inst.n == 5 and inst.dist[0, 1] == 5 and inst.dist[0, 4] == 1
    assert _brute_force(inst.dist) == 20


@pytest.mark.parametrize(("n", "message"), [
    (6, r":11: NODE_COORD_SECTION ends after 5 nodes, DIMENSION says 6"),
    (4, r"more than DIMENSION 4 nodes \(next line '5 0.5 0.5'\)"),
])
def test_dimension_and_node_count_disagreeing_is_named(tmp_path: Path, n: int,
                                                       message: str) -> None:
    """DIMENSION 6 with 5 nodes said "expected 'id x y', got 'EOF'"; DIMENSION 4 with 5
    said "expected 'KEY : VALUE', got '5 0.5 0.5'": neither named DIMENSION."""
    path = tmp_path / "five.tsp"
    path.write_text(HEAD.format(n=n) + NODES + "EOF\n")
    with pytest.raises(InputError, match=message):
        load_tsplib(path)


def test_short_coordinate_section_at_the_end_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "five.tsp"
    path.write_text(HEAD.format(n=6) + NODES)
    with pytest.raises(InputError, match=r":10: NODE_COORD_SECTION ends after 5 nodes"):
        load_tsplib(path)


def test_gap_to_scip_ignores_rounding_in_its_objective() -> None:
    """SCIP reads a 291 tour as 291.00000000000006, and `coplug qubo tsp --size 7 --seed 5`
    printed 'gap -0.00%' (the QUBO tour 'better' than the proven optimum)."""
    from coplug.formulations.qubo_cli import _pct, gap

    assert _pct(gap(291.0, 291.00000000000006, 1)) == "0.00%"
    assert _pct(gap(34.300000000000004, 34.3, -1)) == "0.00%"
    assert gap(300.0, 291.0, 1) == pytest.approx(9 / 291)
    assert gap(290.0, 291.0, 1) < 0 and gap(30.0, 34.3, -1) > 0


def test_cli_tsp_gap_is_not_negative(capsys: pytest.CaptureFixture[str]) -> None:
    from coplug.plugins.cli import main

    assert main(["qubo", "tsp", "--size", "7", "--seed", "5", "--starts", "100"]) == 0
    out = capsys.readouterr().out
    assert "SCIP optimum     291" in out and "gap -" not in out


def test_or_library_assign_n_files_are_read(tmp_path: Path) -> None:
    """OR-Library ships assign100.txt ... assign800.txt beside assignp800.txt ...; only
    assignp* was read as OR-Library, so assign100.txt was refused ('row has 4 entries, the
    first row has 1'). assignment_costs.txt stays a plain matrix."""
    from coplug.formulations.assignment import assignment_model, load_costs
    from coplug.plugins import solve

    path = tmp_path / "assign3.txt"
    path.write_text(" 3\n 4 1 3 2\n 0 5\n 3 2 2\n")
    c = load_costs(path)
    assert c.tolist() == [[4, 1, 3], [2, 0, 5], [3, 2, 2]]
    best = min(sum(c[i, p[i]] for i in range(3)) for p in itertools.permutations(range(3)))
    assert solve(assignment_model(c), solver="highs").objective == pytest.approx(best) == 5
    plain = tmp_path / "assignment_costs.txt"
    plain.write_text("3 1 2 5 4\n6 7 8 2 1\n")
    assert load_costs(plain).shape == (2, 5)


@pytest.mark.parametrize("solver", ["foo", "lap"])
def test_game_cli_refuses_an_unusable_certifier_before_the_ascent(
        solver: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`coplug game resource_allocation --solver foo` ran the whole ascent (20000 iterations,
    about 5 s) and only then failed in certify with 'unknown solver'."""
    from coplug.plugins.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["game", "resource_allocation", "--solver", solver])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --solver: invalid choice" in err and "iterations" not in err
