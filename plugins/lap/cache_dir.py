"""Where numba keeps the compiled kernels, found on import before the lap modules decorate
them: beside the sources or in the user's cache (numba's own choice), else a private
per-user temporary folder, else nowhere (`CACHE` is False and the kernels compile on each
run, as in a container whose every folder is read-only)."""

from __future__ import annotations

import os
import stat
import tempfile


def _probe() -> int:
    """A kernel to decorate: numba picks its cache folder at decoration, without compiling."""
    return 0


def _cacheable() -> bool:
    """Whether numba finds a folder it can write this module's cache in."""
    from numba import njit

    try:
        njit(cache=True)(_probe)
    except RuntimeError:  # "no locator available"
        return False
    return True


def private_temp_folder() -> str:
    """A temporary folder only this user can write: `coplug-numba-<uid>` when it is this
    user's own and closed to others, else a fresh one. numba's cache index is a pickle, so
    a folder another user made first (its name is guessable) would let them run code here.
    OSError when no temporary folder is usable."""
    path = os.path.join(tempfile.gettempdir(), f"coplug-numba-{_user()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    if _private(path):
        return path
    return tempfile.mkdtemp(prefix="coplug-numba-")


def _user() -> str:
    """The user's id where the platform has one."""
    return str(os.getuid()) if hasattr(os, "getuid") else "user"


def _private(path: str) -> bool:
    """A real folder (no link) owned by this user that no one else can write (where the
    platform has POSIX owners; Windows's temporary folder is the user's own, and reports
    every folder as mode 0o777)."""
    info = os.lstat(path)
    if not hasattr(os, "getuid"):
        return stat.S_ISDIR(info.st_mode)
    return (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & 0o022)


def numba_cache() -> bool:
    """Point numba at a private temporary folder where it finds no cache folder of its own
    (a read-only install with no writable home: `@njit(cache=True)` raised "no locator
    available" at import); False where even that fails, so the kernels compile uncached."""
    if _cacheable():
        return True
    from numba.core import config

    try:
        config.CACHE_DIR = private_temp_folder()
    except OSError:  # no usable temporary folder at all
        return False
    return _cacheable()


CACHE = numba_cache()
