"""One run per folder: an OS lock on `<run folder>/run.lock`.

`fcntl.flock` on the open file: the kernel releases it when the process ends, however it ends (kill -9
included), so a lock file a killed run left is stale by itself and the next run takes it over. The
file records who holds it (pid, host, start, command) for the message that refuses a second run; it is
never deleted (deleting a lock file lets two processes lock two different files), and is emptied
when its holder lets go. Two handles on one folder in one process exclude each other too.

The lock file is opened without following a symbolic link and used only when it is a regular file with
no other name (`open_lock`): a `run.lock` that is a link (to a user's file), a hard link, a FIFO or a
folder is refused with one line naming it, never written through, never waited on.

A lock held by one process only, not by the processes it forks: `flock` belongs to the open file, which a
fork shares with the child (O_CLOEXEC drops it only at an exec), so a plugin's helper forked during a run
kept the folder locked after the run ended, and `--resume` was refused. A forked child closes its copy at
once (`_close_in_child`, an at-fork hook, for `os.fork` and multiprocessing's fork); `release` unlocks the
open file itself, for a child forked by C code (no at-fork hook runs there); and a run killed while such a
child lives has the child killed by its reaper (ragbench._run.models.reaper), or names it (`describe`). Locks keyed
to the process (POSIX record locks, which no fork inherits) were the alternative: two handles in one process
would no longer exclude each other, and closing any descriptor of the file drops the process's lock.

`holder()` tells, without taking it, whether the folder is held and by whom (the viewer shows a run as
running from it): it probes with a shared lock held for an instant, so `acquire` tries again for a
moment (PROBE_WAIT_SECONDS) before it refuses, and a probe never turns a run away.

The held file also tells whether the folder is still where the run put it (`check_in_place`): a folder moved
under a run keeps its lock file, which the kernel names at its new place.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import sys
import time
import weakref
from contextlib import suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .._errors import ConfigError
from .files import naming

if TYPE_CHECKING:  # the JSON types only: ragbench._types is a layer beside this one
    from .._values.json_values import JsonObject

LOCK_FILE = "run.lock"
PROBE_WAIT_SECONDS = 0.25  # how long `acquire` tries again on a lock held: past a probe's instant
_HELD: weakref.WeakSet[RunLock] = weakref.WeakSet()  # this process's, for a forked child to let go of: as
# process-wide as the descriptors a fork copies


class RunFolderMoved(FileNotFoundError):
    """The folder a run holds was moved (or removed) while the run wrote it: the run stops, and `fix` and `then`
    (read by the command line's one line) say where its saved work is and how to complete it."""

    def __init__(self, path: Path, now: Path | None) -> None:
        super().__init__(errno.ENOENT, "the run folder was moved or removed while the run wrote it", str(path))
        if now is None:
            self.fix = "it was removed, or this system cannot say where it went"
            self.then = "then run the same command with --resume --output set to where it is now, or run it again"
        else:
            self.fix = f"it is now {now}"
            self.then = f"then run the same command with --resume --output {now} (what finished is saved there)"


class RunLock:
    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / LOCK_FILE
        self._handle: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def holder(self) -> JsonObject | None:
        """Who holds the folder now, another process or handle: what it recorded (pid, host, started,
        command; {} before it has written that), or None when no one holds it. Creates nothing."""
        if self.held or not self.path.is_file():
            return None
        try:
            with open_lock(self.path, os.O_RDONLY) as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return _recorded(handle.read())
        except (OSError, ConfigError):  # unreadable, or not a lock file: `acquire` says why
            return None
        return None

    def refusal(self) -> str | None:
        """Why a run cannot use the folder now (its lock file is not one, another process holds it), or None.
        Creates nothing."""
        with suppress(FileNotFoundError):
            problem = not_a_lock(self.path, os.lstat(self.path))
            if problem:
                return problem
        holder = self.holder()
        if holder is not None:
            return self._message(holder)
        with suppress(OSError):  # held by no one: what it holds is a record a run left, or nothing
            with open_lock(self.path, os.O_RDONLY) as handle:
                return foreign_content(self.path, handle.read())
        return None

    def acquire(self) -> None:
        """Hold the folder (creating it), or raise `ConfigError` naming the holder."""
        if self.held:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open_lock(self.path, os.O_RDWR | os.O_CREAT)  # not truncated before it is held
        until = time.monotonic() + PROBE_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < until:  # perhaps a probe (`holder`), gone in an instant
                    time.sleep(0.01)
                    continue
                handle.seek(0)
                message = self._message(_recorded(handle.read()))
                handle.close()
                raise ConfigError(message) from None
        handle.seek(0)
        foreign = foreign_content(self.path, handle.read())
        if foreign:
            handle.close()
            raise ConfigError(foreign)
        try:
            with naming(self.path):  # a full disk's error names no file of its own
                handle.seek(0)
                handle.truncate()
                handle.write(
                    json.dumps(
                        {
                            "pid": os.getpid(),
                            "host": socket.gethostname(),
                            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                            "command": sys.argv,
                        }
                    )
                    + "\n"
                )
                handle.flush()
        except OSError:
            with suppress(OSError):  # the descriptor closes (and the lock goes) even when the last flush fails
                handle.close()
            raise
        self._handle = handle
        _HELD.add(self)

    def release(self) -> None:
        """Empty the record and unlock the open file: a copy a process forked by C code holds lets go too."""
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        _HELD.discard(self)
        try:
            handle.truncate(0)
        except OSError:  # a full or read-only disk: the lock goes with the handle all the same
            pass
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()

    def check_in_place(self) -> None:
        """Raise `RunFolderMoved` when the held lock file is no longer the one at `path` (its folder was moved or
        removed since it was taken). `from None`: what failed before (a file of the folder not found) follows
        from it, and the command line names this alone."""
        if self._handle is None:
            return
        held = os.fstat(self._handle.fileno())
        with suppress(OSError):
            here = os.stat(self.path)
            if (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino):
                return
        raise RunFolderMoved(self.path.parent, None if held.st_nlink == 0 else _folder_of(self._handle)) from None

    def _close_in_child(self) -> None:
        """In a forked child: close its copy of the lock file, which leaves the lock to the parent alone (and
        makes the child's `release` a no-op: the record is the parent's)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()

    def _message(self, holder: JsonObject) -> str:
        return (
            f"--output {self.path.parent}: another ragbench run is using this folder ({describe(holder)}); "
            "wait for it to end, or choose another --output"
        )


def _close_in_children() -> None:
    for lock in list(_HELD):
        lock._close_in_child()
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_children)


def _folder_of(handle: IO[str]) -> Path | None:
    """The folder of the open file `handle` as the kernel knows it now; None where this system cannot say (no
    /proc)."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{handle.fileno()}")).parent
    except OSError:
        return None


def open_lock(path: Path, flags: int) -> IO[str]:
    """The lock file at `path`, opened with `flags`, never through a symbolic link and never blocking on a
    FIFO; anything else than a lock file (`not_a_lock`) is a `ConfigError` naming it."""
    try:
        descriptor = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise ConfigError(not_a_lock(path, os.lstat(path))) from None
    problem = not_a_lock(path, os.fstat(descriptor))
    if problem:
        os.close(descriptor)
        raise ConfigError(problem)
    return os.fdopen(descriptor, "r+" if flags & os.O_RDWR else "r", encoding="utf-8", errors="replace")


def not_a_lock(path: Path, info: os.stat_result) -> str | None:
    """Why the file `info` describes (an `lstat`) cannot be the folder's lock file: a symbolic link, a
    FIFO, a folder, a hard link (a file with another name elsewhere); None for a regular file."""
    if stat.S_ISREG(info.st_mode) and info.st_nlink <= 1:  # 0: a file system that does not count links
        return None
    what = (
        f"is a symbolic link (to {os.readlink(path)})"
        if stat.S_ISLNK(info.st_mode)
        else "is a FIFO (named pipe)"
        if stat.S_ISFIFO(info.st_mode)
        else "is a folder"
        if stat.S_ISDIR(info.st_mode)
        else f"is a hard link (one of {info.st_nlink} names of one file)"
        if stat.S_ISREG(info.st_mode)
        else "is not a regular file"
    )
    return _not_ours(path, what)


def foreign_content(path: Path, text: str) -> str | None:
    """Why a lock file no one holds, holding `text`, is not one a run left (empty, or a holder's record):
    a file of the user's by that name, never emptied."""
    return None if not text.strip() or "pid" in _recorded(text) else _not_ours(path, "holds no ragbench run's record")


def _not_ours(path: Path, what: str) -> str:
    return (
        f"--output {path.parent}: {path} {what}, not the lock file ragbench makes, and ragbench never writes "
        "through it: remove it (the run makes its own), or choose another --output"
    )


def describe(holder: JsonObject) -> str:
    """`pid 4242 on host, started 2026-11-24T10:00:00+0000` of what a holder recorded (`RunLock.holder`)."""
    if not holder:
        return "a process that has not yet said who it is"
    who = f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
    if (
        holder.get("host") == socket.gethostname()
        and isinstance(pid := holder.get("pid"), int)
        and not process_alive(pid)
    ):
        who += ", no longer running: a process it started still holds the lock; end that process"
    return who


def _recorded(text: str) -> JsonObject:
    try:
        holder = json.loads(text)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def process_alive(pid: int) -> bool:
    """Whether a process `pid` runs on this host (one of another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
