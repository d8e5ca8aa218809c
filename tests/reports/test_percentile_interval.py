"""A bootstrap's 95% percentile interval (ragbench._statistics.bootstrap.percentile_interval, worked out without
numpy's general quantile machinery) is numpy's `np.percentile(stats, [2.5, 97.5])`, bit for bit, whatever the
statistics: every results.json interval was numpy's and stays so."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ragbench._statistics.bootstrap import percentile_interval, resampled


def same_floats(mine: tuple[float, float], numpys: np.ndarray) -> bool:
    """Equal as floats and in sign (0.0 and -0.0 told apart), NaN equal to NaN."""
    return all(
        type(m) is float
        and (m == n or (math.isnan(m) and math.isnan(n)))
        and math.copysign(1, m) == math.copysign(1, n)
        for m, n in zip(mine, (float(x) for x in numpys), strict=True)
    )


@given(arrays(np.float64, st.integers(1, 400), elements=st.floats(allow_nan=False, allow_infinity=False)))
def test_the_interval_is_numpys_for_any_finite_statistics(stats):
    assert same_floats(percentile_interval(stats.copy()), np.percentile(stats, [2.5, 97.5]))


@given(arrays(np.float64, st.integers(1, 60), elements=st.floats()))
def test_statistics_with_a_nan_or_an_infinity_get_numpys_interval(stats):
    with np.errstate(invalid="ignore"):  # numpy's inf - inf, as it was
        assert same_floats(percentile_interval(stats.copy()), np.percentile(stats, [2.5, 97.5]))


@given(
    st.lists(st.sampled_from([0.0, -0.0, 1.0, 0.5, 1 / 3, 1e-300, 5e-324]), min_size=2, max_size=30),
    st.sampled_from([1, 2, 10, 39, 40, 41, 50, 200, 1000]),
    st.integers(0, 2**32 - 1),
)
def test_the_interval_of_a_runs_resampled_means_is_numpys(values, iterations, seed):
    """The statistics a run's keys have: means of resamples of a few distinct scores (many ties, ends of 0 and 1)."""
    stats = resampled(values, iterations, seed)
    assert same_floats(percentile_interval(stats), np.percentile(stats, [2.5, 97.5]))


def test_the_statistics_are_left_as_they_were():
    stats = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    percentile_interval(stats)
    assert stats.tolist() == [3.0, 1.0, 2.0, 5.0, 4.0]


def test_one_statistic_is_both_ends_sign_and_all():
    for value in (-0.0, 0.0, 0.25, -7.5):
        stats = np.array([value])
        assert same_floats(percentile_interval(stats), np.percentile(stats, [2.5, 97.5]))
