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

Where the run's model has a tokenizer at hand (ragbench._run.estimate.tokens), each example's own text is counted in
its tokens, the pilot's and the rest's alike, and the figures that grow with a prompt's length (prompt tokens,
dollars) are estimated by regression on it (`regressed`): the examples left are no longer assumed as long as the
pilot's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..._records import SampleRecord
from ..._reports.cost.prices import ModelPrices, TokenUsage
from ..._reports.statistics import bootstrap

SECONDS = "seconds"  # the example's own, start to sample (not a figure of money or calls: shown as wall time)
PROMPTS = "prompts of "  # + a dollar figure: what its prompts cost (the part that follows a prompt's length)


def example_figures(record: SampleRecord, prices: ModelPrices) -> dict[str, float]:
    """What one example cost, by figure: the system's LLM calls sent (`llm_calls`; the response cache's answers
    cost nothing and count as `cached_calls`), their `prompt_tokens` and `completion_tokens`, `searches`
    (retrieval steps), per judged metric its calls and tokens (`judge:METRIC calls` ...), dollars
    (`usd:model`, `usd:judge:METRIC`; left out where the model has no price; `PROMPTS` + each: what its prompts
    cost, not a figure of its own) and its seconds."""
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
        prompts = TokenUsage()  # the same calls, their output unpaid: what the prompts cost
        prompts.calls, prompts.tokens = usage.calls, {r: [t[0], t[1], 0, *t[3:]] for r, t in usage.tokens.items()}
        out[PROMPTS + usd_key] = float(prompts.figures(prices)["usd"] or 0.0) if usage.calls else 0.0
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


def line_values(ys: np.ndarray, xs: np.ndarray, at: float) -> np.ndarray:
    """Row by row, the least-squares line of `ys` on `xs` at `at` (the mean of `ys` where `xs` do not vary), at
    least 0."""
    x_mean, y_mean = xs.mean(axis=1, keepdims=True), ys.mean(axis=1, keepdims=True)
    spread = ((xs - x_mean) ** 2).sum(axis=1)
    slope = ((xs - x_mean) * (ys - y_mean)).sum(axis=1) / np.where(spread > 0, spread, 1.0)
    values: np.ndarray = np.maximum(0.0, y_mean[:, 0] + np.where(spread > 0, slope, 0.0) * (at - x_mean[:, 0]))
    return values


def regressed(
    paid: float,
    observed: list[float],
    inputs: list[float],
    rest: float,
    remaining: int,
    part: list[float] | None = None,
) -> Interval | None:
    """The total of a figure that grows with an example's length: `paid`, and `remaining` examples whose lengths
    add up to `rest` (in the model's tokens). Of each `observed` per-example value, the `part` that follows the
    length (all of it unless given; a dollar figure's prompts) is predicted by its least-squares line on the examples'
    own `inputs` lengths (the regression estimator: the ratio estimator with an intercept, a prompt being a template
    and retrieved passages plus the example's own text), the rest (the output's dollars) by its mean: a pilot whose
    examples are all shorter than the rest's is carried up the line, where the mean alone (`extrapolated`) assumes
    them as short. Its interval is `extrapolated`'s, of that prediction at the rest's mean length over the examples
    resampled whole, with n - 2 degrees of freedom. None where fewer than 3 ran or their lengths do not vary (no
    line to read): `extrapolated` then."""
    n = len(observed)
    if remaining <= 0 or n < 3 or min(inputs) == max(inputs):
        return None
    ys, xs, at = np.asarray(observed, dtype=float), np.asarray(inputs, dtype=float), rest / remaining
    follows = ys if part is None else np.asarray(part, dtype=float)

    def predicted(rows: np.ndarray) -> np.ndarray:  # each row of example indices: its prediction
        values: np.ndarray = (ys - follows)[rows].mean(axis=1) + line_values(follows[rows], xs[rows], at)
        return values

    mean = float(predicted(np.arange(n)[None, :])[0])
    point = paid + remaining * mean
    # bootstrap.resampled's stream (numpy's default_rng(seed), in chunks of whole rounds), the rows taken whole
    draw, chunk = np.random.default_rng(BOOTSTRAP_SEED).integers, max(1, bootstrap.CHUNK_DRAWS // n)
    stats = [
        predicted(draw(0, n, size=(min(chunk, BOOTSTRAP_ROUNDS - start), n)))
        for start in range(0, BOOTSTRAP_ROUNDS, chunk)
    ]
    low, high = bootstrap.percentile_interval(np.concatenate(stats))
    widen = math.sqrt(n / (n - 2)) * t_over_z(n - 2) * math.sqrt(remaining / (n + remaining))
    unseen = point - remaining * mean * min(1.0, 3 / n) if min(observed) > 0 else point  # the rule of three
    low = min(unseen, point - remaining * (mean - low) * widen)
    return Interval(point, max(paid, low), max(point, point + remaining * (high - mean) * widen))


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


def length_part(key: str) -> str | None:
    """The figure of an example's that follows its prompt's length within figure `key`: prompt tokens themselves, a
    dollar figure's prompts (`PROMPTS`); None for a figure that does not grow with it (`regressed`)."""
    return key if key.endswith("prompt_tokens") else PROMPTS + key if key.startswith("usd:") else None


class Totals:
    """A task's figures added up: `paid`, over every sample saved (failed examples' calls were paid too), and
    `observed`, the per-example figures of the finished examples, what the examples still to run are estimated
    from; `inputs`, each finished example's own length in the model's tokens where a tokenizer counted them (None
    where one was not counted), and `rest`, the lengths of the examples still to run added up (None: not counted)."""

    def __init__(self) -> None:
        self.paid: dict[str, float] = {}
        self.observed: list[dict[str, float]] = []
        self.inputs: list[float | None] = []
        self.rest: float | None = None

    def add(self, figures: Mapping[str, float], finished: bool, length: float | None = None) -> None:
        for key, value in figures.items():
            if not key.startswith(PROMPTS):  # a part of a figure paid, not paid besides it
                self.paid[key] = self.paid.get(key, 0.0) + value
        if finished:
            self.observed.append(dict(figures))
            self.inputs.append(length)

    def keys(self) -> list[str]:
        return sorted({*self.paid, *(key for each in self.observed for key in each)})

    def estimate(self, remaining: int) -> dict[str, Interval]:
        """Each figure's total once `remaining` more examples ran (a figure an example lacks counts 0 there); where
        `rest` (the lengths of those examples, added up) and every finished example's length are known, the figures
        that grow with a prompt's length by regression on the lengths (`regressed`)."""
        out = {}
        lengths = [float(each) for each in self.inputs if each is not None]
        for key in (key for key in self.keys() if key != "examples" and not key.startswith(PROMPTS)):
            observed = [each.get(key, 0.0) for each in self.observed]
            paid, part, line = self.paid.get(key, 0.0), length_part(key), None
            if self.rest is not None and part is not None and len(lengths) == len(observed):
                following = [each.get(part, 0.0) for each in self.observed]
                line = regressed(paid, observed, lengths, self.rest, remaining, following)
            out[key] = line or extrapolated(paid, observed, remaining)
        return out

    def beyond_met(self, remaining: int) -> tuple[float, float] | None:
        """The mean length of the `remaining` examples and the longest a finished one had, where the former is the
        longer: the line (`regressed`) is carried beyond the lengths the pilot met; None where it is not."""
        met = [each for each in self.inputs if each is not None]
        if self.rest is None or not met or remaining <= 0 or self.rest / remaining <= max(met):
            return None
        return self.rest / remaining, max(met)

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
