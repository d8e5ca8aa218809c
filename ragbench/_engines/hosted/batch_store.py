"""The batches an engine sent to a vendor's batch API, recorded in the run folder (`batches/`), so that a run
killed or interrupted while they ran resumes by polling the same batches: nothing is submitted, or paid, twice.

One record per batch, `batches/<key>.json` ({"engine", "batch", "endpoint", "custom_ids", "at"}), written
atomically as soon as the vendor has answered the batch's creation, before the first poll; and once it has
ended, its result lines, `batches/<key>.results.jsonl` (the vendor's lines as they came, one per request
answered, failed or expired), then `batches/<key>.json` again with "ended" (and "failed": why the vendor failed
the whole batch, where it did). A request is known by its custom id (`custom_id`: a digest of its cache key), so a
resumed run that asks it again finds the latest batch that holds it, whichever batch of the resumed run it
comes in. Without a folder (an engine used outside a run) the records are kept in memory only.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._storage.files import write_all_atomically
from ..._values.llm_calls import EngineError

BATCHES_DIR = "batches"


def custom_id(cache_key: str) -> str:
    """A request's id within a batch: 40 hex digits of its cache key (Anthropic takes 1 to 64 of [A-Za-z0-9_-])."""
    return "rb-" + hashlib.sha256(cache_key.encode()).hexdigest()[:40]


@dataclass
class Submitted:
    """One batch sent: its vendor id, endpoint and requests; its result lines by custom id once it has ended,
    and why the vendor failed it as a whole, where it did."""

    batch_id: str
    endpoint: str
    custom_ids: list[str]
    at: int  # when it was submitted (ns): the latest batch holding a request is the one that counts
    results: dict[str, dict[str, Any]] | None = None
    failed: str | None = None
    resumed: bool = False  # recorded by an earlier attempt of the run

    @property
    def ended(self) -> bool:
        return self.results is not None


@dataclass
class BatchStore:
    """The batches of one engine (`engine_id`), in `folder`'s `batches/` (None: in memory only)."""

    engine_id: str
    folder: Path | None = None
    batches: list[Submitted] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def load(self) -> None:
        """This engine's records from the folder (an earlier attempt's); one line naming a damaged one."""
        if self.folder is None or not (self.folder / BATCHES_DIR).is_dir():
            return
        for path in sorted((self.folder / BATCHES_DIR).glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                if record["engine"] != self.engine_id:
                    continue
                batch = Submitted(
                    str(record["batch"]), str(record["endpoint"]), [str(c) for c in record["custom_ids"]],
                    int(record["at"]), failed=record.get("failed"), resumed=True,
                )  # fmt: skip
                if record.get("ended"):
                    batch.results = self._read_results(path.with_suffix(".results.jsonl"))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise EngineError(
                    f"{path}: not a batch record ragbench wrote ({type(exc).__name__}: {exc}); move it away to "
                    "send its requests again (its batch is then paid twice)"
                ) from None
            self.batches.append(batch)
        self.batches.sort(key=lambda batch: batch.at)

    @staticmethod
    def _read_results(path: Path) -> dict[str, dict[str, Any]]:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return {str(line["custom_id"]): line for line in lines}

    def latest(self, custom: str) -> Submitted | None:
        """The latest batch that holds request `custom`."""
        with self.lock:
            return next((batch for batch in reversed(self.batches) if custom in batch.custom_ids), None)

    def tries(self, custom: str) -> int:
        """The batches holding `custom` that have ended (each a try of it)."""
        with self.lock:
            return sum(custom in batch.custom_ids and batch.ended for batch in self.batches)

    def submitted(self, batch_id: str, endpoint: str, customs: list[str]) -> Submitted:
        """Record a batch the vendor has just created, before anything else happens to it."""
        batch = Submitted(batch_id, endpoint, customs, time.time_ns())
        if self.folder is not None:
            self._write({self._path(batch): self._record(batch)})
        with self.lock:
            self.batches.append(batch)
        return batch

    def ended(self, batch: Submitted, lines: list[dict[str, Any]], failed: str | None = None) -> None:
        """Record a batch's result lines (and why it failed as a whole): its requests are answered from them."""
        batch.failed = failed
        if self.folder is not None:
            path = self._path(batch)
            results = "".join(json.dumps(line) + "\n" for line in lines)
            self._write({path.with_suffix(".results.jsonl"): results, path: self._record(batch, ended=True)})
        batch.results = {str(line["custom_id"]): line for line in lines}

    def _record(self, batch: Submitted, ended: bool = False) -> str:
        record: dict[str, Any] = {"engine": self.engine_id, "batch": batch.batch_id, "endpoint": batch.endpoint}
        record.update(custom_ids=batch.custom_ids, at=batch.at, ended=ended)
        if batch.failed is not None:
            record["failed"] = batch.failed
        return json.dumps(record) + "\n"

    def _path(self, batch: Submitted) -> Path:
        assert self.folder is not None
        name = hashlib.sha256(f"{self.engine_id}\n{batch.batch_id}".encode()).hexdigest()[:24]
        return self.folder / BATCHES_DIR / f"{name}.json"

    def _write(self, texts: dict[Path, str]) -> None:
        assert self.folder is not None
        (self.folder / BATCHES_DIR).mkdir(exist_ok=True)
        write_all_atomically(texts)
