"""Safe checkpoint writing for the training scripts: atomic files, strict JSON, early checks.

A checkpoint is written to a temporary file in its own folder and moved over the final
name with `os.replace`, so an interrupt or a failing dump never leaves a half-written
file where a good one was. JSON sidecars go the same way and never contain NaN.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coplug.plugins.errors import InputError


def _default_mode() -> int:
    """Permissions a plain `open(path, "w")` would give (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes (the checkpoint's fingerprint in its sidecar)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_sidecar(path: Path, what: str) -> Any:
    """The JSON in the sidecar `path`, or an InputError naming it as `what` when it cannot
    be read: not UTF-8 or not JSON, an integer past Python's digit limit, or nested past
    its recursion limit (these came out as raw ValueError and RecursionError). A UTF-8
    byte-order mark, which a Windows editor adds on saving, is read past, as in the other
    text inputs."""
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError included
        raise InputError(f"{what} {path} is unreadable: {exc}") from None
    except RecursionError:
        raise InputError(f"{what} {path} is unreadable: nested too deeply") from None


def check_recorded_sha256(path: Path, meta: Any, sidecar: Path, what: str) -> None:
    """Refuse the checkpoint `path` when its sidecar's `meta` records a sha256 the file does
    not have: the sidecar then describes another file (sidecars without one pass)."""
    expected = meta.get("sha256") if isinstance(meta, dict) else None
    if expected is None:
        return
    if not (isinstance(expected, str) and re.fullmatch(r"[0-9a-f]{64}", expected)):
        raise InputError(f"{what} metadata {sidecar}: sha256 must be 64 lowercase hex digits, "
                         f"got {expected!r}")
    actual = file_sha256(path)
    if actual != expected:
        raise InputError(f"{what} {path} is not the file {sidecar.name} describes (modified, "
                         f"corrupted or replaced): its sha256 is {actual}, {sidecar.name} "
                         f"records {expected}")


def fingerprint_path(path: Path) -> Path:
    """Where `write_fingerprint` keeps a checkpoint's sha256: `<name>.sha256` beside it (one
    per file, so p.pt and p.joblib do not share it as they share p.json)."""
    return path.with_name(path.name + ".sha256")


def write_fingerprint(path: Path) -> None:
    """Record the sha256 of the file at `path` beside it, as `sha256sum` writes it."""
    atomic_write_text(fingerprint_path(path), f"{file_sha256(path)}  {path.name}\n")


def check_fingerprint(path: Path, what: str) -> None:
    """Refuse the checkpoint `path` when its `<name>.sha256` records another sha256 (a file
    corrupted on disk); no record, no check."""
    record = fingerprint_path(path)
    if not record.is_file():
        return
    try:
        words = record.read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError):
        raise InputError(f"{what} fingerprint {record} is unreadable") from None
    check_recorded_sha256(path, {"sha256": words[0] if words else ""}, record, what)


def check_zip_crc(path: Path, what: str) -> None:
    """Refuse a torch .pt checkpoint (a zip archive) whose entries fail their CRC: torch.load
    reads the bytes unchecked, so a flipped weight loaded as another model (no sidecar with
    a sha256 to catch it). A file that is no zip is left to the loader to name."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        return
    except NotImplementedError as exc:  # a header byte changed: "zip file version 25.0"
        raise InputError(f"{what} {path} is corrupt: {exc}") from None
    with archive:
        try:
            bad = archive.testzip()
        except Exception as exc:  # zlib or struct errors inside an entry
            raise InputError(f"{what} {path} is corrupt: {type(exc).__name__}: {exc}") from None
    if bad is not None:
        raise InputError(f"{what} {path} is corrupt: its entry {bad} fails its CRC check")


def atomic_write(path: str | Path, write: Callable[[Path], object],
                 mode: int | None = None) -> Path:
    """Call `write(tmp)` on a temporary file in `path`'s folder, then rename it over `path`.

    The temporary file (and its folder) is removed if `write` raises (KeyboardInterrupt
    included), so the previous file at `path`, if any, stays intact and no stray file is
    left behind. It bears `path`'s own name, inside a fresh hidden folder: `torch.save`
    names its zip archive's inner folder after the file, so a random temporary name gave
    the same weights other bytes (and another sha256 in a sidecar) on every run. `mode`:
    the file's permissions (default: those `open(path, "w")` would give a new file).
    """
    path = Path(path).expanduser()
    if (reason := occupied_reason(path)) is not None:
        raise InputError(f"cannot write {path}: {reason}")
    try:
        folder = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp",
                                       dir=path.parent))
    except OSError as exc:  # no such folder, read-only, /proc: say which path
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    tmp = folder / path.name
    try:
        write(tmp)
        os.chmod(tmp, _default_mode() if mode is None else mode)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return path


def occupied_reason(path: Path) -> str | None:
    """Why a file may not be written over `path`: it is a folder, or something other than a
    regular file (a device such as /dev/null, a pipe), which the rename would replace: as
    root, `--out /dev/null` made /dev/null a file of weights."""
    if path.is_dir():
        return f"{path} is a folder"
    if path.exists() and not path.is_file():
        return f"{path} is not a regular file"
    return None


def atomic_write_text(path: str | Path, text: str, mode: int | None = None) -> Path:
    """Write `text` to `path` atomically (see `atomic_write`)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), mode)


def json_safe(value: Any) -> Any:
    """`value` with NaN and infinite floats replaced by None, so strict JSON can hold it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def strict_json(meta: dict[str, Any], **kwargs: Any) -> str:
    """Standard JSON text of `meta` (non-finite numbers become null), newline-terminated."""
    return json.dumps(json_safe(meta), allow_nan=False, **kwargs) + "\n"


def unwritable_reason(folder: str | Path) -> str | None:
    """Why files cannot be created in `folder` (made if missing), or None if they can.

    Checked before hours of training: the nearest existing ancestor must be a folder in
    which a file can actually be created (a probe file is made and removed at once).
    """
    folder = Path(folder)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a folder"
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        return f"cannot write in {existing}: {exc.strerror or exc}"
    return None
