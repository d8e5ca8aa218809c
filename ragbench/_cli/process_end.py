"""How the `ragbench` process ends once its command has: with the command's exit code, even when a plugin left
threads or processes running. Python waits at exit for every thread that is not a daemon, and multiprocessing
for the processes it started; a complete run then never ended, and a SIGTERM to end it printed a traceback
from that wait. What is left is named in one line, and the process exits without waiting for it (its output
flushed first; results.json, the samples and the run's lock were written and let go by then). A command
stopped by a signal exits without waiting too, and without the line: what runs on is its own calls in flight."""
from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, NoReturn

from .._stop_signals import STOP_SIGNALS


def end_process(command: Callable[[], Any]) -> NoReturn:
    """Run `command` (a click command in standalone mode, which ends in `SystemExit`), then end the process."""
    try:
        command()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    left = left_running()
    if not left:
        sys.exit(code)
    if not isinstance(code, int) and code is not None:  # as Python prints a SystemExit's message, then exits 1
        print(code, file=sys.stderr)
    if not (isinstance(code, int) and code - 128 in STOP_SIGNALS):  # a stopped command leaves its own engine calls
        sys.stderr.write(left_running_line(*left))  # running (ragbench._run.interrupted), as its line said
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing more can reach it
            pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def left_running() -> tuple[list[str], list[int]] | None:
    """The names of the threads Python would wait for at exit (alive, not daemons, other than this one) and the
    pids of this process's children still running (multiprocessing's forkserver and resource tracker left
    out: they end with this process); None when there are neither."""
    threads = [thread.name for thread in threading.enumerate()
               if thread is not threading.current_thread() and not thread.daemon and thread.is_alive()]
    processes = sorted({process.pid for process in multiprocessing.active_children() if process.pid is not None}
                       | set(_running_children()) - _multiprocessing_helpers())
    return (threads, processes) if threads or processes else None


def left_running_line(threads: list[str], processes: list[int]) -> str:
    """One line, whatever the threads are named."""
    named = [f"thread {name!r}" for name in threads] + [f"process {pid}" for pid in processes]
    return (f"ragbench: warning: the command ended with {', '.join(named)} still running, which a plugin started; "
            "not waited for (a thread ends with this process, a process runs on)\n")


def _running_children() -> list[int]:
    """This process's children that have not ended (zombies left out), from /proc; none where there is none."""
    children = []
    for entry in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        try:
            state, parent = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):  # ended meanwhile, or not a process
            continue
        if int(parent) == os.getpid() and state != "Z":
            children.append(int(entry))
    return children


def _multiprocessing_helpers() -> set[int]:
    """The pids of multiprocessing's forkserver and resource tracker, where this process started them."""
    helpers = set()
    for module, attribute, pid in (("forkserver", "_forkserver", "_forkserver_pid"),
                                   ("resource_tracker", "_resource_tracker", "_pid")):
        started = getattr(sys.modules.get(f"multiprocessing.{module}"), attribute, None)
        if getattr(started, pid, None):
            helpers.add(getattr(started, pid))
    return helpers
