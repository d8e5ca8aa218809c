"""Real FIFOs in tests of code that must never open one: `fifo_writer` gives each FIFO put in its list a writer
that opens and closes at once whenever a reader waits on it, so that code opening a FIFO reads it as empty (and
fails its test) instead of hanging the suite."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
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
