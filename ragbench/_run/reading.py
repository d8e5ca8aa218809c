"""The records of a run, read off the event loop: a task's stream is decompressed and parsed in a
thread, a few records at a time, shared by every example worker."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


READ_AT_ONCE = 8  # items read in one trip to the thread, at most (a run reads as many as it has workers, if more)


class RecordReader(Generic[T]):
    """`await reader.next()`: the next item of `items` (None at the end), read in a thread. Once `items` has
    ended, every worker asking is answered at once (each went to a thread for nothing, one after another).

    Every worker that asks while a trip to the thread is under way waits for it: a run reads as many items a trip as
    it has workers (`most`), so that its workers' next calls wait on one trip a round, not one in every eight
    (docs/performance.md, "Your own application")."""

    def __init__(self, items: Iterator[T], most: int = READ_AT_ONCE, seconds: float = 0.05) -> None:
        self._items, self._most, self._seconds = items, most, seconds
        self._lock = asyncio.Lock()
        self._read: deque[T] = deque()
        self._ended = False

    def _read_some(self) -> list[T]:
        """Up to `most` items, fewer when reading them takes longer than `seconds` (a large Task 3
        record is read alone, so its example starts at once; small ones start together)."""
        until = time.perf_counter() + self._seconds
        items: list[T] = []
        while len(items) < self._most and (not items or time.perf_counter() < until):
            item = next(self._items, None)
            if item is None:
                self._ended = True
                break
            items.append(item)
        return items

    async def next(self) -> T | None:
        async with self._lock:
            if not self._read and not self._ended:
                self._read.extend(await asyncio.to_thread(self._read_some))
            return self._read.popleft() if self._read else None
