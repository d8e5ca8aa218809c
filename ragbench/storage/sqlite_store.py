"""A key -> row SQLite table used from the event loop without ever blocking it.

Reads run in a reader thread with its own connection (`await store.get_many(keys)`); writes are
queued (`store.put(key, item)` returns at once) and a writer thread commits whatever has queued up
in one transaction, so commits are batched by themselves under load. Items queued but not yet
committed are answered from memory. The file is in WAL mode, so readers never wait for a writer;
a writer of another run holding the lock (a shared `--cache`) delays only the writer thread (up
to `busy_seconds`, then the batch is dropped and counted in `write_errors`), never the loop.
Encoding and decoding (JSON of long prompts, vectors) happen in these threads too.
"""
from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable

log = logging.getLogger(__name__)
_STOP = object()


class SqliteStore:
    """`table` has a TEXT primary key `key`; `encode(key, item)` gives the row to INSERT OR REPLACE
    (all columns, key first); `decode(row)` turns the selected `value_columns` into a value, and
    `from_item(item)` turns a queued, uncommitted item into one."""

    def __init__(self, path: str | Path, table: str, columns: str, value_columns: str,
                 encode: Callable[[str, Any], tuple], decode: Callable[[tuple], Any],
                 from_item: Callable[[Any], Any], busy_seconds: float = 60.0, read_busy_seconds: float = 5.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.table, self.value_columns = table, value_columns
        self.encode, self.decode, self.from_item = encode, decode, from_item
        self.write_errors = 0
        self.read_errors = 0
        self._writer_db = self._connect(busy_seconds)
        self._writer_db.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
        self._writer_db.commit()
        self._columns = len(self._writer_db.execute(f"SELECT * FROM {table} LIMIT 0").description)
        self._read_busy = read_busy_seconds
        self._local = threading.local()
        self._reader = ThreadPoolExecutor(1, thread_name_prefix=f"sqlite-read-{table}")
        self._reader.submit(self._reader_db).result()  # thread and connection ready before the loop needs them
        self._pending: dict[str, Any] = {}
        self._pending_lock = threading.Lock()
        self._queue: queue.Queue = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name=f"sqlite-write-{table}", daemon=True)
        self._writer.start()

    def _connect(self, busy_seconds: float) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=busy_seconds)
        db.execute(f"PRAGMA busy_timeout={int(busy_seconds * 1000)}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    # --- reads ----------------------------------------------------------------------------------
    def _reader_db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._connect(self._read_busy)
        return db

    def _close_reader(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()

    def lookup(self, keys: list[str]) -> list[Any | None]:
        """Values for `keys` (None where absent), in this thread. A read that fails (a file locked
        past the read timeout) is a miss, counted in `read_errors`."""
        with self._pending_lock:
            queued = {key: self._pending[key] for key in keys if key in self._pending}
        found: dict[str, tuple] = {}
        wanted = [key for key in dict.fromkeys(keys) if key not in queued]
        try:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for row in self._reader_db().execute(
                        f"SELECT key, {self.value_columns} FROM {self.table} WHERE key IN ({marks})", chunk):
                    found[row[0]] = row[1:]
        except sqlite3.Error as exc:
            self.read_errors += 1
            log.warning("%s: read failed (%s); treated as a miss", self.path, exc)
        return [self.from_item(queued[key]) if key in queued else
                self.decode(found[key]) if key in found else None for key in keys]

    async def get_many(self, keys: list[str]) -> list[Any | None]:
        """`lookup` in the reader thread: the loop goes on meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self._reader, self.lookup, keys)

    # --- writes ---------------------------------------------------------------------------------
    def put(self, items: Iterable[tuple[str, Any]]) -> None:
        """Queue (key, item) pairs for the writer thread; returns at once."""
        items = list(items)
        if not items:
            return
        with self._pending_lock:
            for key, item in items:
                self._pending[key] = item
        self._queue.put(items)

    def _write_loop(self) -> None:
        while True:
            batches = [self._queue.get()]
            while True:  # everything queued meanwhile goes into the same transaction
                try:
                    batches.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(batch is _STOP for batch in batches)
            items = [item for batch in batches if batch is not _STOP for item in batch]
            if items:
                self._commit(items)
            for _ in batches:
                self._queue.task_done()
            if stop:
                return

    def _commit(self, items: list[tuple[str, Any]]) -> None:
        marks = ",".join("?" * self._columns)
        try:
            rows = [self.encode(key, item) for key, item in items]
            self._writer_db.executemany(f"INSERT OR REPLACE INTO {self.table} VALUES ({marks})", rows)
            self._writer_db.commit()
        except Exception as exc:  # a locked or broken file: the answers are used, not stored
            self.write_errors += 1
            log.warning("%s: write of %d entries failed (%s: %s); they are used, not stored",
                        self.path, len(items), type(exc).__name__, exc)
            try:
                self._writer_db.rollback()
            except sqlite3.Error:
                pass
        with self._pending_lock:
            for key, item in items:
                if self._pending.get(key) is item:
                    del self._pending[key]

    def flush(self) -> None:
        """Wait until everything queued so far is committed (or counted as failed)."""
        self._queue.join()

    def count(self) -> int:
        self.flush()
        return self._writer_db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        if not self._writer.is_alive():
            return
        self._queue.put(_STOP)
        self._writer.join()
        self._reader.submit(self._close_reader).result()
        self._reader.shutdown(wait=True)
        self._writer_db.close()
