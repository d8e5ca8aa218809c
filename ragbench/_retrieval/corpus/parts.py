"""A corpus cut into contiguous parts, each read on its own by a worker of a shard-parallel build
(`shard_build`), where it lies: the parts' passages, one after the other, are the one-process reader's
(`readers.corpus_rows`), in its order, bad rows counted the same way.

- A JSONL file: S byte ranges of equal size; a part holds the lines that START in its range (the line a range's
  first byte falls in belongs to the part before), read from its own start (`part_lines`). Its bad rows are
  named by line numbers counted from the part's first line; `renumbered` names them by the file's, once the
  driver knows how many lines the parts before hold.
- A folder of MS MARCO V2.1 segmented shards: S runs of whole files, in name order (S at most the files).

Every read goes through `open_bytes`, plain local file I/O, so another location (an object store) is one
function to swap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..._errors import ConfigError, RecordError
from ..._storage.files import open_file
from ..._storage.jsonl import located_lines
from ..._types import Document
from .readers import SEGMENTED, corpus_format, jsonl_passage
from .segmented import open_shard, shard_files, shard_passage

PART_FORMS = ("jsonl", SEGMENTED)  # the corpus forms read in parts


@dataclass(frozen=True)
class CorpusPart:
    """Part `number` of a corpus: the lines of `files[0]` starting in bytes [start, stop) (a JSONL file), or
    the whole of each of `files` (segmented shards; start and stop 0)."""

    number: int
    form: str
    files: tuple[str, ...]
    start: int = 0
    stop: int = 0


def open_bytes(path: str | Path) -> IO[bytes]:
    """A corpus file opened for reading bytes (the one place a part's bytes are opened)."""
    handle: IO[bytes] = open_file(path)
    return handle


def corpus_parts(corpus: Path, count: int) -> list[CorpusPart]:
    """`corpus` cut into `count` parts (module docstring); a ConfigError for a form not read in parts, or more
    parts than a segmented folder has files."""
    form = corpus_format(corpus)
    if form not in PART_FORMS:
        raise ConfigError(
            f"corpus {corpus}: index build --ray --shards reads a .jsonl file or a folder of MS MARCO V2.1 segmented "
            f"shards in parts, not a {form} corpus; add --merged to build the one index and split it"
        )
    if form == SEGMENTED:
        files = [str(path) for path in shard_files(corpus)]
        if count > len(files):
            raise ConfigError(
                f"--shards {count}: corpus {corpus} has {len(files)} shard files and a shard is built from whole "
                f"files; choose 1 to {len(files)}"
            )
        size, extra = divmod(len(files), count)
        bounds = [0]
        for number in range(count):
            bounds.append(bounds[-1] + size + (number < extra))
        return [CorpusPart(n, form, tuple(files[a:b])) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    size = corpus.stat().st_size
    bounds = [size * number // count for number in range(count + 1)]
    return [CorpusPart(n, form, (str(corpus),), a, b) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]


class PartReading:
    """What reading a part saw besides its passages: its lines (JSONL: those it owns) and the sha256 of the bytes
    it read (a segmented shard's unpacked)."""

    def __init__(self) -> None:
        self.lines = 0
        self.digest = hashlib.sha256()


def part_lines(handle: IO[bytes], start: int, stop: int, reading: PartReading) -> tuple[int, Iterator[bytes]]:
    """(where its first line starts, the lines) of the lines of `handle` that start in bytes [start, stop)."""
    if start > 0:
        handle.seek(start - 1)
        handle.readline()  # the line byte start-1 is in: the part before owns it (it starts before `start`)
    first = handle.tell()

    def lines() -> Iterator[bytes]:
        position = first
        for line in handle:
            if position >= stop:
                return
            reading.lines += 1
            reading.digest.update(line)
            position += len(line)
            yield line

    return first, lines()


def read_part(part: CorpusPart, reading: PartReading) -> Iterator[Document | RecordError]:
    """The part's passages and bad rows in corpus order (JSONL bad rows numbered from the part's first line)."""
    if part.form == SEGMENTED:
        for shard in map(Path, part.files):
            with open_shard(shard) as handle:
                for located in located_lines(counted(handle, reading), str(shard)):
                    yield shard_passage(located, shard)
        return
    path = Path(part.files[0])
    with open_bytes(path) as handle:
        first, lines = part_lines(handle, part.start, part.stop, reading)
        for located in located_lines(lines, str(path), start=first):
            yield jsonl_passage(located, path)


def counted(handle: Any, reading: PartReading) -> Iterator[bytes]:
    for line in handle:
        reading.lines += 1
        reading.digest.update(line)
        yield line


def error_record(error: RecordError) -> tuple[str, int, str, str | None, str | None]:
    """`error` as plain values (a worker sends it to the driver; an exception's pickle loses its fields)."""
    where = (f"{error.path} {error.at}" if error.at else f"{error.path}:{error.line}") + (
        f" field '{error.field}'" if error.field else ""
    )
    return error.path, error.line, str(error)[len(where) + 2 :], error.field, error.at


def renumbered(record: Any, lines_before: int) -> RecordError:
    """The RecordError of `error_record`'s values, its line moved on by `lines_before` (a JSONL part's lines
    are numbered from its first: the file's number is the lines of the parts before it plus the part's)."""
    path, line, message, field, at = record
    return RecordError(path, int(line) + lines_before, message, field, at)
