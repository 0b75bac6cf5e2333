"""RowDualNet: predict LAP row duals from per-row features, independent of N.

Each row is described by sorted-cost statistics (its k smallest costs, the k smallest
after column reduction, spread), scaled by an instance-level local cost scale, so one
small MLP serves every size without O(N^2) memory. Predicted row duals become feasible
duals through the Min-Trick v_j = min_i (c_ij - u_i) inside the solver.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from numba import njit
from torch import nn

from coplug.learned.checkpoint_io import atomic_write, atomic_write_text, strict_json
from coplug.plugins.errors import InputError
from coplug.plugins.lap.solver import dense_costs

K_SMALLEST = 8
K_REDUCED = 4
N_FEATURES = (K_SMALLEST - 1) + 1 + K_REDUCED + 2
CHECKPOINT = "rowdualnet.pt"


@njit(cache=True)
def _smallest(row, k, out):
    """The k smallest entries of `row`, ascending, into out[:k] (k <= len(row))."""
    for t in range(k):
        out[t] = np.inf
    for x in row:
        if x < out[k - 1]:
            t = k - 1
            while t > 0 and out[t - 1] > x:
                out[t] = out[t - 1]
                t -= 1
            out[t] = x


@njit(cache=True)
def _raw_features(c, k, kr):
    """Per row: k smallest costs, kr smallest column-reduced costs, mean and std."""
    n, m = c.shape
    k = min(k, m)
    kr = min(kr, m)
    small = np.empty((n, k))
    reduced = np.empty((n, kr))
    mean = np.empty(n)
    std = np.empty(n)
    colmin = np.full(m, np.inf)
    buf = np.empty(m)
    for i in range(n):
        s = 0.0
        s2 = 0.0
        for j in range(m):
            x = np.float64(c[i, j])
            s += x
            s2 += x * x
            if x < colmin[j]:
                colmin[j] = x
        mean[i] = s / m
        std[i] = np.sqrt(max(s2 / m - mean[i] * mean[i], 0.0))
        _smallest(c[i], k, small[i])
    for i in range(n):
        for j in range(m):
            buf[j] = c[i, j] - colmin[j]
        _smallest(buf, kr, reduced[i])
    return small, reduced, mean, std


# Features beyond this (rows whose minima differ by far more than the local scale) are
# clipped: the float32 network input must stay finite, and such rows are far apart anyway.
FEATURE_CLIP = 1e30


def row_features(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(features (n, N_FEATURES) float32, row minima, local scale) of a dense cost matrix.

    The scale is the mean gap between a row's 1st and k-th smallest cost, so features of
    uniform, geometric or road costs look alike whatever N is.
    """
    if sp.issparse(c):
        raise InputError("RowDualNet needs a dense cost matrix, got a scipy.sparse matrix "
                         "(solve_lap solves sparse costs cold)")
    c = dense_costs(c)
    if c.shape[0] == 0 or c.shape[1] == 0:
        raise InputError(f"row features need a non-empty 2-D cost matrix, got shape {c.shape}")
    n = c.shape[0]
    small, reduced, mean, std = _raw_features(c, K_SMALLEST, K_REDUCED)
    bad = ~(np.isfinite(mean) & np.isfinite(std) & np.isfinite(small[:, 0]))  # NaN/inf/overflow
    if bad.any() and np.isfinite(c).all():
        # finite costs whose squares overflow (|c| > 1e154): the features are scale-free, so
        # compute them on c / 2^e (exact) and scale minima and scale back
        power = 2.0 ** np.ceil(np.log2(np.abs(c).max()))
        feats, s1, scale = row_features(c / power)
        return feats, s1 * power, scale * power
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"cost row {i} has a NaN or infinite entry; RowDualNet needs finite "
                         "costs")
    small = _pad_columns(small, K_SMALLEST)
    reduced = _pad_columns(reduced, K_REDUCED)
    s1 = small[:, 0]
    scale = float(np.mean(small[:, -1] - s1))
    if not scale > 0:
        scale = float(np.std(c)) or 1.0
    feats = np.empty((n, N_FEATURES), dtype=np.float32)
    with np.errstate(over="ignore"):  # clipped below
        feats[:, : K_SMALLEST - 1] = (small[:, 1:] - s1[:, None]) / scale
        feats[:, K_SMALLEST - 1] = (s1 - s1.mean()) / scale
        feats[:, K_SMALLEST : K_SMALLEST + K_REDUCED] = reduced / scale
        feats[:, -2] = np.log1p(np.maximum(mean - s1, 0.0) / scale)
        feats[:, -1] = np.log1p(std / scale)
    np.clip(feats, -FEATURE_CLIP, FEATURE_CLIP, out=feats)
    return feats, s1, scale


def _pad_columns(a: np.ndarray, k: int) -> np.ndarray:
    """Repeat the last column up to k columns (for matrices narrower than k)."""
    if a.shape[1] >= k:
        return a
    return np.concatenate([a, np.repeat(a[:, -1:], k - a.shape[1], axis=1)], axis=1)


class RowDualNet(nn.Module):
    """MLP from one row's features to its dual offset above the row minimum (in scale units)."""

    def __init__(self, n_features: int = N_FEATURES, hidden: int = 64) -> None:
        super().__init__()
        self.n_features = n_features
        self.hidden = hidden
        self.net = nn.Sequential(
            nn.Linear(n_features, hidden),
            nn.SiLU(),
            nn.Linear(hidden, hidden),
            nn.SiLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Offsets (n,) for features (n, n_features)."""
        return self.net(x).squeeze(-1)

    def predict_duals(self, c: np.ndarray) -> np.ndarray:
        """Row duals u for a dense cost matrix (min-cost sense), as float64."""
        feats, s1, scale = row_features(c)
        with torch.no_grad():
            offset = self(torch.from_numpy(feats)).double().numpy()
        return s1 + scale * offset


def min_trick(c: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Column duals v_j = min_i (c_ij - u_i), so u_i + v_j <= c_ij everywhere (up to one
    rounding of c_ij - u_i; `solve_lap`'s certificate allows for it)."""
    c = np.asarray(c, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    if c.ndim != 2 or u.shape != (c.shape[0],):
        raise InputError(f"min_trick needs a 2-D cost matrix and one dual per row, got shapes "
                         f"{c.shape} and {u.shape}")
    return (c - u[:, None]).min(axis=0)


def save(model: RowDualNet, path: str | Path, meta: dict) -> None:
    """Write the weights to `path` and how they were trained to the sibling .json.

    Both files are written atomically (temporary file + rename), so an interrupt never
    leaves a corrupt checkpoint in place of a good one; the JSON never holds NaN.
    """
    path = Path(path)
    text = strict_json(meta, indent=2, sort_keys=True)
    blob = {"state_dict": model.state_dict(), "n_features": model.n_features,
            "hidden": model.hidden}
    atomic_write(path, lambda tmp: torch.save(blob, tmp))
    atomic_write_text(path.with_suffix(".json"), text)


def load(path: str | Path | None = None) -> RowDualNet:
    """Load a checkpoint (default: the one shipped in coplug.models)."""
    if path is None:
        return _shipped()
    path = Path(path)
    if not path.exists():
        raise InputError(f"RowDualNet checkpoint not found: {path}")
    if not path.is_file():
        raise InputError(f"RowDualNet checkpoint {path} is not a file")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # zip, pickle, EOF and struct errors all mean a bad file
        raise InputError(f"RowDualNet checkpoint {path} is unreadable or corrupt: "
                         f"{type(exc).__name__}: {exc}") from exc
    return _model_from_blob(blob, path)


def _model_from_blob(blob: object, path: Path) -> RowDualNet:
    """Rebuild the network from a loaded checkpoint dict, naming the file if it is not one."""
    if not isinstance(blob, dict) or not {"state_dict", "n_features", "hidden"} <= set(blob):
        raise InputError(f"RowDualNet checkpoint {path} lacks state_dict, n_features or "
                         "hidden; it was not written by rowdualnet.save")
    try:
        model = RowDualNet(int(blob["n_features"]), int(blob["hidden"]))
        model.load_state_dict(blob["state_dict"])
    except (TypeError, ValueError, RuntimeError, AttributeError) as exc:
        raise InputError(f"RowDualNet checkpoint {path} does not match the network: "
                         f"{type(exc).__name__}: {exc}") from exc
    if model.n_features != N_FEATURES:
        raise InputError(f"RowDualNet checkpoint {path} expects {model.n_features} features per "
                         f"row, but row_features computes {N_FEATURES}")
    model.eval()
    return model


@lru_cache(maxsize=1)
def _shipped() -> RowDualNet:
    """The packaged checkpoint, loaded once per process."""
    ref = resources.files("coplug.models").joinpath(CHECKPOINT)
    with resources.as_file(ref) as path:
        return load(path)
