"""The one way ragbench opens a file it reads (a task's data, a picture, a file of a run folder) or appends to: only
where a regular file is there. A FIFO (whose open and reads wait for a writer), a device (/dev/zero never ends), a
socket or a folder is refused (`NotAFileError`), never waited on or read until memory runs out; with `follow=False`
a symbolic link is refused too (a file of a run folder, which ragbench wrote, is never a link to elsewhere).
Foundations-level, below the values: `Image.of` reads a picture's path through it as the data readers
(ragbench._storage.given_files) read the user's files."""

from __future__ import annotations

import errno
import os
import stat
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

OUT_OF_RESOURCES = (errno.EMFILE, errno.ENFILE, errno.ENOMEM)  # too many open files, no memory: the machine's fault


class NotAFileError(OSError):
    """Something other than a regular file (a FIFO, a device, a socket, a folder; a symbolic link where links are not
    followed) where ragbench reads or appends to a file: refused, never waited on (a FIFO's open and reads block until
    a writer comes; /dev/zero never ends). `fix` says what to do."""

    fix = "remove it, or put the file there"


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symbolic link"),  # seen only where links are not followed (`follow=False`)
)


def require_regular(mode: int, path: str | Path) -> None:
    """NotAFileError naming `path` unless `mode` (a stat's st_mode) is a regular file's."""
    if not stat.S_ISREG(mode):
        what = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise NotAFileError(None, f"{what} is there, not a file", str(path))


def file_there(path: str | Path, follow: bool = True) -> bool:
    """Whether a regular file is at `path` (through a link too, unless `follow` is False); False when nothing is
    there, NotAFileError when something else is (never taken for an absent file: a run would write through it)."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    require_regular(info.st_mode, path)
    return True


def open_file(path: str | Path, mode: str = "rb", errors: str | None = None, follow: bool = True) -> IO[Any]:
    """`path` opened (`mode`: "rb", "r" for UTF-8 text (`errors` as open's), "a" or "ab" to append, made when
    missing) when it is a regular file, else NotAFileError naming it (`follow` False: a symbolic link too). Looked at
    before opening and again on the open descriptor, which is opened without blocking: a FIFO, even one put there in
    between, never hangs the open or a read."""
    file_there(path, follow)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT if mode.startswith("a") else os.O_RDONLY
    try:
        descriptor = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW), 0o666)
    except OSError as exc:  # ELOOP: a link put there in between (`follow` False)
        if follow or exc.errno != errno.ELOOP:
            raise
        raise NotAFileError(None, "a symbolic link is there, not a file", str(path)) from None
    try:
        require_regular(os.fstat(descriptor).st_mode, path)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, mode, encoding=None if "b" in mode else "utf-8", errors=errors)
    except BaseException:
        with suppress(OSError):  # fdopen that failed (no memory) may have closed it: its error is the one to raise
            os.close(descriptor)
        raise
