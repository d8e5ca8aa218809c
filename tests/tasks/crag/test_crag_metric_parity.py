"""CRAG auto-eval against both upstream evaluators, run with a stubbed judge
(tests/data/parity/crag_*.json; see their "how")."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from ragbench.api import Prediction
from ragbench.tasks.crag.metrics import (
    CragAutoEval,
    CragHumanEval,
    CragRepoAutoEval,
    parse_crag_repo,
    parse_kddcup2024,
    truncate_prediction,
)
from ragbench.tasks.crag.prompts import judge_prompt, prompts
from ragbench.testing import ScriptedLLM
from support.crag_helpers import example_of, fixture_judge, llama2_tokenizer_dir, metric_ctx, parity_fixture

METRICS = {"kddcup2024": CragAutoEval, "crag_repo": CragRepoAutoEval}


def score_rows(protocol: str):
    fixture = parity_fixture(protocol)
    judge = fixture_judge(fixture)
    metric = METRICS[protocol]()

    async def all_rows():
        return [
            await metric.score(example_of(row), Prediction(row["id"], answer=row["prediction"]), metric_ctx(judge))
            for row in fixture["rows"]
        ]

    return fixture, judge, asyncio.run(all_rows())


@pytest.mark.parametrize("protocol", ["kddcup2024", "crag_repo"])
def test_every_row_gets_the_upstream_label(protocol):
    fixture, _, scores = score_rows(protocol)
    for row, upstream, ours in zip(fixture["rows"], fixture["per_row"], scores):
        expected = upstream["result"]
        assert (ours["accuracy"], ours["missing"]) == (expected["n_correct"], expected["n_miss"]), row["id"]
        assert ours["hallucination"] == expected["hallucination"], row["id"]
        if protocol == "kddcup2024":
            assert ours["exact_accuracy"] == expected["n_correct_exact"], row["id"]


@pytest.mark.parametrize("protocol", ["kddcup2024", "crag_repo"])
def test_aggregates_equal_upstream(protocol):
    fixture, _, scores = score_rows(protocol)
    expected = fixture["aggregate"]
    n = len(scores)
    for key in ("accuracy", "hallucination", "missing", "score") + (
        ("exact_accuracy",) if protocol == "kddcup2024" else ()
    ):
        assert sum(s[key] for s in scores) / n == pytest.approx(expected[key], abs=1e-12), key


@pytest.mark.parametrize("protocol", ["kddcup2024", "crag_repo"])
def test_judge_is_asked_exactly_the_upstream_calls(protocol):
    fixture, judge, _ = score_rows(protocol)
    asked = [request.messages[1][1] for request in judge.requests]
    assert asked == [call["user"] for call in fixture["judge_calls"]["calls"]]
    assert judge.requests[0].messages[0][1] == fixture["judge_calls"]["system"]


def test_judge_sampling_follows_each_evaluator():
    for protocol, temperature in (("kddcup2024", None), ("crag_repo", 0.0)):
        assert {c["temperature"] for c in parity_fixture(protocol)["judge_calls"]["calls"]} == {temperature}
    assert CragRepoAutoEval.judge_sampling["temperature"] == 0.0
    assert CragAutoEval.judge_sampling["temperature"] == 1.0  # unset upstream = the API default


def test_truncation_equals_upstream_llama2_trim():
    fixture = parity_fixture("kddcup2024")
    for row, upstream in zip(fixture["rows"], fixture["per_row"]):
        assert truncate_prediction(row["prediction"], llama2_tokenizer_dir()) == upstream["truncated"], row["id"]


def test_judge_system_prompts_are_byte_exact():
    for protocol, key in (("kddcup2024", "kddcup2024_starter_kit"), ("crag_repo", "crag_repo")):
        system = judge_prompt(protocol)["system"]
        assert hashlib.sha256(system.encode()).hexdigest() == prompts()["judge"][key]["system_sha256"]
        assert system == parity_fixture(protocol)["judge_calls"]["system"]


@pytest.mark.parametrize(
    "reply, accurate",
    [
        ('{"Accuracy": "True"}', True),
        ('{"accuracy": true}', True),
        ('{"Accuracy": "TRUE"}', True),
        ('{"Accuracy": "False"}', False),
        ("Accuracy: True", False),
        ('Sure! {"Accuracy": "True"}', False),
        ('{"accuracy": 1}', False),
        ("", False),
        (None, False),
        ("[true]", False),
    ],
)
def test_kddcup2024_parser(reply, accurate):
    assert parse_kddcup2024(reply) is accurate


@pytest.mark.parametrize(
    "reply, accurate",
    [
        ('{"score": 1, "explanation": "x"}', True),
        ('text {"score": 1} more', True),
        ('{"score": 1}\nWait, no! {"score": 0}', False),
        ('{"score": 2}', False),
        ('{"score": "1"}', False),
        ("score: 1", False),
        ("", False),
        ("not json at all", False),
    ],
)
def test_crag_repo_parser(reply, accurate):
    assert parse_crag_repo(reply) is accurate


def test_two_judges_are_averaged_per_example():
    example = example_of({"id": "x", "query": "q", "answer": "a", "alt_ans": []})
    ctx = metric_ctx(ScriptedLLM('{"Accuracy": "True"}'), ScriptedLLM('{"Accuracy": "False"}'))
    scores = asyncio.run(CragAutoEval().score(example, Prediction("x", answer="not a"), ctx))
    assert scores == {"accuracy": 0.5, "hallucination": 0.5, "missing": 0.0, "score": 0.0, "exact_accuracy": 0.0}


def test_rule_decided_rows_need_no_judge_and_judged_rows_say_so():
    example = example_of({"id": "x", "query": "q", "answer": "a", "alt_ans": []})
    assert asyncio.run(CragAutoEval().score(example, Prediction("x", answer="A"), metric_ctx()))["accuracy"] == 1.0
    with pytest.raises(ValueError, match="--judge"):
        asyncio.run(CragAutoEval().score(example, Prediction("x", answer="b"), metric_ctx()))


@pytest.mark.parametrize(
    "label, score_h", [("perfect", 1.0), ("Acceptable", 0.5), ("missing", 0.0), ("incorrect", -1.0)]
)
def test_human_labels_give_score_h(label, score_h):
    prediction = Prediction("x", answer="a", extras={"label": label})
    assert (
        CragHumanEval().score(example_of({"id": "x", "query": "q", "answer": "a", "alt_ans": []}), prediction)[
            "score_h"
        ]
        == score_h
    )


def test_unknown_human_label_is_an_error_and_no_label_is_not_scorable():
    example = example_of({"id": "x", "query": "q", "answer": "a", "alt_ans": []})
    with pytest.raises(ValueError, match="not one of"):
        CragHumanEval().score(example, Prediction("x", extras={"label": "great"}))
    assert CragHumanEval().score(example, Prediction("x"))["score_h"] is None
