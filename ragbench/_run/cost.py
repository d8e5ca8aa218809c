"""What a run cost: each attempt's examples, wall time and LLM calls, and the whole run's (first run
and resumes) added up, as results.json's `cost`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, cast

from .._reports.results_schema import Cost
from .._scheduler import CallStats


def attempt_cost(attempt_id: str, stats: dict[str, Any], processed: int, wall: float) -> dict[str, Any]:
    """One attempt's cost from the scheduler's statistics."""
    return {
        "id": attempt_id,
        "examples": processed,
        "wall_seconds": round(wall, 3),
        "llm_calls": stats["calls"],
        **{k: v for k, v in stats.items() if k != "calls"},
    }


def whole_run_cost(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """The cost of every attempt of a run (first run and resumes) added up."""
    total: dict[str, Any] = {}
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


class AttemptCost:
    """This attempt's cost as it happens. `save` records it in run.json marked interrupted (the run's
    end replaces it with the final cost, as it marks the run finished): when the attempt starts (with the
    run folder's start, `so_far_interrupted`), every second while it runs
    (`save_every`, a task of the loop that runs whatever the examples do) and when the attempt
    stops, whichever way. A kill loses at most the last second of it, and none of the cost of its
    saved samples: each sample is saved with the attempt's cost then (`at_save`), which the
    run folder adds to run.json when it next rewrites the samples (ragbench._storage.rundir); `--resume`
    adds every attempt up."""

    def __init__(self, attempt_id: str, record: Callable[[dict[str, Any]], None]) -> None:
        self.id, self._record = attempt_id, record
        self.started = time.perf_counter()
        self.examples = 0  # samples saved by this attempt
        self.stats: CallStats | None = None  # the scheduler's, once examples run

    def so_far(self) -> dict[str, Any]:
        return attempt_cost(
            self.id, (self.stats or CallStats()).to_dict(), self.examples, time.perf_counter() - self.started
        )

    def at_save(self, saving: int = 0) -> dict[str, Any]:
        """This attempt's cost once a sample is saved (`saving`: the samples it adds to those saved), written
        with the sample (`RunDir.append_sample`): a sample and the cost of the calls that made it, at once."""
        return {**self.so_far(), "examples": self.examples + saving}

    def so_far_interrupted(self) -> dict[str, Any]:
        """What `save` records: the cost so far, marked interrupted."""
        return {**self.so_far(), "interrupted": True}

    def save(self) -> None:
        self._record(self.so_far_interrupted())

    async def save_every(self, seconds: float = 1.0) -> None:
        while True:
            await asyncio.sleep(seconds)
            self.save()


def run_cost(
    earlier: list[dict[str, Any]],
    attempt: dict[str, Any] | None,
    stores: dict[str, dict[str, Any] | None],
    retrieval: dict[str, int],
    nli: dict[str, Any] | None,
    engine: dict[str, Any] | None = None,
) -> Cost:
    """results.json's `cost`: the `earlier` attempts' (brought up to their saved samples' by
    `RunDir.finalize_samples`) and this `attempt`'s (None: results rebuilt with no attempt of its own) added
    up; the caches' reports (`stores`, by name: damaged entries, failed reads and writes, a replaced file;
    pages and embeddings reused), pooled searches (`retrieval`: queries answered by fewer searches; provided
    documents are not), the NLI model's figures and the model engine's (this attempt's: `Engine.stats`), where
    there are any."""
    cost = whole_run_cost([*earlier, *([attempt] if attempt else [])])
    cost["this_attempt"] = attempt
    cost.update({name: stats for name, stats in stores.items() if stats})
    if retrieval.get("batches"):
        cost["retrieval"] = {
            "queries": retrieval["calls"] + retrieval["shared"],
            "searches": retrieval["batches"],
            "errors": retrieval["errors"],
        }
    if nli is not None:
        cost["nli"] = nli
    if engine is not None:
        cost["engine"] = engine
    return cast(Cost, cost)  # the shape results_schema.Cost names
