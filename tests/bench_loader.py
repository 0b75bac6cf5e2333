"""Load benchmarks/<name>.py as a module for the benchmark tests (the folder is no package)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:  # benchmarks import their shared helpers by name
    sys.path.insert(0, str(BENCHMARKS))


@functools.cache
def bench(name: str) -> ModuleType:
    """Import benchmarks/<name>.py as a module, once per test session."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
