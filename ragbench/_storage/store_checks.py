"""Whether a SQLite cache file and its rows can be trusted (ragbench._storage.sqlite_store uses these at
open and on every read; the pre-flight asks `file_problem`).

A row is trusted when its sha256 of key and value matches; a file when SQLite can read page 1 and the
schema (O(1): this catches a file that is not a database, and one cut short, whose page 1 counts more
pages than the file holds): 12 ms on a 101 MB cache, where `PRAGMA quick_check` reads the whole file
(3.8 s from disk, 0.17 s from the page cache; benchmarks/cache_open.py) at every start. A damaged page
it would find is met on read instead, and is a miss.

A file is used only when ragbench made it (`ownership`): its header carries ragbench's
`APPLICATION_ID` (set when the file is made, by `SqliteStore`), or it holds nothing but the one table
ragbench made (a cache of a ragbench before the mark). Any other file (another application's SQLite
file, even one with a table of the same name, a text file, an empty file, a FIFO) is foreign: never
migrated, moved, switched to WAL or written. Only a file ragbench made that is damaged is moved aside.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from .files import NotAFileError, file_there, move_aside, open_file, write_problem

APPLICATION_ID = 0x72626368  # "rbch": `PRAGMA application_id` of every SQLite file ragbench makes
SQLITE_HEADER = b"SQLite format 3\x00"


class StoreStats(TypedDict):
    """What went wrong with a store (`SqliteStore.stats`, results.json's `cost.response_cache`): its file, its size,
    the entries that failed their check, failed reads and writes, and why the file was replaced or is not used."""

    path: str
    bytes: int
    damaged_entries: int
    read_errors: int
    write_errors: int
    notice: str | None


@dataclass(frozen=True)
class Schema:
    """The one table of a store: `columns` (a TEXT primary key `key` first), then a `checksum` column."""

    table: str
    columns: str

    @property
    def create(self) -> str:
        """The statement that makes the table, as SQLite keeps it in `sqlite_master`."""
        return f"CREATE TABLE {self.table} ({self.columns}, checksum TEXT)"

    def mismatch(self, found: str | None) -> str:
        """Why a file ragbench made, whose table was made by `found` (None: it has none), is damaged."""
        return (
            f"its {self.table} table is {'missing' if found is None else 'not the one this ragbench makes'} "
            "(an older ragbench's file, or a changed one)"
        )


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
    """Why a SQLite file cannot serve as a cache: `damaged` (a file ragbench made whose bytes are wrong:
    it is moved aside and a fresh one takes its place), `foreign` (ragbench did not make it: it is left as
    it is, and the pre-flight refuses it) or neither (it cannot be written: the run goes on without it)."""

    reason: str
    damaged: bool
    foreign: bool = False

    def consequence(self, label: str, fix: str) -> str:
        """What a run does about it (for the pre-flight)."""
        if self.foreign:
            return f"ragbench never writes into a file it did not make: give a new path ({fix})"
        return (
            f"a run moves it aside and uses a fresh {label} in its place"
            if self.damaged
            else f"a run goes on without it ({fix})"
        )


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


def ownership(path: Path, schema: Schema, owned: bool = False) -> FileProblem | None:
    """None when the file at `path` is a store of `schema` ragbench made, or nothing is there (one is made);
    else why not: foreign, or damaged (a file ragbench made). `owned`: the path lies in a run folder ragbench
    made, so a file there that is not a link is ragbench's whatever its bytes. Reads the header and the
    schema only (`immutable`: no journal, lock or WAL file appears), without locking: a file ragbench made
    found damaged this way is checked again by opening it (`SqliteStore`), as another run may be writing it."""
    try:
        if not file_there(path):  # nothing there (`unwritable` says whether one can be made)
            dangling = path.is_symlink()
            return FileProblem("a symbolic link to nothing is there", False, foreign=True) if dangling else None
        with open_file(path) as handle:
            header = handle.read(100)
    except NotAFileError as exc:
        return FileProblem(exc.strerror or "not a file is there", False, foreign=True)
    except OSError as exc:
        return problem_of(exc)
    owned = owned and not path.is_symlink()
    marked = header[:16] == SQLITE_HEADER and int.from_bytes(header[68:72], "big") == APPLICATION_ID
    if header[:16] != SQLITE_HEADER:
        reason = "an empty file" if not header else "not a SQLite file"
        return (
            FileProblem(reason, True)
            if owned
            else FileProblem(f"{reason}, not a cache ragbench made", False, foreign=True)
        )
    try:
        tables = _tables(path)
    except sqlite3.Error as exc:
        problem = problem_of(exc)
        return (
            problem
            if marked or owned or not problem.damaged
            else FileProblem(f"{problem.reason}, not a cache ragbench made", False, foreign=True)
        )
    ours = tables.get(schema.table)
    if ours == schema.create and (marked or len(tables) == 1):
        return None  # ragbench's (marked, or of a ragbench before the mark: nothing but its table)
    if marked and ours is None and tables:
        return FileProblem(
            f"a file of ragbench's holding no {schema.table} table (its tables: "
            f"{', '.join(sorted(tables))}): another kind of ragbench cache",
            False,
            foreign=True,
        )
    if marked or owned:
        return FileProblem(schema.mismatch(ours), True)
    return FileProblem(
        f"a SQLite file ragbench did not make (its tables: {', '.join(sorted(tables)) or 'none'})", False, foreign=True
    )


def _tables(path: Path) -> dict[str, str]:
    """name -> CREATE statement of the tables of the SQLite file at `path`, read without writing anything."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        return dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
    finally:
        db.close()


def file_problem(path: str | Path, schema: Schema, owned: bool = False) -> FileProblem | None:
    """What keeps the SQLite file at `path` from serving as a cache of `schema` (None: it can, or it is
    absent and can be made): `ownership`, then `unwritable`. Writes nothing."""
    path = Path(path)
    return ownership(path, schema, owned) or unwritable(path)


def move_damaged_aside(path: Path) -> Path:
    """Move a damaged file (and its WAL files) to `<name>.damaged-<time>` (`.2`, `.3` ... after it when that
    name is taken: the same second twice, a clock stepped back), kept to look at; never over a file."""
    return move_aside(path, f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}", companions=("-wal", "-shm"))


def health_lines(label: str, stats: StoreStats | None, notice: bool = True) -> list[str]:
    """What went wrong with a store (`SqliteStore.stats()`), for the console and report.md: its
    counts, and its notice (unless `notice` is False: the console's summary, whose run warned of it
    when the store opened)."""
    if not stats:
        return []
    counts = [
        f"{count} {what}"
        for count, what in (  # read with `get`: an older results.json's entry may lack one
            (stats.get("damaged_entries"), "damaged entries were misses"),
            (stats.get("read_errors"), "failed reads (misses)"),
            (stats.get("write_errors"), "failed writes (answers used, not stored)"),
        )
        if count
    ]
    lines = [f"{label} {stats['path']}: " + ", ".join(counts)] if counts else []
    if notice and (told := stats.get("notice")):
        lines.append(told)
    return lines
