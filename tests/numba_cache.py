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


def refresh(folder: Path) -> bool:
    """Delete the folder's numba cache files (`__pycache__/*.nbi`, `*.nbc`) when its sources
    changed since the stamp was written, then write the new stamp; True when it cleared.
    A folder that cannot be written is left alone (numba then caches elsewhere or not at
    all, and has nothing stale there to run)."""
    cache = folder / "__pycache__"
    digest = sources_digest(folder)
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
