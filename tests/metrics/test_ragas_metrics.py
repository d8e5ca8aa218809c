"""The five `ragas_*` metrics against ragas 0.4.3 run unmodified on the same samples with a fake judge server
(tests/data/parity/ragas.json): the chat requests ragas sent, in order, with their sampling (instructor's re-ask of
an unterminated reply included), and the score ragas computed for each sample (or the input it refused)."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_openai import FakeServer

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction, Preflight
from ragbench.metrics.ragas.metric import (
    RagasContextPrecision,
    RagasContextRecall,
    RagasFactualCorrectness,
    RagasFaithfulness,
    RagasResponseRelevancy,
    average_precision,
    fbeta,
)
from ragbench.metrics.ragas.prompts import messages
from ragbench.metrics.ragas.replies import read
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here
from support.pydantic_errors import recording

PARITY = json.loads(recording(TEST_DATA / "parity" / "ragas.json"))
SAMPLES = {sample["id"]: sample for sample in PARITY["samples"]}
METRICS = {
    "faithfulness": RagasFaithfulness,
    "context_precision": RagasContextPrecision,
    "context_recall": RagasContextRecall,
    "factual_correctness": RagasFactualCorrectness,
    "answer_relevancy": RagasResponseRelevancy,
}
SHARED = {upstream: metric() for upstream, metric in METRICS.items()}  # one encoder load for every test
CASES = [(upstream, sample) for upstream in METRICS for sample in SAMPLES]
RETRIED = "broken_reply"  # its first replies are unterminated JSON: instructor asked again


def example_and_prediction(sample: dict) -> tuple[Example, Prediction]:
    example = Example(id=sample["id"], question=sample["user_input"], gold={"answers": [sample["reference"]]})
    docs = [Document(id=str(i), title="", text=text) for i, text in enumerate(sample["retrieved_contexts"])]
    return example, Prediction(sample["id"], answer=sample["response"], docs=docs)


def recorded_judge(upstream: str, sample_id: str) -> ScriptedLLM:
    """A judge answering, in order, what the fake server answered ragas (its re-asks included)."""
    return ScriptedLLM([call["reply"] for call in PARITY["calls"][upstream].get(sample_id, [])])


def reasked(calls: list[dict]) -> int:
    """How many of the calls are re-asks (the conversation with a refused reply in it)."""
    return sum(any(m["role"] == "assistant" for m in call["messages"]) for call in calls)


def scored(upstream: str, sample_id: str, llm: ScriptedLLM, metric=None) -> tuple[dict, Counter]:
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])
    example, prediction = example_and_prediction(SAMPLES[sample_id])
    return asyncio.run((metric or SHARED[upstream]).score(example, prediction, ctx)), counted


def sent(request) -> dict:
    """A ScriptedLLM request as the OpenAI chat body fields ragas's client sent."""
    sampling = request.sampling
    return {
        "messages": request.message_dicts(),
        "params": {
            "max_tokens": sampling.max_tokens,
            "response_format": {"type": "json_object"} if sampling.json_mode else None,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "n": sampling.n,
        },
    }


def as_sent(call: dict) -> dict:
    return {
        "messages": call["messages"],
        "params": {"n": 1, **{k: v for k, v in call["params"].items() if k != "model"}},
    }


@functools.cache
def replayed(upstream: str, sample_id: str) -> tuple[list[dict], dict | ValueError, Counter]:
    """One sample scored once by the metric with the recorded judge (the encoder is slow on a busy machine):
    the requests sent, the scores or the ValueError raised, the counts."""
    llm = recorded_judge(upstream, sample_id)
    try:
        scores, counted = scored(upstream, sample_id, llm)
    except ValueError as exc:
        return [sent(r) for r in llm.requests], exc, Counter()
    return [sent(r) for r in llm.requests], scores, counted


@pytest.mark.parametrize(("upstream", "sample_id"), CASES)
def test_the_judge_is_asked_ragas_requests_in_ragas_order(upstream, sample_id):
    expected = [as_sent(call) for call in PARITY["calls"][upstream].get(sample_id, [])]
    assert replayed(upstream, sample_id)[0] == expected


def tolerance(upstream: str) -> float:
    """How close a value is to ragas's: to 1e-9, but a cosine of the encoder's float32 embeddings to 1e-6 (their
    sums' order, so their last bits, follow the number of threads torch runs on, which other tests set)."""
    return 1e-6 if upstream == "answer_relevancy" else 1e-9


@pytest.mark.parametrize(("upstream", "sample_id"), CASES)
def test_each_sample_scores_as_ragas_scores_it(upstream, sample_id):
    expected = PARITY["scores"][upstream][sample_id]
    _, scores, counted = replayed(upstream, sample_id)
    if isinstance(expected, dict):  # ragas refused the sample's empty input before any call
        assert isinstance(scores, ValueError) and expected["error"] == "ValueError"
        assert "empty" in str(scores) or "no documents" in str(scores)
        return
    assert isinstance(scores, dict)
    assert counted == +Counter({"ragas_unparsed": reasked(PARITY["calls"][upstream].get(sample_id, []))})
    value = scores[METRICS[upstream].name]
    assert value == (None if expected is None else pytest.approx(expected, abs=tolerance(upstream)))


@pytest.mark.parametrize("upstream", ["faithfulness", "factual_correctness", "answer_relevancy"])
def test_a_reply_that_does_not_parse_is_counted_and_asked_again(upstream):
    _, scores, counted = replayed(upstream, RETRIED)
    want = PARITY["scores"][upstream][RETRIED]
    assert counted["ragas_unparsed"] >= 1
    assert scores == {METRICS[upstream].name: None if want is None else pytest.approx(want, abs=tolerance(upstream))}


def test_average_precision_and_fbeta_are_ragas_formulas():
    assert average_precision([0, 1, 1]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert average_precision([0, 0]) == 0.0
    assert fbeta(1, 1, 0, 1.0) == pytest.approx(2 / 3) and fbeta(0, 3, 2, 1.0) == 0.0


def test_factual_correctness_precision_mode_asks_only_the_answers_claims():
    llm = recorded_judge("factual_correctness", "paris")
    scores, _ = scored("factual_correctness", "paris", llm, RagasFactualCorrectness(mode="precision"))
    assert len(llm.requests) == 2 and scores == {"ragas_factual_correctness": 1.0}


def test_a_closed_book_prediction_fails_instead_of_scoring_no_contexts():
    example, _ = example_and_prediction(SAMPLES["paris"])
    ctx = make_context("demo", judges=[ScriptedLLM("{}")])
    unknown = Prediction("paris", answer="Paris.", docs=None)
    with pytest.raises(ValueError):
        asyncio.run(RagasFaithfulness().score(example, unknown, ctx))


@settings(max_examples=60, deadline=None)
@given(question=st.text(), answer=st.text())
def test_any_input_is_shown_as_the_json_ragas_dumps_it(question, answer):
    prompt = messages("statements", {"question": question, "answer": answer})[1]["content"]
    shown = prompt[prompt.rindex("\ninput: ") + len("\ninput: ") : prompt.rindex("\nOutput: ")]
    assert json.loads(shown) == {"question": question, "answer": answer}
    assert shown == json.dumps({"question": question, "answer": answer}, indent=4, ensure_ascii=False)


@settings(max_examples=60, deadline=None)
@given(
    verdicts=st.lists(st.integers(0, 1), max_size=12), tp=st.integers(0, 9), fp=st.integers(0, 9), fn=st.integers(0, 9)
)
def test_ragas_formulas_of_0_1_verdicts_stay_within_0_1(verdicts, tp, fp, fn):
    assert 0 <= average_precision(verdicts) <= 1
    assert 0 <= fbeta(tp, fp, fn, 1.0) <= 1 + 1e-12


@settings(max_examples=60, deadline=None)
@given(statements=st.lists(st.text(), max_size=5), verdicts=st.lists(st.integers(-(2**62), 2**62), max_size=5))
def test_a_reply_of_any_fitting_object_reads_back(statements, verdicts):
    judged = [{"statement": s, "reason": "r", "verdict": v} for s, v in zip(statements, verdicts)]
    assert read(json.dumps({"statements": judged}), "nli") == {"statements": judged}


def test_without_sentence_transformers_the_preflight_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as when it is not installed
    check = Preflight()
    RagasResponseRelevancy().preflight(check, None)
    assert check.problems == [
        "metric ragas_response_relevancy needs sentence-transformers: pip install 'ragbench[retrieval]'"
    ]


SAMPLES_TASK = """task: ragas_samples
description: the ragas parity samples
data: {path: samples.json, format: json}
fields:
  id: id
  question: user_input
  gold: {answers: reference}
prompt:
  template: "{{ question }}"
metrics: [ragas_faithfulness, ragas_context_precision, ragas_context_recall, ragas_factual_correctness]
"""


def test_a_run_with_an_openai_judge_sends_ragas_bodies_and_gets_ragas_scores(tmp_path):
    """`ragbench score` through the openai engine to a local server answering as the fake server answered
    ragas: the same request bodies (ragbench adds n and seed), the same value per sample."""
    replies = {
        json.dumps(call["messages"]): call["reply"]
        for calls in PARITY["calls"].values()
        for sample_calls in calls.values()
        for call in sample_calls
    }
    server = FakeServer(reply=lambda body: replies[json.dumps(body["messages"])])
    samples = PARITY["samples"]
    (tmp_path / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    (tmp_path / "ragas_samples.yaml").write_text(SAMPLES_TASK, encoding="utf-8")
    predictions = [
        {
            "id": s["id"],
            "output": s["response"],
            "docs": [{"id": str(i), "title": "", "text": t} for i, t in enumerate(s["retrieved_contexts"])],
        }
        for s in samples
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    try:
        cli_here(
            "score",
            "--task",
            str(tmp_path / "ragas_samples.yaml"),
            "--predictions",
            str(tmp_path / "predictions.jsonl"),
            "--judge",
            "openai:gpt-4o-mini",
            "--judge-arg",
            f"0.base_url={server.base_url}",
            "--output",
            str(tmp_path / "run"),
        )
    finally:
        server.stop()
    sent_bodies = Counter(
        json.dumps({k: v for k, v in r["body"].items() if k not in ("n", "seed")}, sort_keys=True)
        for r in server.requests
    )
    ragas_bodies = Counter(
        json.dumps({"messages": call["messages"], **call["params"]}, sort_keys=True)
        for upstream in ("faithfulness", "context_precision", "context_recall", "factual_correctness")
        for sample in samples
        for call in PARITY["calls"][upstream].get(sample["id"], [])
    )
    assert sent_bodies == ragas_bodies
    assert {(r["body"]["n"], "seed" in r["body"]) for r in server.requests} == {(1, True)}
    rows = {
        row["id"]: row["scores"]
        for row in map(json.loads, (tmp_path / "run" / "samples" / "ragas_samples.jsonl").open())
    }
    for upstream in ("faithfulness", "context_precision", "context_recall", "factual_correctness"):
        for sample in samples:
            expected = PARITY["scores"][upstream][sample["id"]]
            got = rows[sample["id"]].get(METRICS[upstream].name)
            assert got == (
                None
                if isinstance(expected, dict) or expected is None
                else pytest.approx(expected, abs=tolerance(upstream))
            )
