"""Pools the LLM calls of every in-flight example and batches them onto the engines.

Systems are written one example at a time (`await ctx.llm.generate(...)`); many examples run
as coroutines at once. Each call lands in a per-engine queue. Before it chooses a batch, the engine's
dispatcher waits until every example in flight has queued its next call, ended, or waits on a batch sent
(`ragbench._in_flight`: a run's examples, a model's batch also past their searches; callers that hold no
slot, e.g. a benchmark's own coroutines, get a few event-loop rounds to enqueue theirs instead), then takes
the largest group of queued requests that share sampling parameters, sorts it longest first, cuts it at the
engine's batch limit and runs that batch in a worker thread. A batch's answers reach its callers when the
engine's next batch starts (`Scheduler._dispatch`): while a batch computes, the examples the one before it answered
run and queue their next calls, and the batches are the same on a fast or a slow machine.
Engines that batch by themselves (`concurrent = True`, e.g. HTTP servers) get each request as
it comes, up to their concurrency cap.

Fairness (ageing): the largest group alone would starve a request whose sampling settings few
others share (one waited 46 of 51 batches). A group whose oldest request has waited AGE_LIMIT
batches (batches of its engine dispatched since it was queued) is served next; among such groups
the one with the oldest request. Once a request has waited AGE_LIMIT batches, every batch serves the
oldest request queued (it has waited longer, so its group is aged too), so a request waits at most
AGE_LIMIT batches plus those that serve requests queued before it (at most one per B of them, B the
batch limit, and one per other sampling group); with nothing older left, at most AGE_LIMIT.
`CallStats.max_wait_batches` is the longest wait seen.

Identical requests in flight share one engine call, and a response cache answers repeats. A spending gate
(`--max-cost`: ragbench._scheduler.spend_gate) is asked before each batch or request is sent, and told each answer.

Every request taken is answered. A request's `text_length()` and batch key are read in `submit`, so a request
they fail on fails its own caller, not a batch; whatever the dispatcher raises while it owes answers (a request
queued, in a batch taken or sent, or being delivered: `EngineQueue.owed`) answers each of them with an
`EngineError` saying what it raised, and the queue goes on.

The pooling is not specific to LLMs: any "batch backend" with `generate(requests) -> results`,
`engine_id`, `max_batch_size`, `max_concurrency` and `concurrent = False` can be pooled, with requests that have a
`batch_key` (what must be equal within a batch), `text_length()` and `cache_key(backend_id)` (an LLM engine's
`call_identity(sampling)` in place of `engine_id` there).
Retrieval uses this (`ragbench._retrieval.handle`) with a scheduler of its own.
"""

from __future__ import annotations

import asyncio
import logging
import operator
from collections import deque
from typing import TYPE_CHECKING, Any

from .._in_flight import ExamplesInFlight, waiting_for
from .._plugin_calls import PluginCall
from .._values.billed import Billed
from .._values.engine_errors import EngineError
from .._values.llm_request import Request
from .._values.llm_responses import Response
from .answers import checked, scheduler_error, unfit
from .engine_queue import Batch, EngineQueue, Queued
from .spend_gate import Sent, SpendGate, SpendWaits
from .stats import CallStats

if TYPE_CHECKING:
    from .._engines.base import Engine
    from .._storage.cache import ResponseCache

log = logging.getLogger(__name__)

# Batches a queued request may wait before its group is served next (see the module docstring). 16:
# on benchmarks/scheduler_vs_baselines.py's workloads it makes as many batches as serving the largest
# group alone (8 made one or two more), and cuts the worst wait of a request with rare settings from 67 to 21.
AGE_LIMIT = 16
_SETTLE_ROUNDS = 64
_QUIET_ROUNDS = 3
_LOOKUP_WAIT_SECONDS = 0.05  # at most this long per batch for cache lookups under way


class Scheduler:
    def __init__(
        self,
        cache: ResponseCache | None = None,
        age_limit: int = AGE_LIMIT,
        examples: ExamplesInFlight | None = None,
        searches: bool = False,
        gate: SpendGate | None = None,
    ) -> None:
        self.cache, self.spend = cache, SpendWaits(gate)
        self.age_limit = age_limit
        self.examples = examples  # the run's examples in flight: a batch waits until each has queued its call
        # a retriever's scheduler: its calls are searches, which a model's batch waits past (ragbench._in_flight)
        self.searches = searches
        self._cache_errors_before = cache.write_errors if cache is not None else 0
        self.stats = CallStats()
        self._queues: dict[int, EngineQueue] = {}
        self._in_flight: dict[str, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lookups = 0  # callers reading the cache in its thread: their requests may still join a batch
        self._no_lookups = asyncio.Event()

    async def submit(self, engine: Engine, request: Request) -> Response:
        """Answer one request: from the cache, from an identical in-flight call, or the engine."""
        calls = getattr(engine, "call_identity", None)  # an LLM engine's: files its sampling names (a LoRA adapter)
        key = request.cache_key(calls(request.sampling) if calls is not None else engine.engine_id)
        if self.cache is not None and getattr(engine, "cacheable", True):
            self._lookups += 1
            try:
                hit = await self.cache.aget(key)
            finally:
                self._lookups -= 1
                if not self._lookups:
                    self._no_lookups.set()
            if hit is not None and not unfit(request, hit):
                self.stats.cache_hits += 1
                return hit
        if key in self._in_flight:
            self.stats.shared += 1
            with waiting_for(self._in_flight[key], leaf=self.searches):
                return await asyncio.shield(self._in_flight[key])
        if not engine.concurrent:  # read here, so that a request they fail on fails its caller, not a batch
            group, length = request.batch_key, operator.index(request.text_length())
            hash(group)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        self.stats.in_flight += 1
        queue = self._queue(engine)
        if engine.concurrent:
            task = asyncio.create_task(self._run_one(queue, request, key, future))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            queue.groups.setdefault(group, []).append(Queued(request, key, future, queue.dispatched, length))
            queue.owed[future] = key
            queue.size += 1
            queue.wake.set()
        with waiting_for(future, leaf=self.searches):
            return await asyncio.shield(future)

    def _queue(self, engine: Engine) -> EngineQueue:
        queue = self._queues.get(id(engine))
        if queue is None:
            queue = self._queues[id(engine)] = EngineQueue(engine)
            if not engine.concurrent:
                queue.task = asyncio.create_task(self._dispatch(queue))
        return queue

    async def _settle(self, queue: EngineQueue) -> None:
        """Wait until every example in flight has queued its call or ended; without `examples`, yield
        until no coroutine has added to the queue for a few rounds (bounded): a caller whose call just
        finished needs two loop rounds to wake up and send its next one."""
        if self.examples is not None:
            await self.examples.settled(past_leaves=not self.searches)
            return
        seen, quiet = -1, 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _LOOKUP_WAIT_SECONDS
        for _ in range(_SETTLE_ROUNDS):
            if self._lookups and loop.time() < deadline:  # requests whose cache lookup is under way join
                self._no_lookups.clear()
                try:
                    await asyncio.wait_for(self._no_lookups.wait(), deadline - loop.time())
                except asyncio.TimeoutError:
                    pass
                seen, quiet = -1, 0
                continue
            quiet = quiet + 1 if queue.size == seen else 0
            if quiet >= _QUIET_ROUNDS:
                return
            seen = queue.size
            await asyncio.sleep(0)

    def _next_group(self, queue: EngineQueue) -> object:
        """The group whose oldest request has waited longest once that is `age_limit` batches or more, else
        the largest group."""
        heads = {key: group[0].queued_at for key, group in queue.groups.items()}
        oldest = min(heads, key=heads.__getitem__)
        if queue.dispatched - heads[oldest] >= self.age_limit:
            return oldest
        return max(queue.groups, key=lambda k: len(queue.groups[k]))

    def _take_batch(self, queue: EngineQueue) -> tuple[object, list[Queued]]:
        """The next group (its key) and its oldest requests, up to the batch limit."""
        key = self._next_group(queue)
        chosen = queue.groups[key]
        # Oldest first, so no example waits behind newer ones and ends in a tail of tiny batches;
        # then longest first within the batch (less padding, errors surface early).
        taken, rest = chosen[: queue.engine.max_batch_size], chosen[queue.engine.max_batch_size :]
        if rest:
            queue.groups[key] = rest
        else:
            del queue.groups[key]
        queue.size -= len(taken)
        self.stats.max_wait_batches = max(self.stats.max_wait_batches, queue.dispatched - taken[0].queued_at)
        queue.dispatched += 1
        return key, sorted(taken, key=lambda item: item.length, reverse=True)

    def _admitted_part(self, queue: EngineQueue, group: object, taken: list[Queued]) -> Batch:
        """What the spending gate lets be sent now of a batch `taken` from `group`; the rest back at its head."""
        admitted = self.spend.admit(queue.engine, [each.request for each in taken])
        if held := sorted(taken[admitted:], key=lambda item: item.queued_at):
            queue.groups[group], queue.size = [*held, *queue.groups.get(group, [])], queue.size + len(held)
        return [(item.request, item.key, item.future) for item in taken[:admitted]]

    def _worth_sending_early(self, queue: EngineQueue) -> bool:
        """Whether the next batch may start before the answers of the one before it are out: it holds at least
        the backend's `early_batch` requests, by default half its batch limit (else waiting for the callers of
        that batch fills it better). An early batch pays the backend's fixed cost of a batch for fewer requests;
        a model engine's batch time is mostly its decoding steps, which a small batch takes as long as a full
        one. A backend whose batch time grows with its requests says from how many a batch is worth its cost
        (the scripted engine's simulated cost: `overhead / per_request`)."""
        limit = queue.engine.max_batch_size
        early = getattr(queue.engine, "early_batch", None) or -(-limit // 2)
        return min(len(queue.groups[self._next_group(queue)]), limit) >= early

    async def _dispatch(self, queue: EngineQueue) -> None:
        """Take batches while requests are queued. Before each choice the loop settles (every example in flight
        has queued its call, ended, or waits on a batch sent), and a batch's answers reach its callers only when the
        engine's next batch starts, or when nothing is worth sending before them: while a batch computes, the
        callers of the one before it queue their next calls, and each batch is chosen from the same calls on a fast
        or a slow machine. Up to `parallel_batches` batches are out at once (ragbench._engines.replicas), one
        otherwise; answers go out in the order sent. What the spending gate holds back waits for an answer."""
        depth = getattr(queue.engine, "parallel_batches", 1)
        sent: deque[tuple[Batch, asyncio.Task[Any]]] = deque()
        while True:
            if not queue.size and not sent:
                await queue.wake.wait()
            queue.wake.clear()
            try:
                await self._settle(queue)
                if queue.size and (not sent or self._worth_sending_early(queue)):
                    group, taken = self._take_batch(queue)
                    while len(sent) >= depth:
                        await self._deliver(queue, *sent.popleft())
                    if batch := self._admitted_part(queue, group, taken):
                        task = asyncio.create_task(self._compute(queue.engine, batch))
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
                        sent.append((batch, task))
                    elif sent:  # the gate holds the batch back: the answers out may free what it needs
                        await self._deliver(queue, *sent.popleft())
                    else:  # another engine's calls are out, or the gate stopped the run
                        await self.spend.next_told()
                elif sent:
                    await self._deliver(queue, *sent.popleft())
            except Exception as exc:  # a bug here must not leave callers waiting: fail every request owed
                error = scheduler_error(exc)
                while sent:
                    batch, task = sent.popleft()
                    task.cancel()
                    for request, _, _ in batch:  # their reserve released: the gate waits on no lost answer
                        self.spend.told(queue.engine, request, error)
                self._fail_owed(queue, error)

    def _fail_owed(self, queue: EngineQueue, error: EngineError) -> None:
        """Answer every request of `queue` not answered yet with `error`, wherever the dispatcher had it."""
        owed, queue.owed = queue.owed, {}
        for future, key in owed.items():
            if not future.done():
                self._finish(key, future, error)
        queue.groups.clear()
        queue.size = 0

    @staticmethod
    async def _compute(engine: Engine, batch: Batch) -> list[Any]:
        """One batch on the engine: its results, or the error of each request. Whatever goes wrong (the engine
        raising, answering a different number of requests) ends every request of the batch - with its answer
        or a clear error - so that no caller waits forever."""
        with PluginCall() as call:  # an engine's or a retriever's code, a plugin's: whatever it raises
            results = await asyncio.to_thread(engine.generate, [request for request, _, _ in batch])
            if not isinstance(results, list) or len(results) != len(batch):
                count = len(results) if isinstance(results, list) else type(results).__name__
                raise EngineError(f"engine {engine.engine_id} answered {count} results for {len(batch)} requests")
        if call.raised is not None:  # the whole batch failed: every request gets the error
            error = call.raised if isinstance(call.raised, EngineError) else EngineError(call.error)
            results = [error] * len(batch)
        return results

    async def _deliver(self, queue: EngineQueue, batch: Batch, task: asyncio.Task[Any]) -> None:
        """A sent batch's answers to its callers (once the engine has them) and to the cache."""
        results = await task
        self.stats.batches += 1
        results = [checked(queue.engine, request, result) for (request, _, _), result in zip(batch, results)]
        for (request, key, future), result in zip(batch, results):
            self._finish(key, future, result, (queue.engine, request))
            queue.owed.pop(future, None)
        self._cache_results(queue.engine, batch, results)

    async def _run_one(self, queue: EngineQueue, request: Request, key: str, future: asyncio.Future[Any]) -> None:
        """One request on an engine that batches by itself; whatever raises on the way answers it with the error."""
        result: Response | EngineError
        try:
            await self.spend.admitted(queue.engine, request)
            async with queue.semaphore:
                with PluginCall() as call:
                    result = await queue.engine.agenerate_one(request)
                if call.raised is not None:
                    result = call.raised if isinstance(call.raised, EngineError) else EngineError(call.error)
            result = checked(queue.engine, request, result)
        except Exception as exc:
            result = scheduler_error(exc)
        self.stats.batches += 1
        self._finish(key, future, result, (queue.engine, request))
        self._cache_results(queue.engine, [(request, key, future)], [result])

    def _cache_results(self, engine: Engine, batch: Batch, results: list[Any]) -> None:
        """Queue a batch's answers for the cache's writer thread. The answers have reached their
        callers already: a cache that fails (a locked shared file) is counted and logged, not fatal."""
        if self.cache is not None and getattr(engine, "cacheable", True):
            try:
                self.cache.put_many(
                    [
                        (key, engine.engine_id, result)
                        for (_, key, _), result in zip(batch, results)
                        if not isinstance(result, Exception)
                    ]
                )
            except Exception as exc:
                self.stats.cache_errors += 1
                log.warning(
                    "response cache write failed (%s: %s); the answers are used, not cached", type(exc).__name__, exc
                )

    def _finish(self, key: str, future: asyncio.Future[Any], result: Response | EngineError, sent: Sent = None) -> None:
        """A request answered; one an engine answered (`sent`: the engine and request) told to the spending gate."""
        if sent is not None:
            self.spend.told(*sent, result)
        self._in_flight.pop(key, None)
        self.stats.in_flight -= 1
        if isinstance(result, Exception):
            self.stats.errors += 1
            self._count_tokens(getattr(result, "billed", None))
            if not future.done():
                future.set_exception(result)
            future.exception()  # mark retrieved: a caller that gave up must not warn at exit
            return
        self.stats.calls += 1
        if isinstance(result, Response):
            self._count_tokens(result)
        if not future.done():
            future.set_result(result)

    def _count_tokens(self, tokens: Response | Billed | None) -> None:
        """An answer's tokens, or those a failed call was billed for, in the attempt's counts."""
        if tokens is not None:
            self.stats.prompt_tokens += tokens.prompt_tokens
            self.stats.completion_tokens += tokens.completion_tokens
            self.stats.cached_prompt_tokens += tokens.cached_prompt_tokens
            self.stats.cache_write_tokens += tokens.cache_write_tokens

    async def close(self) -> None:
        if self.cache is not None:  # what the writer thread could not store counts as failed writes
            await asyncio.to_thread(self.cache.flush)
            self.stats.cache_errors += self.cache.write_errors - self._cache_errors_before
            self._cache_errors_before = self.cache.write_errors
        for queue in self._queues.values():
            if queue.task is not None:
                queue.task.cancel()
        for task in list(self._tasks):
            task.cancel()
        self._queues.clear()
