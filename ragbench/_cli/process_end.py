"""How the `ragbench` process ends once its command has: with the command's exit code, whatever a plugin left
running. Python waits at exit for every thread that is not a daemon, and multiprocessing for its processes
that are not daemons: a complete run never ended, and a SIGTERM to end it printed a traceback from that wait.
What is left is named in one line (a forked helper too, which runs on after the run); when the exit would
wait for it, the process exits without waiting, its output flushed (results.json, the samples and the run's
lock were written and let go by then). A command stopped by a signal exits without waiting too, and without
the line: what runs on is its own calls in flight."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn

from .._children import running_children
from .._stop_signals import STOP_SIGNALS, signal_of


def end_process(command: Callable[[], Any]) -> NoReturn:
    """Run `command` (a click command in standalone mode, which ends in `SystemExit`), then end the process."""
    try:
        command()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    try:
        threads, processes, waited_for = left_running()
        stopped = isinstance(code, int) and code - 128 in STOP_SIGNALS  # it leaves its own engine calls running
        if (threads or processes) and not stopped:  # (ragbench._run.lifetime.interrupted), as its line said
            sys.stderr.write(left_running_line(threads, processes))
    except KeyboardInterrupt as exc:  # a stop signal once the command has ended: it ends the process, as it is
        code, waited_for = 128 + signal_of(exc), True
    if not waited_for:
        sys.exit(code)
    if not isinstance(code, int) and code is not None:  # as Python prints a SystemExit's message, then exits 1
        print(code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing more can reach it
            pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def left_running() -> tuple[list[str], list[int], bool]:
    """What runs on as the command ends: the names of the threads Python waits for at exit (alive, not daemons,
    other than this one), the pids of this process's children still running that nothing of Python's exit
    ends (multiprocessing's daemon processes, its forkserver and resource tracker left out: they end with this
    process, as a vLLM engine's process does), and whether the exit would wait for any of them (a thread, a
    multiprocessing process that is no daemon)."""
    import multiprocessing  # here: the command's first moments load this module, not multiprocessing

    threads = [
        thread.name
        for thread in threading.enumerate()
        if thread is not threading.current_thread() and not thread.daemon and thread.is_alive()
    ]
    started = multiprocessing.active_children()
    waited = {process.pid for process in started if not process.daemon and process.pid is not None}
    ended_at_exit = {process.pid for process in started if process.daemon and process.pid is not None}
    ended_at_exit |= _multiprocessing_helpers()
    processes = sorted(set(running_children()) - ended_at_exit | waited)
    return threads, processes, bool(threads or waited)


def left_running_line(threads: list[str], processes: list[int]) -> str:
    """One line, whatever the threads are named."""
    named = [f"thread {name!r}" for name in threads] + [f"process {pid}" for pid in processes]
    return (
        f"ragbench: warning: the command ended with {', '.join(named)} still running, which a plugin started "
        "and did not end; not waited for\n"
    )


def _multiprocessing_helpers() -> set[int]:
    """The pids of multiprocessing's forkserver and resource tracker, where this process started them."""
    helpers = set()
    for module, attribute, pid in (
        ("forkserver", "_forkserver", "_forkserver_pid"),
        ("resource_tracker", "_resource_tracker", "_pid"),
    ):
        started = getattr(sys.modules.get(f"multiprocessing.{module}"), attribute, None)
        if getattr(started, pid, None):
            helpers.add(getattr(started, pid))
    return helpers
