"""The 24 noiseless BBOB functions (Hansen et al. 2009) written as programs in the grammar.

Definitions follow "Real-Parameter Black-Box Optimization Benchmarking 2009: Noiseless
Functions Definitions": T_osz, T_asy, Lambda^alpha, rotations R and Q, penalties f_pen.
Instances (x_opt, f_opt, R, Q, peaks) are drawn with numpy from (fid, instance, dim), not
COCO's own generator, so values match the definitions but not COCO's instance numbers.
T_osz uses log(|z| + 1e-300), which equals log|z| for every non-subnormal z and keeps
T_osz(0) = 0 finite; rounding uses floor(t + 0.5); sign tests use max/min.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import ortho_group

from coplug.formulations.bbo.grammar import MAX_DIM, MAX_TEXT, Program
from coplug.formulations.bbo.validate import load
from coplug.formulations.checks import check_memory
from coplug.plugins.errors import InputError
from coplug.plugins.value_equality import ValueEquality

NAMES = {
    1: "sphere", 2: "ellipsoid", 3: "rastrigin", 4: "bueche_rastrigin", 5: "linear_slope",
    6: "attractive_sector", 7: "step_ellipsoid", 8: "rosenbrock", 9: "rosenbrock_rotated",
    10: "ellipsoid_rotated", 11: "discus", 12: "bent_cigar", 13: "sharp_ridge",
    14: "different_powers", 15: "rastrigin_rotated", 16: "weierstrass", 17: "schaffers_f7",
    18: "schaffers_f7_ill", 19: "griewank_rosenbrock", 20: "schwefel", 21: "gallagher_101",
    22: "gallagher_21", 23: "katsuura", 24: "lunacek_bi_rastrigin",
}


@dataclass(frozen=True, eq=False)
class BBOBProblem(ValueEquality):
    """One BBOB function instance: its program, known optimizer and optimal value."""

    fid: int
    name: str
    program: Program
    x_opt: np.ndarray
    f_opt: float


def _num(v: float) -> str:
    return repr(float(v))


def _vec(v: np.ndarray) -> str:
    return "[" + ", ".join(_num(a) for a in v) + "]"


def _mat(m: np.ndarray) -> str:
    return "[" + ", ".join(_vec(row) for row in m) + "]"


class _Writer:
    """Accumulates let-bindings with fresh names and the BBOB building blocks."""

    def __init__(self, dim: int, rng: np.random.Generator) -> None:
        self.d, self.rng = dim, rng
        self.lines: list[str] = []
        self.i = np.arange(dim)
        self.frac = self.i / (dim - 1)

    def let(self, expr: str) -> str:
        name = f"t{len(self.lines)}"
        self.lines.append(f"{name} = {expr}")
        return name

    def text(self, body: str) -> str:
        return "\n".join([*self.lines, body]) + "\n"

    def rot(self) -> np.ndarray:
        """A random rotation, refused where its d x d matrix and its text cannot fit."""
        check_memory(40.0 * self.d * self.d, f"a {self.d} x {self.d} BBOB rotation",
                     "use a smaller dim for the rotated functions")
        return ortho_group.rvs(self.d, random_state=self.rng)

    def lam(self, alpha: float) -> np.ndarray:
        return alpha ** (0.5 * self.frac)

    def tosz(self, u: str) -> str:
        p, n = self.let(f"max({u}, 0.0)"), self.let(f"max(-{u}, 0.0)")
        lp, ln = self.let(f"log({p} + 1e-300)"), self.let(f"log({n} + 1e-300)")
        return self.let(f"{p} * exp(0.049 * (sin(10.0 * {lp}) + sin(7.9 * {lp}))) - "
                        f"{n} * exp(0.049 * (sin(5.5 * {ln}) + sin(3.1 * {ln})))")

    def tasy(self, u: str, beta: float) -> str:
        p = self.let(f"max({u}, 0.0)")
        return self.let(f"min({u}, 0.0) + {p} ** (1.0 + {_vec(beta * self.frac)} * sqrt({p}))")

    def rastrigin(self, z: str) -> str:
        return f"10.0 * ({_num(self.d)} - sum(cos(2.0 * pi * {z}))) + sum({z} ** 2)"

    def pen(self, u: str) -> str:
        return f"sum(max(abs({u}) - 5.0, 0.0) ** 2)"

    def shift_up(self) -> np.ndarray:
        """S with (S v)_i = v_{i+1} (last row zero)."""
        return np.eye(self.d, k=1)

    def first(self) -> np.ndarray:
        return (self.i == 0).astype(float)

    def all_but_last(self) -> np.ndarray:
        return (self.i < self.d - 1).astype(float)

    def rosenbrock(self, z: str) -> str:
        sz = self.let(f"{_mat(self.shift_up())} @ {z}")
        return (f"sum({_vec(self.all_but_last())} * (100.0 * ({z} ** 2 - {sz}) ** 2 + "
                f"({z} - 1.0) ** 2))")

    def xopt(self, radius: float = 4.0) -> np.ndarray:
        return self.rng.uniform(-radius, radius, self.d)


def _fopt(rng: np.random.Generator) -> float:
    """f_opt as in the definitions: a rounded Cauchy variate clipped to [-1000, 1000]."""
    value = np.round(100.0 * 100.0 * rng.normal() / rng.normal()) / 100.0
    return float(np.clip(value, -1000.0, 1000.0))


def _f1(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    return f"sum((x - {_vec(xo)}) ** 2)", xo


def _f2(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    z = w.tosz(f"(x - {_vec(xo)})")
    return f"sum({_vec(10.0 ** (6 * w.frac))} * {z} ** 2)", xo


def _f3(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    z = w.let(f"{_vec(w.lam(10))} * {w.tasy(w.tosz(f'(x - {_vec(xo)})'), 0.2)}")
    return w.rastrigin(z), xo


def _f4(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    xo[::2] = np.abs(xo[::2])
    t = w.tosz(f"(x - {_vec(xo)})")
    odd = np.where(w.i % 2 == 0, 9.0, 0.0)
    z = w.let(f"{_vec(10.0 ** (0.5 * w.frac))} * ({t} + {_vec(odd)} * max({t}, 0.0))")
    return f"{w.rastrigin(z)} + 100.0 * {w.pen('x')}", xo


def _f5(w: _Writer) -> tuple[str, np.ndarray]:
    sign = np.where(w.rng.uniform(size=w.d) < 0.5, -1.0, 1.0)
    xo = 5.0 * sign
    s = sign * 10.0 ** w.frac
    z = w.let(f"{_vec(sign)} * min({_vec(sign)} * x, 5.0)")
    return f"{_num(np.sum(5.0 * np.abs(s)))} - sum({_vec(s)} * {z})", xo


def _f6(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    m = w.rot() @ np.diag(w.lam(10)) @ w.rot()
    z = w.let(f"{_mat(m)} @ (x - {_vec(xo)})")
    u = w.let(f"sum({z} ** 2 + 9999.0 * max({_vec(np.sign(xo))} * {z}, 0.0) ** 2)")
    return f"{w.tosz(u)} ** 0.9", xo


def _f7(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    r, q = w.rot(), w.rot()
    zh = w.let(f"{_mat(np.diag(w.lam(10)) @ r)} @ (x - {_vec(xo)})")
    ind = w.let(f"min(1.0, -floor(0.5 - abs({zh})))")
    zt = w.let(f"{ind} * floor(0.5 + {zh}) + (1.0 - {ind}) * floor(0.5 + 10.0 * {zh}) / 10.0")
    z = w.let(f"{_mat(q)} @ {zt}")
    return (f"0.1 * max(sum({_vec(w.first())} * abs({zh})) / 10000.0, "
            f"sum({_vec(10.0 ** (2 * w.frac))} * {z} ** 2)) + {w.pen('x')}"), xo


def _f8(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt(3.0)
    s = max(1.0, np.sqrt(w.d) / 8.0)
    z = w.let(f"{_num(s)} * (x - {_vec(xo)}) + 1.0")
    return w.rosenbrock(z), xo


def _f9(w: _Writer) -> tuple[str, np.ndarray]:
    r = w.rot()
    s = max(1.0, np.sqrt(w.d) / 8.0)
    z = w.let(f"{_mat(s * r)} @ x + 0.5")
    return w.rosenbrock(z), r.T @ np.full(w.d, 0.5 / s)


def _f10(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    z = w.tosz(w.let(f"{_mat(w.rot())} @ (x - {_vec(xo)})"))
    return f"sum({_vec(10.0 ** (6 * w.frac))} * {z} ** 2)", xo


def _f11(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    z = w.tosz(w.let(f"{_mat(w.rot())} @ (x - {_vec(xo)})"))
    return f"sum({_vec(np.where(w.i == 0, 1e6, 1.0))} * {z} ** 2)", xo


def _f12(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    r = w.rot()
    t = w.tasy(w.let(f"{_mat(r)} @ (x - {_vec(xo)})"), 0.5)
    z = w.let(f"{_mat(r)} @ {t}")
    return f"sum({_vec(np.where(w.i == 0, 1.0, 1e6))} * {z} ** 2)", xo


def _f13(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    m = w.rot() @ np.diag(w.lam(10)) @ w.rot()
    z = w.let(f"{_mat(m)} @ (x - {_vec(xo)})")
    return (f"sum({_vec(w.first())} * {z} ** 2) + "
            f"100.0 * sqrt(sum({_vec(1.0 - w.first())} * {z} ** 2))"), xo


def _f14(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    z = w.let(f"{_mat(w.rot())} @ (x - {_vec(xo)})")
    return f"sqrt(sum(abs({z}) ** {_vec(2.0 + 4.0 * w.frac)}))", xo


def _f15(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    r, q = w.rot(), w.rot()
    t = w.tasy(w.tosz(w.let(f"{_mat(r)} @ (x - {_vec(xo)})")), 0.2)
    z = w.let(f"{_mat(r @ np.diag(w.lam(10)) @ q)} @ {t}")
    return w.rastrigin(z), xo


def _f16(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    r, q = w.rot(), w.rot()
    t = w.tosz(w.let(f"{_mat(r)} @ (x - {_vec(xo)})"))
    z = w.let(f"{_mat(r @ np.diag(w.lam(0.01)) @ q)} @ {t}")
    k = np.arange(12)
    f0 = float(np.sum(0.5**k * np.cos(np.pi * 3.0**k)))
    terms = " + ".join(f"{_num(0.5**j)} * cos({_num(2 * np.pi * 3.0**j)} * ({z} + 0.5))"
                       for j in k)
    inner = w.let(f"sum({terms}) / {_num(w.d)} - {_num(f0)}")
    return f"10.0 * {inner} ** 3 + {_num(10.0 / w.d)} * {w.pen('x')}", xo


def _schaffers(w: _Writer, cond: float) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    r, q = w.rot(), w.rot()
    t = w.tasy(w.let(f"{_mat(r)} @ (x - {_vec(xo)})"), 0.5)
    z = w.let(f"{_vec(w.lam(cond))} * ({_mat(q)} @ {t})")
    s = w.let(f"sqrt({z} ** 2 + ({_mat(w.shift_up())} @ {z}) ** 2)")
    mean = (f"sum({_vec(w.all_but_last())} * (sqrt({s}) + sqrt({s}) * "
            f"sin(50.0 * {s} ** 0.2) ** 2)) / {_num(w.d - 1)}")
    return f"({mean}) ** 2 + 10.0 * {w.pen('x')}", xo


def _f17(w: _Writer) -> tuple[str, np.ndarray]:
    return _schaffers(w, 10.0)


def _f18(w: _Writer) -> tuple[str, np.ndarray]:
    return _schaffers(w, 1000.0)


def _f19(w: _Writer) -> tuple[str, np.ndarray]:
    r = w.rot()
    s = max(1.0, np.sqrt(w.d) / 8.0)
    z = w.let(f"{_mat(s * r)} @ x + 0.5")
    sz = w.let(f"{_mat(w.shift_up())} @ {z}")
    si = w.let(f"100.0 * ({z} ** 2 - {sz}) ** 2 + ({z} - 1.0) ** 2")
    body = (f"{_num(10.0 / (w.d - 1))} * sum({_vec(w.all_but_last())} * "
            f"({si} / 4000.0 - cos({si}))) + 10.0")
    return body, r.T @ np.full(w.d, 0.5 / s)


def _f20(w: _Writer) -> tuple[str, np.ndarray]:
    sign = np.where(w.rng.uniform(size=w.d) < 0.5, -1.0, 1.0)
    xo = 4.2096874633 / 2.0 * sign
    two = 2.0 * np.abs(xo)
    xh = w.let(f"{_vec(2.0 * sign)} * x")
    zh = w.let(f"{xh} + 0.25 * ({_mat(np.eye(w.d, k=-1))} @ ({xh} - {_vec(two)}))")
    z = w.let(f"100.0 * ({_vec(w.lam(10))} * ({zh} - {_vec(two)}) + {_vec(two)})")
    return (f"-sum({z} * sin(sqrt(abs({z})))) / {_num(100.0 * w.d)} + 4.189828872724339 + "
            f"100.0 * {w.pen(f'{z} / 100.0')}"), xo


def _gallagher(w: _Writer, peaks: int, alpha1: float, box: float) -> tuple[str, np.ndarray]:
    r = w.rot()
    y = w.rng.uniform(-box, box, (peaks, w.d))
    y[0] *= 0.8
    weights = np.r_[10.0, 1.1 + 8.0 * np.arange(peaks - 1) / (peaks - 2)]
    alphas = np.r_[alpha1, w.rng.permutation(1000.0 ** (2.0 * np.arange(peaks - 1) / (peaks - 2)))]
    rx = w.let(f"{_mat(r)} @ x")
    best = ""
    for k in range(peaks):
        c = w.rng.permutation(w.lam(alphas[k])) / alphas[k] ** 0.25
        g = (f"{_num(weights[k])} * exp({_num(-0.5 / w.d)} * "
             f"sum({_vec(c)} * ({rx} - {_vec(r @ y[k])}) ** 2))")
        best = w.let(g if not best else f"max({best}, {g})")
    return f"{w.tosz(f'(10.0 - {best})')} ** 2 + {w.pen('x')}", y[0].copy()


def _f21(w: _Writer) -> tuple[str, np.ndarray]:
    return _gallagher(w, 101, 1000.0, 5.0)


def _f22(w: _Writer) -> tuple[str, np.ndarray]:
    return _gallagher(w, 21, 1000.0**2, 4.9)


def _f23(w: _Writer) -> tuple[str, np.ndarray]:
    xo = w.xopt()
    m = w.rot() @ np.diag(w.lam(100)) @ w.rot()
    z = w.let(f"{_mat(m)} @ (x - {_vec(xo)})")
    terms = []
    for j in range(1, 33):
        t = w.let(f"{_num(2.0**j)} * {z}")
        terms.append(f"abs({t} - floor({t} + 0.5)) / {_num(2.0**j)}")
    s = w.let(" + ".join(terms))
    c = 10.0 / w.d**2
    return (f"{_num(c)} * prod((1.0 + {_vec(w.i + 1.0)} * {s}) ** {_num(10.0 / w.d**1.2)}) - "
            f"{_num(c)} + {w.pen('x')}"), xo


def _f24(w: _Writer) -> tuple[str, np.ndarray]:
    mu0, d = 2.5, 1.0
    s = 1.0 - 1.0 / (2.0 * np.sqrt(w.d + 20.0) - 8.2)
    mu1 = -np.sqrt((mu0**2 - d) / s)
    sign = np.where(w.rng.uniform(size=w.d) < 0.5, -1.0, 1.0)
    m = w.rot() @ np.diag(w.lam(100)) @ w.rot()
    xh = w.let(f"{_vec(2.0 * sign)} * x")
    z = w.let(f"{_mat(m)} @ ({xh} - {_num(mu0)})")
    body = (f"min(sum(({xh} - {_num(mu0)}) ** 2), {_num(d * w.d)} + {_num(s)} * "
            f"sum(({xh} - {_num(mu1)}) ** 2)) + 10.0 * ({_num(w.d)} - sum(cos(2.0 * pi * {z})))"
            f" + 10000.0 * {w.pen('x')}")
    return body, mu0 / 2.0 * sign


_BUILDERS: dict[int, Callable[[_Writer], tuple[str, np.ndarray]]] = {
    1: _f1, 2: _f2, 3: _f3, 4: _f4, 5: _f5, 6: _f6, 7: _f7, 8: _f8, 9: _f9, 10: _f10,
    11: _f11, 12: _f12, 13: _f13, 14: _f14, 15: _f15, 16: _f16, 17: _f17, 18: _f18,
    19: _f19, 20: _f20, 21: _f21, 22: _f22, 23: _f23, 24: _f24,
}


def bbob_text(fid: int, dim: int, instance: int = 1) -> tuple[str, np.ndarray, float]:
    """Program text, x_opt and f_opt of BBOB function `fid` (1..24) at `dim` >= 2."""
    fid, dim, instance = _checked_ids(fid, dim, instance)
    rng = np.random.default_rng([fid, instance, dim])
    fopt = _fopt(rng)
    writer = _Writer(dim, rng)
    body, xopt = _BUILDERS[fid](writer)
    return writer.text(f"{body} + {_num(fopt)}"), np.asarray(xopt, dtype=float), fopt


def _checked_ids(fid: object, dim: object, instance: object) -> tuple[int, int, int]:
    """`fid`, `dim` and `instance` as ints, or an InputError naming the one that is wrong."""
    if not _whole(fid) or int(fid) not in _BUILDERS:  # 1.0 and True hashed as ids 1
        raise InputError(f"BBOB function id must be an integer 1..24, got {fid!r}")
    if not _whole(dim) or not 2 <= dim <= MAX_DIM:
        raise InputError(f"BBOB programs need an integer dim in [2, {MAX_DIM}], got {dim!r}")
    if not _whole(instance) or instance < 0:
        raise InputError(f"BBOB instance must be an integer >= 0 (it seeds the rotations and "
                         f"the optimum), got {instance!r}")
    return int(fid), int(dim), int(instance)


def _whole(value: object) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def bbob_problem(fid: int, dim: int, instance: int = 1) -> BBOBProblem:
    """BBOB function `fid` as a validated program on [-5, 5]^dim with its optimum; exempt
    from the |f| limit for proposals (bent cigar f12 reaches 1.4e12 in 10-D, legitimately)."""
    fid, dim, instance = _checked_ids(fid, dim, instance)
    text, xopt, fopt = _fitting_text(fid, dim, instance)
    return BBOBProblem(int(fid), NAMES[int(fid)], load(text, int(dim), max_abs=math.inf), xopt,
                       fopt)


_SEPARABLE = frozenset(range(1, 6))  # BBOB's separable group; the others write dim x dim
# matrices, at least 5 characters an entry ("0.0, ")
_MATRIX_CHARS = 4


def _fitting_text(fid: int, dim: int, instance: int) -> tuple[str, np.ndarray, float]:
    """`bbob_text`, or an InputError with the largest dim that fits where the program is
    over the parser's MAX_TEXT (a 5,000-D f15 had built 1.1 GB of text before the parser
    refused it, naming no dim)."""
    bounded = fid in _SEPARABLE or _MATRIX_CHARS * dim * dim <= MAX_TEXT
    built = bbob_text(fid, dim, instance) if bounded else None
    if built is None or len(built[0]) > MAX_TEXT:
        size = f"a program of {len(built[0]):,} characters" if built else "a longer program"
        growth = ("its vectors grow with dim" if fid in _SEPARABLE
                  else "its matrices grow as dim squared")
        raise InputError(f"BBOB f{fid} at dim {dim} is {size}, over the program limit of "
                         f"{MAX_TEXT:,} ({growth}): use a smaller dim (dim "
                         f"{_largest_dim(fid, dim, instance)} fits)")
    return built


def _largest_dim(fid: int, dim: int, instance: int) -> int:
    """A large dim below `dim` whose program text for BBOB `fid` fits MAX_TEXT, found by
    bisection on the texts themselves (their growth differs by function, and their random
    digits make lengths near the limit go up and down)."""
    low = 2  # fits (at most a few hundred characters); high does not
    high = dim if fid in _SEPARABLE else min(dim, math.isqrt(MAX_TEXT // _MATRIX_CHARS) + 1)
    while high - low > 1:
        middle = (low + high) // 2
        if len(bbob_text(fid, middle, instance)[0]) <= MAX_TEXT:
            low = middle
        else:
            high = middle
    return low


def parse_fids(spec: str) -> list[int]:
    """'1,3,15' or '1-5,20' or 'all' -> sorted BBOB ids."""
    if spec.strip() == "all":
        return sorted(_BUILDERS)
    out: set[int] = set()
    for part in spec.split(","):
        try:
            lo, _, hi = part.strip().partition("-")
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise InputError(f"bad BBOB id list {spec!r}; use e.g. 1,3,15 or 1-5") from None
        if last < first:
            raise InputError(f"BBOB id range {part.strip()!r} is reversed; write {last}-{first}")
        out.update(range(first, last + 1))
    bad = sorted(i for i in out if i not in _BUILDERS)
    if bad:
        raise InputError(f"BBOB ids must be 1..24, got {bad}")
    return sorted(out)
