"""The figures of a run's cost estimate (`ragbench estimate`, ragbench._run.estimate.pilot_run): what each example that
ran cost (`example_figures`: LLM calls, prompt and output tokens, searches, judge calls, dollars by model, seconds),
and the totals of a run from a sample of its examples (`Totals`, `extrapolated`).

The interval of a total is the 95% percentile bootstrap interval (ragbench._reports.statistics.bootstrap, 2000
resamples, seed 0) of the mean per-example figure of the examples that ran, times the examples still to run, its spread
widened by sqrt(n/(n-1)) (a resample's variance is the plug-in one) and by Student's t over the normal for n-1
degrees of freedom (the percentile interval is too narrow for a small pilot), and narrowed by the finite-population
correction sqrt(M/(n+M)) (the n examples that ran are part of the run's n+M), plus what was paid already,
exactly. It assumes the examples that ran are like those still to run: the pilot takes
a random sample of each task's records for that reason (ragbench._run.estimate.pilot_run).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..._records import SampleRecord
from ..._reports.cost.prices import ModelPrices, TokenUsage
from ..._reports.statistics import bootstrap

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
    for step in (step for step in record.judge_trace if step.kind == "llm"):  # not a metric's own recorded steps
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
    the one value's (or 0), the interval unbounded above unless nothing remains.

    A rare example the pilot did not meet is in no resample: a repeated request the response cache answers costs 0
    (8 of 1,200 examples in benchmarks/estimate_accuracy.py, which a pilot of 60 mostly misses). By the rule of
    three, none of n observed examples being 0 bounds the share of those left that are by 3/n (95%), so the low end
    is at most the point less that share of the examples left at 0. Observed values all equal (a single-step
    system's one call an example) leave no spread to resample: the interval is that low end to the point (a figure
    that can grow beyond its constant, more calls or longer replies, varies in a pilot)."""
    if remaining <= 0:
        return Interval(paid, paid, paid)
    n = len(observed)
    mean = bootstrap.mean(observed) if n else 0.0
    point = paid + remaining * mean
    if n < 2:
        return Interval(point, paid, None)
    unseen = point - remaining * mean * min(1.0, 3 / n) if min(observed) > 0 else point  # the rule of three
    if min(observed) == max(observed):
        return Interval(point, max(paid, unseen), point)
    low, high = bootstrap.percentile_interval(bootstrap.resampled(observed, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED))
    # the resamples' spread, unbiased (n / (n - 1): a resample's variance is the plug-in one), widened as Student's
    # t is over the normal for n - 1 degrees of freedom, and corrected for the finite population (n of the
    # n + remaining examples ran)
    widen = math.sqrt(n / (n - 1)) * t_over_z(n - 1) * math.sqrt(remaining / (n + remaining))
    low = min(unseen, point - remaining * (mean - low) * widen)
    return Interval(point, max(paid, low), point + remaining * (high - mean) * widen)


PRECISION = 0.10  # the share of its point within which a dollar figure is wanted (`pilot_for`)


def pilot_for(observed: list[float], records: int, precision: float = PRECISION) -> int | None:
    """How many of a task's `records` examples a pilot needs for the point of a total to be within `precision` of
    it at 95%, judged from the `observed` examples' own spread (Stein's two-stage sample size: (t s / (d mean))^2,
    with the finite-population correction); None where fewer than two were observed or their mean is 0. A
    per-example figure whose coefficient of variation is c needs about (1.96 c / 0.10)^2 examples for +-10%: 60 are
    enough for c <= 0.4, and a reply length's log-normal tail (c about 0.85) needs about 280."""
    n = len(observed)
    mean = statistics.fmean(observed) if n else 0.0
    if n < 2 or mean <= 0:
        return None
    unbounded = (1.959964 * t_over_z(n - 1) * statistics.stdev(observed) / (precision * mean)) ** 2
    return min(records, math.ceil(unbounded / (1 + unbounded / records)))


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

    def pilot_for(self, records: int, precision: float = PRECISION) -> int | None:
        """The examples a pilot needs for each dollar figure within `precision` of its point (`pilot_for`; the
        largest), None where no dollar figure can tell."""
        wanted = [
            pilot_for([each.get(key, 0.0) for each in self.observed], records, precision)
            for key in self.keys()
            if key.startswith("usd:")
        ]
        return max((each for each in wanted if each is not None), default=None)


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
