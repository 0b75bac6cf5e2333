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
from coplug.formulations.qubo_solvers import certify, minimize
from coplug.plugins.bridge import solve
from coplug.plugins.errors import InputError

# Two waste rows over two ore rows: mining only the ore is the naive form's trap.
BAND = BlockModel(np.array([[-1.0] * 3, [-1.0] * 3, [5.0] * 3, [5.0] * 3]))


def test_safe_energy_is_value_and_only_pits_are_minima() -> None:
    q = openpit_qubo_safe(BAND)
    assert (q.diagonal() < 0).all()
    best = np.inf
    for bits in itertools.product((0, 1), repeat=BAND.n):
        z = np.array(bits, dtype=float)
        x = q.decode(z)
        if BAND.is_feasible(x):
            assert q.energy(z) == pytest.approx(-BAND.value(x))
            best = min(best, q.energy(z))
        else:
            assert q.energy(z) > -BAND.value(x)
            assert q.flip_deltas(z).min() <= -q.margin + 1e-9
            assert not certify(q, z).local_min
    assert -best == pytest.approx(solve(openpit_mip(BAND)).objective)


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
