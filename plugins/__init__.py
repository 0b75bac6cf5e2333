"""coplug.plugins: solve Pyomo models with SCIP plugins or HiGHS, one results object back."""

from coplug.plugins import pyomo_factory as _pyomo_factory
from coplug.plugins.base import Plugin
from coplug.plugins.best_solutions import KBest, k_best
from coplug.plugins.bridge import available_solvers, register_backend, solve
from coplug.plugins.errors import (
    CoplugError,
    InputError,
    SolverError,
    SolverNotAvailableError,
    TimeLimitError,
    UnsupportedModelError,
)
from coplug.plugins.feasibility import infeasibilities
from coplug.plugins.iis import InfeasibleSubsystem, explain_infeasible
from coplug.plugins.lazy import LazyConstraints
from coplug.plugins.multiobjective import (
    Lexicographic,
    ParetoFront,
    ParetoPoint,
    lexicographic,
    pareto_front,
)
from coplug.plugins.on_solution import OnSolution
from coplug.plugins.progress import Progress
from coplug.plugins.ranging import Range, Sensitivity, sensitivity
from coplug.plugins.results import Result, Status
from coplug.plugins.solution_pool import PoolSolution, SolutionPool
from coplug.plugins.solver_race import race
from coplug.plugins.user_heuristic import UserHeuristic
from coplug.plugins.varmap import VarMap

_pyomo_factory.register()  # SolverFactory('coplug_scip' | 'coplug_highs' | 'coplug_lap')

__all__ = [
    "CoplugError",
    "InfeasibleSubsystem",
    "InputError",
    "KBest",
    "LazyConstraints",
    "Lexicographic",
    "OnSolution",
    "ParetoFront",
    "ParetoPoint",
    "Plugin",
    "PoolSolution",
    "Progress",
    "Range",
    "Result",
    "Sensitivity",
    "SolutionPool",
    "SolverError",
    "SolverNotAvailableError",
    "Status",
    "TimeLimitError",
    "UnsupportedModelError",
    "UserHeuristic",
    "VarMap",
    "available_solvers",
    "explain_infeasible",
    "explain_infeasible_file",
    "infeasibilities",
    "k_best",
    "lexicographic",
    "pareto_front",
    "race",
    "register_backend",
    "sensitivity",
    "solve",
    "solve_file",
]


def __getattr__(name: str):
    """`solve_file` and `explain_infeasible_file` on first use: they load HiGHS's and SCIP's
    file readers."""
    if name == "solve_file":
        from coplug.plugins.files import solve_file

        return solve_file
    if name == "explain_infeasible_file":
        from coplug.plugins.iis_file import explain_infeasible_file

        return explain_infeasible_file
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
