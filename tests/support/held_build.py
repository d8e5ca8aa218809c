"""A shard build held mid-way in a process of its own (`held_build`): the first of two drivers building into one
--out, held while it holds the --out (its lock taken, its runner started, step 1 not begun) until the test lets it go
on, stops or kills it. Ordered by a pipe alone (it says when it holds the --out; a line sent on it lets it go on): no
waiting on time.

The driver is a fork of one process per test process that has the build's modules loaded (multiprocessing's
forkserver, `forks`): the import of ragbench, its kinds and s3fs is paid once (~2 s of CPU on a 2-vCPU VM), not once
a driver. It is still a process of its own, as a second machine's driver is: its own pid (which its lock records, and
which is gone once it is killed), its own threads (its lease's renewals), stopped and killed as one; it runs in the
environment and working folder of the test at the time it is started, not the forkserver's."""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# what every driver imports, imported by the forkserver once
PRELOAD = ["ragbench._retrieval.sharding.build.driver", "ragbench.testing", "s3fs", "support.held_build"]


@lru_cache(maxsize=1)
def forks() -> Any:
    """The forkserver context the drivers are forked from (started on its first use, ended with this process)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def drive(corpus: str, out: str, shards: int, environment: dict[str, str], cwd: str, pipe: Connection) -> None:
    """The driver (run in the fork): says "held" once it holds the --out, waits for a line, builds; sends what it
    would print on stderr as it ends (its traceback, or nothing), and exits 1 where the build raised."""
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    from ragbench._retrieval.sharding.build.driver import build_shards
    from ragbench._retrieval.sharding.build.runner import InProcess
    from ragbench.testing import installed_registry

    class Held(InProcess):
        def __init__(self) -> None:  # started once the --out is held, before step 1
            pipe.send("held")
            pipe.recv()

    try:
        build_shards(Path(corpus), out if "://" in out else Path(out), "lucene_bm25", {}, shards,
                     registry=installed_registry(), runner=Held)  # fmt: skip
    except BaseException as exc:
        pipe.send("".join(traceback.format_exception(exc)))
        raise SystemExit(1) from None
    pipe.send("")


class HeldDriver:
    """The held driver's process, told as a `subprocess.Popen` is: `pid`, `send_signal`, `kill`, `poll`,
    `communicate(line)` (lets it go on and waits for its end: ("", what it printed on stderr)), `returncode`."""

    def __init__(self, process: Any, pipe: Connection) -> None:
        self.process, self.pipe = process, pipe
        self.returncode: int | None = None

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    def send_signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def kill(self) -> None:
        self.process.kill()

    def poll(self) -> int | None:
        exitcode: int | None = self.process.exitcode
        return exitcode

    def communicate(self, line: str) -> tuple[str, str]:
        self.pipe.send(line)
        try:
            err = self.pipe.recv()
        except EOFError:  # it died before it said how it ended
            err = ""
        self.ended()
        return "", err

    def ended(self) -> None:
        """Waited for (and reaped by the forkserver: its pid is then gone)."""
        self.process.join()
        self.returncode = self.process.exitcode


@contextmanager
def held_build(corpus: Path, out: str | Path, shards: int) -> Iterator[HeldDriver]:
    """A driver building `corpus` into `out` in `shards` lucene_bm25 shards in its own process, which holds the
    --out while the block runs; the block lets it go on (`driver.communicate("\\n")`) or kills it. Killed after the
    block where it still runs, and waited for."""
    context = forks()
    ours, theirs = context.Pipe()
    process = context.Process(
        target=drive, args=(str(corpus), str(out), shards, dict(os.environ), os.getcwd(), theirs), daemon=True
    )
    process.start()
    theirs.close()
    driver = HeldDriver(process, ours)
    try:
        try:
            said = ours.recv()
        except EOFError:
            said = ""
        if said != "held":  # it ended before it held the --out
            driver.ended()
            raise AssertionError(said)
        yield driver
    finally:
        if process.exitcode is None and process.is_alive():
            process.kill()
        driver.ended()
        ours.close()
