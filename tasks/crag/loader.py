"""Streaming readers for CRAG's release files; nothing is decompressed or extracted to disk.

* Task 1&2: `crag_task_1_and_2_dev_v{4,5}.jsonl.bz2` (or a plain `.jsonl`, e.g. the example file
  decompressed), read line by line through bz2 (on every core with the `fast` extra, as Task 3).
* Task 3: `crag_task_3_dev_v4.tar.bz2.part1..4` / `_v5.tar.bz2.part0..3`: the parts are chained
  into one byte stream in numeric order and read as a streaming tar (`r|bz2`); every `*.jsonl`
  member is read line by line, in archive order. A plain `.tar.bz2` works the same way. bz2 is one
  stream that the stdlib decompresses on one core (~60 MB/s of output here: 0.35 s per 3 MB record,
  longer than parsing a record's 50 pages on 16 cores); with the `fast` extra (`indexed_bzip2`)
  the blocks are decompressed on every core (see `parallel_bz2`).

Readers yield `(record_number, record or RecordError)`; record numbers count every line of data
from 0 across all members, so they are stable positions for resuming. Readers are advanced off
the event loop (the evaluator reads in a thread, where bz2 releases the GIL); large records are
parsed in the run's worker processes (`record_parser`).
"""

from __future__ import annotations

import atexit
import bz2
import io
import json
import os
import re
import tarfile
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from ragbench.api import ConfigError, RecordError
from ragbench.api.data import JsonObject, StreamBroken, given_handle, objects, read_lines
from ragbench.api.run import Workers, usable_cores

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

Item = tuple[int, "JsonObject | RecordError"]  # a record as its JSON line holds it, or what was wrong with it
_PART = re.compile(r"^(?P<stem>.+\.tar\.bz2)\.part(?P<number>\d+)$")
# what a file CRAG's readers open must be (a FIFO, device or folder there is refused: `given_handle`)
RELEASE_FILE = "a file of CRAG's release (crag_task_3_dev_v5.tar.bz2.partN, crag_task_1_and_2_dev_v4.jsonl.bz2)"


class ChainedParts(io.RawIOBase):
    """The concatenation of several files as one read-only stream (`cat part*` without a copy); each must be a
    regular file (looked at here, before any is read)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = list(paths)
        self.current: io.BufferedReader | None = None

        self.sizes = [_size(path) for path in self.paths]
        self.part = 0  # the part `current` reads
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:  # the parallel decompressor reads ahead and seeks back
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: sum(self.sizes)}[whence]
        self.position = max(0, base + offset)
        if self.current is not None:
            self.current.close()
            self.current = None
        return self.position

    def readinto(self, buffer: WriteableBuffer) -> int:
        while True:
            if self.current is None:
                start = 0
                for self.part, size in enumerate(self.sizes):  # noqa: B020 (the part found is kept)
                    if self.position < start + size:
                        break
                    start += size
                else:
                    return 0
                # held, closed by close(); a file opened for reading in binary is a BufferedReader
                self.current = cast(io.BufferedReader, given_handle(self.paths[self.part], RELEASE_FILE))
                self.current.seek(self.position - start)
            count = self.current.readinto(buffer)
            if count:
                self.position += count
                return count
            self.current.close()
            self.current = None

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
        super().close()


def _size(path: Path) -> int:
    """The size of a file of the release; what is not a regular file refused (`given_handle`)."""
    with given_handle(path, RELEASE_FILE) as handle:
        return os.fstat(handle.fileno()).st_size


def _part(path: Path) -> re.Match[str]:
    """The name of a part already matched as one, read again."""
    match = _PART.match(path.name)
    assert match is not None, path
    return match


def task3_parts(path: Path) -> list[Path]:
    """The archive's files in order: all `<stem>.partN` beside a given part (or inside a given
    folder), or the one `.tar.bz2` given."""
    if path.is_dir():
        parts = [p for p in path.iterdir() if _PART.match(p.name)]
        stems = {_part(p).group("stem") for p in parts}
        if len(stems) != 1:
            raise ConfigError(
                f"--data crag_t3={path}: expected the parts of one .tar.bz2 archive in this folder, "
                f"found {sorted(stems) or 'none'}"
            )
    else:
        match = _PART.match(path.name)
        if match is None:
            return [path]
        parts = [
            p for p in path.parent.iterdir() if (m := _PART.match(p.name)) and m.group("stem") == match.group("stem")
        ]
    parts.sort(key=lambda p: int(_part(p).group("number")))
    numbers = [int(_part(p).group("number")) for p in parts]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise ConfigError(f"--data crag_t3={path}: archive parts {numbers} are not consecutive; a part is missing")
    return parts


LARGE_RECORD_BYTES = 256 * 1024


def record_parser(workers: Workers | None) -> Callable[[str], Any]:
    """json.loads; a line of LARGE_RECORD_BYTES or more (a Task 3 record is ~3 MB) in the record lane
    of the run's `workers`: parsing it in the reader thread would hold the GIL, and so the event loop,
    for ~8 ms per 3 MB. Parsed in place instead without a run (None), on the main thread (the
    pre-flight, before the loop starts: nothing to keep free, and starting a process costs more than
    the parse) and while the lane is still starting (`Workers.lane_ready` starts it; the reader need
    not wait for it)."""

    def loads(line: str) -> Any:
        if (
            workers is None
            or len(line) < LARGE_RECORD_BYTES
            or threading.current_thread() is threading.main_thread()
            or not workers.lane_ready()
        ):
            return json.loads(line)
        return workers.in_record_lane(json.loads, line)

    return loads


def read_jsonl(path: Path, threads: int | None = None, parse: Callable[[str], Any] = json.loads) -> Iterator[Item]:
    """Task 1&2 file: `.jsonl.bz2` streamed through bz2 (on `threads` threads, as Task 3's archive:
    `read_bz2`), or plain `.jsonl`; each line parsed by `parse`."""
    if not path.name.endswith(".bz2"):
        return _read_jsonl(path, 0, 0, parse, report=True)
    return read_bz2(path, _read_jsonl, threads, parse)


def _read_jsonl(
    path: Path, threads: int, skip: int, parse: Callable[[str], Any], report: bool = False
) -> Generator[Item, None, None]:
    """Records from number `skip` on. A broken `.bz2` read by the stdlib ends in one RecordError
    (read_lines reports it, whatever `report`); indexed_bzip2's RuntimeError is raised."""
    with _bz2_stream(path, threads) if path.name.endswith(".bz2") else given_handle(path, RELEASE_FILE) as handle:
        for number, (_, item) in enumerate(objects(read_lines(handle, str(path), _skipping(skip, parse)), str(path))):
            if number >= skip:
                yield number, item


BZ2_THREADS_ENV = "RAGBENCH_BZ2_THREADS"


def parallel_bz2() -> int:
    """Threads decompressing a `.bz2` (Task 3's archive, Tasks 1&2's file): one per usable core when `indexed_bzip2` (the `fast`
    extra) is installed, else 0 (the stdlib, one core); $RAGBENCH_BZ2_THREADS sets it (0: the stdlib)."""
    value = os.environ.get(BZ2_THREADS_ENV, "").strip()
    if value.isdigit() and int(value) == 0:
        return 0
    try:
        import indexed_bzip2  # noqa: F401
    except ImportError:
        return 0
    return int(value) if value.isdigit() else usable_cores()


@contextmanager
def _bz2_stream(path: Path, threads: int) -> Iterator[IO[bytes]]:
    """The decompressed bytes of a `.bz2` file, or of Task 3's chained parts: by indexed_bzip2 on
    `threads` threads, or (0) by the stdlib."""
    raw = io.BufferedReader(ChainedParts(task3_parts(path)), buffer_size=1 << 20)
    try:
        if not threads:
            with bz2.open(raw, "rb") as stream:
                yield stream
            return
        import indexed_bzip2

        stream = indexed_bzip2.open(raw, parallelization=threads)
        # indexed_bzip2 aborts the interpreter when a file it reads is still open at exit (a reader left
        # unfinished by an interrupted run): the stream is closed at exit unless it was closed before
        atexit.register(stream.close)
        try:
            yield stream
        finally:
            atexit.unregister(stream.close)
            stream.close()
    finally:
        raw.close()


def _members(path: Path, threads: int) -> Iterator[tuple[str, IO[bytes]]]:
    """(name, stream) of every `*.jsonl` member, in archive order."""
    with _bz2_stream(path, threads) as stream, tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            if member.isfile() and member.name.endswith(".jsonl"):
                lines = archive.extractfile(member)
                if lines is not None:  # always, for a regular file
                    yield member.name, lines


def _is_bz2(path: Path) -> bool:
    with given_handle(task3_parts(path)[0], RELEASE_FILE) as first:
        return first.read(3) == b"BZh"


def read_task3_archive(
    path: Path, threads: int | None = None, parse: Callable[[str], Any] = json.loads
) -> Iterator[Item]:
    """Every `*.jsonl` member of the (multi-part) `.tar.bz2`, in archive order, streamed (`read_bz2`)."""
    return read_bz2(path, _read_members, threads, parse)


Reader = Callable[[Path, int, int, Callable[[str], Any], bool], Generator[Item, None, None]]


def read_bz2(path: Path, read: Reader, threads: int | None, parse: Callable[[str], Any] = json.loads) -> Iterator[Item]:
    """`read(path, threads, skip, parse, report)`'s records, on `threads` decompressing threads (default
    `parallel_bz2()`), or by the stdlib.

    indexed_bzip2 reports a cut or corrupt stream as a bare RuntimeError (and reads data that is no
    bz2 as empty): data that does not start as bz2 is read by the stdlib, and when the parallel
    reader fails the stdlib reads on from the same record (the records before it skipped unparsed),
    so errors read exactly as the stdlib reports them."""
    threads = parallel_bz2() if threads is None else threads
    count = 0
    if threads and _is_bz2(path):
        try:
            with closing(read(path, threads, 0, parse, False)) as items:
                for item in items:
                    count = item[0] + 1
                    yield item
            return
        except RuntimeError:
            pass
    with closing(read(path, 0, count, parse, True)) as items:
        yield from items


def _skipping(skip: int, parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` for the lines from number `skip` on; the lines before it are counted, not parsed."""
    seen = 0

    def parse_from_skip(line: str) -> Any:
        nonlocal seen
        seen += 1
        return {} if seen <= skip else parse(line)

    return parse_from_skip


def _read_members(
    path: Path, threads: int, skip: int, parse: Callable[[str], Any], report: bool = False
) -> Generator[Item, None, None]:
    """Records from number `skip` on (the lines before it are counted, not parsed). A broken
    archive ends in one RecordError when `report`, else in a RuntimeError."""
    count = 0
    parse = _skipping(skip, parse)
    try:
        for member, handle in _members(path, threads):
            for number, (_, item) in enumerate(
                objects(read_lines(handle, f"{path}!{member}", parse), f"{path}!{member}"), count
            ):
                count = number + 1
                if number >= skip:
                    yield number, item
                if isinstance(item, StreamBroken):  # reported once: the next member would fail the same way
                    return
    except (OSError, EOFError, tarfile.TarError) as exc:  # truncated or corrupt archive
        if not report:
            raise RuntimeError(str(exc)) from exc
        if count == 0:  # not even the first record: not Task 3's archive at all
            yield (
                count,
                RecordError(
                    str(path),
                    1,
                    f"not a readable .tar.bz2 archive of JSONL files ({exc}); "
                    "Task 3 reads crag_task_3_dev_v5.tar.bz2.part0..3 (a .jsonl or "
                    ".jsonl.bz2 is Tasks 1 and 2's format: --tasks crag_t1/crag_t2)",
                ),
            )
        else:
            yield count, RecordError(str(path), count + 1, f"cannot read past this record ({exc})")
