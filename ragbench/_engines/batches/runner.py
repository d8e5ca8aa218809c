"""A batch of the scheduler's requests answered through a vendor's batch API (`--model-arg batch=true` on the
`openai` and `anthropic` engines; the vendor's side: hosted/batch_openai.py, hosted/batch_anthropic.py).

The scheduler hands a `batch=true` engine its pooled requests as it hands a local model its batches (the engine is
not `concurrent`): each batch of the scheduler becomes one vendor batch per endpoint, cut where it would pass the
vendor's limits on requests or bytes (batches/cuts.py), and a multi-step system's rounds successive batches. A request is known by its custom id (store.custom_id); before anything is sent,
each request is looked up in the run folder's batch records (batches/store.py): one a batch of an earlier attempt
answered is answered from that batch's result lines, one a batch still out holds waits on that batch, polled
again at the server that holds it (a killed run's batches are never submitted twice), and the rest are sent in a
new batch, its intent recorded before the vendor is asked and its id at once, before the first poll. An intent an
earlier attempt left without an id (killed while the vendor created the batch) is resolved first (`_resolve`): the
batch the vendor holds for it is adopted (OpenAI: the one tagged with it; Anthropic, whose batches carry no tag:
one created since, of as many requests, whose results hold only its custom ids), else its requests are sent.
Every batch out is polled each `batch_poll_s` seconds until it has ended (OpenAI: completed, failed, expired or
cancelled; Anthropic: ended), its state on the run's progress bar (the shelf's board: batches/board.py); then its result lines are
recorded and read (batches/results.py: a damaged line costs only itself, and is named in a warning). A request
the vendor failed on its side (HTTP 5xx or 429 in its line), expired, cancelled or left out, whose line is
unreadable, or whose custom id is on two lines (neither is taken), is sent again in the next batch, counted
(`resent`), up to `batch_retries` times more in the attempt (a try is one of the attempt's own batches: a resumed run
tries again what an earlier attempt could not get answered); one the vendor refused as malformed (HTTP 4xx) fails at
once (a RequestError), and so does every request of a batch the vendor failed as a whole (its input file refused),
naming why (sent again by a resumed run). A batch the vendor says it does not know
(HTTP 404 while polling it: another organisation's key, or deleted) fails its requests in one line naming the
batch and the fix, and is not sent again: it may still run, and be paid, under the key that created it. A batch
whose results file alone is not found (HTTP 404 for the file: `ResultsMissing`) answered nothing: the vendor's
failure, its requests sent again as those it left out.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from typing import Any

from ..._values.billed import Billed
from ..._values.engine_errors import EngineError, RequestError
from ..._values.json_values import JsonObject
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..retries import backoff, retried_status
from .cuts import cut, megabytes
from .interface import BatchingEngine, BatchLimits, BatchVendor, Outcome, Polled, Resend, ResultsMissing
from .results import read_result_lines
from .shelf import BatchShelf
from .store import Submitted

log = logging.getLogger(__name__)


class BatchRun:
    """One scheduler batch of `engine` answered through its vendor, with the batches of its `shelf`."""

    def __init__(self, engine: BatchingEngine, shelf: BatchShelf[BatchingEngine]) -> None:
        self.engine, self.shelf, self.vendor = engine, shelf, engine.batch_vendor()
        self.store, self.counts, self.board = shelf.store(), shelf.counts, shelf.board
        self.polled: set[tuple[str, str]] = set()  # (base URL, batch id): ids are the server's own
        self.sides: dict[str, tuple[BatchingEngine, BatchVendor, Any]] = {}  # by base URL: engine, vendor, client
        self.billed: dict[str, Billed] = {}  # by custom id: answers the vendor billed that were not taken

    async def answer(self, requests: Sequence[Request]) -> list[Response | EngineError]:
        engine = self.engine
        try:
            return await self._answer(requests)
        except engine.call_errors as exc:
            raise engine.api_failure(exc, 0, requests[0]) from None
        finally:
            for holder, _, client in self.sides.values():
                await holder.close_client(client)

    def _side(self, base_url: str) -> tuple[BatchingEngine, BatchVendor, Any]:
        """The engine, vendor and client of the server at `base_url`; one line where the run names no such one."""
        if base_url not in self.sides:
            holder = self.shelf.engines.get(base_url)
            if holder is None:
                raise self.engine.failure(
                    f"a batch an earlier attempt recorded is held at {base_url}, which this run does not name: "
                    "give it among the --base-url values to poll it there",
                    1,
                )
            self.sides[base_url] = (holder, holder.batch_vendor(), holder.open_client())
        return self.sides[base_url]

    async def _answer(self, requests: Sequence[Request]) -> list[Response | EngineError]:
        engine, lead = self.engine, self.shelf.lead
        customs = [self.store.custom(r.cache_key(lead.call_identity(r.sampling))) for r in requests]
        answers: dict[str, Response | EngineError] = {}
        asked = dict(zip(customs, requests))  # one request of each custom id (the scheduler sends no two alike)
        with self.shelf.resolving:
            for intent in self.store.unresolved(set(asked)):
                self._fail(intent, await self._resolve(intent), asked, answers)
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
                    waiting[batch.intent] = batch
                else:
                    outcome = self._read(batch, custom, request)
                    if not isinstance(outcome, Resend):
                        answers[custom] = outcome
                        self.counts.failed += isinstance(outcome, EngineError)
                    elif (tries := self.store.tries(custom)) > engine.batch_retries:
                        answers[custom] = engine.failure(f"batch request not answered: {outcome.why}", tries)
                        self.counts.failed += 1
                    else:
                        send.append(custom)
                        self.counts.resent += 1
            for batch in await self._submit(send, asked, answers):
                if not batch.ended:  # (a batch adopted after its creation's answer was lost may have)
                    waiting[batch.intent] = batch
            out = list(waiting.values())
            for batch, lost in zip(out, await asyncio.gather(*(self._until_ended(batch) for batch in out))):
                self._fail(batch, lost, asked, answers)
        # the call's cost is what the vendor billed for it: the answers not taken too, whether it was answered or failed
        return [self.billed.get(custom, Billed()).onto(answers[custom]) for custom in customs]

    def _fail(
        self,
        batch: Submitted,
        error: EngineError | None,
        asked: dict[str, Request],
        answers: dict[str, Response | EngineError],
    ) -> None:
        """Answer the requests asked of `batch` with `error` (None: nothing failed)."""
        if error is None:
            return
        for custom in batch.custom_ids:
            if custom in asked and custom not in answers:
                answers[custom] = error
                self.counts.failed += 1

    async def _resolve(self, intent: Submitted) -> EngineError | None:
        """Adopt the batch the vendor created for `intent` (its id never recorded); where it holds none, forget the
        intent: its requests are sent."""
        try:
            _, vendor, client = self._side(intent.base_url)
        except EngineError as exc:
            return exc
        for batch_id, sure in await vendor.candidates(client, intent, self.store.known(intent.base_url)):
            if not sure:  # its custom ids are salted with the folder's key: one of them makes the batch ours
                polled, lines = await self._ended(vendor, client, batch_id)
                ids = read_result_lines(lines).ids
                if not ids or not ids <= set(intent.custom_ids):
                    continue
            self.store.created(intent, batch_id)
            self.counts.adopted += 1
            if intent.resumed:  # an earlier attempt's batch, polled (here, or where it is waited on)
                self.counts.resumed += 1
                self.polled.add((intent.base_url, batch_id))
            if not sure:
                self._record_ended(intent, lines, polled.failed)
            return None
        await self._forget(vendor, client, intent)
        return None

    async def _forget(self, vendor: BatchVendor, client: Any, intent: Submitted) -> None:
        """Forget an intent the vendor holds no batch for, deleting the input file uploaded for it (and saying so):
        its requests are sent again, in a new file."""
        if intent.uploaded is not None:
            try:
                deleted = await vendor.discard(client, intent.uploaded)
            except self.engine.call_errors as exc:
                log.warning(
                    "%s: could not delete input file %s uploaded for a batch the vendor never created (%s): delete it "
                    "with the vendor's Files API or dashboard",
                    self.engine.model, intent.uploaded, self.engine.excerpt(str(exc)),
                )  # fmt: skip
            else:
                self.counts.files_deleted += deleted
                log.warning(
                    "%s: %s input file %s, uploaded for a batch the vendor never created; its %d requests are sent "
                    "again", self.engine.model, "deleted" if deleted else "the vendor no longer holds",
                    intent.uploaded, len(intent.custom_ids),
                )  # fmt: skip
        self.store.forget(intent)

    async def _submit(
        self, send: list[str], asked: dict[str, Request], answers: dict[str, Response | EngineError]
    ) -> list[Submitted]:
        """New batches of the requests `send` (per endpoint, cut within the vendor's limits: batches/cuts.py), each
        recorded before the vendor is asked to create it and again once it has; a request that cannot be sent (or
        that alone passes the bytes of one batch) is answered with why."""
        engine = self.engine
        _, vendor, client = self._side(engine.base_url)
        by_endpoint: dict[str, list[tuple[str, JsonObject]]] = {}
        for custom in send:
            try:
                endpoint, line = vendor.line(asked[custom], custom)
            except EngineError as exc:
                answers[custom] = exc
                self.counts.failed += 1
                continue
            by_endpoint.setdefault(endpoint, []).append((custom, line))
        limits: BatchLimits | None = getattr(vendor, "limits", None)  # a plugin's vendor may give none
        out = []
        for endpoint, lines in by_endpoint.items():
            pieces = cut(lines, limits)
            for custom, size in pieces.too_large:
                assert limits is not None
                answers[custom] = engine.failure(
                    f"the request is {megabytes(size)} as the vendor receives it, over the "
                    f"{megabytes(limits.bytes)} one batch may hold ({limits.docs}): send it smaller",
                    1,
                    RequestError,
                )
                self.counts.failed += 1
            out += [await self._create(vendor, client, endpoint, piece) for piece in pieces.batches]
        return out

    async def _create(
        self, vendor: BatchVendor, client: Any, endpoint: str, lines: list[tuple[str, JsonObject]]
    ) -> Submitted:
        """The batch of `lines` (custom id, input line), its intent recorded before each try. The vendor does not retry
        the creation (after an answer lost, its retry would create a second batch, paid twice): a try that failed
        as an SDK would retry it (connection lost, timeout, HTTP 408/409/429/5xx) is resolved, and tried again
        only where the vendor holds no batch for it, up to `max_retries` times."""
        engine, customs = self.engine, [custom for custom, _ in lines]
        tries = 0
        while True:
            batch = self.store.intend(engine.base_url, endpoint, customs)
            try:
                batch_id = await vendor.create(
                    client,
                    endpoint,
                    [line for _, line in lines],
                    batch.intent,
                    functools.partial(self.store.upload, batch),
                )
            except engine.call_errors as exc:
                status = getattr(exc, "status_code", None)
                if isinstance(exc, engine.unreachable) or (status is not None and not retried_status(status)):
                    await self._forget(vendor, client, batch)  # refused, or never sent: the vendor holds no batch
                    raise
                if tries >= engine.max_retries:
                    raise  # the intent stays: resolved when its requests are asked again
                tries += 1
                await self._resolve(batch)
                if batch.batch_id is None:
                    await asyncio.sleep(backoff(tries - 1, engine.backoff_base, engine.backoff_max))
                    continue
            else:
                self.store.created(batch, batch_id)
            finally:
                batch.creating = False  # failed: resolved on the next ask of its requests, if not here
            if not batch.ended:  # (one adopted here may have: it is not shown as out)
                self.board.show(str(batch.batch_id), "submitted", 0, len(lines))
            self.counts.batches += 1
            self.counts.sent += len(lines)
            return batch

    async def _until_ended(self, batch: Submitted) -> EngineError | None:
        """Poll `batch` at the server holding it until it has ended, then record its result lines; the error of its
        requests where the server cannot poll it."""
        assert batch.batch_id is not None  # every intent asked was resolved
        if batch.resumed and (batch.base_url, batch.batch_id) not in self.polled:
            self.counts.resumed += 1
        self.polled.add((batch.base_url, batch.batch_id))
        try:
            holder, vendor, client = self._side(batch.base_url)
        except EngineError as exc:
            return exc
        try:
            polled, lines = await self._ended(vendor, client, batch.batch_id)
        except holder.not_found as exc:
            return holder.failure(
                f"batch {batch.batch_id} is unknown to the vendor (HTTP 404: {holder.excerpt(str(getattr(exc, 'message', exc)))}): "
                "the API key is not of the organisation or project that created it, or the batch was deleted; "
                f"resume with that key, or move {self.store.record_path(batch)} away to send its "
                f"{len(batch.custom_ids)} requests again (paid again)",
                1,
            )
        self._record_ended(batch, lines, polled.failed)
        return None

    def _record_ended(self, batch: Submitted, lines: list[str], failed: str | None) -> None:
        """Record `batch`'s result lines, warning of those not taken (their requests are sent again)."""
        self.store.ended(batch, lines, failed)
        results = batch.results
        assert results is not None
        faults = [f"{len(results.repeated)} custom ids on more than one line"] if results.repeated else []
        if results.unreadable:
            unreadable = self.engine.excerpt("; ".join(results.unreadable))
            faults.insert(0, f"{len(results.unreadable)} of its {results.count} result lines unreadable ({unreadable})")
        if faults:
            log.warning(
                "%s: batch %s: %s: the requests no line answered are sent again",
                self.engine.model, batch.batch_id, ", ".join(faults),
            )  # fmt: skip

    async def _ended(self, vendor: BatchVendor, client: Any, batch_id: str) -> tuple[Polled, list[str]]:
        """Poll batch `batch_id` until it has ended: its last state and its result lines."""
        try:
            while True:
                polled = await vendor.poll(client, batch_id)
                self.board.show(batch_id, polled.state, polled.done, polled.total)
                if polled.ended:
                    break
                await asyncio.sleep(self.engine.batch_poll_s)
            if polled.failed is not None:
                return polled, []
            try:
                return polled, await vendor.results(client, batch_id)
            except ResultsMissing as exc:
                log.warning(
                    "%s: batch %s ended, but %s: the vendor's failure, its requests are sent again",
                    self.engine.model, batch_id, self.engine.excerpt(str(exc)),
                )  # fmt: skip
                return polled, []
        finally:
            self.board.drop(batch_id)

    def _read(self, batch: Submitted, custom: str, request: Request) -> Outcome:
        """What `batch`'s results say of `custom`: an answer, the request's failure, or the vendor's (sent again)."""
        results, engine = batch.results, self.engine
        assert results is not None
        if batch.failed is not None:
            why = f"batch {batch.batch_id} failed: {batch.failed}"
            return engine.failure(why, 1) if batch.read_here else Resend(why)  # an earlier attempt's: tried again
        if custom in results.repeated:
            for each in results.repeated_lines[custom]:
                self._bill(custom, each)
            return Resend(
                f"batch {batch.batch_id}'s results hold {results.repeated[custom]} lines of its custom id: neither is "
                "taken"
            )
        line = results.lines.get(custom)
        if line is None:
            unreadable = f" ({len(results.unreadable)} of its result lines unreadable)" if results.unreadable else ""
            return Resend(f"batch {batch.batch_id} ended without it{unreadable}")
        try:
            return self.vendor.outcome(line, request)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            self._bill(custom, line)  # unreadable, but billed where its usage reads
            why = engine.excerpt(f"{type(exc).__name__}: {exc}")
            return Resend(f"unreadable result in batch {batch.batch_id} ({why})")

    def _bill(self, custom: str, line: JsonObject) -> None:
        """The tokens the vendor billed for a result line of `custom` not taken (its usage, where it reads and the
        vendor's side reads usage: `billed`), counted in the request's call."""
        billed = getattr(self.vendor, "billed", None)  # a plugin's vendor may not read it
        if billed is None:
            return
        try:
            tokens = billed(line)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return  # no usage read: nothing known billed
        self.billed.setdefault(custom, Billed()).add(Billed.of(tokens))
