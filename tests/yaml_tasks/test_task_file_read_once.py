"""A task file's recorded digest (`yaml_sha256`, run.json's task config) is of the bytes the task was read from:
the file is read once. It was read twice (parsed, then read again for its sha256), so a file written in between
recorded the digest of content that was not run. The fault here is real: a named pipe that serves another version
of the task to each open (a file rewritten between two reads, made certain)."""

from __future__ import annotations

import errno
import hashlib
import os
import threading
from pathlib import Path

import pytest

from ragbench.api.yaml_tasks import yaml_task_class

VERSIONS = [
    f"task: facts\ndescription: version {n}\ndata: {{path: d.jsonl}}\nprompt:\n  template: 'Q: {{{{ question }}}}'\nmetrics: [em]\n".encode()
    for n in (1, 2, 3)
]


def _held(fifo: Path, own: int | None = None) -> bool:
    """Whether a descriptor of this process (other than `own`) has the pipe open: a reader holding it."""
    folder = Path("/proc/self/fd")
    for entry in folder.iterdir():
        try:
            if int(entry.name) != own and os.readlink(entry) == str(fifo):
                return True
        except OSError:  # a descriptor closed as it was listed
            continue
    return False


def serve_versions(fifo: Path, stop: threading.Event) -> None:
    """Each open of `fifo` by a reader gets the next of VERSIONS, whole, until `stop`. A version is written only
    once the reader of the one before has closed the pipe (so that no reader gets two), then to the next reader
    that opens it: the order of the opens decides, not timing."""
    for version in VERSIONS:
        fd = None
        while fd is None:  # a reader waiting in open() (or holding the pipe: not after the wait below)
            if stop.is_set():
                return
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                    raise
                stop.wait(0.001)
        os.set_blocking(fd, True)
        os.write(fd, version)
        while not _held(fifo, own=fd) and not stop.is_set():  # the reader's open has returned
            stop.wait(0.001)
        os.close(fd)  # the reader reads the version, then the end of the file
        while _held(fifo) and not stop.is_set():  # until the reader closed the pipe
            stop.wait(0.001)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir() or not hasattr(os, "mkfifo"), reason="needs mkfifo, /proc")
def test_the_digest_recorded_is_of_the_bytes_the_task_was_read_from(tmp_path):
    fifo = tmp_path / "facts.yaml"
    os.mkfifo(fifo)
    stop = threading.Event()
    writer = threading.Thread(target=serve_versions, args=(fifo, stop), daemon=True)
    writer.start()
    try:
        task = yaml_task_class(fifo)
    finally:
        stop.set()
        writer.join()
    assert task.spec.description == "version 1"  # the task read is the first version served
    assert task().config()["yaml_sha256"] == hashlib.sha256(VERSIONS[0]).hexdigest()  # and so is its digest
