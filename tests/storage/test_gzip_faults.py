"""A gzip data file whose unpacking fails says which fault it is (ragbench/_storage/gzipped.py): damaged data is a
record that cannot be read past (or one line naming the file), never a traceback of zlib.error nor records
silently different from the file's; zlib running out of memory is a MemoryError, so the run ends in its one
out-of-memory line (CI once saw "the check raised error: Error -4 while decompressing data ... a bug of the
plugin checked" under a 1 GB limit, where test_resource_limits expects the out-of-memory line)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.api import ConfigError, RecordError
from ragbench.api.yaml_tasks import yaml_task_class

RECORDS = [{"id": str(i), "question": f"Q{i}?", "answer": "x" * (i % 7)} for i in range(60)]
TEXTS = {
    "d.jsonl.gz": "".join(json.dumps(r) + "\n" for r in RECORDS),
    "d.csv.gz": "id,question,answer\n" + "".join(f"{r['id']},{r['question']},{r['answer']}\n" for r in RECORDS),
    "d.json.gz": json.dumps(RECORDS),
}


def packed(text: str) -> bytes:
    """`text` gzipped in two members (as a file appended to is), each unpacked with its own zlib stream."""
    half = len(text) // 2
    return gzip.compress(text[:half].encode(), mtime=0) + gzip.compress(text[half:].encode(), mtime=0)


def read(folder: Path, name: str, content: bytes) -> list:
    (folder / name).write_bytes(content)
    (folder / "t.yaml").write_text(
        f"task: t\ndata: {{path: {name}}}\nfields: {{gold: {{answers: answer}}}}\nmetrics: [em]\n", encoding="utf-8"
    )
    task = yaml_task_class(folder / "t.yaml")()
    return [str(item) if isinstance(item, RecordError) else (item.id, item.question) for item in task.examples()]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(TEXTS)), where=st.floats(0, 1, exclude_max=True), flip=st.integers(1, 255))
def test_damaged_gzip_data_is_a_record_not_read_past_never_a_traceback_or_other_records(
    tmp_path_factory, name, where, flip
):
    folder = tmp_path_factory.mktemp("damaged")
    whole = packed(TEXTS[name])
    intact = read(folder, name, whole)
    at = int(where * len(whole))
    damaged = whole[:at] + bytes([whole[at] ^ flip]) + whole[at + 1 :]
    try:
        got = read(folder, name, damaged)
    except ConfigError as exc:  # a whole JSON document that cannot be read: one line naming the file
        assert str(folder / name) in str(exc)
        return
    # a byte of the header's time or OS field changes nothing read; any other change is told
    assert got == intact or any(isinstance(item, str) for item in got)


def flipped_until_zlib_refuses(whole: bytes) -> bytes:
    """`whole` with the first byte of its deflate data whose flip zlib refuses (not one its CRC check finds)."""
    for at in range(10, len(whole)):
        damaged = whole[:at] + bytes([whole[at] ^ 0xFF]) + whole[at + 1 :]
        try:
            gzip.decompress(damaged)
        except zlib.error:
            return damaged
        except (OSError, EOFError):
            continue
    raise AssertionError("no flip zlib refuses")


def test_deflate_data_zlib_refuses_is_a_broken_stream_after_the_records_read(tmp_path):
    got = read(tmp_path, "d.jsonl.gz", flipped_until_zlib_refuses(packed(TEXTS["d.jsonl.gz"])))
    assert isinstance(got[-1], str) and "corrupt gzip data" in got[-1] and "cut short or corrupt" in got[-1]


# Each allocation of a read fails in turn (CPython's _testcapi.set_nomemory: a real failed allocation, the one
# zlib's window takes among them), in a child process: the hook fails every thread's allocations. An error is
# "told" where the command line's `exhausted` names it out of memory (its one line, not a traceback).
EVERY_ALLOCATION = """
import collections, json, sys, zlib
from pathlib import Path
import _testcapi
from ragbench._cli.outcomes import exhausted
from ragbench._yaml_tasks.opened import open_binary
path, text = Path(sys.argv[1]), Path(sys.argv[2]).read_bytes()
outcomes, start, unfailed = collections.Counter(), 0, 0
while unfailed < 300:  # past the read's last allocation
    _testcapi.set_nomemory(start, start + 1)
    try:
        with open_binary(path) as handle:
            outcome = "same" if b"".join(handle) == text else "differs"
    except BaseException as exc:
        kind = "zlib.error" if isinstance(exc, zlib.error) else type(exc).__name__
        outcome = ("told " if exhausted(exc) else "") + kind + ": " + str(exc)
    finally:
        _testcapi.remove_mem_hooks()
    outcomes[outcome] += 1
    unfailed, start = unfailed + 1 if outcome == "same" else 0, start + 1
print(json.dumps(outcomes))
"""
# CPython's open(), os.stat() and os.open() (a data file is looked at before it is opened) report a failed allocation
# while they convert a Path as these TypeErrors (no MemoryError chained to them): nothing a reader can tell from a
# wrong argument
OPEN_PATH_QUIRKS = {
    "TypeError: expected str, bytes or os.PathLike object, not PosixPath",
    "TypeError: stat: path should be string, bytes, os.PathLike or integer, not PosixPath",
    "TypeError: open: path should be string, bytes or os.PathLike, not PosixPath",
}


@pytest.mark.skipif(importlib.util.find_spec("_testcapi") is None, reason="this Python has no _testcapi")
def test_a_failed_allocation_while_unpacking_is_out_of_memory_never_damaged_data(tmp_path):
    text = TEXTS["d.jsonl.gz"]
    (tmp_path / "text").write_bytes(text.encode())
    (tmp_path / "d.jsonl.gz").write_bytes(packed(text))
    result = subprocess.run(
        [sys.executable, "-c", EVERY_ALLOCATION, str(tmp_path / "d.jsonl.gz"), str(tmp_path / "text")],
        capture_output=True,
        text=True,
        check=True,
    )
    outcomes = json.loads(result.stdout)
    assert (
        "told MemoryError: zlib ran out of memory unpacking gzip data (Error -4 while decompressing data)" in outcomes
    )
    assert "told RuntimeError: can't allocate read lock" in outcomes  # io's buffered reader's lock
    assert {o for o in outcomes if o != "same" and not o.startswith("told ")} <= OPEN_PATH_QUIRKS, outcomes
