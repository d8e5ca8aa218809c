"""Real FIFOs and devices in tests of code that must never wait on one or read one without end: `fifo_writer` gives
each FIFO put in its list a writer that opens and closes at once whenever a reader waits on it, so that code opening
a FIFO reads it as empty (and fails its test) instead of hanging the suite; `memory_bounded` bounds this process's
memory for a block, so that code reading /dev/zero fails with a MemoryError instead of filling the machine."""

from __future__ import annotations

import os
import re
import resource
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@pytest.fixture
def fifo_writer() -> Iterator[list[Path]]:
    """FIFOs put in the list get a writer that opens and closes at once whenever a reader waits on one: code
    that opens a FIFO reads it as empty (and fails the test) instead of hanging."""
    fifos: list[Path] = []
    done = threading.Event()

    def unblock() -> None:
        while not done.wait(0.005):
            for fifo in list(fifos):
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # ENXIO while no reader waits
                except OSError:
                    pass

    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    yield fifos
    done.set()
    thread.join()


@contextmanager
def memory_bounded(more: int = 3 << 30) -> Iterator[None]:
    """This process's address space bounded, for the block, to what it holds now and `more` bytes: a read of
    /dev/zero that a regression lets through ends in a MemoryError here, never in the machine's OOM killer."""
    size = re.search(r"^VmSize:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    bound = int(size[1]) * 1024 + more if size else 8 << 30
    resource.setrlimit(resource.RLIMIT_AS, (bound if hard == resource.RLIM_INFINITY else min(bound, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
