"""Keep numba's on-disk caches honest while the sources change.

numba keys a cached function on the modification stamp of its own source file only, so a
kernel that calls kernels of other files (`small.solve` calls `jv` and `certify`) keeps
running their old code after they are edited. Before a test session the compiled caches of
a package folder are cleared whenever any of its sources changed since the last session.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

STAMP = "coplug_sources.sha256"


def sources_digest(folder: Path) -> str:
    """SHA-256 over the names and contents of the folder's Python sources, in name order."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_folders(folder: Path) -> list[Path]:
    """Where numba keeps the folder's compiled kernels: its `__pycache__`, and the folder's
    place under numba's CACHE_DIR where one is set (NUMBA_CACHE_DIR, or the private folder
    `coplug.plugins.lap.cache_dir` picks where `__pycache__` cannot be written)."""
    from numba.core import config
    from numba.core.caching import UserProvidedCacheLocator

    import coplug.plugins.lap.cache_dir  # noqa: F401 (sets CACHE_DIR where it must)

    folders = [folder / "__pycache__"]
    if config.CACHE_DIR:
        subpath = UserProvidedCacheLocator.get_suitable_cache_subpath(str(folder / "any.py"))
        folders.append(Path(config.CACHE_DIR) / subpath)
    return folders


def refresh(folder: Path) -> bool:
    """Delete the folder's numba cache files (`*.nbi`, `*.nbc`, wherever `cache_folders`
    says numba keeps them) when its sources changed since that place's stamp was written,
    then write the new stamp; True when any was cleared. A place that cannot be written is
    left alone (numba then caches elsewhere or not at all, and has nothing stale there to
    run); one under CACHE_DIR that numba has not made yet holds nothing stale."""
    digest = sources_digest(folder)
    cleared = False
    for k, cache in enumerate(cache_folders(folder)):
        if k == 0 or cache.is_dir():
            cleared |= _refresh_one(cache, digest)
    return cleared


def _refresh_one(cache: Path, digest: str) -> bool:
    """Clear one cache folder unless its stamp is `digest`, then stamp it; True if cleared."""
    stamp = cache / STAMP
    if stamp.is_file() and stamp.read_text() == digest:
        return False
    try:
        cache.mkdir(exist_ok=True)
        for path in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            path.unlink(missing_ok=True)
        stamp.write_text(digest)
    except OSError:
        return False
    return True
