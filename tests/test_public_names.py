"""coplug.plugins' public names: each one is there, and none hides a module of the package
(`import coplug.plugins.sensitivity as m` bound the exported function, not the module)."""

from __future__ import annotations

import pkgutil

import coplug.plugins


def test_every_public_name_exists():
    missing = [name for name in coplug.plugins.__all__ if not hasattr(coplug.plugins, name)]
    assert missing == []


def test_no_public_name_is_also_a_module_of_the_package():
    modules = {info.name for info in pkgutil.iter_modules(coplug.plugins.__path__)}
    assert {"bridge", "ranging", "best_solutions", "solver_race"} <= modules
    assert sorted(set(coplug.plugins.__all__) & modules) == []
