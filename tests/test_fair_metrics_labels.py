"""Balance and proportion deviation read any label type the estimator and the MIP accept:
group and cluster labels are recoded with np.unique, never used as array indices."""

from __future__ import annotations

import numpy as np
import pytest

from coplug.formulations.fair_metrics import balance, proportion_deviation
from coplug.plugins.errors import InputError

FAIR = [0, 1, 0, 1]


@pytest.mark.parametrize(
    "groups",
    [
        np.array([0, 0, 2, 2]),
        np.array([-1, -1, 1, 1]),
        np.array(["a", "a", "b", "b"]),
        np.array([0.5, 0.5, 2.5, 2.5]),
        [7, 7, 3, 3],
    ],
)
def test_fair_split_is_fair_for_any_group_labels(groups: object) -> None:
    assert balance(FAIR, groups) == pytest.approx(1.0)
    assert proportion_deviation(FAIR, groups) == pytest.approx(0.0)


def test_unfair_split_with_gapped_codes() -> None:
    groups = np.array([0, 0, 5, 5, 5, 5])
    labels = np.array(["x", "y", "x", "x", "y", "y"])
    # cluster x: one of group 0, two of group 5; cluster y likewise
    assert balance(labels, groups) == pytest.approx(0.5)
    assert proportion_deviation(labels, groups) == pytest.approx(0.0)
    lopsided = np.array([1.5, 1.5, 2.5, 2.5, 2.5, 2.5])
    assert balance(lopsided, groups) == pytest.approx(0.0)
    assert proportion_deviation(lopsided, groups) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("labels", "groups", "match"),
    [
        ([0, 1, 0], [0, 1, 0, 1], "one entry per node"),
        ([0, 1, 0, 1], [[0, 1], [0, 1]], "groups must be 1-D"),
        ([0, 1, 0, np.nan], [0, 1, 0, 1], "labels.*NaN"),
        ([0, 1, 0, 1], [0.0, np.nan, 1.0, 1.0], "groups.*NaN"),
        ([], [], "at least one node"),
    ],
)
def test_bad_labels_are_a_clear_error(labels: object, groups: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        balance(labels, groups)
    with pytest.raises(InputError, match=match):
        proportion_deviation(labels, groups)
