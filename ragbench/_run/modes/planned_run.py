"""A run as planned and pre-flighted, which every run mode (ragbench._run.modes.run_modes) works from: its
configuration, registry, planned tasks and folder, and what each mode reads of them - the tasks' configs and
data fingerprints, the records still to do (`RecordsToDo`), the examples saved, run.json's `config` and the
results assembled from the samples."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..._checks import Preflight
from ..._config.run_config import RunConfig
from ..._cost.cost_schema import Cost
from ..._cost.run_cost import ServiceReports, run_cost
from ..._errors import RecordError
from ..._records import read_samples
from ..._registry import Registry
from ..._reports.results.schema import Results
from ..._storage.checkpoint import TaskCheckpoint, checkpoint_key
from ..._storage.run_record import AttemptCost
from ..._storage.rundir import RunDir
from ..._system import System, like_for_like
from ..._task import Task
from ..._types import Example
from ..._values.json_values import JsonObject
from ..._values.urls import redacted
from ..._yaml_tasks.task import YamlTask
from ..example import made_from
from ..models.run_engines import Engines
from ..plan.data_paths import recorded_data_paths
from ..plan.planned_task import PlannedTask
from ..plan.task_corpus import build_task_index
from ..plan.task_files import recorded_task_files
from ..plugin_values import task_records
from ..sequences import Entry, InOrder, Sequences, Work
from ..services import OpenRetrieval, RunServices


def system_of(planned: PlannedTask) -> System:
    """The system of a run's task (only rescoring plans tasks without one)."""
    assert planned.system is not None, f"task {planned.name} of a run has no system"
    return planned.system


def task_prompts(task: Task) -> str:
    """The family of a task's own prompts: a YAML task's named prompt style (`prompt.style`: flashrag, selfrag
    ...), else "task" (prompts of its own: a Jinja2 template, a benchmark's code)."""
    style = task.spec.prompt.style if isinstance(task, YamlTask) else "template"
    return "task" if style == "template" else style


@dataclass(frozen=True)
class Retrieved:
    """The run's retriever and components, open (`opened`), and what run.json records of them."""

    opened: OpenRetrieval
    metadata: dict[str, Any]
    contents: dict[str, Any]  # their contents' sha256s


@dataclass(frozen=True)
class PlannedRun:
    """The run planned and pre-flighted (`checks`); `preloading`: the engines' imports begun in the background."""

    config: RunConfig
    registry: Registry  # the command's (ragbench._cli.registry), for every component the run loads
    planned: list[PlannedTask]
    run_dir: RunDir
    checks: Preflight
    preloading: threading.Thread | None
    task_index: Path | None  # the index cache's folder of the tasks' own corpus the run searches, built on opening

    def open_retrieval(self, services: RunServices) -> Retrieved:
        """The run's retriever and components (their models load now), and what run.json records of them."""
        build_task_index(self.task_index, self.planned, self.registry)
        opened = services.open_retrieval()
        return Retrieved(opened, opened.metadata(), opened.contents())

    def check_models(self, engines: Engines) -> None:
        """Each system's `check_model` on the loaded model, every problem at once (`PreflightError`)."""
        check = Preflight()
        for planned in self.planned if engines.model is not None else ():
            with check.step(f"system {self.config.what.system} can use model {engines.model.model} ({planned.name})"):
                system_of(planned).check_model(engines.model)
        check.raise_if_failed()
        self.checks.checked.extend(check.checked)

    def task_configs(self) -> JsonObject:
        """Each task's `Task.config()`, as run.json reads back (values JSON cannot hold as their text)."""
        configs: JsonObject = json.loads(json.dumps({p.name: p.task.config() for p in self.planned}, default=str))
        return configs

    def data_fingerprints(self) -> JsonObject:
        """Each task's data fingerprint (`Task.data_fingerprint`), recorded in run.json when the run starts."""
        return {p.name: p.task.data_fingerprint() for p in self.planned}

    def known_total(self) -> int | None:
        """Records this run will process, for the progress bar's ETA (None when a task cannot tell cheaply)."""
        total = 0
        for planned in self.planned:
            size = planned.task.size_hint()
            if size is None and self.config.what.limit is None:
                return None
            total += min(x for x in (size, self.config.what.limit) if x is not None)
        return total

    def calls_at_most(self) -> int | None:
        """The most LLM calls an example of this run makes, where every task's system bounds them (the progress
        bar's ETA before an example ends); None otherwise."""
        bounds = [calls_bound(system_of(p)) if p.system is not None else None for p in self.planned]
        known = [bound for bound in bounds if bound is not None]
        return max(known) if known and len(known) == len(bounds) else None

    def example_workers(self, inflight: int) -> int:
        """How many example workers run `inflight` examples at once: fewer where --limit bounds the records
        (each worker takes records until none is left: one with none to take only starts and stops)."""
        if self.config.what.limit is None:
            return inflight
        return max(1, min(inflight, self.config.what.limit * len(self.planned)))

    def full_config(
        self, retrieved: Retrieved, model_contents: dict[str, str], model_urls: dict[str, list[str]]
    ) -> JsonObject:
        """run.json's and results.json's `config`: the RunConfig with what the run planned and opened, and where
        its models were sent (`model_urls`: ragbench._cost.prices; none: no key, as older runs)."""
        out = self.config.flat()
        out["tasks"] = [p.name for p in self.planned]
        uses_llm = any(system_of(p).declares.uses_llm for p in self.planned)
        out["model"] = (self.config.models.model or "hf:embedded") if uses_llm else None
        out["task_configs"] = self.task_configs()
        data_paths = recorded_data_paths(self.config.what)
        if data_paths:  # where a later rescore or --replay finds the data, from any folder (none: as older runs)
            out["data_paths"] = data_paths
        task_files = recorded_task_files(self.config.what, self.planned, self.registry)
        if task_files:  # where a later rescore or --replay finds the task files (none: as older runs recorded)
            out["task_files"] = task_files
        out["system_config"] = {p.name: system_of(p).config() for p in self.planned}
        out["like_for_like"] = {p.name: like_for_like(system_of(p), task_prompts(p.task)) for p in self.planned}
        out["metric_configs"] = {p.name: [m.config() for m in p.metrics] for p in self.planned}
        out["retriever_metadata"] = retrieved.metadata
        out["retriever_contents"] = retrieved.contents
        out["model_contents"] = model_contents
        if model_urls:
            out["model_urls"] = model_urls
        recorded: JsonObject = redacted(json.loads(json.dumps(out, default=str)))  # no URL's credentials
        return recorded

    def records_to_do(self, resume: bool, read: dict[str, TaskCheckpoint] | None = None) -> RecordsToDo:
        """The records still to do (`RecordsToDo`); with `resume` the saved samples are read, else none counts;
        `read`: the checkpoints of the tasks whose records were read already (as the run's mode was decided)."""
        return RecordsToDo(self, resume, dict(read or {}))

    def saved(self, checkpoints: dict[str, TaskCheckpoint], changed_data: frozenset[str]) -> int:
        """Examples whose sample is saved and needs no new attempt. Where a task's data changed since the run
        started (`changed_data`), a sample from before this attempt counts once its record was read again,
        unchanged."""
        saved = 0
        for p in self.planned:
            finished, read = finished_keys(self.run_dir, p.name), checkpoints.get(p.name)
            saved += read.kept(finished) if read is not None and p.name in changed_data else len(finished)
        return saved

    # --- results: their modules (numpy's statistics, the report) load when a run ends, not before its first call
    def results(self, assembled: Assembled, reports: ServiceReports) -> Results:
        """results.json from the samples, with the run's cost: the earlier attempts' (as brought up to their
        saved samples') and this attempt's (`assembled.attempt`; None: rebuilt, with no attempt of its own),
        and what the services reported as they ended (`reports`; a run rebuilt from its samples opened none:
        `ServiceReports()`)."""
        from ..assemble import ResultsSettings, run_results

        def cost() -> Cost:
            return run_cost(self.run_dir.attempts(but=assembled.attempt_id), assembled.attempt, reports)

        scoring = ResultsSettings.of(self.config, assembled.config)  # its judging files read now
        return run_results(
            self.planned,
            self.run_dir,
            scoring,
            checkpoints=assembled.checkpoints,
            cost=cost,
            full_config=assembled.config,
            versions=assembled.versions,
        )

    def finish(self, results: Results, attempt: AttemptCost | None = None) -> None:
        """results.json and report.md written, the run folder marked finished with `attempt`'s final cost
        (None: results rebuilt, with no attempt of their own)."""
        from ..._reports.run_end import finish_run

        finish_run(self.run_dir, results, attempt)


@dataclass(frozen=True)
class Assembled:
    """What a run's results.json is assembled with, besides its samples."""

    checkpoints: dict[str, TaskCheckpoint]  # by task, of the tasks whose records were read
    config: JsonObject  # `PlannedRun.full_config`
    attempt_id: str | None = None
    attempt: AttemptCost | None = None  # this attempt's cost (`attempt_cost`); None: a rebuilt results.json
    versions: dict[str, Any] | None = None  # the provenance taken as the attempt started; None: taken now


def finished_keys(run_dir: RunDir, task: str) -> dict[str, str | None]:
    """What `--resume` need not run again: keys of the task's saved records that need no new attempt: scored
    examples and bad records (a failed example is tried again), each with what it was made from: the digest of its
    example (`example_sha256`; None in a sample of an older ragbench), or a bad record's error. Read without texts,
    one record at a time."""
    return {
        checkpoint_key(r.id, r.index): r.error if r.bad_record else r.example_sha256
        for r in read_samples(run_dir.sample_path(task), has_text=False)
        if r.error is None or r.bad_record
    }


@dataclass(frozen=True)
class RecordsToDo:
    """Every record of a run still to do, with its position in the task's stream, task after task, streamed
    (`each`; the limit applies per task): what the task's checkpoint says must run (`TaskCheckpoint.needs_run`:
    not saved yet, failed, or changed since it was saved; with `resume` the saved samples are read, else none
    counts). `checkpoints` holds the checkpoint of each task whose records were read, as far as they were read
    (what the examples saved and results.json are counted against). Checkpoint keys are example ids: a repeated id
    is a bad record, and so is gold of a shape the metrics would mis-score (`Example.gold_error`). A sequenced
    task's records of one sequence come as one entry, in order (ragbench._run.sequences)."""

    run: PlannedRun
    resume: bool
    checkpoints: dict[str, TaskCheckpoint]  # by task, each made as its records begin to be read

    def each(self, passed: Callable[[], None] | None = None) -> Work:
        """The records to do; `passed` is called for each record passed as saved already (the progress bar's
        examples done)."""
        for planned in self.run.planned:
            order = Sequences.of(planned, self.run.run_dir)
            records = self.task_records(planned, order, passed)
            yield from records if order is None else order.grouped(records)

    def task_records(
        self, planned: PlannedTask, order: Sequences | None, passed: Callable[[], None] | None
    ) -> Iterator[Entry]:
        """The records to do of one task, each alone; `order`: the reading of a sequenced task's sequences."""
        run = self.run
        read = self.checkpoints[planned.name] = TaskCheckpoint(
            finished_keys(run.run_dir, planned.name) if self.resume else {}
        )
        for position, item in enumerate(task_records(planned.task)):
            if run.config.what.limit is not None and position >= run.config.what.limit:
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
            item = order.checked(item, position) if order is not None else item
            key = checkpoint_key(item.id if isinstance(item, Example) else None, position)
            runs = read.needs_run(key, position, partial(made_from, item))
            if order.runs(item, runs) if order is not None else runs:
                yield planned, position, item
            elif passed is not None:
                passed()

    def first(self) -> Entry | InOrder | None:
        """The first record to do, None when none is left (the tasks read up to it)."""
        return next(self.each(), None)


def calls_bound(system: Any) -> int | None:
    """The most LLM calls an example of `system` makes: the value of the option its declaration names
    (`SystemDeclaration.calls_at_most`), None where it names none."""
    option = system.declares.calls_at_most
    return None if option is None else int(getattr(system, option))
