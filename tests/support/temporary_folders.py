"""The suite's temporary folders: `tmp_path` made in constant time, a page cache and data folder per test, and
each test's folders removed as soon as the test passes (a failing test's stay to be looked at). A pytest plugin
(tests/conftest.py's `pytest_plugins`)."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PASSED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
    """Whether the test itself passed, for the fixtures that remove its folders (`tmp_path`, `caches_in_tmp`)."""
    report = yield
    if report.when == "call":
        item.stash[PASSED] = report.passed
    return report


def removed_if_passed(request: pytest.FixtureRequest, folder: Path) -> None:
    """A passing test's temporary folder goes as the test ends; a failing one's stays to be looked at. Kept all
    until the session ended, the suite's folders outgrew a CI machine's disk ("No space left on device" in its
    last tests). Never follows a link out of the folder (shutil.rmtree removes the link itself)."""
    if request.node.stash.get(PASSED, False):
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """pytest's `tmp_path` (a new folder of the session's temporary folder, named after the test), made by
    `tempfile.mkdtemp` in constant time: pytest's numbers the folder by listing the session's folder, which holds
    one folder more for each test its process ran (20 s of CPU for the 2,500 tests of one xdist worker).
    Removed when the test passes (`removed_if_passed`)."""
    name = re.sub(r"\W", "_", request.node.name)[:30]
    folder = Path(tempfile.mkdtemp(prefix=name, dir=tmp_path_factory.getbasetemp()))
    yield folder
    removed_if_passed(request, folder)


@pytest.fixture(scope="session")
def caches_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("caches", numbered=False)


@pytest.fixture(autouse=True)
def caches_in_tmp(caches_root: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """No two tests share a page cache or data folder (tests run in parallel): one of each per test. The rest of
    the session's cache folder (`session_home`) stays shared: the embedded model's converted copy is written
    under a name of its process's own, then renamed. Made by `tempfile.mkdtemp`, not `mktemp`: pytest numbers a
    folder by listing the ones already there, a cost that grows with each test a worker ran."""
    folder = Path(tempfile.mkdtemp(dir=caches_root))
    monkeypatch.setenv("RAGBENCH_PAGE_CACHE", str(folder / "pages.sqlite"))
    monkeypatch.setenv("RAGBENCH_DATA_DIR", str(folder / "data"))
    yield
    removed_if_passed(request, folder)
