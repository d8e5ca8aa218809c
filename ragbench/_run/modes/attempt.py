"""An attempt of a run: the run as planned (`PlannedRun`) and the steps its mode takes (`AttemptSteps`, chosen
by ragbench._run.modes.run_modes): a fresh run, a resumed one, or a finished run resumed whose only work left is
metrics that failed. An attempt loads its engines, starts the run folder, runs its records (`max_inflight` at once,
across all tasks: each scored as soon as it finishes and appended to the checkpoint) and, once its services are
closed, writes results.json.

The three differ in two facts, the fields of `AttemptSteps`: whether the attempt continues the folder's saved work
and whether the system runs. An attempt given a `Pilot` (`ragbench estimate`) runs only the pilot's records of
those it would run, then stops unfinished."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._config.limits import examples_in_flight
from ..._cost.pilot import Pilot, PilotEnded
from ..._cost.prices import model_urls
from ..._cost.run_cost import AttemptMeter, CallReports
from ..._cost.spending_cap import CapStopped, SpendingCapReached
from ..._replay.recording import CallRecorder
from ..._replay.tools import load_replay_tools, recording_tools
from ..._reports.results.provenance import provenance
from ..._stop_signals import signal_of
from ..._storage.checkpoint import TaskCheckpoint
from ..._system import StartsForRun, SystemRun
from ..._task.protocols import UsesTools, stop_tools
from ..._types import Example
from ..._values.json_values import JsonObject
from ..example import (
    Answered,
    StoppedAtFailure,
    answered,
    answers_elsewhere,
    process_example,
    record_failed,
    scored_sample,
)
from ..lifetime.interrupted import RunInterrupted
from ..lifetime.lifecycle import run_interruptible, run_together
from ..lifetime.workers import Workers, use_ready_threads
from ..models.contents import model_contents
from ..outcome import RunOutcome
from ..plugin_values import Sample
from ..progress import Progress
from ..reading import READ_AT_ONCE, RecordReader
from ..rescore.saved_predictions import SavedRescoring
from ..sequences import Work, drawn, process_step, steps
from ..services import Calls, ExampleServices, Opened, RunServices
from .planned_run import Assembled, PlannedRun, Retrieved


def new_attempt_id() -> str:
    """An attempt's id in run.json: when it began, to the microsecond's digits of a performance counter."""
    return time.strftime("%Y%m%dT%H%M%S") + f"-{time.perf_counter_ns() % 10**6:06d}"


@dataclass(frozen=True)
class AttemptSteps:
    """The steps in which a run's attempts differ, chosen by its mode. `continues`: the folder's saved work stands
    (the saved examples whose metrics failed score again first, a record saved passes, a task whose data changed
    since the run started is read again). `runs_system`: the system's engines load and the records left run; else
    none runs (every record is saved) and run.json keeps the contents of the models that made the predictions."""

    continues: bool
    runs_system: bool


FRESH = AttemptSteps(continues=False, runs_system=True)  # a run's first attempt (no --resume): every record runs
# --resume of a run: the saved examples whose metrics failed score again (the system does not run them), then the
# records without a finished sample run (not saved yet, failed, or changed since they were saved)
RESUMED = AttemptSteps(continues=True, runs_system=True)
# --resume of a finished run whose only work left is metrics that failed: they score again; no record runs and the
# system's engines do not load (run.json keeps the contents of the models that made the predictions)
SCORE_ONLY = AttemptSteps(continues=True, runs_system=False)


class Attempt:
    """An attempt of `run` taking `steps`."""

    def __init__(
        self,
        run: PlannedRun,
        steps: AttemptSteps,
        retrieved: Retrieved,
        checkpoints: dict[str, TaskCheckpoint] | None = None,
        pilot: Pilot | None = None,
    ) -> None:
        self.run, self.steps, self.retrieved, self.pilot = run, steps, retrieved, pilot
        # its checkpoints given: the tasks' records read already, as the mode was decided
        self.todo = run.records_to_do(resume=steps.continues, read=checkpoints)
        self.attempt_id = new_attempt_id()

    def records(self, passed: Callable[[], None]) -> Work:
        """The records to run; `passed` is called for each one passed as saved already (none in a fresh run)."""
        if self.steps.runs_system:
            return self.todo.each(passed)
        for _ in range(self.run.saved(self.todo.checkpoints, frozenset())):
            passed()  # every record is saved: none runs
        return iter(())

    def recorded_config(self) -> JsonObject | None:
        """run.json's `config` of the run, where the engines that made its predictions do not load."""
        recorded = None if self.steps.runs_system else self.run.run_dir.record
        return recorded.config if recorded is not None else None

    def changed_data(self, fingerprints: JsonObject) -> frozenset[str]:
        """The tasks whose data changed since the run started (a fresh run starts now: none)."""
        return frozenset(self.run.run_dir.data_changed(fingerprints) if self.steps.continues else ())

    async def rescore_failed(self, calls: ExampleServices, inflight: int, cost: AttemptMeter) -> None:
        """The saved examples whose metrics failed, scored again (a fresh run has none)."""
        run = self.run
        if self.steps.continues:
            await SavedRescoring(run.planned, run.run_dir, inflight, cost.at_save, run.config.limits.fail_fast).run(
                calls
            )

    def run_in(self, services: RunServices) -> RunOutcome:
        """The attempt on `services` (its retrieval open), which it closes, once they reported their statistics,
        before results.json is assembled."""
        run = self.run
        resources = services.open_resources(run.planned)  # the workers start in the background, while engines load
        engines = services.open_engines(run.planned, system=self.steps.runs_system, preloading=run.preloading)
        contents = model_contents(engines, run.registry, self.recorded_config())
        earlier = run.run_dir.record if self.steps.continues else None  # where its earlier attempts sent theirs
        models, judging = run.config.models, run.config.judging
        urls = model_urls(models, judging, run.registry, engines.loaded_places(), earlier.config if earlier else None)
        run.check_models(engines)
        fingerprints = run.data_fingerprints()
        changed = self.changed_data(fingerprints)
        cost = AttemptMeter(self.attempt_id, run.run_dir.record_attempt)
        # the attempt counts from its start, whatever stops it
        full_config = run.full_config(self.retrieved, contents, urls)  # made once: a config of megabytes is walked once
        services.start_folder(full_config, fingerprints, cost.so_far_interrupted())
        versions = provenance()
        opened = Opened(resources, engines, services.open_cache(), self.retrieved.opened)
        try:
            calls = run_interruptible(self.execute(services, opened, cost))
        except KeyboardInterrupt as exc:
            services.interrupted = True
            saved = run.saved(self.todo.checkpoints, changed)
            raise RunInterrupted(run.run_dir.path, saved, run.known_total(), signal_of(exc)) from None
        except CapStopped as stopped:  # --max-cost's cap stopped the calls (ragbench._cost.spending_cap)
            saved = run.saved(self.todo.checkpoints, changed)
            raise SpendingCapReached(run.run_dir.path, saved, run.known_total(), stopped.cap) from None
        reports = opened.store_reports(calls)
        services.close()
        attempt = cost.final(calls.calls)
        assembled = Assembled(self.todo.checkpoints, full_config, self.attempt_id, attempt, versions)
        results = run.results(assembled, reports)
        run.finish(results, attempt)
        return RunOutcome(results, run.run_dir.path)

    async def execute(self, services: RunServices, opened: Opened, cost: AttemptMeter) -> CallReports:
        """The examples, `max_inflight` at a time, as one task group (ragbench._run.lifetime.lifecycle.run_together):
        teardown begins only when every example has ended, so nothing is saved once it has begun. Returns what
        the calls reported as they ended."""
        await use_ready_threads()  # no thread is started inside a callback (the loop's close shuts it down)
        try:
            _, reports = await services.run_calls(opened, lambda calls: self.examples(calls, opened, cost))
        finally:
            cost.save()  # replaced by the final cost if the run ends well
        if self.pilot is not None:
            raise PilotEnded()  # the attempt is recorded (above) as interrupted: the run goes on with --resume
        return reports

    async def examples(self, calls: Calls, opened: Opened, cost: AttemptMeter) -> None:
        """The examples on `calls`: the saved ones whose metrics failed scored again, then the records to do."""
        config = self.run.config
        cost.counting(calls.scheduler.stats)
        inflight = examples_in_flight(config.limits.max_inflight, opened.engines.model)
        shown = config.output.progress  # a bar not shown needs no total (a task may read its data to count it)
        progress = Progress(
            calls.scheduler.stats,
            self.run.known_total() if shown else None,
            enabled=shown,
            batches=calls.batches,
            calls_at_most=self.run.calls_at_most() if shown else None,
        )
        saver = asyncio.ensure_future(cost.save_every())  # whether or not examples finish
        following = asyncio.ensure_future(progress.follow())
        started: list[StartsForRun] = []
        try:
            calls.example.tools = await self.tools(calls.recorder)
            await self.rescore_failed(calls.example, inflight, cost)
            if self.steps.runs_system:
                await self.start_systems(calls, inflight, started)
            records = self.records(progress.pass_saved)
            example_workers = self.run.example_workers(inflight)
            read = RecordReader(
                drawn(records, self.pilot.positions) if self.pilot is not None else records,
                most=max(READ_AT_ONCE, example_workers),  # one trip to the thread gives each worker its next record
            )
            workers = opened.resources.workers
            await run_together(
                self.worker(read, calls.example, workers, progress, cost) for _ in range(example_workers)
            )
        finally:
            saver.cancel()
            following.cancel()
            try:
                progress.close()
                for system in reversed(started):
                    await system.stop()
                for planned in self.run.planned:
                    await stop_tools(planned.task)
            finally:
                await asyncio.gather(saver, following, return_exceptions=True)

    async def start_systems(self, calls: Calls, inflight: int, started: list[StartsForRun]) -> None:
        """Each task's system that starts something for the run (an application's span capture or receiver,
        ragbench._apps), started; `started` holds those to stop once every example has ended."""
        charge = calls.spending.charge if calls.spending is not None else None
        replayed = self.run.config.what.replay_apps
        for planned in self.run.planned:
            system = planned.system
            if isinstance(system, StartsForRun):
                run = SystemRun(
                    planned.name,
                    self.run.run_dir.path,
                    inflight,
                    self.steps.continues,
                    calls.recorder,
                    charge,
                    replayed=Path(replayed) if replayed is not None else None,
                )
                await system.start(run)
                started.append(system)

    async def worker(
        self,
        read: RecordReader[Any],
        calls: ExampleServices,
        workers: Workers,
        progress: Progress,
        cost: AttemptMeter,
    ) -> None:
        """One of the run's `max_inflight` workers: the next record still to do, until none is left (a sequence's
        records one after another). A system that calls no model of the run (an application, whose answer comes
        from elsewhere: `SystemDeclaration.uses_llm`) is asked the worker's next example while the last one is
        scored and saved (`scoring`, one at a time), so that neither holds the application's next call back."""
        scoring: asyncio.Future[None] | None = None
        with calls.examples.slot() if calls.examples is not None else nullcontext():
            try:
                while (entry := await read.next()) is not None:
                    for planned, position, item, sequence in steps(entry):
                        progress.begin()
                        if sequence is None and isinstance(item, Example) and answers_elsewhere(planned):
                            answer = await answered(planned, item, calls, position)
                            if scoring is not None:
                                await scoring
                            scoring = asyncio.ensure_future(self.score_and_save(answer, calls, workers, progress, cost))
                            continue
                        if sequence is None or not isinstance(item, Example):
                            sample = await process_example(planned, item, calls, position)
                        else:
                            sample = await process_step(planned, item, calls, position, sequence)
                        self.save(planned.name, sample, workers, progress, cost)
                if scoring is not None:
                    await scoring
            finally:
                if scoring is not None and not scoring.done():  # the worker stopped (a failure, a signal)
                    scoring.cancel()
                    await asyncio.gather(scoring, return_exceptions=True)

    async def score_and_save(
        self, answer: Answered, calls: ExampleServices, workers: Workers, progress: Progress, cost: AttemptMeter
    ) -> None:
        self.save(answer.planned.name, await scored_sample(answer, calls), workers, progress, cost)

    def save(self, task: str, sample: Sample, workers: Workers, progress: Progress, cost: AttemptMeter) -> None:
        """A run example's sample saved and counted (--fail-fast: the run stopped at it if it failed)."""
        run_dir = self.run.run_dir
        workers.raise_if_unavailable()  # every later example would fail the same way
        run_dir.append_sample(task, sample.text, cost.at_save(saving=1))
        cost.examples += 1
        progress.advance(failed=record_failed(sample.record))
        if self.run.config.limits.fail_fast and record_failed(sample.record):  # saved: --resume tries it again
            raise StoppedAtFailure(task, sample.record, run_dir.path)

    async def tools(self, recorder: CallRecorder) -> dict[str, dict[str, Any]]:
        """Each task's tools (ctx.tools), recorded call by call; under --replay, answered from the
        recorded run's calls instead (no task setup: no KG server is started)."""
        planned_tasks = self.run.planned
        if self.run.config.what.replay_tools is not None:
            replayed = load_replay_tools(self.run.config.what.replay_tools)
            return {planned.name: replayed.get(planned.name, {}) for planned in planned_tasks}
        tools = {
            planned.name: await planned.task.setup() if isinstance(planned.task, UsesTools) else {}
            for planned in planned_tasks
        }
        recorder.tool_names({task: sorted(names) for task, names in tools.items()})
        return {task: recording_tools(task, named, recorder) for task, named in tools.items()}
