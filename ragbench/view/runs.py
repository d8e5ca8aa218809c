"""Finding run folders and reading them as they are on disk (read only: nothing is written there).

A run's sample file is indexed, not loaded: one pass records each line's byte offset and a short
row (id, question, answer, gold, scores, error, slice values) for the examples table; a full
record is read again from its offset when its page is opened. The index follows the file: lines
appended by a run still in progress are indexed on the next request, and a file rewritten (the
run finished, records put in data order) is indexed again.
"""
from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..errors import ConfigError

TEXT_CHARS = 240  # characters of question / answer / gold / error kept in a table row


def clip(text: Any, limit: int = TEXT_CHARS) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def gold_text(gold: Any) -> str:
    """The gold answer(s) of a record in a line: the common fields of the built-in tasks, else JSON."""
    if not isinstance(gold, dict):
        return "" if gold is None else str(gold)
    for key in ("answer", "label", "answerKey", "answers", "qa_pairs"):
        value = gold.get(key)
        if value in (None, "", []):
            continue
        if key == "qa_pairs":
            return " | ".join(", ".join(map(str, p.get("short_answers") or [])) for p in value if isinstance(p, dict))
        if isinstance(value, list):
            return " | ".join(", ".join(map(str, v)) if isinstance(v, list) else str(v) for v in value)
        return str(value)
    return json.dumps(gold, ensure_ascii=False, default=str)


def table_row(record: dict[str, Any]) -> dict[str, Any]:
    prediction = record.get("prediction") or {}
    return {"id": None if record.get("id") is None else str(record["id"]), "question": clip(record.get("question")),
            "answer": clip(prediction.get("answer", record.get("output"))), "gold": clip(gold_text(record.get("gold"))),
            "scores": record.get("scores") or {}, "error": clip(record.get("error")) or None,
            "metric_errors": clip("; ".join(f"metric {m}: {e}" for m, e in (record.get("score_errors") or {}).items())),
            "meta": {k: clip(v, 80) for k, v in (record.get("meta") or {}).items() if not isinstance(v, (dict, list))}}


class SampleIndex:
    """The rows and line offsets of one samples/<task>.jsonl, kept up to date with the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.offsets: list[int] = []
        self._by_key: dict[str, int] = {}
        self._identity: tuple[int, int] | None = None
        self._read_to = 0
        self._lock = threading.Lock()

    def refresh(self) -> "SampleIndex":
        with self._lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                self.__init__(self.path)  # type: ignore[misc]
                return self
            if self._identity != (stat.st_dev, stat.st_ino) or stat.st_size < self._read_to:
                self.rows, self.offsets, self._by_key, self._read_to = [], [], {}, 0
                self._identity = (stat.st_dev, stat.st_ino)
            if stat.st_size > self._read_to:
                self._scan()
        return self

    def _scan(self) -> None:
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
                if not isinstance(record, dict):
                    continue
                key = str(record["id"]) if record.get("id") is not None else f"#record-{record.get('index')}"
                row = table_row(record)
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
        with self.path.open("rb") as handle:
            handle.seek(offset)
            return json.loads(handle.readline())

    def position(self, example_id: str) -> int | None:
        return self._by_key.get(str(example_id))


class RunFolder:
    """One run folder: run.json (config, written at start), results.json (when finished), samples."""

    def __init__(self, path: Path, rid: str) -> None:
        self.path, self.rid = path, rid
        self._indexes: dict[str, SampleIndex] = {}

    def _json(self, name: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.path / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    @property
    def results(self) -> dict[str, Any] | None:
        return self._json("results.json")

    @property
    def meta(self) -> dict[str, Any]:
        return self._json("run.json") or {}

    @property
    def config(self) -> dict[str, Any]:
        return (self.results or {}).get("config") or self.meta.get("config") or {}

    @property
    def tasks(self) -> list[str]:
        names = list(self.config.get("tasks") or [])
        on_disk = sorted(p.stem for p in (self.path / "samples").glob("*.jsonl"))
        return names + [t for t in on_disk if t not in names]

    def samples(self, task: str) -> SampleIndex:
        if task not in self.tasks:
            raise KeyError(task)
        index = self._indexes.setdefault(task, SampleIndex(self.path / "samples" / f"{task}.jsonl"))
        return index.refresh()


def is_run(path: Path) -> bool:
    return (path / "run.json").is_file() or (path / "results.json").is_file()


def _rid(path: Path, root: Path, taken: set[str]) -> str:
    try:
        name = str(path.relative_to(root)) if path != root else path.name
    except ValueError:
        name = path.name
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "run"
    rid, k = base, 2
    while rid in taken:
        rid, k = f"{base}_{k}", k + 1
    taken.add(rid)
    return rid


def find_runs(paths: list[str]) -> list[RunFolder]:
    """Every run folder given or found below the given folders (sorted by path), with stable ids."""
    runs: list[RunFolder] = []
    taken: set[str] = set()
    for given in paths or ["runs"]:
        root = Path(given)
        if not root.is_dir():
            raise ConfigError(f"view: {given} is not a folder (give a run folder or a folder of runs, e.g. runs/)")
        found = [root] if is_run(root) else sorted(Path(d) for d, _, files in os.walk(root)
                                                   if "run.json" in files or "results.json" in files)
        base = root if not is_run(root) else root.parent
        runs += [RunFolder(p, _rid(p, base, taken)) for p in found]
    if not runs:
        raise ConfigError(f"view: no ragbench run under {', '.join(paths or ['runs'])} (a run folder holds run.json "
                          "or results.json; run `ragbench --tasks ... --output DIR` first)")
    return runs
