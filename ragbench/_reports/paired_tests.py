"""The paired tests of `ragbench compare`: McNemar's exact test on 0/1 values, else a paired bootstrap's
interval and two-sided p-value of the mean difference (examples resampled together)."""

from __future__ import annotations

import math

import numpy as np

from .bootstrap import mean, percentile_interval, resampled


def mcnemar_p(a: np.ndarray, b: np.ndarray) -> float:
    """Exact two-sided McNemar test: binomial(n_discordant, 1/2) on the pairs where A and B differ."""
    only_a = int(np.sum((a == 1) & (b == 0)))
    only_b = int(np.sum((a == 0) & (b == 1)))
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, iterations: int, seed: int) -> tuple[tuple[float, float], float]:
    """95% interval of mean(b - a) over examples resampled in pairs, and the two-sided p-value."""
    diffs = b - a
    draws = resampled(diffs, iterations, seed)
    low, high = percentile_interval(draws)
    observed = mean(diffs)
    if observed == 0:
        p = 1.0
    else:
        crossing = np.sum(draws <= 0) if observed > 0 else np.sum(draws >= 0)
        p = min(1.0, max(2 * crossing / iterations, 1 / iterations))
    return (low, high), float(p)


def compare_values(
    a: list[float], b: list[float], iterations: int, seed: int
) -> tuple[tuple[float, float] | None, float, str]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    interval, p_boot = paired_bootstrap(x, y, iterations, seed) if len(x) >= 2 else (None, 1.0)
    if set(np.unique(np.concatenate([x, y]))) <= {0.0, 1.0}:
        return interval, mcnemar_p(x, y), "mcnemar"
    return interval, p_boot, "bootstrap"
