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
