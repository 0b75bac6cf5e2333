"""Where numba keeps the compiled kernels, found on import before the lap modules decorate
them: beside the sources or in the user's cache (numba's own choice), else a private
per-user temporary folder, else nowhere (`CACHE` is False and the kernels compile on each
run, as in a container whose every folder is read-only). `kernel` decorates them, reading
an unreadable cache file as a missing one."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any

from numba import njit
from numba.core.caching import IndexDataCacheFile

# Private per-user folders tried in turn (`coplug-numba-<uid>`, then `-1`, ...) before
# caching is given up: names are reused across runs, so no run leaves a new folder behind.
PRIVATE_FOLDERS = 8


def _probe() -> int:
    """A kernel to decorate: numba picks its cache folder at decoration, without compiling."""
    return 0


def _cacheable() -> bool:
    """Whether numba finds a folder it can write this module's cache in."""
    try:
        njit(cache=True)(_probe)
    except RuntimeError:  # "no locator available"
        return False
    return True


def private_temp_folder() -> str:
    """A temporary folder only this user can write: the first of `coplug-numba-<uid>`,
    `coplug-numba-<uid>-1`, ... that is this user's own and closed to others (numba's cache
    index is a pickle, so a folder another user made first, its name being guessable, would
    let them run code here). OSError when no temporary folder is usable."""
    root = _temp_root()
    for k in range(PRIVATE_FOLDERS):
        path = os.path.join(root, f"coplug-numba-{_user()}" + (f"-{k}" if k else ""))
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        if _private(path):
            return path
    raise OSError(f"no private coplug-numba-{_user()} folder in {root}")


def _temp_root() -> str:
    """The temporary folder, unless Python fell back to the working directory for want of a
    writable one (the kernels would be left in the user's project); OSError then."""
    root = tempfile.gettempdir()
    named = [os.environ.get(key) for key in ("TMPDIR", "TEMP", "TMP")]
    usual = [path for path in (*named, "/tmp", "/var/tmp", "/usr/tmp") if path]
    if _same(root, os.getcwd()) and not any(_same(root, path) for path in usual):
        raise OSError("no writable temporary folder (only the working directory)")
    return root


def _same(a: str, b: str) -> bool:
    """Whether two paths name the same existing folder."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


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


class _TolerantCacheFile(IndexDataCacheFile):
    """numba's cache file (an index pickle, one data pickle per signature) whose unreadable
    index reads as no entries and unreadable data as no entry."""

    def _load_index(self) -> dict:
        try:
            return super()._load_index()
        except Exception:  # any unpickling failure: a cache miss, not an error
            return {}

    def _load_data(self, name: str) -> Any:
        try:
            return super()._load_data(name)
        except OSError:  # numba's own `load` takes this as a removed file
            raise
        except Exception:  # any unpickling failure: a cache miss, not an error
            return None


def kernel(function: Callable[..., Any]) -> Any:
    """`numba.njit(cache=CACHE)`, reading an unreadable cache file (truncated, garbled) as a
    missing one: numba raised UnpicklingError or EOFError on every call until the file was
    deleted; the kernel now compiles and its cache entry is written afresh."""
    dispatcher = njit(cache=CACHE)(function)
    cache = getattr(dispatcher, "_cache", None)
    if type(getattr(cache, "_cache_file", None)) is IndexDataCacheFile:
        cache._cache_file.__class__ = _TolerantCacheFile
    return dispatcher


CACHE = numba_cache()
