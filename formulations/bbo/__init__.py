"""coplug.formulations.bbo: evolved black-box-optimization benchmark programs (EoB).

Its home is `formulations` because a benchmark program *is* a problem formulation: a safe
expression over a box that compiles to a Pyomo model (and to numpy/torch evaluators), so
SCIP can certify its global optimum. One job per module: grammar (parse/print), evaluate
(numpy/torch evaluators), validate (load: reject programs unsafe on their box), intervals
(interval bounds), pyomo_model (the Pyomo model), export (script, JSON, Pyomo's file
formats), bbob (the 24 BBOB functions), features (ELA), portfolio (solvers,
differentiation), proposers (the proposer interface, acceptance, the offline symbolic
proposer), llm_proposer (the LLM proposer over an OpenAI-compatible chat endpoint), evolve
(NSGA-II), certify (SCIP), cli and demo.
Names below load their module on first use, keeping `coplug` start-up fast (the functions
`validate.validate`, `evolve.evolve` and `certify.certify` share their module's name:
import them from the module).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Program": "grammar", "ProgramError": "grammar", "parse": "grammar", "to_text": "grammar",
    "load": "validate", "numpy_evaluator": "evaluate", "torch_evaluator": "evaluate",
    "to_pyomo": "pyomo_model", "pyomo_script": "export", "program_to_json": "export",
    "program_from_json": "export", "write_program": "export",
    "bbob_problem": "bbob", "BBOBProblem": "bbob",
    "as_box_function": "features", "normalized_features": "features",
    "feature_distance": "features",
    "run_portfolio": "portfolio", "differentiation": "portfolio", "SOLVERS": "portfolio",
    "SymbolicProposer": "proposers", "LLMProposer": "llm_proposer", "LLMConfig": "llm_proposer",
    "EvolutionConfig": "evolve", "Certificate": "certify",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the defining module lazily (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
    return getattr(module, name)
