"""Worker processes that cannot start stop the run with one line saying why (a script without the
`__main__` guard, re-run by each worker, is the usual cause); a worker killed later fails only the call
it was running."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragbench.api.run import Workers
from ragbench.tasks.crag.synthetic import PageSizes, standin_tokenizer, write_task3_archive
from support import paths

ROOT = paths.REPO


def script(tmp_path: Path, guarded: bool) -> str:
    archive = write_task3_archive(tmp_path / "data", 2, 3, PageSizes.small(2000))
    tokenizer = standin_tokenizer(tmp_path / "tokenizer")
    body = f"""
        config = RunConfig.of(tasks=["crag_t3"], system="smart", model="scripted:echo", data={{"crag_t3": {str(archive)!r}}},
                           output={str(tmp_path / "run")!r}, progress=False, bootstrap_iters=0,
                           task_args={{"kg": False, "tokenizer": {str(tokenizer)!r}, "judge_protocol": "none"}})
        try:
            print("counts", Evaluator(config, installed_registry()).run().results["counts"]["crag_t3"])
        except ConfigError as exc:
            print("error:", exc)
    """
    if guarded:
        body = "if __name__ == '__main__':\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return (
        "from ragbench._errors import ConfigError\nfrom ragbench._registry import installed_registry\n"
        "from ragbench._run.evaluator import Evaluator, RunConfig\n" + textwrap.dedent(body)
    )


def run_script(tmp_path: Path, guarded: bool) -> subprocess.CompletedProcess:
    path = tmp_path / "evaluate.py"
    path.write_text(script(tmp_path, guarded), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAGBENCH_WORKERS": "2"}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)


def test_a_script_without_the_main_guard_gets_one_line_naming_it(tmp_path):
    done = run_script(tmp_path, guarded=False)
    assert "Traceback" not in done.stderr, done.stderr  # no worker prints the second run's failure
    assert done.stdout.count("error:") == 1, done.stdout
    assert "evaluate.py" in done.stdout and 'if __name__ == "__main__":' in done.stdout
    assert "counts" not in done.stdout  # stopped: not a run of failed examples


def test_the_same_script_with_the_guard_runs(tmp_path):
    done = run_script(tmp_path, guarded=True)
    assert "Traceback" not in done.stderr, done.stderr
    assert "'scored': 2" in done.stdout, done.stdout


def test_a_worker_killed_fails_its_call_and_the_next_call_gets_a_new_pool():
    workers = Workers(1)

    async def main():
        with pytest.raises(Exception, match="terminated abruptly"):
            await workers.run(os._exit, 9)
        return await workers.run(os.getpid)

    try:
        assert asyncio.run(main()) != os.getpid()
    finally:
        workers.close()


# The forkserver's socket file replaced by one nobody listens on: connecting to it is refused, as CI once saw
# in a test process where a run's background start then died with an unhandled ConnectionRefusedError.
REFUSED_START = """
import asyncio, multiprocessing.forkserver as forkserver, os, socket, threading
from ragbench.api.run import Workers
unhandled = []
threading.excepthook = lambda args: unhandled.append(repr(args.exc_value))
forkserver.ensure_running()
address = forkserver._forkserver._forkserver_address
os.unlink(address)
with socket.socket(socket.AF_UNIX) as nobody:
    nobody.bind(address)
workers = Workers(1)
workers.warm("json")
workers.start_soon()
try:
    asyncio.run(workers.run(int))
except ConnectionRefusedError:
    print("the next call says why")
workers.close()  # waits for the background start
print("unhandled:", unhandled)
forkserver._forkserver._stop()  # the next start starts a forkserver again
workers = Workers(1)
print("then:", asyncio.run(workers.run(int, "7")))
workers.close()
"""


def test_a_refused_background_start_raises_nothing_unhandled_and_the_next_start_runs():
    done = subprocess.run(
        [sys.executable, "-c", REFUSED_START], capture_output=True, text=True, timeout=300, env={**os.environ}
    )
    assert done.stdout.splitlines() == ["the next call says why", "unhandled: []", "then: 7"], done.stdout + done.stderr
