"""Finding run folders and reading them as they are on disk (read only: nothing is written there).

A run's sample file is indexed, not loaded: one pass reads its records as every reader does
(`ragbench._records.located_records`: checked, an older version's shapes read as the current ones) and
keeps each line's byte offset and a short row (id, question, answer, gold, scores, error, slice values)
for the examples table; a full record is read again from its offset, through the same reader, when its
page is opened. A line that is no sample record (cut short, edited by hand, of another shape) is counted
and named on the run page, as `compare` and `rescore` name it. The index follows the file: lines
appended by a run still in progress are indexed on the next request, and a file rewritten (the
run finished, records put in data order) is indexed again. A run's other files (run.json,
results.json, the list of sample files, nli_calls.jsonl) are read again only when their identity
(inode, size, modification time) changed, so a run that finishes is seen on the next request and an
unchanged one is not read on every request.
"""

from __future__ import annotations

import json
import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .._errors import ConfigError, RecordError
from .._records import SampleRecord, located_records, record_at
from .._reports.results.failures import metric_failures
from .._reports.results.file import NewerResults, read_results
from .._reports.results.schema import Results
from .._reports.results.slice_labels import slice_value
from .._storage.checkpoint import checkpoint_key
from .._storage.files import NotAFileError, open_file, require_regular
from .._storage.run_lock import RunLock, describe
from .._storage.run_record import RunRecord
from .._storage.sample_files import sample_file
from .._values.json_values import JsonObject
from .._values.names import part_problem
from .page_data import BadLines, IndexedRow, RunStatus, TableRow

T = TypeVar("T")

TEXT_CHARS = 240  # characters of question / answer / gold / error kept in a table row
BAD_LINES_KEPT = 100  # lines that are no sample record kept to name (all are counted)
BAD_LINES_SHOWN = 20  # of them, named on the run page


def clip(value: object, limit: int = TEXT_CHARS) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def gold_text(record: SampleRecord) -> str:
    """A record's gold in a line: the reference texts the task read it as (`gold_references`, written by
    the run), else every value of the gold as it stands (a run written before the references were)."""
    if record.gold_references:
        return " | ".join(map(str, record.gold_references))
    return "; ".join(
        f"{key}: {_leaves(value)}" for key, value in record.gold.items() if value not in (None, "", [], {})
    )


def _leaves(value: object) -> str:
    """The scalar values inside `value` in order, comma-separated (nested lists and mappings flattened); a mapping of
    keys to numbers (a qrels gold's document ids and grades) as `key=number`, the document before its grade."""
    if isinstance(value, dict):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()):
            return ", ".join(f"{k}={v}" for k, v in value.items())
        return ", ".join(_leaves(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return ", ".join(_leaves(v) for v in value)
    return str(value)


def table_row(record: SampleRecord) -> TableRow:
    return {
        "id": record.id,
        "question": clip(record.question),
        "answer": clip(record.answer),
        "gold": clip(gold_text(record)),
        "scores": record.scores,
        "error": clip(record.error) or None,
        "score_errors": {metric: clip(error, 160) for metric, error in metric_failures(record, ()).items()},
        # what the slice labels are made of (`rows_page`), whole; a bad record is in no slice, as in results.json
        "slice_values": None if record.bad_record else {k: slice_value(record.meta, k) for k in record.meta},
    }


def row_failed(row: TableRow) -> bool:
    """A table row of a failed example: the system failed on it, or one of its metrics did."""
    return bool(row["error"] or row["score_errors"])


class SampleIndex:
    """The rows and line offsets of one samples/<task>.jsonl, kept up to date with the file: its records as
    `read_samples` reads them (`located_records`), a row and the line's place kept of each; the lines that
    are no sample record counted, and named (`bad_lines`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[IndexedRow] = []
        self._by_key: dict[str, int] = {}
        self._lock = threading.Lock()  # one for the index's lifetime: threads queue on it, it is never replaced
        self._forget(None)

    def refresh(self) -> SampleIndex:
        with self._lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                self._forget(None)
                return self
            require_regular(stat.st_mode, self.path)  # a FIFO would hang the scan
            if self._identity != (stat.st_dev, stat.st_ino) or stat.st_size < self._read_to:
                self._forget((stat.st_dev, stat.st_ino))
            if stat.st_size > self._read_to and not self._ends_line():
                self._forget((stat.st_dev, stat.st_ino))  # the line read last, which had no newline, went on
            if stat.st_size > self._read_to:
                self._scan()
        return self

    def _forget(self, identity: tuple[int, int] | None) -> None:
        """Drop what was indexed (the file is gone, or another file now stands at the path)."""
        self.rows, self._by_key = [], {}
        self._starts, self._lines = array("Q"), array("Q")  # each row's line: its byte offset and index
        self.errors: list[RecordError] = []  # the first BAD_LINES_KEPT lines that are no sample record
        self.bad_count = 0
        self.last_line: RecordError | None = None  # the last line, cut short and unended: being written, or cut
        self._identity, self._read_to, self._next_line, self._open = identity, 0, 0, False

    def _ends_line(self) -> bool:
        """Whether reading on from `_read_to` starts a line: the last line read had its newline, or has it now
        (then read past it)."""
        if not self._open:
            return True
        with self.path.open("rb") as handle:
            handle.seek(self._read_to)
            if handle.read(1) != b"\n":
                return False
        self._read_to, self._open = self._read_to + 1, False
        return True

    def _scan(self) -> None:  # a file: `refresh` looked
        self.last_line = None
        for located in located_records(
            self.path, has_text=False, older_shapes=True, line=self._next_line, start=self._read_to
        ):
            if not located.ended and isinstance(located.value, RecordError):
                self.last_line = located.value  # read again on the next request: a line still being written
                return
            self._read_to, self._next_line, self._open = located.end, located.line + 1, not located.ended
            if isinstance(located.value, RecordError):
                self.bad_count += 1
                if len(self.errors) < BAD_LINES_KEPT:
                    self.errors.append(located.value)
                continue
            record = located.value
            key = checkpoint_key(record.id, record.index)
            position = self._by_key.setdefault(key, len(self.rows))
            row: IndexedRow = {**table_row(record), "n": position}
            if position < len(self.rows):  # a retried example: the latest attempt replaces the earlier one
                self.rows[position], self._starts[position], self._lines[position] = row, located.start, located.line
            else:
                self.rows.append(row)
                self._starts.append(located.start)
                self._lines.append(located.line)

    def bad_lines(self) -> BadLines:
        """How many lines are no sample record, and the first ones, each its file, line and why."""
        shown = self.errors + ([self.last_line] if self.last_line is not None else [])
        return {
            "count": self.bad_count + (self.last_line is not None),
            "lines": [str(error) for error in shown[:BAD_LINES_SHOWN]],
        }

    def record(self, n: int) -> SampleRecord:
        """The record of row `n`, read again from its line (a RecordError when the line no longer holds it)."""
        with self._lock:
            if not 0 <= n < len(self.rows):
                raise KeyError(n)
            line, start = self._lines[n], self._starts[n]
        found = record_at(self.path, line, start, older_shapes=True)
        if isinstance(found, RecordError):
            raise found
        return found

    def position(self, example_id: str) -> int | None:
        return self._by_key.get(checkpoint_key(example_id, None))


def identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells a file (or folder) changed: inode, size, modification time; None when it is not there."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _read_record(path: Path) -> RunRecord | None:
    """run.json's record (`RunRecord.of`: a key it lacks, even `config`, read as empty); None for a file that
    cannot be read or holds no run.json's object (damaged: the run shows as stopped, and `--resume` rebuilds its
    results.json). Something else than a file there is refused (NotAFileError: a FIFO would hang the read)."""
    try:
        with open_file(path, "r") as handle:
            value = json.loads(handle.read())
        return RunRecord.of(value) if isinstance(value, dict) else None
    except NotAFileError:
        raise
    except (OSError, ValueError):  # RunShapeError among them
        return None


def _read_results(path: Path) -> Results | None:
    """results.json read as `read_results` reads it (an older ragbench's too); None for one that cannot be read
    or is no run's results (the run shows as stopped, and `--resume` rebuilds it); a later version's is
    refused (`NewerResults`)."""
    try:
        return read_results(path, "view")
    except NewerResults:
        raise
    except ConfigError:
        return None


def _sample_files(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.jsonl"))


class RunFolder:
    """One run folder: run.json (config, written at start), results.json (when finished), samples."""

    def __init__(self, path: Path, rid: str) -> None:
        self.path, self.rid = path, rid
        self._indexes: dict[str, SampleIndex] = {}
        self._read: dict[str, tuple[tuple[int, int, int, int], Any]] = {}  # file name -> (identity, what was read)
        self._lock = threading.Lock()

    def cached(self, name: str, read: Callable[[Path], T], missing: T) -> T:
        """`read(path)` of the run's file or folder `name`, read again only when it changed (`identity`);
        `missing` when it is not there. The value is shared between requests: never change it."""
        path = self.path / name
        seen = identity(path)
        if seen is None:
            return missing
        with self._lock:
            known = self._read.get(name)
        if known is not None and known[0] == seen:
            value: T = known[1]  # what `read` made of `name` (one reader per file name)
            return value
        value = read(path)
        with self._lock:
            self._read[name] = (seen, value)
        return value

    @property
    def results(self) -> Results | None:
        """results.json, None until the run is finished: an attempt that started after it was written (run.json
        `finished` false) and stopped, or is running, leaves it from an earlier attempt than the samples."""
        unfinished = self.record is not None and self.record.finished is False
        return None if unfinished else self.cached("results.json", _read_results, None)

    def status(self) -> RunStatus:
        """Where the run stands: `running` (a process holds its run.lock; `holder` says which and its
        command), `complete` or `incomplete` (finished: its results.json), or `stopped` (neither: killed
        or stopped before its end, `--resume` completes it). The lock is asked anew on every call."""
        holder = RunLock(self.path).holder()
        if holder is not None:
            told = holder.get("command")  # what another process wrote: a list of its arguments
            command = " ".join(map(str, told)) if isinstance(told, list) else ""
            return {"state": "running", "holder": describe(holder) + (f": {command}" if command else "")}
        results = self.results
        state = "stopped" if results is None else "complete" if results.complete else "incomplete"
        return {"state": state, "holder": None}

    @property
    def record(self) -> RunRecord | None:
        """run.json read typed (`_read_record`), None where it is missing or cannot be read."""
        return self.cached("run.json", _read_record, None)

    @property
    def config(self) -> JsonObject:
        """The run's options as results.json (else run.json) records them."""
        return (self.results.config if self.results else None) or (self.record.config if self.record else {})

    @property
    def tasks(self) -> list[str]:
        """The run's tasks (a name an older ragbench let through, that would leave the folder: a ConfigError)."""
        told = self.config.get("tasks")
        listed = told if isinstance(told, list) else []
        odd = next(filter(None, map(part_problem, listed)), None)
        if odd is not None:  # a run of an older ragbench: its pages' keys and export files are named by its tasks
            raise ConfigError(
                f"view: run {self.path} names a task {odd}; the viewer cannot show it: give the runs without it"
            )
        names = [name for name in listed if isinstance(name, str)]  # all of them: part_problem refuses any other
        on_disk: list[str] = self.cached("samples", _sample_files, [])
        return names + [t for t in on_disk if t not in names]

    def samples(self, task: str) -> SampleIndex:
        if task not in self.tasks:
            raise KeyError(task)
        with self._lock:
            index = self._indexes.setdefault(task, SampleIndex(sample_file(self.path, task)))
        return index.refresh()
