"""A batch of the scheduler's requests answered through a vendor's batch API (`--model-arg batch=true` on the
`openai` and `anthropic` engines; the vendor's side: hosted/batch_openai.py, hosted/batch_anthropic.py).

The scheduler hands a `batch=true` engine its pooled requests as it hands a local model its batches (the engine is
not `concurrent`): each batch of the scheduler becomes one vendor batch per endpoint, and a multi-step system's
rounds successive batches. A request is known by its custom id (batch_store.custom_id); before anything is sent,
each request is looked up in the run folder's batch records (hosted/batch_store.py): one a batch of an earlier attempt
answered is answered from that batch's result lines, one a batch still out holds waits on that batch, polled
again (a killed run's batches are never submitted twice), and the rest are sent in a new batch, recorded at once,
before the first poll. Every batch out is polled each `batch_poll_s` seconds until it has ended (OpenAI:
completed, failed, expired or cancelled; Anthropic: ended), its state on the progress bar (hosted/batch_board.py); then
its result lines are recorded and read. A request the vendor failed on its side (HTTP 5xx or 429 in its line),
expired, cancelled or left out, or whose line is unreadable, is sent again in the next batch, counted (`resent`),
up to `batch_retries` times more; one the vendor refused as malformed (HTTP 4xx) fails at once (a RequestError),
and so does every request of a batch the vendor failed as a whole (its input file refused), naming why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..._values.llm_calls import EngineError, Request, Response, Sampling
from .batch_board import BOARD
from .batch_store import BatchStore, Submitted, custom_id


@dataclass(frozen=True)
class Resend:
    """A request the vendor did not answer on its side (failed, expired, cancelled, left out): sent again."""

    why: str


@dataclass(frozen=True)
class Polled:
    """A batch's state as the vendor reports it; `failed`: why the vendor failed the batch as a whole."""

    state: str
    done: int
    total: int
    ended: bool
    failed: str | None = None


Outcome = Response | EngineError | Resend


class BatchingEngine(Protocol):
    """What the batch loop and the vendors' sides use of the engine (stainless_engine.StainlessEngine, which
    imports them): its options, its SDK and client, and its one-line failures."""

    model: str
    api_key_env: str
    extra_body: dict[str, Any]
    batch_poll_s: float
    batch_retries: int

    @property
    def sdk(self) -> Any: ...

    @property
    def unreachable(self) -> type[Exception]: ...

    def call_identity(self, sampling: Sampling) -> str: ...

    def _new_client(self) -> Any: ...

    async def _close_client(self, client: Any) -> None: ...

    def _api_failure(self, exc: Exception, used: int, request: Request) -> EngineError: ...

    def _failure(self, what: str, attempts: int, error: type[EngineError] = EngineError) -> EngineError: ...

    def _status_failure(self, status: int, message: str, attempts: int, hint: str = "") -> EngineError: ...

    def _status_hint(self, request: Request, what: str) -> str: ...

    def _excerpt(self, text: str) -> str: ...


class Vendor(Protocol):
    """One vendor's batch API over the engine's SDK client."""

    def line(self, request: Request, custom: str) -> tuple[str, dict[str, Any]]:
        """(endpoint, the batch's input line for `request`); RequestError where it cannot be sent."""

    async def create(self, client: Any, endpoint: str, lines: list[dict[str, Any]]) -> str:
        """Upload and create a batch of `lines`: its id."""

    async def poll(self, client: Any, batch_id: str) -> Polled: ...

    async def results(self, client: Any, batch_id: str) -> list[dict[str, Any]]:
        """An ended batch's result lines (answers and errors), each with its `custom_id`."""

    def outcome(self, line: dict[str, Any], request: Request) -> Outcome:
        """What one result line says of `request` (ValueError, TypeError, KeyError: unreadable, sent again)."""


@dataclass
class BatchCounts:
    """The engine's batch figures (results.json's `cost.engine` for the run's model)."""

    batches: int = 0  # batches submitted
    resumed: int = 0  # batches of an earlier attempt polled again instead of submitted
    sent: int = 0  # requests sent in batches, each try counted
    resent: int = 0  # of them, sent again after the vendor failed, expired or left them out
    failed: int = 0  # requests that failed: refused, in a failed batch, or after their last try

    def to_dict(self) -> dict[str, int]:
        return {
            "batches_submitted": self.batches,
            "batches_resumed": self.resumed,
            "batch_requests_sent": self.sent,
            "batch_requests_resent": self.resent,
            "batch_requests_failed": self.failed,
        }


class BatchRun:
    """One scheduler batch of `engine` answered through `vendor`, with the engine's `store` and `counts`."""

    def __init__(self, engine: BatchingEngine, vendor: Vendor, store: BatchStore, counts: BatchCounts) -> None:
        self.engine, self.vendor, self.store, self.counts = engine, vendor, store, counts
        self.polled: set[str] = set()

    async def answer(self, requests: Sequence[Request]) -> list[Response | EngineError]:
        engine = self.engine
        client = engine._new_client()
        try:
            return await self._answer(client, requests)
        except (engine.sdk.APIError, engine.unreachable) as exc:
            raise engine._api_failure(exc, 0, requests[0]) from None
        finally:
            await engine._close_client(client)

    async def _answer(self, client: Any, requests: Sequence[Request]) -> list[Response | EngineError]:
        engine = self.engine
        customs = [custom_id(r.cache_key(engine.call_identity(r.sampling))) for r in requests]
        answers: dict[str, Response | EngineError] = {}
        asked = dict(zip(customs, requests))  # one request of each custom id (the scheduler sends no two alike)
        while len(answers) < len(asked):
            send: list[str] = []
            waiting: dict[str, Submitted] = {}
            for custom, request in asked.items():
                if custom in answers:
                    continue
                batch = self.store.latest(custom)
                if batch is None:
                    send.append(custom)
                elif not batch.ended:
                    waiting[batch.batch_id] = batch
                else:
                    outcome = self._read(batch, custom, request)
                    if not isinstance(outcome, Resend):
                        answers[custom] = outcome
                        self.counts.failed += isinstance(outcome, EngineError)
                    elif (tries := self.store.tries(custom)) > engine.batch_retries:
                        answers[custom] = engine._failure(f"batch request not answered: {outcome.why}", tries)
                        self.counts.failed += 1
                    else:
                        send.append(custom)
                        self.counts.resent += 1
            for batch in await self._submit(client, send, asked, answers):
                waiting[batch.batch_id] = batch
            await asyncio.gather(*(self._until_ended(client, batch) for batch in waiting.values()))
        return [answers[custom] for custom in customs]

    async def _submit(
        self, client: Any, send: list[str], asked: dict[str, Request], answers: dict[str, Response | EngineError]
    ) -> list[Submitted]:
        """New batches (one per endpoint) of the requests `send`, each recorded once the vendor has created it;
        a request that cannot be sent is answered with why."""
        by_endpoint: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for custom in send:
            try:
                endpoint, line = self.vendor.line(asked[custom], custom)
            except EngineError as exc:
                answers[custom] = exc
                self.counts.failed += 1
                continue
            by_endpoint.setdefault(endpoint, []).append((custom, line))
        out = []
        for endpoint, lines in by_endpoint.items():
            batch_id = await self.vendor.create(client, endpoint, [line for _, line in lines])
            out.append(self.store.submitted(batch_id, endpoint, [custom for custom, _ in lines]))
            BOARD.show(batch_id, "submitted", 0, len(lines))
            self.counts.batches += 1
            self.counts.sent += len(lines)
        return out

    async def _until_ended(self, client: Any, batch: Submitted) -> None:
        """Poll `batch` until it has ended, then record its result lines."""
        if batch.resumed and batch.batch_id not in self.polled:
            self.counts.resumed += 1
        self.polled.add(batch.batch_id)
        try:
            while True:
                polled = await self.vendor.poll(client, batch.batch_id)
                BOARD.show(batch.batch_id, polled.state, polled.done, polled.total)
                if polled.ended:
                    break
                await asyncio.sleep(self.engine.batch_poll_s)
            lines = [] if polled.failed is not None else await self.vendor.results(client, batch.batch_id)
            self.store.ended(batch, lines, polled.failed)
        finally:
            BOARD.drop(batch.batch_id)

    def _read(self, batch: Submitted, custom: str, request: Request) -> Outcome:
        assert batch.results is not None
        if batch.failed is not None:
            return self.engine._failure(f"batch {batch.batch_id} failed: {batch.failed}", 1)
        line = batch.results.get(custom)
        if line is None:
            return Resend(f"batch {batch.batch_id} ended without it")
        try:
            return self.vendor.outcome(line, request)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return Resend(f"unreadable result in batch {batch.batch_id} ({type(exc).__name__}: {exc})")
