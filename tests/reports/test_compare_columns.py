"""`ragbench compare` reads runs line by line into columns of scores: the same comparison as when it held every
record (tests/data/compare_before.json, made by ragbench before), McNemar's tail of many pairs without summing
every binomial coefficient, large rows bootstrapped by counts, and memory that holds no record."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragbench._reports.compare.comparison import Run, compare_runs, load_run
from ragbench._reports.compare.run_scores import parse_sample_line
from ragbench._reports.results.file import normalized_results
from ragbench._reports.results.schema import Results
from ragbench._statistics import paired_tests
from ragbench._statistics.bootstrap import resampled, resampled_by_counts
from ragbench._statistics.paired_tests import EXACT_UP_TO, binomial_tail, compare_values, decimal_tail
from ragbench.api import ConfigError
from support import paths
from support.compare_fixtures import SEEDS, compared

BEFORE = json.loads((paths.DATA / "compare_before.json").read_text())


@pytest.mark.parametrize("seed", SEEDS)
def test_varied_runs_compare_as_they_did_when_every_record_was_held(tmp_path, seed):
    """Random 0/1 and continuous scores, examples in one run only, failures, bad records, odd values, ids read
    twice, slice values of mixed kinds, changed data: every row, warning and line as before, to the bit."""
    assert compared(tmp_path, seed) == BEFORE[str(seed)]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(2**62, 2**80)
    | st.integers(-(2**80), -(2**62))
    | st.floats()
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(st.dictionaries(st.sampled_from(["id", "index", "schema_version", "scores", "meta", "trace"]), json_values))
@settings(max_examples=200, deadline=None)
def test_a_sample_line_is_read_as_json_reads_it_where_compare_looks(line):
    """orjson where it gives the same: integers beyond 64 bits (orjson's floats), NaN and Infinity (which
    orjson refuses) are read by json.loads."""
    text = json.dumps(line)
    read, expected = parse_sample_line(text), json.loads(text)
    for field in ("id", "index", "schema_version", "scores", "meta"):
        assert repr(read.get(field)) == repr(expected.get(field))


def exact_tail(n: int, k: int) -> float:
    term = total = 1
    for i in range(1, k + 1):
        term = term * (n - i + 1) // i
        total += term
    return total / 2**n


@given(st.integers(EXACT_UP_TO + 1, EXACT_UP_TO + 2000), st.floats(0, 1))
@example(20003, 0.0).via("no discordant pair the other way")
@example(20003, 7298 / 10001).via("the smallest float")  # k = 7298
@example(20003, 7309 / 10001).via("a subnormal float")
@example(20002, 1.0).via("the centre of an even n")
@example(20001, 1.0).via("the centre of an odd n")
@settings(max_examples=15, deadline=None)
def test_the_tail_of_many_discordant_pairs_is_the_exact_sums_float(n, share):
    k = int(share * (n // 2))
    assert decimal_tail(n, k) == exact_tail(n, k) == binomial_tail(n, k)


def test_the_tail_of_a_million_discordant_pairs_is_quick_to_reach():
    """McNemar's test of 1,000,000 discordant pairs: 40 digits from the centre down, never the 10**5 digit sums."""
    assert decimal_tail(1_000_000, 500_000) == pytest.approx(0.5 + 0.5 * 0.000797884, rel=1e-6)
    assert decimal_tail(1_000_000, 1000) == 0.0  # under the smallest float
    z = (499_000 + 0.5 - 500_000) / 500  # the normal approximation of the tail, 2 standard deviations out
    assert decimal_tail(1_000_000, 499_000) == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2)), rel=1e-2)


@pytest.mark.parametrize("values", [[-1.0, 0.0, 0.0, 1.0, 1.0], [0.0, 0.25, 0.5, 0.5, 1.0, 3.0]])
def test_resamples_drawn_by_counts_have_the_distribution_of_resamples_drawn_one_by_one(values):
    data = np.repeat(values, 400)  # 2,000 or 2,400 values of few distinct ones
    by_counts, one_by_one = resampled_by_counts(data, 4000, 0), resampled(data, 4000, 1)
    sd = np.std(data) / math.sqrt(len(data))  # of a resample's mean
    assert abs(by_counts.mean() - data.mean()) < 0.1 * sd and abs(by_counts.std() / sd - 1) < 0.05
    low, high = np.percentile(by_counts, [2.5, 97.5])
    assert np.percentile(one_by_one, [2.5, 97.5]) == pytest.approx([low, high], abs=0.15 * sd)


def test_a_row_of_more_pairs_than_drawn_one_by_one_is_bootstrapped_by_counts(monkeypatch):
    rng = np.random.default_rng(3)
    a, b = (rng.random(5000) < 0.5).astype(float), (rng.random(5000) < 0.55).astype(float)
    drawn = compare_values(a, b, 2000, 0)
    monkeypatch.setattr(paired_tests, "DRAWN_ONE_BY_ONE_UP_TO", 1000)
    counted = compare_values(a, b, 2000, 0)
    assert counted != drawn and counted[1:] == drawn[1:] == (counted[1], "mcnemar")  # McNemar's p either way
    assert counted[0] == pytest.approx(drawn[0], abs=0.005)  # the 95% interval, width 0.04: another stream
    assert counted[0][0] < (b - a).mean() < counted[0][1]
    f1 = rng.random(5000).round(6)  # 5,000 distinct values: still drawn one by one
    assert compare_values(a, f1, 2000, 0) == (
        paired_tests.paired_bootstrap(a, f1, 2000, 0)[0],
        paired_tests.paired_bootstrap(a, f1, 2000, 0)[1],
        "bootstrap",
    )


def records_run(path: Path, values: dict[str, float | None]) -> Run:
    results = Results.from_dict(normalized_results({"details": {"t": {"m": {"value": None}}}}))
    return Run(path, results, {"t": {i: {"scores": {"m": v}, "meta": {}} for i, v in values.items()}}, {"t": {}})


@given(
    st.dictionaries(
        st.text(max_size=3), st.one_of(st.none(), st.sampled_from([0.0, 1.0]), st.floats(-5, 5)), max_size=30
    ),
    st.dictionaries(
        st.text(max_size=3), st.one_of(st.none(), st.sampled_from([0.0, 1.0]), st.floats(-5, 5)), max_size=30
    ),
)
@settings(max_examples=60, deadline=None)
def test_a_row_is_the_paired_test_of_the_values_both_runs_have_in_id_order(ours, theirs):
    shared = sorted(i for i in set(ours) & set(theirs) if ours[i] is not None and theirs[i] is not None)
    runs = records_run(Path("a"), ours), records_run(Path("b"), theirs)
    if not shared:
        with pytest.raises(ConfigError, match="share no"):
            compare_runs(*runs)
        return
    [row] = compare_runs(*runs, iterations=50).rows
    a, b = [float(ours[i]) for i in shared], [float(theirs[i]) for i in shared]  # type: ignore[arg-type]
    interval, p, test = compare_values(a, b, 50, 0)
    assert (row.n, row.mean_a, row.mean_b, row.diff) == (len(a), np.mean(a), np.mean(b), np.mean(np.subtract(b, a)))
    assert (row.ci95, row.test) == (interval, test) and row.p_value == (p if len(a) >= 10 else None)


def test_a_run_read_for_compare_holds_its_scores_not_its_records(tmp_path):
    """Sample lines of ~1 kB each: what a read run holds grows by tens of bytes an example, not by its records."""
    lines = [
        {
            "schema_version": 2,
            "index": i,
            "id": f"q{i}",
            "question": "a question about the river and its city " * 5,
            "meta": {"level": i % 5},
            "example_sha256": f"{i:064x}",
            "prediction": {"answer": "an answer " * 10},
            "trace": [{"kind": "llm", "name": "answer", "request": {"prompt": "a prompt " * 40}}],
            "error": None,
            "scores": {"em": float(i % 2), "f1": i / 4000},
        }
        for i in range(4000)
    ]
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "t.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    details = {key: {"value": 0.5, "slices": {"level": {}}} for key in ("em", "f1")}
    (tmp_path / "results.json").write_text(json.dumps({"results": {"t": {"em": 0.5}}, "details": {"t": details}}))
    tracemalloc.start()
    try:
        run = load_run(tmp_path)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(run.samples["t"]) == 4000
    assert held < 300 * 4000, f"{held / 4000:.0f} bytes an example"  # records without their texts: 950 each
