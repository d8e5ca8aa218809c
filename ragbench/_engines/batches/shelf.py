"""What the engines of one model keep of their batches (`--model-arg batch=true`; the loop: batches/runner.py): the
records (batches/store.py, read from the run folder on first use), the counts, the run's board the batches out
are shown on (batches/board.py), and the engines by base URL. A
replica set's engines (`--base-url` repeated) share one shelf: a request is named by the first replica's identity
whichever replica sends it, and a batch an earlier attempt left at one server is polled at that server."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from .board import BatchBoard
from .store import BatchStore


class Named(Protocol):
    """What the shelf reads of an engine (interface.BatchingEngine is one)."""

    base_url: str

    @property
    def engine_id(self) -> str: ...


E = TypeVar("E", bound=Named)


@dataclass
class BatchCounts:
    """The engine's batch figures (results.json's `cost.engine` for the run's model, `cost.other_engines` for a judge or role model)."""

    batches: int = 0  # batches submitted
    resumed: int = 0  # batches of an earlier attempt polled again instead of submitted
    adopted: int = 0  # batches whose creation's answer was lost (a kill, a connection dropped), found at the vendor
    sent: int = 0  # requests sent in batches, each try counted
    resent: int = 0  # of them, sent again: the vendor failed, expired or left them out (here or in an earlier attempt)
    failed: int = 0  # requests that failed: refused, in a failed or lost batch, or after their last try
    files_deleted: int = 0  # input files uploaded for a batch the vendor never created, deleted (OpenAI)

    def to_dict(self) -> dict[str, int]:
        return {
            "batches_submitted": self.batches,
            "batches_resumed": self.resumed,
            "batches_adopted": self.adopted,
            "batch_requests_sent": self.sent,
            "batch_requests_resent": self.resent,
            "batch_requests_failed": self.failed,
            "batch_input_files_deleted": self.files_deleted,
        }


@dataclass
class BatchShelf(Generic[E]):
    """`lead` names the requests and the records (its call identity and engine id); `engines`: by base URL."""

    lead: E
    engines: dict[str, E]
    folder: Path | None = None
    counts: BatchCounts = field(default_factory=BatchCounts)
    board: BatchBoard = field(default_factory=BatchBoard)  # the run's, once it is kept in one (`keep_in`)
    lock: threading.Lock = field(default_factory=threading.Lock)
    resolving: threading.Lock = field(default_factory=threading.Lock)  # one thread at a time resolves intents
    _store: BatchStore | None = None

    @classmethod
    def of(cls, engines: list[E]) -> BatchShelf[E]:
        return cls(engines[0], {engine.base_url: engine for engine in engines})

    def keep_in(self, folder: Path, board: BatchBoard) -> None:
        """Record the batches in (and resume them from) run folder `folder`, those out shown on the run's `board`."""
        with self.lock:
            self.folder, self.board, self._store = folder, board, None

    def store(self) -> BatchStore:
        with self.lock:
            if self._store is None:
                store = BatchStore(self.lead.engine_id, self.folder)
                store.load()
                self._store = store
            return self._store
