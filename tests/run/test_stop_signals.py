"""Stop signals at awkward moments: inside a finalizer (where Python drops the handler's exception), a
second one while a stopped run cleans up (`timeout` sends two), one as the run's task ends, during
`ragbench rescore`."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest
from test_command_faults import finished  # noqa: F401 (a fixture)

from support.helpers import cli_here

FINALIZER_SCRIPT = """
import os, signal, sys, time, weakref
from ragbench._stop_signals import exit_when_stuck, signal_of, stop_as_ctrl_c

class Thing:
    pass

def finalizer(_):  # the signal's handler runs here, where an exception is printed and dropped
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    for _ in range(10_000):
        pass

def a_finalizer_runs():
    thing = Thing()
    reference = weakref.ref(thing, finalizer)
    del thing
    for _ in range(3000):
        time.sleep(0.01)
    print("went on")

try:
{body}
except KeyboardInterrupt as exc:
    print("stopped by", signal.Signals(signal_of(exc)).name)
"""


def stopped_in_a_finalizer(body: str, name: str) -> subprocess.CompletedProcess:
    """A script whose `body` (where the finalizer runs) is sent the signal `name` inside a weakref callback."""
    script = FINALIZER_SCRIPT.replace("{body}", textwrap.indent(textwrap.dedent(body).strip(), "    "))
    return subprocess.run([sys.executable, "-c", script, name], capture_output=True, text=True, timeout=90)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_that_lands_in_a_finalizer_still_stops_the_command_without_a_traceback(name):
    """A handler's exception raised inside a weakref callback or __del__ is printed ("Exception ignored
    in ...") and dropped by Python; the signal is sent again, so the command stops where it stands."""
    done = stopped_in_a_finalizer(
        """
        with exit_when_stuck(lambda signum: "stuck\\n", grace=30):
            a_finalizer_runs()
        """,
        name,
    )
    assert done.stdout.strip() == f"stopped by {name}", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_stop_signal_dropped_in_a_finalizer_between_the_commands_phases_still_stops_it(name):
    """CI saw `ragbench` sent SIGTERM as it started run to its end and exit 0: the handler's exception came
    inside the import system's module-lock clean-up (a weakref callback), after the modules had loaded and
    before the run's handlers, where nothing sent the signal again."""
    done = stopped_in_a_finalizer(
        """
        stop_as_ctrl_c()  # as ragbench._cli.entry does first
        with exit_when_stuck(lambda signum: "stuck\\n", grace=30):  # the modules loading
            pass
        a_finalizer_runs()  # the command line parsed, before the run's own handlers: a module lock's clean-up
        """,
        name,
    )
    assert done.stdout.strip() == f"stopped by {name}", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


SECOND_SIGNAL_WHILE_CLEANING_UP = """
import asyncio, gc, os, signal, threading
from ragbench._run.lifetime.lifecycle import Stopped, run_interruptible

async def a_run():
    helper = asyncio.get_running_loop().create_task(asyncio.sleep(60))  # e.g. a scheduler's dispatcher
    try:
        await asyncio.sleep(60)
    finally:  # cancelled by the first signal; the second comes while it cleans up (`timeout` sends two)
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.to_thread(sum, [1, 2])
        helper.cancel()

threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
try:
    run_interruptible(a_run())
except Stopped as exc:
    print("stopped by", exc)
gc.collect()
"""


def test_a_second_signal_while_a_stopped_run_cleans_up_leaves_no_asyncio_report():
    done = subprocess.run(
        [sys.executable, "-c", SECOND_SIGNAL_WHILE_CLEANING_UP], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "stopped by SIGTERM", (done.stdout, done.stderr)
    assert done.stderr == "", done.stderr


SIGNAL_AS_THE_RUN_ENDS = """
import asyncio, os, signal, sys
from ragbench._run.lifetime.lifecycle import run_interruptible

async def a_run():  # the signal lands once the run's task is done, before the loop stops: too late to cancel it
    asyncio.current_task().add_done_callback(lambda _: os.kill(os.getpid(), getattr(signal, sys.argv[1])))
    return "finished"

try:
    print(run_interruptible(a_run()))
except KeyboardInterrupt as exc:
    print("stopped by", type(exc).__name__, exc)
"""


@pytest.mark.parametrize("name, stopped", [("SIGTERM", "Stopped SIGTERM"), ("SIGINT", "KeyboardInterrupt")])
def test_a_stop_signal_as_the_run_ends_still_stops_the_command(name, stopped):
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_AS_THE_RUN_ENDS, name], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == f"stopped by {stopped}", (done.stdout, done.stderr)
    assert done.stderr == "", done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_rescore_stopped_by_a_signal_says_so_in_one_line_and_overwrite_completes_it(tmp_path, finished, signum):
    out = tmp_path / "rescored"
    args = [
        "rescore",
        str(finished),
        "--metrics",
        "+llm_judge",
        "--judge",
        "scripted:echo",
        "--judge-arg",
        "0.overhead=0.2",
        "--max-inflight",
        "1",
        "--output",
        str(out),
        "--no-progress",  # the bar on stderr besides the line
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "ragbench._cli.main", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list((out / "samples").glob("*.jsonl")) or not (out / "samples" / "popqa.jsonl").stat().st_size:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read()
        time.sleep(0.02)
    process.send_signal(signum)
    stderr = process.communicate(timeout=60)[1]
    how = "interrupted" if signum == signal.SIGINT else f"stopped by {signum.name}"
    assert process.returncode == 128 + signum, stderr
    assert stderr.strip().splitlines() == [
        f"ragbench rescore: {how}; {finished} is unchanged, the rescored folder is "
        "unfinished (run the same command with --overwrite)"
    ]
    assert cli_here(*args, "--overwrite").returncode == 0
