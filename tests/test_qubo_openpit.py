"""Open pit: closure MIP, safe QUBO exact and trap-free, naive QUBO has infeasible minima."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from coplug.formulations.openpit import (
    BlockModel,
    openpit_mip,
    openpit_qubo_naive,
    openpit_qubo_safe,
    random_block_model,
)
from coplug.formulations.qubo_solvers import certify, gradient_scale, minimize
from coplug.plugins.bridge import solve
from coplug.plugins.errors import InputError

# Two waste rows over two ore rows: mining only the ore is the naive form's trap.
BAND = BlockModel(np.array([[-1.0] * 3, [-1.0] * 3, [5.0] * 3, [5.0] * 3]))


def test_safe_energy_is_value_and_only_pits_are_minima() -> None:
    q = openpit_qubo_safe(BAND)
    assert (q.diagonal() < 0).all()
    Z = np.array(list(itertools.product((0, 1), repeat=BAND.n)), dtype=float)
    energy = q.energy(Z)
    H = q.dense_Q()
    flips = (1 - 2 * Z) * (2 * Z @ H + q.c) + np.diag(H)  # exact single-flip changes
    feasible = np.array([BAND.is_feasible(z.astype(int)) for z in Z])
    value = Z @ BAND.flat_values
    assert np.allclose(energy[feasible], -value[feasible])
    assert (energy[~feasible] > -value[~feasible]).all()
    assert (flips[~feasible].min(axis=1) <= -q.margin + 1e-9).all()
    scale = gradient_scale(q)
    for z in Z[~feasible][::50]:
        assert not certify(q, z, scale=scale).local_min
    assert -energy[feasible].min() == pytest.approx(solve(openpit_mip(BAND)).objective)


def test_naive_form_has_an_infeasible_strict_local_minimum() -> None:
    q = openpit_qubo_naive(BAND)
    ore_only = np.array([0] * 6 + [1] * 6, dtype=float)
    assert not BAND.is_feasible(ore_only)
    cert = certify(q, ore_only)
    assert cert.local_min and cert.strict and cert.binary and not cert.feasible
    assert not certify(openpit_qubo_safe(BAND), ore_only).local_min


@pytest.mark.parametrize("method", ["pgd", "adam"])
@pytest.mark.parametrize("dims", [2, 3])
def test_every_start_ends_at_a_certified_pit(method: str, dims: int) -> None:
    bm = random_block_model(120, seed=dims, dims=dims)
    report = minimize(openpit_qubo_safe(bm), method=method, starts=24, seed=1)
    assert report.fraction_ok == 1.0
    assert report.best_objective(-1) <= solve(openpit_mip(bm)).objective + 1e-9


def test_arcs_follow_the_slope_pattern() -> None:
    bm = BlockModel(np.zeros((2, 3)))
    assert sorted(map(tuple, bm.arcs())) == [(0, 3), (0, 4), (1, 3), (1, 4), (1, 5), (2, 4), (2, 5)]
    assert len(BlockModel(np.zeros((2, 3, 3))).arcs()) == 9 + 4 * 6
    assert len(BlockModel(np.zeros((2, 3, 3)), pattern="box").arcs()) == 9 + 4 * 6 + 4 * 4
    with pytest.raises(InputError, match="pattern"):
        BlockModel(np.zeros((2, 3)), pattern="box")
    with pytest.raises(InputError, match="NaN"):
        BlockModel(np.array([[1.0, np.nan]]))
