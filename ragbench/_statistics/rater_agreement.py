"""Agreement between raters of the same examples - the repeats of a sampled judge, several judges, or a run's
judge and the judge of its rescoring - and the interval of a judged headline with the judge's variance in it.

A rating table is one row per example (a unit), one value per rater, None where that rater gave none (the
judge's reply did not parse, its call failed). Every statistic reads only the units two raters or more rated
("pairable"); a value the statistic cannot have (every verdict the same, so no disagreement is possible by
chance) is None, never a made-up 1 or 0.

- `percent_agreement`: the share of pairs of raters of a unit that gave the same value, averaged over units
  (with two raters, the share of units they agree on).
- `cohen_kappa`: two raters, nominal values: (p_o - p_e) / (1 - p_e), equal to scikit-learn's `cohen_kappa_score`.
- `krippendorff_alpha`: any number of raters, missing values allowed, `nominal` or `interval` distances:
  1 - D_o / D_e over the pairable values, equal to the `krippendorff` package's `alpha`.
- `flipped_share`: the share of units whose raters did not all give the same value.
- `judged_interval`: a two-level bootstrap - examples resampled with replacement, then for each drawn example one
  of its raters drawn at random - so the interval is that of a run judged once, with the examples' and the judge's
  variance both in it (the examples' alone: results.json `ci95`). Where the headline is one rater's verdict, each
  draw is a value with the chance its example and rater give it, so a round is drawn as how often each distinct
  value is drawn (a multinomial; of the same distribution, and quick for the few values verdicts take).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from .bootstrap import CHUNK_DRAWS, percentile_interval

FEW_VALUES = 1000  # distinct ratings up to which `judged_interval` draws counts of values, not examples one by one

Rating = float | None
Table = Sequence[Sequence[Rating]]  # per unit, each rater's value


def pairable(table: Table) -> list[list[float]]:
    """The values of every unit that two raters or more rated (the missing ones left out)."""
    units = [[float(v) for v in unit if v is not None] for unit in table]
    return [unit for unit in units if len(unit) >= 2]


def percent_agreement(table: Table) -> float | None:
    """The mean over pairable units of the share of ordered pairs of raters that agree; None with no unit."""
    units = pairable(table)
    if not units:
        return None
    shares = [sum(c * (c - 1) for c in Counter(unit).values()) / (len(unit) * (len(unit) - 1)) for unit in units]
    return sum(shares) / len(shares)


def flipped_share(table: Table) -> float | None:
    """The share of pairable units on which the raters did not all give the same value; None with no unit."""
    units = pairable(table)
    return sum(len(set(unit)) > 1 for unit in units) / len(units) if units else None


def kendall_tau(first: Sequence[float], second: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scorings of the same items (e.g. runs ranked by two evaluations), ties corrected as
    scipy's `kendalltau` corrects them; None where it is undefined (fewer than two items, or one scoring all ties)."""
    if len(first) != len(second):
        raise ValueError(f"kendall_tau: {len(first)} and {len(second)} values: one per item in each")
    concordant = discordant = tied_first = tied_second = pairs = 0
    for i in range(len(first)):
        for j in range(i + 1, len(first)):
            a, b = first[i] - first[j], second[i] - second[j]
            pairs += 1
            tied_first += a == 0
            tied_second += b == 0
            concordant += a * b > 0
            discordant += a * b < 0
    denominator = ((pairs - tied_first) * (pairs - tied_second)) ** 0.5
    return None if denominator == 0 else (concordant - discordant) / denominator


def cohen_kappa(first: Sequence[Rating], second: Sequence[Rating]) -> float | None:
    """Cohen's kappa of two raters over the units both rated (values as nominal categories); None where it is
    undefined (no such unit, or both raters gave one and the same value throughout)."""
    pairs = [(float(a), float(b)) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    counts_a, counts_b = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(counts_a[c] * counts_b[c] for c in counts_a) / (n * n)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def krippendorff_alpha(table: Table, level: str = "interval") -> float | None:
    """Krippendorff's alpha of `table` with `nominal` or `interval` distances; None where it is undefined (no
    pairable unit, or every pairable value the same)."""
    if level not in ("nominal", "interval"):
        raise ValueError(f"level {level!r}: nominal or interval")
    units = pairable(table)
    values = [v for unit in units for v in unit]
    n = len(values)
    if n < 2:
        return None
    observed = sum(_pair_distances(unit, level) / (len(unit) - 1) for unit in units) / n
    expected = _pair_distances(values, level) / (n - 1) / n
    return None if expected == 0 else 1 - observed / expected


def _pair_distances(values: list[float], level: str) -> float:
    """The sum of the distances of every ordered pair of distinct positions of `values`."""
    if level == "nominal":
        return float(len(values) ** 2 - sum(c * c for c in Counter(values).values()))
    mean = sum(values) / len(values)  # about the mean: without the cancellation of n*sum(x^2) - sum(x)^2
    return 2 * len(values) * sum((x - mean) * (x - mean) for x in values)


def judged_interval(table: Table, iterations: int, seed: int, averaged: int = 1) -> tuple[float, float] | None:
    """The 95% interval of the mean of a run judged once: examples drawn with replacement, then one of each drawn
    example's ratings (see the module's docstring), or the mean of `averaged` of them drawn with replacement
    where the headline is the mean of that many judges; None with fewer than two rated examples."""
    rows = [[float(v) for v in unit if v is not None] for unit in table]
    rows = [row for row in rows if row]
    if len(rows) < 2 or iterations < 1:
        return None
    rng = np.random.default_rng(seed)
    if averaged == 1:
        weights: dict[float, float] = {}  # each value's chance to be one draw's: its example's, then its rater's
        for row in rows:
            for v in row:
                weights[v] = weights.get(v, 0.0) + 1 / len(row)
        if len(weights) <= FEW_VALUES:
            return percentile_interval(_means_by_counts(weights, len(rows), iterations, rng))
    width = max(len(row) for row in rows)
    values = np.array([row + [np.nan] * (width - len(row)) for row in rows])  # each row's ratings first
    rated = np.array([len(row) for row in rows])
    means = np.empty(iterations)
    per_chunk = max(1, CHUNK_DRAWS // (len(rows) * averaged))
    for start in range(0, iterations, per_chunk):
        count = min(per_chunk, iterations - start)
        drawn = rng.integers(0, len(rows), size=(count, len(rows)))
        which = (rng.random(size=(*drawn.shape, averaged)) * rated[drawn][..., None]).astype(int)
        means[start : start + count] = values[drawn[..., None], which].mean(axis=(1, 2))
    return percentile_interval(means)


def _means_by_counts(weights: dict[float, float], n: int, iterations: int, rng: np.random.Generator) -> np.ndarray:
    """The means of `iterations` rounds of `n` draws of the values weighted by `weights` (summing to `n`), drawn
    as how often each value is drawn: the same distribution as drawing the examples and their raters one by one."""
    values = np.array(list(weights))
    chances = np.array(list(weights.values())) / n
    chances /= chances.sum()  # exactly 1 for numpy, whatever the rounding of the sums
    means = np.empty(iterations)
    per_chunk = max(1, CHUNK_DRAWS // len(values))
    for start in range(0, iterations, per_chunk):
        count = min(per_chunk, iterations - start)
        means[start : start + count] = rng.multinomial(n, chances, size=count) @ values / n
    return means


def agreement(table: Table) -> dict[str, float | int | None]:
    """Every agreement statistic of `table` as results.json keeps them (Cohen's kappa only with two raters)."""
    raters = max((len(unit) for unit in table), default=0)
    first_two = [(unit[0], unit[1]) for unit in table if len(unit) >= 2]
    return {
        "raters": raters,
        "examples": len(pairable(table)),
        "percent_agreement": percent_agreement(table),
        "cohen_kappa": cohen_kappa(*zip(*first_two, strict=True)) if raters == 2 and first_two else None,
        "krippendorff_alpha": krippendorff_alpha(table),
        "flipped": flipped_share(table),
    }
