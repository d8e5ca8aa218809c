"""Prediction-powered inference of a mean (Angelopoulos et al., 2023, "Prediction-powered inference", with the
power tuning of PPI++, Angelopoulos, Duchi and Zrnic, 2023): n examples a human labelled (`labels`, with the
judge's values on them, `judged`) and N examples only the judge scored (`unlabelled`) give an estimate of the
mean human label and a normal-approximation interval that is never wider than the humans' own, for a judge
that is any good, and narrower the better it is.

    estimate = lambda * mean(unlabelled) + mean(labels - lambda * judged)
    variance = lambda^2 * var(unlabelled) / N + var(labels - lambda * judged) / n        (variances with ddof 0)

lambda (`power`): given, or tuned as ppi-python (`ppi_mean_pointestimate` / `ppi_mean_ci` with lhat=None) tunes it:
cov(labels, judged) / ((1 + n/N) * var(judged and unlabelled pooled)), the covariance with ddof 0 and the
pooled variance with ddof 1, clipped to [0, 1]. lambda = 1 is the original PPI estimator, the one ARES (ares-ai)
reports; lambda = 0 is the humans' mean alone (the classical interval). The effective sample size is the number
of human labels whose classical interval would be as narrow as the PPI interval: n * var_classical / var_ppi
(PPI++'s reading of a variance ratio; the gain is effective_n - n).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


@dataclass(frozen=True)
class MeanInterval:
    """An estimate of a mean with its two-sided normal-approximation interval and standard error."""

    value: float
    low: float
    high: float
    std_error: float


@dataclass(frozen=True)
class PpiMean(MeanInterval):
    """The PPI estimate, the lambda it used, and the effective number of human labels it is worth."""

    power: float
    effective_n: float | None  # None: neither interval has any width (every label and judge value alike)


def z_interval(value: float, std_error: float, confidence: float) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return value - z * std_error, value + z * std_error


def classical_mean(labels: Sequence[float], confidence: float = 0.95) -> MeanInterval:
    """The mean of the human labels alone with its normal interval (ppi-python's `classical_mean_ci`)."""
    y = np.asarray(labels, dtype=float)
    std_error = float(y.std() / np.sqrt(len(y)))
    value = float(y.mean())
    return MeanInterval(value, *z_interval(value, std_error, confidence), std_error)


def tuned_power(labels: np.ndarray, judged: np.ndarray, unlabelled: np.ndarray) -> float:
    """PPI++'s variance-minimising lambda for a mean, clipped to [0, 1] (0 where the judge's values do not vary)."""
    n, big_n = len(labels), len(unlabelled)
    covariance = float(np.mean((labels - labels.mean()) * (judged - judged.mean())))
    pooled = np.concatenate([judged, unlabelled])
    variance = float(pooled.var(ddof=1)) if len(pooled) > 1 else 0.0
    if variance <= 0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(
    labels: Sequence[float],
    judged: Sequence[float],
    unlabelled: Sequence[float],
    confidence: float = 0.95,
    power: float | None = None,
) -> PpiMean:
    """The PPI estimate of the mean human label and its interval (`power` None: tuned). Raises ValueError where
    there is no labelled or no unlabelled example, or the labelled ones have no judge value each."""
    y, f_labelled, f_unlabelled = (np.asarray(values, dtype=float) for values in (labels, judged, unlabelled))
    n, big_n = len(y), len(f_unlabelled)
    if n == 0 or big_n == 0 or len(f_labelled) != n:
        raise ValueError(f"PPI needs labelled examples with a judge value each and unlabelled ones ({n}, {big_n})")
    lam = tuned_power(y, f_labelled, f_unlabelled) if power is None else float(power)
    value = float(lam * f_unlabelled.mean() + (y - lam * f_labelled).mean())
    variance = float((lam * f_unlabelled).var() / big_n + (y - lam * f_labelled).var() / n)
    std_error = float(np.sqrt(variance))
    classical_variance = float(y.var() / n)
    effective_n = n * classical_variance / variance if variance > 0 else None
    return PpiMean(value, *z_interval(value, std_error, confidence), std_error, lam, effective_n)
