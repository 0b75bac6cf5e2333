"""Packaging: only `coplug` lands in site-packages, and imports resolve to it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import coplug.formulations
import coplug.learned
import coplug.models
import coplug.plugins

ROOT = Path(__file__).resolve().parents[1]


def test_import_resolves_to_project_package() -> None:
    assert Path(coplug.plugins.__file__).resolve() == ROOT / "plugins" / "__init__.py"
    for module, folder in (
        (coplug.formulations, "formulations"),
        (coplug.learned, "learned"),
        (coplug.models, "models"),
    ):
        assert Path(module.__file__).resolve().parent == ROOT / folder


def test_wheel_holds_only_coplug(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("coplug-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.startswith("coplug-")}
    assert top == {"coplug"}
    assert "coplug/plugins/__init__.py" in names
    assert "coplug/plugins/lap/__init__.py" in names
    assert not any(name.startswith(("models/", "plugins/", "tests/")) for name in names)


def test_regular_install_imports_from_site_packages(tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q",
         "--target", str(target), str(ROOT)],
        check=True,
        capture_output=True,
    )
    # -S skips site, so the editable finder (.pth) stays out; dependencies come from the
    # environment's site-packages added as a plain path.
    site_packages = next(p for p in sys.path if p.endswith("site-packages"))
    code = (
        f"import sys; sys.path[:0] = [{str(target)!r}, {site_packages!r}]; "
        "import coplug.plugins; print(coplug.plugins.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == (target / "coplug/plugins/__init__.py").resolve()
