"""results.json assembled from a run folder's samples (a run's end, a rebuilt results.json, a rescoring):
each task's samples rewritten in data order and scored, the system's reports, as one `Results`."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .._config.run_config import RunConfig
from .._cost.budget import BudgetTally
from .._cost.call_cost import JudgeCostTally, ModelCostTally
from .._cost.cost_schema import Cost
from .._cost.efficiency import EfficiencyTally
from .._records import SampleRecord, read_rewritten_twice, saved_lines
from .._reports.aggregation import results_sections, task_scores
from .._reports.judging.human_agreement import JudgeCheckTally, add_ppi
from .._reports.results.provenance import provenance
from .._reports.results.sampling_used import SamplingTally
from .._reports.results.schema import Adherence, Results, TaskSections
from .._reports.system_hooks import system_hooks
from .._storage.checkpoint import TaskCheckpoint
from .._storage.rundir import RunDir
from .._values.json_values import JsonObject
from .judges.labels_and_prices import Judging, judging_of
from .plan.planned_task import PlannedTask

SEED_POLICY = (
    "every sampled call (temperature > 0) without its own seed gets sha256('{seed}:{task}:{example id}:"
    "{call number}'), so outputs do not depend on batch composition"
)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """CPython's cycle collector paused while a run's samples are read back and aggregated: that allocates
    millions of small acyclic objects (parsed JSON, views, records) that all stay alive, and each full
    collection walks every one of them again (results.json is made in about two thirds of the time:
    docs/performance.md, "Figures behind the code"). A collector the caller had paused stays paused."""
    paused_here = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused_here:
            gc.enable()


@dataclass(frozen=True)
class ResultsSettings:
    """What making results.json reads of a run's options: the bootstrap's rounds and seed, what its judges are
    checked against and priced at (`judging`, read when results.json is made), and whether every record was
    read (no --limit: a system's report may then speak of the whole data)."""

    bootstrap_iters: int
    seed: int
    judging: Judging
    judges: int  # how many --judge score each judged key (one judged once: its agreement not measured)
    complete_data: bool

    @classmethod
    def of(cls, config: RunConfig, recorded: JsonObject) -> ResultsSettings:
        """The settings of `config`'s results; `recorded`: its run.json config (where its models were sent)."""
        judging = judging_of(config.models, config.judging, recorded)
        return cls(
            config.judging.bootstrap_iters,
            config.what.seed,
            judging,
            len(config.judging.judges),
            config.what.limit is None,
        )


def scored_task(
    planned: PlannedTask,
    run_dir: RunDir,
    scoring: ResultsSettings,
    read: TaskCheckpoint | None = None,
    expected: int | None = None,
) -> TaskSections:
    """The task's sections of results.json: its samples rewritten in data order (`read`: at the places the data
    holds now, only the records it still holds), then read back once, one record at a time, both scored against
    `expected` records (the records read, else those in `read`, else those saved) without its texts
    (`task_scores`) and counted whole for the budget, the sampling sent, the judges' cost and their check against
    human labels (`scoring.judging`), the system's cost and its cost per correct answer (`efficiency`); no sample
    is held but those a corpus metric is given."""
    path = run_dir.finalize_samples(planned.name, saved_lines, read.positions if read is not None else None)
    expected = expected if expected is not None else read.records if read is not None else None
    tallies = (
        BudgetTally(),
        SamplingTally(),
        JudgeCheckTally(planned.name, planned.metrics, planned.task.scoring.slice_fields, scoring.judging.labels),
        JudgeCostTally(scoring.judging.prices),
        ModelCostTally(scoring.judging.prices),
        EfficiencyTally(planned.metrics, scoring.judging.prices),
    )

    def counted() -> Iterator[SampleRecord]:
        """The records without their texts, for `task_scores`, each whole one counted by the tallies first."""
        for without_text, whole in read_rewritten_twice(path):
            for tally in tallies:
                tally.add(whole)
            yield without_text

    scores = task_scores(
        counted(),
        planned.metrics,
        planned.task.scoring.slice_fields,
        expected,
        scoring.bootstrap_iters,
        scoring.seed,
        planned.task.scoring.missing_scores_zero,
        scoring.judges,
    )
    for tally in tallies:
        scores = {**scores, **tally.sections()}  # the cost room's sections (`CostSections`) among them
    add_ppi(scores["details"], scores.get("human_agreement", {}))  # each judged value's PPI interval beside it
    return scores


def run_results(
    planned_tasks: list[PlannedTask],
    run_dir: RunDir,
    scoring: ResultsSettings,
    *,
    checkpoints: dict[str, TaskCheckpoint],
    cost: Callable[[], Cost],
    full_config: JsonObject,
    versions: dict[str, Any] | None = None,
) -> Results:
    """A run's results.json from its samples (`checkpoints`: by task, of the tasks whose records were read).
    `cost` is asked once every task's samples are rewritten: that brings the earlier attempts' costs up to
    their saved samples' (`RunDir.finalize_samples`). `versions`: the provenance the run took at its start
    (reading every package's metadata and git again would cost the run's end), else taken now."""
    scores: dict[str, TaskSections] = {}  # by task
    adherence: dict[str, list[Adherence]] = {}
    repaired: dict[str, list[str]] = {}
    system_reports: dict[str, JsonObject] = {}
    system_stats: dict[str, JsonObject] = {}
    for planned in planned_tasks:
        assert planned.system is not None  # a run's, which has one (rescoring assembles its own results)
        with cyclic_gc_paused():
            scores[planned.name] = scored_task(planned, run_dir, scoring, checkpoints.get(planned.name))
            report, checks, figures = system_hooks(
                planned.system, run_dir.sample_path(planned.name), complete_data=scoring.complete_data
            )
        if run_dir.unreadable.get(planned.name):  # lines a stopped run cut short: their examples ran again
            repaired[planned.name] = [str(e) for e in run_dir.unreadable[planned.name]]
        if report is not None:
            system_reports[planned.name] = report
        if checks:
            adherence[planned.name] = checks
        if figures:
            system_stats[planned.name] = figures
    return Results(
        **results_sections(scores, system_reports),
        format_adherence=adherence or None,
        checkpoint_repairs=repaired or None,
        seed_policy=SEED_POLICY,
        system_reports=system_reports or None,
        system_stats=system_stats or None,
        cost=cost(),
        config=full_config,
        versions=versions or provenance(),
        date=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
