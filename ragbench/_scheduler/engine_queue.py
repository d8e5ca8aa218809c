"""An engine's queue in the scheduler: its requests waiting, grouped by batch key (`Queued`), the answers it
owes, and the batch it sends (`Batch`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, NamedTuple

from .._values.llm_request import Request

if TYPE_CHECKING:
    from .._engines.base import Engine


class Queued(NamedTuple):
    request: Request
    key: str
    future: asyncio.Future[Any]
    queued_at: int  # the engine's batches dispatched when it was queued
    length: int  # `request.text_length()`, read when it was queued (by its caller, who gets what that raises)


Batch = list[tuple[Request, str, "asyncio.Future[Any]"]]  # a batch's requests, their keys and their callers' futures


class EngineQueue:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # queued requests by batch key (oldest first in each group), so that taking a batch does not
        # re-group every pending request (thousands when many examples each send dozens of calls)
        self.groups: dict[object, list[Queued]] = {}
        self.size = 0
        self.dispatched = 0  # batches taken from this queue
        # every request queued and not yet answered (queued, taken into a batch, sent, being delivered), so that
        # whatever the dispatcher raises, wherever it was, answers each of them with that error
        self.owed: dict[asyncio.Future[Any], str] = {}
        self.wake = asyncio.Event()
        self.task: asyncio.Task[Any] | None = None
        self.semaphore = asyncio.Semaphore(engine.max_concurrency)
