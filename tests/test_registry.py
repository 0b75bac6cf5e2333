"""Every named formulation (`coplug solve NAME`) builds a model with variables."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from coplug.formulations import registry
from coplug.plugins import InputError


@pytest.mark.parametrize("name", sorted(registry.names()))
def test_every_registered_name_builds(name: str) -> None:
    model = registry.build(name, 8, seed=1)
    assert isinstance(model, pyo.Block)
    assert next(model.component_data_objects(pyo.Var), None) is not None


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match="knapsack"):
        registry.build("nosuch", 5)
