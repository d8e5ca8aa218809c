"""The headline of a task whose official script counts a missing or failed prediction as wrong
(`TaskScoring.missing_scores_zero`): HotpotQA's hotpot_evaluate_v1.py and 2WikiMultihopQA's evaluation divide by every
gold example, a missing one adding 0; KILT's eval_downstream.py and MuSiQue's evaluate_v1.0.py take a prediction
for every record and score an empty one 0; MIRAGE's evaluate.py counts a question without an answer wrong.

For such a task, each key that scores 0 at worst (higher is better, range from 0) is reported as the official
script computes it: an example that failed, a metric that failed on it (or saved no score), a bad record and a
record the run never reached each score 0, in n. The mean over the answered examples only - every other task's
headline - stays beside it (`answered`), and `counted_wrong` says how many were counted 0. A key with another
range, a not-scorable value (None) and a corpus key are reported as for any task."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..._metric import InvalidScore, Metric, key_spec, reported_keys, typed_value
from ..._records import SampleRecord
from .schema import KeyDetails


def scores_zero(metric: Metric, key: str) -> bool:
    """Whether 0 is the worst value of the metric's own `key` (higher is better, its range starting at 0)."""
    spec = key_spec(metric, key)
    return spec.higher_is_better is True and spec.range is not None and spec.range[0] == 0


def zero_keys(metrics: list[Metric]) -> dict[str, tuple[Metric, str]]:
    """Reported key -> (metric, own key) of every per-example key that scores 0 at worst."""
    return {
        reported: (metric, key)
        for metric in metrics
        for reported, key in reported_keys(metric).items()
        if scores_zero(metric, key)
    }


def _scored(metric: Metric, key: str, scores: Mapping[str, object], reported: str) -> bool:
    if reported not in scores:
        return False
    try:
        typed_value(metric, key, scores[reported])
    except InvalidScore:
        return False
    return True


def as_official(sample: SampleRecord, zeros: dict[str, tuple[Metric, str]]) -> SampleRecord:
    """The sample as the official script scores it, for aggregation (`zeros`: `zero_keys`): in a failed example
    (or bad record) every key that scores 0 at worst is 0 and the example is no longer an error, where a metric
    failed on an example (or its saved value is no score) that metric's such keys are 0. Keys of other ranges
    keep failing where they failed."""
    failed_metrics = set(sample.score_errors)
    example_failed = sample.error is not None
    scores = dict(sample.scores)
    if not example_failed and not failed_metrics and all(_scored(m, k, scores, r) for r, (m, k) in zeros.items()):
        return sample
    for reported, (metric, key) in zeros.items():
        if example_failed or metric.name in failed_metrics or not _scored(metric, key, scores, reported):
            scores[reported] = 0.0
    if example_failed:  # its other keys: not there, so still errors
        scores = {reported: value for reported, value in scores.items() if reported in zeros}
    return replace(
        sample,
        error=None,
        bad_record=False,
        scores=scores,
        score_errors={
            name: why for name, why in sample.score_errors.items() if not any(m.name == name for m, _ in zeros.values())
        },
    )


def unsaved_record(zeros: dict[str, tuple[Metric, str]]) -> SampleRecord:
    """A record the run never saved, as the official script scores it: 0 (without a slice value)."""
    return SampleRecord(id=None, scores=dict.fromkeys(zeros, 0.0))


def headline_entries(
    answered: dict[str, KeyDetails], official: dict[str, KeyDetails], metrics: list[Metric]
) -> dict[str, KeyDetails]:
    """The task's entries: for each key that scores 0 at worst, the official entry (value, ci95, n, slices) with
    the answered-only view beside it and how many were counted 0; every other key's entry as answered."""
    out = dict(answered)
    for reported in zero_keys(metrics):
        entry, mean = official[reported], answered[reported]
        out[reported] = {
            **entry,
            "n_errors": mean["n_errors"],
            "counted_wrong": entry["n"] - mean["n"],
            "answered": {"value": mean["value"], "ci95": mean["ci95"], "n": mean["n"]},
        }
    return out
