"""Whether a SQLite cache file and its rows can be trusted (ragbench._storage.sqlite_store uses these at
open and on every read; the pre-flight asks `file_problem`).

A row is trusted when its sha256 of key and value matches; a file when SQLite can read page 1 and the
schema (O(1): this catches a file that is not a database, and one cut short, whose page 1 counts more
pages than the file holds): 12 ms on a 101 MB cache, where `PRAGMA quick_check` reads the whole file
(3.8 s from disk, 0.17 s from the page cache; benchmarks/cache_open.py) at every start. A damaged page
it would find is met on read instead, and is a miss.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .files import write_problem



def row_checksum(key: str, value: str | bytes) -> str:
    """sha256 of a row's key and value as stored (TEXT as UTF-8; bytes of a damaged TEXT value that are
    not UTF-8 come back as surrogates, see `text_of`, so they never match)."""
    key_bytes = key.encode("utf-8", "surrogateescape")
    data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    digest = hashlib.sha256(len(key_bytes).to_bytes(8, "little"))
    digest.update(key_bytes)
    digest.update(data)
    return digest.hexdigest()


def text_of(data: bytes) -> str:
    """A connection's `text_factory`: a damaged row's bytes reach the checksum, not a decoding error."""
    return data.decode("utf-8", "surrogateescape")


@dataclass
class FileProblem:
    """Why a SQLite file cannot serve as a cache: `damaged` (its bytes are wrong: it is moved aside
    and a fresh one takes its place) or not (it cannot be written: the run goes on without it)."""

    reason: str
    damaged: bool

    def consequence(self, label: str, fix: str) -> str:
        """What a run does about it (for the pre-flight)."""
        return (f"a run moves it aside and uses a fresh {label} in its place" if self.damaged
                else f"a run goes on without it ({fix})")


def problem_of(exc: BaseException) -> FileProblem:
    """The problem an error opening or preparing a file shows: SQLite raises DatabaseError itself
    (not a subclass) for SQLITE_NOTADB and SQLITE_CORRUPT, the file's bytes being wrong; a read-only,
    full, locked or missing file raises OperationalError."""
    reason = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
    return FileProblem(reason, type(exc) is sqlite3.DatabaseError)


def unwritable(path: Path) -> FileProblem | None:
    """A file that cannot be written where it is (or made there)."""
    if path.is_dir():
        return FileProblem("a folder is there, not a file", False)
    reason = write_problem(path)
    return FileProblem(reason, False) if reason else None


def file_problem(path: str | Path) -> FileProblem | None:
    """What keeps the SQLite file at `path` from serving as a cache (None: it can, or it is absent and
    can be made). Writes nothing: the file is opened `immutable`, so no journal or lock file appears."""
    path = Path(path)
    problem = unwritable(path)
    if problem is not None or not path.is_file():
        return problem
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        return problem_of(exc)
    return None


def move_aside(path: Path) -> Path:
    """Rename a damaged file (and its WAL files) to `<name>.damaged-<time>`, kept to look at."""
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    for suffix in ("-wal", "-shm", ""):  # the database last: a crash in between leaves it where it was
        source = Path(f"{path}{suffix}")
        if source.exists():
            os.replace(source, f"{aside}{suffix}")
    return aside


def health_lines(label: str, stats: dict[str, Any] | None, notice: bool = True) -> list[str]:
    """What went wrong with a store (`SqliteStore.stats()`), for the console and report.md: its
    counts, and its notice (unless `notice` is False: the console's summary, whose run warned of it
    when the store opened)."""
    if not stats:
        return []
    counts = [f"{stats[key]} {what}" for key, what in (("damaged_entries", "damaged entries were misses"),
                                                       ("read_errors", "failed reads (misses)"),
                                                       ("write_errors", "failed writes (answers used, not stored)"))
              if stats.get(key)]
    lines = [f"{label} {stats['path']}: " + ", ".join(counts)] if counts else []
    if notice and stats.get("notice"):
        lines.append(stats["notice"])
    return lines
