"""One run per folder: an OS lock on `<run folder>/run.lock`.

`fcntl.flock` on the open file: the kernel releases it when the process ends, however it ends (kill -9
included), so a lock file a killed run left is stale by itself and the next run takes it over. The
file records who holds it (pid, host, start, command) for the message that refuses a second run; it is
never deleted (deleting a lock file lets two processes lock two different files), and is emptied
when its holder lets go. Two handles on one folder in one process exclude each other too.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import IO, Any

from ..errors import ConfigError

LOCK_FILE = "run.lock"


class RunLock:
    def __init__(self, folder: str | Path) -> None:
        self.path = Path(folder) / LOCK_FILE
        self._handle: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def refusal(self) -> str | None:
        """Why a run cannot use the folder now (another process holds it), or None. Creates nothing."""
        if self.held or not self.path.is_file():
            return None
        try:
            with self.path.open("r", encoding="utf-8", errors="replace") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return self._message(handle.read())
        except OSError:  # unreadable: the run's own writes will say why
            return None
        return None

    def acquire(self) -> None:
        """Hold the folder (creating it), or raise `ConfigError` naming the holder."""
        if self.held:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")  # not truncated before it is held
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            message = self._message(handle.read())
            handle.close()
            raise ConfigError(message) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": sys.argv}) + "\n")
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        try:
            handle.truncate(0)
        except OSError:  # a full or read-only disk: the lock goes with the handle all the same
            pass
        handle.close()

    def _message(self, recorded: str) -> str:
        folder = self.path.parent
        try:
            holder: dict[str, Any] = json.loads(recorded)
        except ValueError:
            holder = {}
        who = (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
               if holder else "a process that has not yet said who it is")
        if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int) \
                and not _alive(holder["pid"]):
            who += ", no longer running: a process it started still holds the lock; end that process"
        return (f"--output {folder}: another ragbench run is using this folder ({who}); wait for it to end, "
                "or choose another --output")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
