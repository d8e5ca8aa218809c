"""Aggregating a task's sample records into its metric values, bootstrap intervals, slices and counts: the
records are given one at a time (in data order) and none is held (`TaskTally`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, TypedDict, cast

from .._cost.cost_schema import Budget, Efficiency, RepeatedWork, TokenCost
from .._metric import CorpusValue, InvalidScore, Metric, reported_keys, typed_value
from .._plugin_calls import PluginCall
from .._read_only import read_only
from .._records import SampleRecord
from .._storage.checkpoint import DataDigest
from .._values.json_values import JsonObject
from .judging.judge_agreement import JudgeRatings
from .results.failures import AggregateFailure, CountedEvents, FailureGroups, metric_failure_count, metric_failures
from .results.judging_schema import KeyCheck
from .results.missing_as_wrong import as_official, headline_entries, unsaved_record, zero_keys
from .results.schema import (
    Counted,
    Counts,
    Failure,
    InfrastructureFailures,
    JudgeAgreement,
    KeyDetails,
    SamplingUsed,
    TaskSections,
    TokenLimit,
    reported_errors,
)
from .results.score_columns import ScoreColumns, key_entry


class CorpusSamples:
    """What the corpus metrics are given (`Metric.corpus`: the samples each one scored, as `SampleRecord`s
    without their texts, with its keys under its own names) and how many samples each could not score. The
    only samples a run's end holds, and only where a task has a corpus metric."""

    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = [metric for metric in metrics if metric.declares.corpus_keys]
        self.scored: dict[str, list[SampleRecord]] = {metric.name: [] for metric in self.metrics}
        self.errors: Counter[str] = Counter()

    def add(self, sample: SampleRecord) -> None:
        """A sample read without its texts (`has_text` False), as the corpus metrics get it."""
        for metric in self.metrics:
            if sample.error is not None or metric.name in metric_failures(sample, [metric]):
                self.errors[metric.name] += 1
            else:
                self.scored[metric.name].append(_own_keys(sample, metric))

    def entries(self, seed: int) -> dict[str, KeyDetails]:
        out: dict[str, KeyDetails] = {}
        for metric in self.metrics:
            out.update(corpus_entries(metric, self.scored[metric.name], self.errors[metric.name], seed))
        return out


def corpus_entries(metric: Metric, scored: list[SampleRecord], errors: int, seed: int) -> dict[str, KeyDetails]:
    """A corpus-level metric's values over the samples it scored (`scored`: their scores under the metric's own
    key names): an example that failed, or on which the metric's per-example part failed, is an error of its
    entries (`errors`), not in their n. A key's n is what its value was computed over (`CorpusValue.n` where the
    metric says it left samples out; no value: 0), the samples left out are its n_none (not scorable). A
    failure, or a value that is not a score, is recorded in each of its entries ("error"), not raised."""
    typed: dict[str, tuple[float | None, int]] = {}
    with PluginCall() as call:
        values = metric.corpus(read_only(scored), seed)  # what the counts and the other metrics read after it
        typed = {key: corpus_value(metric, key, values.get(key), len(scored)) for key in metric.declares.corpus_keys}
    error = call.error
    out = {}
    for reported, key in reported_keys(metric, corpus=True).items():
        value, n = typed.get(key, (None, len(scored)))
        entry = cast(  # its direction between its counts and the corpus mark: written in this order
            KeyDetails,
            {
                "value": value,
                "ci95": None,
                "n": n,
                "n_none": len(scored) - n,
                "n_errors": errors,
                **key_entry(metric, key),
                "corpus": True,
            },
        )
        if error is not None:
            entry["error"] = error
        out[reported] = entry
    return out


def corpus_value(metric: Metric, key: str, value: Any, given: int) -> tuple[float | None, int]:
    """(value, n) of a corpus key's value: a `CorpusValue` says its n, a plain number was computed over all
    `given` samples; no value, or one computed over no sample (every example's part failed), is none. Raises `InvalidScore` for a value that is not a score or an n
    outside 0..given."""
    value, n = (value.value, value.n) if isinstance(value, CorpusValue) else (value, given)
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= given:
        raise InvalidScore(
            f"metric {metric.name} says its corpus key '{key}' was computed over {n!r} samples "
            f"of the {given} it was given"
        )
    typed = typed_value(metric, key, value)
    return (None, 0) if typed is None or n == 0 else (typed, n)  # a value over no sample is none


def _own_keys(sample: SampleRecord, metric: Metric) -> SampleRecord:
    """The sample with the metric's reported keys under its own names (a `key_prefix` taken off)."""
    if not metric.key_prefix:
        return sample
    scores = sample.scores
    return replace(
        sample,
        scores={
            **scores,
            **{key: scores[reported] for reported, key in reported_keys(metric).items() if reported in scores},
        },
    ).read_only()


class TaskTally:
    """A task's part of results.json, filled sample by sample (in data order): the score
    columns (`ScoreColumns`, and those of the official headline where the task counts a missing or failed
    prediction as wrong), what the corpus metrics are given, the counts, the failures by cause, failed calls
    folded into results, outputs cut at their token limit, counted events and the data digest."""

    def __init__(
        self, metrics: list[Metric], slice_fields: tuple[str, ...], missing_scores_zero: bool = False, judges: int = 0
    ) -> None:
        self.metrics = metrics
        self.answered, self.corpus = ScoreColumns(metrics, slice_fields), CorpusSamples(metrics)
        self.zeros = zero_keys(metrics) if missing_scores_zero else None
        self.official = ScoreColumns(metrics, slice_fields) if missing_scores_zero else None
        self.failures, self.events, self.digest = FailureGroups(metrics), CountedEvents(metrics), DataDigest()
        self.ratings = JudgeRatings(metrics, judges)  # `judges`: the run's --judge count
        self.records = self.bad = self.failed = 0
        self.folded_examples, self.folded = 0, Counter[str]()  # failed calls folded into results, by cause
        self.cut_examples, self.cut_steps = 0, Counter[str]()  # LLM calls stopped at their token limit, by step

    def add(self, sample: SampleRecord) -> None:
        """A sample read without its texts (`read_samples(..., has_text=False)`)."""
        self.answered.add(sample)
        self.corpus.add(sample)
        if self.official is not None:
            assert self.zeros is not None  # made with the official aggregate
            self.official.add(as_official(sample, self.zeros))
        self.records += 1
        self.bad += sample.bad_record
        self.failed += sample.error is not None and not sample.bad_record
        self.failures.add(sample)
        self.events.add(sample)
        self.ratings.add(sample)
        self.digest.add(sample.index, sample.example_sha256)
        folded = sample.infrastructure_failures
        self.folded_examples += bool(folded)
        self.folded.update(f[:200] for f in folded)
        cut = token_limit_cut(sample)
        self.cut_examples += bool(cut)
        self.cut_steps.update(cut)

    def sections(self, expected: int | None, iterations: int, seed: int) -> TaskSections:
        """By section: "results" and "details" (the metric keys), "counts" (records, scored, failed examples, bad
        records, missing - `expected` records (None: those given) less those given - and metric failures),
        "data_sha256", and where there is anything to say: "failures" (grouped by cause),
        "infrastructure_failures", "token_limit", "counted" (events the metrics counted) and "judge_agreement"
        (ragbench._reports.judging.judge_agreement); (the run adds "budget", "repeated_work", "sampling",
        "human_agreement" and "judge_cost": ragbench._run.assemble.scored_task). Where the task's
        official script counts a missing or failed prediction as wrong, so do its keys' headlines
        (`missing_as_wrong`). Call once: the records never saved join the official columns."""
        missing = max(0, (self.records if expected is None else expected) - self.records)
        not_computed: list[AggregateFailure] = []
        details = {**self.answered.entries(iterations, seed, not_computed), **self.corpus.entries(seed)}
        if self.official is not None:
            assert self.zeros is not None  # made with the official aggregate
            for _ in range(missing):
                self.official.add(unsaved_record(self.zeros))
            headline_failed: list[AggregateFailure] = []
            details = headline_entries(details, self.official.entries(iterations, seed, headline_failed), self.metrics)
            seen = {(failure.metric, failure.key) for failure in not_computed}
            not_computed += [failure for failure in headline_failed if (failure.metric, failure.key) not in seen]
        causes = self.failures.groups(details, not_computed)
        out: TaskSections = {
            "results": {key: entry["value"] for key, entry in details.items()},
            "details": details,
            "counts": {
                "records": self.records,
                "scored": self.records - self.failed - self.bad,
                "failed": self.failed,
                "bad_records": self.bad,
                "missing": missing,
                "metric_failures": metric_failure_count(causes),
            },
        }
        if causes:
            out["failures"] = causes
        if self.folded:
            out["infrastructure_failures"] = {
                "examples": self.folded_examples,
                "calls": sum(self.folded.values()),
                "causes": [{"cause": c, "count": n} for c, n in self.folded.most_common(5)],
            }
        if self.cut_steps:
            out["token_limit"] = {
                "examples": self.cut_examples,
                "calls": sum(self.cut_steps.values()),
                "steps": dict(self.cut_steps.most_common()),
            }
        if self.events.tallies:
            out["counted"] = self.events.tallies
        agreement = self.ratings.section(iterations, seed, details)
        if agreement:
            out["judge_agreement"] = agreement
        out["data_sha256"] = self.digest.hexdigest()
        return out


def task_scores(
    samples: Iterable[SampleRecord],
    metrics: list[Metric],
    slice_fields: tuple[str, ...],
    expected: int | None,
    iterations: int,
    seed: int,
    missing_scores_zero: bool = False,
    judges: int = 0,
) -> TaskSections:
    """A task's part of results.json that its samples (in data order) and metrics decide
    (`TaskTally.sections`; `judges`: the run's --judge count, for the judged keys' `judge_agreement`); every
    record of the stream must end as a scored record or a recorded error."""
    tally = TaskTally(metrics, slice_fields, missing_scores_zero, judges)
    for sample in samples:
        tally.add(sample)
    return tally.sections(expected, iterations, seed)


def token_limit_cut(sample: SampleRecord) -> list[str]:
    """The step names of a scored example's system LLM calls that stopped at their token limit (finish_reason
    "length": the output ends where `max_tokens` cut it, not where the model ended it). Upstream protocols cut
    outputs so too (ALCE's 300 tokens): results.json says how often."""
    if sample.error is not None or sample.bad_record:
        return []
    return [
        str(step.name or "generate")
        for step in sample.trace
        if step.kind == "llm" and (step.response or {}).get("finish_reason") == "length"
    ]


def run_complete(counts: dict[str, Counts], system_reports: dict[str, JsonObject]) -> bool:
    """Every task has records, and none failed, is bad, missing, or was failed by a metric; no system
    reported a problem with its input."""
    return all(
        c["records"] and not (c["failed"] or c["bad_records"] or c["missing"] or c.get("metric_failures"))
        for c in counts.values()
    ) and not any(reported_errors(r) for r in system_reports.values())


class _ScoredSections(TypedDict):
    results: dict[str, dict[str, float | None]]
    details: dict[str, dict[str, KeyDetails]]
    counts: dict[str, Counts]
    complete: bool


class ScoredSections(_ScoredSections, total=False):
    """The part of results.json that the tasks' scores decide (`results_sections`): `TaskSections` by section, then
    by task, each section there where some task has it; and whether the run is complete."""

    failures: dict[str, list[Failure]]
    infrastructure_failures: dict[str, InfrastructureFailures]
    token_limit: dict[str, TokenLimit]
    counted: dict[str, dict[str, dict[str, Counted]]]
    judge_agreement: dict[str, dict[str, JudgeAgreement]]
    data_sha256: dict[str, str]
    budget: dict[str, Budget]
    repeated_work: dict[str, RepeatedWork]
    sampling: dict[str, dict[str, list[SamplingUsed]]]
    human_agreement: dict[str, dict[str, KeyCheck]]
    judge_cost: dict[str, dict[str, TokenCost]]
    model_cost: dict[str, TokenCost]
    efficiency: dict[str, Efficiency]


def results_sections(by_task: dict[str, TaskSections], system_reports: dict[str, JsonObject]) -> ScoredSections:
    """The part of results.json that the tasks' scores decide, from each task's `task_scores`: "results",
    "details" and "counts" by task, whether the run is "complete" (`run_complete`), then the sections
    some task has ("failures", "infrastructure_failures", "token_limit", "counted")."""
    sections: dict[str, dict[str, object]] = {"results": {}, "details": {}, "counts": {}}
    for task, scores in by_task.items():
        for section, value in scores.items():
            sections.setdefault(section, {})[task] = value
    counts = {task: scores["counts"] for task, scores in by_task.items() if "counts" in scores}
    # each section holds its TaskSections entry of every task that has it: ScoredSections' type of that section
    return cast(ScoredSections, {**sections, "complete": run_complete(counts, system_reports)})
