"""What `ragbench gate` knows of the judge of a judged key, from the two runs' results.json.

Which keys a judge scores: those of the task's `judge_agreement` (every judged key has an entry, measured or not);
for a run written before that section, those of the run's metrics that ask a judge (`like_for_like.judged_keys`).

The judge's error against human labels: where a run's `human_agreement` holds the key's confusion table (the human's
value by the judge's, on the examples both scored), each labelled example's error, human - judge, is known as a count
per value: the rectifier of prediction-powered inference (ragbench._statistics.ppi, lambda = 1). The gate's model of a
judged key (docs/gate.md#the-judge):

    judged value = human value - error,  so  mean human = mean judged + mean error (estimated on the labelled)

so the difference of the runs in human terms is the judged difference plus the difference of their mean errors, and
its null distribution is the judged differences' sign-flip distribution plus the sampling error of the two mean errors
(`rectifier_draws` of each, drawn independently). A judge that errs more on one run's answers (a bias between them)
moves the estimate; one that errs alike on both adds only its sampling error. Where either run has no labels for the
key, the judge's error against humans is not measured and the test is of the judged values alone: the judge's random
error per example (a sampled judge's verdict changing between calls) is then in the paired differences themselves, and
the sign-flip test counts it (it is as likely to favour either run).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compare.like_for_like import MetricClass, judge_names, judged_keys
from ..results.schema import Results


@dataclass(frozen=True)
class JudgeErrors:
    """A run's judge errors on a key's labelled examples: each distinct value of human - judge and how many had it."""

    values: np.ndarray
    counts: np.ndarray

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def mean(self) -> float:
        return float(self.values @ self.counts / self.n)


@dataclass(frozen=True)
class KeyJudge:
    """The judge of a gated key: who judges it in each run, and each run's errors against the humans (None: no labels)."""

    judges: str  # the runs' judges as one names them (`judge_names`: the same in both runs, or the gate refuses)
    baseline_errors: JudgeErrors | None
    candidate_errors: JudgeErrors | None

    @property
    def against_humans(self) -> bool:
        """Whether the judge's error against the humans is measured in both runs (the test then counts it)."""
        return self.baseline_errors is not None and self.candidate_errors is not None


def task_judged_keys(
    baseline: Results, candidate: Results, task: str, metric_class: MetricClass | None
) -> set[str] | None:
    """The keys of `task` a judge scores in either run; None where a run names judges whose metrics are not known
    (every key may be judged)."""
    keys: set[str] = set()
    for results in (baseline, candidate):
        recorded = (results.judge_agreement or {}).get(task)
        if recorded is not None:
            keys |= set(recorded)
        elif results.config.get("judges"):  # a run of before `judge_agreement`
            found = judged_keys(results.config, task, metric_class) if metric_class is not None else None
            if found is None:
                return None
            keys |= found
    return keys


def key_judge(baseline: Results, candidate: Results, task: str, key: str) -> KeyJudge:
    return KeyJudge(judge_names(baseline.config), judge_errors(baseline, task, key), judge_errors(candidate, task, key))


def judge_errors(results: Results, task: str, key: str) -> JudgeErrors | None:
    """The run's judge errors on the key's labelled examples, from its confusion table; None without one (no labels,
    or a key of too many values to be categories: no table is kept)."""
    entry = ((results.human_agreement or {}).get(task) or {}).get(key)
    if entry is None or "confusion" not in entry or "labels" not in entry:
        return None
    labels, table = entry["labels"], entry["confusion"]
    errors: dict[float, int] = {}
    for human, row in zip(labels, table):
        for judged, count in zip(labels, row):
            if count:
                error = float(human) - float(judged)
                errors[error] = errors.get(error, 0) + int(count)
    if not errors:
        return None
    return JudgeErrors(np.array(list(errors), dtype=float), np.array(list(errors.values()), dtype=np.int64))
