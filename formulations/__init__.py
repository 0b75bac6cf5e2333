"""coplug.formulations: Pyomo models and instance generators; knows nothing of SCIP internals.

Modules (import them directly, e.g. ``from coplug.formulations.knapsack import knapsack_mip``):

- ``knapsack``, ``tsp``, ``openpit``: exact MIPs and relaxed QUBOs (naive and safe);
  ``qubo`` holds the QUBO object, ``qubo_solvers`` PGD/Adam on [0, 1]^n with certificates.
- ``assignment``: LAP generators, file loaders and the assignment Pyomo model.
- ``mip_families``: the PMVB paper's families (setcover, cauction, indset, fcnf, mknapsack,
  gisp).
- ``fair_graphs``, ``fair_metrics``, ``fair_clustering_mip``: fair graph clustering.
- ``games``, ``game_solvers``: constrained concave games and their barrier ascent.
- ``bbo``: evolved black-box benchmark programs, emitted as Pyomo problems.
- ``registry``: the names ``coplug solve NAME`` builds.
"""
