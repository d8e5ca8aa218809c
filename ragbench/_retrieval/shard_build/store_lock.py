"""One driver at a time builds into an object store's INDEX/shards-S: it holds the lock object INDEX/shards-S.lock,
made with a conditional put (`locations.create_object`, If-None-Match: *: the store refuses it where the object
exists, so of two drivers putting it at once one alone makes it), from before it changes anything in the store to
the build's end, whether the build completed or failed. The object records its holder (host, pid, start, a token
of its own); a second driver is refused in one line naming the lock object, its holder and the fix. A driver killed
outright leaves it behind: the next one is refused all the same, told where the holder ran on this host and its
process is gone (a stale lock); removing the object is the fix once the holder is gone, wherever it ran.

A local build's lock is the kernel's, on its building folder (`state.BuildFolder`).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from ..._errors import ConfigError
from ..._storage.locations import create_object, read_object, remove_object
from ..._storage.run_lock import process_alive

LOCK_SUFFIX = ".lock"
ATTEMPTS = 5  # a lock found gone when its holder was read (its build just ended): put again


@contextmanager
def held_lock(url: str, out: str) -> Iterator[None]:
    """The lock object `url` of a build into `out` held while the block runs (module docstring): a ConfigError
    naming its holder where another driver holds it; removed at the end (where it still holds this driver's token:
    never another's). A lock that cannot be removed after the block failed does not hide why it failed."""
    token = secrets.token_hex(8)
    mine = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    for _ in range(ATTEMPTS):
        if create_object(url, json.dumps({**mine, "token": token}).encode()):
            break
        if (held := read_object(url)) is not None:
            raise ConfigError(refusal(url, out, holder(held)))
    else:
        raise ConfigError(f"--out {out}: {url} keeps being taken and let go by other drivers; run the command again")
    try:
        yield
    except BaseException:
        with suppress(ConfigError):
            released(url, token)
        raise
    released(url, token)


def released(url: str, token: str) -> None:
    """The lock object `url` removed where it holds `token` (another's, put after its removal, stays)."""
    held = read_object(url)
    if held is not None and holder(held).get("token") == token:
        remove_object(url)


def holder(held: bytes) -> dict[str, Any]:
    """What a lock object records (empty where it is not a record a driver put)."""
    try:
        record = json.loads(held)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def refusal(url: str, out: str, held: dict[str, Any]) -> str:
    """The line refusing a second driver: the lock object, who holds it, the fix."""
    pid, host, started = held.get("pid", "?"), held.get("host", "?"), held.get("started", "?")
    if host == socket.gethostname() and isinstance(pid, int) and not process_alive(pid):
        return (
            f"--out {out}: {url} is a stale lock: the shard build that took it (pid {pid} on this host, {host}, "
            f"started {started}) is gone; remove {url}, then run the command again"
        )
    who = f"pid {pid} on {host}, started {started}" if held else "a holder that is not a ragbench build"
    return (
        f"--out {out}: another ragbench shard build is writing it ({url} is held by {who}); wait for it to end, or, "
        f"once that process is gone, remove {url} and run the command again"
    )
