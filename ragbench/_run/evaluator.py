"""Runs a system on tasks: examples stream in, run as coroutines (at most `max_inflight` at once,
across all tasks), each is scored as soon as it finishes and appended to the checkpoint.

Start-up order: the pre-flight (every option, data file and prerequisite; ragbench._run.preflight), the
engines, each system's `check_model`, and only then the run folder, so a refused run writes nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .._checks import Preflight
from .._engines import preload
from .._errors import ConfigError, RecordError
from .._registry import Registry
from .._replay.recording import CallRecorder
from .._replay.tools import load_replay_tools, recording_tools
from .._reports.failures import metric_failed
from .._reports.provenance import provenance
from .._reports.results_file import NewerResults, read_results
from .._reports.results_schema import Cost, Results
from .._scheduler import Scheduler
from .._stop_signals import signal_of
from .._storage.checkpoint import TaskCheckpoint, checkpoint_key
from .._storage.rundir import RunDir
from .._system import declared, like_for_like
from .._task.protocols import UsesTools, stop_tools
from .._types import Example
from .._values.run_config import RunConfig, examples_in_flight
from .._values.urls import redacted
from . import rescore
from .cost import AttemptCost, attempt_cost, run_cost
from .example import StoppedAtFailure, made_from, process_example, record_failed, sample_record
from .finished import finished_keys
from .interrupted import RunInterrupted
from .lifecycle import run_interruptible, run_together
from .model_contents import contents_now, model_contents
from .planning import PlannedTask
from .plugin_values import task_records
from .preflight import check_free_space, own_query_warnings, preflight
from .progress import Progress
from .reading import RecordReader
from .run_engines import Engines
from .services import ExampleServices, RunServices
from .task_corpus import build_task_index
from .workers import refuse_in_worker_start, use_ready_threads

log = logging.getLogger(__name__)

__all__ = ["Evaluator", "RunConfig", "RunInterrupted", "RunOutcome", "sample_record"]


@dataclass
class RunOutcome:
    typed_results: Results  # results.json, as written or (a finished run resumed) as `read_results` reads it
    run_dir: Path
    already_finished: bool = False  # --resume of a finished run with nothing left to do
    rebuilt: bool = False  # ... whose results.json was missing or unreadable: rebuilt from the samples

    @property
    def results(self) -> dict[str, Any]:
        """results.json's object, as the console and plugin tests read it."""
        return self.typed_results.to_dict()

    @property
    def complete(self) -> bool:
        return self.typed_results.complete


class Evaluator:
    def __init__(self, config: RunConfig, registry: Registry) -> None:
        """The run planned and pre-flighted (every option, data file and prerequisite; all problems at once,
        `PreflightError`, nothing written). No model loads and no index opens here: the run's services
        (ragbench._run.services) open when it starts, after its folder's lock."""
        refuse_in_worker_start()  # a script without the __main__ guard, re-run by a worker process
        # imports while the data loads, joined before the engines load
        self.preloading = preload(config.model, *config.judges, config.nli, *config.role_models.values())
        self.config = config
        self.registry = registry  # the command's (ragbench._cli.registry), for every component the run loads
        self.planned, self.checks = preflight(config, self.registry)
        for line in own_query_warnings(config, self.registry, self.planned):
            log.warning("ragbench: warning: %s", line)
        self.run_dir = RunDir(config.run_dir())
        self.retriever_metadata: dict[str, Any] = {}  # the retriever's and the components', once opened
        self.retriever_contents: dict[str, Any] = {}  # ... and their contents (sha256s), read once
        self.services: RunServices | None = None  # this run's, from its start
        self.model_contents: dict[str, str] = {}  # "kind:model content_id" by place (Engines.content_ids)
        self.checkpoints: dict[str, TaskCheckpoint] = {}  # by task, for tasks whose records were read
        self.changed_data: set[str] = set()  # tasks whose data changed since the run started
        self.scoring_only = False  # --resume of a finished run whose only work left is metrics that failed
        self.attempt_id = time.strftime("%Y%m%dT%H%M%S") + f"-{time.perf_counter_ns() % 10**6:06d}"
        self.cost: AttemptCost  # this attempt's, set when the run folder is started (`run`)
        self.versions: dict[str, Any] | None = None  # provenance for results.json, taken as the run starts

    def run(self) -> RunOutcome:
        """The run, holding its folder's lock (ragbench._storage.run_lock) to the end, however it ends."""
        with self.run_dir.held(lock_now=self.config.resume):
            return self._run_locked()

    def _run_locked(self) -> RunOutcome:
        """The run, on services of its own (ragbench._run.services), closed whatever way it ends."""
        config = self.config
        with RunServices(config, self.registry, self.run_dir) as services:
            self.services = services
            self.open_retrieval(services)
            if config.resume:
                finished = self._finished_outcome()
                if finished is not None:
                    return finished
            services.open_resources(self.planned)  # the workers start in the background, while the engines load
            recorded = (self.run_dir.meta or {}).get("config") if self.scoring_only else None  # engines not loaded
            engines = services.open_engines(self.planned, system=not self.scoring_only, preloading=self.preloading)
            self.model_contents = model_contents(engines, self.registry, recorded)
            self.check_models(engines)
            fingerprints = self.data_fingerprints()
            self.changed_data = set(self.run_dir.data_changed(fingerprints)) if config.resume else set()
            services.start_folder(
                self.full_config(),
                config.identity(),
                config.config_hash(),
                config.resume,
                config.overwrite,
                fingerprints,
            )
            self.cost = AttemptCost(self.attempt_id, self.run_dir.record_attempt)
            self.versions = provenance()
            self.cost.save()  # the attempt counts from its start, whatever stops it
            services.open_cache()
            try:
                scheduler = run_interruptible(self._execute(services))
            except KeyboardInterrupt as exc:
                services.interrupted = True
                raise RunInterrupted(self.run_dir.path, self._saved(), self._known_total(), signal_of(exc)) from None
        results = self.collect(scheduler, self.cost.examples, time.perf_counter() - self.cost.started)
        attempt = results.cost["this_attempt"]
        assert attempt is not None  # collect() counts this attempt
        self.run_dir.record_attempt(attempt)
        self.finish(results)
        return RunOutcome(results, self.run_dir.path)

    def open_retrieval(self, services: RunServices) -> None:
        """The run's retriever and components (their models load now), and what run.json records of them."""
        build_task_index(self.config, self.planned, self.registry)  # no --retriever, a task's own corpus: its index
        retriever, components = services.open_retrieval()
        self.retriever_metadata = {**retriever.metadata(), **components.metadata()}
        self.retriever_contents = {**retriever.contents(), **components.contents()}

    def check_models(self, engines: Engines) -> None:
        """Each system's `check_model` on the loaded model, every problem at once (`PreflightError`)."""
        check = Preflight()
        for planned in self.planned if engines.model is not None else ():
            with check.step(f"system {self.config.system} can use model {engines.model.model} ({planned.name})"):
                planned.system.check_model(engines.model)
        check.raise_if_failed()
        self.checks.checked.extend(check.checked)

    def check_services(self, models: bool = True) -> None:
        """`ragbench check`: the retriever and components opened (a bad index fails here) and, with `models`,
        the engines loaded and every `check_model` run; all closed again, nothing written."""
        with RunServices(self.config, self.registry, self.run_dir) as services:
            self.open_retrieval(services)
            if models:
                self.check_models(services.open_engines(self.planned, preloading=self.preloading))

    def check_free_space(self) -> None:
        """`ragbench check`: the free space where the run writes (a warning when short; the data is counted)."""
        check_free_space(self.config, self.planned, self.checks)

    def _finished_outcome(self) -> RunOutcome | None:
        """--resume of a run marked finished: refused (`ConfigError`) when a task's config or a model's files
        changed since it started, as an unfinished run's; None (the run goes on: the data is read, records that
        changed run again) when a task's data fingerprint changed. Else its outcome when every record of the
        data has a sample that needs no new attempt (as many as run.json counts, else the data is read);
        results.json is read back, or rebuilt from the samples when it is missing or unreadable (no engine
        loads). None when examples are left to run (a sample line was lost, or an example failed): the run
        goes on; or when only metrics that failed are left to score (`scoring_only`: the system's engines do
        not load)."""
        meta = self.run_dir.meta
        if not meta or not meta.get("finished"):
            return None
        config = meta.get("config")
        recorded = config if isinstance(config, dict) else {}
        self.run_dir.check_same_inputs(
            {
                "task_configs": self.task_configs(),
                "model_contents": contents_now(self.registry, recorded.get("model_contents")),
                "retriever_contents": self.retriever_contents,
            }
        )
        changed = self.run_dir.data_changed(self.data_fingerprints())
        if changed:
            log.warning(
                "ragbench: %s is finished, but the data of task %s changed since it started: the data is read "
                "again and the records that changed run again",
                self.run_dir.path,
                ", ".join(changed),
            )
            return None
        records = meta.get("records") or {}
        if (
            not all(len(finished_keys(self.run_dir, p.name)) == records.get(p.name) for p in self.planned)
            and next(self._work(), None) is not None
        ):  # the data is read only when a count is short
            return None
        try:
            results = read_results(self.run_dir.path / "results.json", "--resume")
        except NewerResults:
            raise
        except ConfigError:  # missing, damaged or no run's results: rebuilt from the samples
            results = None
        if rescore.pending(self.run_dir, self.planned) or (results is not None and metric_failed(results)):
            self.scoring_only = True  # metrics failed: they score again (their examples are not run again)
            return None
        if results is None:
            results = self.collect(None, 0, 0.0)
            self.finish(results)
            return RunOutcome(results, self.run_dir.path, already_finished=True, rebuilt=True)
        return RunOutcome(results, self.run_dir.path, already_finished=True)

    def task_configs(self) -> dict[str, Any]:
        """Each task's `Task.config()`, as run.json reads back (values JSON cannot hold as their text)."""
        configs: dict[str, Any] = json.loads(json.dumps({p.name: p.task.config() for p in self.planned}, default=str))
        return configs

    def data_fingerprints(self) -> dict[str, Any]:
        """Each task's data fingerprint (`Task.data_fingerprint`), recorded in run.json when the run starts."""
        return {p.name: p.task.data_fingerprint() for p in self.planned}

    def _saved(self) -> int:
        """Examples whose sample is saved and needs no new attempt. Where a task's data changed since the run
        started, a sample from before this attempt counts once its record was read again, unchanged."""
        saved = 0
        for p in self.planned:
            finished, read = finished_keys(self.run_dir, p.name), self.checkpoints.get(p.name)
            saved += read.kept(finished) if read is not None and p.name in self.changed_data else len(finished)
        return saved

    def full_config(self) -> dict[str, Any]:
        out = asdict(self.config)
        out["tasks"] = [p.name for p in self.planned]
        uses_llm = any(declared(p.system).uses_llm for p in self.planned)
        out["model"] = (self.config.model or "hf:embedded") if uses_llm else None
        out["task_configs"] = self.task_configs()
        out["system_config"] = {p.name: p.system.config() for p in self.planned}
        out["like_for_like"] = {p.name: like_for_like(p.system) for p in self.planned}
        out["metric_configs"] = {p.name: [m.config() for m in p.metrics] for p in self.planned}
        out["retriever_metadata"] = self.retriever_metadata
        out["retriever_contents"] = self.retriever_contents
        out["model_contents"] = self.model_contents
        recorded: dict[str, Any] = redacted(json.loads(json.dumps(out, default=str)))  # no URL's credentials
        return recorded

    # --- execution ------------------------------------------------------------------------------
    def _work(self) -> Iterator[tuple[PlannedTask, int, Example | RecordError]]:
        """Every record still to do with its position in the task's stream, task after task, streamed
        (the limit applies per task): what the task's checkpoint says must run (`TaskCheckpoint.needs_run`:
        not saved yet, failed, or changed since it was saved). Checkpoint keys are example ids: a repeated id
        is a bad record, and so is gold of a shape the metrics would mis-score (`Example.gold_error`)."""
        for planned in self.planned:
            read = self.checkpoints[planned.name] = TaskCheckpoint(
                finished_keys(self.run_dir, planned.name) if self.config.resume else {}
            )
            for position, item in enumerate(task_records(planned.task)):
                if self.config.limit is not None and position >= self.config.limit:
                    break
                if isinstance(item, Example):
                    if read.repeats(item.id):
                        item = RecordError(
                            planned.name,
                            position + 1,
                            f"example id {item.id!r} repeats an earlier record's (ids must be unique in a task)",
                            "id",
                        )
                    elif item.gold_error is not None:  # it would be scored wrong, silently
                        item = RecordError(planned.name, position + 1, item.gold_error)
                key = checkpoint_key(item.id if isinstance(item, Example) else None, position)
                if read.needs_run(key, position, partial(made_from, item)):
                    yield planned, position, item

    async def _execute(self, services: RunServices) -> Scheduler:
        """The examples, `max_inflight` at a time, as one task group (ragbench._run.lifecycle.run_together):
        teardown begins only when every example has ended, so nothing is saved once it has begun."""
        await use_ready_threads()  # no thread is started inside a callback (the loop's close shuts it down)
        assert self.cost is not None
        try:
            async with services.calls() as calls:
                assert services.scheduler is not None and services.recorder is not None and services.engines
                self.cost.stats = services.scheduler.stats
                inflight = examples_in_flight(self.config.max_inflight, services.engines.model)
                progress = Progress(
                    services.scheduler.stats, self._known_total(), inflight, enabled=self.config.progress
                )
                saver = asyncio.ensure_future(self.cost.save_every())  # whether or not examples finish
                following = asyncio.ensure_future(progress.follow())
                try:
                    calls.tools = await self._tools(services.recorder)
                    if self.config.resume:  # saved examples whose metrics failed score again; the system does not run
                        await rescore.rescore_saved(
                            self.planned, self.run_dir, calls, inflight, self.cost.at_save, self.config.fail_fast
                        )
                    read = RecordReader(iter(()) if self.scoring_only else self._work())
                    await run_together(self._worker(read, calls, progress) for _ in range(inflight))
                finally:
                    saver.cancel()
                    following.cancel()
                    try:
                        progress.close()
                        for planned in self.planned:
                            await stop_tools(planned.task)
                    finally:
                        await asyncio.gather(saver, following, return_exceptions=True)
        finally:
            self.cost.save()  # replaced by the final cost if the run ends well
        return services.scheduler

    async def _worker(self, read: RecordReader[Any], calls: ExampleServices, progress: Progress) -> None:
        """One of the run's `max_inflight` workers: the next record still to do, until none is left."""
        assert self.cost is not None and self.services is not None and self.services.resources is not None
        workers = self.services.resources.workers
        with calls.examples.slot() if calls.examples is not None else nullcontext():
            while (entry := await read.next()) is not None:
                planned, position, item = entry
                sample = await process_example(planned, item, calls, position)
                workers.raise_if_unavailable()  # every later example would fail the same way
                self.run_dir.append_sample(planned.name, sample.line, self.cost.at_save(saving=1))
                self.cost.examples += 1
                progress.advance(sample.record, failed=record_failed(sample.record))
                if self.config.fail_fast and record_failed(sample.record):  # saved: --resume tries it again
                    raise StoppedAtFailure(planned.name, sample.record, self.run_dir.path)

    async def _tools(self, recorder: CallRecorder) -> dict[str, dict[str, Any]]:
        """Each task's tools (ctx.tools), recorded call by call; under --replay, answered from the
        recorded run's calls instead (no task setup: no KG server is started)."""
        if self.config.replay_tools is not None:
            replayed = load_replay_tools(self.config.replay_tools)
            return {planned.name: replayed.get(planned.name, {}) for planned in self.planned}
        tools = {
            planned.name: await planned.task.setup() if isinstance(planned.task, UsesTools) else {}
            for planned in self.planned
        }
        recorder.tool_names({task: sorted(names) for task, names in tools.items()})
        return {task: recording_tools(task, named, recorder) for task, named in tools.items()}

    def _known_total(self) -> int | None:
        """Records this run will process, for the progress bar's ETA (None when a task cannot tell cheaply)."""
        total = 0
        for planned in self.planned:
            size = planned.task.size_hint()
            if size is None and self.config.limit is None:
                return None
            total += min(x for x in (size, self.config.limit) if x is not None)
        return total

    def _attempt_cost(self, scheduler: Scheduler, processed: int, wall: float) -> dict[str, Any]:
        return attempt_cost(self.attempt_id, scheduler.stats.to_dict(), processed, wall)

    # --- results: their modules (numpy's statistics, the report) load when a run ends, not before its first call
    def collect(self, scheduler: Scheduler | None, processed: int, wall: float) -> Results:
        """results.json from the samples; `scheduler` None: rebuilt with no attempt of its own."""
        from .assemble import run_results

        attempt = self._attempt_cost(scheduler, processed, wall) if scheduler is not None else None

        def cost() -> Cost:  # the earlier attempts' as brought up to their saved samples'
            services = self.services
            assert services is not None  # (a run rebuilt from its samples opened none: their statistics are empty)
            return run_cost(
                [a for a in self.run_dir.attempts() if a.get("id") != self.attempt_id],
                attempt,
                {"response_cache": services.response_cache_stats, "page_cache": services.page_cache_stats},
                services.retrieval_stats,
                services.nli_stats,
                services.engine_stats,
            )

        return run_results(
            self.planned, self.run_dir, self.config, self.checkpoints, cost, self.full_config(), self.versions
        )

    def finish(self, results: Results) -> None:
        """results.json and report.md written, the run folder marked finished."""
        from .._reports.finish import finish_run

        finish_run(self.run_dir, results)
