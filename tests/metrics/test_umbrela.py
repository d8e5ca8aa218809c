"""The `umbrela` metric against castorini's umbrela 0.0.7 run unmodified on the same fake judge
(tests/data/umbrela/umbrela_calls.json, recorded by record_umbrela.py there): the same chats in the same order with
the same sampling, the same grade for every reply (malformed ones and an HTTP 400 included), the same values per
query; the reply reading against umbrela's own on 1,500 generated replies, and its promises on any text. The same
bodies sent over HTTP by the openai engine: test_umbrela_http.py."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.api.engines import RequestError
from ragbench.metrics.umbrela.metric import Umbrela
from ragbench.metrics.umbrela.replies import grade
from ragbench.testing import ScriptedLLM, make_context

FIXTURE = json.loads((TEST_DATA / "umbrela" / "umbrela_calls.json").read_text(encoding="utf-8"))
QUERIES = {query["qid"]: query for query in FIXTURE["queries"]}
RUNS = {f"{run['run']}-{run['qid']}": run for run in FIXTURE["runs"]}
PENALTIES = ("frequency_penalty", "presence_penalty")  # umbrela's (none for reasoning models)
REPLIES = {segment: reply for query in FIXTURE["queries"] for _, segment, reply in query["candidates"]}


def passage_of(prompt: str) -> str:
    return re.findall(r"Passage: (.*)\n", prompt)[-1]


def answer(request):
    """The fake judge's reply to the passage in the prompt, as the recorder's server answered umbrela."""
    reply = REPLIES[passage_of(request.message_dicts()[-1]["content"])]
    if reply == FIXTURE["bad_request"]:
        raise RequestError("HTTP 400: bad request")
    return reply


def example_of(qid: str) -> tuple[Example, Prediction]:
    query = QUERIES[qid]
    docs = [Document(id=docid, title="t", text=segment) for docid, segment, _ in query["candidates"]]
    return Example(id=qid, question=query["query"], gold={"answers": ["x"]}), Prediction(qid, answer="a", docs=docs)


def scored(run: dict, judge, metric: Umbrela | None = None):
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[judge])
    ctx.count = lambda name: counted.update([name])
    example, prediction = example_of(run["qid"])
    metric = metric or Umbrela(prompt_type=run["prompt_type"])
    scores = asyncio.run(metric.score(example, prediction, ctx))
    return scores, counted


def expected_values(run: dict) -> dict:
    grades = [judgment["judgment"] for judgment in run["judgments"]]
    return {"umbrela": sum(grades) / len(grades), "umbrela_relevant": sum(g >= 2 for g in grades) / len(grades)}


@pytest.mark.parametrize("name", RUNS)
def test_the_judge_is_asked_as_umbrela_asks_and_each_reply_graded_as_umbrela_grades_it(name):
    """The same chats in umbrela's order, the same sampling, umbrela's values and its invalid replies counted."""
    run = RUNS[name]
    judge = ScriptedLLM(answer)
    judge.engine.model = run["model"]
    scores, counted = scored(run, judge)
    bodies = [call["body"] for call in run["calls"]]
    assert [r.message_dicts() for r in judge.requests] == [body["messages"] for body in bodies]
    for request, body in zip(judge.requests, bodies, strict=True):
        sampling = request.sampling
        assert sampling.temperature == body["temperature"]
        assert sampling.max_tokens == body.get("max_tokens", body.get("max_completion_tokens"))
        assert ("top_p" in sampling.left_to_server) == ("top_p" not in body)
        assert body.get("top_p", sampling.top_p) == sampling.top_p
        assert {name: body[name] for name in PENALTIES if name in body} == sampling.penalties()
    replies = ["" if call["reply"] == FIXTURE["bad_request"] else call["reply"].lower() for call in run["calls"]]
    assert [grade(reply) for reply in replies] == [(j["judgment"], bool(j["result_status"])) for j in run["judgments"]]
    assert scores == expected_values(run)
    assert counted == +Counter({"umbrela_invalid": sum(not j["result_status"] for j in run["judgments"])})


def test_options_umbrela_has_not_are_refused_before_the_run():
    with pytest.raises(ConfigError, match="prompt_type 'fewshot'"):
        Umbrela(prompt_type="fewshot")
    with pytest.raises(ConfigError, match="k and max_tokens must be 1 or more"):
        Umbrela(k=0)
    with pytest.raises(ConfigError, match="k and max_tokens are whole numbers"):
        Umbrela(k="top")  # type: ignore[arg-type]


def test_only_the_top_k_passages_are_judged_and_no_passage_is_not_scorable():
    run = RUNS["bing-q2"]
    judge = ScriptedLLM(answer)
    judge.engine.model = run["model"]
    scores, _ = scored(run, judge, Umbrela(k=2))
    assert len(judge.requests) == 2
    assert scores == {"umbrela": 3.0, "umbrela_relevant": 1.0}
    ctx = make_context("demo", judges=[ScriptedLLM("##final score: 3")])
    example, _ = example_of("q1")
    assert asyncio.run(Umbrela().score(example, Prediction("q1", answer="a"), ctx)) == {
        "umbrela": None,
        "umbrela_relevant": None,
    }


def test_every_recorded_reply_is_graded_as_umbrelas_parser_graded_it():
    """1,500 generated replies (fragments of umbrela's patterns, digits, case, whitespace) and umbrela's grades."""
    differ = [
        case["text"] for case in FIXTURE["parser_cases"] if grade(case["text"]) != (case["grade"], bool(case["status"]))
    ]
    assert not differ


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_reply_gets_a_grade_found_in_it_or_0_invalid(text):
    """umbrela's last pattern is any digit 0-3: a reply holding one is valid and graded with one of its digits
    0-3; one without is graded 0, invalid; case never matters (the reply is lowercased)."""
    value, valid = grade(text)
    digits = {int(d) for d in re.findall("[0-3]", text)}
    assert valid == bool(digits)
    assert value in digits if digits else value == 0
    assert grade(text.upper().lower()) == grade(text.lower())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="0123")), st.sampled_from("0123"), st.text())
def test_a_reply_with_one_digit_0_to_3_is_graded_that_digit(before, digit, after):
    after = re.sub("[0-3]", "", after)
    assert grade(before + digit + after) == (int(digit), True)
