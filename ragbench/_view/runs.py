"""Finding run folders and reading them as they are on disk (read only: nothing is written there).

A run's sample file is indexed, not loaded: one pass records each line's byte offset and a short
row (id, question, answer, gold, scores, error, slice values) for the examples table; a full
record is read again from its offset when its page is opened. The index follows the file: lines
appended by a run still in progress are indexed on the next request, and a file rewritten (the
run finished, records put in data order) is indexed again. A run's other files (run.json,
results.json, the list of sample files, nli_calls.jsonl) are read again only when their identity
(inode, size, modification time) changed, so a run that finishes is seen on the next request and an
unchanged one is not read on every request.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .._errors import ConfigError
from .._reports.results_file import NewerResults, read_results
from .._reports.results_schema import Results
from .._reports.slice_labels import slice_value
from .._storage.checkpoint import checkpoint_key
from .._storage.files import NotAFileError, open_file, require_regular
from .._storage.run_lock import RunLock, describe
from .._storage.run_shapes import in_current_shape
from .._storage.sample_files import is_sample, sample_file
from .._values.names import part_problem

T = TypeVar("T")

TEXT_CHARS = 240  # characters of question / answer / gold / error kept in a table row


def clip(text: Any, limit: int = TEXT_CHARS) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def gold_text(record: dict[str, Any]) -> str:
    """A record's gold in a line: the reference texts the task read it as (`gold_references`, written by
    the run), else every value of the gold as it stands (a run written before the references were)."""
    references = record.get("gold_references")
    if isinstance(references, list) and references:
        return " | ".join(map(str, references))
    gold = record.get("gold")
    if not isinstance(gold, dict):
        return "" if gold is None else str(gold)
    return "; ".join(f"{key}: {_leaves(value)}" for key, value in gold.items() if value not in (None, "", [], {}))


def _leaves(value: Any) -> str:
    """The scalar values inside `value` in order, comma-separated (nested lists and mappings flattened)."""
    if isinstance(value, dict):
        return ", ".join(_leaves(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return ", ".join(_leaves(v) for v in value)
    return str(value)


def table_row(record: dict[str, Any]) -> dict[str, Any]:
    prediction = record.get("prediction") or {}
    return {
        "id": None if record.get("id") is None else str(record["id"]),
        "question": clip(record.get("question")),
        "answer": clip(prediction.get("answer", record.get("output"))),
        "gold": clip(gold_text(record)),
        "scores": record.get("scores") or {},
        "error": clip(record.get("error")) or None,
        "score_errors": metric_failures(record),
        # what the slice labels are made of (`rows_page`), whole; a bad record is in no slice, as in results.json
        "slice_values": None
        if record.get("bad_record")
        else {k: slice_value(record["meta"], k) for k in record.get("meta") or {}},
    }


def metric_failures(record: dict[str, Any]) -> dict[str, str]:
    """The metrics that failed on a record (`score_errors`: {metric: error}), their errors cut for a table row."""
    errors = record.get("score_errors")
    return {str(k): clip(v, 160) for k, v in errors.items()} if isinstance(errors, dict) else {}


def row_failed(row: dict[str, Any]) -> bool:
    """A table row of a failed example: the system failed on it, or one of its metrics did."""
    return bool(row["error"] or row["score_errors"])


class SampleIndex:
    """The rows and line offsets of one samples/<task>.jsonl, kept up to date with the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.offsets: list[int] = []
        self._by_key: dict[str, int] = {}
        self._identity: tuple[int, int] | None = None
        self._read_to = 0
        self._lock = threading.Lock()  # one for the index's lifetime: threads queue on it, it is never replaced

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
            if stat.st_size > self._read_to:
                self._scan()
        return self

    def _forget(self, identity: tuple[int, int] | None) -> None:
        """Drop what was indexed (the file is gone, or another file now stands at the path)."""
        self.rows, self.offsets, self._by_key, self._read_to = [], [], {}, 0
        self._identity = identity

    def _scan(self) -> None:  # a file: `refresh` looked
        with self.path.open("rb") as handle:
            handle.seek(self._read_to)
            offset = self._read_to
            for line in handle:
                if not line.endswith(b"\n"):
                    break  # a line still being written: indexed on a later request
                start, offset = offset, offset + len(line)
                self._read_to = offset
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line a killed run cut short (the run reads past it too)
                if not isinstance(record, dict) or ("index" in record and not is_sample(record)):
                    continue  # a damaged line that still parses (the run passes over it too); records written
                    # by hand, without an index, are shown
                key = checkpoint_key(record.get("id"), record.get("index"))
                row = table_row(in_current_shape(record))
                if key in self._by_key:  # a retried example: the latest attempt replaces the earlier one
                    position = self._by_key[key]
                    self.rows[position], self.offsets[position] = {**row, "n": position}, start
                else:
                    self._by_key[key] = len(self.rows)
                    self.rows.append({**row, "n": len(self.rows)})
                    self.offsets.append(start)

    def record(self, n: int) -> dict[str, Any]:
        with self._lock:
            if not 0 <= n < len(self.offsets):
                raise KeyError(n)
            offset = self.offsets[n]
        with self.path.open("rb") as handle:  # a file when it was indexed: `refresh`
            handle.seek(offset)
            return in_current_shape(json.loads(handle.readline()))

    def position(self, example_id: str) -> int | None:
        return self._by_key.get(checkpoint_key(example_id, None))


def identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells a file (or folder) changed: inode, size, modification time; None when it is not there."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _read_json(path: Path) -> dict[str, Any] | None:
    """The file's JSON object; None for a file that cannot be read or holds no object (damaged: the run
    shows as stopped, and `--resume` rebuilds its results.json). Something else than a file there is
    refused (NotAFileError: a FIFO would hang the read)."""
    try:
        with open_file(path, "r") as handle:
            value = json.loads(handle.read())
    except NotAFileError:
        raise
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


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
        self._read: dict[str, tuple[Any, Any]] = {}  # file name -> (identity, what was read from it)
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
            return known[1]
        value = read(path)
        with self._lock:
            self._read[name] = (seen, value)
        return value

    def _json(self, name: str) -> dict[str, Any] | None:
        return self.cached(name, _read_json, None)

    @property
    def results(self) -> Results | None:
        """results.json, None until the run is finished: an attempt that started after it was written (run.json
        `finished` false) and stopped, or is running, leaves it from an earlier attempt than the samples."""
        return None if self.meta.get("finished") is False else self.cached("results.json", _read_results, None)

    def status(self) -> dict[str, Any]:
        """Where the run stands: `running` (a process holds its run.lock; `holder` says which and its
        command), `complete` or `incomplete` (finished: its results.json), or `stopped` (neither: killed
        or stopped before its end, `--resume` completes it). The lock is asked anew on every call."""
        holder = RunLock(self.path).holder()
        if holder is not None:
            command = " ".join(map(str, holder.get("command") or []))
            return {"state": "running", "holder": describe(holder) + (f": {command}" if command else "")}
        results = self.results
        state = "stopped" if results is None else "complete" if results.complete else "incomplete"
        return {"state": state, "holder": None}

    @property
    def meta(self) -> dict[str, Any]:
        return self._json("run.json") or {}

    @property
    def config(self) -> dict[str, Any]:
        return (self.results.config if self.results else None) or self.meta.get("config") or {}

    @property
    def tasks(self) -> list[str]:
        """The run's tasks (a name an older ragbench let through, that would leave the folder: a ConfigError)."""
        names = list(self.config.get("tasks") or [])
        odd = next(filter(None, map(part_problem, names)), None)
        if odd is not None:  # a run of an older ragbench: its pages' keys and export files are named by its tasks
            raise ConfigError(
                f"view: run {self.path} names a task {odd}; the viewer cannot show it: give the runs without it"
            )
        on_disk: list[str] = self.cached("samples", _sample_files, [])
        return names + [t for t in on_disk if t not in names]

    def samples(self, task: str) -> SampleIndex:
        if task not in self.tasks:
            raise KeyError(task)
        with self._lock:
            index = self._indexes.setdefault(task, SampleIndex(sample_file(self.path, task)))
        return index.refresh()
