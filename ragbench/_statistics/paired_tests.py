"""The paired tests of `ragbench compare`: McNemar's exact test on 0/1 values, else a paired bootstrap's
interval and two-sided p-value of the mean difference (examples resampled together)."""

from __future__ import annotations

import math
from decimal import MAX_EMAX, MIN_EMIN, Decimal, localcontext

import numpy as np

from .bootstrap import mean, percentile_interval, resampled, resampled_by_counts

EXACT_UP_TO = 20_000  # discordant pairs whose binomial tail is summed in integers (20 ms at most)
NEGLIGIBLE = Decimal("1e-45")
# Up to this many pairs, the bootstrap draws the pairs themselves (`resampled`: iterations x pairs indices); above,
# where the differences take few distinct values (COUNTS_COST times fewer than the pairs: 0/1 metrics, token F1),
# how many times each distinct difference is drawn (`resampled_by_counts`: the same distribution, another stream).
DRAWN_ONE_BY_ONE_UP_TO = 100_000
COUNTS_COST = 8  # a count drawn (a binomial) costs about as much as this many indices drawn and read
UNDERFLOWS = -760.0  # the natural log of a tail that rounds to 0.0 (the smallest float is about e**-744.4)


def mcnemar_p(a: np.ndarray, b: np.ndarray) -> float:
    """Exact two-sided McNemar test: binomial(n_discordant, 1/2) on the pairs where A and B differ."""
    only_a = int(np.sum((a == 1) & (b == 0)))
    only_b = int(np.sum((a == 0) & (b == 1)))
    n = only_a + only_b
    if n == 0:
        return 1.0
    return min(1.0, 2 * binomial_tail(n, min(only_a, only_b)))


def binomial_tail(n: int, k: int) -> float:
    """P(X <= k) for X ~ binomial(n, 1/2), k <= n / 2: the sum of C(n, i) for i <= k over 2**n. Exact (the float
    nearest the sum's quotient) up to EXACT_UP_TO; above, to 40 significant digits (`decimal_tail`), which
    rounds to the same float but where the quotient lies within 1e-40 of halfway between two floats."""
    if n > EXACT_UP_TO:
        return decimal_tail(n, k)
    term = total = 1
    for i in range(1, k + 1):
        term = term * (n - i + 1) // i
        total += term
    outcomes: int = 2**n  # (mypy types int ** int as Any: a negative exponent would make a float)
    return total / outcomes


def decimal_tail(n: int, k: int) -> float:
    """`binomial_tail` in 40-digit decimals: each C(n, i) as its ratio to the central one, C(n, n // 2), walked
    down from the centre; the ratios' sum over every i is 2**n / C(n, n // 2). The walk stops where what is left
    below (a geometric series bound) is under 1e-45 of the tail. A tail far under the smallest float is 0.0 without
    the walk (its bound from lgamma, good to 1e-8 here)."""
    centre = n // 2
    if math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2) + math.log(n) < UNDERFLOWS:
        return 0.0
    with localcontext() as context:
        context.prec, context.Emin, context.Emax = 40, MIN_EMIN, MAX_EMAX
        term, below, tail = Decimal(1), Decimal(0), Decimal(1 if k >= centre else 0)
        for i in range(centre, 0, -1):
            term = term * i / (n - i + 1)  # C(n, i - 1) / C(n, centre)
            below += term
            if i - 1 <= k:
                tail += term
                ratio = Decimal(i - 1) / (n - i + 2)  # of the next term to this one, and less below
                if term * ratio / (1 - ratio) < tail * NEGLIGIBLE:
                    break
        whole = 1 + 2 * below if n % 2 == 0 else 2 * (1 + below)
        return float(tail / whole)


def paired_bootstrap(a: np.ndarray, b: np.ndarray, iterations: int, seed: int) -> tuple[tuple[float, float], float]:
    """95% interval of mean(b - a) over examples resampled in pairs, and the two-sided p-value."""
    diffs = b - a
    by_counts = len(diffs) > DRAWN_ONE_BY_ONE_UP_TO and len(np.unique(diffs)) * COUNTS_COST <= len(diffs)
    draws = resampled_by_counts(diffs, iterations, seed) if by_counts else resampled(diffs, iterations, seed)
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
    if np.all((x == 0) | (x == 1)) and np.all((y == 0) | (y == 1)):
        return interval, mcnemar_p(x, y), "mcnemar"
    return interval, p_boot, "bootstrap"
