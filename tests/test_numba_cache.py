"""The session's numba cache refresh: cleared when a source changes, kept otherwise."""

from __future__ import annotations

from pathlib import Path

from numba_cache import STAMP, refresh


def _cached(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "__pycache__").iterdir() if p.name != STAMP)


def test_caches_are_cleared_only_when_a_source_changed(tmp_path: Path) -> None:
    (tmp_path / "jv.py").write_text("x = 1\n")
    (tmp_path / "small.py").write_text("y = 2\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("small.solve-20.py311.nbi", "small.solve-20.py311.1.nbc", "jv.cpython-311.pyc"):
        (cache / name).write_text("compiled")
    assert refresh(tmp_path)  # no stamp yet: cleared, numba's files only
    assert _cached(tmp_path) == ["jv.cpython-311.pyc"]
    (cache / "small.solve-20.py311.nbi").write_text("compiled again")
    assert not refresh(tmp_path)  # nothing changed: kept
    assert "small.solve-20.py311.nbi" in _cached(tmp_path)
    (tmp_path / "jv.py").write_text("x = 3\n")  # a callee's file edited
    assert refresh(tmp_path)
    assert _cached(tmp_path) == ["jv.cpython-311.pyc"]


def test_a_folder_that_cannot_be_written_is_left_alone(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "jv.py").write_text("x = 1\n")

    def refuse(*args, **kwargs):
        raise PermissionError("read-only checkout")

    monkeypatch.setattr(Path, "mkdir", refuse)
    assert not refresh(tmp_path)


def test_a_numba_cache_dir_is_refreshed_too(tmp_path: Path, monkeypatch) -> None:
    """With NUMBA_CACHE_DIR set, numba kept the kernels there and the suite ran stale ones
    after a callee's file was edited (only `__pycache__` was cleared)."""
    from numba.core import config
    from numba.core.caching import UserProvidedCacheLocator

    source = tmp_path / "lap"
    source.mkdir()
    (source / "jv.py").write_text("x = 1\n")
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba"))
    kept = tmp_path / "numba" / UserProvidedCacheLocator.get_suitable_cache_subpath(
        str(source / "small.py"))
    kept.mkdir(parents=True)
    (kept / "small.solve-20.py311.nbi").write_text("compiled")
    assert refresh(source)
    assert not (kept / "small.solve-20.py311.nbi").exists()
    (kept / "small.solve-20.py311.nbi").write_text("compiled again")
    assert not refresh(source)
    (source / "jv.py").write_text("x = 3\n")
    assert refresh(source)
    assert not (kept / "small.solve-20.py311.nbi").exists()
