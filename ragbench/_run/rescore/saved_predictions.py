"""Scoring saved predictions again without running the system: on `--resume`, the examples whose metrics
failed (in the run's own folder); with `ragbench rescore`, every example of a finished run (into a new
folder, ragbench._run.rescore.rescore_run).

A sample record holds what a metric is given: the example's id, question, gold, slice fields and turns,
and the prediction with the documents shown to the model (in the order shown) and the system's trace.
The Example and the Prediction are rebuilt from it (the example's own provided documents and extras are
not saved: a metric that reads them cannot be re-scored). Every metric of a re-scored example runs
again, as a fresh run would score it: its scores, metric errors, counted events, judge calls and
folded call failures are all replaced, and it is marked `"rescored": true`. A metric's calls that were
answered before are answered by the response cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, fields
from typing import Any

from ..._in_flight import ExamplesInFlight
from ..._records import SampleRecord, read_samples
from ..._reports.results.failures import metric_failures
from ..._storage.checkpoint import checkpoint_key
from ..._storage.run_record import AttemptCost
from ..._storage.rundir import RunDir
from ..example import StoppedAtFailure, gold_references, record_failed, scored
from ..lifetime.lifecycle import run_together
from ..plan.planned_task import PlannedTask
from ..plugin_values import Sample, writable_sample
from ..services import ExampleServices

SCORING_FIELDS = (
    "scores",
    "score_errors",
    "score_tracebacks",
    "counted",
    "judge_ratings",
    "judge_trace",
    "infrastructure_failures",
    "rescored",
)
GOLD_READING_FIELDS = ("gold_references", "gold_references_error")  # read again by the task (it may have changed)


def scorable(record: SampleRecord) -> bool:
    """Whether the record holds a prediction to score: its example ran (a failed example or a bad record
    has none)."""
    return record.error is None and record.id is not None and not record.bad_record


async def rescore_record(planned: PlannedTask, record: SampleRecord, services: ExampleServices) -> Sample:
    """The record scored again by every metric of `planned` (see the module's docstring)."""
    example, prediction = record.example(), record.prediction()
    kept = {
        spec.name: getattr(record, spec.name)
        for spec in fields(SampleRecord)
        if spec.name not in (*SCORING_FIELDS, *GOLD_READING_FIELDS, "schema_version")
    }
    unscored = SampleRecord.sealed(**kept, **gold_references(planned.task, example), rescored=True)
    return writable_sample(await scored(unscored, planned, example, prediction, services))


def failed_scoring(run_dir: RunDir, planned: PlannedTask) -> Iterator[SampleRecord]:
    """The task's saved records whose metrics failed (`metric_failures`), the latest attempt of each,
    one at a time. Records appended while this is read (the re-scored ones) are not read."""
    path = run_dir.sample_path(planned.name)
    latest: dict[str, tuple[int, bool]] = {}
    for position, record in enumerate(read_samples(path, has_text=False)):
        failed = scorable(record) and bool(metric_failures(record, planned.metrics))
        latest[checkpoint_key(record.id, record.index)] = (position, failed)
    wanted = {position for position, failed in latest.values() if failed}
    if not wanted:
        return
    last = max(wanted)
    for position, record in enumerate(read_samples(path)):
        if position in wanted:
            yield record
        if position >= last:
            return


def pending(run_dir: RunDir, planned: list[PlannedTask]) -> bool:
    """Whether any saved example of the run needs its metrics run again."""
    return any(next(failed_scoring(run_dir, p), None) is not None for p in planned)


@dataclass(frozen=True)
class SavedRescoring:
    """--resume: every saved example whose metrics failed scored again (at most `most` at once) and appended to
    the checkpoint (with the attempt's cost then, `attempt_cost()`), where it replaces the earlier record. With
    `fail_fast`, the first that fails again raises `StoppedAtFailure` once it is saved."""

    planned: list[PlannedTask]
    run_dir: RunDir
    most: int
    attempt_cost: Callable[[], AttemptCost]
    fail_fast: bool = False

    async def run(self, services: ExampleServices) -> int:
        """The rescoring on `services`; returns how many examples scored again."""
        done = 0

        async def rescore(item: tuple[PlannedTask, SampleRecord]) -> None:
            nonlocal done
            task, record = item
            rescored = await rescore_record(task, record, services)
            self.run_dir.append_sample(task.name, rescored.text, self.attempt_cost())
            done += 1
            if self.fail_fast and record_failed(rescored.record):
                raise StoppedAtFailure(task.name, rescored.record, self.run_dir.path)

        saved = ((task, record) for task in self.planned for record in failed_scoring(self.run_dir, task))
        await bounded(saved, rescore, self.most, services.examples)
        return done


async def bounded(
    items: Iterable[Any], work: Callable[[Any], Awaitable[None]], most: int, examples: ExamplesInFlight | None = None
) -> None:
    """`work(item)` for every item, at most `most` at once, as one task group (`run_together`): the first
    failure cancels the others and is raised once every worker has ended. Each worker holds a slot of
    `examples` (the scheduler's batches wait for it to queue its call)."""
    source = iter(items)

    async def worker() -> None:
        with examples.slot() if examples is not None else nullcontext():
            for item in source:  # shared: each worker takes the next item
                await work(item)

    await run_together(worker() for _ in range(max(1, most)))
