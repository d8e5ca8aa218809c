"""p-values adjusted for the number of comparisons a table shows.

`ragbench compare` tests every task, metric and slice at once: dozens of rows, so some are "significant" by
chance alone. Holm's step-down method (the default) bounds the chance of any false positive among them under
any dependence between the rows (metrics of one run are correlated); Benjamini-Hochberg's bounds the
expected share of false positives instead, under positive dependence, and rejects more.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

METHODS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "none"}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values times (m - i), made non-decreasing in
    that order, at most 1."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    values: list[float] = adjusted.tolist()
    return values


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg's step-up adjustment: the i-th smallest of m p-values times m / i, made
    non-decreasing from the largest down, at most 1."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    values: list[float] = adjusted.tolist()
    return values


def adjusted(p_values: Sequence[float], method: str) -> list[float]:
    """`p_values` adjusted by `method` (a key of METHODS); "none" returns them as they are."""
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    if method == "none":
        return [float(p) for p in p_values]
    raise ValueError(f"unknown p-value adjustment {method!r} (one of {', '.join(METHODS)})")
