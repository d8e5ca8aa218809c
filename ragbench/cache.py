"""Write-through SQLite cache of engine responses, keyed by a hash of (engine, model, request).

Every response is committed the moment it arrives, so a crash loses only the calls in flight. The
request itself is not stored (its `request` column stays empty): the run's samples hold the prompts.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from .engines.base import Request, Response

BUSY_TIMEOUT_SECONDS = 60


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A file shared by concurrent runs (--cache): wait for the other writer instead of failing at
        # once with "database is locked".
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=BUSY_TIMEOUT_SECONDS)
        self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses ("
            " key TEXT PRIMARY KEY, engine TEXT, request TEXT, response TEXT, created REAL)"
        )
        self._db.commit()

    def get(self, key: str) -> Response | None:
        """The response stored under `key` (a `Request.cache_key(engine_id)`), if any."""
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        response = Response.from_dict(json.loads(row[0]))
        response.cached = True
        return response

    def put_many(self, entries: list[tuple[str, str, Request, Response]]) -> None:
        """Store (key, engine_id, request, response) entries, committed at once."""
        if not entries:
            return
        now = time.time()
        self._db.executemany(
            "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)",
            [(key, engine_id, None, json.dumps(response.to_dict(), ensure_ascii=False), now)  # the key, not the prompt
             for key, engine_id, request, response in entries])
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
