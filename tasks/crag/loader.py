"""Streaming readers for CRAG's release files; nothing is decompressed or extracted to disk.

* Task 1&2: `crag_task_1_and_2_dev_v{4,5}.jsonl.bz2` (or a plain `.jsonl`, e.g. the example file
  decompressed), read line by line through bz2.
* Task 3: `crag_task_3_dev_v4.tar.bz2.part1..4` / `_v5.tar.bz2.part0..3`: the parts are chained
  into one byte stream in numeric order and read as a streaming tar (`r|bz2`); every `*.jsonl`
  member is read line by line, in archive order. A plain `.tar.bz2` works the same way.

Readers yield `(record_number, record or RecordError)`; record numbers count every line of data
from 0 across all members, so they are stable positions for resuming. Readers are advanced off
the event loop (the evaluator reads in a thread, where bz2 releases the GIL); large records are
parsed in the shared worker processes (`loads`).
"""
from __future__ import annotations

import bz2
import io
import json
import re
import tarfile
from pathlib import Path
from typing import IO, Any, Iterator

from ragbench import workers
from ragbench.errors import ConfigError, RecordError
from ragbench.jsonl import objects, read_lines

Item = tuple[int, "dict[str, Any] | RecordError"]
_PART = re.compile(r"^(?P<stem>.+\.tar\.bz2)\.part(?P<number>\d+)$")


class ChainedParts(io.RawIOBase):
    """The concatenation of several files as one read-only stream (`cat part*` without a copy)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = list(paths)
        self.current: IO[bytes] | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while True:
            if self.current is None:
                if not self.paths:
                    return 0
                self.current = open(self.paths.pop(0), "rb")
            count = self.current.readinto(buffer)
            if count:
                return count
            self.current.close()
            self.current = None

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
        super().close()


def task3_parts(path: Path) -> list[Path]:
    """The archive's files in order: all `<stem>.partN` beside a given part (or inside a given
    folder), or the one `.tar.bz2` given."""
    if path.is_dir():
        parts = [p for p in path.iterdir() if _PART.match(p.name)]
        stems = {_PART.match(p.name).group("stem") for p in parts}
        if len(stems) != 1:
            raise ConfigError(f"--data crag_t3={path}: expected the parts of one .tar.bz2 archive in this folder, "
                              f"found {sorted(stems) or 'none'}")
    else:
        match = _PART.match(path.name)
        if match is None:
            return [path]
        parts = [p for p in path.parent.iterdir() if (m := _PART.match(p.name)) and m.group("stem") == match.group("stem")]
    parts.sort(key=lambda p: int(_PART.match(p.name).group("number")))
    numbers = [int(_PART.match(p.name).group("number")) for p in parts]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise ConfigError(f"--data crag_t3={path}: archive parts {numbers} are not consecutive; a part is missing")
    return parts


LARGE_RECORD_BYTES = 256 * 1024


def loads(line: str) -> Any:
    """json.loads; a line of LARGE_RECORD_BYTES or more (a Task 3 record is ~3 MB) in the workers'
    record lane: parsing it here would hold the GIL, and so the event loop, for tens of milliseconds."""
    if len(line) < LARGE_RECORD_BYTES:
        return json.loads(line)
    return workers.submit_record(json.loads, line).result()


def _parse_lines(stream: IO[bytes], where: str, start: int) -> Iterator[Item]:
    """Records numbered from `start`, every non-blank line of the stream counting as one."""
    for number, (_, item) in enumerate(objects(read_lines(stream, where, loads), where), start):
        yield number, item


def read_jsonl(path: Path) -> Iterator[Item]:
    """Task 1&2 file: `.jsonl.bz2` streamed through bz2, or plain `.jsonl`."""
    opener = bz2.open if path.name.endswith(".bz2") else open
    count = 0
    try:
        with opener(path, "rb") as handle:
            for item in _parse_lines(handle, str(path), 0):
                count = item[0] + 1
                yield item
    except (OSError, EOFError) as exc:  # a truncated or corrupt .bz2: one error, then the file ends
        yield count, RecordError(str(path), count + 1, f"cannot read past this record ({exc})")


def read_task3_archive(path: Path) -> Iterator[Item]:
    """Every `*.jsonl` member of the (multi-part) `.tar.bz2`, in archive order, streamed."""
    stream = io.BufferedReader(ChainedParts(task3_parts(path)), buffer_size=1 << 20)
    count = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|bz2") as archive:
            for member in archive:
                if member.isfile() and member.name.endswith(".jsonl"):
                    for item in _parse_lines(archive.extractfile(member), f"{path}!{member.name}", count):
                        count = item[0] + 1
                        yield item
    except (OSError, EOFError, tarfile.TarError) as exc:  # truncated or corrupt archive
        if count == 0:  # not even the first record: not Task 3's archive at all
            yield count, RecordError(str(path), 1, f"not a readable .tar.bz2 archive of JSONL files ({exc}); "
                                                   "Task 3 reads crag_task_3_dev_v5.tar.bz2.part0..3 (a .jsonl or "
                                                   ".jsonl.bz2 is Tasks 1 and 2's format: --tasks crag_t1/crag_t2)")
        else:
            yield count, RecordError(str(path), count + 1, f"cannot read past this record ({exc})")
    finally:
        stream.close()
