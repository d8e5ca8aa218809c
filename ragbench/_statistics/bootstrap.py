"""The one bootstrap of ragbench: a statistic over examples resampled with replacement.

Used by per-task confidence intervals (aggregation.py), paired run comparisons (compare/comparison.py) and
ROUGE's upstream aggregate (metrics/rouge.py). Two random streams: numpy's `default_rng(seed)`
(ragbench's own intervals) and, with `legacy=True`, `RandomState(seed)` - the stream rouge-score's
BootstrapAggregator draws from (`np.random.choice(n, size=n)` per round), so its median is matched.

The resamples are drawn in chunks of whole rounds (at most CHUNK_DRAWS indices at once), so memory
stays bounded whatever the number of examples and of rounds; both streams give the same indices in
chunks as in one draw, so the statistics are those of a single (iterations, n) draw. `resampled_by_counts` draws
the same resamples' means by counts of distinct values, for many values of few distinct ones (`ragbench compare`'s
large runs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

CHUNK_DRAWS = 1 << 20  # example indices drawn at once (8 MiB, and as much again for their values)


def resampled(
    values: Sequence[float],
    iterations: int,
    seed: int,
    statistic: Callable[[list[float]], float] | None = None,
    legacy: bool = False,
) -> np.ndarray:
    """The statistic (the mean unless given) of each of `iterations` resamples of `values`."""
    data = np.asarray(values, dtype=float)
    draw = np.random.RandomState(seed).randint if legacy else np.random.default_rng(seed).integers
    stats = np.empty(iterations)
    rows = max(1, CHUNK_DRAWS // max(1, len(data)))
    exponent = mean_exponent(data)
    scaled = np.ldexp(data, -exponent) if exponent else data
    for start in range(0, iterations, rows):
        count = min(rows, iterations - start)
        draws = draw(0, len(data), size=(count, len(data)))
        if statistic is None:
            stats[start : start + count] = np.ldexp(scaled[draws].mean(axis=1), exponent)
        else:
            stats[start : start + count] = [statistic(list(data[row])) for row in draws]
    return stats


def resampled_by_counts(values: Sequence[float], iterations: int, seed: int) -> np.ndarray:
    """The mean of each of `iterations` resamples of `values`, each resample drawn as how many times it takes each
    distinct value (a multinomial of len(values) draws over the values' shares): the distribution of `resampled`'s
    means, from another stream of random numbers, in time of the distinct values rather than of the values."""
    data = np.asarray(values, dtype=float)
    distinct, counts = np.unique(data, return_counts=True)
    draw = np.random.default_rng(seed).multinomial
    stats = np.empty(iterations)
    rows = max(1, CHUNK_DRAWS // len(distinct))
    exponent = mean_exponent(data)
    scaled = np.ldexp(distinct, -exponent) if exponent else distinct
    for start in range(0, iterations, rows):
        count = min(rows, iterations - start)
        taken = draw(len(data), counts / len(data), size=count)
        stats[start : start + count] = np.ldexp((taken * scaled).sum(axis=1) / len(data), exponent)
    return stats


def mean_exponent(data: np.ndarray) -> int:
    """0, or the power of two the values are divided by for a mean where their sum could overflow (values
    near the largest float): a mean never exceeds the largest value, so it is then finite."""
    peak = float(np.max(np.abs(data))) if len(data) else 0.0
    if not math.isfinite(peak) or peak * len(data) < 2.0**1000:
        return 0
    return math.frexp(peak)[1]


def mean(values: Sequence[float] | np.ndarray) -> float:
    """The mean of finite values, finite however large they are (`mean_exponent`); numpy's mean otherwise."""
    data = np.asarray(values, dtype=float)
    exponent = mean_exponent(data)
    return float(np.ldexp(np.mean(np.ldexp(data, -exponent)), exponent)) if exponent else float(np.mean(data))


def studentized_interval(stats: np.ndarray, errors: np.ndarray, statistic: float, error: float) -> tuple[float, float]:
    """The 95% bootstrap-t interval (Efron and Tibshirani, An Introduction to the Bootstrap, 12.5) of `statistic`,
    whose standard error is `error`, from the resamples' `stats` and their own standard `errors`: the statistic less
    the 97.5th and 2.5th percentiles of the resamples' t = (stat - statistic) / error, times `error`. Where a
    skewed sample's mean is low its spread reads low too; the percentile interval misses that, the t's spread of
    each resample by its own does not. A resample of no spread but another value has an unbounded t (so an end of
    -inf or inf); one whose error is nan (the statistic cannot be read in it) is left out; an `error` of 0 (no
    spread in the sample) gives the statistic itself."""
    if error == 0:
        return statistic, statistic
    known, diff = ~np.isnan(errors), stats - statistic
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(errors[known] > 0, diff[known] / errors[known], np.sign(diff[known]) * np.inf)
    t = np.nan_to_num(t, nan=0.0, posinf=np.inf, neginf=-np.inf)  # 0 * inf: a resample of the statistic itself
    low, high = np.quantile(t, [0.025, 0.975], method="inverted_cdf")  # no interpolation: an infinite end stays so
    return statistic - float(high) * error, statistic - float(low) * error


def percentile_interval(stats: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap statistics."""
    low, high = np.percentile(stats, [2.5, 97.5])
    return float(low), float(high)
