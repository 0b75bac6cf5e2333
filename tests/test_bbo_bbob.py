"""BBOB programs: f_opt at x_opt, no sample below f_opt, and independent numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from coplug.formulations.bbo.bbob import NAMES, _fopt, bbob_problem, parse_fids
from coplug.formulations.bbo.evaluate import numpy_evaluator
from coplug.plugins.errors import InputError


@pytest.mark.parametrize("dim", [2, 5])
@pytest.mark.parametrize("fid", sorted(NAMES))
def test_optimum_value_at_optimizer(fid: int, dim: int) -> None:
    problem = bbob_problem(fid, dim)
    f = numpy_evaluator(problem.program)
    assert np.all(np.abs(problem.x_opt) <= 5.0)
    assert f(problem.x_opt[None])[0] == pytest.approx(problem.f_opt, abs=1e-8)
    X = np.random.default_rng(fid).uniform(-5, 5, (300, dim))
    X = np.vstack([X, problem.x_opt + 1e-3 * np.random.default_rng(0).normal(size=(20, dim))])
    assert f(np.clip(X, -5, 5)).min() >= problem.f_opt - 1e-9


def _tosz(x: np.ndarray) -> np.ndarray:
    """T_osz exactly as published (sign, log|x|, c1/c2 by sign)."""
    xh = np.where(x != 0, np.log(np.abs(x), where=x != 0, out=np.zeros_like(x)), 0.0)
    c1 = np.where(x > 0, 10.0, 5.5)
    c2 = np.where(x > 0, 7.9, 3.1)
    return np.sign(x) * np.exp(xh + 0.049 * (np.sin(c1 * xh) + np.sin(c2 * xh)))


def _tasy(x: np.ndarray, beta: float) -> np.ndarray:
    d = x.shape[-1]
    e = 1 + beta * np.arange(d) / (d - 1) * np.sqrt(np.maximum(x, 0))
    return np.where(x > 0, np.abs(x) ** e, x)


def _lam(alpha: float, d: int) -> np.ndarray:
    return alpha ** (0.5 * np.arange(d) / (d - 1))


def _rastrigin(z: np.ndarray) -> np.ndarray:
    d = z.shape[-1]
    return 10 * (d - np.cos(2 * np.pi * z).sum(-1)) + (z**2).sum(-1)


def _reference(fid: int, dim: int, X: np.ndarray) -> np.ndarray:
    """Direct numpy formulas, drawing the instance in the same order as bbob.py."""
    rng = np.random.default_rng([fid, 1, dim])
    fopt = _fopt(rng)
    if fid == 3:
        xo = rng.uniform(-4, 4, dim)
        return _rastrigin(_lam(10, dim) * _tasy(_tosz(X - xo), 0.2)) + fopt
    if fid == 8:
        xo = rng.uniform(-3, 3, dim)
        z = max(1, np.sqrt(dim) / 8) * (X - xo) + 1
        return (100 * (z[:, :-1] ** 2 - z[:, 1:]) ** 2 + (z[:, :-1] - 1) ** 2).sum(-1) + fopt
    if fid == 15:
        xo = rng.uniform(-4, 4, dim)
        r = ortho_group.rvs(dim, random_state=rng)
        q = ortho_group.rvs(dim, random_state=rng)
        z = (r @ np.diag(_lam(10, dim)) @ q @ _tasy(_tosz((X - xo) @ r.T), 0.2).T).T
        return _rastrigin(z) + fopt
    if fid == 20:
        sign = np.where(rng.uniform(size=dim) < 0.5, -1.0, 1.0)
        xo = 4.2096874633 / 2 * sign
        xh = 2 * sign * X
        zh = xh.copy()
        zh[:, 1:] += 0.25 * (xh[:, :-1] - 2 * np.abs(xo[:-1]))
        z = 100 * (_lam(10, dim) * (zh - 2 * np.abs(xo)) + 2 * np.abs(xo))
        pen = (np.maximum(0, np.abs(z / 100) - 5) ** 2).sum(-1)
        return (-(z * np.sin(np.sqrt(np.abs(z)))).sum(-1) / (100 * dim) + 4.189828872724339
                + 100 * pen + fopt)
    raise AssertionError(fid)


@pytest.mark.parametrize("fid", [3, 8, 15, 20])
def test_matches_independent_reference(fid: int) -> None:
    dim = 4
    X = np.random.default_rng(7).uniform(-5, 5, (200, dim))
    X[0] = 0.0
    got = numpy_evaluator(bbob_problem(fid, dim).program)(X)
    np.testing.assert_allclose(got, _reference(fid, dim, X), rtol=1e-10, atol=1e-9)


def test_instances_differ_and_ids_parse() -> None:
    a, b = bbob_problem(1, 3, instance=1), bbob_problem(1, 3, instance=2)
    assert not np.allclose(a.x_opt, b.x_opt)
    assert parse_fids("1-3,15") == [1, 2, 3, 15]
    assert parse_fids("all") == list(range(1, 25))
    with pytest.raises(InputError, match="1..24"):
        parse_fids("0,25")
    with pytest.raises(InputError, match=r"dim in \[2, "):
        bbob_problem(1, 1)
