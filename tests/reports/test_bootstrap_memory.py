"""The bootstrap draws its resamples in bounded chunks: the memory of a run's end does not grow with the
number of examples times the rounds, and the statistics are those of one draw of every round at once."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ragbench._config.option_bounds import MAX_BOOTSTRAP_ITERATIONS
from ragbench._reports.aggregation import task_scores
from ragbench._statistics import bootstrap
from ragbench._statistics.bootstrap import CHUNK_DRAWS, resampled
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
