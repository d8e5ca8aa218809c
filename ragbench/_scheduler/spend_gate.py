"""What a run may spend, as the scheduler (ragbench._scheduler) asks it: `--max-cost`'s gate
(ragbench._cost.spending_cap) is one."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from .._values.llm_request import Request


class SpendGate(Protocol):
    """`admit` before a batch is sent (how many of its requests, from the first, may be sent now: the rest are
    held back and asked again once an answer was told, unless the gate stopped the run), `settle` each answer."""

    def admit(self, engine: Any, requests: list[Request]) -> int: ...

    def settle(self, engine: Any, request: Request, result: object) -> None: ...


class SpendWaits:
    """The scheduler's side of a `gate` (None: everything may be sent): how many of a batch it admits, each answer
    told to it, and a wait for the next one told (an answer, cheaper than its worst, may free what it holds back)."""

    def __init__(self, gate: SpendGate | None) -> None:
        self.gate = gate
        self._told: asyncio.Future[None] | None = None  # done when an answer is next told

    def admit(self, engine: Any, requests: list[Request]) -> int:
        return len(requests) if self.gate is None else self.gate.admit(engine, requests)

    def told(self, engine: Any, request: Request, result: object) -> None:
        """A call's answer (or an error: it will not come) told to the gate, and whoever waits on one woken."""
        if self.gate is not None:
            self.gate.settle(engine, request, result)
        if self._told is not None and not self._told.done():
            self._told.set_result(None)

    async def admitted(self, engine: Any, request: Request) -> None:
        """Returns once the gate admits `request` alone (to an engine that takes requests as they come)."""
        while not self.admit(engine, [request]):
            await self.next_told()

    async def next_told(self) -> None:
        """Returns once an answer is next told; never, once the gate stopped the run (its cancel ends the wait)."""
        if self._told is None or self._told.done():
            self._told = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._told)


Sent = tuple[Any, Request] | None  # a request an engine answered, and the engine: what the gate is told
