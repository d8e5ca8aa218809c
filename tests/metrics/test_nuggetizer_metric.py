"""The `nuggetizer` metric against castorini's nuggetizer 0.0.5 run unmodified with a fake judge server
(tests/data/nuggetizer/nuggetizer.json, record_nuggetizer.py): the chat requests nuggetizer sent for each topic, in
order, with their temperature and token limit (its retries of malformed replies included), the nuggets it created
and labelled, their assignments against the answer, its per-topic scores and its mean over the topics; and its
reading of 400 generated replies (the oracle)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections import Counter
from statistics import mean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_openai import FakeServer

from conftest import TEST_DATA
from ragbench.api import ConfigError, Document, Example, Prediction
from ragbench.metrics.nuggetizer.metric import KEYS, NuggetizerMetric
from ragbench.metrics.nuggetizer.steps import Nugget, Steps, read
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here

FIXTURE = json.loads((TEST_DATA / "nuggetizer" / "nuggetizer.json").read_text(encoding="utf-8"))
TOPICS = {t["qid"]: t for t in FIXTURE["topics"]}


def judge(replies: list[str], model: str = "gpt-4o") -> ScriptedLLM:
    llm = ScriptedLLM(replies)
    llm.engine.model = model  # nuggetizer's o1 rule reads the model's name
    return llm


@functools.cache
def replayed(qid: str) -> tuple[ScriptedLLM, dict, Counter]:
    """The topic scored through the judge path, the judge answering what the fake server answered nuggetizer."""
    t = TOPICS[qid]
    llm = judge([c["reply"] for c in t["calls"] for _ in range(c["times"])], t["model"])
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])
    example = Example(
        id=qid, question=t["query"], docs=[Document(id=str(i), title="", text=p) for i, p in enumerate(t["passages"])]
    )
    scores = asyncio.run(NuggetizerMetric().score(example, Prediction(qid, answer=t["answer"]), ctx))
    return llm, scores, counted


def sent(request) -> dict:
    """A request as the chat body fields nuggetizer's client sent."""
    sampling = request.sampling
    assert sampling.left_to_server == ("top_p", "n", "seed")  # nuggetizer sends none of them
    assert sampling.max_tokens_as == "max_completion_tokens"
    return {
        "messages": request.message_dicts(),
        "params": {"max_completion_tokens": sampling.max_tokens, "temperature": sampling.temperature},
    }


def expected(qid: str) -> list[dict]:
    calls = TOPICS[qid]["calls"]
    return [
        {"messages": c["messages"], "params": {k: v for k, v in c["params"].items() if k != "model"}}
        for c in calls
        for _ in range(c["times"])
    ]


@pytest.mark.parametrize("qid", TOPICS)
def test_the_judge_is_asked_nuggetizers_requests_in_its_order(qid):
    llm, _, _ = replayed(qid)
    assert [sent(r) for r in llm.requests] == expected(qid)


@pytest.mark.parametrize("qid", TOPICS)
def test_each_topic_scores_as_nuggetizer_scores_it(qid):
    _, scores, counted = replayed(qid)
    assert scores == {f"nuggetizer_{key}": TOPICS[qid]["scores"][key] for key in KEYS}
    retried = sum(c["times"] for c in TOPICS[qid]["calls"] if c["params"]["temperature"] == 0.2)
    creator = [c for c in TOPICS[qid]["calls"] if c["step"] == "creator"]
    retried += sum(c["times"] for c in creator[1:] if "o1" in c["params"]["model"])  # o1: always 1.0
    assert counted["nuggetizer_unparsed"] == retried + counted["nuggetizer_gave_up"]  # the last one too


@pytest.mark.parametrize("qid", TOPICS)
def test_the_nuggets_labels_and_assignments_are_nuggetizers(qid):
    t = TOPICS[qid]
    llm = judge([c["reply"] for c in t["calls"] for _ in range(c["times"])], t["model"])
    steps = Steps([llm] * 3, lambda name: None, 10, 30)
    created = asyncio.run(steps.create(t["query"], t["passages"]))
    assigned = asyncio.run(steps.assign(t["query"], t["answer"], created, 3))
    assert [vars(n) | {"assignment": ""} for n in created] == [n | {"assignment": ""} for n in t["created"]]
    assert [vars(n) for n in assigned] == t["assigned"]


def test_the_runs_mean_is_nuggetizers_global_mean():
    per_topic = [replayed(qid)[1] for qid in TOPICS]
    for key in KEYS:
        assert mean(s[f"nuggetizer_{key}"] for s in per_topic) == pytest.approx(FIXTURE["global"][key], abs=1e-12)


def test_a_step_given_up_and_topics_without_vital_nuggets_are_counted():
    assert replayed("scorer_gives_up")[2] == Counter(
        {"nuggetizer_unparsed": 500, "nuggetizer_gave_up": 1, "nuggetizer_no_vital": 1}
    )
    assert replayed("many")[2]["nuggetizer_no_vital"] == 1


def test_passages_shown_takes_the_systems_documents_and_none_fails():
    t = TOPICS["fenced"]
    llm = judge([c["reply"] for c in t["calls"]])
    docs = [Document(id=str(i), title="", text=p) for i, p in enumerate(t["passages"])]
    metric = NuggetizerMetric(passages="shown")
    scores = asyncio.run(
        metric.score(
            Example(id="f", question=t["query"]),
            Prediction("f", answer=t["answer"], docs=docs),
            make_context("demo", judges=[llm]),
        )
    )
    assert scores["nuggetizer_all_score"] == t["scores"]["all_score"]
    with pytest.raises(ValueError, match="passages=shown"):
        asyncio.run(NuggetizerMetric().score(Example(id="f", question="q"), Prediction("f", answer="a"), None))
    with pytest.raises(ConfigError):
        NuggetizerMetric(passages="pool")


def oracle_replay(case: dict) -> tuple:
    """One generated reply as the creator's first reply and as the assigner's, as record_nuggetizer.py gave it."""
    creator, scorer = judge([case["reply"], "['fallback']"]), ScriptedLLM("['vital']")  # every scorer call
    steps = Steps([creator, scorer, None], lambda name: None, 10, 30)
    nuggets = asyncio.run(steps.create("q", ["passage"]))
    created = [n.text for n in nuggets] if len(creator.requests) == 1 else "asked again"
    assigner = judge([case["reply"], "['not_support', 'not_support', 'not_support']"])
    steps = Steps([None, None, assigner], lambda name: None, 10, 30)
    assigned = asyncio.run(steps.assign("q", "answer", [Nugget(f"n{i}", "vital") for i in range(3)], 3))
    return created, [n.assignment for n in assigned], len(assigner.requests)


def a_set(reply: str) -> bool:
    """Whether the reply reads as a set literal, whose order follows the process's string hashes (PYTHONHASHSEED):
    nuggetizer's own result for it (the labels' order, which ones precede a failing one) varies run to run."""
    try:
        return isinstance(read(reply), set)
    except Exception:
        return False


def test_every_oracle_reply_is_read_as_nuggetizer_reads_it():
    compared = [case for case in FIXTURE["oracle"] if not a_set(case["reply"])]
    assert len(compared) >= 330
    for case in compared:
        assert oracle_replay(case) == (case["created"], case["assigned"], case["asked"]), case["reply"]


@settings(max_examples=80, deadline=None)
@given(
    labels=st.lists(st.text(), max_size=6),
    fence=st.sampled_from(["{}", "```python\n{}\n```", "```{}```", " \n{}\t"]),
    as_tuple=st.booleans(),
)
def test_any_list_of_labels_written_as_python_reads_back(labels, fence, as_tuple):
    written = repr(tuple(labels) if as_tuple else labels)
    if "```" in written:  # nuggetizer removes the fence marks wherever they are, inside a label too
        return
    assert list(read(fence.format(written))) == labels


TASK = """task: nugget_topics
description: the nuggetizer parity topics
data: {path: topics.json, format: json}
fields:
  id: qid
  question: query
prompt:
  template: "{{ question }}"
metrics: [nuggetizer]
"""
OVER_HTTP = [qid for qid in TOPICS if TOPICS[qid]["model"] == "gpt-4o" and qid != "scorer_gives_up"]


def test_a_run_with_an_openai_judge_sends_nuggetizers_bodies_and_gets_its_scores(tmp_path):
    """`ragbench score` through the openai engine to a local server answering each request as the fake server
    answered nuggetizer (its n-th identical request the n-th reply): the same bodies in each topic's order, field
    for field and number for number (no n, no seed at temperature 0.2, max_completion_tokens), the same scores."""
    replies: dict[str, list[str]] = {}
    for qid in OVER_HTTP:
        for call in TOPICS[qid]["calls"]:
            replies.setdefault(json.dumps(call["messages"]), []).extend([call["reply"]] * call["times"])
    server = FakeServer(reply=lambda body: replies[json.dumps(body["messages"])].pop(0))
    topics = [{"qid": qid, "query": TOPICS[qid]["query"]} for qid in OVER_HTTP]
    (tmp_path / "topics.json").write_text(json.dumps(topics), encoding="utf-8")
    (tmp_path / "nugget_topics.yaml").write_text(TASK, encoding="utf-8")
    predictions = [
        {
            "id": qid,
            "output": TOPICS[qid]["answer"],
            "docs": [{"id": str(i), "title": "", "text": p} for i, p in enumerate(TOPICS[qid]["passages"])],
        }
        for qid in OVER_HTTP
    ]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    try:
        cli_here(
            "score",
            "--task",
            str(tmp_path / "nugget_topics.yaml"),
            "--predictions",
            str(tmp_path / "predictions.jsonl"),
            "--metric-arg",
            "nuggetizer.passages=shown",
            "--judge",
            "openai:gpt-4o",
            "--judge-arg",
            f"0.base_url={server.base_url}",
            "--output",
            str(tmp_path / "run"),
        )
    finally:
        server.stop()
    by_topic: dict[str, list[str]] = {}
    for request in server.requests:
        body = request["body"]
        qid = next(q for q in OVER_HTTP if f"Search Query: {TOPICS[q]['query']}\n" in body["messages"][1]["content"])
        by_topic.setdefault(qid, []).append(json.dumps(body, sort_keys=True))  # JSON text: 0 and 0.0 differ
    for qid in OVER_HTTP:
        upstream = [{"messages": c["messages"], **c["params"]} for c in TOPICS[qid]["calls"] for _ in range(c["times"])]
        assert by_topic.get(qid, []) == [json.dumps(body, sort_keys=True) for body in upstream]
    rows = {
        row["id"]: row["scores"]
        for row in map(json.loads, (tmp_path / "run" / "samples" / "nugget_topics.jsonl").open())
    }
    for qid in OVER_HTTP:
        assert {key: rows[qid][f"nuggetizer_{key}"] for key in KEYS} == {
            key: TOPICS[qid]["scores"][key] for key in KEYS
        }


def windows_asked(metric: NuggetizerMetric, passages: int, nuggets: int) -> Counter:
    """How many calls each role made scoring one topic of `passages` passages whose creator lists `nuggets`."""

    def reply(request) -> str:
        system, user = (m["content"] for m in request.message_dicts())
        if "NuggetizeLLM" in system:
            return repr([f"fact {i}" for i in range(nuggets)])
        count = int(user.split("label each of the ", 1)[1].split()[0])
        return repr(["vital" if "NuggetizeScoreLLM" in system else "support"] * count)

    llm = ScriptedLLM(reply)
    llm.engine.model = "gpt-4o"
    example = Example(id="w", question="q", docs=[Document(id=str(i), title="", text=f"p{i}") for i in range(passages)])
    asyncio.run(metric.score(example, Prediction("w", answer="an answer"), make_context("demo", judges=[llm])))
    return Counter(request.message_dicts()[0]["content"].split(",")[0] for request in llm.requests)


def test_assignment_has_its_own_window_of_10_as_assign_nuggets_py_runs_it():
    """create_nuggets.py's --window_size sizes creation and scoring; assign_nuggets.py's Nuggetizer assigns in
    windows of its default, 10."""
    asked = windows_asked(NuggetizerMetric(window_size=4), passages=8, nuggets=20)
    assert asked == {"You are NuggetizeLLM": 2, "You are NuggetizeScoreLLM": 5, "You are NuggetizeAssignerLLM": 2}
    asked = windows_asked(NuggetizerMetric(window_size=4, assign_window_size=5), passages=8, nuggets=20)
    assert asked["You are NuggetizeAssignerLLM"] == 4
    assert NuggetizerMetric(window_size=4).config()["assign_window_size"] == 10
    with pytest.raises(ConfigError, match="assign_window_size"):
        NuggetizerMetric(assign_window_size=0)
