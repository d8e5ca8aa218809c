"""Files a run writes: whole or not at all, OS errors that name their file, and whether a path can be
written at all (for the pre-flight).

A file rewritten in place (run.json, results.json, report.md, the finalized samples, calls/tools.json)
goes through `replacing`: written to a temporary file beside it, flushed to disk, renamed over it, and the
rename flushed too (its folder synced: once for several files replaced together, `write_all_atomically`); with
`$RAGBENCH_FSYNC=off` (`flush_to_disk`) nothing is flushed, the rest is the same; a
failure (a full disk) removes the temporary file and leaves the old one whole. Append-only files
(samples, calls, judge and NLI logs) stay appends (ragbench._storage.jsonl.open_append), whose errors
`naming` gives the file's name: a write's ENOSPC carries none of its own.

A file of ragbench's is read or appended to through `open_file` (or looked for with `file_there`; both
ragbench._regular_files', named here too): a FIFO, device, socket or folder there is refused (`NotAFileError`), never
waited on. A file kept for the user (a
damaged cache) is moved aside by `move_aside`, never over another file. A folder a command reads (a run
folder given to compare, rescore or view) is looked at first (`folder_problem`).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from .._regular_files import NotAFileError as NotAFileError
from .._regular_files import file_there as file_there
from .._regular_files import open_file as open_file
from .._regular_files import require_regular as require_regular
from .._values.environment import flushes_to_disk


def named(exc: OSError, path: str | Path) -> OSError:
    """`exc` naming `path` (the file the caller was writing) when it names no file of its own."""
    if exc.filename is not None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))  # the errno's subclass (PermissionError ...)


@contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """OSErrors raised inside name `path` when they name no file."""
    try:
        yield
    except OSError as exc:
        renamed = named(exc, path)
        if renamed is exc:
            raise
        raise renamed from exc


@contextmanager
def replacing(path: str | Path, sync_folder: bool = True) -> Iterator[IO[bytes]]:
    """A binary file whose content replaces `path` when the block ends without an error. Its OSErrors
    name `path`; on any error the temporary file is removed and `path` is as it was. `sync_folder=False`:
    the caller syncs the folder (`_sync_folder`) once the files it replaces there are all renamed."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")  # one per writer
    try:
        with naming(path):
            with open(temporary, "xb") as handle:  # created with the umask's permissions, as `path` was
                yield handle
                handle.flush()
                flush_to_disk(handle.fileno())
            try:
                os.replace(temporary, path)
            except OSError as exc:  # it names the temporary file: name the file being replaced
                exc.filename, exc.filename2 = str(path), None
                raise
    except BaseException:
        with suppress(OSError):
            temporary.unlink()
        raise
    if sync_folder:
        _sync_folder(path.parent)


TEMPORARY = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")  # the names `replacing` gives


def remove_temporaries(folder: str | Path, subfolders: tuple[str, ...] = ()) -> None:
    """The temporary files `replacing` left in `folder` and its `subfolders` when its process was killed
    mid-write (the folder's lock holder calls this: no other writer can be at work there). Only files
    of the names `replacing` gives, never through a link."""
    for place in [Path(folder), *(Path(folder) / name for name in subfolders)]:
        if place.is_symlink() or not place.is_dir():
            continue
        for stale in place.iterdir():
            if TEMPORARY.fullmatch(stale.name) and stale.is_file() and not stale.is_symlink():
                with suppress(OSError):
                    stale.unlink()


def folder_problem(path: str | Path) -> str | None:
    """What makes `path`, a folder a command was given to read (a run folder), none it can read: nothing there, a
    symbolic link that leads back to itself, a file, a folder it may not list; None for a folder it can read."""
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link that leads back to itself"
        if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            return "a symbolic link to nothing" if os.path.islink(path) else "nothing is there"
        return f"cannot be reached ({(exc.strerror or type(exc).__name__).lower()})"
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder"
    if not os.access(path, os.R_OK | os.X_OK):
        return "a folder that cannot be read (permission denied)"
    return None


def write_atomically(path: str | Path, text: str) -> None:
    """`path` holds `text` (UTF-8), whole, or is as it was. A lone surrogate (a string no UTF-8 holds,
    e.g. a label in report.md) is written as its escape, \\udXXX (JSON text escapes them itself: `json_text`)."""
    write_all_atomically({Path(path): text})


def write_all_atomically(texts: dict[Path, str]) -> None:
    """Each path holds its text as `write_atomically` writes it, whole, or is as it was, in the order given; each
    folder is synced once, after the renames of its files that were made (one wait for the disk, not one a file)."""
    renamed: list[Path] = []
    try:
        for path, text in texts.items():
            with replacing(path, sync_folder=False) as handle:
                handle.write(text.encode("utf-8", "backslashreplace"))
            renamed.append(path)
    finally:
        for folder in dict.fromkeys(path.parent for path in renamed):
            _sync_folder(folder)


def flush_to_disk(descriptor: int) -> None:
    """`os.fsync`, unless `$RAGBENCH_FSYNC` is `off`: a run on scratch storage, or a test suite, that can lose its
    last writes to a power cut (a killed process loses nothing either way: what it wrote is in the OS's cache), as
    PostgreSQL's `fsync = off` and git's `core.fsync` allow. Files are still replaced whole, by rename."""
    if flushes_to_disk():
        os.fsync(descriptor)


def _sync_folder(folder: Path) -> None:
    """The rename itself on disk (a crash after it keeps the new file)."""
    with suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            flush_to_disk(descriptor)
        finally:
            os.close(descriptor)


def move_aside(path: Path, name: str, companions: tuple[str, ...] = ()) -> Path:
    """Move `path`, kept for the user, to the first free name of `name`, `name.2`, `name.3` ... beside it,
    with each file named `path` + a suffix of `companions` that exists (a database's WAL files) moved to
    that name + the suffix (one removed meanwhile is skipped). Never over a file: every name is claimed first
    by creating it with O_EXCL (which fails on an existing name, also against another process claiming it at
    the same moment), and only a file so claimed is replaced. The companions move first, `path` last: a crash in between leaves `path`
    where it was. Returns where `path` went."""
    suffixes = ["", *(suffix for suffix in companions if os.path.lexists(f"{path}{suffix}"))]
    number = 1
    while not _claimed(aside := path.with_name(name if number == 1 else f"{name}.{number}"), suffixes):
        number += 1
    moved: set[str] = set()
    try:
        for suffix in [*suffixes[1:], ""]:
            try:
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
            except FileNotFoundError:
                if not suffix:
                    raise
                continue  # a companion removed meanwhile (SQLite deletes a WAL file as its last connection closes)
            moved.add(suffix)
    finally:
        for suffix in set(suffixes) - moved:  # not moved (the source vanished, a failing disk): no empty file stays
            Path(f"{aside}{suffix}").unlink(missing_ok=True)
    return aside


def _claimed(name: Path, suffixes: list[str]) -> bool:
    """Whether the files `name` + each suffix were all made here, empty, none of them there before (else
    those made are removed again)."""
    made: list[Path] = []
    try:
        for suffix in suffixes:
            target = Path(f"{name}{suffix}")
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            made.append(target)
    except OSError as exc:
        for target in made:
            target.unlink(missing_ok=True)
        if isinstance(exc, FileExistsError):
            return False
        raise
    return True


def nearest_existing(path: Path) -> Path:
    """`path`, or its nearest ancestor that exists (where a file or folder to be made will live)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def write_problem(path: str | Path) -> str | None:
    """Why `path` (a file or folder, existing or to be made) cannot be written, or None. Nothing is
    written: os.access sees a read-only file system even for root (whom permissions do not stop)."""
    path = Path(path)
    existing = nearest_existing(path)
    if existing != path and not existing.is_dir():
        return f"{existing} is a file, not a folder"
    for target in dict.fromkeys([existing, existing.parent if existing.is_file() else existing]):
        if not os.access(target, os.W_OK):
            return f"cannot write {target} ({'read-only file system' if _read_only(target) else 'no permission'})"
    return None


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
