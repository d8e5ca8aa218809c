"""The `http` system's `stream=true` against a real service started by the test that streams Server-Sent Events on its
socket (tests/support/sse_routes.py, inside tests/support/rag_service.py's RAG service): OpenAI's chunks are
assembled as the OpenAI SDK assembles them and read as the whole reply is (the same answers, passages, spans and
cost as the service's non-streamed reply), a `json` stream by its declared rule; any chunking of the answer and any
split of the stream's bytes across writes gives the same answer; the time to the first token and the chunks are in
the app call's record and on the viewer's page; and a stream cut short, endless, over its byte bound, not JSON or
that reports an error fails its example in one line naming the URL, never scored on a partial answer, redone by
--resume alone."""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_http_app import run_http

from ragbench.api import ConfigError
from ragbench.api.apps import AppRequest, running
from ragbench.plugins.http_app.system import HttpApp
from support.helpers import samples
from support.rag_apps import QUESTIONS
from support.rag_service import rag_service
from support.sse_routes import SsePlan
from support.viewer_pages import viewer_page

ASK = {"preset": "json", "body": {"query": "{{ question }}"}, "passages": "sources"}


def app_lines(tmp_path):
    path = tmp_path / "run" / "calls" / "app.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def predictions(tmp_path):
    return {
        record["id"]: (record["prediction"]["answer"], [doc["id"] for doc in record["prediction"]["docs"]])
        for record in samples(tmp_path / "run", "varn_qa")
    }


def test_an_openai_stream_is_scored_as_the_services_whole_reply_with_its_first_token_and_chunks(tmp_path):
    with rag_service() as (url, service):  # a service of its own a run: it exports to the first receiver it is told
        whole = run_http(tmp_path / "whole", f"{url}/v1")
    with rag_service() as (url, service):
        streamed = run_http(tmp_path / "streamed", f"{url}/sse/v1", stream=True)
        bodies = service.sse.bodies
    with rag_service() as (url, service):
        last = run_http(tmp_path / "last", f"{url}/sse-last/v1", stream=True)  # the passages in the usage chunk
    assert streamed["complete"] and last["complete"], streamed.get("failures")
    assert predictions(tmp_path / "streamed") == predictions(tmp_path / "whole") == predictions(tmp_path / "last")
    assert all(docs for _, docs in predictions(tmp_path / "whole").values())
    assert streamed["details"]["varn_qa"]["em"] == whole["details"]["varn_qa"]["em"]
    assert {json.dumps(body["messages"]) for body in bodies} == {
        json.dumps([{"role": "user", "content": question}]) for _, question, _ in QUESTIONS
    }
    assert all(body["stream"] is True and body["stream_options"] == {"include_usage": True} for body in bodies)
    # the service's spans join their example as a whole reply's do, and the cost is theirs alone (the usage chunk,
    # as a whole reply's usage, is recorded and not priced where the spans carry the calls' tokens)
    assert streamed["system_reports"]["varn_qa"]["app_spans"] == whole["system_reports"]["varn_qa"]["app_spans"]
    assert streamed["model_cost"]["varn_qa"] == whole["model_cost"]["varn_qa"]
    for line in app_lines(tmp_path / "streamed"):
        stream = line["reply"]["stream"]
        assert stream["chunks"] == 5  # the role chunk, two pieces, the finish chunk, the usage chunk
        assert stream["usage"] == {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}
        assert 0 < stream["first_token_seconds"] <= line["seconds"]
    assert all("stream" not in line["reply"] for line in app_lines(tmp_path / "whole"))
    page = viewer_page([tmp_path / "streamed" / "run"], "example/{rid}/varn_qa/0")
    call = page["steps"][0]
    assert call["name"] == "application" and '"chunks": 5' in call["reply"] and "first_token_seconds" in call["reply"]


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/sse-ask", {"answer_delta": "chunk", "final": "sources"}),  # LangServe's shape, its `event: end`
        ("/sse-ask-done", {"answer_delta": "chunk", "final": "sources", "end": "type == 'done'"}),
    ],
)
def test_a_json_stream_is_assembled_by_its_declared_rule(tmp_path, path, rule):
    with rag_service() as (url, service):
        run_http(tmp_path / "whole", f"{url}/v1", traces=False)
        results = run_http(tmp_path, f"{url}{path}", stream=True, traces=False, **ASK, **rule)
    assert results["complete"], results.get("failures")
    assert predictions(tmp_path) == predictions(tmp_path / "whole")
    for line in app_lines(tmp_path):
        # metadata, two pieces, the sources; `event: end` is no chunk, an event `end` is true of is one
        assert line["reply"]["stream"]["chunks"] == (4 if path == "/sse-ask" else 5)
        assert line["reply"]["stream"]["first_token_seconds"] > 0


NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])
PIECES = st.lists(st.text(max_size=6), max_size=6)  # any text, split anywhere (multi-byte characters included)
PRESETS = st.sampled_from(["openai", "json"])


def test_any_chunking_and_any_split_of_the_bytes_gives_the_same_answer():
    loop = asyncio.new_event_loop()  # one service, and each preset's system started once, for every example drawn
    started = AsyncExitStack()
    with rag_service() as (url, service):
        systems = {
            "openai": HttpApp(f"{url}/sse/v1", stream=True, traces=False),
            "json": HttpApp(f"{url}/sse-ask", stream=True, traces=False, answer_delta="chunk", final="sources", **ASK),
        }
        for system in systems.values():
            loop.run_until_complete(started.enter_async_context(running(system, "varn_qa")))

        @settings(max_examples=60, deadline=None)
        @given(pieces=PIECES, newline=NEWLINES, cuts=st.lists(st.integers(1, 4000), max_size=12), preset=PRESETS)
        def check(pieces: list[str], newline: str, cuts: list[int], preset: str) -> None:
            service.sse = SsePlan(pieces=pieces, cuts=cuts, newline=newline)
            reply = loop.run_until_complete(systems[preset].call(AppRequest(id="q1", question=QUESTIONS[0][1])))
            assert reply.answer == "".join(pieces)
            assert [doc.id for doc in reply.passages] == ["p1", "p2"]
            assert reply.stream is not None and reply.stream.chunks == len(pieces) + (3 if preset == "openai" else 2)
            assert (reply.stream.first_token_seconds is None) == ("".join(pieces) == "")
            sent = service.sse.sent  # the writes were split where drawn
            assert b"".join(sent).count(b"data:") >= len(pieces) and len(sent) >= min(len(set(cuts)), 1)

        try:
            check()
        finally:
            loop.run_until_complete(started.aclose())
    loop.close()


@pytest.mark.parametrize(
    ("path", "options", "error"),
    [
        (
            "/sse-cut",
            {"max_retries": 0},
            "HttpAppError: http: POST {url}/sse-cut cut its stream before data: [DONE] after 2 chunk(s) "
            "(RemoteProtocolError: peer closed connection without sending complete message body",
        ),
        (
            "/sse-eof",
            {"max_retries": 0},
            "HttpAppError: http: POST {url}/sse-eof cut its stream before data: [DONE] after 2 chunk(s) "
            "(the connection closed)",
        ),
        (
            "/sse-forever",
            {"timeout": 1},
            "AppTimeout: http: POST {url}/sse-forever did not finish within timeout=1 s: ",
        ),
        (
            "/sse-forever",
            {"max_reply_bytes": 10_000},
            "AppReplyError: http: POST {url}/sse-forever answered more than max_reply_bytes=10,000 bytes (",
        ),
        (
            "/sse-not-json",
            {},
            "AppReplyError: http: POST {url}/sse-not-json sent an event that is not JSON after 1 chunk(s) "
            "(Expecting value: line 1 column 14 (char 13)): '{\"choices\": [oops'",
        ),
        (
            "/sse-error",
            {},
            "AppReplyError: http: POST {url}/sse-error sent an error event after 1 chunk(s): the model is overloaded",
        ),
        (
            "/sse-plain",
            {},
            "AppReplyError: http: POST {url}/sse-plain answered application/json, not text/event-stream, with "
            "stream=true: ",
        ),
    ],
)
def test_a_stream_cut_endless_too_long_not_json_or_failing_fails_its_example_in_one_line(
    tmp_path, path, options, error
):
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}{path}", stream=True, traces=False, **options)
    for record in samples(tmp_path / "run", "varn_qa"):
        assert record["error"].startswith(error.replace("{url}", url)), record["error"]
        assert "\n" not in record["error"] and record["prediction"]["answer"] == ""  # no partial answer scored
    assert results["counts"]["varn_qa"]["failed"] == 4 and results["counts"]["varn_qa"]["scored"] == 0
    assert app_lines(tmp_path) == []  # nothing recorded: --resume asks again
    if path == "/sse-forever" and "timeout" in options:
        for record in samples(tmp_path / "run", "varn_qa"):
            assert record["error"].endswith(" chunk(s) streamed, no data: [DONE]")


def test_a_cut_stream_is_tried_again_and_resume_redoes_only_the_failed_example(tmp_path):
    with rag_service() as (url, service):
        service.sse.cut_ids = {"q2"}
        first = run_http(tmp_path, f"{url}/sse/v1", stream=True, traces=False, max_retries=1)
        assert service.hits["/sse/v1/chat/completions"] == 3 + 2  # q2 tried twice
        (error,) = [record["error"] for record in samples(tmp_path / "run", "varn_qa") if record["error"]]
        assert error.endswith("(incomplete chunked read)) (the last of 2 tries)")
        assert first["counts"]["varn_qa"]["failed"] == 1 and not first["complete"]
        service.sse.cut_ids = set()
        resumed = run_http(tmp_path, f"{url}/sse/v1", stream=True, traces=False, max_retries=1, resume=True)
        assert service.hits["/sse/v1/chat/completions"] == 3 + 2 + 1  # q2 alone asked again
    assert resumed["complete"], resumed.get("failures")
    assert resumed["details"]["varn_qa"]["em"]["value"] == 0.25


def test_stream_options_are_refused_where_nothing_streams(monkeypatch):
    with pytest.raises(ConfigError, match="answer_delta, final and end read a stream of JSON events"):
        HttpApp("http://127.0.0.1:9/ask", preset="json", answer_delta="chunk")
    with pytest.raises(ConfigError, match="answer_delta, final and end read a stream of JSON events"):
        HttpApp("http://127.0.0.1:9/v1", stream=True, final="sources")
    with pytest.raises(ConfigError, match="system http: answer_delta='chunk\\[' is not a JMESPath expression"):
        HttpApp("http://127.0.0.1:9/ask", preset="json", stream=True, answer_delta="chunk[")
    monkeypatch.setitem(sys.modules, "openai", None)  # the SDK not installed: `import openai` raises ImportError
    with pytest.raises(ConfigError, match=r"stream=true reads the stream with the OpenAI SDK's decoder: pip install"):
        HttpApp("http://127.0.0.1:9/v1", stream=True)
