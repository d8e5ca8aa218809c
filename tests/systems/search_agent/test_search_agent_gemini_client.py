"""Request-for-request parity of `search_agent` with BrowseComp-Plus's gemini_client (texttron/BrowseComp-Plus at
commit 97c637c, search_agent/gemini_client.py run unchanged with google-genai 1.27.0's automatic function calling
over a fastmcp 2.9.2 session of searcher/mcp_server.py: tests/data/search_agent/record_gemini_client.py). Both
sides run against the fake Gemini API of tests/support/search_agent_fake_gemini.py. The questions: a search then
get_document, two searches in one turn (the second finds nothing: an empty list, no content), arguments that do not fit (sent as `{}`), a function nobody declared, an
answer cut short, a get_document of a docid the corpus lacks.

Compared: each request's path and JSON body (fastmcp's words for the arguments `{}`, pydantic's message, by its
start), and the run file (status, tool call counts, every item of `result`, retrieved docids, output tokens);
where the client ends a question without a run file, the example fails, its error saying why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import paths
from support.helpers import run, samples
from support.search_agent_fake import FakeAgentServer

DATA = paths.DATA / "search_agent"
FIXTURE = json.loads((DATA / "gemini_client.json").read_text(encoding="utf-8"))
FASTMCP_ERROR = "Error calling tool 'search': "
FAILED = {  # the question the client ends without a run file -> what the example's error says
    "twice": "the function response of 'search' has no content",
    "malformed": "the function response of 'search' is an error",
    "unknown": "the model called 'browse', a function the request did not declare",
    "missing": "the function response of 'get_document' has no content",
}


def ragbench_side(tmp_path: Path) -> dict[str, Any]:
    pytest.importorskip("google.genai")
    pytest.importorskip("transformers")  # the snippets' tokenizer
    server = FakeAgentServer()
    questions = tmp_path / "questions.jsonl"
    lines = (DATA / "questions_mcp.jsonl").read_text(encoding="utf-8").splitlines()
    questions.write_text(
        "".join(line + "\n" for line in lines if json.loads(line)["id"] in FIXTURE["runs"]), encoding="utf-8"
    )
    try:
        run(
            tmp_path,
            tasks=["fictional_multihop"],
            system="search_agent",
            model="gemini:gemini-agent",
            model_args={"base_url": server.base_url.removesuffix("/v1"), "thinking_config": {"include_thoughts": True}},
            data={"fictional_multihop": str(questions)},
            system_args={
                "client": "gemini_client",
                "get_document": True,
                "snippet_max_tokens": 12,
                "snippet_tokenizer": str(DATA / "tokenizer"),
            },
        )
    finally:
        server.stop()
    lines = samples(tmp_path / "run", "fictional_multihop")
    by_question = {line["question"]: line["id"] for line in lines}
    requests: dict[str, list[Any]] = {}
    bodies: dict[str, list[Any]] = {}
    for request, body in zip(server.requests, server.bodies):
        asked = body["contents"][0]["parts"][0]["text"]
        qid = next(q for question, q in by_question.items() if f"Question: {question}\n" in asked)
        requests.setdefault(qid, []).append(request)
        bodies.setdefault(qid, []).append(body)
    return {"requests": requests, "bodies": bodies, "samples": {line["id"]: line for line in lines}}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return ragbench_side(tmp_path_factory.mktemp("gemini"))


def camel(value: Any) -> Any:
    """A request body with its keys in lowerCamelCase, as the Gemini API reads either spelling (google-genai
    1.27.0 sends a nested config's keys in camelCase, later versions as given)."""
    if isinstance(value, list):
        return [camel(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key): camel(item) for key, item in value.items()}


def fastmcp_error_cut(body: dict[str, Any]) -> dict[str, Any]:
    """A request body (keys in camelCase) with fastmcp's error text (pydantic's words for the arguments `{}`) cut
    to its start."""
    text = json.dumps(camel(body))
    start = text.find(FASTMCP_ERROR)
    if start < 0:
        return json.loads(text)
    end = text.find('"', start + len(FASTMCP_ERROR))
    return json.loads(text[: start + len(FASTMCP_ERROR)] + text[end:])


def test_the_same_requests_in_the_same_order(ours: dict[str, Any]) -> None:
    assert ours["requests"] == FIXTURE["requests"]
    assert {q: [fastmcp_error_cut(b) for b in bodies] for q, bodies in ours["bodies"].items()} == {
        q: [fastmcp_error_cut(b) for b in bodies] for q, bodies in FIXTURE["bodies"].items()
    }
    assert {q: len(b) for q, b in FIXTURE["bodies"].items()} == {
        "q0000": 3,
        "twice": 2,
        "malformed": 2,
        "unknown": 1,
        "cut": 3,
        "missing": 3,
    }


def test_the_same_run_files(ours: dict[str, Any]) -> None:
    for qid, theirs in FIXTURE["runs"].items():
        sample = ours["samples"][qid]
        if "error" in theirs:
            assert FAILED[qid] in sample["error"], qid
            continue
        assert not sample.get("error"), qid
        mine = sample["prediction"]["extras"]
        for key in ("status", "tool_call_counts", "retrieved_docids", "result"):
            assert mine[key] == theirs[key], (qid, key)
        assert mine["output_tokens"] == theirs["usage"]["output_tokens"], qid


def test_answer_and_documents_are_the_final_text_and_the_searches_hits(ours: dict[str, Any]) -> None:
    prediction, result = ours["samples"]["q0000"]["prediction"], FIXTURE["runs"]["q0000"]["result"]
    assert prediction["answer"] == [item["output"] for item in result if item["type"] == "output_text"][-1].strip()
    hits = json.loads(next(item["output"] for item in result if item["tool_name"] == "search"))
    assert [doc["id"] for doc in prediction["docs"]] == [hit["docid"] for hit in hits]


def test_another_engine_is_refused_before_the_run() -> None:
    from ragbench.api import ConfigError
    from ragbench.plugins.search_agent.system import SearchAgent

    class OpenAILike:
        kind, connects_mcp = "openai", False

    with pytest.raises(ConfigError, match="client=gemini_client sends Gemini API requests.*--model gemini:MODEL"):
        SearchAgent(client="gemini_client").check_model(OpenAILike())  # type: ignore[arg-type]


def test_the_calls_of_the_last_allowed_answer_still_run() -> None:
    """AFC's limit: after 100 requests the last answer's calls run (their responses in the history) and the
    answer's parts are read again, each call there unanswered and counted."""
    from ragbench.plugins.search_agent.gemini_client import GeminiRun, run_record

    call = {"function_call": {"name": "search", "args": {"query": "q"}}}
    answered = {"function_response": {"name": "search", "response": {"result": {"content": [{"text": "[]"}]}}}}
    record = run_record(GeminiRun(history=[{"text": "Q"}, call, answered], last=[call], finish_reason="tool_calls"))
    assert [item["output"] for item in record["result"]] == ["Q", "[]", None]
    assert record["tool_call_counts"] == {"search": 2}
    assert record["status"] == "completed"


TEXT = st.text(alphabet="ab", max_size=3)
PART = st.one_of(
    st.builds(lambda n: {"function_call": {"name": n, "args": {}}}, st.sampled_from(["search", "get_document"])),
    st.builds(
        lambda n, t: {"function_response": {"name": n, "response": {"result": {"content": [{"text": t}]}}}},
        st.sampled_from(["search", "get_document"]),
        TEXT,
    ),
    st.builds(lambda t: {"text": t}, TEXT),
    st.builds(lambda t: {"text": t, "thought": True}, TEXT),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(PART, max_size=8))
def test_every_call_and_response_is_counted_once(parts: list[dict[str, Any]]) -> None:
    """The client's reading of the parts: one tool_call item per call, each response on the first earlier call of
    its name still unanswered, else an item of its own; a tool counted once per response and once per call no
    response answered."""
    from ragbench.plugins.search_agent.gemini_client import GeminiRun, run_record

    record = run_record(GeminiRun(last=parts))
    calls = [p["function_call"]["name"] for p in parts if "function_call" in p]
    responses = [p["function_response"]["name"] for p in parts if "function_response" in p]
    items = [item for item in record["result"] if item["type"] == "tool_call"]
    unanswered = [item for item in items if item["output"] is None and item["arguments"] is not None]
    orphans = [item for item in items if item["arguments"] is None]
    assert len(items) == len(calls) + len(orphans)
    assert sum(record["tool_call_counts"].values()) == len(responses) + len(unanswered)


def test_a_run_replays_offline_sending_what_it_sent(tmp_path: Path) -> None:
    """`--replay` answers each generateContent request with the recorded answer; the calls run again on
    ragbench's side, so the same examples fail, and the others give the same predictions."""
    from support.helpers import cli_here

    recorded = ragbench_side(tmp_path)
    replayed = cli_here("--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replayed"), "--no-progress")
    assert replayed.returncode == 1, replayed.stderr  # the failed examples: an incomplete run
    assert "4 x QuestionFailed: twice, malformed, unknown, missing" in replayed.stderr
    assert "do not fit the tool's parameters" not in replayed.stderr  # Gemini Schema types are read
    again = {line["id"]: line for line in samples(tmp_path / "replayed", "fictional_multihop")}
    for qid, sample in recorded["samples"].items():
        assert again[qid].get("error") == sample.get("error"), qid
        if not sample.get("error"):
            assert again[qid]["prediction"] == sample["prediction"], qid
