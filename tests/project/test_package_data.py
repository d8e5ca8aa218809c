"""Every file a package of the wheel reads that is not Python is named by pyproject.toml's package-data: else
an installed ragbench lacks it (DeepResearch Bench's RACE prompts were left out so) while the checkout's tests,
reading the source folders, pass."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from support import paths

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser under its PyPI name
    tomllib = pytest.importorskip("tomli")

ROOT = paths.REPO
LEFT_OUT = {".py", ".pyc", ".pyi"}


def package_folder(package: str, folders: dict[str, str]) -> Path:
    """The source folder of `package` (a package-dir entry, or a subpackage of one)."""
    root = max((name for name in folders if package == name or package.startswith(name + ".")), key=len)
    return ROOT / folders[root] / Path(*package[len(root) :].split(".")[1:])


def test_every_data_file_of_the_packages_ships_in_the_wheel():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    folders = setuptools["package-dir"]
    shipped = {
        Path(path)
        for package, patterns in setuptools["package-data"].items()
        for pattern in patterns
        for path in glob.glob(str(package_folder(package, folders) / pattern))
    }
    missing = []
    for folder in folders.values():
        for path in (ROOT / folder).rglob("*"):
            data = path.is_file() and path.suffix not in LEFT_OUT and "__pycache__" not in path.parts
            if data and path not in shipped:
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"add these to [tool.setuptools.package-data] in pyproject.toml: {sorted(missing)}"
