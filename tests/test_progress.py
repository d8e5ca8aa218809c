"""The run's progress bar counts LLM calls answered of the calls expected so far (ragbench._run.progress), so that it
moves, with an ETA, while examples that run side by side have not ended."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from ragbench._records import SampleRecord
from ragbench._run import progress as progress_module
from ragbench._run.progress import Progress, expected_calls
from ragbench._scheduler import CallStats
from ragbench._types import Step


def record(llm_calls: int) -> SampleRecord:
    steps = [Step(kind="llm", name="step", request={}) for _ in range(llm_calls)]
    return SampleRecord(id="x", trace=[*steps, Step(kind="retrieval", name="search", request={})])


def test_before_any_example_ends_the_running_ones_are_expected_to_call_once_more():
    # 20 examples, all running in lock-step, 3 calls each answered: at least 4 each
    assert expected_calls(answered=60, examples=20, done=0, done_calls=0, in_flight=64) == 80
    # 100 examples, 10 running with 2 calls each: the others are expected to make 3 each
    assert expected_calls(answered=20, examples=100, done=0, done_calls=0, in_flight=10) == 20 + 90 * 3 + 10


def test_ended_examples_set_the_mean_and_a_finished_run_expects_what_it_made():
    # 10 ended with 4 calls each, 10 running with 3 each so far: 1 more each
    assert expected_calls(answered=70, examples=20, done=10, done_calls=40, in_flight=64) == 80
    assert expected_calls(answered=87, examples=20, done=20, done_calls=87, in_flight=64) == 87


@given(
    st.integers(1, 500),
    st.integers(0, 500),
    st.integers(0, 20),
    st.integers(1, 300),
    st.data(),
)
def test_the_expected_calls_are_never_fewer_than_those_answered_and_one_more_per_unfinished(
    examples, done, running_calls, in_flight, data
):
    done = min(done, examples)
    done_calls = data.draw(st.integers(0, 20 * done))
    answered = done_calls + running_calls
    expected = expected_calls(answered, examples, done, done_calls, in_flight)
    assert expected >= answered + min(in_flight, examples - done)
    if done == examples:
        assert expected == answered


def test_the_bar_counts_calls_as_they_are_answered_with_a_total(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(progress_module.sys, "stderr", out)
    stats = CallStats()
    bar = Progress(stats, total=4, in_flight=64)
    assert bar.bar is not None and bar.bar.total == 4  # one call each at least
    stats.calls, stats.cache_hits = 6, 2  # every example has made two calls, none has ended
    bar.refresh()
    assert (bar.bar.n, bar.bar.total) == (8, 12)
    bar.advance(record(3))
    stats.calls += 1
    bar.refresh()
    assert (bar.bar.n, bar.bar.total) == (9, 9 + 3 * 1)  # the others: 3 each, one more each at least
    bar.close()
    assert "call" in out.getvalue() and "examples=1/4" in out.getvalue()


def test_a_run_of_unknown_size_counts_calls_without_a_total(monkeypatch):
    monkeypatch.setattr(progress_module.sys, "stderr", io.StringIO())
    stats = CallStats(calls=5)
    bar = Progress(stats, total=None, in_flight=64)
    bar.refresh()
    assert bar.bar is not None and bar.bar.n == 5 and bar.bar.total is None
    bar.close()
