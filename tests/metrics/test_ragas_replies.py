"""The `ragas_*` metrics on judge replies that real local judges often give (a code fence, text before the JSON,
integers written `1.0`, `true` or `"1"`, invalid or deeply nested JSON, a reply cut at max_tokens) against ragas
0.4.3 with instructor 1.17.0 run unmodified on the same replies (tests/data/parity/ragas_replies.json: every
request, re-asks included, and each metric's score or the exception it raised), and the reading of replies against
instructor's own reading of 504 generated ones (tests/data/parity/ragas_reading.json)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from test_engine_openai import FAST, FakeServer, chat, generate

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction
from ragbench.api.engines import Request, Sampling, reasoning_model
from ragbench.metrics.ragas.metric import (
    RagasContextPrecision,
    RagasContextRecall,
    RagasFactualCorrectness,
    RagasFaithfulness,
    RagasResponseRelevancy,
)
from ragbench.metrics.ragas.prompts import PROMPTS, sampling
from ragbench.metrics.ragas.replies import output_model, read, reask
from ragbench.testing import ScriptedLLM, load_engine, make_context
from support.helpers import cli_here
from support.pydantic_errors import recording

PARITY = json.loads(recording(TEST_DATA / "parity" / "ragas_replies.json"))
READING = json.loads(recording(TEST_DATA / "parity" / "ragas_reading.json"))
SAMPLES = {sample["id"]: sample for sample in PARITY["samples"]}
DEEP = {
    "deep_array": '{"statements": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep_object": '{"a": ' * 5_000 + "1" + "}" * 5_000,
}
METRICS = {
    "faithfulness": RagasFaithfulness,
    "context_precision": RagasContextPrecision,
    "context_recall": RagasContextRecall,
    "factual_correctness": RagasFactualCorrectness,
    "answer_relevancy": RagasResponseRelevancy,
}
SHARED = {upstream: metric() for upstream, metric in METRICS.items()}
CASES = [(upstream, sample) for upstream in METRICS for sample in SAMPLES]
GAVE_UP = ("InstructorRetryException", "IncompleteOutputException")  # instructor gave up: ragas raised


def expanded(value):
    """A fixture value with its @@deep_array@@ / @@deep_object@@ written out (the recorder compacts them)."""
    if isinstance(value, dict):
        return {k: expanded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expanded(v) for v in value]
    if isinstance(value, str):
        for name, text in DEEP.items():
            value = value.replace(f"@@{name}@@", text)
    return value


def calls(upstream: str, sample_id: str) -> list[dict]:
    return expanded(PARITY["calls"][upstream][sample_id])


def answered(reply: str):
    """The scripted answer: a reply the fake server cut (finish_reason "length") as a model cut at max_tokens."""
    tokens = list(reply)
    return (
        {"response": reply, "tokens": tokens, "logprobs": [{t: 0.0} for t in tokens]}
        if reply.endswith(" " * 1_100)
        else reply
    )


def sent(request) -> dict:
    sampling = request.sampling
    return {
        "messages": request.message_dicts(),
        "params": {
            "max_tokens": sampling.max_tokens,
            "response_format": {"type": "json_object"} if sampling.json_mode else None,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
        },
    }


def as_sent(call: dict) -> dict:
    return {"messages": call["messages"], "params": {k: v for k, v in call["params"].items() if k != "model"}}


@functools.cache
def replayed(upstream: str, sample_id: str) -> tuple[list[dict], dict | ValueError, Counter]:
    """The sample scored by the metric with a judge answering what the fake server answered ragas, in order."""
    llm = ScriptedLLM([answered(call["reply"]) for call in calls(upstream, sample_id)])
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])
    sample = SAMPLES[sample_id]
    example = Example(id=sample_id, question=sample["user_input"], gold={"answers": [sample["reference"]]})
    docs = [Document(id=str(i), title="", text=text) for i, text in enumerate(sample["retrieved_contexts"])]
    prediction = Prediction(sample_id, answer=sample["response"], docs=docs)
    scores = asyncio.run(SHARED[upstream].score(example, prediction, ctx))
    return [sent(r) for r in llm.requests], scores, counted


@pytest.mark.parametrize(("upstream", "sample_id"), CASES)
def test_the_judge_is_asked_and_asked_again_as_ragas_asks(upstream, sample_id):
    assert replayed(upstream, sample_id)[0] == [as_sent(call) for call in calls(upstream, sample_id)]


@pytest.mark.parametrize(("upstream", "sample_id"), CASES)
def test_each_malformed_reply_scores_as_ragas_scores_it(upstream, sample_id):
    """ragas's value; where instructor gave up and ragas raised, not scored and counted; every refused reply
    counted as unparsed."""
    expected = PARITY["outcomes"][upstream][sample_id]
    _, scores, counted = replayed(upstream, sample_id)
    value = scores[METRICS[upstream].name]
    refused = sum(any(m["role"] == "assistant" for m in call["messages"]) for call in calls(upstream, sample_id))
    if isinstance(expected, dict):
        assert expected["error"] in GAVE_UP and value is None
        last_refused = expected["error"] == "InstructorRetryException"
        assert counted == +Counter({"ragas_gave_up": 1, "ragas_unparsed": refused + last_refused})
        return
    assert counted == +Counter({"ragas_unparsed": refused})
    tolerance = 1e-6 if upstream == "answer_relevancy" else 1e-9
    assert value == (None if expected is None else pytest.approx(expected, abs=tolerance))


def case_text(case: dict) -> str:
    shown = case["text"]
    if isinstance(shown, str):
        return shown
    depth = shown["depth"]
    return (
        '{"statements": ' + "[" * depth + "]" * depth + "}"
        if shown["nested"] == "array"
        else '{"a": ' * depth + "1" + "}" * depth
    )


@pytest.mark.parametrize("case", READING["cases"], ids=lambda case: f"{case['prompt']}")
def test_a_reply_is_accepted_or_refused_as_instructor_does(case):
    """The same decision, the same value, and for a refused reply the same re-ask text."""
    text = case_text(case)
    if case["accepted"]:
        assert read(text, case["prompt"]) == case["value"]
        return
    with pytest.raises(ValidationError) as refused:
        read(text, case["prompt"])
    assert reask(text, refused.value)[1]["content"] == (
        "Correct your JSON ONLY RESPONSE, based on the following errors:\n" + case["error"]
    )


def test_the_output_models_have_ragas_schemas():
    for name, prompt in PROMPTS.items():
        assert output_model(name).model_json_schema() == prompt["output_schema"]


INTEGERS = {"1": 1, "0": 0}
SPELLINGS = st.sampled_from(["1", "0", "1.0", "0.0", "true", "false", '"1"', '"0"'])
WRAPPERS = st.sampled_from(["{}", " {}\n", "```json\n{}\n```", "Sure:\n{}", "{} done", "{}{}"])


@settings(max_examples=80, deadline=None)
@given(
    reason=st.text(),
    verdict=SPELLINGS,
    wrapper=WRAPPERS,
    depth=st.one_of(st.integers(0, 150), st.integers(250, 100_000)),  # pydantic's JSON parser stops at 200 levels
    nest=st.booleans(),
)
def test_only_bare_json_with_integer_integers_is_read(reason, verdict, wrapper, depth, nest):
    """Any reason text, any integer spelling, any wrapping, nesting of any depth: read only where it is the bare
    object with an integer verdict, else refused with a ValidationError (never another exception)."""
    deep = ("[" * depth + "]" * depth) if nest else ('{"a": ' * depth + "1" + "}" * depth)
    body = f'{{"reason": {json.dumps(reason)}, "verdict": {verdict}, "extra": {deep or "0"}}}'
    text = wrapper.replace("{}", body)
    bare = wrapper in ("{}", " {}\n") and verdict in INTEGERS and depth <= 150
    if bare:
        assert read(text, "context_precision") == {"reason": reason, "verdict": INTEGERS[verdict]}
    else:
        with pytest.raises(ValidationError):
            read(text, "context_precision")


def test_reasoning_models_get_ragas_sampling():
    """As llm_factory maps them (recorded): temperature 1.0, no top_p, the tokens as max_completion_tokens."""
    for model, params in PARITY["reasoning_models"].items():
        assert reasoning_model(model) == ("max_completion_tokens" in params)
        llm = ScriptedLLM('{"reason": "r", "verdict": 1}')
        llm.engine.model = model
        ctx = make_context("demo", judges=[llm])
        example = Example(id="x", question="What is the capital of France?", gold={"answers": ["Paris."]})
        prediction = Prediction("x", answer="Paris.", docs=[Document(id="0", title="", text="Paris is in France.")])
        asyncio.run(RagasContextPrecision().score(example, prediction, ctx))
        sampling = llm.requests[0].sampling
        assert sampling.temperature == params["temperature"]
        assert ("top_p" in sampling.left_to_server) == ("top_p" not in params)
        assert sampling.max_tokens == params.get("max_tokens", params.get("max_completion_tokens"))


@pytest.mark.parametrize("model", ["o3-mini", "gpt-5", "codex-mini", "gpt-4o"])
def test_the_openai_engine_sends_a_judge_call_as_llm_factory_sends_it(model):
    """The body ragas sent to each model (recorded), ragbench adding n; a prompt (completions) request keeps
    max_tokens."""
    server = FakeServer()
    try:
        generate(load_engine(f"openai:{model}", base_url=server.base_url, **FAST), chat(**sampling(model)))
        generate(
            load_engine(f"openai:{model}", base_url=server.base_url, **FAST), Request(prompt="Q", sampling=Sampling())
        )
    finally:
        server.stop()
    body = server.requests[0]["body"]
    assert {k: v for k, v in body.items() if k not in ("messages", "n")} == PARITY["reasoning_models"][model]
    assert "max_tokens" in server.requests[1]["body"] and "max_completion_tokens" not in server.requests[1]["body"]


DEEP_TASK = """task: ragas_deep
description: the malformed-reply samples
data: {path: samples.json, format: json}
fields:
  id: id
  question: user_input
  gold: {answers: reference}
prompt:
  template: "{{ question }}"
metrics: [ragas_context_precision]
"""


@pytest.mark.parametrize("reasked", ['{"reason": "r", "verdict": 1}', DEEP["deep_object"]])
def test_a_deeply_nested_reply_is_asked_again_and_a_resumed_run_completes(tmp_path, reasked):
    """`ragbench score` with a judge whose every first reply is nested 5,000 objects deep (instructor: invalid
    JSON, asked again): scored from the re-ask's reply, or, where every reply is as deep, not scored and counted;
    never a failed example, so `--resume` has nothing to try again."""
    (tmp_path / "judge.json").write_text(
        json.dumps(
            [{"pattern": "Correct your JSON", "response": reasked}, {"pattern": "", "response": DEEP["deep_array"]}]
        ),
        encoding="utf-8",
    )
    samples = [SAMPLES["bare"], SAMPLES["fenced"]]
    (tmp_path / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    (tmp_path / "ragas_deep.yaml").write_text(DEEP_TASK, encoding="utf-8")
    predictions = [
        {
            "id": s["id"],
            "output": s["response"],
            "docs": [{"id": "0", "title": "", "text": t} for t in s["retrieved_contexts"]],
        }
        for s in samples
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    args = ["score", "--task", str(tmp_path / "ragas_deep.yaml"), "--predictions", str(tmp_path / "predictions.jsonl")]
    args += ["--judge", f"scripted:{tmp_path / 'judge.json'}", "--output", str(tmp_path / "run")]
    first = cli_here(*args)
    resumed = cli_here(*args, "--resume")
    assert first.returncode == 0 and resumed.returncode == 0, first.stderr + resumed.stderr
    rows = [json.loads(line) for line in (tmp_path / "run" / "samples" / "ragas_deep.jsonl").open()]
    assert [row.get("score_errors") for row in rows] == [None, None] and [row.get("error") for row in rows] == [
        None,
        None,
    ]
    scored = [row["scores"]["ragas_context_precision"] for row in rows]
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    counted = {name: c["count"] for name, c in results["counted"]["ragas_deep"]["ragas_context_precision"].items()}
    if reasked.startswith('{"reason"'):  # each of the two contexts' first reply refused, the re-ask's read
        assert scored == [pytest.approx(1.0)] * 2 and counted == {"ragas_unparsed": 4}
    else:  # the first context's four replies refused: instructor gives up
        assert scored == [None, None] and counted == {"ragas_unparsed": 8, "ragas_gave_up": 2}
