"""SQLite cache of engine responses, keyed by a hash of (engine, model, request).

The request itself is not stored (its `request` column stays empty): the run's samples hold the prompts.
Off the event loop (ragbench._storage.sqlite_store): `await cache.aget(key)` reads in a reader thread, and
`put_many` queues the responses for a writer thread that commits what has queued up in one
transaction, so a crash loses only the last moments' answers and a shared `--cache` locked by
another run delays only that thread, never the examples in flight. Each row carries a checksum of its
key and reply, checked on read, and a file that cannot serve is replaced or left out: the cache never
answers what was not stored, and never stops a run.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from .._values.engine_errors import EngineError
from .._values.llm_responses import Response
from .jsonl import json_text
from .sqlite_store import SqliteStore
from .store_checks import Schema, StoreStats

BUSY_TIMEOUT_SECONDS = 60
LABEL, FIX = "response cache", "--cache PATH names a file that can be written"  # for messages about the file
SCHEMA = Schema("responses", "key TEXT PRIMARY KEY, engine TEXT, request TEXT, response TEXT, created REAL")


def _row(key: str, entry: tuple[str, Response, float]) -> tuple[str, str, None, str, float]:
    engine_id, response, created = entry
    return (key, engine_id, None, json_text(response.to_dict()), created)  # the key, not the prompt


def _cached(data: dict[str, Any]) -> Response:
    response = Response.from_dict(data)
    response.cached = True
    return response


def _stored(text: str) -> Response:
    """The response a row holds; a row of another shape raises (and is a miss)."""
    data = json.loads(text)
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("texts"), list)
        or not all(isinstance(t, str) for t in data["texts"])
    ):
        raise ValueError("not a stored response")
    return _cached(data)


class ResponseCache:
    """`owned`: the file is the run folder's own cache.sqlite (not a --cache), see `SqliteStore`."""

    def __init__(self, path: str | Path, owned: bool = False) -> None:
        self.path = Path(path)
        self._store = SqliteStore(
            self.path,
            SCHEMA,
            "response",
            encode=_row,
            decode=_stored,
            from_item=lambda entry: _cached(entry[1].to_dict()),
            label=LABEL,
            fix=FIX,
            owned=owned,
            busy_seconds=BUSY_TIMEOUT_SECONDS,
        )
        self._asked: list[tuple[str, asyncio.Future[Any]]] = []  # lookups not yet sent to the reader thread

    @property
    def write_errors(self) -> int:
        """Batches of responses that could not be stored (they were used, not cached)."""
        return self._store.write_errors

    def stats(self) -> StoreStats:
        """For results.json (`cost.response_cache`): file, size, damaged entries, failed reads and writes, notice."""
        return self._store.stats()

    def get(self, key: str) -> Response | None:
        """The response stored under `key` (a `Request.cache_key(engine_id)`), if any; blocking."""
        return self._store.lookup([key])[0]

    async def aget(self, key: str) -> Response | None:
        """`get` in the cache's reader thread. The lookups asked in one turn of the event loop are read together
        (one trip to the thread: a batch's answers wake its examples together, and each asks its next call)."""
        loop = asyncio.get_running_loop()
        if not self._asked:
            loop.call_soon(self._read_asked)
        future: asyncio.Future[Response | None] = loop.create_future()
        self._asked.append((key, future))
        return await future

    def _read_asked(self) -> None:
        asked, self._asked = self._asked, []

        def answer(read: asyncio.Future[Any]) -> None:
            """Every lookup asked gets its answer, or the error of the read (cancelled with it at the run's end)."""
            error: BaseException | None = None
            found: list[Any] = []
            try:
                found = read.result()
                if len(found) != len(asked):
                    error = EngineError(f"the response cache read {len(found)} entries for {len(asked)} lookups")
            except BaseException as exc:  # the read raised, or was cancelled
                error = exc
            for n, (_, future) in enumerate(asked):
                if future.done():  # its caller was cancelled
                    continue
                if isinstance(error, asyncio.CancelledError):
                    future.cancel()
                elif error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(found[n])

        asyncio.ensure_future(self._store.get_many([key for key, _ in asked])).add_done_callback(answer)

    def put_many(self, entries: list[tuple[str, str, Response]]) -> None:
        """Queue (key, engine_id, response) entries; they are committed together."""
        now = time.time()
        self._store.put((key, (engine_id, response, now)) for key, engine_id, response in entries)

    def flush(self) -> None:
        self._store.flush()

    def __len__(self) -> int:
        return self._store.count()

    def close(self) -> None:
        self._store.close()
