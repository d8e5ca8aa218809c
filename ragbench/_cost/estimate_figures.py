"""The figures of a run's cost estimate (`ragbench estimate`, ragbench._run.estimate.pilot_run): what each example that
ran cost (`example_figures`: LLM calls, prompt and output tokens, searches, judge calls, dollars by model, seconds),
and the totals of a run from a sample of its examples (`Totals`, `extrapolated`).

The interval of a total is the 95% bootstrap-t interval (ragbench._statistics.bootstrap.studentized_interval,
2000 resamples, seed 0) of the mean per-example figure of the examples that ran, its spread widened by sqrt(1 + n/M)
(what is predicted is the mean of the M examples still to run, which varies about the run's mean as the pilot's
does: the total's error is M times the difference of the two, whose variance is s^2 (1/n + 1/M)), times M, plus what
was paid already, exactly. A per-example figure with a long tail (a reply's length) is skewed: a pilot whose mean
reads low reads its spread low too, which the studentized interval allows for: on benchmarks/estimate_accuracy.py the
percentile interval (widened by Student's t) held the total in 88-94% of 200 pilots, this one in 91-96.5%. It assumes the
examples that ran are like those still to run: the pilot takes a random sample of each task's records for that
reason (ragbench._run.estimate.pilot_run).

Where the run's model has a tokenizer at hand (ragbench._cost.estimate_tokens), each example's own text is counted in
its tokens, the pilot's and the rest's alike, and the figures that grow with a prompt's length (prompt tokens,
dollars) are estimated by regression on it (`regressed`): the examples left are no longer assumed as long as the
pilot's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .._records import SampleRecord
from .._statistics import bootstrap
from .prices import ModelPrices
from .token_usage import TokenUsage

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
class EstimatedTotal:
    """A total's point estimate and its 95% interval (`low`, `high`; `high` None: unbounded, too few examples ran
    to tell a spread). `each`: the one per-example value every example that ran had (two or more of them), a figure
    fixed by design (vanilla's one LLM call an example), shown as its point and that value with no interval; else
    None."""

    point: float
    low: float
    high: float | None
    each: float | None = None

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


def extrapolated(paid: float, observed: list[float], remaining: int) -> EstimatedTotal:
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
        return EstimatedTotal(paid, paid, paid)
    n = len(observed)
    mean = bootstrap.mean(observed) if n else 0.0
    point = paid + remaining * mean
    if n < 2:
        return EstimatedTotal(point, paid, None)
    unseen = rule_of_three(point, remaining * mean, observed)
    if min(observed) == max(observed):
        return EstimatedTotal(point, max(paid, unseen), point, observed[0])
    values = np.asarray(observed, dtype=float)

    def mean_and_error(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        drawn = values[rows]
        return drawn.mean(axis=1), drawn.std(axis=1, ddof=1) / math.sqrt(n)

    return studentized(paid, mean, remaining, mean_and_error, n, unseen)


def rule_of_three(point: float, left: float, observed: list[float]) -> float:
    """The low end a rare free example allows (`extrapolated`): where none of the n `observed` was 0, the `point`
    less 3/n of the examples left's part of it (`left`); the point where one was."""
    return point - left * min(1.0, 3 / len(observed)) if min(observed) > 0 else point


def studentized(
    paid: float,
    mean: float,
    remaining: int,
    statistic: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    n: int,
    unseen: float,
) -> EstimatedTotal:
    """The total of `paid` and `remaining` examples of per-example `mean`: its interval the bootstrap-t interval of
    the `statistic` (of rows of example indices: each row's estimate and its standard error) over `BOOTSTRAP_ROUNDS`
    resamples of the `n` examples, widened by sqrt(1 + n / remaining) (the examples left vary about the run's mean
    as the pilot does; the module docstring), its low end at most `unseen` (the rule of three) and never below
    `paid`; unbounded above where a resample's t is (a pilot of very few)."""
    draw, chunk = np.random.default_rng(BOOTSTRAP_SEED).integers, max(1, bootstrap.CHUNK_DRAWS // n)
    drawn = [
        statistic(draw(0, n, size=(min(chunk, BOOTSTRAP_ROUNDS - start), n)))
        for start in range(0, BOOTSTRAP_ROUNDS, chunk)
    ]
    estimates, errors = np.concatenate([each[0] for each in drawn]), np.concatenate([each[1] for each in drawn])
    own = statistic(np.arange(n)[None, :])[1][0]
    low, high = bootstrap.studentized_interval(estimates, errors, mean, float(own))
    point, widen = paid + remaining * mean, math.sqrt(1 + n / remaining)
    low_end, top = point - remaining * (mean - low) * widen, point + remaining * (high - mean) * widen
    return EstimatedTotal(point, max(paid, min(unseen, low_end)), max(point, top) if top < math.inf else None)


def regressed(
    paid: float,
    observed: list[float],
    inputs: list[float],
    rest: float,
    remaining: int,
    part: list[float] | None = None,
) -> EstimatedTotal | None:
    """The total of a figure that grows with an example's length: `paid`, and `remaining` examples whose lengths
    add up to `rest` (in the model's tokens). Of each `observed` per-example value, the `part` that follows the
    length (all of it unless given; a dollar figure's prompts) is predicted by its least-squares line on the examples'
    own `inputs` lengths (the regression estimator: the ratio estimator with an intercept, a prompt being a template
    and retrieved passages plus the example's own text), the rest (the output's dollars) by its mean: a pilot whose
    examples are all shorter than the rest's is carried up the line, where the mean alone (`extrapolated`) assumes
    them as short. Its interval is `studentized`, of that prediction at the rest's mean length over the examples
    resampled whole, each resample's standard error that of a line's value (s^2 (1/n + (at - mean x)^2 / Sxx), s^2
    the residuals' variance over n - 2). None where fewer than 3 ran or their lengths do not vary (no line to read):
    `extrapolated` then."""
    n = len(observed)
    if remaining <= 0 or n < 3 or min(inputs) == max(inputs):
        return None
    ys, xs, at = np.asarray(observed, dtype=float), np.asarray(inputs, dtype=float), rest / remaining
    follows = ys if part is None else np.asarray(part, dtype=float)
    scale = float(np.abs(ys).max())

    def predicted(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # each row of example indices
        other, line, x = (ys - follows)[rows], follows[rows], xs[rows]
        x_mean, line_mean, other_mean = (each.mean(axis=1, keepdims=True) for each in (x, line, other))
        spread = ((x - x_mean) ** 2).sum(axis=1, keepdims=True)
        varies = spread > 0  # else the line is its mean
        slope = np.where(varies, ((x - x_mean) * (line - line_mean)).sum(axis=1, keepdims=True), 0.0) / np.where(
            varies, spread, 1.0
        )
        values = other_mean + np.maximum(0.0, line_mean + slope * (at - x_mean))
        residuals = other - other_mean + line - line_mean - slope * (x - x_mean)
        leverage = np.where(varies, 1 / n + (at - x_mean) ** 2 / np.where(varies, spread, 1.0), np.nan)
        errors = np.sqrt((residuals**2).sum(axis=1, keepdims=True) / (n - 2) * leverage)  # nan: no line to read
        errors[errors <= 1e-9 * scale] = 0.0  # a line through every example, but for rounding
        return values[:, 0], errors[:, 0]

    mean = float(predicted(np.arange(n)[None, :])[0][0])
    return studentized(
        paid, mean, remaining, predicted, n, rule_of_three(paid + remaining * mean, remaining * mean, observed)
    )


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
    `observed`, the per-example figures of the finished examples the examples still to run are estimated from (of
    a sequenced task's pilot, those drawn: not the earlier turns run for their history); `inputs`, each finished example's own length in the model's tokens where a tokenizer counted them (None
    where one was not counted), and `rest`, the lengths of the examples still to run added up (None: not counted).

    The examples are read in the order of their keys, whatever order they were added in (the order they finished
    in, which varies from run to run), and `paid` is summed exactly (`math.fsum`): the bootstrap resamples the
    same rows, and the same samples give the same figures to the last digit."""

    def __init__(self) -> None:
        self._samples: list[tuple[str, dict[str, float], bool, float | None]] = []
        self.rest: float | None = None

    def add(self, key: str, figures: Mapping[str, float], observed: bool, length: float | None = None) -> None:
        """The sample of the example `key` (its checkpoint key: what orders the examples), its `figures`; `observed`:
        one the rest is estimated from (else only paid)."""
        self._samples.append((key, dict(figures), observed, length))

    def _observed(self) -> list[tuple[str, dict[str, float], bool, float | None]]:
        return sorted((each for each in self._samples if each[2]), key=lambda each: each[0])

    @property
    def paid(self) -> dict[str, float]:
        keys = {key for _, figures, _, _ in self._samples for key in figures if not key.startswith(PROMPTS)}
        # a figure's part (PROMPTS) is paid as part of it, not besides it
        return {key: math.fsum(figures.get(key, 0.0) for _, figures, _, _ in self._samples) for key in sorted(keys)}

    @property
    def observed(self) -> list[dict[str, float]]:
        return [figures for _, figures, _, _ in self._observed()]

    @property
    def inputs(self) -> list[float | None]:
        return [length for _, _, _, length in self._observed()]

    def keys(self) -> list[str]:
        return sorted({*self.paid, *(key for each in self.observed for key in each)})

    def estimate(self, remaining: int) -> dict[str, EstimatedTotal]:
        """Each figure's total once `remaining` more examples ran (a figure an example lacks counts 0 there); where
        `rest` (the lengths of those examples, added up) and every finished example's length are known, the figures
        that grow with a prompt's length by regression on the lengths (`regressed`)."""
        out, rows, paid_by_key = {}, self.observed, self.paid
        lengths = [float(each) for each in self.inputs if each is not None]
        for key in (key for key in self.keys() if key != "examples" and not key.startswith(PROMPTS)):
            observed = [each.get(key, 0.0) for each in rows]
            paid, part, line = paid_by_key.get(key, 0.0), length_part(key), None
            if self.rest is not None and part is not None and len(lengths) == len(observed):
                following = [each.get(part, 0.0) for each in rows]
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
        rows = self.observed
        wanted = [
            pilot_for([each.get(key, 0.0) for each in rows], records, precision)
            for key in self.keys()
            if key.startswith("usd:")
        ]
        return max((each for each in wanted if each is not None), default=None)


def summed(intervals: Iterable[Mapping[str, EstimatedTotal]]) -> dict[str, EstimatedTotal]:
    """Tasks' intervals added up, figure by figure (each task's bounds added: a conservative interval of the sum;
    unbounded where any task's is; fixed by design where every task's is, at the same value an example)."""
    out: dict[str, EstimatedTotal] = {}
    for each in intervals:
        for key, interval in each.items():
            before = out.get(key)
            if before is None:
                out[key] = interval
                continue
            high = None if before.high is None or interval.high is None else before.high + interval.high
            fixed = before.each if before.each == interval.each else None
            out[key] = EstimatedTotal(before.point + interval.point, before.low + interval.low, high, fixed)
    return out
