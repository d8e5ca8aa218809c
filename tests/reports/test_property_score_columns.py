"""Property: whatever a task's samples hold (slice values of any JSON kind, scores that are numbers, None or no
score, failed examples, bad records, metric failures), the compact columns a run's end keeps give the numbers of
the samples themselves: each key's values, n, n_none and n_errors, and each slice's values in sample order, as a
plain grouping of the records computes them; the data digest is `data_sha256`'s. And how slice values are labelled
and ordered (`SliceLabels`, `ordered`): a record without a value, the string "(none)", a boolean and the string
"True" apart, numbers ordered as numbers, no value last (where the labels reach the user: test_slice_labels.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench._reports.aggregation import task_scores
from ragbench._reports.results.score_columns import summarise
from ragbench._reports.results.slice_labels import SliceLabels, field_labels, ordered, slice_value
from ragbench._storage.checkpoint import data_sha256
from ragbench.api import Metric, MetricDeclaration
from support.helpers import records_without_texts

SLICE_VALUES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.sampled_from(["1", "a", "None", "(none)", "2"])
    | st.lists(st.integers(0, 2), max_size=2)
    | st.dictionaries(st.sampled_from("xy"), st.integers(0, 1), max_size=1)
)
SCORES = st.none() | st.floats(0, 1) | st.sampled_from(["0.5", float("nan")])  # a string, NaN: no score
SAMPLES = st.lists(
    st.fixed_dictionaries(
        {
            "meta": st.dictionaries(st.just("level"), SLICE_VALUES, max_size=1),
            "scores": st.dictionaries(st.just("match"), SCORES, max_size=1),
        },
        optional={
            "error": st.just("Boom: it failed"),
            "bad_record": st.just(True),
            "score_errors": st.just({"match": "ValueError: no"}),
        },
    ),
    max_size=30,
)


class Match(Metric):
    name = "match"


def plainly(samples: list[dict], iterations: int) -> dict:
    """The key's entry as a grouping of the records computes it (each scored record with its value)."""
    scored, n_none, n_errors = [], 0, 0
    for sample in samples:
        scores = sample.get("scores") or {}
        if sample.get("error") is not None or "match" in (sample.get("score_errors") or {}) or "match" not in scores:
            n_errors += 1
        elif scores["match"] is None:
            n_none += 1
        elif isinstance(scores["match"], float) and scores["match"] == scores["match"]:
            scored.append((sample, scores["match"]))
        else:
            n_errors += 1
    labels = field_labels([s.get("meta") for s in samples if not s.get("bad_record")], "level")
    groups: dict[str, list[float]] = {label: [] for label in labels.labels()}
    for sample, value in scored:
        groups.setdefault(labels.label(slice_value(sample.get("meta"), "level")), []).append(value)
    return {
        **summarise([v for _, v in scored], None, iterations, 3),
        "n_none": n_none,
        "n_errors": n_errors,
        "slices": {"level": {label: summarise(groups[label], None, iterations, 3) for label in ordered(groups)}},
    }


@settings(max_examples=60, deadline=None)
@given(SAMPLES)
def test_the_columns_give_the_numbers_of_the_samples_themselves(samples):
    samples = [
        {
            **sample,
            "index": i,
            "example_sha256": f"{i:064x}",
            **({"error": "bad record: data.jsonl:1: no question"} if sample.get("bad_record") else {}),
        }
        for i, sample in enumerate(samples)
    ]
    out = task_scores(iter(records_without_texts(samples)), [Match()], ("level",), None, 20, 3)
    entry = out["details"]["match"]
    expected = plainly(samples, 20)
    assert {key: entry[key] for key in ("value", "ci95", "n", "n_none", "n_errors")} == {
        key: expected[key] for key in ("value", "ci95", "n", "n_none", "n_errors")
    }
    assert list(entry["slices"]["level"].items()) == list(expected["slices"]["level"].items())
    assert out["data_sha256"] == data_sha256(samples)


# -- the official denominators (tests/reports/test_official_denominators.py): the headline over every gold example --------


class Accuracy(Metric):
    name = "acc"
    declares = MetricDeclaration(value_range=(0, 1))


class Length(Metric):
    name = "length"
    declares = MetricDeclaration(higher_is_better=None, value_range=(0, None))


# one record: a score, not scorable (None), a failed example, or the metric failing on it
OUTCOMES = st.one_of(st.floats(0, 1), st.none(), st.just("failed"), st.just("metric failed"))


def sample(index: int, outcome) -> dict:
    record = {"id": str(index), "index": index, "example_sha256": str(index), "meta": {}}
    if outcome == "failed":
        return {**record, "error": "RuntimeError: boom"}
    if outcome == "metric failed":
        return {**record, "error": None, "scores": {"length": 3.0}, "score_errors": {"acc": "ValueError: bad"}}
    return {**record, "error": None, "scores": {"acc": outcome, "length": 3.0}}


@settings(max_examples=60)
@given(outcomes=st.lists(OUTCOMES, max_size=30), missing=st.integers(0, 5))
def test_the_headline_is_the_sum_of_per_example_scores_over_every_gold_example(outcomes, missing):
    """Reference: the official scripts' sum of per-example scores (a failed, missing or unscored one adding 0)
    over every gold example that is scorable; the answered-only view: the mean of the scores the run has."""
    samples = [sample(i, outcome) for i, outcome in enumerate(outcomes)]
    metrics = [Accuracy(), Length()]
    out = task_scores(
        records_without_texts(samples),
        metrics,
        (),
        len(samples) + missing,
        iterations=0,
        seed=0,
        missing_scores_zero=True,
    )
    values = [o for o in outcomes if isinstance(o, float)]
    wrong = sum(o in ("failed", "metric failed") for o in outcomes) + missing
    entry = out["details"]["acc"]
    if values or wrong:
        assert entry["value"] == pytest.approx(math.fsum(values) / (len(values) + wrong))
    assert (entry["n"], entry["counted_wrong"], entry["answered"]["n"]) == (len(values) + wrong, wrong, len(values))
    assert entry["n_none"] == outcomes.count(None)
    assert entry["answered"]["value"] == (pytest.approx(math.fsum(values) / len(values)) if values else None)
    # a key whose worst value is not 0 (no direction) is reported as for any task: failures apart
    length = out["details"]["length"]
    assert "answered" not in length and length["n_errors"] == outcomes.count("failed")
    plain = task_scores(records_without_texts(samples), metrics, (), len(samples) + missing, iterations=0, seed=0)
    assert plain["details"]["acc"]["value"] == entry["answered"]["value"]


def test_no_value_beside_the_string_none_marker_and_booleans():
    labels = SliceLabels(
        [
            slice_value({"f": None}, "f"),
            slice_value({"f": "(none)"}, "f"),
            slice_value({"f": True}, "f"),
            slice_value({"f": "True"}, "f"),
            slice_value({"f": 2.5}, "f"),
        ]
    )
    assert labels.labels() == ["2.5", "True", "True [boolean]", "(none)", "(none) [no value]"]
    assert labels.label(slice_value({}, "f")) == "(none) [no value]"  # absent: no value, as null


def test_labels_order_numbers_as_numbers_and_no_value_last():
    labels = [
        "10",
        "2",
        "(none)",
        "hop_10",
        "hop_2",
        "-1",
        "0.5",
        "0.25",
        "easy",
        "2024-01-20",
        "2024-01-15",
        "1 [number]",
        "1",
    ]
    assert ordered(labels) == [
        "-1",
        "0.25",
        "0.5",
        "1",
        "1 [number]",
        "2",
        "10",
        "2024-01-15",
        "2024-01-20",
        "easy",
        "hop_2",
        "hop_10",
        "(none)",
    ]
