"""`ragbench compare RUN_A RUN_B [...]`: is B better than A on the examples both runs scored?

Per task, metric and slice value, on the examples the runs share (same task, same example id,
scored in both): the mean of each run, the difference B - A, a paired bootstrap 95% interval of the
difference (examples resampled together), and a two-sided p-value - McNemar's exact test on the
discordant pairs when every value is 0 or 1 (EM, match, accuracy), else the paired bootstrap's
(twice the share of resampled differences on the other side of zero, at least 1/iterations).
Corpus-level metrics (MAUVE) have no per-example values and are left out. With more than two
runs, every run is compared with the first.

The p-values of all rows shown (every task, metric and slice, of every run against the first) are one family:
each row also gets its p-value adjusted for their number (ragbench._statistics.multiple_testing; Holm by
default). A row of fewer than MIN_TESTED shared examples gets no p-value and is not in the family.
"""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..._errors import ConfigError
from ..._statistics.bootstrap import mean
from ..._statistics.multiple_testing import adjusted
from ..._statistics.paired_tests import compare_values
from ..._storage.files import file_there
from ..._storage.sample_files import sample_file
from ..._values.json_values import JsonObject
from ..results.config_diff import Difference, config_differences
from ..results.failures import incomplete_reason
from ..results.finished_run import finished_run
from ..results.sampling_used import sampling_differences
from ..results.schema import KeyDetails, Results
from ..results.slice_labels import SliceLabels
from .like_for_like import MetricClass, judge_differences, judged_keys, unlike
from .run_scores import TaskScores, read_task_scores

ITERATIONS = 2000  # paired bootstrap resamples of `ragbench compare` and the viewer's Compare page alike
# Below this many shared examples a row shows no p-value: McNemar's exact test cannot go below 0.0625 with fewer
# than 6 discordant pairs, and the paired bootstrap of a handful of examples has so few distinct resamples that
# its p-value collapses to its floor (two examples both better give p = 1/iterations).
MIN_TESTED = 10


@dataclass
class Run:
    path: Path
    results: Results
    # task -> its scored examples (`TaskScores`; records by example id, as tests give them, are made columns)
    samples: dict[str, TaskScores]
    # task -> slice field -> its labels over every record but bad ones, as results.json's slices
    slice_labels: dict[str, dict[str, SliceLabels]]
    name: str = ""  # set by `label_runs`; the folder's name by default

    def __post_init__(self) -> None:
        self.samples = {
            task: scores
            if isinstance(scores, TaskScores)
            else TaskScores.of(scores, _example_keys(self.details(task)), _slice_fields(self.details(task)))
            for task, scores in self.samples.items()
        }

    def details(self, task: str) -> dict[str, KeyDetails]:
        return self.results.details.get(task, {})

    @property
    def config(self) -> JsonObject:
        return self.results.config

    @property
    def label(self) -> str:
        return self.name or self.path.name


@dataclass
class Comparison:
    task: str
    metric: str
    slice: str  # "" for all shared examples, else "field=value"
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci95: tuple[float, float] | None
    p_value: float | None  # None: fewer than MIN_TESTED shared examples, not tested
    test: str  # "mcnemar" | "bootstrap"
    higher_is_better: bool | None = True  # the key's direction (results.json); None: neither is better
    unlike: list[str] = field(default_factory=list)  # what keeps the task's runs from like for like (in words)
    p_adjusted: float | None = None  # p_value adjusted over every row tested (`adjust_p_values`)


@dataclass
class Report:
    baseline: Run
    other: Run
    rows: list[Comparison] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    p_adjustment: str = "none"  # a key of multiple_testing.METHODS
    tested: int = 0  # rows with a p-value in the family adjusted together (all reports of one command)
    # every measured setting that differs (ragbench._reports.results.config_diff), then per shared task its example sets
    # and its decoding as sent (ragbench._reports.results.sampling_used)
    differences: list[Difference] = field(default_factory=list)


def label_runs(runs: list[Run]) -> None:
    """Runs named by their folder, or by their whole path where two folders share a name."""
    names = [run.path.name for run in runs]
    for run in runs:
        run.name = run.path.name if names.count(run.path.name) == 1 else str(run.path)


def load_run(path: str | Path) -> Run:
    run = finished_run(path, "compare")
    path, results = run.path, run.results
    samples: dict[str, TaskScores] = {}
    for task in results.results:
        samples_path = sample_file(path, task)
        if not file_there(samples_path):
            raise ConfigError(f"compare: {samples_path} is missing (paired tests need the per-example scores)")
        details = results.details.get(task, {})
        samples[task], errors = read_task_scores(samples_path, _example_keys(details), _slice_fields(details))
        if errors:
            raise ConfigError(
                f"compare: {errors[0]} ({len(errors)} unreadable line(s) in {samples_path}); "
                f"`ragbench --resume --output {path}` rebuilds it"
            )
    return Run(path, results, samples, {task: scores.slice_labels() for task, scores in samples.items()})


def compare_runs(
    baseline: Run,
    other: Run,
    iterations: int = ITERATIONS,
    seed: int = 0,
    slices: bool = True,
    metric_class: MetricClass | None = None,
) -> Report:
    """The paired comparison of `other` with `baseline`; `slices=False` leaves the slice rows out (only each
    task's rows over all shared examples). The p-values are adjusted by `adjust_p_values`, over every report
    shown together. Where the runs' judges differ, the keys a judge scores are not like for like (those of the
    metrics `metric_class` says ask a judge; without it, or a metric it does not know, every key of the task)."""
    report = Report(baseline, other)
    report.differences = config_differences(baseline.config, other.config)
    for run in (baseline, other):
        if not run.results.complete:
            reason = incomplete_reason(run.results)
            report.warnings.append(
                f"{run.label} is incomplete ({reason}): examples or metrics that failed are left out of the comparison"
            )
    for task in sorted(set(baseline.samples) & set(other.samples)):
        _TaskComparison.of(report, task, metric_class).compare(iterations, seed, slices)
    if not report.rows:
        raise ConfigError(f"compare: {baseline.path} and {other.path} {_nothing_shared(baseline, other)}")
    return report


@dataclass
class _TaskComparison:
    """One task's paired comparison within `report`: the examples both runs scored (`rows_a`, `rows_b`: their
    places in each run's scores) and what is not like for like between the runs."""

    report: Report
    task: str
    rows_a: np.ndarray
    rows_b: np.ndarray
    unlike: list[str]
    judged_unlike: list[str]
    judged: set[str] | None

    @classmethod
    def of(cls, report: Report, task: str, metric_class: MetricClass | None) -> _TaskComparison:
        """The task's shared examples, with a warning in `report` for each thing that is not paired."""
        baseline, other = report.baseline, report.other
        ours, theirs = baseline.samples[task], other.samples[task]
        shared = sorted(ours.ids() & theirs.ids())
        left_out = len(ours.ids() ^ theirs.ids())
        report.differences += example_set_difference(task, ours.ids(), theirs.ids())
        report.differences += sampling_differences(task, baseline.results, other.results)
        judged_unlike = judge_differences(baseline.config, other.config)
        judged = judged_keys(baseline.config, task, metric_class) if judged_unlike and metric_class else None
        if left_out:
            report.warnings.append(f"{task}: {left_out} scored example(s) are in only one run and are left out")
        rows_a, rows_b = ours.places(shared), theirs.places(shared)
        changed = changed_examples(ours, theirs, rows_a, rows_b)
        if changed:
            report.warnings.append(
                f"{task}: {changed} shared example(s) differ in their data between the runs "
                "(question, gold or documents): their scores are not paired on the same example"
            )
        unlike_here = unlike(baseline.results, other.results, task)
        return cls(report, task, rows_a, rows_b, unlike_here, judged_unlike, judged)

    def compare(self, iterations: int, seed: int, slices: bool) -> None:
        """A row for each metric the runs both score, over all shared examples and (`slices`) each slice."""
        task, report = self.task, self.report
        details = report.baseline.details(task)
        unpaired = sorted(set(_example_keys(details)) ^ set(_example_keys(report.other.details(task))))
        if unpaired:
            report.warnings.append(f"{task}: {', '.join(unpaired)} scored in only one run: not compared")
        for metric in _example_keys(details):
            if metric not in unpaired:
                self._compare_metric(metric, details, iterations, seed, slices)

    def _compare_metric(
        self, metric: str, details: dict[str, KeyDetails], iterations: int, seed: int, slices: bool
    ) -> None:
        task, report = self.task, self.report
        baseline, other = report.baseline, report.other
        ours = baseline.samples[task]
        a, b = ours.values(metric)[self.rows_a], other.samples[task].values(metric)[self.rows_b]
        one_sided = int(np.sum(np.isnan(a) != np.isnan(b)))
        if one_sided:
            report.warnings.append(
                f"{task} {metric}: {one_sided} shared example(s) have a value in one run only "
                "(not scorable, or the metric failed, in the other) and are left out"
            )
        report.warnings += [note for run in (baseline, other) if (note := _not_the_mean(run, task, metric))]
        paired = ~np.isnan(a) & ~np.isnan(b)
        a, b = a[paired], b[paired]
        with np.errstate(over="ignore"):
            if not np.all(np.isfinite(b - a)):
                report.warnings.append(
                    f"{task} {metric}: values so large that their differences overflow: not compared"
                )
                return
        groups = {"": np.arange(len(a))}  # positions of the pairs of each row, in id order
        for slice_field in _slice_fields(details) if slices else ():
            labels = baseline.slice_labels[task][slice_field]
            groups.update(ours.slice_groups(slice_field, labels, self.rows_a[paired]))
        not_like = self.unlike + (self.judged_unlike if self.judged is None or metric in self.judged else [])
        for name, group in groups.items():
            if not len(group):
                continue
            interval, p, test = compare_values(a[group], b[group], iterations, seed)
            report.rows.append(
                Comparison(
                    task,
                    metric,
                    name,
                    len(group),
                    mean(a[group]),
                    mean(b[group]),
                    mean(b[group] - a[group]),
                    interval,
                    p if len(group) >= MIN_TESTED else None,
                    test,
                    details[metric].get("higher_is_better", True),
                    not_like,
                )
            )


def adjust_p_values(reports: list[Report], method: str = "holm") -> None:
    """Every tested row of `reports` gets its p-value adjusted by `method` over all of them (one family: the
    rows a command or page shows together)."""
    rows = [row for report in reports for row in report.rows if row.p_value is not None]
    for row, value in zip(rows, adjusted([row.p_value for row in rows if row.p_value is not None], method)):
        row.p_adjusted = value
    for report in reports:
        report.p_adjustment, report.tested = method, len(rows)


def example_set_difference(task: str, a: AbstractSet[str], b: AbstractSet[str]) -> list[Difference]:
    """The task's scored examples as a difference where either run has ids the other has not."""
    if a == b:
        return []
    return [
        Difference(
            f"examples ({task}, scored)", f"{len(a)}, {len(a - b)} only here", f"{len(b)}, {len(b - a)} only here"
        )
    ]


def _example_keys(details: dict[str, KeyDetails]) -> list[str]:
    """A task's keys with per-example values (corpus-level keys have none to pair), sorted."""
    return sorted(key for key, entry in details.items() if not entry.get("corpus"))


def _slice_fields(details: dict[str, KeyDetails]) -> list[str]:
    """The slice fields of a task's keys (results.json `slices`), sorted."""
    return sorted({f for entry in details.values() for f in entry.get("slices", {})})


def changed_examples(ours: TaskScores, theirs: TaskScores, rows_a: np.ndarray, rows_b: np.ndarray) -> int:
    """How many of the paired rows hold other data in the two runs (both have a digest, and they differ)."""
    (digests_a, known_a), (digests_b, known_b) = ours.digests(), theirs.digests()
    both = known_a[rows_a] & known_b[rows_b]
    return int(np.sum(both & (digests_a[rows_a] != digests_b[rows_b])))


def _not_the_mean(run: Run, task: str, key: str) -> str | None:
    """A warning where the run's results.json value of the key is not the mean of its per-example values (a
    metric that aggregates otherwise, e.g. a count summed): the table's A and B are means per example."""
    entry = run.details(task).get(key)
    reported = entry.get("value") if entry is not None else None
    values = run.samples[task].values(key)
    values = values[~np.isnan(values)]
    if reported is None or not len(values):
        return None
    if math.isclose(average := mean(values), reported, rel_tol=1e-9, abs_tol=1e-12):
        return None
    return (
        f"{task} {key}: {run.label}'s results give {reported:.4f}, not the mean of its per-example values "
        f"({average:.4f}): compared here as means per example"
    )


def _nothing_shared(a: Run, b: Run) -> str:
    """Why two runs have no row to compare, and the fix."""
    same_data = "compare runs of the same task on the same data"
    tasks = sorted(set(a.samples) & set(b.samples))
    if not tasks:
        return (
            f"have no task in common ({', '.join(sorted(a.samples)) or 'none'} vs "
            f"{', '.join(sorted(b.samples)) or 'none'}); {same_data}"
        )
    if not any(a.samples[task].ids() & b.samples[task].ids() for task in tasks):
        return f"share no example scored in both ({', '.join(tasks)}); {same_data}"
    keys = {task: [_example_keys(run.results.details.get(task, {})) for run in (a, b)] for task in tasks}
    if not any(set(ours) & set(theirs) for ours, theirs in keys.values()):
        scored = "; ".join(f"{task}: {', '.join(ours)} vs {', '.join(theirs)}" for task, (ours, theirs) in keys.items())
        return f"share no metric scored in both ({scored}); score one with the other's metrics (`ragbench rescore`)"
    return f"share no example with a value in both runs ({', '.join(tasks)}): every example failed or was not scorable"
