"""The repository passes its static checks, each run as CI runs it (a subprocess over the whole repository,
configured in pyproject.toml): `ruff check`, `ruff format --check` and mypy. A failure shows the tool's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import paths

REPO = paths.REPO


def checked(*command: str, timeout: float = 540) -> None:
    """Runs `python -m <command>` in the repository root; fails with its output unless it exits 0."""
    done = subprocess.run([sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` exited {done.returncode}:\n{done.stdout}{done.stderr}", pytrace=False)


def test_ruff_check_finds_nothing():
    checked("ruff", "check", "--no-cache", ".")


def test_ruff_format_would_change_nothing():
    checked("ruff", "format", "--check", "--no-cache", ".")


MYPY_HANG_GUARD = 3000  # seconds: a cold run is minutes of CPU; on 2 cores shared at a load of 24 it took > 540


@pytest.mark.timeout(MYPY_HANG_GUARD + 60)
def test_mypy_finds_nothing(request: pytest.FixtureRequest, tmp_path: Path):
    """Over the files pyproject.toml's [tool.mypy] names. The cache lives in pytest's own cache folder
    (.pytest_cache, kept between runs: a warm run takes seconds, a cold one a minute or more); with the
    cache provider off, in this test's temporary folder. Its time limit only catches a hang: a cold run on a
    loaded 2-core machine (a fresh checkout's first run) must pass."""
    pytest_cache = getattr(request.config, "cache", None)
    cache = pytest_cache.mkdir("mypy") if pytest_cache is not None else tmp_path
    checked("mypy", "--cache-dir", str(cache), timeout=MYPY_HANG_GUARD)
