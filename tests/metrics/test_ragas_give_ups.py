"""The `ragas_*` metrics where ragas (instructor) gives up on the judge's replies: a reply holding a lone surrogate,
whose re-ask instructor's OpenAI client cannot send, and replies of 20 MB, against ragas 0.4.3 with instructor
1.17.0 run unmodified on the same replies (tests/data/parity/ragas_give_ups.json, recorded by
record_ragas_give_ups.py in a scratch virtualenv: ragas's value or the exception it raised, and the size of every
request its judge got). Where ragas raises, the example is not scored and is counted, and a run with such a judge
completes and resumes."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine_openai import FakeServer

from conftest import TEST_DATA
from ragbench.api import Document, Example, Prediction
from ragbench.api.engines import Response
from ragbench.metrics.ragas.metric import RagasContextPrecision
from ragbench.metrics.ragas.replies import ATTEMPTS, REASK_CHARS
from ragbench.testing import ScriptedLLM, make_context
from support.helpers import cli_here
from support.pydantic_errors import recording

RECORDED = json.loads(recording(TEST_DATA / "parity" / "ragas_give_ups.json"))
SAMPLE = RECORDED["sample"]
GOOD = json.dumps({"reason": "r", "verdict": 1})
SURROGATE = '{"reason": "\ud800", "verdict": 1}'  # a lone surrogate, as a JSON `\ud800` in the server's body reads
HUGE = '{"reason": "' + "x" * 20_000_000  # unterminated
TRACED_CHARS = 1_000_000  # docs/metrics.md: the sample keeps an excerpt of a reply over 1,000,000 characters
REPLIES = {  # the judge's reply to a first request and to a re-ask, as record_ragas_give_ups.py's judge answers
    "lone_surrogate": (SURROGATE, SURROGATE),
    "huge_every_time": (HUGE, HUGE),
    "huge_then_bare": (HUGE, GOOD),
    "huge_valid": (json.dumps({"reason": "x" * 20_000_000, "verdict": 1}),) * 2,
}
# ragbench's outcome where it is not ragas's, by design (docs/metrics.md, RAGAS): a refused reply over REASK_CHARS
# is not sent back (instructor sends it back, 20 MB then 40 and 60: no judge's context holds such a request, and a
# real server's refusal makes ragas raise), so the example is not scored after the first request
NOT_SENT_BACK = {
    "huge_every_time": {"value": None, "requests": 1},
    "huge_then_bare": {"value": None, "requests": 1},
}


def answering(first: str, reasked: str) -> ScriptedLLM:
    return ScriptedLLM(
        lambda request: reasked if any(m["role"] == "assistant" for m in request.message_dicts()) else first
    )


def scored(llm: ScriptedLLM):
    """ragas's sample scored by ragbench's context precision: its value, its counts, and the context's trace."""
    counted: Counter = Counter()
    ctx = make_context("demo", judges=[llm])
    ctx.count = lambda name: counted.update([name])
    example = Example(id="s", question=SAMPLE["user_input"], gold={"answers": [SAMPLE["reference"]]})
    docs = [Document(id=str(i), title="", text=text) for i, text in enumerate(SAMPLE["retrieved_contexts"])]
    scores = asyncio.run(RagasContextPrecision().score(example, Prediction("s", answer="x", docs=docs), ctx))
    return scores["ragas_context_precision"], counted, ctx.trace


def request_sizes(llm: ScriptedLLM) -> list[dict[str, int]]:
    return [
        {"messages": len(r.message_dicts()), "chars": sum(len(m["content"]) for m in r.message_dicts())}
        for r in llm.requests
    ]


@pytest.mark.parametrize("case", list(REPLIES))
def test_a_reply_ragas_cannot_use_ends_the_example_as_ragas_does(case):
    """ragas's value, or (where it raised) not scored and counted; the same requests, but for a refused 20 MB
    reply, which is not sent back (NOT_SENT_BACK)."""
    recorded = RECORDED["outcomes"][case]
    llm = answering(*REPLIES[case])
    value, counted, trace = scored(llm)
    if case in NOT_SENT_BACK:
        assert value is NOT_SENT_BACK[case]["value"]
        assert request_sizes(llm) == recorded["requests"][: NOT_SENT_BACK[case]["requests"]]
        assert counted == {"ragas_unparsed": 1, "ragas_reply_too_long": 1, "ragas_gave_up": 1}
    elif "error" in recorded:  # the lone surrogate: refused, and its re-ask cannot be sent
        assert recorded["error"] == "InstructorRetryException" and value is None
        assert request_sizes(llm) == recorded["requests"]
        assert counted == {"ragas_unparsed": 1, "ragas_gave_up": 1}
    else:
        assert value == pytest.approx(recorded["value"], abs=1e-12)
        assert request_sizes(llm) == recorded["requests"] and not counted
    # the trace (the sample) keeps an excerpt of a 20 MB reply, and says how long it was
    for step in trace:
        (text,) = step.response["texts"]
        assert len(text) <= TRACED_CHARS
        assert step.response.get("full_chars", [len(text)]) in ([len(reply)] for reply in REPLIES[case])


@settings(max_examples=25, deadline=None)
@given(
    size=st.one_of(st.integers(0, 2_000), st.integers(REASK_CHARS - 20, REASK_CHARS + 20), st.just(3 * REASK_CHARS)),
    surrogate=st.booleans(),
    valid=st.booleans(),
)
def test_a_refused_reply_is_sent_back_while_it_can_be(size, surrogate, valid):
    """Any size of reply, holding a lone surrogate or not, valid JSON of ragas's output or unterminated: read where
    valid; else re-asked as instructor re-asks it until its attempts end, unless the re-ask cannot be sent (a
    surrogate: 1 request) or the reply is over REASK_CHARS (1 request, counted): never a failure."""
    reason = ("\ud800" if surrogate else "") + "x" * size
    text = json.dumps({"reason": reason, "verdict": 1}, ensure_ascii=False)
    text = text if valid and not surrogate else text[: len(text) - 3]  # a surrogate is refused anyway
    llm = answering(text, text)
    value, counted, _ = scored(llm)
    if valid and not surrogate:
        assert value == pytest.approx(1.0) and not counted and len(llm.requests) == 2
        return
    assert value is None and counted["ragas_gave_up"] == 1
    sent_back = not surrogate and len(text) <= REASK_CHARS
    assert len(llm.requests) == (ATTEMPTS if sent_back else 1)
    assert counted["ragas_unparsed"] == len(llm.requests)
    assert counted["ragas_reply_too_long"] == (len(text) > REASK_CHARS)


TASK = """task: ragas_give_up
description: a judge ragas gives up on
data: {path: samples.json, format: json}
fields:
  id: id
  question: user_input
  gold: {answers: reference}
prompt:
  template: "{{ question }}"
metrics: [ragas_context_precision]
"""


def score_args(folder, judge: list[str], output: str) -> list[str]:
    """`ragbench score` of ragas's sample (two examples of it) with `judge`, into `folder / output`."""
    samples = [{**SAMPLE, "id": f"s{i}"} for i in range(2)]
    (folder / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    (folder / "task.yaml").write_text(TASK, encoding="utf-8")
    docs = [{"id": str(i), "title": "", "text": t} for i, t in enumerate(SAMPLE["retrieved_contexts"])]
    predictions = "".join(json.dumps({"id": s["id"], "output": "x", "docs": docs}) + "\n" for s in samples)
    (folder / "predictions.jsonl").write_text(predictions, encoding="utf-8")
    return ["score", "--task", str(folder / "task.yaml"), "--predictions", str(folder / "predictions.jsonl")] + [
        *judge,
        "--output",
        str(folder / output),
    ]


def finished(folder, output: str) -> tuple[list[dict], dict]:
    rows = [json.loads(line) for line in (folder / output / "samples" / "ragas_give_up.jsonl").open()]
    results = json.loads((folder / output / "results.json").read_text(encoding="utf-8"))
    counted = results["counted"]["ragas_give_up"]["ragas_context_precision"]
    return rows, {name: c["count"] for name, c in counted.items()}


def test_a_20_mb_judge_reply_is_counted_and_a_run_and_its_resume_complete(tmp_path):
    """A scripted judge answering 20 MB of unterminated JSON: each example not scored, the reply counted
    (`ragas_reply_too_long`, named in the run's last lines), each sample small (an excerpt of the reply); the
    resume has nothing to do, and a replay of the judge's calls file answers the same."""
    (tmp_path / "judge.json").write_text(json.dumps([{"pattern": "", "response": HUGE}]), encoding="utf-8")
    args = score_args(tmp_path, ["--judge", f"scripted:{tmp_path / 'judge.json'}"], "run")
    first, resumed = cli_here(*args), cli_here(*args, "--resume")
    assert first.returncode == 0 and resumed.returncode == 0, first.stderr + resumed.stderr
    assert "ragas_reply_too_long" in first.stderr and "CeilingReached" not in first.stderr + resumed.stderr
    rows, counted = finished(tmp_path, "run")
    assert [(row["scores"], row.get("score_errors")) for row in rows] == [({"ragas_context_precision": None}, None)] * 2
    assert counted == {"ragas_unparsed": 2, "ragas_reply_too_long": 2, "ragas_gave_up": 2}
    assert max(len(line) for line in (tmp_path / "run" / "samples" / "ragas_give_up.jsonl").open()) < 100_000
    replayed = cli_here(*score_args(tmp_path, ["--judge", f"replay:{tmp_path / 'run' / 'judge0_calls.jsonl'}"], "re"))
    assert replayed.returncode == 0, replayed.stderr
    assert finished(tmp_path, "re")[1] == counted


def test_an_openai_judge_whose_reply_holds_a_lone_surrogate_is_given_up_on_as_ragas_does(tmp_path):
    """Through the openai engine to a local server whose reply holds `\\ud800`: one request an example, as ragas's
    (it cannot send the re-ask), not scored and counted; the run completes (it was an EngineError metric failure
    on every --resume)."""
    server = FakeServer(reply=lambda body: SURROGATE)
    try:
        judge = ["--judge", "openai:gpt-4o-mini", "--judge-arg", f"0.base_url={server.base_url}"]
        done = cli_here(*score_args(tmp_path, judge, "run"), env={"OPENAI_API_KEY": "fake"})
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2 * len(RECORDED["outcomes"]["lone_surrogate"]["requests"])
    rows, counted = finished(tmp_path, "run")
    assert [(row["scores"], row.get("score_errors")) for row in rows] == [({"ragas_context_precision": None}, None)] * 2
    assert counted == {"ragas_unparsed": 2, "ragas_gave_up": 2}


def test_an_openai_judge_answering_content_parts_is_re_asked_and_given_up_on_as_ragas_does(tmp_path):
    """Through the openai engine to a local server whose message content is a list of content parts (a text part
    holding bare JSON of ragas's output): ragas's requests, call for call (instructor refuses the list, sends it
    back as the assistant's turn with pydantic's error, 4 attempts), then not scored and counted; a --resume has
    nothing to ask (it was an EngineError metric failure, asked again on every --resume), and a replay of the judge's
    calls file answers the same."""
    recorded = RECORDED["outcomes"]["content_parts"]
    server = FakeServer(reply=lambda body: [{"type": "text", "text": GOOD}])
    try:
        judge = ["--judge", "openai:gpt-4o-mini", "--judge-arg", f"0.base_url={server.base_url}"]
        args = score_args(tmp_path, judge, "run")
        done = cli_here(*args, env={"OPENAI_API_KEY": "fake"})
        asked = len(server.requests)
        resumed = cli_here(*args, "--resume", env={"OPENAI_API_KEY": "fake"})
    finally:
        server.stop()
    assert done.returncode == 0 and resumed.returncode == 0, done.stderr + resumed.stderr
    assert asked == len(server.requests) == 2 * len(recorded["requests"])
    sizes = [
        {"messages": len(sent), "chars": sum(content_chars(m["content"]) for m in sent)}
        | ({"reasks": sent[2:]} if len(sent) > 2 else {})
        for sent in (request["body"]["messages"] for request in server.requests)
    ]  # the two examples' (the same sample's) requests, interleaved
    assert Counter(map(json.dumps, sizes)) == Counter(map(json.dumps, recorded["requests"] * 2))
    rows, counted = finished(tmp_path, "run")
    assert [(row["scores"], row.get("score_errors")) for row in rows] == [({"ragas_context_precision": None}, None)] * 2
    assert counted == {"ragas_unparsed": 8, "ragas_gave_up": 2}
    replayed = cli_here(*score_args(tmp_path, ["--judge", f"replay:{tmp_path / 'run' / 'judge0_calls.jsonl'}"], "re"))
    assert replayed.returncode == 0, replayed.stderr
    assert finished(tmp_path, "re")[1] == counted


def content_chars(content) -> int:
    """A message content's characters, as record_ragas_give_ups.py counts them (a list: its JSON text)."""
    return len(content) if isinstance(content, str) else len(json.dumps(content))


CONTENT_PARTS = st.lists(
    st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=40)}),
        st.fixed_dictionaries({"type": st.sampled_from(["thinking", "image_url", "refusal"])}),
    ),
    max_size=3,
)


@settings(max_examples=25, deadline=None)
@given(parts=CONTENT_PARTS, valid=st.booleans())
def test_a_reply_in_content_parts_is_refused_and_sent_back_as_instructor_does(parts, valid):
    """Any list of content parts, its text parts bare JSON of ragas's output or not: instructor's JSON mode refuses a
    content that is no string, so the example is re-asked with the list as the assistant's turn and pydantic's
    `json_type` error, 4 attempts, then not scored and counted (never a failure, never read as its text)."""
    parts = [{"type": "text", "text": GOOD}, *parts] if valid else parts
    llm = ScriptedLLM(
        lambda request: Response(texts=["".join(p.get("text", "") for p in parts)], content_parts=json.dumps(parts))
    )
    value, counted, _ = scored(llm)
    assert value is None and counted == {"ragas_unparsed": ATTEMPTS, "ragas_gave_up": 1}
    assert len(llm.requests) == ATTEMPTS
    for request in llm.requests[1:]:
        reasks = request.message_dicts()[2:]
        assert [turn["content"] for turn in reasks[::2]] == [parts] * (len(reasks) // 2)
        assert all(
            "[type=json_type" in turn["content"] and "input_type=list]" in turn["content"] for turn in reasks[1::2]
        )
