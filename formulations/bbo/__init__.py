"""coplug.formulations.bbo: evolved black-box-optimization benchmark programs (EoB).

Its home is `formulations` because a benchmark program *is* a problem formulation: a safe
expression over a box that compiles to a Pyomo model (and to numpy/torch evaluators), so
SCIP can certify its global optimum. One job per module: grammar (parse/print), compile
(evaluators, Pyomo, exports), bbob (the 24 BBOB functions), features (ELA), portfolio
(solvers, differentiation), proposers (symbolic, LLM), evolve (NSGA-II), certify (SCIP),
cli and demo. Names below load their module on first use, keeping `coplug` start-up fast
(the functions `evolve.evolve` and `certify.certify` share their module's name: import
them from the module).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Program": "grammar", "ProgramError": "grammar", "parse": "grammar", "to_text": "grammar",
    "load": "compile", "numpy_evaluator": "compile", "torch_evaluator": "compile",
    "to_pyomo": "compile", "pyomo_script": "compile", "program_to_json": "compile",
    "program_from_json": "compile", "write_program": "compile",
    "bbob_problem": "bbob", "BBOBProblem": "bbob",
    "as_box_function": "features", "normalized_features": "features",
    "feature_distance": "features",
    "run_portfolio": "portfolio", "differentiation": "portfolio", "SOLVERS": "portfolio",
    "SymbolicProposer": "proposers", "LLMProposer": "proposers", "LLMConfig": "proposers",
    "EvolutionConfig": "evolve", "Certificate": "certify",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the defining module lazily (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
    return getattr(module, name)
