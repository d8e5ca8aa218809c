"""Task 3's archive (and Tasks 1&2's .jsonl.bz2) read by indexed_bzip2 on several threads (the `fast` extra) gives the same records,
and the same errors, as the stdlib's one-core reader."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys

import pytest
from test_crag_task import make_task3_parts

from ragbench.api import RecordError
from ragbench.tasks.crag import loader
from support.crag_helpers import crag_record

pytest.importorskip("indexed_bzip2")


def items(path, threads):
    return [
        (number, str(item) if isinstance(item, RecordError) else item)
        for number, item in loader.read_task3_archive(path, threads=threads)
    ]


def big_records(count):
    page = {"page_result": " ".join(str(i) for i in range(150_000))}  # ~1 MB: several bz2 blocks per record
    return [crag_record(i, split=1, search_results=[page]) for i in range(count)]


def test_the_parallel_reader_gives_the_stdlib_records(tmp_path):
    paths = make_task3_parts(tmp_path, big_records(4), parts=3)
    parallel = items(paths[0], threads=2)
    assert [number for number, _ in parallel] == [0, 1, 2, 3]
    assert parallel == items(paths[0], threads=0)


@pytest.mark.parametrize("damage", ["cut", "corrupt tail", "not bz2"])
def test_a_broken_archive_reads_exactly_as_with_the_stdlib(tmp_path, damage):
    paths = make_task3_parts(tmp_path, big_records(4), parts=3)
    if damage == "cut":
        paths[-1].write_bytes(paths[-1].read_bytes()[:1000])
    elif damage == "corrupt tail":
        paths[-1].write_bytes(b"corrupt" * 1000)
    else:
        paths[0].write_bytes(b'{"not": "an archive"}\n')
    stdlib = items(paths[0], threads=0)
    assert isinstance(stdlib[-1][1], str)  # the archive ends in a record error
    assert items(paths[0], threads=2) == stdlib


def jsonl_items(path, threads):
    return [
        (number, str(item) if isinstance(item, RecordError) else item)
        for number, item in loader.read_jsonl(path, threads=threads)
    ]


@pytest.mark.parametrize("damage", [None, "cut", "corrupt tail"])
def test_a_task_1_2_file_reads_as_with_the_stdlib(tmp_path, damage):
    path = tmp_path / "crag_task_1_and_2_dev_v4.jsonl.bz2"
    data = bz2.compress("".join(json.dumps(r) + "\n" for r in big_records(4)).encode())
    if damage == "cut":
        data = data[: len(data) // 2]
    elif damage == "corrupt tail":
        data = data[: len(data) // 2] + b"corrupt" * 1000
    path.write_bytes(data)
    stdlib = jsonl_items(path, threads=0)
    assert isinstance(stdlib[-1][1], str) == (damage is not None)
    assert len(stdlib) >= 2
    assert jsonl_items(path, threads=2) == stdlib


def test_the_thread_count_follows_the_environment(monkeypatch):
    monkeypatch.setenv(loader.BZ2_THREADS_ENV, "0")
    assert loader.parallel_bz2() == 0
    monkeypatch.setenv(loader.BZ2_THREADS_ENV, "3")
    assert loader.parallel_bz2() == 3


def test_a_parallel_reader_left_unfinished_is_closed_at_exit(tmp_path):
    """indexed_bzip2 aborts the interpreter when a file it reads is still open at exit (an interrupted run)."""
    path = tmp_path / "crag_task_1_and_2_dev_v4.jsonl.bz2"
    path.write_bytes(bz2.compress("".join(json.dumps(r) + "\n" for r in big_records(3)).encode()))
    script = (
        "import sys\nfrom pathlib import Path\nfrom ragbench.tasks.crag import loader\n"
        "items = loader.read_jsonl(Path(sys.argv[1]), threads=2)\nprint(next(items)[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "0\n"), done.stderr
