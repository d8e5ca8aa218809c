"""What a run cost: each attempt's examples, wall time and LLM calls (`AttemptCost`,
ragbench._cost.cost_schema), and the whole run's (first run and resumes) added up, with what the run's
services report as they end (`ServiceReports`), as results.json's `cost`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from .._scheduler import CallStats
from .._storage.page_cache import PageCachesStats, PageCacheStats
from .._storage.run_record import AttemptCost
from .._storage.store_checks import StoreStats
from .._values.json_values import JsonObject
from .cost_schema import Cost


def attempt_cost(attempt_id: str, stats: dict[str, int], processed: int, wall: float) -> AttemptCost:
    """One attempt's cost from the scheduler's statistics (`CallStats.to_dict`)."""
    return cast(
        AttemptCost,
        {
            "id": attempt_id,
            "examples": processed,
            "wall_seconds": round(wall, 3),
            "llm_calls": stats["calls"],
            **{k: v for k, v in stats.items() if k != "calls"},
        },
    )


def whole_run_cost(attempts: list[AttemptCost]) -> dict[str, float]:
    """The cost of every attempt of a run (first run and resumes) added up: each count, the wall time, the
    examples per second, the attempts and those interrupted."""
    total: dict[str, float] = {}
    for attempt in attempts:
        for key, value in attempt.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    total["wall_seconds"] = round(total.get("wall_seconds", 0.0), 3)
    wall = total["wall_seconds"]
    total["examples_per_second"] = round(total.get("examples", 0) / wall, 3) if wall > 0 else 0.0
    total["attempts"] = len(attempts)
    total["interrupted_attempts"] = sum(1 for attempt in attempts if attempt.get("interrupted"))
    return total


class AttemptMeter:
    """This attempt's cost as it happens. `save` records it in run.json marked interrupted (the run's
    end replaces it with the final cost, as it marks the run finished): when the attempt starts (with the
    run folder's start, `so_far_interrupted`), every second while it runs
    (`save_every`, a task of the loop that runs whatever the examples do) and when the attempt
    stops, whichever way. A kill loses at most the last second of it, and none of the cost of its
    saved samples: each sample is saved with the attempt's cost then (`at_save`), which the
    run folder adds to run.json when it next rewrites the samples (ragbench._storage.rundir); `--resume`
    adds every attempt up."""

    def __init__(self, attempt_id: str, record: Callable[[AttemptCost], None]) -> None:
        self.id, self._record = attempt_id, record
        self.started = time.perf_counter()
        self.examples = 0  # samples saved by this attempt
        self.stats = CallStats()  # the scheduler's, once examples run (`counting`)

    def counting(self, stats: CallStats) -> None:
        """Count the calls of `stats` (the run's scheduler's, once its loop runs)."""
        self.stats = stats

    def so_far(self) -> AttemptCost:
        return attempt_cost(self.id, self.stats.to_dict(), self.examples, time.perf_counter() - self.started)

    def final(self, calls: dict[str, int]) -> AttemptCost:
        """The attempt's cost once it ended well, its calls counted by the scheduler (`CallReports.calls`)."""
        return attempt_cost(self.id, calls, self.examples, time.perf_counter() - self.started)

    def at_save(self, saving: int = 0) -> AttemptCost:
        """This attempt's cost once a sample is saved (`saving`: the samples it adds to those saved), written
        with the sample (`RunDir.append_sample`): a sample and the cost of the calls that made it, at once."""
        return {**self.so_far(), "examples": self.examples + saving}

    def so_far_interrupted(self) -> AttemptCost:
        """What `save` records: the cost so far, marked interrupted."""
        return {**self.so_far(), "interrupted": True}

    def save(self) -> None:
        self._record(self.so_far_interrupted())

    async def save_every(self, seconds: float = 1.0) -> None:
        """`save`, every `seconds`, its writing (run.json replaced and flushed to disk: 50-140 ms of waiting for the
        disk on a VM) in a thread, so that the examples' calls go on meanwhile; the cost is taken on the loop, which
        owns the counts. Cancelled, it returns once the write under way has ended: nothing writes run.json after the
        attempt has moved on (its final cost)."""
        writing: asyncio.Future[None] | None = None
        try:
            while True:
                await asyncio.sleep(seconds)
                writing = asyncio.ensure_future(asyncio.to_thread(self._record, self.so_far_interrupted()))
                await asyncio.shield(writing)
        except asyncio.CancelledError:
            if writing is not None:  # a failed write is the attempt's last save's to repeat, and raise
                await asyncio.gather(writing, return_exceptions=True)
            raise


@dataclass(frozen=True)
class CallReports:
    """What a run's calls report as they end (`RunServices.run_calls`): the scheduler's counts (`calls`), pooled
    searches (`retrieval`: the retrieval handle's; empty without one), the NLI model's figures, the model
    engine's (`Engine.stats`), where there are any, and the role models' and judges' by place (`other_engines`)."""

    calls: dict[str, int]
    retrieval: dict[str, int] = field(default_factory=dict)
    nli: dict[str, int] | None = None
    engine: JsonObject | None = None
    other_engines: dict[str, JsonObject] = field(default_factory=dict)


@dataclass(frozen=True)
class ServiceReports:
    """What results.json's cost reads of a run's services, taken as they end: the response cache's and the page
    caches' reports (damaged entries, failed reads and writes, a replaced file; pages reused) and the calls'
    (`CallReports`). A run rebuilt from its samples opened none: `ServiceReports()`."""

    response_cache: StoreStats | None = None
    page_cache: PageCacheStats | PageCachesStats | None = None
    calls: CallReports = field(default_factory=lambda: CallReports({}))
    retriever_start: float | None = None  # seconds the retriever took to open, apart from its searches' latency


def run_cost(earlier: list[AttemptCost], attempt: AttemptCost | None, reports: ServiceReports) -> Cost:
    """results.json's `cost`: the `earlier` attempts' (brought up to their saved samples' by
    `RunDir.finalize_samples`) and this `attempt`'s (None: results rebuilt with no attempt of its own) added
    up, with the services' `reports` where there are any (pooled searches: queries answered by fewer searches, and
    the seconds the retriever took to open, `start_seconds`, which no search's latency holds;
    provided documents are not; the model engine's: this attempt's)."""
    cost = cast(Cost, whole_run_cost([*earlier, *([attempt] if attempt else [])]))  # Cost's numbers, by its keys
    cost["this_attempt"] = attempt
    if reports.response_cache:
        cost["response_cache"] = reports.response_cache
    if reports.page_cache:
        cost["page_cache"] = reports.page_cache
    retrieval = reports.calls.retrieval
    if retrieval.get("batches"):
        cost["retrieval"] = {
            "queries": retrieval["calls"] + retrieval["shared"],
            "searches": retrieval["batches"],
            "errors": retrieval["errors"],
        }
        if reports.retriever_start is not None:  # its index loaded: a sharded one's actors started, shards fetched
            cost["retrieval"]["start_seconds"] = round(reports.retriever_start, 3)
    if reports.calls.nli is not None:
        cost["nli"] = reports.calls.nli
    if reports.calls.engine is not None:
        cost["engine"] = reports.calls.engine
    if reports.calls.other_engines:
        cost["other_engines"] = reports.calls.other_engines
    return cost
