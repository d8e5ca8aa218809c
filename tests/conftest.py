"""Shared fixtures: paths to reference data, and small builders."""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from support.command_zygote import Zygote, zygote
from support.instant_failures import register as name_failures_at_once
from support.ray_cluster import (
    cluster_modules_first,
    ray_cluster,  # noqa: F401  (a local multi-node Ray cluster, when asked)
    stop_when_not_needed_next,
)

if TYPE_CHECKING:
    from ragbench.testing import Registry

# Property-based tests are the same on every machine: a fixed seed per test (derandomize), no time limit per
# example (a slow 2-core machine must pass what a fast one does), no example database written beside the tests.
settings.register_profile(
    "ragbench",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ragbench")

# `tmp_path` made in constant time, a page cache and data folder per test, each removed when its test passes
pytest_plugins = ["support.temporary_folders"]


SESSION_HOME_ENV = "RAGBENCH_TESTS_HOME"  # set by the first process of a session; its xdist workers inherit it
REAL_HOME = Path(os.environ.get("RAGBENCH_TESTS_REAL_HOME") or Path.home())


def session_home() -> Path:
    """Tests never touch the user's home folder: HOME, and with it every cache ragbench keeps
    ($RAGBENCH_CACHE_DIR: the embedded model's converted copy, the index cache...), is a temporary folder of
    the session, set before anything is imported (so module fixtures and the commands tests start use it too)
    and shared by the session's xdist workers (one conversion of the embedded model), removed at its end."""
    if SESSION_HOME_ENV not in os.environ:
        home = Path(tempfile.mkdtemp(prefix="ragbench-tests-home-"))
        os.environ.update({SESSION_HOME_ENV: str(home), "RAGBENCH_TESTS_REAL_HOME": str(REAL_HOME), "HOME": str(home)})
        atexit.register(shutil.rmtree, home, ignore_errors=True)
    home = Path(os.environ[SESSION_HOME_ENV])
    os.environ["HOME"] = str(home)
    os.environ["RAGBENCH_CACHE_DIR"] = str(home / ".cache" / "ragbench")
    for name in ("RAGBENCH_DATA_DIR", "RAGBENCH_PAGE_CACHE", "RAGBENCH_INDEX_CACHE"):
        os.environ.pop(name, None)  # each under $RAGBENCH_CACHE_DIR
    return home


SESSION_HOME = session_home()

# The suite's files live in temporary folders no power cut needs to find again: nothing is flushed to disk
# (`$RAGBENCH_FSYNC=off`, as PostgreSQL's test suites run with `fsync = off`). A run's ~13 flushes took a fifth of
# its time on a 2-vCPU VM. Files are still replaced whole, by rename; tests of the flushes themselves set it back.
os.environ["RAGBENCH_FSYNC"] = "off"

# A Ray node a test starts (the shared cluster's, a benchmark script's `ray.cluster_utils.Cluster`, a run's local
# Ray) waits for its raylet to register with the GCS for `raylet_start_wait_time_s` (Ray's default: 30 s): on a
# 2-core machine under a load of 18, a start took longer and failed ("The current node timed out during startup").
# Set here, before Ray is imported, so the xdist workers and every command a test starts inherit it: a slow start
# is waited for, never a failure.
os.environ.setdefault("RAY_raylet_start_wait_time_s", "600")

# torch (and every OpenMP library) runs one thread a process in the suite: the xdist workers, Ray's actors and the
# commands tests start already keep two cores busy, and OpenMP's extra threads spin while they wait for a core (the
# Ray files' dense builds: 49.7 -> 28.8 CPU-s on a 2-vCPU VM). Set before torch is imported; a test of threads sets
# its own.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def keep_bytecode() -> None:
    """Python keeps compiled modules as it does by default, in the __pycache__ folders git ignores, even where
    PYTHONDONTWRITEBYTECODE is set (container images often set it): otherwise each of the hundreds of Python
    processes the suite starts (the CLI, a run's workers, the benchmark scripts) compiles ragbench from source
    again, a fifth of the CPU time of the tests that start them on a 2-core VM. Set in the first process of a
    session, before its xdist workers start: they and every command a test starts inherit it."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        sys.dont_write_bytecode = False


keep_bytecode()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may use. A fifth of the suite's time is spent
    waiting (on the commands and servers tests start, on signals), and a third worker keeps two cores busy
    through it: 155 s -> 141 s for a 51-file sample on a 2-core VM, a fourth no faster."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + 1


# The longest single tests, run first: xdist's worksteal hands each worker a run of the collection and lets idle
# workers steal from the ends of the others' runs, so a long test near the end ran last, alone (mypy, 73 s, began
# 810 s into a run whose other workers ended at 816-823 s).
LONGEST_FIRST = ("tests/project/test_static_checks.py::test_mypy_finds_nothing",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest single tests first (LONGEST_FIRST), then the tests of the shared Ray cluster, together
    (tests/support/ray_cluster.py): one worker starts it once."""
    cluster_modules_first(items)
    items.sort(key=lambda item: item.nodeid not in LONGEST_FIRST)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The shared Ray cluster (tests/support/ray_cluster.py) stopped once this process's next test does not need it: after
    the test's fixtures are torn down (a module's actors closed while their cluster still runs)."""
    yield
    stop_when_not_needed_next(item, nextitem)


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background by a shell without job control inherits Ctrl-C ignored, and so would
    every command a test starts, and Python then never raises KeyboardInterrupt in it. The tests send Ctrl-C as a
    terminal does to a command run from it, whose handler is Python's default: give it back here (in the main
    process and each xdist worker), so the commands they start get it too."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    name_failures_at_once(config)  # each failure named as it happens (tests/support/instant_failures.py)


ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared"


def family_folders_on_path() -> None:
    """Test modules lie in family folders (tests/run/, tests/engines/ ...: tools/tests_by_family.py) and are
    imported by pytest as top-level modules of their file's name (its default import mode), so one test module
    imports another by that name (`from test_engine_openai import FakeServer`) wherever the two lie: every
    family folder is on sys.path, after what is there already, in every process that imports this conftest
    (the xdist workers, and the commands tests start with tests/ on PYTHONPATH). A file's name is its module's
    name, so no two test files share one (tests/project/test_layout.py)."""
    tests = ROOT / "tests"
    folders = sorted({str(p.parent) for p in tests.rglob("test_*.py") if "data" not in p.relative_to(tests).parts})
    sys.path.extend(folder for folder in folders if folder not in sys.path)


family_folders_on_path()


def installed(module: str) -> bool:
    """Whether `module` can be found, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def needs(*modules: str, reason: str = "") -> pytest.MarkDecorator:
    """Skips what it marks (a test, or a module as its `pytestmark`) where one of `modules` is not installed, as
    `pytest.importorskip` does, but without importing them while the tests are collected: every xdist worker
    collects every file, and mauve, evaluate, anthropic or sentence-transformers take 1-5 s of CPU each to
    import, for the few tests that use them."""
    missing = [module for module in modules if not installed(module)]
    return pytest.mark.skipif(bool(missing), reason=reason or f"not installed: {', '.join(missing)}")


def shared_reference() -> Path:
    """`../shared/reference` beside the checkout (CI lays shared/ there); tests that need it skip otherwise."""
    path = SHARED / "reference"
    if not path.is_dir():
        pytest.skip(
            "needs ../shared/reference beside the checkout (upstream samples and files ragbench may not ship, "
            "e.g. the Llama-2 tokenizer; CI has it): a parity check against them"
        )
    return path


def write_jsonl(path: Path, records: list) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


@pytest.fixture
def popqa_records() -> list[dict]:
    return [
        {
            "question": f"Who is person {i}?",
            "answers": [f"answer{i}", f"alias{i}"],
            "id": 100 + i,
            "prop": "occupation",
            "ctxs": [
                {"id": str(i), "title": f"Title {i}", "text": f"Person {i} is answer{i}.", "score": "1.5"},
                {"title": f"Other {i}", "text": "Unrelated text."},
            ],
        }
        for i in range(6)
    ]


@functools.cache
def plugins_read_once() -> Registry:
    """The installed plugins, read once in this process for the tests that make many runs (reading the 74 YAML
    task files again was a fifth of a small run's CPU time): a run loads the entries it uses and changes nothing
    else (a YAML task given by its path replaces the file given before), as one process running several tasks
    reads them once."""
    from ragbench.testing import installed_registry

    return installed_registry()


@pytest.fixture(scope="session")
def shared_registry() -> Registry:
    """`plugins_read_once()` as a fixture."""
    return plugins_read_once()


@pytest.fixture(scope="session")
def ragbench_zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    """One command zygote for this test process (tests/support/command_zygote.py): a `ragbench` run through it
    (`ragbench_zygote.run(args, env)`) is a fork of a process that loaded the command line once, ~1 s of CPU less
    than a fresh interpreter's. For the commands whose promise is not about a fresh process (the resume after a
    kill, a run that must read its environment as it starts, which the zygote's imports have not read);
    a command signalled, limited or counted as a process is started as one."""
    folder = tmp_path_factory.mktemp("zygote")
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    with zygote(env, folder) as started:
        yield started
