"""Aggregating sample records into per-task metric values, bootstrap intervals and slices."""
from __future__ import annotations

import math
import traceback
from collections import Counter
from typing import Any, Callable

from .._metric import CorpusValue, InvalidScore, Metric, finite_number, typed_value
from .._read_only import read_only
from .._storage.checkpoint import data_sha256
from .bootstrap import mean, percentile_interval, resampled
from .failures import AggregateFailure, counted_events, group_failures, metric_failure_count, metric_failures
from .missing_as_wrong import counted_wrong, headline_entries
from .slice_labels import SliceLabels, field_labels, ordered, slice_value

Aggregate = Callable[[list[float]], float]


class AggregateError(ValueError):
    """A value of a key that is not a finite number (an aggregate's, a mean's or an interval's)."""


def bootstrap_interval(values: list[float], aggregate: Aggregate | None, iterations: int,
                       seed: int) -> list[float] | None:
    """Percentile 95% interval of the aggregate over examples resampled with replacement."""
    if len(values) < 2 or iterations <= 0:
        return None
    return list(percentile_interval(resampled(values, iterations, seed, aggregate)))


def summarise(values: list[float], aggregate: Aggregate | None, iterations: int, seed: int) -> dict[str, Any]:
    """value, ci95 and n of a key's values. Raises what `aggregate` raises (`InvalidScore` for a value that
    is no finite number: `checked_aggregate`), and `AggregateError` where the mean or an end of the
    interval is not a finite number."""
    if not values:
        return {"value": None, "ci95": None, "n": 0}
    value = mean(values) if aggregate is None else aggregate(values)
    if not math.isfinite(value):
        raise AggregateError(f"the mean of {len(values)} values is {value} (they overflow)")
    interval = bootstrap_interval(values, aggregate, iterations, seed)
    if interval is not None and not all(math.isfinite(end) for end in interval):
        raise AggregateError(f"the 95% interval of {len(values)} values is {interval} (they overflow)")
    return {"value": value, "ci95": interval, "n": len(values)}


def summarised(values: list[float], aggregate: Aggregate | None, iterations: int, seed: int, metric: str,
               key: str, failed: list[AggregateFailure]) -> dict[str, Any]:
    """`summarise`, or where it fails an entry without value or interval that says why ("error"), the
    failure added to `failed` with its traceback."""
    try:
        return summarise(values, aggregate, iterations, seed)
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        trace = None if isinstance(exc, (AggregateError, InvalidScore)) else traceback.format_exc()  # ours: no use
        failed.append(AggregateFailure(metric, key, message, trace))
        return {"value": None, "ci95": None, "n": len(values), "error": message}


def checked_aggregate(metric: Metric, key: str) -> Aggregate | None:
    """The metric's `aggregate` of one of its keys, raising `InvalidScore` for a value that is not a
    finite number (`finite_number`: None, a string, NaN, an infinity); None where the metric keeps the mean."""
    if type(metric).aggregate is Metric.aggregate:
        return None

    def aggregate(values: list[float]) -> float:
        return finite_number(f"metric {metric.name}'s aggregate", key, metric.aggregate(key, values))
    return aggregate


def key_entry(metric: Metric, key: str) -> dict[str, Any]:
    """What results.json says of a key's values: its direction, and its range where declared."""
    spec = metric.key_spec(key)
    return {"higher_is_better": spec.higher_is_better, **({"range": list(spec.range)} if spec.range else {})}


def saved_value(metric: Metric, key: str, value: Any) -> tuple[float | None, bool]:
    """(value, whether it is a score) of a saved per-example value: a sample written by an older ragbench
    may hold a non-number (a numpy scalar saved as a string), counted as the metric's failure."""
    try:
        return typed_value(metric, key, value), True
    except InvalidScore:
        return None, False


def aggregation_view(sample: dict[str, Any]) -> dict[str, Any]:
    """What aggregation keeps of a sample record: all of it but the copies of prompts, replies and
    documents (trace steps keep their kind, name, token counts, request options and finish reason; the
    prediction its answer, citations and extras), so a task's results never hold its samples' text."""
    view = {k: v for k, v in sample.items() if k not in ("trace", "judge_trace", "output")}
    if "trace" in sample:
        view["trace"] = [{**{k: v for k, v in step.items() if k != "docs"},  # docs: a custom step's
                          "response": {"finish_reason": (step.get("response") or {}).get("finish_reason")},
                          "request": {k: v for k, v in (step.get("request") or {}).items()
                                      if k not in ("prompt", "messages")}} for step in sample["trace"]]
    if "prediction" in sample:
        view["prediction"] = {k: v for k, v in sample["prediction"].items() if k not in ("docs", "raw_output")}
    return view


def aggregate_task(samples: list[dict[str, Any]], metrics: list[Metric], slice_fields: tuple[str, ...],
                   iterations: int = 1000, seed: int = 0, corpus: bool = True,
                   failed: list[AggregateFailure] | None = None) -> dict[str, dict[str, Any]]:
    """Per metric key: value, ci95, n, n_none (not scorable), n_errors (the example failed, the metric
    failed on it, or its saved value is not a score), its direction and range (`key_entry`), and the
    same per slice value of each slice field; the corpus keys too unless `corpus` is False. A value that
    cannot be computed (`summarised`) is added to `failed`, and its entry says why ("error")."""
    failed = [] if failed is None else failed
    out: dict[str, dict[str, Any]] = {}
    labels = {field: field_labels([s.get("meta") for s in samples if not s.get("bad_record")], field)
              for field in slice_fields}
    for metric in metrics:
        for reported, key in metric.reported_keys().items():
            aggregate = checked_aggregate(metric, key)
            scored, n_none, n_errors = [], 0, 0
            for sample in samples:
                scores = sample.get("scores") or {}
                if sample.get("error") is not None or metric.name in (sample.get("score_errors") or {}):
                    n_errors += 1
                    continue
                if reported not in scores:  # a sample of an older version of the metric: a failure, never a smaller n
                    n_errors += 1
                    continue
                value, typed = saved_value(metric, key, scores[reported])
                n_errors += not typed
                n_none += typed and value is None
                if value is not None:
                    scored.append((sample, value))
            entry = summarised([v for _, v in scored], aggregate, iterations, seed, metric.name, reported, failed)
            entry.update(n_none=n_none, n_errors=n_errors, **key_entry(metric, key))
            slices = {field: _slices(scored, field, labels[field], aggregate, iterations, seed, metric.name, reported,
                                     failed)
                      for field in slice_fields}
            if slices:
                entry["slices"] = slices
            out[reported] = entry
    for metric in metrics if corpus else ():
        if metric.corpus_keys:
            out.update(corpus_entries(metric, samples, seed))
    return out


def _slices(scored: list[tuple[dict[str, Any], float]], field: str, labels: SliceLabels,
            aggregate: Aggregate | None, iterations: int, seed: int, metric: str, key: str,
            failed: list[AggregateFailure]) -> dict[str, dict[str, Any]]:
    """Per label of the field (`slice_labels`), the summary of the values scored there. Every value the
    field takes among the task's examples (bad records have none) has its label, with n 0 where the key
    scored none there, so no slice drops out of a table."""
    groups: dict[str, list[float]] = {label: [] for label in labels.labels()}
    for sample, value in scored:
        groups.setdefault(labels.label(slice_value(sample.get("meta"), field)), []).append(value)
    return {label: summarised(groups[label], aggregate, iterations, seed, metric, f"{key} by {field}={label}", failed)
            for label in ordered(groups)}


def corpus_entries(metric: Metric, samples: list[dict[str, Any]], seed: int) -> dict[str, dict[str, Any]]:
    """A corpus-level metric's values over the samples it scored (their scores under the metric's own key
    names): an example that failed, or on which the metric's per-example part failed, is an error of its
    entries, not in their n. A key's n is what its value was computed over (`CorpusValue.n` where the
    metric says it left samples out; no value: 0), the samples left out are its n_none (not scorable). A
    failure, or a value that is not a score, is recorded in each of its entries ("error"), not raised."""
    failed = [s.get("error") is not None or "scores" not in s or metric.name in metric_failures(s, [metric])
              for s in samples]
    scored = [_own_keys(s, metric) for s, fails in zip(samples, failed) if not fails]
    errors = sum(failed)
    try:
        values = metric.corpus(read_only(scored), seed)  # what the counts and the other metrics read after it
        typed = {key: corpus_value(metric, key, values.get(key), len(scored)) for key in metric.corpus_keys}
        error = None
    except Exception as exc:
        typed, error = {}, f"{type(exc).__name__}: {exc}"
    out = {}
    for reported, key in metric.reported_keys(corpus=True).items():
        value, n = typed.get(key, (None, len(scored)))
        entry = {"value": value, "ci95": None, "n": n, "n_none": len(scored) - n, "n_errors": errors,
                 **key_entry(metric, key), "corpus": True}
        if error is not None:
            entry["error"] = error
        out[reported] = entry
    return out


def corpus_value(metric: Metric, key: str, value: Any, given: int) -> tuple[float | None, int]:
    """(value, n) of a corpus key's value: a `CorpusValue` says its n, a plain number was computed over all
    `given` samples; no value scored none. Raises `InvalidScore` for a value that is not a score or an n
    outside 0..given."""
    value, n = (value.value, value.n) if isinstance(value, CorpusValue) else (value, given)
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= given:
        raise InvalidScore(f"metric {metric.name} says its corpus key '{key}' was computed over {n!r} samples "
                           f"of the {given} it was given")
    typed = typed_value(metric, key, value)
    return typed, 0 if typed is None else n


def _own_keys(sample: dict[str, Any], metric: Metric) -> dict[str, Any]:
    """The sample with the metric's reported keys under its own names (a `key_prefix` taken off)."""
    if not metric.key_prefix:
        return sample
    scores = sample.get("scores") or {}
    return {**sample, "scores": {**scores, **{key: scores[reported] for reported, key in metric.reported_keys().items()
                                              if reported in scores}}}


def task_scores(samples: list[dict[str, Any]], metrics: list[Metric], slice_fields: tuple[str, ...], expected: int,
                iterations: int, seed: int, missing_scores_zero: bool = False) -> dict[str, Any]:
    """A task's part of results.json that its samples (`aggregation_view`s) and metrics decide, by section:
    "results" and "details" (the metric keys), "counts" (records, scored, failed examples, bad records,
    missing - `expected` records less those saved - and metric failures), "data_sha256" (`data_sha256`),
    and where there is anything to say: "failures" (grouped by cause), "infrastructure_failures" (failed
    calls folded into results), "token_limit" (`token_limit_stops`) and "counted" (events the metrics
    counted). `missing_scores_zero`: the task's official script counts a missing or failed prediction as
    wrong, and so do its keys' headlines (`missing_as_wrong`)."""
    not_computed: list[AggregateFailure] = []
    details = aggregate_task(samples, metrics, slice_fields, iterations, seed, failed=not_computed)
    if missing_scores_zero:
        official = counted_wrong(samples, metrics, max(0, expected - len(samples)))
        headline_failed: list[AggregateFailure] = []
        details = headline_entries(details, aggregate_task(official, metrics, slice_fields, iterations, seed,
                                                           corpus=False, failed=headline_failed), metrics)
        seen = {(failure.metric, failure.key) for failure in not_computed}
        not_computed += [failure for failure in headline_failed if (failure.metric, failure.key) not in seen]
    bad = sum(1 for s in samples if s.get("bad_record"))
    failed = sum(1 for s in samples if s.get("error") is not None) - bad
    causes = group_failures(samples, metrics, details, not_computed)
    # every record of the stream must have ended as a scored record or a recorded error
    out: dict[str, Any] = {
        "results": {key: entry["value"] for key, entry in details.items()}, "details": details,
        "counts": {"records": len(samples), "scored": len(samples) - failed - bad, "failed": failed, "bad_records": bad,
                   "missing": max(0, expected - len(samples)), "metric_failures": metric_failure_count(causes)}}
    if causes:
        out["failures"] = causes
    folded = [f for s in samples for f in s.get("infrastructure_failures") or []]
    if folded:
        out["infrastructure_failures"] = {
            "examples": sum(1 for s in samples if s.get("infrastructure_failures")), "calls": len(folded),
            "causes": [{"cause": c, "count": n} for c, n in Counter(f[:200] for f in folded).most_common(5)]}
    cut = token_limit_stops(samples)
    if cut:
        out["token_limit"] = cut
    tallies = counted_events(samples, metrics)
    if tallies:
        out["counted"] = tallies
    out["data_sha256"] = data_sha256(samples)
    return out


def token_limit_stops(samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The system's LLM calls in scored examples that stopped at their token limit (finish_reason
    "length": the output ends where `max_tokens` cut it, not where the model ended it), by step name;
    None when none did. Upstream protocols cut outputs so too (ALCE's 300 tokens): this says how often."""
    steps: Counter[str] = Counter()
    examples = 0
    for sample in samples:
        if sample.get("error") is not None or sample.get("bad_record"):
            continue
        cut = [str(step.get("name") or "generate") for step in sample.get("trace") or []
               if step.get("kind") == "llm" and (step.get("response") or {}).get("finish_reason") == "length"]
        examples += bool(cut)
        steps.update(cut)
    return {"examples": examples, "calls": sum(steps.values()), "steps": dict(steps.most_common())} if steps else None


def run_complete(counts: dict[str, dict[str, Any]], system_reports: dict[str, Any]) -> bool:
    """Every task has records, and none failed, is bad, missing, or was failed by a metric; no system
    reported a problem with its input."""
    return (all(c["records"] and not (c["failed"] or c["bad_records"] or c["missing"] or c.get("metric_failures"))
                for c in counts.values())
            and not any(r.get("errors") for r in system_reports.values()))


def results_sections(by_task: dict[str, dict[str, Any]], system_reports: dict[str, Any]) -> dict[str, Any]:
    """The part of results.json that the tasks' scores decide, from each task's `task_scores`: "results",
    "details" and "counts" by task, whether the run is "complete" (`run_complete`), then the sections
    some task has ("failures", "infrastructure_failures", "token_limit", "counted")."""
    sections: dict[str, dict[str, Any]] = {"results": {}, "details": {}, "counts": {}}
    for task, scores in by_task.items():
        for section, value in scores.items():
            sections.setdefault(section, {})[task] = value
    counts = sections.pop("counts")
    return {"results": sections.pop("results"), "details": sections.pop("details"), "counts": counts,
            "complete": run_complete(counts, system_reports), **sections}
