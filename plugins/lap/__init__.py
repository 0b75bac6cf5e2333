"""coplug.plugins.lap: exact linear assignment (Jonker-Volgenant) with warm starts."""

from coplug.plugins.lap import cache_dir  # noqa: F401  (first: finds numba a cache folder)
from coplug.plugins.lap.heuristic import LapHeuristic
from coplug.plugins.lap.matchings import ranked_matchings
from coplug.plugins.lap.ranked import RankedAssignment, RankedAssignments, ranked_assignments
from coplug.plugins.lap.solver import LapSolution, counters, solve_lap

__all__ = ["LapHeuristic", "LapSolution", "RankedAssignment", "RankedAssignments", "counters",
           "ranked_assignments", "ranked_matchings", "solve_lap"]
