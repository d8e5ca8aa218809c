"""A task's scores from its sample records, as a run aggregates them: how a metric's `aggregate` and `corpus` are
tested without a run."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._metric import Metric
from .._records import SampleRecord
from .._reports.aggregation import task_scores
from .._reports.results.schema import TaskSections


def task_results(
    samples: Iterable[SampleRecord],
    metrics: Sequence[Metric],
    *,
    slices: Sequence[str] = (),
    expected: int | None = None,
    iterations: int = 1000,
    seed: int = 0,
) -> TaskSections:
    """The task's part of results.json that `samples` (in data order; a line of samples/TASK.jsonl is
    `SampleRecord.from_dict(line)`) and `metrics` decide, as a run aggregates them: "results" (each key's
    headline), "details" (each key's value, its bootstrap interval of `iterations` draws from `seed`, n, direction
    and range), "counts", and where there is anything to say "failures", "counted" and the like (docs/outputs.md).
    `slices`: the record fields a run's `--slice-by` names; `expected`: the records the task has (None: those
    given; the rest count as missing)."""
    return task_scores(samples, list(metrics), tuple(slices), expected, iterations, seed)
