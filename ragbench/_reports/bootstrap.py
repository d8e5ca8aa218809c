"""The one bootstrap of ragbench: a statistic over examples resampled with replacement.

Used by per-task confidence intervals (results.py), paired run comparisons (compare.py) and
ROUGE's upstream aggregate (metrics/rouge.py). Two random streams: numpy's `default_rng(seed)`
(ragbench's own intervals) and, with `legacy=True`, `RandomState(seed)` - the stream rouge-score's
BootstrapAggregator draws from (`np.random.choice(n, size=n)` per round), so its median is matched.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def resampled(values: Sequence[float], iterations: int, seed: int,
              statistic: Callable[[list[float]], float] | None = None, legacy: bool = False) -> np.ndarray:
    """The statistic (the mean unless given) of each of `iterations` resamples of `values`."""
    data = np.asarray(values, dtype=float)
    shape = (iterations, len(data))
    if legacy:
        draws = np.random.RandomState(seed).randint(0, len(data), size=shape)
    else:
        draws = np.random.default_rng(seed).integers(0, len(data), size=shape)
    if statistic is None:
        return data[draws].mean(axis=1)
    return np.array([statistic(list(data[row])) for row in draws])


def percentile_interval(stats: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap statistics."""
    low, high = np.percentile(stats, [2.5, 97.5])
    return float(low), float(high)
