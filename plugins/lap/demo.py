"""Demo section: cold JV vs RowDualNet-warm JV vs scipy on generated instances (offline)."""

from __future__ import annotations

import time

import numpy as np


def lap_section() -> None:
    """Geometric (tracking, N=1500) and low-rank (N=1000) instances: times, augmentations,
    one optimum; then the 100 best assignments and matchings of a tracking instance, and
    of a gated frame of 30,000 tracks kept sparse."""
    from scipy.optimize import linear_sum_assignment

    from coplug.formulations.assignment import gated, generate
    from coplug.learned.rowdualnet import load
    from coplug.plugins.lap.matchings import ranked_matchings
    from coplug.plugins.lap.ranked import ranked_assignments
    from coplug.plugins.lap.solver import solve_lap

    model = load()
    # compile before timing (low-rank: predicted at any size, its column reduction drops)
    solve_lap(generate("low_rank", 128, seed=0), predictor=model)
    for name, n in (("geometric", 1500), ("low_rank", 1000)):
        c = generate(name, n, seed=7)
        cold = solve_lap(c)
        warm = solve_lap(c, predictor=model)
        start = time.perf_counter()
        r, k = linear_sum_assignment(c)
        scipy_s = time.perf_counter() - start
        assert np.isclose(cold.cost, c[r, k].sum()) and np.isclose(warm.cost, cold.cost)
        print(f"{name:9s} N={n}  cold JV {cold.time:.3f}s ({cold.augmentations} augmentations)"
              f"  warm JV {warm.time:.3f}s incl. inference and sparse refinement "
              f"({warm.augmentations}; prediction {warm.info['prediction']})"
              f"  scipy {scipy_s:.3f}s  objective {cold.cost:.4f} (all equal)")
    c = generate("geometric", 300, seed=7)
    ranking = ranked_assignments(c, k=100)
    assert ranking.status == "k_found" and np.isclose(ranking.costs[0], solve_lap(c).cost)
    print(f"ranked    N=300  the 100 best assignments (Murty, warm-started cells) in "
          f"{ranking.info['time']:.3f}s, {ranking.info['solved_cells']} cells solved; costs "
          f"{ranking.costs[0]:.4f}, {ranking.costs[1]:.4f}, ... {ranking.costs[-1]:.4f}")
    misses = ranked_matchings(c, k=100, row_cost=0.01, col_cost=0.01)
    matched = len(misses.solutions[0].row_ind)
    print(f"matched   N=300  the 100 best matchings, a miss or false alarm at 0.01 each, in "
          f"{misses.info['time']:.3f}s; the best matches {matched} of 300 tracks, cost "
          f"{misses.costs[0]:.4f}")
    frame = gated(30_000, gate=8, seed=7)
    sparse_ranking = ranked_assignments(frame, k=100)
    assert sparse_ranking.status == "k_found"
    assert np.isclose(sparse_ranking.costs[0], solve_lap(frame).cost)
    print(f"gated     N=30000  {frame.nnz} gated pairs (a dense copy would take 7.2 GB): the "
          f"100 best assignments ranked sparse in {sparse_ranking.info['time']:.2f}s; best "
          f"{sparse_ranking.costs[0]:.6f}, the 100th "
          f"{sparse_ranking.costs[-1] - sparse_ranking.costs[0]:.2e} above it")
