"""One driver at a time builds into an object store's INDEX/shards-S: it holds the lock object INDEX/shards-S.lock
from before it changes anything in the store to the build's end, whether the build completed or failed, as a lease.

The lock is made by a conditional put (If-None-Match: *: of two drivers putting it at once one alone makes it) and
records its holder (host, pid, start, a token of its own, its lease in seconds, how many times it renewed it). A
thread of the holder renews it every third of the lease ($RAGBENCH_STORE_LOCK_LEASE, default 180 s), writing it
again on the condition that it is still the version it wrote (If-Match: its ETag), so it never writes over another
driver's; the driver confirms it so at each step and before it publishes (`Lease.confirm`): a driver whose lock
another took over stops there, in one line. A second driver is refused in one line naming the lock, its holder and
the fix, unless the lock is stale: not renewed for longer than its lease, by the store's clock (the age the store
gives, never a node's clock: a node whose clock is off cannot take a live lock), or held on this host by a process
that is gone. A stale lock is taken over by writing it over on the condition that it is the version judged stale
(If-Match), so of two drivers taking it over at once one alone does; the other, refused by the store (412, or 409
where their writes met), reads it again and is refused as by a live lock. At the end the holder removes it on the
same condition (never another's). An object at the lock's name that no ragbench driver wrote is never taken over.

A local build's lock is the kernel's, on its building folder (`state.BuildFolder`).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, TypedDict

from ...._errors import ConfigError
from ...._storage.conditional_objects import created, read_with_age, removed_if, replaced
from ...._storage.run_lock import process_alive
from ...._values.environment import seconds_in_environment

if TYPE_CHECKING:
    from ...._values.json_values import JsonObject

LOCK_SUFFIX = ".lock"
LEASE_VARIABLE = "RAGBENCH_STORE_LOCK_LEASE"
DEFAULT_LEASE_SECONDS = 180.0
ATTEMPTS = 5  # a lock found gone, or taken over by another, as it was read: put again
log = logging.getLogger(__name__)


class _LockFields(TypedDict):
    host: str
    pid: int
    started: str
    token: str  # this driver's, told apart from another's on the same host and pid
    lease: float  # seconds a holder that stops renewing keeps it
    renewals: int


class LockRecord(_LockFields, total=False):
    """What a driver writes into the lock object it holds (read back by another driver as `holder`'s JSON)."""

    renewed: str  # when it was last renewed (none before the first renewal)


class Lease:
    """The lock object `url` this driver holds (its `record`, the store's ETag of it), renewed by a thread of its
    own every third of `record["lease"]` seconds until `release`."""

    def __init__(self, url: str, out: str, record: LockRecord, etag: str) -> None:
        self.url, self.out, self.record, self.etag = url, out, record, etag
        self.lost = False
        self.guard = threading.Lock()  # one renewal at a time: the thread's, or `confirm`'s
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.renewing, name=f"renewing {url}", daemon=True)
        self.thread.start()

    def confirm(self) -> None:
        """The lock renewed now; a ConfigError of one line where another driver took it over (or it was removed)."""
        with self.guard:
            if not self.lost:
                renewed: LockRecord = {**self.record, "renewals": self.record["renewals"] + 1, "renewed": now()}
                etag = replaced(self.url, json.dumps(renewed).encode(), self.etag)
                self.lost = etag is None
                if etag is not None:
                    self.record, self.etag = renewed, etag
            if self.lost:
                raise ConfigError(self.taken_line())

    def renewing(self) -> None:
        """Renewals until `release` or the lock is lost (a store that fails once is asked again next time)."""
        while not self.stopped.wait(self.record["lease"] / 3):
            with suppress(ConfigError):
                self.confirm()
            if self.lost:
                return

    def release(self) -> None:
        """Renewals stopped; the lock removed where it is still the version this driver last wrote: read first, as a
        store that ignores If-Match on a delete would delete another driver's lock that replaced it."""
        self.stopped.set()
        self.thread.join()
        if not self.lost and (held := read_with_age(self.url)) is not None and held.etag == self.etag:
            removed_if(self.url, self.etag)

    def taken_line(self) -> str:
        held = read_with_age(self.url)
        now = f"held by {who(holder(held.data))}" if held is not None else "removed"
        return (
            f"--out {self.out}: this build lost its lock: {self.url} was taken over by another driver (it is now "
            f"{now}), not renewed within its lease of {self.record['lease']:g} s; stopped so as not to write beside "
            "it: run the command again once that build has ended"
        )


@contextmanager
def held_lock(url: str, out: str) -> Iterator[Lease]:
    """The lock object `url` of a build into `out` held while the block runs (module docstring): a ConfigError
    naming its holder where another driver holds it; removed at the end where it is still this driver's. A lock
    that cannot be removed after the block failed does not hide why it failed."""
    record: LockRecord = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": now(),
        "token": secrets.token_hex(8),
        "lease": seconds_in_environment(LEASE_VARIABLE, DEFAULT_LEASE_SECONDS),
        "renewals": 0,
    }
    lease = Lease(url, out, record, taken(url, out, record))
    try:
        yield lease
    except BaseException:
        with suppress(ConfigError):
            lease.release()
        raise
    lease.release()


def taken(url: str, out: str, record: LockRecord) -> str:
    """The lock `url` made or taken over for `record` (its ETag); a ConfigError where another driver holds it."""
    data = json.dumps(record).encode()
    for _ in range(ATTEMPTS):
        if (etag := created(url, data)) is not None:
            return etag
        if (held := read_with_age(url)) is None:  # let go meanwhile: put again
            continue
        found = holder(held.data)
        if (why := stale(found, held.age, record["lease"])) is None:
            raise ConfigError(refusal(url, out, found))
        if (etag := replaced(url, data, held.etag)) is not None:
            log.warning("--out %s: took over the stale lock %s (%s: %s)", out, url, who(found), why)
            return etag
    raise ConfigError(
        f"--out {out}: {url} keeps being taken and let go by other drivers as this one reads it; run the command again"
    )


def stale(found: JsonObject, age: float, lease: float) -> str | None:
    """Why the lock `found` (a record a driver put, `age` seconds old by the store's clock) is stale; None where it
    is not, or is not a driver's record."""
    pid, host = found.get("pid"), found.get("host")
    if "token" not in found:
        return None
    if host == socket.gethostname() and isinstance(pid, int) and not process_alive(pid):
        return "its process on this host is gone"
    recorded = found.get("lease")
    lease = float(recorded) if isinstance(recorded, (int, float)) and recorded > 0 else lease
    return f"not renewed for {age:g} s, its lease {lease:g} s" if age > lease else None


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def holder(held: bytes) -> JsonObject:
    """What a lock object records (empty where it is not a record a driver put)."""
    try:
        record = json.loads(held)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def who(held: JsonObject) -> str:
    """The holder of a lock, named: its process, host and start."""
    if not held:
        return "a holder that is not a ragbench build"
    return f"pid {held.get('pid', '?')} on {held.get('host', '?')}, started {held.get('started', '?')}"


def refusal(url: str, out: str, held: JsonObject) -> str:
    """The line refusing a second driver: the lock object, who holds it, the fix."""
    if not held:
        fix = f"move {url} away (ragbench never takes it over) and run the command again"
    else:
        lease = held.get("lease")
        fix = (
            "wait for it to end; a holder that is gone leaves it stale once not renewed for its lease "
            f"({lease:g} s), and the command run again then takes it over"
            if isinstance(lease, (int, float))
            else "wait for it to end"
        )
    return f"--out {out}: another ragbench shard build is writing it ({url} is held by {who(held)}); {fix}"
