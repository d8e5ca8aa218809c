"""The batches an engine sent to a vendor's batch API, recorded in the run folder (`batches/`), so that a run
killed or interrupted while they ran resumes by polling the same batches: nothing is submitted, or paid, twice.

One record per batch, `batches/<key>.json` ({"engine", "intent", "base_url", "batch", "endpoint", "custom_ids",
"at", "uploaded"}), written atomically before the batch is polled: once BEFORE the vendor is asked to create it, with
"batch" null and the intent (a key of ragbench's own the batch is tagged with where the vendor lets it be: OpenAI's
`metadata`), again with the id of the input file uploaded for it (OpenAI's, before the batch is asked for: a resumed
run that finds no batch for the intent deletes that file), and with the vendor's batch id as soon as it has
answered. A run killed between the two leaves an
intent a resumed run resolves (batches/runner.py): it adopts the batch the vendor holds for it, or, where the
vendor holds none, forgets the intent and sends its requests. Once a batch has ended, its result lines,
`batches/<key>.results.jsonl` (the vendor's lines as they came, one per request answered, failed or expired: read
as batches/results.py reads them, a damaged line costing only itself), then
`batches/<key>.json` again with "ended" (and "failed": why the vendor failed the whole batch, where it did). The
base URL is the server that holds the batch (one of a replica set's `--base-url`s): it is polled there. A request
is known by its custom id (`custom_id`: a digest of its cache key), so a resumed run that asks it again finds the
latest batch that holds it, whichever batch of the resumed run it comes in; the digest is salted with a random key
of the engine's in the folder (`batches/<key>.key`, made once), so that no other run, asking the same requests,
makes batches of the same custom ids (Anthropic's batches carry no tag: an intent is told from them by its custom
ids). Without a folder (an engine used outside a run) the records are kept in memory only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ..._storage.files import flush_to_disk, write_all_atomically
from ..._values.engine_errors import EngineError
from .results import ResultLines, read_result_lines, text_lines

BATCHES_DIR = "batches"
CLOCK_SKEW_S = 3600  # the vendor's clock may differ from ours: batches this much older than an intent are looked at


def custom_id(cache_key: str, salt: str) -> str:
    """A request's id within a batch: 40 hex digits of its cache key salted (Anthropic takes 1 to 64 of
    [A-Za-z0-9_-])."""
    return "rb-" + hashlib.sha256(f"{salt}\n{cache_key}".encode()).hexdigest()[:40]


@dataclass
class Submitted:
    """One batch asked for: its intent (ragbench's key for it), the server holding it, its endpoint and requests;
    the vendor's id once it has created it; its result lines once it has ended, and why the vendor failed it as a
    whole, where it did."""

    intent: str
    base_url: str
    endpoint: str
    custom_ids: list[str]
    at: int  # when it was asked for (ns): the latest batch holding a request is the one that counts
    batch_id: str | None = None  # None: asked for, its creation not (yet) confirmed
    results: ResultLines | None = None
    failed: str | None = None
    read_here: bool = False  # ended in this attempt (a try of its requests here), not read from the folder
    resumed: bool = False  # recorded by an earlier attempt of the run
    creating: bool = False  # being created by this process: not an intent to resolve
    uploaded: str | None = None  # the input file uploaded for it (OpenAI), once uploaded

    @property
    def ended(self) -> bool:
        return self.results is not None


class _BatchRecord(TypedDict):
    engine: str
    intent: str
    base_url: str
    batch: str | None
    endpoint: str
    custom_ids: list[str]
    at: int
    ended: bool


class BatchRecord(_BatchRecord, total=False):
    """A batch's record in `batches/` (`Submitted` as a file holds it), written before each step of the batch."""

    failed: str
    uploaded: str


@dataclass
class BatchStore:
    """The batches of one engine (`engine_id`), in `folder`'s `batches/` (None: in memory only)."""

    engine_id: str
    folder: Path | None = None
    batches: list[Submitted] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    salt: str = field(default_factory=lambda: secrets.token_hex(8))  # the folder's, once loaded

    def custom(self, cache_key: str) -> str:
        """The custom id of the request of `cache_key`."""
        return custom_id(cache_key, self.salt)

    def load(self) -> None:
        """This engine's salt and records from the folder (an earlier attempt's); one line naming a damaged one."""
        if self.folder is None:
            return
        self.salt = self._salt()
        for path in sorted((self.folder / BATCHES_DIR).glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                if record["engine"] != self.engine_id:
                    continue
                batch = Submitted(
                    str(record["intent"]), str(record["base_url"]), str(record["endpoint"]),
                    [str(c) for c in record["custom_ids"]], int(record["at"]),
                    None if record["batch"] is None else str(record["batch"]), failed=record.get("failed"),
                    resumed=True, uploaded=None if record.get("uploaded") is None else str(record["uploaded"]),
                )  # fmt: skip
                if record.get("ended"):
                    batch.results = read_result_lines(text_lines(path.with_suffix(".results.jsonl").read_bytes()))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise EngineError(
                    f"{path}: not a batch record ragbench wrote ({type(exc).__name__}: {exc}); move it away to "
                    "send its requests again (its batch is then paid twice)"
                ) from None
            self.batches.append(batch)
        self.batches.sort(key=lambda batch: batch.at)

    def latest(self, custom: str) -> Submitted | None:
        """The latest batch that holds request `custom`."""
        with self.lock:
            return next((batch for batch in reversed(self.batches) if custom in batch.custom_ids), None)

    def tries(self, custom: str) -> int:
        """The batches holding `custom` that have ended in this attempt (each a try of it): a resumed run tries
        again what the vendor failed in an earlier one."""
        with self.lock:
            return sum(custom in batch.custom_ids and batch.read_here for batch in self.batches)

    def unresolved(self, customs: set[str]) -> list[Submitted]:
        """The intents holding any of `customs` whose batch no one knows: an earlier attempt's (or a creation
        that failed) the vendor may hold."""
        with self.lock:
            return [b for b in self.batches if b.batch_id is None and not b.creating and customs & set(b.custom_ids)]

    def known(self, base_url: str) -> set[str]:
        """The ids of the batches recorded at the server at `base_url`."""
        with self.lock:
            return {b.batch_id for b in self.batches if b.batch_id is not None and b.base_url == base_url}

    def intend(self, base_url: str, endpoint: str, customs: list[str]) -> Submitted:
        """Record a batch about to be asked of the server at `base_url`, before it is asked: its intent."""
        batch = Submitted("rbi-" + secrets.token_hex(8), base_url, endpoint, customs, time.time_ns(), creating=True)
        if self.folder is not None:
            self._write({self._path(batch): self._record(batch)})
        with self.lock:
            self.batches.append(batch)
        return batch

    def upload(self, batch: Submitted, file_id: str) -> None:
        """Record the input file uploaded for the batch of an intent, before the batch is asked for."""
        batch.uploaded = file_id
        if self.folder is not None:
            self._write({self._path(batch): self._record(batch)})

    def created(self, batch: Submitted, batch_id: str) -> None:
        """Record the vendor's id of the batch of an intent, before anything else happens to it."""
        batch.batch_id, batch.creating = batch_id, False
        if self.folder is not None:
            self._write({self._path(batch): self._record(batch)})

    def forget(self, batch: Submitted) -> None:
        """Drop an intent the vendor holds no batch for: its requests are sent again."""
        with self.lock:
            self.batches.remove(batch)
        if self.folder is not None:
            self._path(batch).unlink(missing_ok=True)

    def ended(self, batch: Submitted, lines: list[str], failed: str | None = None) -> None:
        """Record a batch's result lines as the vendor sent them (and why it failed as a whole): its requests are
        answered from them."""
        batch.failed = failed
        if self.folder is not None:
            path = self._path(batch)
            results = "".join(line + "\n" for line in lines)
            self._write({path.with_suffix(".results.jsonl"): results, path: self._record(batch, ended=True)})
        batch.results, batch.read_here = read_result_lines(lines), True

    def record_path(self, batch: Submitted) -> str:
        """Where `batch` is recorded, as a message names it."""
        return str(self._path(batch)) if self.folder is not None else "memory (no run folder)"

    def _record(self, batch: Submitted, ended: bool = False) -> str:
        record: BatchRecord = {
            "engine": self.engine_id,
            "intent": batch.intent,
            "base_url": batch.base_url,
            "batch": batch.batch_id,
            "endpoint": batch.endpoint,
            "custom_ids": batch.custom_ids,
            "at": batch.at,
            "ended": ended,
        }
        if batch.uploaded is not None:
            record["uploaded"] = batch.uploaded
        if batch.failed is not None:
            record["failed"] = batch.failed
        return json.dumps(record) + "\n"

    def _salt(self) -> str:
        """The engine's key in the folder, made by the first to ask (an exclusive link: never two)."""
        assert self.folder is not None
        name = hashlib.sha256(self.engine_id.encode()).hexdigest()[:24]
        path = self.folder / BATCHES_DIR / f"{name}.key"
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")  # files.remove_temporaries'
            try:
                with open(temporary, "x", encoding="utf-8") as handle:
                    handle.write(secrets.token_hex(8) + "\n")
                    handle.flush()
                    flush_to_disk(handle.fileno())
                os.link(temporary, path)
            except FileExistsError:
                pass  # another engine of the same id made it first
            finally:
                temporary.unlink(missing_ok=True)
        salt = path.read_text(encoding="utf-8").strip()
        if not re.fullmatch(r"[0-9a-f]{16}", salt):
            raise EngineError(
                f"{path}: not a batch key ragbench wrote; move the folder's batches/ away to send its batches' "
                "requests again (they are then paid twice)"
            )
        return salt

    def _path(self, batch: Submitted) -> Path:
        assert self.folder is not None
        name = hashlib.sha256(f"{self.engine_id}\n{batch.intent}".encode()).hexdigest()[:24]
        return self.folder / BATCHES_DIR / f"{name}.json"

    def _write(self, texts: dict[Path, str]) -> None:
        assert self.folder is not None
        (self.folder / BATCHES_DIR).mkdir(exist_ok=True)
        write_all_atomically(texts)
