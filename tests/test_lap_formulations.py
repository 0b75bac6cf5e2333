"""Assignment instances: seeded generators, loaders with clear errors, the Pyomo builder and
the `assignment` registry entry."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations import registry
from coplug.formulations.assignment import (
    GENERATORS,
    assignment_model,
    gated,
    generate,
    load_costs,
    validate_costs,
)
from coplug.plugins import InputError, solve


@pytest.mark.parametrize("name", list(GENERATORS))
def test_generators_are_seeded_finite_and_rectangular_capable(name: str) -> None:
    a = generate(name, 40, seed=3)
    assert a.shape == (40, 40) and np.isfinite(a).all() and (a >= 0).all()
    assert np.array_equal(a, generate(name, 40, seed=3))
    assert not np.array_equal(a, generate(name, 40, seed=4))
    b = generate(name, 30, seed=3, m=45, dtype=np.float32)
    assert b.shape == (30, 45) and b.dtype == np.float32


def test_geometric_is_a_tracking_problem() -> None:
    c = generate("geometric", 200, seed=0, noise=0.05)
    nearest = c.argmin(axis=1)
    assert (c.argmin(axis=0)[nearest] == np.arange(200)).mean() > 0.8  # mostly mutual nearest


def test_gated_frame_is_sparse_seeded_and_assignable() -> None:
    from scipy.optimize import linear_sum_assignment

    c = gated(300, gate=5, seed=2)
    assert c.shape == (300, 300) and 5 * 300 <= c.nnz <= 6 * 300
    assert (np.diff(c.indptr) >= 5).all() and (c.data >= 0).all()
    assert np.array_equal(c.toarray(), gated(300, gate=5, seed=2).toarray())
    dense = np.where(c.toarray() > 0, c.toarray(), np.inf)
    rows, cols = linear_sum_assignment(dense)  # raises when no assignment exists
    full = generate("geometric", 300, seed=2)
    assert np.isfinite(dense[rows, cols]).all() and dense[rows, cols].sum() < full.mean() * 300
    for bad, message in (({"gate": 0}, "gate"), ({"noise": -1.0}, "noise"),
                         ({"seed": -1}, "seed")):
        with pytest.raises(InputError, match=message):
            gated(10, **bad)


def test_unknown_generator_and_bad_size() -> None:
    with pytest.raises(InputError, match="unknown generator"):
        generate("nope", 5)
    with pytest.raises(InputError, match="n <= m"):
        generate("uniform", 5, m=3)


def test_npy_and_csv_round_trip(tmp_path) -> None:
    c = generate("uniform", 5, seed=1)
    np.save(tmp_path / "c.npy", c)
    np.savetxt(tmp_path / "c.csv", c, delimiter=",")
    assert np.array_equal(load_costs(tmp_path / "c.npy"), c)
    assert np.allclose(load_costs(tmp_path / "c.csv"), c)


def test_orlib_file(tmp_path) -> None:
    path = tmp_path / "assignp_tiny.txt"
    path.write_text(" 3\n 1 2 3 4\n 5 6\n 7 8 9\n")
    c = load_costs(path)
    assert c.shape == (3, 3) and c[2, 2] == 9
    assert solve(assignment_model(c), solver="lap").objective == pytest.approx(15)
    path.write_text(" 3\n 1 2 3 4\n 5 6\n 7 8\n")
    with pytest.raises(InputError, match="expected 3x3 = 9 costs after n = 3, found 8"):
        load_costs(path)
    path.write_text("3\n1 2 x\n")
    with pytest.raises(InputError, match=":2: not a number"):
        load_costs(path)
    for size in ("nan", "inf"):
        path.write_text(f"{size}\n1 2\n")
        with pytest.raises(InputError, match="first number must be the size"):
            load_costs(path)


def test_files_named_assign_are_read_by_their_extension(tmp_path) -> None:
    """Only assign*.txt is OR-Library; assignments.csv is a CSV matrix, and a comma in a
    comment does not make a whitespace-separated file comma-separated."""
    path = tmp_path / "assignments.csv"
    path.write_text("4,1\n2,3\n")
    assert load_costs(path).tolist() == [[4, 1], [2, 3]]
    path = tmp_path / "spaces.txt"
    path.write_text("# costs, row by row\n4 1\n2 3\n")
    assert load_costs(path).tolist() == [[4, 1], [2, 3]]


def test_unreadable_cost_files_are_named(tmp_path) -> None:
    with pytest.raises(InputError, match="not a file"):
        load_costs(tmp_path)
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"1,2\n3,\xe9\n")
    with pytest.raises(InputError, match="not a readable text file"):
        load_costs(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,2\n3,x\n", ":2: non-numeric"),
        ("1,2\n3\n", ":2: row has 1 entries"),
        ("1,nan\n3,4\n", "is nan"),
        ("1,inf\n3,4\n", "is inf"),
        ("", "no cost rows"),
    ],
)
def test_bad_csv_is_named(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_costs(path)


def test_square_required_and_missing_file(tmp_path) -> None:
    with pytest.raises(InputError, match="square"):
        validate_costs(np.ones((2, 3)), square=True)
    with pytest.raises(InputError, match="not found"):
        load_costs(tmp_path / "missing.npy")


def test_registry_entry_solves_by_lap_and_scip_alike() -> None:
    assert "assignment" in registry.names()
    model = registry.build("assignment", 8, seed=2)
    lap = solve(model, solver="lap").objective
    assert solve(model, solver="scip").objective == pytest.approx(lap)


@pytest.mark.parametrize("name,header", [("costs.csv", ""), ("assign3.txt", "3\n")])
def test_an_integer_float64_rounds_is_refused_in_a_text_file(tmp_path, name, header):
    """18014398509481987 read as ...88 (2**54 + 3): the matrix solved was not the file's,
    while an int64 array with it is refused."""
    rows = [[3, 5, 5], [2**54 + 3, 6, 2**54 + 4], [2**54 + 5, 7, 2**54 + 5]]
    sep = "," if name.endswith(".csv") else " "
    path = tmp_path / name
    path.write_text(header + "\n".join(sep.join(map(str, row)) for row in rows) + "\n")
    with pytest.raises(InputError, match=r"the integer 18014398509481987 rounds to "
                                         r"18014398509481988"):
        load_costs(path)
    exact = [[3, 5, 5], [2**54 + 4, 6, 2**54 + 4], [2**54 + 8, 7, 2**54 + 8]]  # float64's own
    path.write_text(header + "\n".join(sep.join(map(str, row)) for row in exact) + "\n")
    assert load_costs(path)[1, 0] == 2**54 + 4
