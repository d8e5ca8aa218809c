"""Property: whatever a task's samples hold (slice values of any JSON kind, scores that are numbers, None or no
score, failed examples, bad records, metric failures), the compact columns a run's end keeps give the numbers of
the samples themselves: each key's values, n, n_none and n_errors, and each slice's values in sample order, as a
plain grouping of the records computes them; the data digest is `data_sha256`'s."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import records_without_texts
from ragbench._reports.aggregation import task_scores
from ragbench._reports.results.score_columns import summarise
from ragbench._reports.results.slice_labels import field_labels, ordered, slice_value
from ragbench._storage.checkpoint import data_sha256
from ragbench.api import Metric

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
