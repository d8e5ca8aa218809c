"""The processes a run's engines start end with the run, however it ends: a run killed with SIGKILL
(nothing of it can react) leaves none behind, as vLLM's EngineCore and its workers were (4.2 GB held
47 minutes later). The engine here starts processes the ways vLLM does: one forked from the run (its
default on CPU) and one started with exec (spawn), each with a grandchild of each kind; and nothing
that is not the run's is touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ragbench._run.models.reaper
from ragbench._run.models.reaper import MARKER_ENV, Reaper, reap
from ragbench.api.engines import Engine, Response
from ragbench.testing import installed_registry, run_eval
from support import paths
from support.process_tree import HAVE_PROC, processes

pytestmark = pytest.mark.skipif(
    not HAVE_PROC or not hasattr(os, "pidfd_open"), reason="reads processes from /proc (Linux)"
)
HERE = Path(__file__).resolve().parent  # a command this test starts imports this module
SLEEPER = "import sys, time\nopen(sys.argv[1] + '/' + str(__import__('os').getpid()), 'w').close()\ntime.sleep(10**6)"
# an exec'd process that forks a grandchild (as EngineCore starts its workers), both sleeping
WITH_FORKED_CHILD = (
    "import os, sys, time\nos.fork()\nopen(sys.argv[1] + '/' + str(os.getpid()), 'w').close()\ntime.sleep(10**6)"
)


def _sleep_forever(pids: str) -> None:
    open(f"{pids}/{os.getpid()}", "w").close()
    while True:
        time.sleep(1000)


def _forked(pids: str) -> None:
    """In a child forked from the run: a forked and an exec'd grandchild (fork and exec only: the run
    has threads, so nothing that could wait on a lock one of them held)."""
    if os.fork() == 0:
        _sleep_forever(pids)
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", SLEEPER, pids])
    _sleep_forever(pids)


class SpawningEngine(Engine):
    """Starts 5 processes (2 children, 3 grandchildren) and never answers: the run is killed meanwhile."""

    kind = "spawning"

    def __init__(self, model: str, pids: str = "") -> None:
        super().__init__(model)
        if os.fork() == 0:
            try:
                _forked(pids)
            finally:
                os._exit(0)
        subprocess.Popen([sys.executable, "-c", WITH_FORKED_CHILD, pids])

    @property
    def engine_id(self) -> str:
        return f"spawning:{self.model}"

    def generate(self, requests):
        threading.Event().wait()


RUN = """
import sys
from ragbench._registry import Registry
from ragbench._run.evaluator import Evaluator, RunConfig

if __name__ == "__main__":
    registry = Registry.discover()
    registry.add_catalog({"engines": {"spawning": {"target": "test_engine_processes:SpawningEngine"}}}, "tests")
    Evaluator(RunConfig.of(tasks=["demo"], system="closed_book", model="spawning:x", model_args={"pids": sys.argv[1]},
                        output=sys.argv[2], progress=False), registry=registry).run()
"""


def alive(seen: dict[int, str]) -> dict[int, str]:
    table = processes()
    return {pid: started for pid, started in seen.items() if table.get(pid, (0, None))[1] == started}


def wait_for(condition, seconds: float) -> bool:
    """Polls `condition` until it holds; `seconds` is only a safety bound, far above what it needs."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def sleeper(tmp_path: Path, env: dict[str, str]) -> subprocess.Popen:
    folder = tmp_path / f"other{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    return subprocess.Popen([sys.executable, "-c", SLEEPER, str(folder)], env=env)


def end(seen: dict[int, str]) -> None:
    for pid in alive(seen):  # what a failed test left behind
        os.kill(pid, signal.SIGKILL)


def test_a_run_killed_with_sigkill_leaves_none_of_its_engines_processes(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    others = [sleeper(tmp_path, {**os.environ, MARKER_ENV: "another-run"}), sleeper(tmp_path, dict(os.environ))]
    env = {**os.environ, "PYTHONPATH": paths.python_path(HERE)}
    env.pop(MARKER_ENV, None)
    with (tmp_path / "stderr.txt").open("w") as errors:
        run = subprocess.Popen(
            [sys.executable, "-c", RUN, str(pids), str(tmp_path / "run")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    seen: dict[int, str] = {}
    try:
        assert wait_for(lambda: len(os.listdir(pids)) == 5 or run.poll() is not None, 120), "the engine never started"
        assert run.poll() is None, (tmp_path / "stderr.txt").read_text()
        table = processes()
        seen = {int(pid): table[int(pid)][1] for pid in os.listdir(pids)}
        assert len(alive(seen)) == 5
        run.kill()
        run.wait()
        assert wait_for(lambda: not alive(seen), 60), f"left behind: {sorted(alive(seen))}"
        assert all(other.poll() is None for other in others)  # not the run's: untouched
    finally:
        end(seen)
        for other in others:
            other.kill()
            other.wait()


def pids_in(folder: Path) -> dict[int, str]:
    table = processes()
    return {int(pid): table[int(pid)][1] for pid in os.listdir(folder) if int(pid) in table}


def test_the_reaper_ends_the_marked_processes_and_their_descendants_only(tmp_path):
    token = "t" + os.urandom(8).hex()
    folders = {name: tmp_path / name for name in ("marked", "other")}
    started = []
    try:
        for name, value in (("marked", token), ("other", token + "0")):  # another run's token
            folders[name].mkdir()
            started.append(
                subprocess.Popen(
                    [sys.executable, "-c", WITH_FORKED_CHILD, str(folders[name])], env={**os.environ, MARKER_ENV: value}
                )
            )
        assert wait_for(lambda: all(len(os.listdir(folder)) == 2 for folder in folders.values()), 60)
        marked, other = pids_in(folders["marked"]), pids_in(folders["other"])
        assert reap(token, inode=0) == 2  # the marked process and its child, which carries the mark too
        assert wait_for(lambda: not alive(marked), 60)
        assert alive(other) == other
    finally:
        for folder in folders.values():
            end(pids_in(folder) if folder.is_dir() else {})
        for process in started:
            process.wait()


class MarkerSeen(Engine):
    """Answers with the run's marker as the engine found it when the run loaded it ("unmarked": no reaper started)."""

    kind = "marker_seen"

    def __init__(self, model: str, **options: object) -> None:
        super().__init__(model, **options)
        self.marker = os.environ.get(MARKER_ENV, "unmarked")

    def generate(self, requests):
        return [Response(texts=[self.marker]) for _ in requests]


class CallsAServiceOnly(MarkerSeen):
    kind = "calls_a_service_only"
    starts_processes = False


@pytest.mark.parametrize("engine,reaped", [(MarkerSeen, True), (CallsAServiceOnly, False)])
def test_a_run_starts_its_reaper_before_an_engine_that_may_start_processes_and_only_then(engine, reaped):
    """An engine says False (`Engine.starts_processes`) when it only computes here or calls a service: the scripted,
    replay and hosted-API engines; a run of those starts no reaper (a process at every run's start)."""
    registry = installed_registry()
    registry.add_catalog({"engines": {engine.kind: {"target": f"test_engine_processes:{engine.__name__}"}}}, "tests")
    result = run_eval("demo", "closed_book", f"{engine.kind}:x", limit=1, registry=registry)
    [sample] = result.samples["demo"]
    assert sample.error is None and sample.answer, sample.error
    assert (sample.answer != "unmarked") is reaped, sample.answer
    assert MARKER_ENV not in os.environ  # the run's mark taken off as it ended


def test_the_scripted_replay_and_hosted_engines_start_no_process():
    registry = installed_registry()
    assert [registry.load("engines", kind).starts_processes for kind in ("scripted", "replay", "openai", "hf")] == [
        False,
        False,
        False,
        True,
    ]


def test_the_reaper_process_starts_without_site_packages_and_imports_only_what_it_uses():
    """A run of an engine that may start processes starts a reaper, so its start is part of its cost: no `.pth` file of the environment runs
    in it (`-I -S`) and it imports none of what only the run's side uses (subprocess, uuid) nor pathlib or typing."""
    reaper = Reaper()
    try:
        assert reaper._process is not None
        command = list(reaper._process.args)  # as started (its /proc cmdline is empty for a moment while it execs)
    finally:
        reaper.close()
    assert command[1:4] == ["-I", "-S", ragbench._run.models.reaper.__file__]
    # as the run starts it, for a process that is not its parent (pid 1): it returns at once, finding nothing marked
    started = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-X",
            "importtime",
            ragbench._run.models.reaper.__file__,
            "1",
            os.urandom(8).hex(),
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in started.stderr.splitlines() if line.startswith("import time:")
    }
    assert "signal" in imported and not imported & {"site", "subprocess", "uuid", "pathlib", "typing"}, imported
