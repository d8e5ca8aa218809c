"""What the progress bar shows of the batches out at a vendor's batch API (ragbench._run.progress): each batch's
state and requests done, and the requests waiting on them. A run owns one (ragbench._run.services.RunServices) and
hands it to its engines (`keep_batches`) and to its progress bar; the engines write it from their worker threads."""

from __future__ import annotations

import threading


class BatchBoard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: dict[str, tuple[str, int, int]] = {}  # batch id -> (state, requests done, requests)

    def show(self, batch_id: str, state: str, done: int, total: int) -> None:
        with self._lock:
            self._batches[batch_id] = (state, done, total)

    def drop(self, batch_id: str) -> None:
        with self._lock:
            self._batches.pop(batch_id, None)

    def line(self) -> str:
        """`batches: ID STATE DONE/ALL, ...; waiting N`, or "" with no batch out."""
        with self._lock:
            batches = dict(self._batches)
        if not batches:
            return ""
        shown = ", ".join(f"{key} {state} {done}/{total}" for key, (state, done, total) in batches.items())
        waiting = sum(total - done for _, done, total in batches.values())
        return f"batches: {shown}; waiting {waiting}"
