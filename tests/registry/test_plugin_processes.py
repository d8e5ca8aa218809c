"""A plugin's processes and threads never take the run down with them: a signal sent to a helper a plugin forked
ends the helper, not the run (the child shared the run's signal handlers and wake-up channel); a forked helper
still alive when the run ends does not keep run.lock (a `--resume` was refused); a thread or process a plugin
left running does not keep a finished run's process alive (it waited at exit, and a SIGTERM then printed a
traceback). Real forks, threads and signals; the runs are synchronised through files, never by time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._cli.process_end import left_running_line
from support.process_tree import HAVE_PROC

pytestmark = pytest.mark.skipif(not HAVE_PROC, reason="reads processes from /proc (Linux)")

PLUGIN = '''
import asyncio, concurrent.futures, multiprocessing, os, signal, threading, time
from pathlib import Path

from ragbench.api import Reader, hookimpl


@hookimpl
def ragbench_catalog():
    return {"systems": {"leaves_helpers": {"target": "helpers_plugin:LeavesHelpers",
                                           "description": "starts a helper that outlives its example"}}}


def pause(folder):
    """A helper: says its pid (a file named after it), then waits for a signal, forever."""
    (Path(folder) / f"{os.getpid()}.pid").touch()
    while True:
        signal.pause()


class LeavesHelpers(Reader):
    """Closed book; its first example starts a helper (`helper`: a forked child, a thread that is no daemon, a
    multiprocessing process that is no daemon, a process pool's busy worker) and, with `hold`, every example
    waits for `folder`/release."""

    name = "leaves_helpers"

    def __init__(self, helper: str = "fork", folder: str = "", hold: bool = False, **options):
        super().__init__(**options)
        self.helper, self.folder, self.hold, self.started = helper, folder, hold, False

    async def documents(self, example, ctx):
        if not self.started:
            self.started = True
            self.start_helper()
        while self.hold and not (Path(self.folder) / "release").exists():
            await asyncio.sleep(0.02)
        return None

    def start_helper(self):
        """Start the helper; a process's once it has said its pid (its file exists)."""
        if self.helper == "thread":
            threading.Thread(target=threading.Event().wait, name="plugin helper\\nthread", daemon=False).start()
            return
        if self.helper == "multiprocessing":
            process = multiprocessing.get_context("fork").Process(target=pause, args=(self.folder,))
            process.start()
            pid = process.pid
        elif self.helper == "process_pool":  # a pool never shut down, its one worker busy for ever
            self.pool = concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            pid = self.pool.submit(os.getpid).result()
            self.pool.submit(pause, self.folder)
        else:
            pid = os.fork()
            if pid == 0:
                try:
                    pause(self.folder)
                finally:
                    os._exit(0)
        while not (Path(self.folder) / f"{pid}.pid").exists():
            time.sleep(0.01)
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The plugin, laid out as pip installs it (module and dist-info with its entry point)."""
    site = tmp_path_factory.mktemp("site")
    (site / "helpers_plugin.py").write_text(PLUGIN)
    info = site / "helpers_plugin-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: helpers-plugin\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text("[ragbench]\nhelpers_plugin = helpers_plugin\n")
    return site


@pytest.fixture
def helpers(tmp_path):
    """The folder the plugin's helpers say their pids in; every helper still running is killed at the end."""
    folder = tmp_path / "helpers"
    folder.mkdir()
    yield folder
    for pid in helper_pids(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def helper_pids(folder: Path) -> list[int]:
    return [int(path.stem) for path in folder.glob("*.pid")]


def command(site: Path, out: Path, helpers: Path, helper: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ragbench._cli.main",
        "--tasks",
        "demo",
        "--limit",
        "4",
        "--system",
        "leaves_helpers",
        "--system-arg",
        f"helper={helper}",
        "--system-arg",
        f"folder={helpers}",
        "--model",
        "scripted:echo",
        "--output",
        str(out),
        "--no-progress",
        "--bootstrap-iters",
        "0",
        *extra,
    ]


def environment(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}


def finished(args: list[str], site: Path, output: Path) -> subprocess.CompletedProcess:
    """The command run to its end, its output in files (a pipe would stay open as long as a helper it left)."""
    with (output.with_suffix(".out")).open("w+") as stdout, (output.with_suffix(".err")).open("w+") as stderr:
        done = subprocess.run(args, env=environment(site), stdout=stdout, stderr=stderr, timeout=120)
        stdout.seek(0)
        stderr.seek(0)
        return subprocess.CompletedProcess(args, done.returncode, stdout.read(), stderr.read())


def wait_for(condition, what: str, process: subprocess.Popen | None = None, seconds: float = 60) -> None:
    """Until `condition()` (looked at every 20 ms; the bound only fails a test that would hang)."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert process is None or process.poll() is None, f"the run ended first: {process.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def ended_status(pid: int) -> int | None:
    """The wait status of process `pid` once it has ended and is not yet reaped (a zombie), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[49]) if fields[0] == "Z" else None  # field 52 of proc(5): exit_code


# --- a signal to a plugin's helper ------------------------------------------------------------------------
def test_a_sigterm_to_a_plugins_forked_helper_ends_the_helper_and_the_run_completes(site, tmp_path, helpers):
    out = tmp_path / "run"
    run = subprocess.Popen(
        command(site, out, helpers, "fork", "--system-arg", "hold=true"),
        env=environment(site),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: helper_pids(helpers), "the helper", run)
        (helper,) = helper_pids(helpers)
        os.kill(helper, signal.SIGTERM)
        wait_for(lambda: ended_status(helper) is not None, "the helper to end", run)
        assert os.WIFSIGNALED(ended_status(helper)) and os.WTERMSIG(ended_status(helper)) == signal.SIGTERM
        (helpers / "release").touch()
        stderr = run.communicate(timeout=120)[1]
    finally:
        run.kill()
    assert run.returncode == 0, stderr
    assert "stopped by" not in stderr and "Traceback" not in stderr, stderr
    assert json.loads((out / "results.json").read_text())["complete"]


SIGNAL_FROM_A_CHILD = """
import ctypes, os, signal, sys, threading
from ragbench._stop_signals import exit_when_stuck, install_stop_handler, raise_stopped, Stopped

install_stop_handler(signal.SIGTERM, raise_stopped)  # as the command's entry point does
with exit_when_stuck(lambda signum: f"watcher: {signal.Signals(signum).name}\\n", grace=0):
    fork = os.fork if sys.argv[1] == "os" else ctypes.PyDLL(None).fork  # C code's fork runs no at-fork hook
    child = fork()
    if child == 0:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()
        finally:
            os._exit(0)
    print(os.waitpid(child, 0)[1], flush=True)
    try:  # the process's own stop signal, after the child's: the watcher sees the two in this order
        os.kill(os.getpid(), signal.SIGHUP)
        signal.pause()
    except Stopped:
        threading.Event().wait()  # stuck: the watcher ends the process
"""


@pytest.mark.parametrize("fork", ["os", "libc"])
def test_the_watcher_acts_on_the_process_own_stop_signal_never_on_a_forked_childs(fork):
    """`os.fork` (and multiprocessing's fork): the child gets its handlers and wake-up fd back, so its
    signal is its own (it ends it as SIGTERM ends a process). A fork by C code (no at-fork hook): the watcher
    reads who sent each signal."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_FROM_A_CHILD, fork], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (128 + signal.SIGHUP, "watcher: SIGHUP\n")
    if fork == "os":
        assert os.WIFSIGNALED(int(done.stdout)) and os.WTERMSIG(int(done.stdout)) == signal.SIGTERM


# --- run.lock and a forked helper ---------------------------------------------------------------------------
def test_a_plugins_forked_helper_alive_at_the_end_keeps_neither_the_lock_nor_the_process(site, tmp_path, helpers):
    out = tmp_path / "run"
    done = finished(command(site, out, helpers, "fork"), site, tmp_path / "first")
    (helper,) = helper_pids(helpers)
    assert ended_status(helper) is None and Path(f"/proc/{helper}").exists(), "the helper should still run"
    assert done.returncode == 0, done.stderr
    assert "still running, which a plugin started" in done.stderr and f"process {helper}" in done.stderr
    resumed = finished(command(site, out, helpers, "fork", "--resume"), site, tmp_path / "resumed")
    assert resumed.returncode == 0, resumed.stderr
    assert "nothing to resume" in resumed.stderr


LOCK_THEN_FORK = """
import ctypes, os, sys
from ragbench._storage.run_lock import RunLock

lock = RunLock(sys.argv[1])
lock.acquire()
fork = os.fork if sys.argv[2] == "os" else ctypes.PyDLL(None).fork
if fork() == 0:
    print("forked", flush=True)
    sys.stdin.read()  # lives until the test closes its stdin
    os._exit(0)
if sys.argv[3] == "release":
    lock.release()
os._exit(0)  # the taker ends (released or not); its child lives on
"""


def fork_under_lock(folder: Path, fork: str, end: str) -> subprocess.Popen:
    """A process that takes the lock of `folder`, forks a child (which says "forked" once it runs), and ends
    (releasing the lock first with `end` "release"); the child lives until its stdin closes."""
    taker = subprocess.Popen(
        [sys.executable, "-c", LOCK_THEN_FORK, str(folder), fork, end],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert taker.stdout.readline() == "forked\n"
    taker.wait(timeout=60)
    return taker


@pytest.mark.parametrize("fork, end", [("os", "exit"), ("libc", "release")])
def test_a_child_forked_under_the_lock_does_not_keep_it_once_its_taker_ends(tmp_path, fork, end):
    """os.fork: the child closes its copy at once, so even a taker that never released lets go as it ends.
    A fork by C code: the taker's release unlocks the file the child shares."""
    from ragbench._storage.run_lock import RunLock

    taker = fork_under_lock(tmp_path, fork, end)
    try:
        assert RunLock(tmp_path).refusal() is None
        RunLock(tmp_path).acquire()
    finally:
        taker.stdin.close()


def test_a_lock_whose_taker_ended_unreleased_while_a_c_forked_child_holds_it_says_so(tmp_path):
    from ragbench._storage.run_lock import RunLock

    taker = fork_under_lock(tmp_path, "libc", "exit")
    try:
        refusal = RunLock(tmp_path).refusal()
        assert refusal is not None and f"pid {taker.pid} on " in refusal
        assert "no longer running: a process it started still holds the lock; end that process" in refusal
    finally:
        taker.stdin.close()


# --- what a plugin leaves running at the end -----------------------------------------------------------------
@pytest.mark.parametrize(
    "helper, named",
    [("thread", "thread 'plugin helper\\nthread'"), ("multiprocessing", "process "), ("process_pool", "process ")],
)
def test_a_finished_run_ends_though_a_plugin_left_a_thread_or_process_running(site, tmp_path, helpers, helper, named):
    """Python waits at exit for a thread that is no daemon, multiprocessing for its processes: the run's process
    ends all the same, with the run's exit code and one line naming what it left."""
    out = tmp_path / "run"
    done = finished(command(site, out, helpers, helper), site, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "still running" in line]
    assert len(warnings) == 1 and named in warnings[0], done.stderr
    assert all(f"process {pid}" in warnings[0] for pid in helper_pids(helpers)), done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads((out / "results.json").read_text())["complete"]


@settings(max_examples=50, deadline=None)
@given(threads=st.lists(st.text(), max_size=4), processes=st.lists(st.integers(1, 2**22), max_size=4))
def test_what_a_plugin_left_running_is_named_in_one_line(threads, processes):
    """Thread names are a plugin's: any text (newlines, control and separator characters) stays on the line."""
    line = left_running_line(threads or ["a thread"], processes)
    assert line.endswith("\n") and len(line.splitlines()) == 1
    for name in threads:
        assert repr(name) in line
    for pid in processes:
        assert f"process {pid}" in line


ORIGINALS = [signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler, lambda signum, frame: None]


@settings(max_examples=40, deadline=None)
@given(
    originals=st.tuples(*[st.sampled_from(ORIGINALS)] * 3),
    installs=st.lists(st.booleans(), max_size=4),
    wakeup=st.sampled_from(["none", "socket"]),
)
def test_a_forked_child_gets_back_the_handlers_and_wake_up_fd_ragbench_replaced(originals, installs, wakeup):
    """Whatever the process had (a default, an ignored signal, a handler of its own) and however many of
    ragbench's handlers are stacked on it (the entry point's, the watcher's with its wake-up fd, a run's), the
    child of a fork gets back what the process had. `_as_before_in_child` is what the at-fork hook runs."""
    import socket

    from ragbench._stop_signals import STOP_SIGNALS, _as_before_in_child, install_stop_handler, raise_stopped

    signals = STOP_SIGNALS[:3]
    saved = {signum: signal.getsignal(signum) for signum in signals}
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    original_wakeup = signal.set_wakeup_fd(writer.fileno() if wakeup == "socket" else -1)
    try:
        for signum, original in zip(signals, originals):
            signal.signal(signum, original)
        for with_wakeup in installs:  # each one stacked on all of the signals, as a command installs them
            replaced = signal.set_wakeup_fd(-1) if with_wakeup else None
            for signum in signals:
                install_stop_handler(signum, raise_stopped, wakeup_replaced=replaced)
            if with_wakeup:
                signal.set_wakeup_fd(writer.fileno())
        _as_before_in_child()
        assert [signal.getsignal(signum) for signum in signals] == list(originals)
        assert signal.set_wakeup_fd(-1) == (writer.fileno() if wakeup == "socket" else -1)
    finally:
        signal.set_wakeup_fd(original_wakeup)
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        reader.close()
        writer.close()
