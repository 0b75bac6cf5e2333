"""A folder numba can keep compiled kernels in, wherever coplug is installed (found on
import, before the lap modules decorate their kernels)."""

from __future__ import annotations

import os
import tempfile


def _probe() -> int:
    """A kernel to decorate: numba picks its cache folder at decoration, without compiling."""
    return 0


def ensure_numba_cache_dir() -> None:
    """Give numba a per-user temporary cache folder when it finds none it can write (a
    read-only install and no writable home, as in a container): `@njit(cache=True)` then
    raised "no locator available" at import, so no assignment code could load."""
    from numba import njit
    from numba.core import config

    try:
        njit(cache=True)(_probe)
    except RuntimeError:
        user = os.getuid() if hasattr(os, "getuid") else "user"
        config.CACHE_DIR = os.path.join(tempfile.gettempdir(), f"coplug-numba-{user}")


ensure_numba_cache_dir()
