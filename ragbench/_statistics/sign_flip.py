"""The one-sided paired test of `ragbench gate`: is the candidate worse than its baseline on the examples both
scored?

`worse` holds one value per paired example: how much worse the candidate did on it, in the metric's direction
(baseline - candidate where higher is better). Where the candidate is no worse, each example's difference is as
likely to be +d as -d (the two runs exchangeable on it: a rerun's noise, a sampled judge's verdicts), so the mean of
the differences with random signs is the null distribution of their mean: a paired sign-flip randomization test
(Fisher, 1935). p is the chance of a mean at least as large as the one observed:

- every nonzero difference of one size (0/1 metrics: EM, accuracy, a judge's correct/incorrect): the worse examples
  among the discordant ones are binomial(n, 1/2), summed exactly (`binomial_tail`): the one-sided exact McNemar test;
- else `iterations` random sign vectors, drawn per distinct size (a random bit for a size held once, a count of plus
  signs for one held c times: the sum of c random signs is 2 binomial(c, 1/2) - c), and p = (1 + draws at least as
  large) / (1 + iterations): a p-value whose level holds for any number of draws (Phipson and Smyth, 2010),
  deterministic for a seed.

`spread`: draws of a term added to the observed mean (a judge's error against human labels, `rectifier_draws`),
centred on zero; the null distribution is then the sign-flip draws plus these, drawn alongside (no exact path).
"""

from __future__ import annotations

import numpy as np

from .bootstrap import CHUNK_DRAWS, resampled_by_counts
from .paired_tests import binomial_tail

TIES = 1e-9  # a draw within this share of the mean absolute difference of the observed mean counts as reaching it


def regression_p(
    worse: np.ndarray, iterations: int, seed: int, spread: np.ndarray | None = None, shift: float = 0.0
) -> float:
    """The one-sided p-value of "the candidate is worse": of mean(worse) + `shift` under the sign-flip null
    distribution (plus `spread`, one draw per iteration, where given). 1.0 where no pair differs and nothing spreads;
    `worse` must hold at least one pair."""
    values = np.asarray(worse, dtype=float)
    if not len(values):
        raise ValueError("regression_p: no paired example")
    nonzero = values[values != 0]
    if spread is None and not len(nonzero):
        return 1.0 if shift <= 0 else 0.0  # the mean is exactly `shift`, with no spread
    n = len(values)
    observed = float(nonzero.sum()) / n + shift
    tolerance = TIES * max(float(np.abs(nonzero).sum()) / n, abs(shift))
    sizes, counts = np.unique(np.abs(nonzero), return_counts=True)
    if spread is None and shift == 0 and len(sizes) == 1:
        return at_least(int(counts[0]), int(np.sum(nonzero > 0)))
    draws = sign_flip_means(sizes, counts, n, iterations, seed)
    if spread is not None:
        if len(spread) != iterations:
            raise ValueError(f"regression_p: {len(spread)} spread draws for {iterations} iterations")
        draws = draws + spread
    reached = int(np.sum(draws >= observed - tolerance))
    return (1 + reached) / (1 + iterations)


def at_least(n: int, k: int) -> float:
    """P(X >= k) for X ~ binomial(n, 1/2), exactly where it is under 1/2 (`binomial_tail` sums the lower tail)."""
    if k <= 0:
        return 1.0
    if 2 * k >= n:
        return binomial_tail(n, n - k)  # P(X >= k) = P(X <= n - k), by symmetry
    return 1.0 - binomial_tail(n, k - 1)


def sign_flip_means(sizes: np.ndarray, counts: np.ndarray, n: int, iterations: int, seed: int) -> np.ndarray:
    """`iterations` means over `n` examples of the differences of each size in `sizes` (`counts` of each) with
    random signs; the examples that do not differ add 0. A size held once takes a random bit as its sign (packed
    bits, a byte for eight), one held more often a binomial count of plus signs."""
    rng = np.random.default_rng(seed)
    once = counts == 1
    single, sizes, counts = sizes[once], sizes[~once], counts[~once]
    single_total = float(single.sum())
    means = np.empty(iterations)
    per_chunk = max(1, CHUNK_DRAWS // max(1, len(single) + len(sizes)))
    for start in range(0, iterations, per_chunk):
        count = min(per_chunk, iterations - start)
        total = np.zeros(count)
        if len(single):
            packed = rng.integers(0, 256, size=(count, (len(single) + 7) // 8), dtype=np.uint8)
            bits = np.unpackbits(packed, axis=1, count=len(single))
            total += 2 * (bits @ single) - single_total
        if len(sizes):
            positive = rng.binomial(counts, 0.5, size=(count, len(sizes)))
            total += (2 * positive - counts) @ sizes
        means[start : start + count] = total / n
    return means


def rectifier_draws(values: np.ndarray, counts: np.ndarray, iterations: int, seed: int) -> np.ndarray:
    """`iterations` bootstrap means of a sample given as each distinct value's count, less the sample's mean: the
    sampling error of that mean (a judge's mean error against the humans on the examples they labelled)."""
    sample = np.repeat(np.asarray(values, dtype=float), np.asarray(counts, dtype=np.int64))
    if not len(sample):
        raise ValueError("rectifier_draws: no labelled example")
    return resampled_by_counts(sample.tolist(), iterations, seed) - float(sample.mean())


def exact(worse: np.ndarray) -> bool:
    """Whether `regression_p` (without a spread) sums the binomial exactly: every nonzero difference of one size."""
    values = np.asarray(worse, dtype=float)
    return len(np.unique(np.abs(values[values != 0]))) <= 1
