"""The bootstrap. It draws its resamples in bounded chunks: the memory of a run's end does not grow with the
number of examples times the rounds, and the statistics are those of one draw of every round at once. Its 95%
percentile interval (`percentile_interval`, worked out without numpy's general quantile machinery) is numpy's
`np.percentile(stats, [2.5, 97.5])`, bit for bit, whatever the statistics: every results.json interval was numpy's
and stays so."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ragbench._config.option_bounds import MAX_BOOTSTRAP_ITERATIONS
from ragbench._reports.aggregation import task_scores
from ragbench._statistics import bootstrap
from ragbench._statistics.bootstrap import CHUNK_DRAWS, percentile_interval, resampled
from ragbench.api import Metric
from support.helpers import cli_here, cli_run_args, records_without_texts


class Match(Metric):
    name = "match"


def peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_aggregating_many_examples_holds_a_bounded_chunk_of_resamples_not_all_of_them():
    n, iterations = 20_000, 1000  # all resamples at once: 160 MB of indices and as much of values
    samples = [
        {"id": str(i), "index": i, "meta": {"kind": "ab"[i % 2]}, "scores": {"match": float(i % 3 == 0)}}
        for i in range(n)
    ]
    read = records_without_texts(samples)
    peak = peak_bytes(lambda: task_scores(read, [Match()], ("kind",), n, iterations, 0))
    chunk = 2 * 8 * CHUNK_DRAWS  # the indices of a chunk and their values
    assert peak < chunk + 4 * 8 * n + 8 * iterations + 4_000_000, f"peak {peak / 1e6:.0f} MB"


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("n", [1, 7, 3000])
def test_resamples_drawn_in_chunks_are_those_of_one_draw(n, legacy, monkeypatch):
    values = np.random.default_rng(1).random(n)
    monkeypatch.setattr(bootstrap, "CHUNK_DRAWS", 10**9)  # every round in one draw
    whole = resampled(values, 301, 5, legacy=legacy)
    monkeypatch.setattr(bootstrap, "CHUNK_DRAWS", 2 * n + 1)  # two rounds a chunk
    assert np.array_equal(resampled(values, 301, 5, legacy=legacy), whole)


def test_a_run_with_more_bootstrap_rounds_than_can_be_held_is_refused_before_it_starts(tmp_path):
    refused = cli_here(
        *cli_run_args("scripted:echo"),
        "--limit",
        "2",
        "--bootstrap-iters",
        str(MAX_BOOTSTRAP_ITERATIONS * 100),
        "--no-progress",
        "--output",
        str(tmp_path / "run"),
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert f"--bootstrap-iters {MAX_BOOTSTRAP_ITERATIONS * 100}: at most 1,000,000 rounds" in refused.stderr
    assert not (tmp_path / "run").exists()


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
