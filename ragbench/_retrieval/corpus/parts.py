"""A corpus cut into contiguous parts, each read on its own by a worker of a shard-parallel build
(`shard_build`), where it lies: the parts' passages, one after the other, are the one-process reader's
(`readers.corpus_rows`), in its order, bad rows counted the same way.

- A JSONL file: S byte ranges of equal size; a part holds the lines that START in its range (the line a range's
  first byte falls in belongs to the part before), read from its own start (`part_lines`). Its bad rows are
  named by line numbers counted from the part's first line; `renumbered` names them by the file's, once the
  driver knows how many lines the parts before hold.
- A DPR TSV file: the same byte ranges, each row read as `readers.dpr_tsv_rows` reads it, by the columns its
  header names (read from the file's first row by every part). A row whose quoted field holds a line break goes on
  past its part's end; the part after it would start inside that row, so the driver refuses a build where a part
  does not start where the one before it stopped (`PartReading.first`, `end`).
- A folder of MS MARCO V2.1 segmented shards: S runs of whole files, in name order (S at most the files).
- A dataset saved by Hugging Face `datasets` (`save_to_disk`): S runs of rows of equal size, each part reading its
  rows from the memory-mapped Arrow files (`saved.load_saved`); a bad row named by its row as the one-process
  reader names it, its line counted from the part's first row (`renumbered` adds the rows before).

A JSONL or TSV file may be an object in a store (`s3://bucket/corpus.jsonl`): its parts are the same byte ranges
of the object's size as the store lists it, and every read goes through `open_bytes`, which opens a local file
or the object (`ranged_file.open_ranged`: large ranged reads of the part's bytes, never the whole object).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..._errors import ConfigError, RecordError
from ..._storage.csv_fields import large_fields
from ..._storage.files import open_file
from ..._storage.jsonl import located_lines
from ..._storage.locations import is_remote, remote_object
from ..._storage.ranged_file import open_ranged
from ..._types import Document
from .identity import corpus_state
from .readers import (
    BOM,
    DEFAULT_COLUMNS,
    FORMATS,
    SAVED_DATASET,
    SEGMENTED,
    corpus_format,
    dpr_columns,
    dpr_row,
    jsonl_rows,
    saved_dataset_passage,
)
from .saved import load_saved
from .segmented import open_shard, shard_files, shard_passage

PART_FORMS = ("jsonl", "dpr_tsv", SEGMENTED, SAVED_DATASET)  # the corpus forms read in parts
LONE_CR = re.compile(r"(?<=\r)(?!\n)")  # where text mode (newline="") also ends a line
COUNT_BLOCK = 1 << 20  # bytes read at a time where a corpus's lines are counted (`lines_up_to`)


@dataclass(frozen=True)
class CorpusPart:
    """Part `number` of a corpus: the lines of `files[0]` starting in bytes [start, stop) (a JSONL file), the rows
    start..stop-1 of the saved dataset `files[0]`, or the whole of each of `files` (segmented shards; start and stop
    0)."""

    number: int
    form: str
    files: tuple[str, ...]
    start: int = 0
    stop: int = 0


def open_bytes(path: str | Path, until: int | None = None) -> IO[bytes]:
    """A corpus file, or an object of a store, opened for reading bytes (the one place a part's bytes are opened);
    `until`: where the part read ends (an object is read in large blocks up to there, `ranged_file`; None: all of
    it)."""
    if is_remote(path):
        return open_ranged(str(path), sys.maxsize if until is None else until)
    handle: IO[bytes] = open_file(path)
    return handle


def part_form(corpus: str | Path) -> str:
    """How `corpus` is read (`readers.corpus_format`); an object of a store by its name's suffix."""
    if not is_remote(corpus):
        return corpus_format(Path(corpus))
    form = FORMATS.get(Path(str(corpus).rstrip("/").rpartition("/")[2]).suffix.lower())
    if form is None:
        raise ConfigError(
            f"corpus {corpus}: index build --ray --shards reads a .jsonl or .tsv object of a store in its parts; "
            "name one, or copy this corpus to a folder every node sees"
        )
    return form


def part_corpus_state(corpus: str | Path) -> tuple[tuple[str, int, int | str], ...]:
    """`identity.corpus_state` of a local corpus; of an object of a store, its URL, size and version (ETag):
    what writing it again changes."""
    if not is_remote(corpus):
        return corpus_state(Path(corpus))
    found = remote_object(str(corpus))
    return ((str(corpus), found.size, found.version),)


def corpus_location(corpus: str | Path) -> str:
    """What a manifest names a corpus by: its absolute path, or its URL."""
    return str(corpus) if is_remote(corpus) else str(Path(corpus).resolve())


def corpus_parts(corpus: str | Path, count: int) -> list[CorpusPart]:
    """`corpus` cut into `count` parts (module docstring); a ConfigError for a form not read in parts, or more
    parts than a segmented folder has files."""
    form = part_form(corpus)
    if form not in PART_FORMS:
        raise ConfigError(
            f"corpus {corpus}: index build --ray --shards reads a .jsonl or .tsv file, a saved dataset or a folder of "
            f"MS MARCO V2.1 segmented shards in parts, not a {form} corpus; add --merged to build the one index and "
            "split it"
        )
    if form == SEGMENTED:
        corpus = Path(corpus)
        files = [str(path) for path in shard_files(corpus)]
        refuse_more_shards(count, corpus, len(files), "shard files", "files")
        size, extra = divmod(len(files), count)
        bounds = [0]
        for number in range(count):
            bounds.append(bounds[-1] + size + (number < extra))
        return [CorpusPart(n, form, tuple(files[a:b])) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    if form == SAVED_DATASET:
        size = len(load_saved(Path(corpus)))  # its rows
        refuse_more_shards(count, corpus, size, "rows", "rows")
    else:
        refuse_more_shards(count, corpus, lines_up_to(corpus, count), "lines", "lines")
        size = remote_object(str(corpus)).size if is_remote(corpus) else Path(corpus).stat().st_size
    bounds = [size * number // count for number in range(count + 1)]
    return [CorpusPart(n, form, (str(corpus),), a, b) for n, (a, b) in enumerate(zip(bounds, bounds[1:]))]


def refuse_more_shards(count: int, corpus: str | Path, held: int, what: str, whole: str) -> None:
    """A ConfigError where `corpus` holds fewer of `what` (its lines, rows or shard files: `held`) than `count`
    shards, each built from whole ones (`whole`) of its own: said before any part is read."""
    if count > held:
        choose = f"choose 1 to {held}" if held else "it holds nothing to index"
        raise ConfigError(
            f"--shards {count}: corpus {corpus} has {held} {what} and a shard is built from whole {whole}; {choose}"
        )


def lines_up_to(corpus: str | Path, most: int) -> int:
    """The lines of the file or object `corpus` (a line ends at a line break or at the end), counted up to `most`:
    what is read stops there (`most` lines of a file of millions cost a few blocks)."""
    lines, last = 0, b"\n"
    with open_bytes(corpus) as handle:
        while lines < most and (block := handle.read(COUNT_BLOCK)):
            lines, last = lines + block.count(b"\n"), block[-1:]
    return lines + (last != b"\n")  # a last line without its line break


class PartReading:
    """What reading a part saw besides its passages: its lines (JSONL: those it owns) and the sha256 of the bytes
    it read (a segmented shard's unpacked)."""

    def __init__(self) -> None:
        self.lines = 0
        self.digest = hashlib.sha256()
        self.first = self.end = 0  # where its first line starts and its last ends (a one-file corpus)
        self.rows_span_lines = False  # TSV: a quoted field may hold a line break
        self.in_row = False  # such a row is being read: its lines go on past the part's end


def part_lines(handle: IO[bytes], start: int, stop: int, reading: PartReading) -> tuple[int, Iterator[bytes]]:
    """(where its first line starts, the lines) of the lines of `handle` that start in bytes [start, stop)."""
    if start > 0:
        handle.seek(start - 1)
        handle.readline()  # the line byte start-1 is in: the part before owns it (it starts before `start`)
    first = handle.tell()
    reading.first = reading.end = first

    def lines() -> Iterator[bytes]:
        while reading.end < stop or reading.in_row:  # no line past the part's read (its bytes are the next part's)
            line = handle.readline()
            if not line:
                return
            reading.lines += 1
            reading.digest.update(line)
            reading.end += len(line)
            reading.in_row = reading.rows_span_lines
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
    path = part.files[0]
    if part.form == SAVED_DATASET:
        yield from saved_part(Path(path), part, reading)
        return
    if part.form == "dpr_tsv":
        yield from tsv_part(path, part, reading)
        return
    with open_bytes(path, part.stop) as handle:
        first, lines = part_lines(handle, part.start, part.stop, reading)
        for _, passage in jsonl_rows(lines, str(path), first):
            yield passage


def tsv_part(path: str, part: CorpusPart, reading: PartReading) -> Iterator[Document | RecordError]:
    """A DPR TSV part's rows (module docstring): `readers.dpr_tsv_rows`'s, its lines numbered from the part's."""
    with open_bytes(path, 0) as handle, large_fields():  # its first row alone
        bom = len(BOM) if handle.read(len(BOM)) == BOM else 0
        handle.seek(bom)
        header = next(csv.reader(text_lines(part_lines(handle, 0, bom + 1, PartReading())[1]), delimiter="\t"), [])
    columns = dpr_columns(header)
    with open_bytes(path, part.stop) as handle, large_fields():
        handle.seek(bom)
        _, lines = part_lines(handle, part.start, part.stop, reading)
        reading.rows_span_lines = True
        rows = csv.reader(text_lines(lines), delimiter="\t")
        first = part.start == 0
        while True:
            reading.in_row = False
            try:
                row = next(rows)
            except StopIteration:
                reading.lines = rows.line_num  # csv's lines (a lone "\r" ends one), as its errors number them
                return
            except csv.Error as exc:
                yield RecordError(str(path), rows.line_num, f"unreadable TSV row ({exc})")
                continue
            if first:
                first = False
                if columns is not None:
                    continue
            yield dpr_row(row, columns or DEFAULT_COLUMNS, path, rows.line_num)


def saved_part(folder: Path, part: CorpusPart, reading: PartReading) -> Iterator[Document | RecordError]:
    """A saved dataset's rows start..stop-1 as `readers.saved_dataset_rows` reads them (module docstring); the
    digest over each row's JSON."""
    reading.first = reading.end = part.start
    for index, record in enumerate(load_saved(folder).select(range(part.start, part.stop)), start=part.start):
        reading.lines += 1
        reading.end = index + 1
        reading.digest.update(json.dumps(record, sort_keys=True, default=repr).encode("utf-8", "surrogatepass"))
        passage = saved_dataset_passage(record, folder, index)
        yield renumbered(error_record(passage), -part.start) if isinstance(passage, RecordError) else passage


def text_lines(lines: Iterator[bytes]) -> Iterator[str]:
    """The lines a text-mode reading (UTF-8, surrogateescape, newline="") gives of these byte lines: a lone "\r"
    ends a line too."""
    for line in lines:
        yield from (piece for piece in LONE_CR.split(line.decode("utf-8", "surrogateescape")) if piece)


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
