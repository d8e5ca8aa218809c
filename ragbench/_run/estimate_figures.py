"""The figures of a run's cost estimate (`ragbench estimate`, ragbench._run.estimate): what each example that ran
cost (`example_figures`: LLM calls, prompt and output tokens, searches, judge calls, dollars by model, seconds),
and the totals of a run from a sample of its examples (`Totals`, `extrapolated`).

The interval of a total is the 95% percentile bootstrap interval (ragbench._reports.statistics.bootstrap, 2000
resamples, seed 0) of the mean per-example figure of the examples that ran, times the examples still to run, its spread
widened by sqrt(n/(n-1)) (a resample's variance is the plug-in one) and by Student's t over the normal for n-1
degrees of freedom (the percentile interval is too narrow for a small pilot), and narrowed by the finite-population
correction sqrt(M/(n+M)) (the n examples that ran are part of the run's n+M), plus what was paid already,
exactly. It assumes the examples that ran are like those still to run: the pilot takes
a random sample of each task's records for that reason (ragbench._run.estimate).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .._records import SampleRecord
from .._reports.cost.prices import ModelPrices, TokenUsage
from .._reports.statistics import bootstrap

SECONDS = "seconds"  # the example's own, start to sample (not a figure of money or calls: shown as wall time)


def example_figures(record: SampleRecord, prices: ModelPrices) -> dict[str, float]:
    """What one example cost, by figure: the system's LLM calls sent (`llm_calls`; the response cache's answers
    cost nothing and count as `cached_calls`), their `prompt_tokens` and `completion_tokens`, `searches`
    (retrieval steps), per judged metric its calls and tokens (`judge:METRIC calls` ...), dollars
    (`usd:model`, `usd:judge:METRIC`; left out where the model has no price) and its seconds."""
    out: dict[str, float] = {"examples": 1.0}
    system = TokenUsage()
    for step in record.trace:
        if step.kind == "llm":
            system.add(step, step.role)
        elif step.kind == "retrieval":
            out["searches"] = out.get("searches", 0.0) + 1
    out.update(_usage("", system, prices, "usd:model"))
    judges: dict[str, TokenUsage] = {}
    for step in record.judge_trace:
        judges.setdefault(step.name.removeprefix("judge:") or "judge", TokenUsage()).add(step, step.role or "judge")
    for metric, usage in judges.items():
        out.update(_usage(f"judge:{metric} ", usage, prices, f"usd:judge:{metric}"))
    steps = sum(step.seconds for step in (*record.trace, *record.judge_trace))
    out[SECONDS] = record.seconds if record.seconds is not None else steps  # an older sample: its steps' seconds
    return out


def _usage(prefix: str, usage: TokenUsage, prices: ModelPrices, usd_key: str) -> dict[str, float]:
    sent = [sum(each[i] for each in usage.tokens.values()) for i in range(3)]
    out = {
        f"{prefix}llm_calls": float(sent[0]),
        f"{prefix}cached_calls": float(usage.cached),
        f"{prefix}prompt_tokens": float(sent[1]),
        f"{prefix}completion_tokens": float(sent[2]),
    }
    usd = usage.figures(prices)["usd"] if usage.calls else 0.0
    if usd is not None:
        out[usd_key] = float(usd)
    return out


@dataclass(frozen=True)
class Interval:
    """A total's point estimate and its 95% interval (`low`, `high`; `high` None: unbounded, too few examples ran
    to tell a spread)."""

    point: float
    low: float
    high: float | None

    def holds(self, value: float) -> bool:
        return self.low <= value and (self.high is None or value <= self.high)


BOOTSTRAP_ROUNDS = 2000
BOOTSTRAP_SEED = 0  # the interval of the same samples is the same


def t_over_z(df: int) -> float:
    """Student's t's two-sided 95% quantile for `df` degrees of freedom over the normal's (1.96), by the
    Cornish-Fisher expansion of Abramowitz and Stegun 26.7.5 (within 1% from df = 2; df = 1 exact; scipy is not a
    dependency)."""
    z = 1.959964
    if df == 1:
        return 12.706205 / z
    terms = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )
    return 1 + sum(term / float(df) ** (i + 1) for i, term in enumerate(terms)) / z


def extrapolated(paid: float, observed: list[float], remaining: int) -> Interval:
    """The total of a figure over a run: `paid` already (exact), and `remaining` examples still to run, each like
    the `observed` ones (the per-example values of the examples that ran). Fewer than two observed: the point is
    the one value's (or 0), the interval unbounded above unless nothing remains."""
    if remaining <= 0:
        return Interval(paid, paid, paid)
    n = len(observed)
    mean = bootstrap.mean(observed) if n else 0.0
    point = paid + remaining * mean
    if n < 2:
        return Interval(point, paid, None)
    low, high = bootstrap.percentile_interval(bootstrap.resampled(observed, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED))
    # the resamples' spread, unbiased (n / (n - 1): a resample's variance is the plug-in one), widened as Student's
    # t is over the normal for n - 1 degrees of freedom, and corrected for the finite population (n of the
    # n + remaining examples ran)
    widen = math.sqrt(n / (n - 1)) * t_over_z(n - 1) * math.sqrt(remaining / (n + remaining))
    return Interval(
        point, max(paid, point - remaining * (mean - low) * widen), point + remaining * (high - mean) * widen
    )


class Totals:
    """A task's figures added up: `paid`, over every sample saved (failed examples' calls were paid too), and
    `observed`, the per-example figures of the finished examples, what the examples still to run are estimated
    from."""

    def __init__(self) -> None:
        self.paid: dict[str, float] = {}
        self.observed: list[dict[str, float]] = []

    def add(self, figures: Mapping[str, float], finished: bool) -> None:
        for key, value in figures.items():
            self.paid[key] = self.paid.get(key, 0.0) + value
        if finished:
            self.observed.append(dict(figures))

    def keys(self) -> list[str]:
        return sorted({*self.paid, *(key for each in self.observed for key in each)})

    def estimate(self, remaining: int) -> dict[str, Interval]:
        """Each figure's total once `remaining` more examples ran (a figure an example lacks counts 0 there)."""
        return {
            key: extrapolated(self.paid.get(key, 0.0), [each.get(key, 0.0) for each in self.observed], remaining)
            for key in self.keys()
            if key != "examples"
        }


def summed(intervals: Iterable[Mapping[str, Interval]]) -> dict[str, Interval]:
    """Tasks' intervals added up, figure by figure (each task's bounds added: a conservative interval of the sum;
    unbounded where any task's is)."""
    out: dict[str, Interval] = {}
    for each in intervals:
        for key, interval in each.items():
            before = out.get(key, Interval(0.0, 0.0, 0.0))
            high = None if before.high is None or interval.high is None else before.high + interval.high
            out[key] = Interval(before.point + interval.point, before.low + interval.low, high)
    return out
