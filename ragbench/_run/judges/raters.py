"""Judging one prediction more than once, so that a judged number says how much of it is the judge: the repeats
of a sampled judge (`--judge-repeats K`) and several interchangeable judges (`--judge` given more than once to a
metric without judge roles).

Each rater is one more scoring of the metric on the prediction: with every judge of the run (a metric whose judges
have roles, or a run of one judge), repeated; or with one judge alone, for each judge and repeat. There are raters
only where `--judge-repeats` is given (1 with several judges: each judge alone, once): a run without it judges
each example once. Each judge's first verdict alone is the request the headline sent it, answered by the run's
response cache; a call that fails is counted each time it is made. A rater's judge calls are seeded by the metric,
the example, the judge and the repeat (`:repeatR` from the second), and a repeat seeds even a greedy judge's calls:
each repeat is its own request, never the response cache's answer to another.

The headline is what the run scores without raters, byte for byte: the first repeat of a single judge (or of the
judges with roles), or the metric's own use of all its judges (llm_judge's and CRAG's mean). The raters' values
are kept in the sample's `judge_ratings` and summed up in results.json `judge_agreement`
(ragbench._reports.judging.judge_agreement).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._metric import Metric, Scores
from ..._records import RatingEntry


@dataclass(frozen=True)
class Rater:
    judges: tuple[int, ...]  # the run's judges the metric is given (their --judge positions)
    repeat: int  # 0: the first draw, as the headline's; R: the R-th repeat, its calls seeded apart
    alone: bool  # one judge of several interchangeable ones, named in the label

    @property
    def label(self) -> str:
        judge = f"judge {self.judges[0] + 1}" if self.alone else ""
        repeat = f"repeat {self.repeat + 1}" if self.repeat or not self.alone else ""
        return ", ".join(part for part in (judge, repeat) if part)


def raters(metric: Metric, judge_count: int, repeats: int | None) -> list[Rater]:
    """The scorings of `metric` whose values are compared; empty where it is judged once by one judge (or asks
    none), and where `repeats` (--judge-repeats) is not given. With repeats of all its judges, the first is the
    headline's own scoring."""
    if repeats is None or not compares(metric, judge_count, repeats):
        return []
    if metric.declares.judge_roles or judge_count == 1:
        everyone = tuple(range(judge_count))
        return [Rater(everyone, r, alone=False) for r in range(repeats)]
    return [Rater((j,), r, alone=True) for j in range(judge_count) for r in range(repeats)]


def compares(metric: Metric, judge_count: int, repeats: int | None) -> bool:
    """Whether `metric` has raters (`raters` is not empty), known without making them (the pre-flight's look)."""
    if "judge" not in metric.declares.needs or judge_count < 1 or repeats is None:
        return False
    return repeats > 1 or (judge_count > 1 and not metric.declares.judge_roles)


def headline_is_a_rater(found: list[Rater]) -> bool:
    """Whether the headline's scoring is the first rater (repeats of all the metric's judges), not one more."""
    return bool(found) and not found[0].alone


def headline_draws(found: list[Rater]) -> int:
    """How many raters' verdicts the headline averages per example: 1 (the first repeat), or the number of
    interchangeable judges (the metric's mean of them)."""
    return len({r.judges for r in found}) if found and found[0].alone else 1


def rating_entry(
    found: list[Rater], values: list[Scores | None], keys: list[str], errors: dict[str, str]
) -> RatingEntry:
    """The sample's `judge_ratings` entry of one metric: the raters' labels, how many of them the headline
    averages (`headline_draws`), each key's value per rater (None where that rater gave none, or failed) and
    each failed rater's error."""
    entry: RatingEntry = {
        "raters": [r.label for r in found],
        "averaged": headline_draws(found),
        "scores": {key: [None if v is None else v.get(key) for v in values] for key in keys},
    }
    if errors:
        entry["errors"] = errors
    return entry
