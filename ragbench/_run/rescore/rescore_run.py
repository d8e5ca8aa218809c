"""`ragbench rescore RUN`: a finished run's saved predictions scored again - with other metrics, other
judges or NLI model, or after metrics failed - without running the system, into a new run folder.

The original run is never changed: the rescored run goes to `--output`, by default the folder
`RUN__rescored` beside it. It holds what a run folder holds: run.json (the run's configuration with the
new metric options, and `rescored_from`), samples/ (every record of RUN, its scoring replaced:
ragbench._run.rescore.saved_predictions), results.json and report.md, and the judges' and NLI model's exchange logs and
response cache of this scoring. Failed examples and bad records are copied as they are (they have no
prediction); the run's cost, the system's reports, statistics and format checks are the original's
(they describe the system's outputs, which do not change), and `cost.rescoring` is this scoring's cost.

`--metrics` is read as on a run, against the run's own selection: NAME,... replaces it, +NAME (or
TASK:+NAME) adds to it. `--metric-arg` adds to the run's metric options; `--judge` and `--nli` (with
their options) replace the run's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from ..._checks import Preflight
from ..._config.limits import examples_in_flight
from ..._config.run_config import RunConfig, run_options
from ..._cost.cost_schema import RescoringCost
from ..._cost.prices import model_urls, recorded_urls
from ..._cost.run_cost import CallReports, attempt_cost
from ..._errors import ConfigError, RecordError
from ..._metric import reported_keys
from ..._records import SampleRecord, read_samples, sample_line
from ..._registry import Registry
from ..._reports.aggregation import results_sections
from ..._reports.compare.like_for_like import judge_names
from ..._reports.judging.judge_swap import judge_swap
from ..._reports.results.file import read_results
from ..._reports.results.provenance import provenance
from ..._reports.results.schema import JudgeSwap, Results, TaskSections
from ..._reports.run_end import finish_run
from ..._storage.files import file_there, folder_problem
from ..._storage.jsonl import dumps
from ..._storage.run_record import RunRecord
from ..._storage.rundir import RunDir
from ..._storage.sample_files import sample_file
from ..._values.json_values import JsonObject
from ..._values.urls import redacted
from ..assemble import ResultsSettings, scored_task
from ..example import record_failed
from ..lifetime.lifecycle import run_interruptible
from ..outcome import RunOutcome
from ..plan.data_paths import with_data_paths
from ..plan.engine_checks import check_engines
from ..plan.metric_plan import needs
from ..plan.planned_task import PlannedTask
from ..plan.planning import plan_scoring
from ..plan.preflight import check_run_options
from ..plan.task_files import recorded_task_files, with_task_files
from ..progress import Progress
from ..services import Calls, Opened, RunServices, held_services
from .saved_predictions import bounded, rescore_record, scorable

SUFFIX = "__rescored"  # the default output folder: RUN__rescored
# the original results' sections that describe the system's outputs, kept as they were
KEPT_SECTIONS = ("format_adherence", "checkpoint_repairs", "seed_policy", "system_reports", "system_stats")

log = logging.getLogger(__name__)


def rescore_run(
    source: str | Path, changes: dict[str, Any], registry: Registry, folders: Sequence[str] = ()
) -> RunOutcome:
    """Score RUN's saved predictions again with `changes` to its RunConfig (metrics, metric_args,
    judges, judge_args, nli, nli_args, nli_format, output, overwrite, max_inflight, cache,
    bootstrap_iters: see the module's docstring); every problem is found before anything is written. The run's
    task files are found where it read them, or in `folders` (--include-path: ragbench._run.plan.task_files)."""
    rescoring = RescoreRun(Path(source), changes, registry, folders)
    # the new folder's lock is taken by `start`
    with held_services(rescoring.config, registry, rescoring.target, lock_now=False) as services:
        return rescoring.run_in(services)


class RescoreRun:
    """`ragbench rescore`'s mode over a run's services: what scoring needs (no retriever, no system model)."""

    def __init__(self, source: Path, changes: dict[str, Any], registry: Registry, folders: Sequence[str] = ()) -> None:
        """The rescoring planned and pre-flighted: every problem at once (`PreflightError`), nothing written."""
        recorded, self.original = finished_run(source)
        self.source, self.recorded, self.registry = source, recorded.config, registry
        found = with_task_files(
            with_data_paths(self.recorded, recorded.data, "rescore", required=False), folders, "rescore"
        )
        self.config = config = rescoring_config(found, changes, source)
        check = Preflight()
        check_run_options(config, check, registry)  # as a run's: its numbers, a --cache that is not a folder
        with check.step(f"output folder {config.run_dir()}"):
            check_output(config, source)
        recorded_args = self.recorded.get("metric_args")  # absent in a run.json of an older ragbench
        inherited = frozenset(recorded_args if isinstance(recorded_args, dict) else ()) - set(
            changes.get("metric_args") or {}
        )
        planned, metric_args = plan_scoring(config.what, config.judging, registry, check, inherited)
        self.planned = planned
        # without the run's options of metrics no longer asked
        self.config = config = config.changed(metric_args=metric_args)
        check_engines(
            config.models,
            config.judging,
            registry,
            check,
            uses_llm=False,
            uses_nli=needs(planned, "nli"),
            uses_judges=needs(planned, "judge"),
        )
        for task in planned:
            if not file_there(sample_file(source, task.name)):
                check.problem(
                    f"{source}/samples/{task.name}.jsonl is missing: the saved predictions are what is re-scored"
                )
        check.raise_if_failed()
        self.target = RunDir(config.run_dir())
        self.full_config = rescored_config(self.recorded, config, planned, source)
        task_files = recorded_task_files(config.what, planned, registry)
        if task_files:  # where they were found this time
            self.full_config["task_files"] = task_files
        self.swaps_judges = bool(changes.get("judges"))  # other judges: how far they agree with the run's own

    def run_in(self, services: RunServices) -> RunOutcome:
        """The rescoring on `services`, which it closes before results.json is assembled."""
        config, planned = self.config, self.planned
        resources = services.open_resources(planned)  # the process pool a metric uses (CRAG's truncation)
        engines = services.open_engines(planned, system=False)  # the judges and the NLI model
        # where the judges it loaded send their calls now; the run's model and roles (not loaded) where they did
        now = model_urls(config.models, config.judging, self.registry, engines.loaded_places())
        urls = {**(recorded_urls(self.recorded) or {}), **now}
        if urls:
            self.full_config = {**self.full_config, "model_urls": {place: [*each] for place, each in urls.items()}}
        services.start_folder(self.full_config)
        # its own cache starts as RUN's: the calls RUN made are answered, not paid again
        if config.output.cache is None:
            copy_cache(self.source, self.target.path)
        opened = Opened(resources, engines, services.open_cache())
        started = time.perf_counter()
        total = sum(self.original.counts[task.name]["records"] for task in planned if task.name in self.original.counts)
        rescored, reports = run_interruptible(score_saved(planned, self.source, services, opened, total))
        services.close()
        cost = cast(
            RescoringCost,
            {
                **attempt_cost("rescoring", reports.calls, rescored, time.perf_counter() - started),
                **({"nli": reports.nli} if reports.nli is not None else {}),
                **({"other_engines": reports.other_engines} if reports.other_engines else {}),
            },
        )
        results = rescored_results(planned, self.original, self.target, config, self.full_config, cost)
        if self.swaps_judges:
            swap = swapped_judge_report(planned, self.source, self.target, self.recorded, self.full_config)
            results.judge_swap = swap or None
        finish_run(self.target, results)
        return RunOutcome(results, self.target.path)


def swapped_judge_report(
    planned: list[PlannedTask], source: Path, target: RunDir, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, dict[str, JudgeSwap]]:
    """results.json `judge_swap`: per task, every key of its judged metrics scored with the rescoring's judges
    against the run's own (ragbench._reports.judging.judge_swap)."""
    judges = (judge_names(before), judge_names(after))
    report = {}
    for task in planned:
        keys = [key for metric in task.metrics if "judge" in metric.declares.needs for key in reported_keys(metric)]
        swap = judge_swap(
            sample_file(source, task.name),
            target.sample_path(task.name),
            keys,
            judges,
            after["bootstrap_iters"],
            after["seed"],
        )
        if swap:
            report[task.name] = swap
    return report


def copy_cache(source: Path, target: Path) -> None:
    """RUN's response cache (cache.sqlite and its write-ahead log, where there is one) copied into the rescored
    run's folder; RUN's files are only read."""
    for name in ("cache.sqlite", "cache.sqlite-wal"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)


def check_output(config: RunConfig, source: Path) -> None:
    """The rescored run's folder: not RUN itself, and new unless --overwrite."""
    output = config.run_dir()
    if output.resolve() == source.resolve():
        raise ConfigError(
            f"rescore --output {output}: is the run being re-scored; give a new folder (the original is kept as it was)"
        )
    if output.exists() and not output.is_dir():
        raise ConfigError(f"rescore --output {output}: is a file; give a folder")
    if not config.output.overwrite and (output / "run.json").exists():
        raise ConfigError(
            f"rescore --output {output}: already holds a run; --overwrite replaces it, or give another --output"
        )


def finished_run(source: Path) -> tuple[RunRecord, Results]:
    """RUN's run.json and results.json; a folder that holds no finished run is a ConfigError."""
    problem = folder_problem(source)
    recorded = RunDir(source).record if problem is None else None
    if recorded is None:
        raise ConfigError(f"rescore: {source} holds no ragbench run ({problem or 'no run.json'}); give a run folder")
    results_path = source / "results.json"
    if not recorded.finished or not file_there(results_path):
        raise ConfigError(
            f"rescore: {source} is not finished; finish it first with `ragbench ... --resume "
            f"--output {source}` (the options it was run with)"
        )
    return recorded, read_results(results_path, "rescore")


def rescoring_config(original: dict[str, Any], changes: dict[str, Any], source: Path) -> RunConfig:
    """The run's configuration with the rescoring's metric, judge and NLI options (see the module's docstring)."""
    config = {f.name: original[f.name] for f in run_options() if f.name in original}
    config.update({"resume": False, "output": str(source) + SUFFIX, "progress": False})
    given = {k: v for k, v in changes.items() if v not in (None, [], {})}
    metrics = given.pop("metrics", None)
    if metrics is not None:
        added = all(item.startswith("+") or item.partition(":")[2].startswith("+") for item in metrics)
        config["metrics"] = [*config.get("metrics", []), *metrics] if added else list(metrics)
    config["metric_args"] = {**config.get("metric_args", {}), **given.pop("metric_args", {})}
    if "judges" in given:
        config["judge_args"] = {}
    if "nli" in given:
        config["nli_args"] = {}
    config.update(given)
    return RunConfig.of(**config)


def rescored_config(original: JsonObject, config: RunConfig, planned: list[PlannedTask], source: Path) -> JsonObject:
    """run.json's and results.json's `config`: the original's, with the rescoring's options and metrics."""
    out = {
        **original,
        **config.flat(),
        "tasks": original.get("tasks", config.what.tasks),
        "model": original.get("model"),
        "metric_configs": {p.name: [m.config() for m in p.metrics] for p in planned},
        "rescored_from": str(source),
    }
    recorded: JsonObject = redacted(json.loads(json.dumps(out, default=str)))  # no URL's credentials
    return recorded


async def score_saved(
    planned: list[PlannedTask], source: Path, services: RunServices, opened: Opened, total: int | None = None
) -> tuple[int, CallReports]:
    """Every saved record of RUN into the target's samples, scored again where it holds a prediction, with the
    run's progress bar (of `total` examples) unless the config turns it off (--no-progress), on the calls of
    `opened` (no system model). Returns how many were scored and what the calls reported."""
    rescored = 0
    unreadable: list[RecordError] = []

    async def score_all(calls: Calls) -> None:
        config = services.config
        progress = Progress(calls.scheduler.stats, total, enabled=config.output.progress, batches=calls.batches)
        following = asyncio.ensure_future(progress.follow())

        async def score(item: tuple[PlannedTask, SampleRecord]) -> None:
            nonlocal rescored
            task, record = item
            if scorable(record):
                sample = await rescore_record(task, record, calls.example)
                text, record = sample.text, sample.record
                rescored += 1
            else:  # kept as it was, in the current layout
                text = dumps(sample_line(record))
            services.run_dir.append_sample(task.name, text)
            progress.advance(failed=record_failed(record))

        saved = (
            (task, record)
            for task in planned
            for record in read_samples(sample_file(source, task.name), unreadable, older_shapes=True)
        )
        try:
            await bounded(saved, score, examples_in_flight(config.limits.max_inflight), calls.example.examples)
        finally:
            following.cancel()
            progress.close()
            await asyncio.gather(following, return_exceptions=True)

    _, reports = await services.run_calls(opened, score_all, system=False)
    for error in unreadable:  # its example is not in the rescored run: counted there as missing
        log.warning("rescore: %s: not re-scored, counted as missing", error)
    return rescored, reports


def rescored_results(
    planned: list[PlannedTask],
    original: Results,
    target: RunDir,
    config: RunConfig,
    full_config: JsonObject,
    cost: RescoringCost,
) -> Results:
    """results.json of the rescored run: the scores from its samples, the rest kept from RUN's."""
    scores: dict[str, TaskSections] = {}  # by task
    scoring = ResultsSettings.of(config, full_config)
    for task in planned:
        before = original.counts.get(task.name)
        scores[task.name] = scored_task(
            task, target, scoring, expected=before["records"] + before["missing"] if before else None
        )
    return Results(
        **results_sections(scores, original.system_reports or {}),
        **{key: getattr(original, key) for key in KEPT_SECTIONS},
        cost={**original.cost, "rescoring": cost},
        config=full_config,
        rescored_from=str(full_config["rescored_from"]),
        versions=provenance(),
        date=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
