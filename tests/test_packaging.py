"""What the sdist and the wheel carry: the sdist the whole suite and its helpers, the wheel
the `coplug` package alone with every shipped checkpoint."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in done.stdout.splitlines() if (ROOT / name).is_file()]


def _build(tmp_path: Path, kind: str, source: Path) -> Path:
    """Build an sdist or wheel of `source` with setuptools (no network, no isolation)."""
    code = (f"from setuptools import build_meta as b; import sys; "
            f"print(b.build_{kind}(sys.argv[1]))")
    out = tmp_path / kind
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=source,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-800:]
    return out / done.stdout.split()[-1]


@pytest.mark.slow
def test_sdist_carries_the_suite_and_its_wheel_only_coplug(tmp_path: Path) -> None:
    """The sdist had the test files without conftest.py, numba_cache.py, bench_loader.py
    and benchmarks/, so its suite could not run."""
    tracked = _tracked()
    source = tmp_path / "src"
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    sdist = _build(tmp_path, "sdist", source)
    with tarfile.open(sdist) as archive:
        inside = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    wanted = {name for name in tracked if name.startswith(("tests/", "benchmarks/"))}
    assert wanted <= inside, sorted(wanted - inside)[:5]
    assert {"Makefile", ".ci/run", "README.md", "pyproject.toml"} <= inside
    unpacked = tmp_path / "unpacked"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    wheel = _build(tmp_path, "wheel", next(unpacked.iterdir()))
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"coplug", wheel.name.split("-")[0] + "-"
                                                      + wheel.name.split("-")[1] + ".dist-info"}
    checkpoints = {name for name in tracked if name.startswith("models/")
                   and name.endswith((".pt", ".json", ".joblib"))}
    assert {"coplug/" + name for name in checkpoints} <= set(names)
