"""A key -> value SQLite table used from the event loop without ever blocking it, whose entries and
file cannot lie and cannot stop a run.

Reads run in a reader thread with its own connection (`await store.get_many(keys)`); writes are
queued (`store.put(key, item)` returns at once) and a writer thread commits whatever has queued up
in one transaction, so commits are batched by themselves under load. Items queued but not yet
committed are answered from memory. The file is in WAL mode, so readers never wait for a writer;
a writer of another run holding the lock (a shared `--cache`) delays only the writer thread (up
to `busy_seconds`, then the batch is dropped and counted in `write_errors`), never the loop.
Encoding and decoding (JSON of long prompts, vectors) happen in these threads too.

Trust (ragbench._storage.store_checks): every row carries a sha256 of its key and value, checked on
read; a row that fails the check, is not what `decode` accepts, or cannot be read is a miss, counted
(`damaged`, `read_errors`), never an answer. A file that cannot serve is found when the store opens:
one ragbench did not make (`ownership`: another application's SQLite file, even with a table of the
same name, any other file) is not used and left exactly as it is; a damaged one ragbench made (not a
database, cut short, a table of an older ragbench) is moved aside and a fresh one takes its place; one
that cannot be written (read-only, full disk, no permission) is not used at all; either way the run
goes on, and `notice` says which and why (logged once).

A new file is made whole beside its path (marked with `APPLICATION_ID`, in WAL mode, with its table)
and linked into place: the path never holds a half-made file, and one another run made meanwhile is
used, not replaced.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import queue
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .store_checks import (
    APPLICATION_ID,
    Schema,
    StoreStats,
    file_problem,
    move_damaged_aside,
    problem_of,
    row_checksum,
    text_of,
)

log = logging.getLogger(__name__)
_STOP = object()


class SqliteStore:
    """The table of `schema`; `encode(key, item)` gives the row of its columns (checksum aside) to INSERT
    OR REPLACE, `decode(value)` turns `value_column` back into a value (raising on a value of the wrong
    shape), `from_item(item)` turns a queued, uncommitted item into one. `label` names the store in
    messages; `fix` says what option points it elsewhere; `owned`: the path lies in a run folder ragbench
    made (`ownership`)."""

    def __init__(
        self,
        path: str | Path,
        schema: Schema,
        value_column: str,
        encode: Callable[[str, Any], tuple[Any, ...]],
        decode: Callable[[Any], Any],
        from_item: Callable[[Any], Any],
        label: str = "cache",
        fix: str = "",
        owned: bool = False,
        busy_seconds: float = 60.0,
        read_busy_seconds: float = 5.0,
    ) -> None:
        self.path = Path(path)
        self.schema, self.table, self.value_column, self.owned = schema, schema.table, value_column, owned
        self.encode, self.decode, self.from_item = encode, decode, from_item
        self.label, self.fix = label, fix
        self.write_errors = 0
        self.read_errors = 0
        self.damaged = 0  # rows that failed their check: misses
        self.notice: str | None = None  # why the file was replaced or is not used
        self._busy, self._read_busy = busy_seconds, read_busy_seconds
        self._local = threading.local()
        self._pending: dict[str, Any] = {}
        self._pending_lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer_db: sqlite3.Connection | None = None
        self._reader = ThreadPoolExecutor(1, thread_name_prefix=f"sqlite-read-{self.table}")
        self._writer = threading.Thread(target=self._write_loop, name=f"sqlite-write-{self.table}", daemon=True)
        self._closed = False
        self._open()
        if self.available:
            self._writer.start()
        if self.notice:
            log.warning("ragbench: warning: %s", self.notice)

    @property
    def available(self) -> bool:
        return self._writer_db is not None

    # --- opening ----------------------------------------------------------------------------------
    def _open(self) -> None:
        """Open the file, or a fresh one in place of a damaged one, or none (`notice` says why)."""
        problem = file_problem(self.path, self.schema, self.owned)
        if problem is None or problem.damaged:  # read without a lock: opening it (locked) says whether it is
            try:
                self._open_file()
                return
            except (sqlite3.Error, OSError) as exc:
                problem = problem_of(exc)
            self._close_connections()
        if problem.foreign:
            self.notice = (
                f"{self.label} {self.path}: {problem.reason}; the run goes on without it and leaves the "
                f"file as it is ({self.fix})"
            )
            return
        if not problem.damaged:
            self.notice = f"{self.label} {self.path}: {problem.reason}; the run goes on without it ({self.fix})"
            return
        try:
            aside = move_damaged_aside(self.path)
            self._open_file()
        except (sqlite3.Error, OSError) as exc:
            self._close_connections()
            self.notice = (
                f"{self.label} {self.path}: damaged ({problem.reason}) and no fresh one can take its "
                f"place ({problem_of(exc).reason}); the run goes on without it ({self.fix})"
            )
            return
        self.notice = (
            f"{self.label} {self.path}: damaged ({problem.reason}); moved to {aside.name} beside it, "
            f"and a fresh {self.label} is used in its place (its entries are made again)"
        )

    def _open_file(self) -> None:
        """Open the file `ownership` found to be ragbench's, or a new one (`_create`)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(self.path):
            self._create()
        db = self._writer_db = self._connect(self._busy)
        found = db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",  # page 1 and the
            (self.table,),
        ).fetchone()  # schema: NOTADB, CORRUPT
        if found is None or found[0] != self.schema.create:
            raise sqlite3.DatabaseError(self.schema.mismatch(found and found[0]))  # damaged: moved aside
        db.execute("PRAGMA journal_mode=WAL")  # set when it was made; again for a file a tool switched back
        if db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")  # a cache of a ragbench before the mark
        self._reader.submit(self._reader_db).result()  # thread and connection ready before the loop needs them
        self._value_index = self._column_names(db).index(self.value_column)

    def _create(self) -> None:
        """A new file, made whole under a temporary name and linked into place (never over a file another
        run made meanwhile: that one is used)."""
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        try:
            db = sqlite3.connect(str(temporary), isolation_level=None)
            try:
                # no waits for the disk (tens of ms a run): a crash leaves at worst a damaged empty file, moved aside
                db.execute("PRAGMA synchronous=OFF")
                db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(self.schema.create)
            finally:
                db.close()
            try:
                os.link(temporary, self.path)
            except FileExistsError:
                pass
            except OSError as exc:  # a file system without hard links (FAT, some network shares)
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP) or os.path.lexists(self.path):
                    raise
                os.replace(temporary, self.path)
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{temporary}{suffix}").unlink(missing_ok=True)

    def _column_names(self, db: sqlite3.Connection) -> list[str]:
        return [row[1] for row in db.execute(f"PRAGMA table_info({self.table})")]

    def _connect(self, busy_seconds: float) -> sqlite3.Connection:
        db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=busy_seconds, isolation_level=None)
        db.text_factory = text_of
        db.execute(f"PRAGMA busy_timeout={int(busy_seconds * 1000)}")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _close_connections(self) -> None:
        if self._writer_db is not None:
            self._writer_db.close()
            self._writer_db = None
        self._reader.submit(self._close_reader).result()

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
            self._local.db = None

    def lookup(self, keys: list[str]) -> list[Any | None]:
        """Values for `keys` (None where absent), in this thread. A read that fails (a file locked
        past the read timeout, a damaged page) and a row that fails its check are misses, counted in
        `read_errors` and `damaged`."""
        with self._pending_lock:
            queued = {key: self._pending[key] for key in keys if key in self._pending}
        found: dict[str, Any] = {}
        wanted = [key for key in dict.fromkeys(keys) if key not in queued] if self.available else []
        try:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for key, value, checksum in self._reader_db().execute(
                    f"SELECT key, {self.value_column}, checksum FROM {self.table} WHERE key IN ({marks})", chunk
                ):
                    found[key] = self._verified(key, value, checksum)
        except sqlite3.Error as exc:
            self.read_errors += 1
            self._warn_first(
                self.read_errors,
                "a read failed (%s); such reads are misses (counted, and reported when the run ends)",
                exc,
            )
        return [self.from_item(queued[key]) if key in queued else found.get(key) for key in keys]

    def _warn_first(self, count: int, failure: str, *args: object) -> None:
        """One warning naming the store for the first failure of a kind (`count`: those so far, the first 1); the
        others are only counted."""
        if count == 1:
            log.warning("ragbench: warning: %s %s: " + failure, self.label, self.path, *args)

    def _verified(self, key: str, value: Any, checksum: str | None) -> Any | None:
        try:
            if value is None or checksum != row_checksum(key, value):
                raise ValueError("checksum mismatch")
            return self.decode(value)
        except Exception:  # a changed byte, a value that is not what was stored: never an answer
            self.damaged += 1
            return None

    async def get_many(self, keys: list[str]) -> list[Any | None]:
        """`lookup` in the reader thread: the loop goes on meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self._reader, self.lookup, keys)

    # --- writes ---------------------------------------------------------------------------------
    def put(self, items: Iterable[tuple[str, Any]]) -> None:
        """Queue (key, item) pairs for the writer thread; returns at once (nothing when the file is not used)."""
        items = list(items)
        if not items or not self.available:
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

    def _row(self, key: str, item: Any) -> tuple[Any, ...]:
        row = self.encode(key, item)
        return (*row, row_checksum(key, row[self._value_index]))

    def _commit(self, items: list[tuple[str, Any]]) -> None:
        db = self._writer_db
        assert db is not None  # the writer thread commits while the store is open
        try:
            rows = [self._row(key, item) for key, item in items]
            marks = ",".join("?" * len(rows[0]))
            db.execute("BEGIN")
            db.executemany(f"INSERT OR REPLACE INTO {self.table} VALUES ({marks})", rows)
            db.execute("COMMIT")
        except Exception as exc:  # a locked, full or broken file: the answers are used, not stored
            self.write_errors += 1
            self._warn_first(
                self.write_errors,
                "a write of %d entries failed (%s: %s); they are used, not stored (failed writes are counted, and "
                "reported when the run ends)",
                len(items),
                type(exc).__name__,
                exc,
            )
            try:
                db.rollback()
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
        db = self._writer_db
        return db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0] if db is not None else 0

    def size_bytes(self) -> int:
        if not self.available:
            return 0
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def stats(self) -> StoreStats:
        """The file, its size, the entries that failed their check, failed reads and writes, and the notice."""
        self.flush()
        return {
            "path": str(self.path),
            "bytes": self.size_bytes(),
            "damaged_entries": self.damaged,
            "read_errors": self.read_errors,
            "write_errors": self.write_errors,
            "notice": self.notice,
        }

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._writer.is_alive():
            self._queue.put(_STOP)
            self._writer.join()
        self._close_connections()
        self._reader.shutdown(wait=True)
